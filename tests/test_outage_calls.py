"""One outage across its calls (issue 35.1): a caller's error naming the failing service by any
spelling of its name (a cluster DNS name, a URL host, urllib3's `host='billing', port=8080`, a
compose replica's or a pod's name) joins that service's errors within the burst window; the
leader is the called side's earliest error, not a caller's; two incidents the batch opened that
one error ties are one; an error its own writer says came back from (a reconnect, a retry that
worked) opens nothing. Each tie needs the window and a named thing."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from pipeline.state import LogEvent
from pipeline.unattended import outage_bed
from tests.support import BOTH_BACKENDS, STORED_IDS, events_of, incidents_by_first_seen

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
BED = Path(__file__).resolve().parent / "data" / "outages" / "open"


def _event(n: int, seconds: float, service: str, host: str, message: str, *, level: str = "ERROR",
           **fields: str) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=level, message=message, source=f"{service}.log", position=f"{service}.log@{n}",
                    fields=dict(fields))




def _billing_down(gap: float = 0.0) -> list[LogEvent]:
    """billing's pod fails; its callers name it by its cluster DNS name and by urllib3's host/port."""
    pod = "billing-7c9d5f6b8-q2xlm"
    return [
        _event(1, 1.0, "billing", pod, "Exception in worker process"),
        _event(2, 1.2, "billing", pod, "Reason: Worker failed to boot."),
        _event(3, 4.0 + gap, "cart", "cart-1", "request to http://billing.shop.svc.cluster.local:8080/v1/quotes failed,"
               " reason: connect ECONNREFUSED 172.20.0.6:8080"),
        _event(4, 5.0 + gap, "web", "web-5b7f9c4d8-zt8wn", "HTTPConnectionPool(host='billing', port=8080): Max retries"
               " exceeded with url: /v1/invoices (Caused by NewConnectionError('Failed to establish a new connection:"
               " [Errno 111] Connection refused'))"),
    ]


@BOTH_BACKENDS
def test_callers_naming_the_failing_service_by_any_spelling_are_its_incident_led_by_its_first_error(engine):
    engine.incidents.store_batch(_billing_down(), cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert events_of(engine, outage["incident_id"]) == {"ev-1", "ev-2", "ev-3", "ev-4"}
    # the callers' refusals name a cause; billing's first error does not, and still leads: its side is the cause
    assert outage["leader"]["event_id"] == "ev-1" and outage["leader"]["service"] == "billing"
    assert "billing is the service the incident's other errors name" in outage["leader"]["reason"]


@BOTH_BACKENDS
def test_the_callee_leads_when_its_callers_are_read_first(engine):
    down = _billing_down()
    engine.incidents.store_batch(down[2:], cursor=None)  # the callers' logs first, in their own batch
    engine.incidents.store_batch(down[:2], cursor=None)
    # billing's first error joins the callers' incident (they name it) and leads it though read last;
    # its second joins its first (one burst of one writer)
    (outage,) = incidents_by_first_seen(engine)
    assert events_of(engine, outage["incident_id"]) == {"ev-1", "ev-2", "ev-3", "ev-4"}
    assert outage["leader"]["event_id"] == "ev-1" and outage["event_count"] == 4


def test_a_caller_naming_another_service_or_beyond_the_window_stays_apart(engine):
    down = _billing_down()
    other = _event(3, 4.0, "cart", "cart-1", "request to http://ledger.shop.svc.cluster.local:8080/v1/quotes failed,"
                   " reason: connect ECONNREFUSED 172.20.0.9:8080")
    engine.incidents.store_batch([*down[:2], other], cursor=None)
    assert len(incidents_by_first_seen(engine)) == 2  # ledger is not billing: nothing named in common
    late = _billing_down(gap=3600.0)[3:]  # an hour later: beyond the burst window
    engine.incidents.store_batch(late, cursor=None)
    assert len(incidents_by_first_seen(engine)) == 3
    # an error naming both billing and ledger within the window joins one; incidents of earlier batches
    # (a reviewer may have seen them) are never merged by it
    engine.incidents.store_batch([_event(10, 6.0, "ops", "ops-1", "ledger and billing both failing: see"
                                         " ledger.shop.svc.cluster.local:8080 and billing.shop.svc.cluster.local:8080")],
                                 cursor=None)
    assert len(incidents_by_first_seen(engine)) == 3 and sum(r["event_count"] for r in incidents_by_first_seen(engine)) == 5


@BOTH_BACKENDS
def test_an_error_its_writer_says_came_back_from_opens_nothing_and_one_after_the_last_recovery_does(engine):
    host = "shop-1"
    watchdog = "i.l.core.protocol.ConnectionWatchdog"
    events = [
        _event(1, 0.4, watchdog, host, "Cannot reconnect to [redis-cache:6379]: Connection refused: "
               "redis-cache/10.0.7.4:6379"),
        _event(2, 1.4, watchdog, host, "Reconnected to redis-cache/<unresolved>:6379", level="INFO"),
        # a different destination came back: the mail relay's failure is still an incident
        _event(3, 2.0, "mailer", host, "Could not send receipt for order 4411: Connection refused (mail-relay:25)"),
        _event(4, 3.0, "mailer", host, "Connected to smtp-backup:25", level="INFO"),
    ]
    engine.incidents.store_batch(events, cursor=None)
    assert [r["service"] for r in incidents_by_first_seen(engine)] == ["mailer"]
    stored = {r["event_id"] for r in engine.records.query(f"SELECT event_id FROM {STORED_IDS}")}
    assert stored == {"ev-1", "ev-2", "ev-3", "ev-4"}  # kept as context, not dropped
    # refused again after it came back, with no recovery after: an incident
    again = _event(5, 30.0, watchdog, host, "Cannot reconnect to [redis-cache:6379]: Connection refused: "
                   "redis-cache/10.0.7.4:6379")
    engine.incidents.store_batch([again, _event(6, 10.0, watchdog, host, "Reconnected to redis-cache:6379",
                                                level="INFO")], cursor=None)
    assert sorted(r["service"] for r in incidents_by_first_seen(engine)) == ["i.l.core.protocol.ConnectionWatchdog", "mailer"]


@pytest.mark.parametrize("name", ["s45_compose_billing_boot_refused", "s45_k8s_redis_oom_callers",
                                  "s45_healthy_reconnect_recovered"])
def test_the_s45_scenarios_are_one_incident_led_by_the_callee_or_none(name):
    (scenario,) = [s for s in outage_bed.scenarios(BED) if s.name == name]
    for order in outage_bed.ORDERS:
        result = outage_bed.run(scenario, order=order)
        if scenario.healthy:
            assert result["incidents"] == 0, order
            continue
        (cause,) = result["causes"]
        assert (cause["incidents"], cause["unheld"], cause["leader_right"]) == (1, 0, True), (order, cause)
        assert result["merged"] == []


def test_a_request_cancelled_by_its_caller_opens_nothing_and_a_deadline_does(engine):
    """Go's context.Canceled, gRPC's Canceled, PostgreSQL's query_canceled: the user typed on, the
    client went away; nothing failed. A deadline exceeded or a statement timeout is a failure."""
    engine.incidents.store_batch([
        _event(1, 1.0, "search", "search-1", "search failed", err="context canceled"),
        _event(2, 1.1, "postgres", "db-1", "canceling statement due to user request"),
        _event(3, 2.0, "search", "search-1", "rpc error: code = Canceled desc = context canceled"),
    ], cursor=None)
    assert incidents_by_first_seen(engine) == []
    engine.incidents.store_batch([
        _event(4, 9.0, "search", "search-1", "search failed", err="context deadline exceeded"),
        _event(5, 9.5, "postgres", "db-1", "canceling statement due to statement timeout"),
    ], cursor=None)
    assert len(incidents_by_first_seen(engine)) == 2


def test_the_called_services_own_warning_before_its_exit_leads_its_callers_refusals(engine):
    """Redis warns that its append-only file is bad and exits; the worker and beat, which name it
    (`broker:6379`, a sentence's full stop after the port), are refused: the warning leads."""
    warning = _event(1, 0.0, "broker", "broker-1", "Bad file format reading the append only file appendonly.aof",
                     level="WARN")
    exited = _event(2, 0.1, "broker", "broker-1", "exited with code 1")
    worker = _event(3, 1.0, "worker", "worker-1", "consumer: Cannot connect to redis://broker:6379/0: Error 111"
                    " connecting to broker:6379. Connection refused.")
    beat = _event(4, 5.0, "beat", "beat-1", "beat: Connection error: Error 111 connecting to broker:6379."
                  " Connection refused.. Trying again in 2.0 seconds...")
    engine.incidents.store_batch([warning, exited, worker, beat], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert events_of(engine, outage["incident_id"]) == {"ev-2", "ev-3", "ev-4"}
    assert outage["leader"]["event_id"] == "ev-1" and "a warning it wrote before its errors" in outage["leader"]["reason"]


def test_a_process_id_or_field_label_before_a_colon_ties_nothing_a_bare_host_after_to_does(engine):
    """gunicorn's `Worker (pid:24)`, HikariCP's `[size:50; busy:50]`, a class and its line are a
    logger's labels with their values, not host:port: two unrelated crashes of one pid number stay
    apart; a compose service named bare where a client writes its address (`Connection to db:5432`)
    still ties its callers."""
    engine.incidents.store_batch([
        _event(1, 1.0, "reports", "reports-1", "[CRITICAL] WORKER TIMEOUT (pid:24)"),
        _event(2, 2.0, "search", "search-1", "index merge aborted: shard 3 checksum mismatch (pid:24)"),
        _event(3, 3.0, "ledger", "ledger-1", "Connection is not available, request timed out after 30000ms"
               " [size:50; busy:50; idle:0; lastwait:30000] at LedgerRepo:450"),
        _event(4, 4.0, "quotes", "quotes-1", "sync failed [size:50; busy:50] at QuoteRepo:450"),
    ], cursor=None)
    assert len(incidents_by_first_seen(engine)) == 4
    engine.incidents.store_batch([
        _event(5, 600.0, "orders", "orders-1", "org.postgresql.util.PSQLException: Connection to db:5432 refused."),
        _event(6, 601.0, "billing", "billing-1", "charge failed: dial tcp db:5432: connect: connection refused"),
    ], cursor=None)
    assert len(incidents_by_first_seen(engine)) == 5


def _one_incident(engine) -> set[str]:
    (outage,) = incidents_by_first_seen(engine)
    return events_of(engine, outage["incident_id"])


def test_a_server_written_port_at_host_is_that_hosts_port(engine):
    """Session 49: a license manager's clients write its server `28000@licsrv` (FlexNet's, RLM's spelling): the
    license server's own exit on host `licsrv` and their checkouts are one outage; another server stays apart."""
    engine.incidents.store_batch([
        _event(1, 0.0, "vendord", "licsrv", "vendor daemon exited with status 7 (bad hostid)"),
        _event(2, 4.0, "cad-node", "cad-3", "checkout of feature SOLVER failed: error -15 (server 28000@licsrv)"),
        _event(3, 5.0, "cad-node", "cad-4", "checkout of feature MESHER failed: error -15 (server 28000@licsrv)"),
    ], cursor=None)
    assert _one_incident(engine) == {"ev-1", "ev-2", "ev-3"}
    engine.incidents.store_batch([
        _event(4, 30.0, "cam-node", "cam-1", "token grant failed: error -96 (server 5053@tokensrv)"),
    ], cursor=None)
    assert len(incidents_by_first_seen(engine)) == 2


def test_a_dotted_host_with_its_port_and_without_is_one_name(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "edge-lb", "lb-logs", 'POST https://rates.partner.test:443/v2/convert HTTP/1.1" 503'),
        _event(2, 3.0, "treasury", "tr-1", "convert call failed: 503 Service Unavailable (rates.partner.test)"),
    ], cursor=None)
    assert _one_incident(engine) == {"ev-1", "ev-2"}


def test_a_caller_saying_the_failing_services_name_in_words_is_its_incident(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "tax-engine", "tax-1", "panic: runtime error: index out of range [3] with length 3"),
        _event(2, 2.0, "cart", "cart-2", "tax engine call failed: 502 Bad Gateway"),
    ], cursor=None)
    assert _one_incident(engine) == {"ev-1", "ev-2"}
    engine.incidents.store_batch([
        # one word in common (`tax`) is no name said
        _event(3, 40.0, "ledger", "ledger-1", "tax rounding check failed for batch 7"),
    ], cursor=None)
    assert len(incidents_by_first_seen(engine)) == 2


def test_an_error_joining_its_pattern_carrying_another_incidents_trace_id_makes_them_one(engine):
    """A gateway's 503 of one request (its trace id written as a JSON pair) joins its pattern's incident, and
    the incident a backend opened for that same request is the same outage."""
    trace_a, trace_b = "5be1a29cf7d04e0e8d1f4c2b9a7e6d30", "9c3f7a2e1b6d4f80a5e2c7d9b1f3e604"
    engine.incidents.store_batch([
        _event(1, 0.0, "gateway", "gw-1", '{"status":503,"path":"/v1/carts/41","trace_id":"%s"}' % trace_a),
        _event(2, 1.0, "carts", "carts-1", f"load cart failed: pool timeout trace_id={trace_a}"),
        _event(3, 2.0, "pricing", "pricing-1", f"quote failed: upstream reset trace_id={trace_b}"),
        _event(4, 3.0, "gateway", "gw-1", '{"status":503,"path":"/v1/quotes/77","trace_id":"%s"}' % trace_b),
    ], cursor=None)
    assert _one_incident(engine) == {"ev-1", "ev-2", "ev-3", "ev-4"}


def test_a_service_named_with_its_kind_suffix_is_the_service_a_url_names(engine):
    """`ledger-svc` (the word saying it is a service) and `https://ledger.bank.test/...` name one service."""
    engine.incidents.store_batch([
        _event(1, 0.0, "scheduler", "sched", "service ledger-svc: task 9f2 stopped: CannotPullContainerError"),
        _event(2, 6.0, "edge-lb", "lb-logs", '"GET https://ledger.bank.test/v1/balance HTTP/1.1" 503'),
    ], cursor=None)
    assert _one_incident(engine) == {"ev-1", "ev-2"}


def test_a_qualified_table_and_its_own_name_are_one_name(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "scheduler", "sch-1", "flow=nightly_rollup step=load: run 88 ended in state FAILED"),
        _event(2, 5.0, "exporter", "exp-1", "no rows for 2026-11-30 in lake.nightly_rollup, nothing exported"),
    ], cursor=None)
    assert _one_incident(engine) == {"ev-1", "ev-2"}


def test_a_queue_named_in_a_field_of_its_own_ties_the_errors_naming_it(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "matching", "match-0", "no consumer polled recently", **{"task-queue-name": "invoice-render"}),
        _event(2, 9.0, "history", "hist-2", "task expired before start", **{"task-queue-name": "invoice-render"}),
    ], cursor=None)
    assert _one_incident(engine) == {"ev-1", "ev-2"}


def test_a_backend_error_of_a_request_whose_gateway_503_joined_its_pattern_earlier_is_that_incident(engine):
    """The gateway's log read first: its second 503 joins its pattern's incident, and keeps its trace id, so the
    backend's error of that same request, read later, is the same outage."""
    trace_a, trace_b = "0e4f1b2c3d5a69788a9b0c1d2e3f4a5b", "6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d"
    engine.incidents.store_batch([
        _event(1, 0.0, "gateway", "gw-1", '{"status":503,"path":"/v1/carts/41","trace_id":"%s"}' % trace_a),
        _event(2, 3.0, "gateway", "gw-1", '{"status":503,"path":"/v1/quotes/77","trace_id":"%s"}' % trace_b),
        _event(3, 2.0, "pricing", "pricing-1", f"quote failed: upstream reset trace_id={trace_b}"),
    ], cursor=None)
    assert _one_incident(engine) == {"ev-1", "ev-2", "ev-3"}


def test_a_writers_give_up_naming_the_reason_its_earlier_error_said_is_that_errors_incident(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "feed-sync", "fs-1", "push to https://partner.test/feeds failed: SSLError: certificate verify"
               " failed: certificate has expired"),
        _event(2, 10.0, "feed-sync", "fs-1", "giving up on batch 12 after 3 attempts (certificate has expired)"),
        # another service giving the same reason met its own failure
        _event(3, 11.0, "mailer", "mail-1", "giving up on message 9 after 3 attempts (certificate has expired)"),
    ], cursor=None)
    assert {frozenset(events_of(engine, r["incident_id"])) for r in incidents_by_first_seen(engine)} \
        == {frozenset({"ev-1", "ev-2"}), frozenset({"ev-3"})}


def test_a_status_constant_two_failures_both_say_names_no_service(engine):
    """`DEADLINE_EXCEEDED` said by two services' unrelated errors is the status of each, no service they share."""
    engine.incidents.store_batch([
        _event(1, 0.0, "search", "search-1", "query failed: rpc error: code = DEADLINE_EXCEEDED from index shard"),
        _event(2, 2.0, "billing", "billing-1", "charge failed: rpc error: code = DEADLINE_EXCEEDED from ledger"),
    ], cursor=None)
    assert len(incidents_by_first_seen(engine)) == 2


def test_a_named_instance_host_backslash_instance_is_that_hosts_server(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "mssql", "dbhost07", "Error: 701, Severity: 17, State: 123. There is insufficient system memory"
               " in resource pool 'default' to run this query."),
        _event(2, 3.0, "billing-app", "bill-2", r"open connection failed: Data Source=DBHOST07\LEDGER;"
               " Execution Timeout Expired"),
        # a login's domain before its user names no server
        _event(3, 4.0, "portal", "portal-1", r"Login failed for user 'DBHOST07\guest' on portal sign-in"),
    ], cursor=None)
    assert {frozenset(events_of(engine, r["incident_id"])) for r in incidents_by_first_seen(engine)} \
        == {frozenset({"ev-1", "ev-2"}), frozenset({"ev-3"})}


def test_a_host_and_its_address_as_java_writes_them_are_both_that_server(engine):
    """`broker-2/10.4.0.12:9092` (InetSocketAddress) names the host `broker-2` and the address another client dials."""
    engine.incidents.store_batch([
        _event(1, 0.0, "ingest", "ingest-1", "Connection to node 2 (broker-2/10.4.0.12:9092) could not be established."),
        _event(2, 2.0, "audit", "audit-1", "dial tcp 10.4.0.12:9092: connect: connection refused"),
        _event(3, 3.0, "broker", "broker-2", "Fatal error during broker startup. Prepare to shutdown"),
    ], cursor=None)
    assert _one_incident(engine) == {"ev-1", "ev-2", "ev-3"}
