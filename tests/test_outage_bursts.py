"""One outage, one incident (issue 35.1, session 48): a host named as a quoted resource by one line and as a URL's host by another is one
name; a client's product and version (`"curl/8.5.0"`) names no place. The lines are written here."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pipeline.incidents import line_names
from pipeline.state import LogEvent
from tests.support import events_of, incidents_by_first_seen

T0 = datetime(2026, 12, 6, 9, 0, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str, *, level: str = "ERROR",
           **fields: object) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=level, message=message, source=f"{service}.log", position=f"{service}.log@{n}",
                    fields=dict(fields))


def _incident_of(engine) -> dict[str, str]:
    return {e: i["incident_id"] for i in incidents_by_first_seen(engine) for e in events_of(engine, i["incident_id"])}


def test_a_checkers_url_and_a_proxys_quoted_host_name_one_site(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "edge", "edge-3", '2026/12/06 09:00:00 [error] 12#12: *88 connect() failed (111: Connection'
               ' refused) while connecting to upstream, client: 192.0.2.4, server: portal.acme.test, request: "GET /'
               ' HTTP/1.1", upstream: "http://10.1.1.5:8080/", host: "portal.acme.test"'),
        _event(2, 12.0, "synthetics", "probe-eu-1", "check home FAILED https://portal.acme.test/ answered 502"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]


def test_a_clients_product_and_version_is_no_resource():
    event = _event(1, 0.0, "edge", "edge-3", '192.0.2.4 - - "GET /a HTTP/1.1" 503 10 "-" "curl/8.5.0" agent=HTTPie/3.2.2')
    assert not {n for n in line_names.named_things(event) if n.startswith("res:")}


def test_a_spent_retry_budget_is_a_reaction_and_a_rate_limit_is_a_cause():
    from pipeline.incidents.leading import CAUSE, SYMPTOM, rank

    assert rank(_event(1, 0.0, "feeder", "feeder-1", "retry 5 exhausted for 40 items, dropping them")) == SYMPTOM
    assert rank(_event(2, 0.0, "feeder", "feeder-1", "write refused by provider: request rate exceeded")) == CAUSE
    assert rank(_event(3, 0.0, "feeder", "feeder-1", "bulk insert throttled by the store")) == CAUSE


def test_the_warning_of_the_service_its_callers_name_leads_though_it_wrote_no_error(engine):
    warning = _event(1, 0.0, "render", "render-1", "handler convert held the event loop for 3.2 s", level="WARN")
    engine.incidents.store_batch([
        warning,
        _event(2, 1.0, "proxy", "proxy-1", 'upstream timed out while reading response header from upstream,'
               ' upstream: "http://render.svc:8000/convert"'),
        _event(3, 2.0, "studio", "studio-1", "socket closed", reason="ping timeout",
               url="ws://render.tools.svc.cluster.local:8000/live"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert outage["leader"]["event_id"] == "ev-1"


def test_a_service_a_callers_error_says_as_a_word_joins_it_whichever_is_read_first(engine):
    engine.incidents.store_batch([
        # the caller's error, read first, says the callee's service as a word in its own layout
        _event(1, 5.0, "balancer", "lb-2", "backend check failed target=ledger@swarm answered 503"),
        _event(2, 1.0, "ledger", "ledger-1", "snapshot load failed: header magic does not match"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]


def test_when_no_error_names_a_cause_the_earliest_leads_though_it_reads_as_a_symptom(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "relay", "relay-3", "publish to 'audit-log' timed out after 30 s"),
        _event(2, 20.0, "intake", "intake-1", "intake paused: outbox for 'audit-log' full"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert outage["leader"]["event_id"] == "ev-1"
