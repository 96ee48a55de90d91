"""An outage's first line may be written below WARN, and its story told by each hop in its own words (issue 35.1,
session 51): a line logged at INFO or with no level that states a cause's own failure (a broker's `Failed
authentication`, logged at INFO) leads the errors it precedes, as a WARN does, and opens nothing; `oom` is a word, not
part of `room`; memory of any kind run out, a count at its ceiling and a provider's `Too Many Requests` name a cause,
and a throttle stated at WARN leads; a deprecation a Rails logger writes at ERROR is a notice; one request named by
method and a path holding an id at two hops ties the hops; an error value relayed whole with its packages' prefixes
(Go's `pkg: subpkg: message`) ties the clients that relay it. Wordings written here in the manner of Kafka, Redis,
PostgreSQL, botocore, the Cosmos DB SDK, Rails, nginx and etcd, not copied from a bed."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.incidents.leading import CAUSE, NEUTRAL, rank, states_cause
from pipeline.incidents.notices import notice_only
from pipeline.state import LogEvent
from tests.support import events_of, incidents_by_first_seen

T0 = datetime(2026, 12, 6, 9, 0, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str, **more) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=more.pop("level", "ERROR"), message=message, source=f"{service}.log",
                    position=f"{service}.log@{n}", **more)


def _by_event(engine) -> dict[str, str]:
    return {e: i["incident_id"] for i in incidents_by_first_seen(engine) for e in events_of(engine, i["incident_id"])}


@pytest.mark.parametrize("level", ["INFO", None])
def test_a_line_below_warn_that_states_the_cause_leads_the_errors_it_precedes_and_opens_nothing(engine, level):
    stated = _event(1, 0.0, "broker", "broker-1", "[SocketServer nodeId=1] Failed authentication with /10.7.3.21"
                    " (Authentication failed during authentication due to invalid credentials with SASL mechanism"
                    " SCRAM-SHA-512)", level=level)
    chatter = _event(2, 0.5, "broker", "broker-1", "[SocketServer nodeId=1] accepted connection from /10.7.3.30",
                     level=level)
    refused = _event(3, 1.0, "ledger", "ledger-1", "[Consumer clientId=ledger-1] Connection to node -1"
                     " (broker-1/10.7.0.11:9096) failed authentication due to: Authentication failed during"
                     " authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512")
    again = _event(4, 6.0, "broker", "broker-1", "[SocketServer nodeId=1] Failed authentication with /10.7.3.21"
                   " (Authentication failed during authentication due to invalid credentials)")
    engine.incidents.store_batch([stated, chatter, refused, again], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert events_of(engine, outage["incident_id"]) == {"ev-3", "ev-4"}
    assert outage["leader"]["event_id"] == "ev-1"


def test_a_line_below_warn_that_states_no_failure_leads_nothing(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "chat", "chat-1", "JOINED room:lobby in 212us", level="INFO"),
        _event(2, 1.0, "chat", "chat-1", "GenServer Chat.Limiter terminating: exited in: GenServer.call(Chat.Limiter)"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert outage["leader"]["event_id"] == "ev-2"


def test_a_line_below_warn_naming_a_certificate_states_no_failure(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "gw", "gw-1", "reloaded TLS certificate for api.partner.example (not after 2027-02-12)",
               level="INFO"),
        _event(2, 40.0, "sync", "sync-1", "fetch https://api.partner.example/v3/catalog: tls: failed to verify"
               " certificate: x509: certificate signed by unknown authority"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert outage["leader"]["event_id"] == "ev-2"


def test_oom_is_a_word_not_part_of_room():
    assert not states_cause(_event(1, 0, "chat", "chat-1", "JOINED room:lobby in 212us", level="INFO"))
    assert rank(_event(1, 0, "chat", "chat-1", "booking failed for room 12")) == NEUTRAL
    assert rank(_event(1, 0, "k", "node-1", "Memory cgroup out of memory: Killed process 3 (clamd)")) == CAUSE
    assert rank(_event(1, 0, "k", "node-1", "container app OOMKilled")) == CAUSE


@pytest.mark.parametrize("message", [
    "ERROR:  out of shared memory",
    "ERR max number of clients reached",
    "CosmosException : Response status code does not indicate success: TooManyRequests (429)",
])
def test_memory_of_any_kind_a_count_at_its_ceiling_and_too_many_requests_name_a_cause(message):
    assert rank(_event(1, 0, "svc", "h", message)) == CAUSE


def test_a_retry_budget_at_its_ceiling_is_no_cause():
    assert rank(_event(1, 0, "svc", "h", "operation error: exceeded maximum number of attempts, 3")) != CAUSE
    assert rank(_event(1, 0, "svc", "h", "maximum number of retries reached")) != CAUSE


@pytest.mark.parametrize("message", [
    "WARNING:  out of shared memory",
    "Retry needed, retrying request after delay of: 0.84 (ThrottlingException from kms.example.internal Decrypt)",
])
def test_a_warning_stating_memory_run_out_or_a_throttle_states_the_cause(message):
    assert states_cause(_event(1, 0, "svc", "h", message, level="WARN"))


def test_a_deprecation_a_rails_logger_writes_at_error_is_a_notice():
    line = ("E, [2026-12-06T09:00:00.000000 #40] ERROR -- : DEPRECATION WARNING: `to_s(:db)` is deprecated. Use"
            " `to_fs(:db)` instead. (called from index at app/controllers/orders_controller.rb:12)")
    assert notice_only(_event(1, 0, "api", "api-1", line))
    # a failure said in the message, in its own case, still opens
    assert not notice_only(_event(1, 0, "api", "api-1", line.replace("is deprecated.", "is deprecated; render error.")))


def test_one_request_named_by_method_and_a_path_holding_an_id_ties_its_hops(engine):
    engine.incidents.store_batch([
        _event(1, 1.0, "catalog", "catalog-1", "GET /products/912 failed: query rejected by the store"),
        _event(2, 1.1, "edge", "edge-1", '81.2.69.8 - - [06/Dec/2026:09:00:01 +0000] "GET /products/912 HTTP/2.0" 503'
               ' 220 "-" "curl/8.0"'),
        # another request of the same route at the same moment is not that request
        _event(3, 1.2, "gateway", "gw-1", '81.2.69.9 - - [06/Dec/2026:09:00:01 +0000] "GET /products/913 HTTP/2.0" 502'
               ' 220 "-" "curl/8.0"'),
        # nor is a file served
        _event(4, 1.3, "assets", "assets-1", "GET /static/main.3f1c.css failed: read error"),
        _event(5, 1.4, "cdn", "cdn-1", '81.2.69.7 - - [06/Dec/2026:09:00:01 +0000] "GET /static/main.3f1c.css'
               ' HTTP/2.0" 500 220 "-" "curl/8.0"'),
    ], cursor=None)
    by_event = _by_event(engine)
    assert by_event["ev-2"] == by_event["ev-1"]
    assert by_event["ev-3"] != by_event["ev-1"]
    assert by_event["ev-5"] != by_event["ev-4"]


def test_an_error_value_relayed_whole_with_its_packages_prefixes_ties_the_clients_relaying_it(engine):
    engine.incidents.store_batch([
        _event(1, 1.0, "apiserver", "cp-1", 'apiserver received an error that is not a Status: rpctypes.StoreError'
               '{code:0x8, desc:"storeserver: mvcc: database space exceeded"}: storeserver: mvcc: database space'
               ' exceeded'),
        _event(2, 2.0, "controller", "cp-1", "Failed to update lock: storeserver: mvcc: database space exceeded"),
        _event(3, 3.0, "scheduler", "cp-2", '"Error scheduling pod; retrying" err="storeserver: mvcc: database space'
               ' exceeded" pod="shop/cart-7d9c-4xz"'),
        # two prefixes of which one is a level word are no package chain; nor is a message naming no failure
        _event(4, 3.5, "billing", "billing-1", "error: ledger: invoice batch closed for the month"),
        _event(5, 3.6, "payroll", "payroll-1", "error: ledger: invoice batch closed for the month"),
    ], cursor=None)
    by_event = _by_event(engine)
    assert by_event["ev-1"] == by_event["ev-2"] == by_event["ev-3"]
    assert by_event["ev-4"] != by_event["ev-1"] and by_event["ev-5"] != by_event["ev-1"]


def test_a_warning_writing_a_measure_past_the_limit_beside_it_leads_the_errors_of_what_it_names(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "chat", "chat-1", "[warning] Chat.Limiter message_queue_len=4120 (threshold 1000)", level="WARN"),
        _event(2, 6.0, "chat", "chat-1", "GenServer #PID<0.4411.0> terminating ** (stop) exited in:"
               " GenServer.call(Chat.Limiter, {:check, 8}, 5000) ** (EXIT) time out"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert outage["leader"]["event_id"] == "ev-1"
    over = _event(3, 0, "web", "web-1", "request queue saturated: inflight 400 (limit 400)", level="WARN")
    assert rank(over) == CAUSE and states_cause(over)
    # a measure under its limit states nothing
    assert not states_cause(_event(3, 0, "chat", "chat-1", "Chat.Limiter message_queue_len=40 (threshold 1000)",
                                   level="WARN"))


def test_a_thing_not_configured_is_a_cause_and_a_line_below_warn_saying_so_leads(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "keys", "keys-1", "loaded data key kid=dk-10 (previous kid=dk-09 not configured)", level="INFO"),
        _event(2, 5.0, "keys", "keys-1", "detokenize failed for token tok_88a1",
               exception="javax.crypto.AEADBadTagException"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert outage["leader"]["event_id"] == "ev-1"


def test_a_servers_message_a_client_writes_in_an_error_field_of_its_own_ties_a_client_relaying_it(engine):
    engine.incidents.store_batch([
        _event(1, 1.0, "sessions", "sessions-1", "session lookup failed",
               fields={"addr": "cache-a:6379", "err": "ERR max number of clients reached"}),
        _event(2, 9.0, "web", "web-1", "Login failed: SessionClient::Unavailable (session service returned 503: ERR max"
               " number of clients reached) request_id=9c2a41"),
        # a field naming no cause ties nothing
        _event(3, 9.5, "counter", "counter-1", "increment failed",
               fields={"err": "ERR value is not an integer or out of range"}),
        _event(4, 9.8, "billing", "billing-1", "Charge failed: CounterClient::Error (counter returned 500: ERR"
               " value is not an integer or out of range)"),
    ], cursor=None)
    by_event = _by_event(engine)
    assert by_event["ev-2"] == by_event["ev-1"]
    assert by_event["ev-4"] != by_event["ev-1"]
