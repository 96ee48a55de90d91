"""The analysis's evidence filled in: the findings' event counts shown, the similar docs
led by the one the analysis rests on."""
from __future__ import annotations

from pipeline.review.service import ReviewService
from tests.support import open_incident
from workbench.evidence_view import evidence_ids, quoted_lines


def _frame(at, *columns: str):
    return next(d.value for d in at.dataframe if list(d.value.columns)[:len(columns)] == list(columns))


def test_findings_show_their_event_counts_and_the_matched_doc_leads_the_similar_docs(app, paused_engine):
    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"] == "loyalty-service")
    open_incident(app, incident)
    findings = _frame(app, "finding", "value", "events")
    assert findings["events"].tolist() and all(str(n).isdigit() and int(n) > 0 for n in findings["events"])
    matched = paused_engine.records.incident(incident)["summary"]["rca"]["doc_ids"][0]
    docs = _frame(app, "score", "doc")
    assert docs["doc"].iloc[0] == matched and docs["rests on"].tolist() == [True] + [False] * (len(docs) - 1)
    rest = docs["score"].iloc[1:].tolist()  # first because the analysis rests on it; the others best first
    assert rest == sorted(rest, reverse=True)


def test_the_findings_table_keeps_its_event_counts_in_view(app, paused_engine):
    """In the browser the counts were off the grid's right edge (a "large" value column took the
    row): the counts come right after the finding, and the columns' widths fit the analysis column
    (~540 px at 1440) so the grid has none off its edge."""
    import json

    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"] == "checkout-api")
    open_incident(app, incident)
    table = next(d for d in app.dataframe if "finding" in list(d.value.columns))
    assert list(table.proto.column_order)[:2] == ["finding", "events"]
    widths = {name: json.loads(table.proto.columns).get(name, {}).get("width") for name in table.proto.column_order}
    assert all(isinstance(w, int) for w in widths.values()) and sum(widths.values()) <= 540, widths


def test_a_quoted_line_jumps_to_its_context_in_the_log_window(app, paused_engine):
    """From an evidence line to the source around it: the Evidence tab opens on the window's lines
    either side of it, the line itself marked; "Show the whole window" goes back to all of it."""
    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"] == "checkout-api")
    doc = ReviewService(paused_engine).incident(incident)
    first = quoted_lines(doc["rca"], doc["evidence"])[0]
    order = evidence_ids(doc["log_window"], doc["evidence"])
    at = order.index(first["event_id"])
    open_incident(app, incident)
    app.button(key="incident_context_0").click().run()
    assert not app.exception
    assert app.session_state[f"incident_tab_{incident}"] == "Evidence"
    around = next(d.value for d in app.dataframe if list(d.value.columns)[:2] == ["here", "trigger"])
    assert len(around) == min(at, 10) + 1 + min(len(order) - at - 1, 10)
    here = around[around["here"]]
    assert len(here) == 1 and here["trigger"].iloc[0] and first["text"].startswith(here["message"].iloc[0][:40])
    app.button(key="incident_context_close").click().run()
    assert not any(list(d.value.columns)[:1] == ["here"] for d in app.dataframe)


def test_the_similar_docs_table_fits_the_analysis_column_with_its_mark(app, paused_engine):
    """At 1440 px the "✓ matched" after the doc's id was cut and the last column was off the grid's
    edge ("medium" and "large" columns, 950 px, in a ~540 px column): the mark is a column of its
    own, and every column's width is in pixels within the analysis column."""
    import json

    incident = next(r["incident_id"] for r in paused_engine.records.incidents() if r["service"] == "checkout-api")
    open_incident(app, incident)
    table = next(d for d in app.dataframe if list(d.value.columns)[:2] == ["score", "doc"])
    config = json.loads(table.proto.columns)
    shown = list(table.proto.column_order)
    assert shown[0] == "rests on" and config["rests on"]["label"] == "✓", config
    widths = {name: config.get(name, {}).get("width") for name in shown}
    assert all(isinstance(w, int) for w in widths.values()) and sum(widths.values()) <= 540, widths
    assert not [d for d in table.value["doc"] if "✓" in d or "matched" in d]  # no mark cut at the cell's edge
    assert max(len(d) for d in table.value["doc"]) * 7 <= widths["doc"]  # the ids whole (~7 px a character)


def test_the_evidence_tab_shows_the_incidents_own_stack_traces_and_a_neighbours_only_as_context(
        data_dir, tmp_path, monkeypatch):
    """Issue 38.5: an incident whose events carry no trace was shown its log window's first trace, a
    neighbouring incident's of the same host, as "Stack traces": now its own traces only, and the
    window's other lines' traces under a heading that says they are context."""
    from streamlit.testing.v1 import AppTest

    from pipeline.composition import open_engine
    from pipeline.unattended.file_ingest import ingest_path
    from tests.support import APP, TIMEOUT, make_settings, open_tab, write_jsonl
    from workbench import session

    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    monkeypatch.setenv("INCIDENTIQ_POLLER", "off")
    trace = ("java.lang.IllegalStateException: ledger closed\n\tat com.shop.ledger.Ledger.post(Ledger.java:41)\n"
             "\tat com.shop.ledger.Worker.run(Worker.java:12)")
    events = [{"_time": f"2026-11-28T10:00:0{k}Z", "service": "card-terminal", "host": "till-7", "level": "ERROR",
               "message": f"card declined by issuer: response code 51 for terminal T{k}"} for k in range(3)]
    events += [{"_time": f"2026-11-28T10:00:0{k}Z", "service": "ledger-worker", "host": "till-7", "level": "ERROR",
                "exception": "java.lang.IllegalStateException", "message": "ledger closed", "stack": trace}
               for k in range(3, 6)]
    engine = open_engine(make_settings(data_dir, reopen_minutes=0))
    ingest_path(engine, write_jsonl(tmp_path / "till.jsonl", events))
    card = next(r["incident_id"] for r in engine.records.incidents() if r["service"] == "card-terminal")
    window = ReviewService(engine).incident(card)["log_window"]
    assert any(e.get("stack") for e in window)  # the neighbour's trace is in the card incident's window
    engine.records.close()
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    try:
        open_tab(open_incident(at, card), card, "Evidence")
        labels = [e.label for e in at.expander]
        assert not [label for label in labels if label.startswith("Stack traces")], labels
        context = [label for label in labels if label.startswith("Context: stack traces")]
        assert context == ["Context: stack traces of the window's other lines, not this incident's events (1 distinct)"]
    finally:
        session._runtime.clear()


def test_a_findings_value_that_is_a_json_line_reads_by_its_words():
    """a-node-top.png: the Node incident's "error" finding showed `{"_time":"2026-11-28T08:21:17.2…`."""
    from workbench.evidence_view import findings_frame

    line = ('{"_time":"2026-11-28T08:21:17.2Z","service":"loyalty-service","level":"error",'
            '"exception":"AxiosError","message":"timeout of 5000ms exceeded"}')
    frame = findings_frame({"findings": [{"kind": "error", "value": line, "event_ids": ["e1"]},
                                         {"kind": "class", "value": "AxiosError", "event_ids": ["e1"]}]})
    assert list(frame["value"]) == ["timeout of 5000ms exceeded", "AxiosError"], list(frame["value"])
