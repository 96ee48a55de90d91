"""Knowledge and operations pages, log text shown literally, and the runtime's poller lifecycle
(AppTest from app.py)."""
import html
import json
import re
import time

import pytest
from streamlit.testing.v1 import AppTest

from pipeline.store import lease
from pipeline.store.records import Records
from pipeline.unattended.file_ingest import ingest_path
from tests.support import APP, FIXTURES, TIMEOUT, open_incident, said, texts, unescape

HOSTILE = "<script>document.write(document.cookie)</script> see [docs](http://evil.example/phish) **now**"


def test_knowledge_lists_every_doc_and_searches_with_scores(app, paused_engine):
    app.switch_page("app_pages/knowledge.py").run()
    docs = next(d.value for d in app.dataframe if "signatures" in d.value.columns)
    assert len(docs) == len(paused_engine.kb.docs)
    app.text_area(key="knowledge_query").input("HikariPool-1 - Connection is not available, request timed out "
                                               "after 30000ms").run()
    ranked = next(d.value for d in app.dataframe if "signatures found" in d.value.columns)
    assert ranked.iloc[0]["category"] == "db pool exhausted"  # in words, as the incident page says it
    assert 0.0 < ranked.iloc[0]["similarity"] <= 1.0
    # what each doc's signatures matched in the text, never a regex (walkthrough s59, defects 3 and 5)
    assert not ranked["signatures found"].str.contains("re:", regex=False).any(), list(ranked["signatures found"])
    assert ranked.iloc[0]["signatures found"], ranked.iloc[0]


def test_reindex_reports_what_it_embedded(app):
    app.switch_page("app_pages/knowledge.py").run()
    app.button(key="knowledge_reindex").click().run()
    assert not app.exception
    assert "0 docs embedded, 0 removed" in said(app, "success")


def test_knowledge_says_plainly_when_this_data_dir_has_no_evaluation(app):
    app.switch_page("app_pages/knowledge.py").run()
    assert not app.exception
    assert "No evaluation run yet in this data dir — run `python -m pipeline eval`" in said(app, "info")
    assert not [m for m in app.metric if m.label == "accuracy"]


def test_knowledge_shows_the_data_dirs_latest_evaluation(app, paused_engine):
    from pipeline.evaluation import CaseResult, figures, write_latest

    tune = figures([CaseResult("t-1", "tune", "disk_full", "disk_full", 0.9, ["disk_full"]),
                    CaseResult("t-2", "tune", "unknown", "dns_resolution", 0.4, ["dns_resolution"])])
    write_latest({"generated_at": "2026-12-01T09:00:00+00:00", "analyst": "offline", "splits": {"tune": tune}},
                 data_dir=paused_engine.settings.data_dir)
    app.switch_page("app_pages/knowledge.py").run()
    assert not app.exception, [e.value for e in app.exception]
    assert "No evaluation run yet" not in texts(app)
    assert "**tune · tuning set** · 2 cases · run 2026-12-01T09:00:00+00:00" in texts(app)
    assert [m.value for m in app.metric if m.label == "accuracy"] == ["0.50"]
    assert [m.value for m in app.metric if m.label == "key facts named"] == ["—"]  # the tuning set has no facts


def test_operations_shows_dead_letters_decisions_and_storage(app, paused_engine, tmp_path):
    from pipeline.review.service import ReviewService

    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"_time": "2026-11-28T11:00:00Z", "message": "ok line", "level": "INFO"}\nnot \xff text at all\n')
    ingest_path(paused_engine, bad)
    incident = paused_engine.records.incidents(status="awaiting_approval")[0]["incident_id"]
    ReviewService(paused_engine).approve(incident, reviewer="bob")
    app.switch_page("app_pages/operations.py").run()
    assert not app.exception, [e.value for e in app.exception]
    dead = next(d.value for d in app.dataframe if "reason" in d.value.columns)
    assert list(dead["line"]) == ["not \ufffd text at all"]
    assert "invalid UTF-8" in dead.iloc[0]["reason"]
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Dead letters"] == "1"
    assert metrics["Awaiting approval"] == "3"
    assert float(metrics["app.sqlite3"].split()[0]) > 0
    assert "Median time to decision" in texts(app)
    # issue 21: the parsing view names each file source's format (here JSON lines) and why
    layouts = [unescape(e.label) for e in app.expander if unescape(e.label).startswith(f"file:{bad.resolve()}")]
    assert layouts == [f"file:{bad.resolve()} — json (a known format)"]


def test_log_text_is_shown_literally_never_as_markdown_or_html(app, paused_engine, tmp_path):
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(json.dumps({"_time": "2026-11-28T12:00:00Z", "service": "web-[shop](http://evil.example)",
                                   "level": "ERROR", "message": HOSTILE, "stack": HOSTILE}) + "\n")
    ingest_path(paused_engine, hostile)
    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if "evil" in r["service"])
    app.run()
    inbox = app.dataframe(key="inbox_table").value
    assert HOSTILE in list(inbox["title"])  # a dataframe cell: text
    open_incident(app, incident)
    rendered = [str(e.value) for kind in ("markdown", "caption", "info", "warning", "error", "success", "title")
                for e in getattr(app, kind)] + [e.label for e in app.expander]
    # markdown would link a bare URL even when escaped (GFM autolinks): none may reach it
    assert not [r for r in rendered if "evil.example" in r or "<script>" in r or "**now**" in r]
    # highlights cut the text; the page's own bundle warm-up and narrow-window scripts (workbench/bundle_warmup.py,
    # workbench/narrow_window.py) carry no data
    bodies = [re.sub(r"</?mark[^>]*>", "", h.proto.body) for h in app.get("html")
              if "incident_warmup" not in h.proto.body and "narrow_window" not in h.proto.body]
    # the heading and the log line the RCA rests on (highlighted): escaped HTML, so no tag or link of the log's
    assert sum(html.escape(HOSTILE) in b for b in bodies) >= 2
    assert not [b for b in bodies if "<script" in b or "href" in b]
    evidence = next(d.value for d in app.dataframe if "trigger" in d.value.columns)
    assert HOSTILE in list(evidence["message"])
    assert HOSTILE in [c.value for c in app.code]  # its stack trace, in a code block


@pytest.mark.timeout(120)
def test_the_app_starts_its_poller_once_and_stops_it_when_the_runtime_is_released(data_dir, monkeypatch):
    from workbench import session

    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    monkeypatch.setenv("INCIDENTIQ_POLLER", "on")
    monkeypatch.setenv("INCIDENTIQ_SOURCE", f"file:{FIXTURES / 'small.jsonl'}")
    monkeypatch.setenv("INCIDENTIQ_POLL_INTERVAL", "0.2")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    workbench = session.workbench()
    try:
        assert workbench.poller is not None and workbench.poller.alive
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(workbench.review.inbox(status="awaiting_approval")) < 4:
            time.sleep(0.2)
        at.run()
        assert len(at.dataframe(key="inbox_table").value) == 4
        assert "Polling file:" in texts(at)
        AppTest.from_file(APP, default_timeout=TIMEOUT).run()  # a second session shares the runtime
        assert session.workbench() is workbench
    finally:
        poller = workbench.poller
        session._runtime.clear()
    assert not poller.alive
    records = Records(workbench.review.records.path)  # the released runtime's own store is closed
    try:
        held = lease.holder(records)
    finally:
        records.close()
    assert held is None or not held["live"]


def test_a_fresh_workbench_builds_its_knowledge_index_in_the_background(tmp_path):
    from pipeline.knowledge.embeddings import embedder_from_setting
    from pipeline.knowledge.index import KnowledgeBase
    from workbench.runtime import open_workbench, stop_workbench

    workbench = open_workbench(data_dir=str(tmp_path / "fresh"), source="demo", poller_mode="off")
    try:
        assert workbench.indexing is not None  # opened without waiting for it
        hits = workbench.knowledge.nearest("HikariPool-1 - Connection is not available, request timed out", k=1)
        assert hits[0]["category"] == "db_pool_exhausted"  # searched meanwhile
        workbench.knowledge.reindex()  # a Re-index clicked meanwhile: one sync after the other
        assert workbench.knowledge.indexed_count() == len(workbench.knowledge.docs())
    finally:
        stop_workbench(workbench)
    assert workbench.index_error is None
    index = KnowledgeBase(index_dir=tmp_path / "fresh" / "knowledge-index", embedder=embedder_from_setting("offline"))
    assert index.count() == len(index.docs)


def test_the_first_message_outside_ascii_finds_streamlits_emoji_catalog_loaded(data_dir):
    """A message such as "Approval recorded … — …" makes Streamlit compile one regular expression over
    every emoji (150-280 ms at load 6-8): the runtime's background warm-up does it, not a reviewer's click."""
    import sys

    from workbench import session
    from workbench.runtime import open_workbench, stop_workbench

    sys.modules.pop("streamlit.emojis", None)  # as in a process no message has needed it yet
    workbench = open_workbench(data_dir=str(data_dir), source="demo", poller_mode="off", warm=session.warm_streamlit)
    try:
        workbench.indexing.join(30)
    finally:
        stop_workbench(workbench)
    assert "streamlit.emojis" in sys.modules


def test_a_run_finds_the_runtime_without_the_caches_lookup_until_it_is_released(app):
    """A page's run asks for the runtime about ten times: the cache's lookup (1-1.5 ms each under load)
    is made once, and a released runtime (a new data dir, "Clear caches") is never handed out again."""
    from unittest import mock

    from workbench import session

    first = session.workbench()
    real, looked_up = session._runtime, []
    with mock.patch.object(session, "_runtime", lambda *args: looked_up.append(args) or real(*args)):
        assert all(session.workbench() is first for _ in range(20)) and not looked_up
        real.clear()  # the menu's "Clear caches"
        assert first.stopped
        second = session.workbench()
        assert second is not first and not second.stopped and len(looked_up) == 1
        assert session.workbench() is second and len(looked_up) == 1


def test_the_health_light_finds_a_relative_file_sources_status(data_dir, tmp_path, monkeypatch):
    from workbench.health import light
    from workbench.runtime import open_workbench, stop_workbench

    (tmp_path / "rel.jsonl").write_bytes((FIXTURES / "small.jsonl").read_bytes())
    monkeypatch.chdir(tmp_path)
    workbench = open_workbench(data_dir=str(data_dir), source="file:rel.jsonl", poller_mode="on")
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not workbench.operations.poller_status():
            time.sleep(0.1)
        color, headline, _ = light(workbench, workbench.operations.poller_status())
    finally:
        stop_workbench(workbench)
    assert headline != "Poller starting" and color in ("green", "orange")


BIDI = "\u202egpj.exe\u202c \u2066iso\u2069 zero\u200bwidth \ufeffbom \u200flrm \U000e0041"
# what the page may not carry raw (the WORD JOINER U+2060 is the markdown sanitiser's own, see workbench.literal)
UNSEEN = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2061-\u206f\ufeff\U000e0000-\U000e0fff]")


def test_direction_overrides_and_invisible_characters_are_shown_on_the_pages(app, paused_engine, tmp_path):
    """A log line whose service, host, message, exception and stack carry a right-to-left override
    (which makes `gpj.exe` read `exe.jpg`), isolates, zero-width characters, a BOM and a tag
    character, and a commenter's name and words the same: the inbox and the incident page show
    each as `‹U+XXXX›` in every markdown, caption, text, code, table cell, heading and label."""
    from pipeline.review.service import ReviewService

    log = tmp_path / "bidi.jsonl"
    log.write_text("".join(json.dumps({"_time": f"2026-11-28T12:00:0{i}Z", "service": f"web{BIDI}", "host": f"h{BIDI}",
                                       "level": "ERROR", "message": f"upload refused {BIDI}",
                                       "exception": f"java.io.IOException{BIDI}", "stack": f"at x({BIDI})"}) + "\n"
                       for i in range(2)))
    ingest_path(paused_engine, log)
    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"].startswith("web"))
    ReviewService(paused_engine).comment(incident, text=f"see {BIDI}", reviewer=f"eve{BIDI}")

    def rendered() -> list[str]:
        found = [str(e.value) for kind in ("markdown", "caption", "info", "warning", "error", "success", "title",
                                           "text", "code") for e in getattr(app, kind)]
        found += [e.label for e in app.expander] + [h.proto.body for h in app.get("html")]
        found += [str(o) for box in app.selectbox for o in box.options]
        for frame in app.dataframe:
            found += [str(v) for v in frame.value.astype(str).to_numpy().ravel()]
        return found

    app.run()
    inbox = rendered()
    assert not [r for r in inbox if UNSEEN.search(r)], [r for r in inbox if UNSEEN.search(r)]
    assert any("\u2039U+202E\u203agpj.exe" in r for r in inbox)
    open_incident(app, incident)
    page = rendered()
    assert not [r for r in page if UNSEEN.search(r)], [r for r in page if UNSEEN.search(r)][:5]
    page_text = unescape("\n".join(page))
    assert "upload refused \u2039U+202E\u203agpj.exe\u2039U+202C\u203a" in page_text
    assert "eve\u2039U+202E\u203a" in page_text and "\u2039U+E0041\u203a" in page_text


def test_operations_says_a_learnt_layout_in_words_not_as_a_regex(app, paused_engine, tmp_path):
    """Parsing per source: each line's parts in order with the example's values, the regex only on demand."""
    from pipeline.ingest.source_layout import layout_of_file
    from pipeline.store.layouts import save_layout

    log = tmp_path / "ledger.log"
    log.write_text("".join(f"28-11-2026 10:00:{i:02d} ~ 4242 ~ WARN ~ pay.Ledger ~ posting {i} failed for batch\n"
                           for i in range(20)))  # no known format: a layout is learnt
    layout = layout_of_file(log)
    assert layout["pattern"]  # read by a layout with a regex behind it
    save_layout(paused_engine.records, source=f"file:{log}", file_identity="1", format=layout["format"],
                layout=layout)
    app.switch_page("app_pages/operations.py").run()
    said = [t.value for t in app.text if t.value.startswith("Each line: ")]
    assert said and said[0].startswith("Each line: the time") and said[0].endswith("then the message."), said
    assert "the process id (4242), the level (WARN), the logger (pay.Ledger), which names the service" in said[0]
    assert "mark" not in said[0]
    # when it was learnt as the page writes times (walkthrough s55 read "learnt 2026-12-07T10:57:19")
    learnt = [c.value for c in app.caption if "learnt" in c.value]
    assert learnt and re.search(r"learnt \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\.$", learnt[0]), learnt
    assert not [c for c in app.code if "(?P<" in c.value]  # the regex only when asked for
    app.toggle(key=f"operations_pattern_file:{log}").set_value(True).run()
    assert [c for c in app.code if "(?P<" in c.value or "(?" in c.value]


def test_operations_leaves_a_value_not_known_blank_not_none(app, paused_engine, tmp_path):
    """A source whose poll failed (its file missing) cannot say its backlog, lag or latency: the values
    not known showed as "None" in the pollers table."""
    from pipeline.sources.file import FileSource
    from pipeline.unattended.poller import Poller

    from pipeline.errors import SourceError

    try:
        Poller(paused_engine, FileSource(tmp_path / "not-there.log", max_bytes=1_000_000), interval=0.05).poll_once()
    except SourceError:
        pass  # recorded as the source's error, as the poller's loop records it
    app.switch_page("app_pages/operations.py").run()
    assert not app.exception, [e.value for e in app.exception]
    [pollers] = [d for d in app.dataframe if "lines behind" in d.value.columns]
    assert pollers.value.isna().any().any(), pollers.value  # some value is not known here
    for table in app.dataframe:  # every table of the page: a missing value is left blank
        assert table.proto.HasField("placeholder") and table.proto.placeholder == "", table.proto.placeholder
