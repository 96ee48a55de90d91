"""A thing's or a level's name is no cause, as a leader (issue 35, session 59): a pool's or its thread's name
(`HikariPool-2`, `pool-4-thread-2`, urllib3's `HTTPConnectionPool`), a certificate, x509 or DNS named, and a level
written in the text (`FATAL:`, `[FATAL]`) say what a line is about or how bad its writer thinks it is, not what went
wrong: a failure of one of them is said by other words (`expired`, `exhausted`, `could not resolve`, `No space left`),
which still name a cause. What groups errors (`rank`) reads the words as before. Wordings written here in the manner
of Java thread pools, urllib3, PostgreSQL and a search indexer, not copied from a bed."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.incidents.leading import CAUSE, NEUTRAL, SYMPTOM, leader_rank, rank
from pipeline.state import LogEvent
from tests.support import events_of, incidents_by_first_seen

T0 = datetime(2026, 12, 8, 9, 0, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str, **more) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=more.pop("level", "ERROR"), message=message, source=f"{service}.log",
                    position=f"{service}.log@{n}", **more)


@pytest.mark.parametrize("message", [
    "[pool-4-thread-2] export job 812 failed",
    "HikariPool-2 - housekeeper found 3 idle connections older than maxLifetime",
    "FATAL: balance call failed (GET http://10.2.4.7:8080/v1/balance)",
    "[FATAL] segment merge for shard 3 aborted",
    "reload of certificate bundle /etc/ssl/partner.pem failed",
    "dns lookup of ledger.internal failed",
])
def test_a_things_or_a_levels_name_is_no_cause_as_a_leader(message):
    event = _event(1, 0, "svc", "svc-1", message)
    assert leader_rank(event) == NEUTRAL
    assert rank(event) == CAUSE  # the grouping rules' reading is unchanged


@pytest.mark.parametrize(("message", "ranked"), [
    ("HikariPool-2 - Connection is not available, request timed out after 30000ms.", SYMPTOM),
    ("connection pool exhausted (max 20), 41 waiting", CAUSE),
    ("x509: certificate has expired or is not yet valid", CAUSE),
    ('dial tcp: lookup ledger.internal on 10.96.0.10:53: no such host', CAUSE),
    ('PANIC:  could not write to file "pg_wal/xlogtemp.81": No space left on device', CAUSE),
    ("# A fatal error has been detected by the Java Runtime Environment:", CAUSE),
])
def test_a_failure_of_a_named_thing_said_in_other_words_still_names_a_cause(message, ranked):
    assert leader_rank(_event(1, 0, "svc", "svc-1", message)) == ranked


def test_a_level_written_in_an_earlier_line_does_not_lead_the_writers_stated_cause(engine):
    engine.incidents.store_batch([
        _event(1, 1.0, "indexer", "indexer-0", "[FATAL] segment merge for shard 3 aborted"),
        _event(2, 1.4, "indexer", "indexer-0", "write to /data/index/shard-3/seg_0077.tmp failed: No space left on"
               " device"),
        _event(3, 2.0, "search-api", "search-api-1", "GET /search?q=lamp failed: upstream indexer responded 503"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert events_of(engine, outage["incident_id"]) == {"ev-1", "ev-2", "ev-3"}
    assert outage["leader"]["event_id"] == "ev-2"
