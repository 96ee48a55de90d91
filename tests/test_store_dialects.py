"""The records store's SQL reaches either database as it is written (pipeline/store/sql.py): no
text of a statement is rewritten (but for SQLite's `$n` sent as `?n` outside literals),
parameters are bound by their numbers, and what the dialects do
differently (case-insensitive LIKE, scalar min/max) is written for each. No SQL lives outside store/."""
from __future__ import annotations

import ast
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pipeline.incidents.batch import Incidents
from pipeline.clock import ManualClock, iso
from pipeline.state import LogEvent
from pipeline.store import views
from pipeline.store.records import Records
from tests.support import BOTH_BACKENDS

T0 = datetime(2026, 11, 28, 10, 0, tzinfo=timezone.utc)
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def records(database_url):
    store = Records(database_url or ":memory:", clock=ManualClock(T0))
    yield store
    store.close()


def event(n: int, at: datetime, message: str, service: str = "checkout-api") -> LogEvent:
    return LogEvent(event_id=f"e{n}", time=at, level="ERROR", service=service,
                    exception="com.example.QueryFailure", message=message)


@BOTH_BACKENDS
def test_a_literal_with_placeholders_wildcards_and_calls_in_it_is_read_as_written(records):
    # the old PostgreSQL adapter turned `?` into `%s`, LIKE into ILIKE and min(a, b) into LEAST
    # everywhere in a statement's text, literals included
    text = "why? 100% sure: a LIKE b, min(a, b), max(1, 2), $2"
    (row,) = records.query(f"SELECT '{text}' AS text, $1 AS value", ("v",))
    assert (row["text"], row["value"]) == (text, "v")


@BOTH_BACKENDS
def test_parameters_are_bound_by_their_numbers_in_any_order_and_more_than_once(records):
    (row,) = records.query("SELECT $2 AS second, $1 AS first, $2 AS again", ("one", "two"))
    assert (row["second"], row["first"], row["again"]) == ("two", "one", "two")


def test_values_bind_by_number_when_a_statement_skips_one_or_is_given_more():
    # SQLite's `?n` binds by position; values that do not number the parameters exactly are bound
    # by name, as `$n` always was, so a statement reads the same values either way
    store = Records(":memory:", clock=ManualClock(T0))
    try:
        (row,) = store.query("SELECT $3 AS third, $1 AS first, '$2' AS text", ("one", "two", "three"))
        assert (row["third"], row["first"], row["text"]) == ("three", "one", "$2")
        (row,) = store.query("SELECT $2 AS second", ("one", "two", "three"))
        assert row["second"] == "two"
        (row,) = store.query('SELECT $1 AS "$2"', ("one",))
        assert dict(row) == {"$2": "one"}
    finally:
        store.close()


@BOTH_BACKENDS
def test_a_title_with_sql_in_it_is_stored_read_and_found_as_it_is(records):
    message = "SELECT * FROM t WHERE a LIKE ? AND b = '100%' OR min(x, y) = $1"
    counts = Incidents(records).store_batch([event(1, T0, message)], cursor=None)
    (incident_id,) = counts.incidents_new
    title = records.incident(incident_id)["title"]  # the log's own words, its %, ? and $ as written
    assert title.endswith("SELECT * FROM t WHERE a LIKE ? AND b = '100%' OR min(x, y) = $1")
    assert [r["incident_id"] for r in records.incidents(search="'100%'")] == [incident_id]
    assert records.incidents(search=title)[0]["title"] == title
    assert [r["incident_id"] for r in records.incidents(search="LIKE ?")] == [incident_id]
    assert [r["incident_id"] for r in records.incidents(search="LIKE ?x")] == []
    assert [r["incident_id"] for r in views.inbox_page(records, search="LIKE ? AND").rows] == [incident_id]
    assert [r["incident_id"] for r in views.inbox_page(records, search="min(x, y) = $").rows] == [incident_id]


@BOTH_BACKENDS
def test_search_ignores_case_on_both_databases(records):
    (incident_id,) = Incidents(records).store_batch([event(1, T0, "Deadlock detected")], cursor=None).incidents_new
    assert [r["incident_id"] for r in records.incidents(search="CHECKOUT-Api")] == [incident_id]
    assert [r["incident_id"] for r in records.incidents(search="deadLOCK")] == [incident_id]
    # the inbox's plain scan (a text too short for the search index) the same way
    assert [r["incident_id"] for r in views.inbox_page(records, search="CH").rows] == [incident_id]


@BOTH_BACKENDS
def test_an_incident_spans_its_earliest_and_latest_event_whatever_order_they_arrive_in(records):
    late, early, middle = T0 + timedelta(minutes=5), T0 - timedelta(minutes=5), T0
    (incident_id,) = Incidents(records).store_batch([event(1, late, "pool timed out")], cursor=None).incidents_new
    Incidents(records).store_batch([event(2, early, "pool timed out"), event(3, middle, "pool timed out")], cursor=None)
    row = records.incident(incident_id)
    assert (row["first_seen"], row["last_seen"], row["event_count"]) == (iso(early), iso(late), 3)


SQL_TEXT = re.compile(r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|PRAGMA|WITH)\s", re.IGNORECASE)


def test_no_sql_is_written_outside_the_store_package():
    found = []
    for path in [*(ROOT / "pipeline").rglob("*.py"), *(ROOT / "workbench").rglob("*.py")]:
        if (ROOT / "pipeline" / "store") in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_TEXT.match(node.value) \
                    and re.search(r"\b(FROM|INTO|SET|TABLE|INDEX)\b", node.value):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []
