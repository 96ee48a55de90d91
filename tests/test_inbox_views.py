"""The inbox's views read keyset pages off indexes: every row once, in the view's order, with
counts kept by triggers and a substring search, with or without FTS5."""
from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from pipeline.incidents.batch import Incidents
from pipeline.clock import ManualClock, iso
from pipeline.errors import UsageError
from pipeline.state import CLOSED_STATUSES, SEVERITIES, LogEvent
from pipeline.store import views
from pipeline.store.records import Records
from pipeline.store.schema import MIGRATIONS
from tests.support import BOTH_BACKENDS, written_as_before_schema_11

T0 = datetime(2026, 11, 28, 10, 0, tzinfo=timezone.utc)
INBOX_MIGRATION = next(m.version for m in MIGRATIONS if m.optional_needs == "fts5")
STATUSES = ["awaiting_approval", "awaiting_approval", CLOSED_STATUSES[0], "rejected", "analyzing", "failed", "in_revision"]


def _name(k: int) -> str:
    out, k = "", k + 1  # letters: the fingerprint masks digits, and each incident must be its own
    while k:
        k, r = divmod(k - 1, 26)
        out = chr(97 + r) + out
    return out


def seeded(records: Records, n: int = 60) -> list[str]:
    events = [LogEvent(event_id=f"e{k}", time=T0 + timedelta(seconds=k), level="ERROR",
                       service=f"svc-{_name(k % 5)}", exception=f"com.example.{_name(k).capitalize()}Failure",
                       message=f"operation {_name(k)} failed") for k in range(n)]
    ids = []
    for k, event in enumerate(events):  # one at a time: each opens at its own instant
        records.clock.set(T0 + timedelta(seconds=k))
        ids += Incidents(records).store_batch([event], cursor=None).incidents_new
    for k, incident_id in enumerate(ids):
        # several share a deadline: the severity and then the opening time must break the tie
        records.clock.set(T0 + timedelta(minutes=k))
        records.update_incident(incident_id, status=STATUSES[k % len(STATUSES)], severity=SEVERITIES[k % 4],
                                category="db_deadlock" if k % 9 == 0 else "disk_full",
                                sla_deadline=iso(T0 + timedelta(hours=k % 4)))
    return ids


@pytest.fixture
def records(database_url):
    store = Records(database_url or ":memory:", clock=ManualClock(T0))
    yield store
    store.close()


def every_page(records: Records, **kwargs) -> list[list[dict]]:
    pages, after = [], None
    while True:
        page = views.inbox_page(records, after=after, limit=7, **kwargs)
        pages.append(page.rows)
        if page.next_cursor is None:
            return pages
        after = page.next_cursor


RANK = {"critical": 0, "high": 1, "medium": 2, "low": 3}


@pytest.mark.parametrize("statuses, key, reverse", [
    (("awaiting_approval",), lambda r: (r["sla_deadline"], RANK[r["severity"]], r["created_at"], r["incident_id"]), False),
    (CLOSED_STATUSES, lambda r: (r["closed_at"], r["incident_id"]), True),
    ((), lambda r: (r["created_at"], r["incident_id"]), True),
])
@BOTH_BACKENDS
def test_keyset_pages_list_every_row_of_a_view_once_in_its_order(records, statuses, key, reverse):
    seeded(records)
    expected = sorted((r for r in records.incidents() if not statuses or r["status"] in statuses), key=key,
                      reverse=reverse)
    pages = every_page(records, statuses=statuses)
    assert [r["incident_id"] for page in pages for r in page] == [r["incident_id"] for r in expected]
    assert all(len(p) == 7 for p in pages[:-1]) and len(expected) > 14


@BOTH_BACKENDS
def test_the_by_service_view_lists_that_service_newest_first(records):
    seeded(records)
    rows = [r for page in every_page(records, service="svc-b") for r in page]
    assert rows and {r["service"] for r in rows} == {"svc-b"}
    assert [r["created_at"] for r in rows] == sorted((r["created_at"] for r in rows), reverse=True)
    assert len(rows) == len([r for r in records.incidents() if r["service"] == "svc-b"])


@BOTH_BACKENDS
def test_search_finds_substrings_of_id_service_title_and_category_names(records):
    ids = seeded(records)
    assert {r["service"] for r in views.inbox_page(records, search="VC-C", limit=100).rows} == {"svc-c"}
    by_title = views.inbox_page(records, search="operation bb fail", limit=100).rows  # title of incident 53
    assert [r["incident_id"] for r in by_title] == [ids[53]] and "operation bb failed" in by_title[0]["title"]
    assert [r["incident_id"] for r in views.inbox_page(records, search=ids[7][-5:], limit=100).rows] == [ids[7]]
    deadlocks = views.inbox_page(records, search="deadlock", limit=100).rows
    assert {r["category"] for r in deadlocks} == {"db_deadlock"} and len(deadlocks) == 7
    assert views.inbox_page(records, search='"; DROP TABLE incidents', limit=5).rows == []


def test_search_without_fts5_falls_back_to_the_same_answers(tmp_path):
    # a build without FTS5 skips the optional statements of the inbox migration: search scans instead
    no_fts = tuple(replace(m, optional_needs="no_such_extension") if m.optional else m for m in MIGRATIONS)
    plain, indexed = (Records(tmp_path / name, clock=ManualClock(T0), migrations=m)
                      for name, m in (("plain.sqlite3", no_fts), ("fts.sqlite3", MIGRATIONS)))
    seeded(plain), seeded(indexed)
    assert not plain.query("SELECT 1 FROM sqlite_master WHERE name = 'incidents_search'")
    for text in ("svc-c", "operation bb", "deadlock", "ab"):
        got = [[r["incident_id"] for r in views.inbox_page(s, search=text, limit=100).rows] for s in (plain, indexed)]
        assert got[0] == got[1] and got[0], text


@BOTH_BACKENDS
def test_counts_follow_every_status_change(records):
    ids = seeded(records)
    counted = lambda: {s: n for s, n in records.status_counts().items()}  # noqa: E731
    recount = lambda: {r["status"]: r["n"] for r in records.query(  # noqa: E731
        "SELECT status, count(*) AS n FROM incidents GROUP BY status")}
    assert counted() == recount() and sum(counted().values()) == 60
    records.update_incident(ids[0], status="fixed")
    records.update_incident(ids[1], severity="high")  # not a status change
    assert counted() == recount()


@BOTH_BACKENDS
def test_the_assignee_filter_lists_the_people_on_open_incidents_only_once_each(records):
    from pipeline.store import assignments, inbox

    ids = seeded(records, n=14)
    on = {ids[0]: "ann", ids[4]: "bob", ids[5]: "ann", ids[6]: "cy", ids[2]: "dee", ids[3]: "eve"}
    for incident_id, who in on.items():
        assignments.set_assignee(records, incident_id, who, audit={"incident_id": incident_id, "reviewer": who,
                                                                  "action": "assign", "checkpoint_before": None,
                                                                  "checkpoint_after": None})
    # ids[2] and ids[3] are closed (their people are not offered); ids[4..6] analysing, failed, in revision
    assert inbox.assignees(records) == ["ann", "bob", "cy"]


@BOTH_BACKENDS
def test_a_cursor_from_another_view_is_a_usage_error(records):
    seeded(records)
    cursor = views.inbox_page(records, statuses=("awaiting_approval",), limit=2).next_cursor
    with pytest.raises(UsageError, match="not a cursor"):
        views.inbox_page(records, statuses=CLOSED_STATUSES, after=cursor)


@BOTH_BACKENDS
def test_the_poll_query_finds_paused_incidents_with_new_evidence_only(records):
    ids = seeded(records)
    moving = {i for i, k in zip(ids, range(60)) if STATUSES[k % 7] in ("analyzing", "in_revision", "failed")}
    records.mark_merged(f"e{k}" for k in range(60))
    assert set(records.incidents_needing_work()) == moving
    paused = ids[0]
    late = LogEvent(event_id="late", time=T0 + timedelta(minutes=1), level="ERROR", service="svc-a",
                    exception="com.example.AFailure", message="operation a failed")
    Incidents(records).store_batch([late], cursor=None)
    assert records.incident(paused)["event_count"] == 2
    assert set(records.incidents_needing_work()) == moving | {paused}
    assert records.incidents_needing_work() == sorted(
        records.incidents_needing_work(), key=lambda i: records.incident(i)["created_at"])


def test_a_store_of_the_previous_schema_is_searchable_after_migrating(tmp_path):
    path = tmp_path / "app.sqlite3"
    old = Records(path, clock=ManualClock(T0), migrations=tuple(m for m in MIGRATIONS if m.version < INBOX_MIGRATION))
    with written_as_before_schema_11(old):
        ids = seeded(old)
    old.close()
    records = Records(path, clock=ManualClock(T0))
    assert [r["incident_id"] for r in views.inbox_page(records, search=ids[7][-6:], limit=5).rows] == [ids[7]]
    assert len(views.inbox_page(records, search="svc-a", limit=100).rows) == 12
    assert records.status_counts() == {r["status"]: r["n"] for r in records.query(
        "SELECT status, count(*) AS n FROM incidents GROUP BY status")}
    records.update_incident(ids[7], category="db_deadlock")  # its search row follows it
    assert ids[7] in [r["incident_id"] for r in views.inbox_page(records, search="deadlock", limit=100).rows]


@BOTH_BACKENDS
def test_the_review_service_pages_the_awaiting_view_as_the_inbox_lists_it(paused_engine):
    from pipeline.review.service import ReviewService

    service = ReviewService(paused_engine)
    listed = [r["incident_id"] for r in service.inbox(status="awaiting_approval")]
    first = service.inbox_page(status="awaiting_approval", limit=3)
    second = service.inbox_page(status="awaiting_approval", limit=3, after=first["next_cursor"])
    assert [r["incident_id"] for r in first["rows"] + second["rows"]] == listed and second["next_cursor"] is None
    assert all(r["approvals_needed"] in (1, 2) and r["approvals"] == [] for r in first["rows"])


def test_older_incidents_are_found_by_whole_words_and_the_newest_by_any_substring(tmp_path):
    records = Records(tmp_path / "app.sqlite3", clock=ManualClock(T0))
    with records.transaction() as conn:  # before any incident: the substring index holds the newest 20
        conn.execute("UPDATE store_meta SET value = '20' WHERE key = 'search_recent'")
    ids = seeded(records)
    newest_first = sorted(records.incidents(), key=lambda r: (r["created_at"], r["incident_id"]), reverse=True)
    assert {r[0] for r in records.query("SELECT incident_id FROM incidents_search_recent")} == \
        {r["incident_id"] for r in newest_first[:20]}
    found = lambda text, **kw: [r["incident_id"] for page in every_page(records, search=text, **kw)  # noqa: E731
                                for r in page]
    # a service name is a phrase of words: every incident of svc-c, newest first, across pages
    assert found("svc-c") == [r["incident_id"] for r in newest_first if r["service"] == "svc-c"]
    assert len(found("svc-c")) == 12
    # inside a word: only the newest 20
    assert found("VC-C") == [r["incident_id"] for r in newest_first[:20] if r["service"] == "svc-c"]
    assert found("deadlock") == [r["incident_id"] for r in newest_first if r["category"] == "db_deadlock"]
    old = ids[7]
    assert old not in {r["incident_id"] for r in newest_first[:20]}
    assert found(old.split("-")[-1]) == [old] and found(old) == [old]  # its id, or the id's own part
    assert found(old[-5:]) == []  # a piece of a word of an old incident is not indexed
    assert found(ids[59][-5:]) == [ids[59]]
    # the window follows new incidents; a category change reaches both indexes
    records.update_incident(old, category="queue_backlog")
    assert found("backlog") == [old]


@BOTH_BACKENDS
def test_the_poller_reads_due_work_in_small_batches_the_incidents_ingest_would_work(records):
    from pipeline.store import due

    ids = seeded(records)
    records.mark_merged(f"e{k}" for k in range(60))
    failed = [i for k, i in enumerate(ids) if STATUSES[k % 7] == "failed"]
    records.update_incident(failed[0], next_attempt_at=iso(T0 + timedelta(hours=3)))  # backing off
    records.update_incident(failed[1], next_attempt_at="9999-12-31T00:00:00+00:00")  # given up
    records.update_incident(failed[2], next_attempt_at=iso(T0 - timedelta(seconds=1)))  # due
    paused = [i for k, i in enumerate(ids) if STATUSES[k % 7] == "awaiting_approval"]
    records.clock.set(T0)
    for n, incident_id in enumerate(paused[:3]):  # new evidence, stored 0, 1 and 2 minutes before now
        with records.transaction() as conn:
            conn.execute("INSERT INTO events(event_id, incident_id, time, service, message, body, source, position,"
                         " merged, stored_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, $9)",
                         (f"new{n}", incident_id, iso(T0), "svc-a", "m", "{}", "t", str(n),
                          iso(T0 - timedelta(minutes=n))))
    for delay in (0, 90):
        expected = records.incidents_needing_work(merge_delay=delay)
        got = list(due.due_incidents(records, merge_delay=delay, limit=2))
        assert sorted(got) == sorted(expected) and len(got) == len(set(got))
        assert failed[0] not in got and failed[1] not in got and failed[2] in got
        # new evidence is due once its oldest event waited merge_delay (stored 0, 1, 2 minutes ago)
        assert [p in got for p in paused[:3]] == ([True] * 3 if delay == 0 else [False, False, True])
    # each batch is at most `limit` ids, in its kind's keyset order
    first, after = due.batch(records, "analyzing", after=None, limit=2)
    second, _ = due.batch(records, "analyzing", after=after, limit=2)
    moving = sorted((r for r in records.incidents() if r["status"] == "analyzing"),
                    key=lambda r: (r["created_at"], r["incident_id"]))
    assert first + second == [r["incident_id"] for r in moving[:4]]


@BOTH_BACKENDS
def test_a_store_written_at_the_previous_version_keeps_its_search_and_poll_after_upgrading(database_url, tmp_path):
    from pipeline.store import due

    where = database_url or tmp_path / "app.sqlite3"
    previous = tuple(m for m in MIGRATIONS if m.version < 11)  # the store as schema 10 wrote it
    old = Records(where, clock=ManualClock(T0), migrations=previous)
    with written_as_before_schema_11(old):
        ids = seeded(old)
    old.close()
    records = Records(where, clock=ManualClock(T0))
    assert records.conn.schema_version() == MIGRATIONS[-1].version
    assert [r["incident_id"] for r in views.inbox_page(records, search=ids[7][-6:], limit=5).rows] == [ids[7]]
    assert len(views.inbox_page(records, search="svc-a", limit=100).rows) == 12
    assert sorted(due.due_incidents(records)) == sorted(records.incidents_needing_work())
    late = LogEvent(event_id="late", time=T0 + timedelta(hours=2), level="ERROR", service="svc-zz",
                    exception="com.example.ZzFailure", message="operation zz failed")
    new = Incidents(records).store_batch([late], cursor=None).incidents_new
    assert [r["incident_id"] for r in views.inbox_page(records, search="svc-zz", limit=5).rows] == list(new)
    assert views.inbox_page(records, search="operation", limit=1).rows[0]["incident_id"] in new  # newest first
    records.close()


def _overdue_by_definition(records: Records, at: datetime) -> int:
    from pipeline.state import OPEN_STATUSES

    return sum(1 for r in records.incidents() if r["status"] in OPEN_STATUSES and r["sla_deadline"] < iso(at))


@BOTH_BACKENDS
def test_the_overdue_count_is_exact_through_status_and_deadline_changes_and_deletes(records):
    # on SQLite it reads per-minute counts kept by triggers plus the current minute's rows
    import random

    from pipeline.store.inbox import overdue_count

    rng = random.Random(12)
    ids = seeded(records)
    statuses = [*STATUSES, "expired", "approved"]

    def check():
        for at in [T0 + timedelta(seconds=rng.randrange(-600, 5 * 3600)) for _ in range(6)] + [
                T0 + timedelta(hours=1), T0 + timedelta(hours=1, microseconds=1), T0 + timedelta(minutes=59, seconds=59)]:
            assert overdue_count(records, at) == _overdue_by_definition(records, at), at

    check()
    for step in range(80):
        incident_id = rng.choice(ids)
        kind = rng.random()
        if kind < 0.4:
            records.update_incident(incident_id, status=rng.choice(statuses))
        elif kind < 0.8:  # to another minute, or within the same minute
            records.update_incident(incident_id, sla_deadline=iso(
                T0 + timedelta(seconds=rng.randrange(0, 4 * 3600), microseconds=rng.randrange(10 ** 6))))
        elif kind < 0.9:
            with records.transaction() as conn:
                conn.execute("DELETE FROM incidents WHERE incident_id = $1", (incident_id,))
            ids.remove(incident_id)
        else:
            event = LogEvent(event_id=f"new{step}", time=T0 + timedelta(minutes=step), level="ERROR",
                             service="svc-new", exception=f"com.example.{_name(step + 100).capitalize()}Failure",
                             message=f"operation {_name(step + 100)} failed")
            ids += Incidents(records).store_batch([event], cursor=None).incidents_new
        check()


def test_a_store_upgraded_to_the_overdue_counts_counts_what_it_held(tmp_path):
    from pipeline.store.inbox import overdue_count

    where = tmp_path / "app.sqlite3"
    old = Records(where, clock=ManualClock(T0), migrations=tuple(m for m in MIGRATIONS if m.version < 7))
    with written_as_before_schema_11(old):
        seeded(old)
    old.close()
    records = Records(where, clock=ManualClock(T0))
    assert records.conn.schema_version() >= 7
    counts = []
    for hours in (0, 1, 2, 3.5, 5):
        at = T0 + timedelta(hours=hours)
        counts.append(overdue_count(records, at))
        assert counts[-1] == _overdue_by_definition(records, at), at
    assert counts[-1] > counts[1] > 0  # the backfill counted the open incidents it found
    records.close()


@pytest.mark.parametrize("sort, key, reverse", [
    ("severity", lambda r: (RANK[r["severity"]], r["sla_deadline"], r["incident_id"]), False),
    ("oldest", lambda r: (r["created_at"], r["incident_id"]), False),
    ("confidence", lambda r: (r["confidence"] if r["confidence"] is not None else -1.0, r["incident_id"]), True),
    ("events", lambda r: (r["event_count"], r["incident_id"]), True),
])
@BOTH_BACKENDS
def test_a_chosen_order_and_the_severity_and_date_filters_page_every_matching_row_once(records, sort, key, reverse):
    """The inbox's Sort, Severity and Opened filters: any view, any order, still keyset pages."""
    ids = seeded(records)
    for k, incident_id in enumerate(ids[:20]):
        records.update_incident(incident_id, confidence=round(0.05 * (k % 7), 2))
    wanted = ("critical", "high")
    expected = sorted((r for r in records.incidents() if r["severity"] in wanted), key=key, reverse=reverse)
    pages = every_page(records, severities=wanted, sort=sort, opened_from="2026-11-28", opened_to="2026-11-28")
    assert [r["incident_id"] for page in pages for r in page] == [r["incident_id"] for r in expected]
    assert len(expected) > 14 and {r["severity"] for r in expected} == set(wanted)
    assert every_page(records, sort=sort, opened_to="2026-11-27") == [[]]  # opened later than that day
    assert every_page(records, sort=sort, opened_from="2026-11-29") == [[]]
    with pytest.raises(UsageError):
        views.inbox_page(records, sort="loudest")


@BOTH_BACKENDS
def test_the_day_filter_finds_an_old_log_under_its_own_days_not_the_day_it_was_read(records):
    """Issue 38.4: a week-old log ingested today is found under the days its errors were logged."""
    logged = T0 - timedelta(days=7)
    events = [LogEvent(event_id=f"old{k}", time=logged + timedelta(days=k), level="ERROR", service="svc-old",
                       exception=f"com.example.{_name(k).capitalize()}Failure", message=f"step {_name(k)} failed")
              for k in range(3)]
    records.clock.set(T0)
    ids = Incidents(records).store_batch(events, cursor=None).incidents_new
    assert len(ids) == 3
    day = (logged + timedelta(days=1)).date().isoformat()
    [[row]] = every_page(records, opened_from=day, opened_to=day)
    assert row["incident_id"] in ids and row["first_seen"][:10] == day
    since = every_page(records, opened_from=logged.date().isoformat())
    assert sorted(r["incident_id"] for page in since for r in page) == sorted(ids)
    assert every_page(records, opened_from=T0.date().isoformat()) == [[]]  # read today, logged before


def test_an_analysis_setting_the_category_writes_no_search_index_row_and_search_still_finds_it(tmp_path):
    records = Records(tmp_path / "app.sqlite3", clock=ManualClock(T0))
    with records.transaction() as conn:  # the substring index holds the newest 20, the word index the rest
        conn.execute("UPDATE store_meta SET value = '20' WHERE key = 'search_recent'")
    ids = seeded(records)
    raw = records.conn.raw
    before = raw.total_changes
    records.update_incident(ids[3], category="svc-b-pool")  # the incident's row, and nothing else
    assert raw.total_changes - before == 1
    for k in (5, 50, 58):
        records.update_incident(ids[k], category="svc-b-pool")
    newest_first = sorted(records.incidents(), key=lambda r: (r["created_at"], r["incident_id"]), reverse=True)
    found = [r["incident_id"] for page in every_page(records, search="svc-b") for r in page]
    # by service or by category, newest first across pages, each once, in both parts of the index
    assert found == [r["incident_id"] for r in newest_first if r["service"] == "svc-b" or r["category"] == "svc-b-pool"]
    assert {ids[3], ids[5], ids[50], ids[58]} <= set(found)
    # a category's substring among the newest only; its whole words (any case) among the older ones
    assert [r["incident_id"] for page in every_page(records, search="b-poo") for r in page] == [ids[58], ids[50]]
    assert [r["incident_id"] for page in every_page(records, search="B POOL") for r in page] == [ids[5], ids[3]]


def test_the_inbox_says_the_category_in_words_as_the_incident_page_does():
    """Issue 38.8: the inbox's Category column showed `db_schema_mismatch`, the incident page "db schema mismatch"."""
    from datetime import datetime, timezone

    from workbench.inbox_view import inbox_frame

    row = {"incident_id": "INC-1", "service": "checkout-api", "severity": "high", "category": "db_schema_mismatch",
           "confidence": 0.9, "event_count": 3, "created_at": "2026-11-28T10:00:00+00:00", "status": "awaiting_approval",
           "sla_deadline": "2026-11-28T14:00:00+00:00", "title": "BadSqlGrammarException", "assignee": None, "escalated_at": None,
           "backfilled": False}
    frame = inbox_frame([row], datetime(2026, 11, 28, 11, tzinfo=timezone.utc))
    assert list(frame["category"]) == ["db schema mismatch"]


def test_every_default_column_has_its_width_and_they_fit_a_1024_px_window_with_its_scrollbars():
    """Issue 38 (walkthrough s59, defect 1): at 1024 px the Decided and All views' Status column sized
    itself to "approved · no code fix", and the SLA went out of view (the table scrolled sideways by
    19 px). Every default column has its width now, no status is said longer than "awaiting approval"
    (the Status width holds that), and the row's box and the columns fit the table at 1024 px: the
    narrow margins, the table's border and two 10 px scrollbars (the page's and the table's) taken off;
    and at 1440 px beside the open sidebar."""
    from pipeline.state import STATUSES
    from workbench.inbox_view import COLUMN_PX, DEFAULT_COLUMNS, DEFAULT_GRID_PX, status_text
    from workbench.narrow_window import NARROW_MARGIN_PX, NARROW_PX

    assert set(DEFAULT_COLUMNS) - {"confidence"} <= set(COLUMN_PX)
    longest = max([*(status_text(s) for s in STATUSES), "escalated"], key=len)
    assert len(longest) <= len("awaiting approval"), longest
    assert 1024 < NARROW_PX  # the sidebar starts closed there
    assert DEFAULT_GRID_PX <= 1024 - 2 * NARROW_MARGIN_PX - 2 - 2 * 10, DEFAULT_GRID_PX
    assert DEFAULT_GRID_PX <= 1440 - 300 - 2 * 80 - 2 - 2 * 10, DEFAULT_GRID_PX  # the sidebar open, 5 rem margins
