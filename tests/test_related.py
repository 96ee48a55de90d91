"""Related incidents: the same fingerprint (paged, newest first) and the nearest by evidence, each
with how it was decided, in `show --json` and on the incident page."""
from __future__ import annotations

import re

import pytest

from pipeline.composition import open_engine
from pipeline.unattended.file_ingest import ingest_path
from pipeline.review.service import ReviewService
from tests.support import HIKARI, ROOT, cli_json, make_settings, open_incident, texts, write_jsonl


@pytest.fixture
def recurring(data_dir, tmp_path, monkeypatch):
    """The same pool exhaustion three times (approved, rejected, paused now) and one other incident."""
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    monkeypatch.setenv("INCIDENTIQ_REOPEN_MINUTES", "0")
    engine = open_engine(make_settings(data_dir, reopen_minutes=0))
    review = ReviewService(engine)
    ids = []
    for k in range(3):
        events = [{**e, "_time": e["_time"].replace("10:00", f"1{k}:00")} for e in HIKARI]
        ingest_path(engine, write_jsonl(tmp_path / f"h{k}.jsonl", events))
        [opened] = [r["incident_id"] for r in engine.records.incidents(status="awaiting_approval")]
        ids.append(opened)
        if k == 0:
            review.approve(opened, reviewer="ann")
        elif k == 1:
            review.reject(opened, reviewer="cy", reason="known noise during the failover drill")
    ingest_path(engine, write_jsonl(tmp_path / "other.jsonl", [
        {"_time": "2026-11-28T15:00:00Z", "service": "inventory", "level": "ERROR",
         "message": "[Errno 28] No space left on device", "exception": "OSError"}]))
    yield engine, ids
    engine.records.close()


def test_show_json_lists_past_incidents_of_the_fingerprint_with_their_decisions(recurring, capsys):
    engine, (approved, rejected, now) = recurring
    doc = cli_json(capsys, "show", now)
    same = doc["related"]["same_fingerprint"]
    assert [r["incident_id"] for r in same["rows"]] == [rejected, approved] and same["next"] is None
    by_id = {r["incident_id"]: r for r in same["rows"]}
    assert by_id[rejected]["status"] == "rejected" and by_id[rejected]["decided_by"] == ["cy"]
    assert by_id[rejected]["rejection_reason"] == "known noise during the failover drill"
    assert by_id[approved]["status"] == "fix_proposed" and by_id[approved]["fix"]["hash"]
    assert by_id[approved]["decided_by"] == ["ann"] and by_id[approved]["decided_at"]
    assert doc["related"]["nearest"] == []  # only with --nearest: a plain show stays off Chroma
    first = cli_json(capsys, "show", now, "--related-limit", "1")["related"]["same_fingerprint"]
    assert [r["incident_id"] for r in first["rows"]] == [rejected] and first["next"] == rejected
    second = cli_json(capsys, "show", now, "--related-limit", "1", "--related-before", first["next"])
    assert [r["incident_id"] for r in second["related"]["same_fingerprint"]["rows"]] == [approved]


def test_the_nearest_by_evidence_come_from_the_evidence_index(recurring, capsys):
    engine, (approved, rejected, now) = recurring
    nearest = cli_json(capsys, "show", now, "--nearest")["related"]["nearest"]
    ranked = [r["incident_id"] for r in nearest]
    # the disk-full incident shares no error word with the pool exhaustion: it is not offered as near
    assert ranked == [approved, rejected] or ranked == [rejected, approved]
    assert min(r["similarity"] for r in nearest) > 0.9
    assert (engine.settings.data_dir / "evidence-index").is_dir()


def _idle_poll(engine, tmp_path) -> None:
    from pipeline.sources.file import FileSource
    from pipeline.unattended.poller import Poller

    quiet = tmp_path / "quiet.log"
    quiet.write_text("")
    poller = Poller(engine, FileSource(quiet, max_bytes=engine.settings.max_event_bytes), interval=0.05)
    try:
        poller.poll_once()
    finally:
        poller.close()


def test_the_incident_page_shows_related_incidents(recurring, monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    from tests.support import APP, TIMEOUT
    from workbench import session

    engine, (approved, rejected, now) = recurring
    monkeypatch.setenv("INCIDENTIQ_POLLER", "off")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    try:
        open_incident(at, now)
        # the page never indexes evidence: until a poll has, the nearest are not offered
        assert not [d for d in at.dataframe if "near by" in d.value.columns]
        assert not list((engine.settings.data_dir / "evidence-index").glob("cursor-*.json"))
        _idle_poll(engine, tmp_path)
        open_incident(at, now)
        assert any(e.label == "Related incidents" for e in at.expander)
        frames = [d.value for d in at.dataframe if "decided by" in d.value.columns]
        same = frames[0]
        assert list(same["incident"]) == [rejected, approved]
        assert "known noise during the failover drill" in set(same["rejection reason / fix approved"])
        near = frames[1].iloc[0]["near by"]
        assert near.startswith("same error words (") and float(near[-5:-1]) > 0.9, near
        assert "Same fingerprint" in texts(at)
    finally:
        session._runtime.clear()


def test_the_nearest_by_evidence_share_the_error_not_the_service(data_dir, tmp_path, monkeypatch):
    """One service's incidents of other errors share its request framing and stack; the same error from
    another service shares the error's words: that one is the nearest, the others are not offered."""
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    engine = open_engine(make_settings(data_dir, reopen_minutes=0))
    frame = "\n\tat com.shop.orders.OrderController.submit(OrderController.java:88)\n\tat com.shop.web.Dispatch.run"
    errors = {
        "redis": ("RedisConnectionFailureException", "Unable to connect to Redis at cache-7:6379 connection refused"),
        "grammar": ("BadSqlGrammarException", "bad SQL grammar near column discount_code"),
        "gateway": ("BadGateway", "502 Bad Gateway from tax-service"),
        "auth": ("Unauthorized", "401 Unauthorized from fraud-check token expired"),
        "npe": ("NullPointerException", "Cannot invoke getTotal because basket is null"),
    }
    events = [{"_time": f"2026-11-28T1{k}:00:0{j}Z", "service": "orders-api", "level": "ERROR",
               "exception": f"org.shop.{exc}", "message": f"POST /api/v2/orders/submit failed: {text}",
               "stack": f"org.shop.{exc}: {text}{frame}"}
              for k, (exc, text) in enumerate(errors.values()) for j in range(2)]
    events.append({"_time": "2026-11-28T18:00:00Z", "service": "cart-worker", "level": "ERROR",
                   "exception": "org.shop.RedisConnectionFailureException",
                   "message": "cart flush: Unable to connect to Redis at cache-7:6379 connection refused",
                   "stack": "org.shop.RedisConnectionFailureException: Unable to connect to Redis\n\tat org.cart.Flush.run"})
    ingest_path(engine, write_jsonl(tmp_path / "orders.jsonl", events))
    by_service = {}
    for row in engine.records.incidents():
        by_service.setdefault(row["service"], []).append(row)
    redis_order = next(r["incident_id"] for r in by_service["orders-api"] if "Redis" in (r["title"] or ""))
    [cart] = [r["incident_id"] for r in by_service["cart-worker"]]
    from pipeline.services import related_of

    related = related_of(ReviewService(engine))
    related.catch_up(batches=None)
    nearest = related.related(redis_order)["nearest"]
    assert [r["incident_id"] for r in nearest] == [cart], [(r["title"], r["similarity"]) for r in nearest]
    engine.records.close()



def test_a_service_whose_incidents_are_all_one_error_finds_them_near_each_other(data_dir, tmp_path, monkeypatch):
    """Walkthrough s55 on Loghub's Linux log: sshd's `authentication failure; ... rhost=H user=U` opened an
    incident on each of three days (another template each: a user named or not, an address or a host
    name), and none listed the others as near: each of the service's other incidents was read as its
    framing, whose words were left out, so the error's own words were left out with them (as was gdm's
    same failure). Incidents whose analyses name this incident's cause are its error again, not its
    service's other errors: the two other days and gdm's failure are the nearest."""
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    engine = open_engine(make_settings(data_dir, reopen_minutes=0))
    failure = "authentication failure; logname= uid=0 euid=0 tty={tty} ruser= rhost={host}{user}"
    days = {"Jun 14": ("10.7.1.4", ""), "Jun 15": ("c220-135.example.net", "  user=root"),
            "Jun 17": ("10.46.2.253", "  user=guest")}
    lines = [f"{day} 15:16:0{k} combo sshd(pam_unix)[{1990 + k}]: "
             + failure.format(tty="NODEVssh", host=host, user=user)
             for day, (host, user) in days.items() for k in range(3)]
    lines += [f"Jul 11 11:33:0{k} combo gdm(pam_unix)[2803]: " + failure.format(tty=":0", host="", user="")
              for k in range(3)]
    (tmp_path / "secure.log").write_text("\n".join(lines) + "\n")
    ingest_path(engine, tmp_path / "secure.log")
    rows = engine.records.incidents()
    sshd = sorted(r["incident_id"] for r in rows if r["service"] == "sshd(pam_unix)")
    gdm = [r["incident_id"] for r in rows if r["service"] == "gdm(pam_unix)"]
    assert len(sshd) == 3 and len(gdm) == 1, [(r["service"], r["title"]) for r in rows]
    assert len({r["category"] for r in rows}) == 1, {r["category"] for r in rows}  # one cause named
    from pipeline.services import related_of

    related = related_of(ReviewService(engine))
    related.catch_up(batches=None)
    for mine in sshd:
        nearest = {r["incident_id"] for r in related.related(mine)["nearest"]}
        assert nearest == (set(sshd) - {mine}) | set(gdm), (mine, nearest)
    engine.records.close()


def test_related_rows_say_their_status_in_words(recurring, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.support import APP, TIMEOUT
    from workbench import session

    engine, (approved, rejected, now) = recurring
    monkeypatch.setenv("INCIDENTIQ_POLLER", "off")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    try:
        open_incident(at, approved)
        same = at.dataframe(key=f"incident_related_same_{approved}")
        assert list(same.value["status"]) == ["awaiting approval", "rejected"]  # never awaiting_approval
        # 15-related-scrolled.png: the table squeezed into the left column, "when" as ISO text; now the
        # page's width, what a reviewer compares first beside the title, times as the page writes them
        assert not [d for col in at.columns for d in col.dataframe if d.key == same.key]  # not in a column
        assert list(same.value.columns)[:2] == ["incident", "title"]
        assert set(same.value["decision"]) <= {"", "approved", "rejected"}
        # the log's time, labelled, as the header's "First seen": not when it was ingested (issue 38.9)
        when = same.value["first seen (log, UTC)"]
        logged = [engine.records.incident(i)["first_seen"][:16].replace("T", " ") for i in same.value["incident"]]
        assert list(when) == logged and all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", w) for w in when), list(when)
    finally:
        session._runtime.clear()



def _inventory_day(data_dir, tmp_path, monkeypatch):
    """The demo's inventory service and database, their ERROR lines alone, ingested and indexed: the engine,
    the incidents, the service's deadlock incident and the related-incidents service."""
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    engine = open_engine(make_settings(data_dir, reopen_minutes=0))
    lines = [line for line in (ROOT / "samples" / "pos-day.jsonl").read_text().splitlines()
             if '"level":"ERROR"' in line and ('"service":"inventory-service"' in line or '"service":"inventory-db"' in line)]
    (tmp_path / "inventory.jsonl").write_text("\n".join(lines) + "\n")
    ingest_path(engine, tmp_path / "inventory.jsonl")
    rows = engine.records.incidents()
    deadlock = next(r for r in rows if r["category"] == "db_deadlock")
    from pipeline.services import related_of

    related = related_of(ReviewService(engine))
    related.catch_up(batches=None)
    return engine, rows, deadlock, related


def test_the_same_error_told_by_the_service_and_its_database_is_one_incident_not_a_related_one(data_dir, tmp_path,
                                                                                            monkeypatch):
    """The demo's inventory service (real-length lines): its deadlock, told by its driver in a long
    traceback, and the database's own short "deadlock detected" naming the application it served, are
    one incident (CONTRACT §2), no longer two the reviewer finds as related; the service's other errors
    (a DNS failure, a stale update, a missing attribute) are not in it."""
    engine, rows, deadlock, related = _inventory_day(data_dir, tmp_path, monkeypatch)
    events = engine.records.events_of(deadlock["incident_id"], limit=100)
    assert {"inventory-service", "inventory-db"} <= {e.service for e in events}
    assert any("DeadlockDetected" in e.message for e in events) and any("deadlock detected" in e.message for e in events)
    assert not any("could not translate host name" in e.message for e in events)
    engine.records.close()


def test_an_incident_whose_analysis_names_another_cause_is_not_near(data_dir, tmp_path, monkeypatch):
    """The demo's inventory service: its DNS failure shares the deadlock's driver, wrapper class and request
    framing (`sqlalchemy.exc.OperationalError: (psycopg2...)`, `POST /v1/...`), not its cause: the analyses
    name a deadlock and a name that does not resolve, so the DNS failure is not offered as near the deadlock
    (a walkthrough found it listed second, at 0.35). Incidents without a named cause are still compared by words."""
    engine, rows, deadlock, related = _inventory_day(data_dir, tmp_path, monkeypatch)
    assert deadlock["category"] == "db_deadlock"
    assert any(r["category"] == "dns_resolution" for r in rows)  # the service's other error, named
    nearest = related.related(deadlock["incident_id"])["nearest"]
    assert {r["category"] for r in nearest} <= {"db_deadlock", "unknown", None}, \
        [(r["category"], r["title"], r["similarity"]) for r in nearest]
    engine.records.close()


def test_an_error_of_another_http_status_or_errno_is_not_near_however_alike_its_words():
    """Issue 38.2: a partner's 429 and a 502 are told in the same axios words ("Request failed with
    status code ..."), but they are different errors: the 502 is left out of the nearest, the 429 of
    another service stays. Alike for another errno or SQLSTATE; a side naming no code is not judged."""
    from pipeline.review.related import rank_by_error_words

    frame = "\n    at settle (/srv/app/node_modules/axios/dist/node/axios.cjs:2019:12)"
    mine = "AxiosError\nRequest failed with status code 429\nAxiosError: Request failed with status code 429" + frame
    candidates = [
        ("bad-gateway", "AxiosError\nRequest failed with status code 502\nAxiosError: Request failed with status code 502" + frame),
        ("same-429", "AxiosError\nRequest failed with status code 429 from api.partner\nAxiosError: upstream_status=429" + frame),
        ("no-code", "AxiosError\nRequest failed with status code\nAxiosError: Request failed" + frame),
    ]
    ranked = [i for i, _ in rank_by_error_words(mine, candidates)]
    assert "bad-gateway" not in ranked and {"same-429", "no-code"} <= set(ranked)
    # the demo's loyalty-service: its 429 lines carry the 502 it answered its caller as a field
    # (`http_status=502`), and one line of that path without a message says only `http_status: 502`
    demo = "AxiosError\nRequest failed with status code 429\nAxiosError: Request failed with status code 429\nhttp_status=502"
    lone = ('AxiosError\n{"service":"loyalty-service","exception":"AxiosError","path":"/v1/points/award",'
            '"http_status":502}\nAxiosError: path=/v1/points/award http_status=502\nhttp_status=502')
    assert rank_by_error_words(demo + frame, [("lone-502", lone)]) == []
    disk = "OSError: [Errno 28] No space left on device: '/var/r/1.pdf'"
    others = [("perm", "OSError: [Errno 13] Permission denied: '/var/r/1.pdf'"),
              ("disk", "OSError: [Errno 28] No space left on device: '/tmp/x'")]
    assert [i for i, _ in rank_by_error_words(disk, others)] == ["disk"]


def test_the_related_table_shows_ids_and_times_whole_and_no_column_empty_in_every_row(monkeypatch):
    """d-related-deadlock.png: the id read "INC-202611", the time "2026-12-06", and "decision",
    "decided by" and "rejection reason / fix" were empty for the one undecided row."""
    from workbench import related_view

    row = {"incident_id": "INC-20261128-c890ef", "similarity": 0.42, "title": "deadlock detected",
           "status": "awaiting_approval", "decision": None, "category": "db_deadlock", "decided_by": [],
           "decided_at": None, "created_at": "2026-12-06T16:28:03+00:00", "first_seen": "2026-11-28T09:14:00+00:00",
           "rejection_reason": None, "fix": None}
    shown: dict = {}
    monkeypatch.setattr(related_view.st, "dataframe", lambda frame, **kw: shown.update(frame=frame, **kw))
    related_view._table([row], "k")
    when = "first seen (log, UTC)"  # the log's time, labelled, not when it was ingested (issue 38.9)
    assert list(shown["frame"].columns) == ["incident", "similarity", "title", "status", "category", when]
    assert list(shown["frame"][when]) == ["2026-11-28 09:14"]
    config = shown["column_config"]
    for column, text in (("incident", row["incident_id"]), (when, "2026-11-28 09:14")):
        width = config[column]["width"] if isinstance(config[column], dict) else config[column].width
        assert isinstance(width, int) and width >= 8 * len(text), (column, width)
    decided = {**row, "decision": "approve", "decided_by": ["bob"]}
    assert "decided by" in related_view._frame([row, decided]).columns


def test_related_titles_alike_in_view_are_told_apart_as_the_inbox_tells_them(monkeypatch):
    """Walkthrough s55 on Loghub's Linux log: the nearest of an sshd authentication failure were the same
    failure on three other days, and their titles read alike in the table's title column
    ("authentication failure; uid=0 euid=" three times). Titles alike that far are said by what tells them
    apart, as in the inbox (workbench/inbox_view.told_apart)."""
    from workbench import related_view

    def row(n: int, title: str) -> dict:
        return {"incident_id": f"INC-20260614-00000{n}", "similarity": 0.9 - n / 10, "title": title,
                "status": "awaiting_approval", "decision": None, "category": "upstream_auth_failure", "decided_by": [],
                "decided_at": None, "created_at": "2026-12-06T16:28:03+00:00", "first_seen": "2026-06-14T15:16:00+00:00",
                "rejection_reason": None, "fix": None}

    lead = "authentication failure; uid=0 euid=0 tty=NODEVssh"
    rows = [row(1, f"{lead} rhost=10.7.1.4"), row(2, f"{lead} rhost=c220-135.example.net user=root"),
            row(3, "deadlock detected")]
    shown: dict = {}
    monkeypatch.setattr(related_view.st, "dataframe", lambda frame, **kw: shown.update(frame=frame, **kw))
    related_view._table(rows, "k")
    titles = list(shown["frame"]["title"])
    assert titles[2] == "deadlock detected"
    # the column showed ~32 characters at 1440 px ("authentication failure; … rhost=2"): they differ within 25
    assert titles[0][:25] != titles[1][:25], titles
    assert titles[0].endswith("rhost=10.7.1.4") and titles[1].endswith("user=root"), titles


def test_incidents_analysed_as_the_same_cause_are_near_though_their_words_differ(data_dir, tmp_path, monkeypatch):
    """Walkthrough s57 (51-related.png): the demo's three null dereferences (checkout-api's Java NPE,
    loyalty-service's Node TypeError, inventory-service's Python AttributeError) share no rare error word,
    so "Nearest by evidence" was empty on every one of them, with nothing to follow. Each now lists the
    other two, saying why ("same cause: null reference"), a row to select; the same services' other
    errors (inventory's DNS failure, loyalty's 429s) are still not offered."""
    from streamlit.testing.v1 import AppTest

    from pipeline.services import related_of
    from tests.support import APP, TIMEOUT
    from workbench import session

    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    monkeypatch.setenv("INCIDENTIQ_POLLER", "off")
    engine = open_engine(make_settings(data_dir, reopen_minutes=0))
    wanted = ("NullPointerException", "reading 'profile'", "'NoneType' object has no attribute",
              "could not translate host name", "status code 429")
    lines, seen = [], {}
    for line in (ROOT / "samples" / "pos-day.jsonl").read_text().splitlines():
        mark = next((w for w in wanted if w in line), None)
        if mark and '"level":"ERROR"' in line and seen.get(mark, 0) < 4:
            seen[mark] = seen.get(mark, 0) + 1
            lines.append(line)
    (tmp_path / "day.jsonl").write_text("\n".join(lines) + "\n")
    ingest_path(engine, tmp_path / "day.jsonl")
    rows = engine.records.incidents()
    nulls = sorted(r["incident_id"] for r in rows if r["category"] == "null_reference")
    assert len(nulls) == 3, [(r["service"], r["category"], r["title"]) for r in rows]
    related = related_of(ReviewService(engine))
    related.catch_up(batches=None)
    for mine in nulls:
        nearest = related.related(mine)["nearest"]
        assert {r["incident_id"] for r in nearest} == set(nulls) - {mine}, [(r["title"], r["category"]) for r in nearest]
        assert {r["near_by"] for r in nearest} == {"cause"}
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    try:
        open_incident(at, nulls[0])
        near = at.dataframe(key=f"incident_related_near_{nulls[0]}").value
        assert set(near["incident"]) == set(nulls[1:])
        assert set(near["near by"]) == {"same cause: null reference"}
    finally:
        session._runtime.clear()
        engine.records.close()


def test_a_row_near_by_its_cause_shows_no_similarity(monkeypatch):
    """Walkthrough s58: a row listed because its analysis names the same cause read "similarity 0.00", as if
    measured and found unlike; it was not measured by its words at all."""
    from workbench import related_view

    base = {"title": "deadlock detected", "status": "awaiting_approval", "decision": None, "category": "db_deadlock",
            "decided_by": [], "decided_at": None, "created_at": "2026-12-06T16:28:03+00:00",
            "first_seen": "2026-11-28T09:14:00+00:00", "rejection_reason": None, "fix": None}
    rows = [{**base, "incident_id": "INC-20261128-000001", "similarity": 0.62, "near_by": "words"},
            {**base, "incident_id": "INC-20261128-000002", "similarity": 0.0, "near_by": "cause"}]
    frame = related_view._frame(rows)
    assert "similarity" not in frame.columns
    assert list(frame["near by"]) == ["same error words (0.62)", "same cause: db deadlock"]
