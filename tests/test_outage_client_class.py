"""A caller's code names its callee (session 55, CONTRACT §2): a client class named after the service it calls
(`c.r.p.GeoIndexClient`, .NET's typed `Pricing.Clients.InventoryClient`, a generated `PaymentsServiceClient`) ties the
caller's error to that service's errors within the burst window, either read first, as a service the line names does;
it names no address, so a symptom naming only it is still one naming nowhere it went. Near misses: a framework's or a
protocol's client (`HttpClient`, `WebClient`, `RestClient`), a client of another service, a class that merely has
`Client` inside its name (`NettyClientHandler`), the caller's own service, and two causes at the same moment. And a node
named at its address (`chat@10.0.3.4`) is called by that address, as `ip-10-0-12-41` is."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pipeline.incidents.line_names import named_things
from pipeline.incidents.writers import CALLS, SERVICE_NAMED, host_address
from pipeline.state import LogEvent
from tests.support import events_of, incidents_by_first_seen

T0 = datetime(2026, 12, 7, 9, 0, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level="ERROR", message=message, source=f"{service}.log", position=f"{service}.log@{n}")


def _calls(message: str, service: str = "pricing", host: str = "pricing-1") -> set[str]:
    return {n for n in named_things(_event(0, 0.0, service, host, message)) if n.startswith(CALLS)}


def test_a_client_class_names_the_service_it_calls_in_its_words():
    assert _calls("fail: Pricing.Clients.InventoryClient[0] stock lookup failed") == {CALLS + "inventory"}
    assert _calls("ERROR [pool-2-thread-5] c.r.p.GeoIndexClient : nearest() failed") == {CALLS + "geo-index"}
    # a generated client says it calls a service: `bare` drops the kind, as for `orders-service`
    assert _calls("at Shop.Gen.PaymentsServiceClient.ChargeAsync()") == {CALLS + "payments-service", CALLS + "payments"}
    # it names no address: no `svc:` (a symptom naming only it still names nowhere it went)
    names = named_things(_event(0, 0.0, "pricing", "pricing-1", "Pricing.Clients.InventoryClient: 503"))
    assert not {n for n in names if n.startswith(SERVICE_NAMED)}


def test_a_frameworks_or_protocols_client_or_a_class_holding_client_names_no_service():
    assert _calls("System.Net.Http.HttpClient.Timeout of 100 seconds elapsing") == set()
    assert _calls("o.s.w.r.f.c.WebClient : request failed") == set()
    assert _calls("RestClient::Exceptions::ReadTimeout") == set()
    assert _calls("i.g.n.NettyClientHandler : Received GOAWAY") == set()
    assert _calls("client error (Connect): invalid peer certificate") == set()
    # a writer's own client class (`InventoryClient` logged by inventory itself) names no other service
    assert _calls("Inventory.Clients.InventoryClient warmed up", service="inventory", host="inventory-1") == set()


def _inventory_down() -> list[LogEvent]:
    return [
        _event(1, 0.0, "inventory", "inventory-5f-1", "ERROR: canceling statement due to statement timeout"),
        _event(2, 3.0, "pricing", "pricing-net-1", "fail: Pricing.Clients.InventoryClient[0] stock lookup failed"
               " System.Net.Http.HttpRequestException: Response status code does not indicate success: 503"),
    ]


def test_a_callers_client_class_joins_the_callees_incident_either_read_first(engine):
    engine.incidents.store_batch(_inventory_down(), cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert events_of(engine, outage["incident_id"]) == {"ev-1", "ev-2"}
    assert outage["leader"]["event_id"] == "ev-1"


def test_the_callee_read_after_its_callers_client_class_joins_and_leads(engine):
    engine.incidents.store_batch(list(reversed(_inventory_down())), cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert events_of(engine, outage["incident_id"]) == {"ev-1", "ev-2"}
    assert outage["leader"]["event_id"] == "ev-1" and outage["leader"]["service"] == "inventory"


def test_a_client_of_another_service_or_a_frameworks_client_stays_apart(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "inventory", "inventory-5f-1", "ERROR: canceling statement due to statement timeout"),
        # a client of another service at the same moment: two causes, not one
        _event(2, 2.0, "pricing", "pricing-net-1", "fail: Pricing.Clients.LedgerClient[0] balance lookup failed"
               " System.Net.Http.HttpRequestException: Response status code does not indicate success: 503"),
        # the framework's client names no service (`web` is a writer of this log)
        _event(3, 3.0, "web", "web-1", "upstream refused the connection"),
        _event(4, 4.0, "bff", "bff-1", "o.s.w.r.f.c.WebClient : request to upstream failed: 502 Bad Gateway"),
    ], cursor=None)
    incidents = incidents_by_first_seen(engine)
    assert len(incidents) == 4
    assert all(len(events_of(engine, i["incident_id"])) == 1 for i in incidents)


def test_a_client_class_beyond_the_burst_window_stays_apart(engine):
    late = _inventory_down()
    late[1] = _event(2, 3600.0, "pricing", "pricing-net-1", late[1].message)
    engine.incidents.store_batch(late, cursor=None)
    assert len(incidents_by_first_seen(engine)) == 2


def test_a_node_named_at_its_address_is_called_by_that_address():
    """Erlang and RabbitMQ name a node `name@host`: a host written `chat@10.0.3.4` is the machine at 10.0.3.4, so a
    proxy's upstream `10.0.3.4:4000` names that writer; another address, or a name at a name, does not."""
    assert host_address("chat@10.0.3.4") == "10.0.3.4" and host_address("rabbit@10.4.0.7") == "10.4.0.7"
    assert host_address("rabbit@rabbitmq-0") is None and host_address("ops@db-7") is None


def test_a_proxys_upstream_address_joins_the_node_at_it_and_not_another(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "chat", "chat@10.0.3.4", "GenServer #PID<0.4411.0> terminating"),
        _event(2, 0.3, "envoy", "mobile-gw-1", '"POST /api/messages HTTP/1.1" 500 - 0 64 5012 - "-" "10.0.3.4:4000"'),
        _event(3, 0.5, "envoy", "edge-gw-1", '"GET /api/rooms HTTP/1.1" 503 - 0 64 12 - "-" "10.0.3.9:4000"'),
    ], cursor=None)
    first, other = incidents_by_first_seen(engine)
    assert events_of(engine, first["incident_id"]) == {"ev-1", "ev-2"}
    assert events_of(engine, other["incident_id"]) == {"ev-3"}


def test_the_client_class_that_wrote_the_line_names_its_service_too(engine):
    """A logger column holding the client class (`c.r.p.GeoIndexClient : nearest() failed`) says whom the line's call
    went to as the message would; a controller's class (`c.r.p.PlanController`) names nobody."""
    server = _event(1, 0.0, "geo-index", "geo-index-0", "transport: Got too many pings from the client, closing the connection.")
    client = LogEvent(event_id="ev-2", time=T0 + timedelta(seconds=0.2), service="route-planner", host="route-planner-1",
                      level="ERROR", message="nearest() failed: io.grpc.StatusRuntimeException: UNAVAILABLE: Connection"
                      " closed after GOAWAY", source="planner.log", position="planner.log@2",
                      fields={"logger": "c.r.p.GeoIndexClient"})
    controller = LogEvent(event_id="ev-3", time=T0 + timedelta(seconds=0.3), service="route-planner",
                          host="route-planner-1", level="ERROR", message="plan request failed, returning 503",
                          source="planner.log", position="planner.log@3", fields={"logger": "c.r.p.PlanController"})
    assert CALLS + "geo-index" in named_things(client) and not {n for n in named_things(controller) if n.startswith(CALLS)}
    engine.incidents.store_batch([server, client], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert events_of(engine, outage["incident_id"]) == {"ev-1", "ev-2"} and outage["leader"]["event_id"] == "ev-1"
