"""One outage by its words (issue 35.1, session 46): a server's error text that its clients relay word for
word (PostgreSQL's `FATAL: sorry, too many clients already` inside pgjdbc's `PSQLException`, a
pooler's `no more connections allowed` inside sqlx's error) ties the client's error to the server's
incident though the client names no host; two failures in the same words that each name another
destination stay apart; a logger's class name (`o.s.b.SpringApplication`) is no resource that tells
one failure from another. The wordings are written here in the manner of those libraries."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.state import LogEvent
from tests.support import events_of, incidents_by_first_seen

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str, *, level: str = "ERROR") -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=level, message=message, source=f"{service}.log", position=f"{service}.log@{n}")


def _too_many_clients() -> list[LogEvent]:
    return [
        _event(1, 1.0, "postgres", "pg-main-0", "[48211] FATAL:  sorry, too many clients already"),
        _event(2, 1.8, "orders-api", "orders-api-7c9f-x2k", "HikariPool-1 - Exception during pool initialization."
               " org.postgresql.util.PSQLException: FATAL: sorry, too many clients already"),
        _event(3, 2.1, "orders-api", "orders-api-7c9f-x2k", "o.s.b.SpringApplication : Application run failed"
               " org.springframework.beans.factory.BeanCreationException: Error creating bean with name 'emf'"),
        _event(4, 2.5, "reports", "reports-1", "psycopg2.OperationalError: connection to server at"
               ' "pg-main.db.svc.cluster.local" (10.42.3.7), port 5432 failed: FATAL:  sorry, too many clients already'),
    ]


@pytest.mark.parametrize("order", ["server first", "callers first"])
def test_a_servers_error_relayed_word_for_word_by_its_client_is_the_servers_incident(engine, order):
    events = _too_many_clients()
    if order == "callers first":
        events = [events[3], events[1], events[2], events[0]]
    engine.incidents.store_batch(events, cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    # Spring's `Application run failed` is the same writer's burst: its logger's class names no resource
    # that would set it apart from the database the other caller names
    assert events_of(engine, outage["incident_id"]) == {"ev-1", "ev-2", "ev-3", "ev-4"}
    assert outage["leader"]["event_id"] == "ev-1"


def test_the_same_words_naming_two_databases_are_two_failures(engine):
    engine.incidents.store_batch([
        _event(1, 1.0, "postgres", "pg-orders-0", "[481] FATAL:  sorry, too many clients already"),
        _event(2, 1.5, "orders", "orders-1", "HikariPool-1 - Exception during pool initialization."
               " org.postgresql.util.PSQLException: FATAL: sorry, too many clients already"),
        _event(3, 2.0, "billing", "billing-1", "psycopg2.OperationalError: connection to server at"
               ' "pg-billing.db.svc.cluster.local" (10.42.9.9), port 5432 failed: FATAL:  sorry, too many clients already'),
        _event(4, 2.5, "ledger", "ledger-1", "psycopg2.OperationalError: connection to server at"
               ' "pg-orders.db.svc.cluster.local" (10.42.3.7), port 5432 failed: FATAL:  sorry, too many clients already'),
    ], cursor=None)
    by_event = {e: i["incident_id"] for i in incidents_by_first_seen(engine) for e in events_of(engine, i["incident_id"])}
    assert by_event["ev-2"] == by_event["ev-1"]  # the client that names no host: the server's words
    assert by_event["ev-3"] != by_event["ev-1"]  # another database, in the same words


def test_a_server_writing_to_a_client_that_went_away_opens_nothing_and_a_lost_database_does(engine):
    """Go's net.OpError (`write tcp local->remote: write: broken pipe`): a file server whose mobile
    clients abandon downloads writes from its listening port to their ephemeral ports, nothing broke on
    its side; a client whose own connection to its database breaks writes from an ephemeral port."""
    engine.incidents.store_batch([
        _event(1, 1.0, "files", "files-1", "write tcp 10.3.0.7:8080->10.3.0.2:41822: write: broken pipe"),
        _event(2, 9.0, "files", "files-2", "write tcp 10.3.0.8:8080->10.3.0.2:42001: write: connection reset by peer"),
    ], cursor=None)
    assert incidents_by_first_seen(engine) == []
    engine.incidents.store_batch([
        _event(3, 20.0, "orders", "orders-1", "write tcp 10.0.0.5:53412->10.0.0.9:5432: write: broken pipe"),
    ], cursor=None)
    assert len(incidents_by_first_seen(engine)) == 1


@pytest.mark.parametrize("message, opens", [
    ("http: TLS handshake error from 10.0.0.12:40122: EOF", False),  # a probe closed its handshake
    ("http: TLS handshake error from 10.0.1.19:51840: read: connection reset by peer", False),
    ("http: TLS handshake error from 10.0.0.12:40122: remote error: tls: bad certificate", True),  # a reason
    ("http: TLS handshake error from 10.0.0.12:443: EOF", True),  # not a client's ephemeral port
])
def test_a_clients_tls_handshake_it_closed_opens_nothing(engine, message, opens):
    # (session 53) Go's net/http logs a handshake's error with the client's address: the client's EOF is its going away
    engine.incidents.store_batch([_event(1, 1.0, "api", "api-1", message)], cursor=None)
    assert bool(incidents_by_first_seen(engine)) is opens


def _full_disk() -> list[LogEvent]:
    return [
        _event(1, 1.0, "nginx", "upload-gw-1", '[crit] 27#27: *90012 pwrite() "/var/cache/nginx/client_temp/0000031188"'
               ' failed (28: No space left on device), client: 10.4.0.9, host: "upload.example.com"'),
        _event(2, 1.6, "file-svc", "upload-gw-1", "Error: ENOSPC: no space left on device, write\n"
               "    at Object.writeSync (node:fs:927:3)\n    at SonicBoom.flushSync (/app/node_modules/sonic-boom/index.js:5)"),
        _event(3, 2.4, "thumbnailer", "upload-gw-1", "OSError: [Errno 28] No space left on device: '/var/tmp/thumb-5h2k.webp'"),
        _event(4, 2.5, "reports", "batch-7", "OSError: [Errno 28] No space left on device: '/var/tmp/report.csv'"),
    ]


def test_services_of_one_host_out_of_disk_are_one_incident(engine):
    """nginx's `pwrite() ... failed (28: No space left on device)`, Node's `ENOSPC` (its stack frames
    name code, no resource) and Python's `[Errno 28]`, written on one host, are that host's full disk;
    a full disk on another host at the same moment is another failure."""
    engine.incidents.store_batch(_full_disk(), cursor=None)
    by_events = {frozenset(events_of(engine, r["incident_id"])) for r in incidents_by_first_seen(engine)}
    assert by_events == {frozenset({"ev-1", "ev-2", "ev-3"}), frozenset({"ev-4"})}


def test_the_500_a_service_answers_its_failed_request_with_is_that_failures_incident(engine):
    """ASP.NET Core logs the database error, then the request's `responded 500`: one failure, not two."""
    engine.incidents.store_batch([
        _event(1, 1.0, "orders-net", "orders-net-1", "fail: Microsoft.EntityFrameworkCore.Database.Connection[20004]"
               " An error occurred using the connection to database 'orders' on server 'sql-prod-01'."),
        _event(2, 1.1, "orders-net", "orders-net-1", "HTTP GET /api/orders/recent responded 500 in 12.8 ms"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert events_of(engine, outage["incident_id"]) == {"ev-1", "ev-2"}
    assert outage["leader"]["event_id"] == "ev-1"


def test_a_warning_naming_the_resource_the_errors_name_as_a_word_leads(engine):
    """The kubelet starts reclaiming `resourceName="ephemeral-storage"`, then evicts search-api's pods
    (`low on resource: ephemeral-storage`), the edge's callers fail and a new pod is rejected for the same
    resource: the first warning leads."""
    engine.incidents.store_batch([
        _event(1, 0.0, "kubelet", "node-4", 'eviction_manager.go:366] "Eviction manager: attempting to reclaim"'
               ' resourceName="ephemeral-storage"', level="WARN"),
        _event(2, 0.1, "kubelet", "node-4", "Evicted pod search-api-6f8b9-2kq: The node was low on resource:"
               " ephemeral-storage.", level="WARN"),
        _event(3, 1.0, "web-bff", "web-bff-3", "upstream error: GET http://search-api.search.svc.cluster.local:8080"
               "/v1/search: 503 Service Unavailable"),
        _event(4, 4.0, "kubelet", "node-4", "Failed to admit a pod of search-api: The node was low on resource:"
               " ephemeral-storage."),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert outage["leader"]["position"] == "kubelet.log@1"


@pytest.mark.parametrize("first", ["health: 1 full disk(s) under volume data.hot (DISK_FULL)",
                                   "not enough free space on volume data.hot: 1200 bytes < 4096 reserved"])
def test_a_resource_full_or_short_names_a_cause_and_leads_the_later_causes(engine, first):
    """Session 49: `full` and `not enough` name a cause (a resource used up), as `no space` does."""
    engine.incidents.store_batch([
        _event(1, 0.0, "store-node", "sn-1", first),
        _event(2, 0.5, "store-node", "sn-1", "flush to data.hot failed: connection refused by replica"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert outage["leader"]["event_id"] == "ev-1"


def test_an_outbox_full_behind_a_failing_publisher_names_no_cause_and_a_retry_budget_is_no_limit(engine):
    from pipeline.incidents.leading import CAUSE, rank

    assert rank(_event(1, 0.0, "api", "api-1", "order rejected: outbox full")) != CAUSE
    assert rank(_event(2, 0.0, "job", "job-1", "step failed (reached max retries: 9)")) != CAUSE
    assert rank(_event(3, 0.0, "fpm", "web-1", "[pool www] server reached pm.max_children setting (40)")) == CAUSE


def test_a_warning_that_a_server_reached_its_limit_leads_the_proxys_errors_naming_it(engine):
    """A process manager warns it reached its worker limit; the proxy on the same host then fails to hand
    requests to its socket (`/run/fcgi/fcgi9-runner.sock`, its name said in words): the warning, written first, states the cause."""
    engine.incidents.store_batch([
        _event(1, 0.0, "fcgi-runner", "web-9", "runner reached max_workers (64), consider raising it", level="WARN"),
        _event(2, 1.0, "proxy", "web-9", "connect() to unix:/run/fcgi/fcgi9-runner.sock failed (11: Resource temporarily"
               " unavailable) while connecting to upstream"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert outage["leader"]["position"] == "fcgi-runner.log@1"


def test_a_limit_of_a_number_exceeded_names_a_cause(engine):
    from pipeline.incidents.leading import CAUSE, rank

    assert rank(_event(1, 0.0, "shipper", "sh-1", "push rejected: per-tenant stream limit of 5000 exceeded")) == CAUSE
