"""Which line leads an incident, read by what each line states (CONTRACT §2's leader, session 55): a field's name is no
statement (`internal_log_rate_limit=true`, `"pool_size": 20`), a line that says only what failed speaks through the
first line of the trace it carries whatever its exception's class is called, and a denial said by its status (401,
403) names a cause as a 5xx names a symptom. These read the leader only: the grouping rules' `rank` is unchanged.
The wordings are written here in the manner of those programs (Vector, Spring WebClient, cert-manager), not copied
from a bed."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.incidents.leading import CAUSE, NEUTRAL, Leader, leader_rank, rank
from pipeline.state import LogEvent
from tests.support import incidents_by_first_seen

T0 = datetime(2026, 12, 7, 9, 0, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str, **more) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=more.pop("level", "ERROR"), message=message, source=f"{service}.log",
                    position=f"{service}.log@{n}", **more)


@pytest.mark.parametrize("message", [
    'Service call failed. No retries left. error="Response failed." request_id=88120 internal_log_rate_limit=true',
    '{"msg": "flush failed", "pool_size": 20, "batch": 4096}',
    "ingest stopped: stage=sending oom_score_adj=-999",
])
def test_a_fields_name_is_no_statement(message):
    event = _event(1, 0, "shipper", "shipper-0", message)
    assert rank(event) == CAUSE  # (the grouping rules read the words wherever they stand: unchanged)
    assert leader_rank(event) != CAUSE


@pytest.mark.parametrize("message", [
    'flush failed err="rate limit exceeded for sink" internal_log_rate_limit=true',
    '{"msg": "flush failed", "error": "connection pool exhausted", "pool_size": 20}',
    "ingest stopped: connection refused (stage=sending)",
])
def test_near_miss_a_fields_value_still_states_the_cause(message):
    assert leader_rank(_event(1, 0, "shipper", "shipper-0", message)) == CAUSE


def test_a_header_speaks_through_its_traces_first_line_whatever_the_class_is_called():
    failed = _event(1, 0, "integrations", "int-1", "GET https://api.vendor.example/v3/items failed",
                    exception="org.springframework.web.reactive.function.client.WebClientResponseException",
                    stack="org.springframework.web.reactive.function.client.WebClientResponseException$Forbidden: 403"
                          " Forbidden from GET https://api.vendor.example/v3/items, body={\"message\":\"API rate limit"
                          " exceeded for installation 42.\"}\n\tat reactor.core.publisher.Mono.block(Mono.java:1710)")
    assert rank(failed) == NEUTRAL  # (the class's name ends in neither Exception nor Error: the grouping rules skip it)
    assert leader_rank(failed) == CAUSE


def test_near_miss_a_traces_first_line_that_says_a_symptom_names_no_cause():
    failed = _event(1, 0, "integrations", "int-1", "GET https://api.vendor.example/v3/items failed",
                    exception="org.springframework.web.reactive.function.client.WebClientResponseException",
                    stack="org.springframework.web.reactive.function.client.WebClientResponseException$ServiceUnavailable:"
                          " 503 Service Unavailable from GET https://api.vendor.example/v3/items (no healthy pool member)"
                          "\n\tat reactor.core.publisher.Mono.block(Mono.java:1710)")
    assert leader_rank(failed) == NEUTRAL


@pytest.mark.parametrize("message", [
    "\"propagation check failed\" err=\"wrong status code '403', expected '200'\" type=\"HTTP-01\"",
    "token exchange failed: https://idp.example/token responded 401",
])
def test_a_denial_said_by_its_status_names_a_cause(message):
    assert leader_rank(_event(1, 0, "issuer", "issuer-0", message)) == CAUSE


@pytest.mark.parametrize("message", [
    "lookup of https://cdn.example/a.png failed: responded 404",
    "import failed after 403 rows",
    "order 401 failed to ship",
])
def test_near_miss_no_denial_without_its_status(message):
    assert leader_rank(_event(1, 0, "issuer", "issuer-0", message)) == NEUTRAL


def test_a_throttle_said_in_a_trace_leads_the_same_clients_later_one_liner(engine):
    # one client's two failures against one vendor host, 2.5 s apart: the first says only what failed, its trace says
    # the vendor's limit; the second says it in one line. The earliest line stating the cause leads.
    engine.incidents.store_batch([
        _event(1, 1.0, "integrations", "int-1", "GET https://api.vendor.example/v3/items?page=2 failed",
               exception="org.springframework.web.reactive.function.client.WebClientResponseException",
               stack="org.springframework.web.reactive.function.client.WebClientResponseException$Forbidden: 403"
                     " Forbidden from GET https://api.vendor.example/v3/items?page=2, body={\"message\":\"API rate"
                     " limit exceeded for installation 42.\"}\n\tat reactor.core.publisher.Mono.block(Mono.java:1710)"),
        _event(2, 3.5, "integrations", "int-1", "GET https://api.vendor.example/v3/orders/7/status failed: 403 Forbidden"
               " from GET https://api.vendor.example/v3/orders/7/status, body={\"message\":\"API rate limit exceeded"
               " for installation 42.\"}"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert outage["leader"]["event_id"] == "ev-1"
    assert outage["leader"]["rank"] == "cause"


def test_a_clients_field_named_for_a_limit_does_not_lead_the_servers_earlier_line():
    # the server states its own failure first (in words that also explain it: `slower`, a symptom's); its client's later
    # line carries a field named for its own log's rate limit, which states nothing: the earliest leads
    server = _event(1, 1.0, "warehouse", "wh-1", "executeQuery: Code: 252. DB::Exception: Too many parts (300). Merges"
                    " are processing significantly slower than inserts. (in query: INSERT INTO events.raw FORMAT Native)")
    client = _event(2, 4.0, "shipper", "shipper-0", "sink{component_id=warehouse_events}: Service call failed. No retries"
                    " or retries exhausted. error=\"Response failed.\" request_id=881 internal_log_rate_limit=true")
    leaders = [Leader.of(client, "p-client"), Leader.of(server, "p-server")]
    assert min(leaders, key=Leader.key).event_id == "ev-1"
    assert rank(client) == CAUSE  # (what the grouping rules read is unchanged)


@pytest.mark.parametrize("message", [
    "Worker (pid:31) was sent SIGKILL! Perhaps out of memory?",
    "worker 2 (pid: 88) died, killed by signal 9 :( trying respawn ...",
    "Process 'render-worker-1' pid:5120 exited with 'signal 9 (SIGKILL)'",
])
def test_a_signal_its_writer_sent_its_worker_and_a_guess_asked_state_no_cause(message):
    # a supervisor's reaction to why (its worker's timeout, a harakiri, a time limit: its line before says it)
    assert leader_rank(_event(1, 0, "app", "app-1", message)) != CAUSE


@pytest.mark.parametrize("message", [
    "Out of memory: Killed process 4242 (java) total-vm:8123456kB, anon-rss:4012345kB",
    "Worker (pid:31) was sent SIGKILL: out of memory",
    "Container killed by YARN for exceeding physical memory limits",
    'container "api" terminated, reason: OOMKilled, exit code 137',
])
def test_near_miss_a_kill_that_says_why_still_names_the_cause(message):
    assert leader_rank(_event(1, 0, "app", "app-1", message)) == CAUSE


def test_a_workers_timeout_leads_the_kill_its_supervisor_logs_with_it(engine):
    # one writer, one instant: the timeout first, then the kill it caused (with a guess at another cause)
    engine.incidents.store_batch([
        _event(1, 31.0, "reports", "reports-1", "WORKER TIMEOUT (pid:41)", level="FATAL"),
        _event(2, 31.0, "reports", "reports-1", "Worker (pid:41) was sent SIGKILL! Perhaps out of memory?"),
        _event(3, 62.0, "reports", "reports-1", "WORKER TIMEOUT (pid:42)", level="FATAL"),
        _event(4, 62.0, "reports", "reports-1", "Worker (pid:42) was sent SIGKILL! Perhaps out of memory?"),
    ], cursor=None)
    leaders = [i["leader"]["event_id"] for i in incidents_by_first_seen(engine)]
    assert leaders and leaders[0] == "ev-1"
