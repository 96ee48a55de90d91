"""The callee's own lines wherever they were written (issue 36, end to end, session 55): the analyst reads the problem
lines of a service its incident's errors name (pipeline/analyst/callee_lines.py), but the log window held only the
incident's own service and hosts, so a callee grouped into its own incident on its own host was never read. Retrieval
now also fetches, up to the evidence's last problem line, the lines of the services the evidence's problem lines name
(`callee_lines.named_callees`); a service named only in part, the evidence's own, or none named fetch nothing."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from pipeline.analyst.callee_lines import NAMED_MAX, callee_lines, named_callees
from pipeline.engine import nodes
from pipeline.errors import IncidentNotFound
from pipeline.state import IncidentState, LogEvent

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def _event(n: int, service: str, host: str, level: str | None, message: str, seconds: int) -> LogEvent:
    return LogEvent(event_id=f"e{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host, level=level,
                    message=message)


_CALLERS = [_event(1, "billing", "billing-1", "ERROR", "POST http://ledger-writer.prod:8080/entries failed: 503", 10),
            _event(2, "billing", "billing-1", "ERROR", "POST http://ledger-writer.prod:8080/entries failed: 503", 14)]


def test_a_service_the_errors_name_is_fetched_up_to_their_last_problem_line():
    assert named_callees(_CALLERS, ["billing", "ledger-writer", "ledger", "writer-api"]) == [
        ("ledger-writer", _CALLERS[1].time), ("ledger", _CALLERS[1].time)]


def test_near_misses_fetch_nothing():
    # named in part only (every word of the name must start a word of the errors), the evidence's own service
    assert named_callees(_CALLERS, ["ledger-reader", "billing", "writer-api", ""]) == []
    # the errors name it, but only context lines (INFO) are the evidence's: no problem line names anything
    quiet = [e.model_copy(update={"level": "INFO"}) for e in _CALLERS]
    assert named_callees(quiet, ["ledger-writer"]) == []
    # a line listing a fleet names no one callee: at most NAMED_MAX are fetched
    fleet = [_event(3, "gw", "gw-1", "ERROR", " ".join(f"svc{c}" for c in "abcdefgh") + " all failed", 5)]
    assert len(named_callees(fleet, [f"svc{c}" for c in "abcdefgh"])) == NAMED_MAX


class _Records:
    """The records store as retrieval reads it: the window by service and hosts, the incidents' services."""

    def __init__(self, events: list[LogEvent]):
        self.events = events
        self.asked: list[str] = []

    def log_window(self, *, service, start, end, hosts=(), limit=60):
        self.asked.append(service)
        return [e for e in self.events if (e.service == service or e.host in set(hosts)) and start <= e.time <= end][:limit]

    def query(self, sql, params=()):
        assert "DISTINCT service FROM incidents" in sql
        return [{"service": s} for s in sorted({e.service for e in self.events})]

    def incident_fields(self, incident_id, *columns):
        raise IncidentNotFound(incident_id)


def test_retrieval_brings_the_named_callees_lines_from_another_host_and_the_analyst_reads_them():
    callee = _event(5, "ledger-writer", "lw-7", "FATAL", "config: required key LEDGER_DSN missing value", 2)
    late = _event(6, "ledger-writer", "lw-7", "ERROR", "config: required key LEDGER_DSN missing value", 30)
    bystander = _event(7, "search", "search-2", "ERROR", "index rebuild failed", 3)
    records = _Records([*_CALLERS, callee, late, bystander])
    state = IncidentState(incident_id="INC-1", service="billing", evidence=_CALLERS)
    window = nodes.retrieval(state, SimpleNamespace(context=SimpleNamespace(records=records)))["log_window"]
    ids = [e.event_id for e in window]
    # the callee's line said before the callers' last error, not after it; no service the errors do not name
    assert "e5" in ids and "e6" not in ids and "e7" not in ids
    assert records.asked.count("ledger-writer") == 1 and "search" not in records.asked
    # ... and the analyst's reading of the callee's own lines now holds it
    assert [e.event_id for e in callee_lines(state.model_copy(update={"log_window": window}))] == ["e5"]


def test_without_a_named_callee_the_window_is_the_services_and_hosts_as_before():
    records = _Records([*_CALLERS, _event(7, "search", "search-2", "ERROR", "index rebuild failed", 3)])
    state = IncidentState(incident_id="INC-1", service="billing", evidence=_CALLERS)
    window = nodes.retrieval(state, SimpleNamespace(context=SimpleNamespace(records=records)))["log_window"]
    assert {e.event_id for e in window} == {"e1", "e2"} and records.asked == ["billing"]


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
