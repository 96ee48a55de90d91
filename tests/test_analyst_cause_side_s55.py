"""Causes read on the cause side (issue 36, session 55): a state said first on the callers' own host is behind their
failures whatever peers they name (cause_side.state_behind); a refusal whose every line states a reason that is no
refusal or close is not named confidently (offline._reason_stated); a snake_case field's name is not read as the
line's words (ideas._FIELD_NAME); a length past its stated threshold counts its resource at its bound
(specifics.counted_at_max). Each with its near misses. Lines are this file's own."""
from __future__ import annotations

import pytest

from pipeline.state import IncidentState


# The machine's own state (session 55): a state named by the ideas of its cause (no signature), said first by another
# writer on the very host a caller's line was written on, is behind their timeouts whatever peer each names (a
# kernel's connection-tracking table full, then every process on that node timing out on its calls); said on another
# host, after the callers' first line, or by a caller itself, the timeout stays named (cause_side.state_behind).
_TABLE_FULL = "kernel: nf_conntrack: nf_conntrack: table full, dropping packet"
_GO_TIMEOUT = ('carrier rates failed: Get "http://rates.shipping.svc:8080/v1/rates": dial tcp 10.100.9.3:8080: '
               "i/o timeout (Client.Timeout exceeded while awaiting headers)")


def _node_rca(offline_analyst, state_line: dict):
    from pipeline.knowledge.retrieval import find_similar
    from tests.support import analyst_events

    callers = [{"service": "quotes", "host": "node-1", "level": "ERROR", "message": _GO_TIMEOUT,
                "time": f"2026-01-05T08:00:1{n}Z"} for n in (2, 5, 8)]
    events = sorted(analyst_events(state_line, *callers), key=lambda e: e.time)
    state = IncidentState(incident_id="INC-t", service="quotes", evidence=events)
    return offline_analyst.rca(state.model_copy(update={"similar_docs": find_similar(offline_analyst.kb, events)}))


def test_a_state_said_first_on_the_callers_own_host_is_behind_their_timeouts(offline_analyst):
    kernel = {"service": "kernel", "host": "node-1", "level": "ERROR", "message": _TABLE_FULL, "time": "2026-01-05T08:00:03Z"}
    rca = _node_rca(offline_analyst, kernel)
    assert rca.category == "resource_exhaustion" and rca.confidence <= 0.45


@pytest.mark.parametrize("change", [
    {"host": "node-2"},                     # another machine's table: the callers name their own peers
    {"time": "2026-01-05T08:00:14Z"},      # said after the callers' first timeout
    {"service": "quotes"},                  # the caller's own words, not another writer's state
])
def test_near_misses_of_the_machines_own_state_leave_the_timeout_named(offline_analyst, change):
    kernel = {"service": "kernel", "host": "node-1", "level": "ERROR", "message": _TABLE_FULL,
              "time": "2026-01-05T08:00:03Z", **change}
    assert _node_rca(offline_analyst, kernel).category == "upstream_timeout"


# A reason stated (session 55): Envoy's local reply `upstream connect error or disconnect/reset before headers` is a
# refusal's or a peer's close only by the reason it states; `reset reason: overflow` (its own circuit breaker) is
# neither, so the refusal it reads as is not named confidently. A refusal's or close's reason keeps it.
def _envoy(reason: str) -> str:
    return ('stock check failed sku=1188 AxiosError: Request failed with status code 503 body="upstream connect error '
            f'or disconnect/reset before headers. {reason}"')


def test_a_reset_whose_stated_reason_is_no_refusal_is_not_named_confidently(offline_analyst):
    from tests.support import THRESHOLD, offline_rca

    rca = offline_rca(offline_analyst, _envoy("reset reason: overflow"), _envoy("reset reason: overflow"))
    assert rca.confidence < THRESHOLD and any("'overflow'" in note for note in rca.notes)


@pytest.mark.parametrize("reasons", [
    ("reset reason: connection failure, transport failure reason: delayed connect error: 111",) * 2,
    ("reset reason: remote reset",) * 2,
    ("reset reason: overflow", "no reason stated"),  # one line carrying the signature states none
])
def test_a_refusals_or_closes_reason_or_a_line_without_one_leaves_the_reset_as_it_was(offline_analyst, reasons):
    from tests.support import offline_rca

    rca = offline_rca(offline_analyst, *(_envoy(r) for r in reasons))
    assert rca.category == "connection_refused" and not any("states its reason" in note for note in rca.notes)


# A field's name is not what a line says (session 55): Vector's `internal_log_rate_limit=true` (whether its own log line
# is rate limited) beside a sink's 500 read as "a dependency limiting the rate of calls"; the ideas read a snake_case
# field's value, not its name. Said in words, or as the value, the idea is still read.
@pytest.mark.parametrize("line, category", [
    ('sink: Not retriable; dropping the request. reason="response status: 500" internal_log_rate_limit=true', None),
    ("sink: dropping the request: rate limit exceeded for this account", "upstream_rate_limited"),
    ("sink: dropping the request err=rate_limit_exceeded", "upstream_rate_limited"),
    ("kv failed err_code=KV:Storage:DiskFull err=disk full", "disk_full"),
])
def test_a_fields_name_is_not_read_as_the_lines_words(line, category):
    from pipeline.analyst.ideas import category_of_line

    assert category_of_line(line) == category


# A measured length past its stated threshold (session 55): `message_queue_len=4120 (threshold 1000)` counts a queue
# past its bound as `CURDEPTH(5000) MAXDEPTH(5000)` counts one at it (specifics.counted_at_max, capacity.py), so a
# mailbox grown past its threshold before its callers time out is named, capped. Below its threshold, or a bound
# that is no length, depth or size (`timeout 30 (limit 60)`), counts nothing.
@pytest.mark.parametrize("text, counted", [
    ("[warning] Chat.RateLimiter message_queue_len=4120 (threshold 1000)", {"1000"}),
    ("outbox queue depth: 912 (limit 500)", {"500"}),
    ("[warning] Chat.RateLimiter message_queue_len=412 (threshold 1000)", set()),
    ("call timeout 30 (limit 60)", set()),
])
def test_a_length_past_its_stated_threshold_is_counted_at_its_bound(text, counted):
    from pipeline.analyst.specifics import counted_at_max

    assert counted_at_max(text) == counted


_CALL = ("GenServer #PID<0.4411.0> terminating\n** (stop) exited in: GenServer.call(Chat.RateLimiter, {:check, "
         "\"user:88121\"}, 5000)\n    ** (EXIT) time out")


def test_a_mailbox_past_its_threshold_before_the_calls_time_out_is_the_backlog(offline_analyst):
    from tests.support import THRESHOLD, offline_rca

    past = {"level": "WARN", "message": "Chat.RateLimiter message_queue_len=4120 (threshold 1000)"}
    rca = offline_rca(offline_analyst, past, _CALL, _CALL)
    assert rca.category == "queue_backlog" and rca.confidence < THRESHOLD
    below = {"level": "WARN", "message": "Chat.RateLimiter message_queue_len=412 (threshold 1000)"}
    assert offline_rca(offline_analyst, below, _CALL, _CALL).category != "queue_backlog"
