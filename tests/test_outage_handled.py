"""Errors nobody pages for (issue 35, session 48): one whose request its own story says ended well (answered
2xx on a path holding the id the error named, or said to be done already), a run that had nothing to do and
ended normally, a request refused for the client's own content (422, or a 400 saying it was invalid), a
call numbered `(attempt 1)` that its writer says worked at `(attempt 2)`. And their limits: the same
words with a failure after them open. The lines are written here, in no one library's words."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pipeline.state import LogEvent
from tests.support import events_of, incidents_by_first_seen

T0 = datetime(2026, 12, 6, 11, 0, 0, 250_000, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str, *, level: str = "ERROR",
           **fields: object) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=level, message=message, source=f"{service}.log", position=f"{service}.log@{n}",
                    fields=dict(fields))


def _opened(engine) -> set[frozenset[str]]:
    return {frozenset(events_of(engine, r["incident_id"])) for r in incidents_by_first_seen(engine)}


def test_an_error_whose_request_was_answered_2xx_or_was_done_already_opens_nothing(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "menu", "menu-2", "lookup in local store failed", item="dish/5521", err="absent"),
        _event(2, 2.5, "menu", "menu-2", "served", route="/dishes/5521", status=200, level="INFO"),
        _event(3, 4.0, "inbox", "inbox-1", "insert rejected: row for msg_40917 exists (unique index on msg_id)"),
        _event(4, 7.0, "inbox", "inbox-1", "msg_40917 already recorded, skipping", level="INFO"),
    ], cursor=None)
    assert incidents_by_first_seen(engine) == []
    engine.incidents.store_batch([
        # answered with a failure, or a success for another id: opens
        _event(5, 30.0, "menu", "menu-2", "lookup in local store failed", item="dish/7310", err="absent"),
        _event(6, 31.0, "menu", "menu-2", "served", route="/dishes/7310", status=503, level="INFO"),
        _event(7, 32.0, "menu", "menu-2", "served", route="/dishes/9002", status=200, level="INFO"),
    ], cursor=None)
    assert _opened(engine) == {frozenset({"ev-5"})}


def test_a_run_with_nothing_to_do_that_ends_normally_opens_nothing_and_one_ending_in_errors_opens(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "digest", "digest-job-1", "no unread threads to summarise for tenant 12"),
        _event(2, 1.5, "digest", "digest-job-1", "digest job finished, exit code 0", level="INFO"),
        _event(3, 5.0, "sweeper", "sweeper-job-1", "nothing to purge today"),
        _event(4, 6.0, "sweeper", "sweeper-job-1", "sweep finished with 3 errors", level="INFO"),
    ], cursor=None)
    assert _opened(engine) == {frozenset({"ev-3"})}


def test_a_request_refused_for_the_clients_own_content_opens_nothing(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "forms", "forms-1", "submission rejected", status=422, reason="birthdate in the future"),
        _event(2, 3.0, "forms", "forms-1", "body did not validate: field 'qty' must be positive", status=400),
    ], cursor=None)
    assert incidents_by_first_seen(engine) == []
    engine.incidents.store_batch([
        _event(3, 30.0, "forms", "forms-1", "signature check on callback did not match", status=400),
    ], cursor=None)
    assert _opened(engine) == {frozenset({"ev-3"})}


def test_a_call_numbered_attempt_1_that_worked_at_attempt_2_opens_nothing(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "fx", "fx-1", "convert failed: 502 from https://rates.bank.test/v1/convert (attempt 1)"),
        _event(2, 1.2, "fx", "fx-1", "convert ok EUR->GBP 0.85 (attempt 2)", level="INFO"),
    ], cursor=None)
    assert incidents_by_first_seen(engine) == []


def test_a_notice_logged_at_error_opens_nothing_unless_it_also_says_something_broke(engine):
    # session 49: a deprecation (a warnings category, `... is deprecated`) and a cache's miss say nothing failed
    engine.incidents.store_batch([
        _event(1, 0.0, "billing-etl", "etl-4", "/opt/app/lib/tables.py:88: DeprecationWarning: Table.iteritems is deprecated,"
               " use Table.items", logger="py.warnings"),
        _event(2, 2.0, "sdk-host", "sdk-1", "option legacyAuth was deprecated in 3.2 and will be removed"),
        _event(3, 4.0, "quotes", "quotes-7", "cache miss on quote:55120, fetching from origin"),
    ], cursor=None)
    assert incidents_by_first_seen(engine) == []
    engine.incidents.store_batch([
        _event(4, 30.0, "quotes", "quotes-7", "cache miss on quote:55121, fetching from origin failed: connection refused"),
    ], cursor=None)
    assert _opened(engine) == {frozenset({"ev-4"})}


def test_a_duplicate_its_writer_says_it_dropped_opens_nothing(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "ledger-db", "ldb-1", 'unique violation on "payments_dedup_key"', detail="key (k)=(pay77a1) exists"),
        _event(2, 0.3, "payments", "pay-2", "duplicate request pay77a1 skipped, returning existing payment 4410",
               level="INFO"),
    ], cursor=None)
    assert incidents_by_first_seen(engine) == []


def test_a_reconnect_an_error_announced_heals_it_when_its_writer_says_reconnected(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "carts", "carts-3", "kv: write failed, broken pipe; reconnecting"),
        _event(2, 0.4, "carts", "carts-3", "kv: reconnected to kv-main:7000", level="INFO"),
        # another writer's reconnect heals nothing of this one's
        _event(3, 5.0, "orders", "orders-3", "kv: write failed, broken pipe; reconnecting"),
        _event(4, 5.2, "carts", "carts-3", "kv: reconnected to kv-main:7000", level="INFO"),
    ], cursor=None)
    assert _opened(engine) == {frozenset({"ev-3"})}


def test_a_grpc_cancel_written_as_fields_opens_nothing(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "feed", "feed-1", "rpc failed", code="Canceled", desc="context canceled", method="/feed.Feed/List"),
        # a deadline is a failure, however it is written
        _event(2, 3.0, "feed", "feed-1", "rpc failed", code="DeadlineExceeded", desc="context deadline exceeded",
               method="/feed.Feed/List"),
    ], cursor=None)
    assert _opened(engine) == {frozenset({"ev-2"})}


def test_minutes_of_failures_ended_by_a_reconnect_naming_nothing_are_an_outage_and_a_removed_api_opens(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "carts", "carts-3", "kv: write failed, connection refused; reconnecting"),
        _event(2, 60.0, "carts", "carts-3", "kv: write failed, connection refused; reconnecting"),
        _event(3, 65.0, "carts", "carts-3", "kv: reconnected", level="INFO"),
        _event(4, 90.0, "deployer", "dep-1", "apiVersion batch/v1beta1 CronJob is deprecated and was removed in 1.25"),
    ], cursor=None)
    held = set().union(*_opened(engine))
    assert "ev-1" in held and "ev-4" in held and "ev-2" not in held
