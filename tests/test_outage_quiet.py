"""Nobody pages for these, and one outage named three ways is one incident (issue 35, session 47): a
retry its writer says worked on a later attempt, a request the client aborted (Node's `aborted`), a
request for what is not there (answered 404); a server's clause that two of its clients relay, the
server itself not in the log; a kubelet's error about a pod its callers name; a `host=` field naming
the host a URL names. And the narrowed relay rule: two services writing the same whole line are two
failures, a server's line that is the clause alone is its client's. Wordings in the manner of botocore,
the AWS SDK for Java, Node's http server, nginx, Rails, Spring, dbt, the Snowflake JDBC driver, klog."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pipeline.state import LogEvent
from tests.support import events_of, incidents_by_first_seen

T0 = datetime(2026, 12, 7, 10, 0, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str, *, level: str = "ERROR",
           stack: str | None = None, **fields: object) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=level, message=message, source=f"{service}.log", position=f"{service}.log@{n}",
                    stack=stack, fields=dict(fields))


def _grouped(engine) -> set[frozenset[str]]:
    return {frozenset(events_of(engine, r["incident_id"])) for r in incidents_by_first_seen(engine)}


def test_a_retry_its_writer_says_worked_on_a_later_attempt_opens_nothing_and_one_that_never_did_opens(engine):
    engine.incidents.store_batch([
        _event(1, 1.0, "uploader", "up-1", "part 7 failed (attempt 1/5): An error occurred (SlowDown) when calling"
               " the UploadPart operation: Please reduce your request rate."),
        _event(2, 3.0, "uploader", "up-1", "part 7 uploaded on attempt 2", level="INFO"),
        _event(3, 8.0, "profile", "profile-0", "getItem throttled, will retry (1/3): ProvisionedThroughputExceededException"),
        _event(4, 8.3, "profile", "profile-0", "getItem succeeded after 2 attempts (312 ms)", level="INFO"),
    ], cursor=None)
    assert incidents_by_first_seen(engine) == []
    engine.incidents.store_batch([
        _event(5, 20.0, "profile", "profile-0", "putItem throttled, will retry (1/3): ProvisionedThroughputExceededException"),
        _event(6, 20.5, "profile", "profile-0", "getItem succeeded after 2 attempts (210 ms)", level="INFO"),
        _event(7, 21.0, "profile", "profile-0", "putItem still retrying after attempt 2", level="INFO"),
    ], cursor=None)
    assert _grouped(engine) == {frozenset({"ev-5"})}  # another operation came back, this one did not


def test_a_request_its_client_aborted_or_asked_for_what_is_not_there_opens_nothing(engine):
    engine.incidents.store_batch([
        _event(1, 1.0, "feed", "feed-0", "request errored", **{"err": {"code": "ECONNRESET"}, "error.message": "aborted"}),
        _event(2, 2.0, "web", "web-0", 'open() "/usr/share/nginx/html/favicon.ico" failed (2: No such file or directory),'
               ' client: 192.0.2.14, server: www.example.org, request: "GET /favicon.ico HTTP/1.1"'),
        _event(3, 3.0, "rails", "rails-1", 'ActionController::RoutingError (No route matches [GET] "/wp-login.php"):'),
        _event(4, 4.0, "catalog", "catalog-0", "product not found: sku=DISCONTINUED-1182"),
        _event(5, 4.1, "web", "web-0", '198.51.100.3 - - [07/Dec/2026:10:00:04 +0000] "GET /p/DISCONTINUED-1182 HTTP/1.1"'
               ' 404 1120 "-" "Mozilla/5.0"', level="INFO"),
    ], cursor=None)
    assert incidents_by_first_seen(engine) == []
    # a missing thing nobody asked for by a request, a file a request does not map to: failures
    engine.incidents.store_batch([
        _event(6, 30.0, "kubelet", "node-1", 'failed to pull image "registry.example.io/app:v3": not found'),
        _event(7, 31.0, "web", "web-0", 'open() "/etc/nginx/certs/site.pem" failed (2: No such file or directory),'
               ' request: "GET /pay HTTP/1.1"'),
    ], cursor=None)
    assert _grouped(engine) == {frozenset({"ev-6"}), frozenset({"ev-7"})}


def test_two_clients_relaying_a_third_partys_clause_are_one_incident_and_one_whole_line_twice_is_two(engine):
    clause = "No active warehouse selected in the current session.  Select an active warehouse with the 'use warehouse' command."
    engine.incidents.store_batch([
        _event(1, 5.0, "dbt", "dbt-1", "Database Error in model fct_orders (models/marts/fct_orders.sql)",
               stack=f"  000606 (57P03): {clause}"),
        _event(2, 12.0, "export", "export-0", "export failed",
               stack=f"net.snowflake.client.jdbc.SnowflakeSQLException: {clause}\n\tat net.snowflake.X.y(X.java:1)"),
        # two regions' copies of one program writing the same whole line: two failures
        _event(3, 20.0, "sync-eu", "sync-eu-0", "replication batch rejected by the remote store, giving up on this window"),
        _event(4, 21.0, "sync-us", "sync-us-0", "replication batch rejected by the remote store, giving up on this window"),
    ], cursor=None)
    assert _grouped(engine) == {frozenset({"ev-1", "ev-2"}), frozenset({"ev-3"}), frozenset({"ev-4"})}


def test_a_servers_line_that_is_the_clause_alone_is_its_clients_and_the_same_line_twice_stays_apart(engine):
    """The narrowed relay rule (CONTRACT §2): the server's own line is its clause alone, its client says it
    after words of its own; two services writing the same whole line (two regions' copies of one program)
    relay nothing."""
    engine.incidents.store_batch([
        _event(1, 1.0, "pooler", "pool-0", "no more connections allowed (max_client_conn)"),
        _event(2, 1.5, "api", "api-1", "query failed: error returned from database: no more connections allowed (max_client_conn)"),
        _event(3, 2.0, "sync-eu", "sync-eu-0", "remote store rejected the replication batch for this window"),
        _event(4, 2.5, "sync-us", "sync-us-0", "remote store rejected the replication batch for this window"),
    ], cursor=None)
    assert _grouped(engine) == {frozenset({"ev-1", "ev-2"}), frozenset({"ev-3"}), frozenset({"ev-4"})}


def test_a_kubelets_error_about_a_pod_and_its_callers_refused_are_one_incident_it_leads(engine):
    ref = "registry.acme.io/platform/notifications:v3.14.0-rc"
    engine.incidents.store_batch([
        _event(1, 4.0, "kubelet", "node-81", f'"PullImage from image service failed" err="rpc error: code = NotFound'
               f' desc = failed to pull and unpack image \\"{ref}\\": not found" image="{ref}"'),
        _event(2, 4.1, "kubelet", "node-81", '"Error syncing pod, skipping" err="failed to \\"StartContainer\\" for \\"app\\"'
               f' with ErrImagePull: \\"rpc error: code = NotFound desc = failed to pull image \\\\\\"{ref}\\\\\\"\\""'
               ' pod="platform/notifications-6f9d7c-k2x8p"'),
        _event(3, 5.0, "orders", "orders-3", "notify failed", url="http://notifications.platform.svc.cluster.local/v1/send",
               error="dial tcp 10.100.41.7:80: connect: connection refused"),
        _event(4, 6.0, "payouts", "payouts-0", "partner call failed: dial tcp [2001:db8::12]:443: connect: network is"
               " unreachable url=https://api.partner.example/v1/transfers"),
        _event(5, 7.0, "refunds", "refunds-2", "transfer failed: java.net.SocketException: Network is unreachable"
               " host=api.partner.example"),
    ], cursor=None)
    assert _grouped(engine) == {frozenset({"ev-1", "ev-2", "ev-3"}), frozenset({"ev-4", "ev-5"})}
    (pull, partner) = incidents_by_first_seen(engine)
    assert pull["leader"]["event_id"] == "ev-1"


def test_an_error_that_says_only_what_failed_leads_by_the_cause_its_traceback_ends_with(engine):
    """psycopg's `UndefinedColumn` at the end of a traceback under `list invoices failed` is the cause, read
    before another host's one-line `list invoices failed: ...UndefinedColumn: ...` five seconds later."""
    trace = ('Traceback (most recent call last):\n  File "/app/invoices/repo.py", line 77, in list_for_customer\n'
             '    cur.execute(SQL_LIST, (customer_id,))\npsycopg.errors.UndefinedColumn: column "tax_region" does not exist')
    engine.incidents.store_batch([
        _event(1, 4.0, "invoices", "invoices-1", "list invoices failed", stack=trace),
        _event(2, 9.0, "invoices", "invoices-2", 'list invoices failed: psycopg.errors.UndefinedColumn: column'
               ' "tax_region" does not exist'),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert events_of(engine, outage["incident_id"]) == {"ev-1", "ev-2"}
    assert outage["leader"]["event_id"] == "ev-1"
