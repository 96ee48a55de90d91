"""A healthy system's errors the log shows need no one (issue 35, session 56; pipeline/incidents/expected.py): a
server's failure that is its client's (a reset said in words), a
request the server answered 4xx on the path the error names, a peer's lost connection to a host that announced its
planned stop and came back, a retry its writer (or a caller quoting the error) announced and then said worked. And
their near misses, which open. The lines are written here, in no one library's words but the ones quoted."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.incidents.expected import answered_4xx, clients_own, planned_stop, retry_worked
from pipeline.state import LogEvent

T0 = datetime(2026, 12, 7, 9, 0, 0, 250_000, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str, *, level: str = "ERROR",
           **fields: object) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=level, message=message, source=f"{service}.log", position=f"{service}.log@{n}",
                    fields=dict(fields))


def _healed(rule, lines: list[LogEvent], *minutes: float) -> set[str]:
    errors = [e for e in lines if e.level in ("ERROR", "WARN")]
    others = [e for e in lines if e.level not in ("ERROR", "WARN")]
    found = rule(errors, others, *minutes)
    return {e.event_id for e in errors if id(e) in found}


@pytest.mark.parametrize(("message", "clients"), [
    ("LOG:  could not receive data from client: Connection reset by peer", True),
    ("LOG:  unexpected EOF on client connection with an open transaction", True),
    # near misses: a client's own lost server, a refusal; and a client's credentials refused, which opens (on a real
    # sshd log, Loghub's OpenSSH, reading those as the client's split one attack's incidents into more: 4 -> 7)
    ("could not receive data from server: Connection reset by peer", False),
    ("connect to 10.0.0.9:5432 failed: connection refused", False),
    ("Failed password for invalid user admin from 45.148.10.81 port 40000 ssh2", False),
])
def test_a_servers_error_is_its_clients_when_it_says_the_client_went(message, clients):
    assert clients_own(_event(1, 0.0, "edge", "edge-1", message)) is clients


def test_an_error_whose_request_was_answered_4xx_on_its_path_opens_nothing_and_a_5xx_or_another_path_opens():
    lines = [
        _event(1, 0.0, "web", "web-2", "[throttle] blocked req/ip ip=45.1.2.3 path=/products?page=120 count=301"),
        _event(2, 0.01, "nginx", "edge-3", '45.1.2.3 - - "GET /products?page=120 HTTP/1.1" 429 32 "-" "curl/8"',
               level="INFO"),
        # near misses: the same path answered 502; a 4xx on another path; a timeout of its own; a 408
        _event(3, 10.0, "web", "web-2", "[throttle] blocked req/ip ip=45.1.2.3 path=/products?page=121 count=302"),
        _event(4, 10.01, "nginx", "edge-3", '45.1.2.3 - - "GET /products?page=121 HTTP/1.1" 502 32 "-" "curl/8"',
               level="INFO"),
        _event(5, 20.0, "web", "web-2", "[throttle] blocked req/ip ip=45.1.2.3 path=/cart/7781 count=303"),
        _event(6, 20.01, "nginx", "edge-3", '45.1.2.3 - - "GET /products?page=9 HTTP/1.1" 429 32 "-" "curl/8"',
               level="INFO"),
        _event(7, 30.0, "web", "web-2", "session lookup timed out path=/account/5521"),
        _event(8, 30.01, "nginx", "edge-3", '45.1.2.3 - - "GET /account/5521 HTTP/1.1" 401 32 "-" "curl/8"',
               level="INFO"),
        _event(9, 40.0, "web", "web-2", "request body incomplete path=/upload/9912"),
        _event(10, 40.01, "nginx", "edge-3", '45.1.2.3 - - "POST /upload/9912 HTTP/1.1" 408 32 "-" "curl/8"',
               level="INFO"),
    ]
    assert _healed(answered_4xx, lines) == {"ev-1"}


def test_a_lost_peer_that_announced_its_planned_stop_and_came_back_opens_nothing():
    lines = [
        _event(1, 0.0, "presence", "presence@10.0.5.2", "Application presence exited: :stopped", level="INFO"),
        _event(2, 0.4, "presence", "presence@10.0.5.3", '** Node :"presence@10.0.5.2" not responding **'),
        _event(3, 9.0, "presence", "presence@10.0.5.2", "Running endpoint at :::4000", level="INFO"),
    ]
    assert _healed(planned_stop, lines, 5.0) == {"ev-2"}


@pytest.mark.parametrize("lines", [
    # a stop that is a failure (a non-zero exit), one that never came back, one that came back through an error,
    # an error naming another host whose name begins the same
    [_event(1, 0.0, "w", "worker-1", "worker exited with code 1", level="INFO"),
     _event(2, 0.4, "q", "queue-1", "lost worker-1: connection closed"),
     _event(3, 9.0, "w", "worker-1", "worker started", level="INFO")],
    [_event(1, 0.0, "w", "worker-1", "shutting down signal=terminated", level="INFO"),
     _event(2, 0.4, "q", "queue-1", "lost worker-1: connection closed")],
    [_event(1, 0.0, "w", "worker-1", "shutting down signal=terminated", level="INFO"),
     _event(2, 0.4, "q", "queue-1", "lost worker-1: connection closed"),
     _event(3, 5.0, "w", "worker-1", "config invalid: key 'port' missing"),
     _event(4, 9.0, "w", "worker-1", "worker started", level="INFO")],
    [_event(1, 0.0, "w", "worker-1", "shutting down signal=terminated", level="INFO"),
     _event(2, 0.4, "q", "queue-1", "lost worker-12: connection closed"),
     _event(3, 9.0, "w", "worker-1", "worker started", level="INFO")],
])
def test_a_lost_peer_opens_when_its_stop_was_no_planned_one_that_completed(lines):
    assert "ev-2" not in _healed(planned_stop, lines, 5.0)


def test_a_retry_its_writer_or_a_caller_quoting_the_error_announced_and_then_said_worked_opens_nothing():
    lines = [
        _event(1, 0.0, "basket", "basket-1", "Failed executing DbCommand: Exception while reading from stream"),
        _event(2, 0.3, "basket", "basket-1", "A transient exception occurred. The operation will be retried after 0ms.",
               level="INFO"),
        _event(3, 0.4, "basket", "basket-1", "HTTP GET /api/basket/77 responded 200 in 61.3 ms", level="INFO"),
        _event(4, 20.0, "postgres", "pg-0", "ERROR:  deadlock detected"),
        _event(5, 20.1, "orders", "orders-1", "tx retry", level="WARN", attempt="1", err="ERROR: deadlock detected"),
        _event(6, 20.4, "orders", "orders-1", "request", level="INFO", path="/v1/orders/o_1", status="200"),
    ]
    # (the caller's retry at WARN, which worked, is healed with the error it retried)
    assert _healed(retry_worked, lines, 5.0) == {"ev-1", "ev-4", "ev-5"}


@pytest.mark.parametrize("lines", [
    # no retry announced; a retry announced that failed again; a caller's retry that quotes other words; no success
    [_event(1, 0.0, "basket", "basket-1", "Failed executing DbCommand: Exception while reading from stream"),
     _event(3, 0.4, "basket", "basket-1", "HTTP GET /api/basket/77 responded 200 in 61.3 ms", level="INFO")],
    [_event(1, 0.0, "basket", "basket-1", "Failed executing DbCommand: Exception while reading from stream"),
     _event(2, 0.3, "basket", "basket-1", "The operation will be retried after 0ms.", level="INFO"),
     _event(3, 0.4, "basket", "basket-1", "GET /healthz responded 200 in 1 ms", level="INFO"),
     _event(4, 30.0, "basket", "basket-1", "Failed executing DbCommand: Exception while reading from stream")],
    [_event(1, 0.0, "postgres", "pg-0", "ERROR:  deadlock detected"),
     _event(2, 0.1, "orders", "orders-1", "tx retry", level="WARN", attempt="1", err="connection refused"),
     _event(3, 0.4, "orders", "orders-1", "request", level="INFO", path="/v1/orders/o_1", status="200")],
    [_event(1, 0.0, "postgres", "pg-0", "ERROR:  deadlock detected"),
     _event(2, 0.1, "orders", "orders-1", "tx retry", level="WARN", attempt="1", err="ERROR: deadlock detected"),
     _event(3, 0.4, "orders", "orders-1", "request", level="INFO", path="/v1/orders/o_1", status="503")],
])
def test_an_error_opens_when_no_retry_was_announced_or_the_retry_did_not_work(lines):
    assert "ev-1" not in _healed(retry_worked, lines, 5.0)


@pytest.mark.parametrize(("answered_at", "healed"), [(30.2, True), (55.0, False)])
def test_a_retry_announced_with_its_delay_may_work_that_late_and_no_later(answered_at, healed):
    lines = [
        _event(1, 0.0, "inventory", "inv-1", "registry fetch failed: Connection refused"),
        _event(2, 0.01, "inventory", "inv-1", "unable to refresh its cache! will be retried in 30 seconds"),
        _event(3, answered_at, "inventory", "inv-1", "registration status: 204", level="INFO"),
    ]
    assert (_healed(retry_worked, lines, 5.0) == {"ev-1", "ev-2"}) is healed


@pytest.mark.parametrize("line", [
    "The operation will be retried after 0ms.", "Retrying in 5s", "control falling back to seed hosts", "tx retry attempt=1",
    "upload failed (attempt 1/5)", "Application presence exited: :stopped", "Shutting down on SIGTERM", "draining node-3",
    "worker terminated by signal=TERM",
])
def test_the_stems_that_spare_a_search_are_held_by_every_line_it_matches(line):
    """The literal pre-tests (issue 37.3) decide what the searches alone decided, on lines they match."""
    from pipeline.incidents import expected
    from pipeline.incidents.recovery import _AN_ATTEMPT
    from pipeline.incidents.line_names import holds_any
    lowered = line.lower()
    if expected._RETRY_ANNOUNCED.search(line) or _AN_ATTEMPT.search(line):
        assert holds_any(lowered, expected._RETRY_STEMS)
    if expected._STOPPING.search(line):
        assert holds_any(lowered, expected._STOP_STEMS)
    assert expected._RETRY_ANNOUNCED.search(line) or _AN_ATTEMPT.search(line) or expected._STOPPING.search(line)
