"""Why a line leads, said to the reviewer in plain words (issue 35, session 59): the reason quotes the clause that
placed the leader (`stated`: the cause or the symptom it names, or its stack's exception line), and says whether that
says what is wrong, what a connection to another end met (a refusal: the cause is at that end), or only how a call
fared (a timeout, a 5xx). Wordings written here in the manner of Node's V8, PostgreSQL's
JDBC driver and server, Go's net package, HikariCP and psycopg, not copied from a bed."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.incidents.leading import Leader, stated
from pipeline.state import LogEvent
from tests.support import incidents_by_first_seen

T0 = datetime(2026, 12, 8, 8, 0, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str, **more) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=more.pop("level", "ERROR"), message=message, source=f"{service}.log",
                    position=f"{service}.log@{n}", **more)


@pytest.mark.parametrize(("message", "stack", "quoted"), [
    # a level's word (`FATAL`) says less than the failure stated beside it
    ("FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory", None,
     "Reached heap limit Allocation failed"),
    # a pool's own name (`HikariPool-3`) is no cause; what happened to the request is
    ("HikariPool-3 - Connection is not available, request timed out after 30000ms.", None,
     "request timed out after 30000ms"),
    ('quote failed: Get "http://pricing:8080/quote": dial tcp 10.3.1.9:8080: connect: connection refused', None,
     "connection refused"),
    # a line that says only what failed speaks through its stack's exception line, quoted whole
    ("export of ledger rows failed", 'Traceback (most recent call last):\n  File "/app/export.py", line 41, in run\n'
     '    cur.execute(SQL)\npsycopg.errors.UndefinedTable: relation "ledger_rows_2026" does not exist\n',
     'psycopg.errors.UndefinedTable: relation "ledger_rows_2026" does not exist'),
    ("checkout failed", None, ""),
])
def test_the_clause_that_places_a_line_is_quoted_as_written(message, stack, quoted):
    assert stated(_event(1, 0, "svc", "svc-1", message, stack=stack)) == quoted


def _leader(engine, events: list[LogEvent]) -> dict:
    engine.incidents.store_batch(events, cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    return outage["leader"]


def test_a_stated_failure_is_said_to_say_what_is_wrong_and_quoted(engine):
    leader = _leader(engine, [
        _event(1, 1.0, "search", "search-7c9f-2kq", "FATAL ERROR: Reached heap limit Allocation failed - JavaScript"
               " heap out of memory"),
        _event(2, 1.6, "catalog", "catalog-5d8b-x1", "search upstream failed: request to"
               " http://search:7700/indexes/products/search failed, reason: connect ECONNREFUSED 10.4.2.17:7700"),
        _event(3, 2.4, "catalog", "catalog-5d8b-x1", "search upstream failed: request to"
               " http://search:7700/indexes/products/search failed, reason: connect ECONNREFUSED 10.4.2.17:7700"),
    ])
    assert leader["event_id"] == "ev-1" and leader["said"] == "Reached heap limit Allocation failed"
    assert "names a cause ('Reached heap limit Allocation failed'): it says what is wrong" in leader["reason"]


def test_a_refusal_a_caller_met_is_said_to_point_at_the_other_end(engine):
    leader = _leader(engine, [
        _event(1, 1.0, "orders", "orders-1", "org.postgresql.util.PSQLException: Connection to orders-db:5432 refused."
               " Check that the hostname and port are correct and that the postmaster is accepting TCP/IP connections."),
        _event(2, 4.0, "checkout", "checkout-2", "Timeout calling orders: GET http://orders:8080/api/orders/77 exceeded"
               " 3000ms"),
        _event(3, 5.0, "orders", "orders-1", "org.postgresql.util.PSQLException: Connection to orders-db:5432 refused."
               " Check that the hostname and port are correct and that the postmaster is accepting TCP/IP connections."),
    ])
    assert leader["event_id"] == "ev-1" and leader["rank"] == "cause"
    assert ("names a cause ('Connection to orders-db:5432 refused'), said of a connection to another end (a refusal, a"
            " reset, a name not resolved): the cause is at that end") in leader["reason"]


def test_a_warning_stating_the_cause_is_quoted_as_the_first_sign(engine):
    leader = _leader(engine, [
        _event(1, 0.0, "postgres", "pg-0", 'WARNING:  could not write to file "pg_wal/xlogtemp.81": No space left on'
               " device", level="WARN"),
        _event(2, 1.0, "postgres", "pg-0", 'PANIC:  could not write to file "pg_wal/xlogtemp.81": No space left on'
               " device"),
    ])
    assert leader["event_id"] == "ev-1"
    assert leader["reason"].startswith("the first sign: a warning written before the incident's errors, stating the"
                                       " cause ('No space left on device')")


def test_a_symptom_leading_is_quoted_and_said_to_say_only_how_a_call_fared(engine):
    leader = _leader(engine, [
        _event(1, 1.0, "web", "web-1", "GET /cart failed: upstream cart-api responded 503 (request_id=4c1d)"),
        _event(2, 2.0, "web", "web-1", "GET /cart failed: upstream cart-api responded 503 (request_id=4c1e)"),
    ])
    assert leader["event_id"] == "ev-1" and leader["rank"] == "symptom"
    assert ("read as a symptom ('upstream cart-api responded 503'): it says how a call or a service fared"
            in leader["reason"])


def test_a_leader_stored_before_its_words_were_kept_still_gives_a_reason():
    old = {"event_id": "ev-1", "pattern": "p", "service": "orders", "time": "2026-12-08T08:00:01+00:00",
           "message": "Connection to orders-db:5432 refused", "rank": "cause", "reason": "", "position": "o@1",
           "side": "between"}
    lead = Leader.from_json(old)
    assert lead.said == "" and lead.reason().startswith("the earliest error that names a cause: it says what is wrong")
    assert Leader.from_json(lead.as_json()) == lead
