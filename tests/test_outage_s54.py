"""One outage, one incident (issue 35.1, session 54): a machine spelled as its address (a cloud's `ip-10-0-12-41`, a host
written as an IP) is the peer a caller dials by that IP; a symptom on a machine where another service's failure is the
only one underway is that failure's; a Unix socket written as a URL (`http://unix:/run/app.sock:/path`) is a file on the
writer's host, no host called `unix`. Every line here is written for these tests (no bed's words)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pipeline.incidents import line_names
from pipeline.incidents.writers import host_address, identities
from pipeline.state import LogEvent
from tests.support import events_of, incidents_by_first_seen

T0 = datetime(2026, 12, 7, 3, 0, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str, *, level: str = "ERROR",
           **fields: object) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=level, message=message, source=f"{service}.log", position=f"{service}.log@{n}",
                    fields=dict(fields))


def _incident_of(engine) -> dict[str, str]:
    return {e: i["incident_id"] for i in incidents_by_first_seen(engine) for e in events_of(engine, i["incident_id"])}


# --- a machine spelled as its address -------------------------------------------------------------------------------

def test_a_host_spelling_an_address_is_that_address():
    assert host_address("ip-172-31-5-9") == "172.31.5.9"
    assert host_address("ip-172-31-5-9.ap-south-1.compute.internal") == "172.31.5.9"
    assert host_address("192.168.40.2") == "192.168.40.2"
    # not an address: a number past 255, a word that merely ends in digits, a name
    assert host_address("ip-300-1-1-1") is None
    assert host_address("zip-10-0-0-1") is None
    assert host_address("ledger-2") is None
    assert "172.31.5.9" in identities(_event(1, 0, "ledger", "ip-172-31-5-9", "x"))


def test_a_caller_dialling_the_ip_a_machine_name_spells_joins_that_machines_failure(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "ledger", "ip-172-31-5-9", "journal append rejected: disk quota exceeded for /srv/ledger/wal"),
        _event(2, 6.0, "payments", "payments-2", "POST http://172.31.5.9:7400/entries failed: 503 Service Unavailable"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]


def test_a_caller_dialling_another_ip_stays_apart(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "ledger", "ip-172-31-5-9", "journal append rejected: disk quota exceeded for /srv/ledger/wal"),
        _event(2, 6.0, "payments", "payments-2", "POST http://172.31.5.10:7400/entries failed: 503 Service Unavailable"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]


def test_a_writer_whose_host_is_written_as_an_ip_is_called_by_it(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "geo-tiles", "10.44.0.17", "tile cache volume corrupt, refusing to serve"),
        _event(2, 3.0, "map-web", "map-web-1", "tiles fetch error: dial tcp 10.44.0.17:9100: connect: connection reset"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]


# --- one machine, one failure underway -------------------------------------------------------------------------------

_DISK = "nvme1: controller is down; will reset: CSTS=0x3, PCI_STATUS=0x10"


def test_a_symptom_beside_another_services_failure_on_one_machine_joins_it(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "kernel", "db-host-7", _DISK),
        _event(2, 8.0, "rollup", "db-host-7", "nightly rollup aborted: statement timeout after 30s"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]


def test_a_symptom_on_another_machine_stays_apart(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "kernel", "db-host-7", _DISK),
        _event(2, 8.0, "rollup", "db-host-8", "nightly rollup aborted: statement timeout after 30s"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]


def test_a_line_stating_a_cause_of_its_own_on_that_machine_stays_apart(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "kernel", "db-host-7", _DISK),
        _event(2, 8.0, "rollup", "db-host-7", "cannot open /etc/rollup/rollup.toml: permission denied"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]


def test_a_symptom_on_a_machine_with_two_failures_underway_joins_neither(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "kernel", "db-host-7", _DISK),
        _event(2, 2.0, "mailer", "db-host-7", "spool directory missing: /var/spool/mailer/out"),
        _event(3, 8.0, "rollup", "db-host-7", "nightly rollup aborted: statement timeout after 30s"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]
    assert of["ev-3"] not in (of["ev-1"], of["ev-2"])


def test_a_symptom_naming_another_destination_than_the_failure_there_stays_apart(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "exporter", "edge-vm-2", "push to https://metrics.example.net/api/v1/write refused: 401"),
        _event(2, 5.0, "thumbs", "edge-vm-2", "GET https://cdn.example.org/img/1.png timed out after 10s"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]


# --- a Unix socket written as a URL ----------------------------------------------------------------------------------

def test_a_unix_socket_url_is_a_file_on_the_writers_host_not_a_host():
    event = _event(1, 0.0, "edge", "app-4", 'connect() to unix:/run/php/fpm.sock failed (11: Resource temporarily'
                   ' unavailable) while connecting to upstream, upstream: "fastcgi://unix:/run/php/fpm.sock:/index.php"')
    names = line_names.named_things(event)
    assert "file:app-4:/run/php/fpm.sock" in names
    assert not {n for n in names if n in ("host:unix", "svc:unix")}


def test_a_symptom_naming_the_service_it_called_is_tied_by_that_service_not_by_the_machine(engine):
    # every program here logs the same host (one machine, or a collector's default): the timeout names the service it
    # called, so it is that service's failure or its own, never the full disk's beside it
    engine.incidents.store_batch([
        _event(1, 0.0, "archiver", "box-1", "write /data/archive/2026-12.tar: no space left on device"),
        _event(2, 4.0, "storefront", "box-1", "GET http://catalog:8080/items/5 timed out after 3000ms"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]


# --- a JSON object's text written without a space -------------------------------------------------------------------

def test_a_json_text_without_spaces_names_what_its_pairs_name():
    # (longer than a word any name is read from: without its pairs, nothing of it would be)
    event = _event(1, 0.0, "edge-cache", "pop-lis", '{"ts":"2026-12-07T03:00:00Z","verb":"POST","path":"/basket/checkout",'
                   '"upstream":"shop-origin.example.net","code":502,"cache_state":"BYPASS","bytes_out":0,"ttfb_ms":12,"edge_node":"lis-edge-04"}')
    names = line_names.named_things(event)
    assert "path:/basket/checkout" in names
    assert "res:shop-origin.example.net" in names


def test_a_json_text_edge_answer_joins_the_origins_failure_of_that_route(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "shop", "shop-2", "POST /basket/checkout failed: response header block larger than the proxy buffer, 502"),
        _event(2, 0.4, "edge-cache", "pop-lis", '{"ts":"2026-12-07T03:00:00Z","verb":"POST","path":"/basket/checkout",'
               '"upstream":"shop-origin.example.net","code":502,"cache_state":"BYPASS","bytes_out":0,"ttfb_ms":12,"edge_node":"lis-edge-04"}'),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]


def test_a_json_text_edge_answer_of_another_route_stays_apart(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "shop", "shop-2", "POST /basket/checkout failed: response header block larger than the proxy buffer, 502"),
        _event(2, 0.4, "edge-cache", "pop-lis", '{"ts":"2026-12-07T03:00:00Z","verb":"GET","path":"/media/banners",'
               '"upstream":"shop-origin.example.net","code":502,"cache_state":"MISS","bytes_out":0,"ttfb_ms":12,"edge_node":"lis-edge-04"}'),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]


def test_the_machines_failure_read_after_the_symptom_beside_it_joins_it(engine):
    # the job's log is read before the kernel's: its timeout opened an incident, and the failure it suffered joins it
    engine.incidents.store_batch([
        _event(2, 8.0, "rollup", "db-host-7", "nightly rollup aborted: statement timeout after 30s"),
        _event(1, 0.0, "kernel", "db-host-7", _DISK),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]
    (outage,) = incidents_by_first_seen(engine)
    assert outage["leader"]["event_id"] == "ev-1"


def test_a_failure_read_after_a_symptom_naming_its_destination_on_that_machine_stays_apart(engine):
    engine.incidents.store_batch([
        _event(2, 8.0, "rollup", "db-host-7", "rollup query to warehouse-db:5432 aborted: statement timeout after 30s"),
        _event(1, 0.0, "kernel", "db-host-7", _DISK),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]


def test_a_failure_written_after_the_symptom_it_is_read_after_stays_apart(engine):
    # a symptom is what a failure already underway causes: the disk's reset a minute after the job's timeout caused none
    engine.incidents.store_batch([
        _event(2, 8.0, "rollup", "db-host-7", "nightly rollup aborted: statement timeout after 30s"),
        _event(1, 68.0, "kernel", "db-host-7", _DISK),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]


def test_a_url_in_brackets_names_its_route_without_the_closing_bracket():
    bracketed = _event(1, 0.0, "quotes", "quotes-1", "lookup timed out after 10s (https://fx.example.net/v2/rates)")
    bare = _event(2, 0.0, "ledger", "ledger-1", "GET https://fx.example.net/v2/rates failed: 503")
    assert "path:/v2/rates" in line_names.named_things(bracketed)
    assert "path:/v2/rates" in line_names.named_things(bare)
    # a bracket the path opened itself stays
    own = _event(3, 0.0, "docs", "docs-1", "GET https://wiki.example.net/wiki/Foo_(bar) failed: 503")
    assert "path:/wiki/foo_(bar)" in line_names.named_things(own)


# --- one writer, one failure underway --------------------------------------------------------------------------------

def test_a_writers_later_symptom_naming_nowhere_joins_the_one_incident_its_errors_are_in(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "invoicer", "inv-2", "render template invoice.v3 failed: font bundle missing at /opt/fonts/noto.tgz"),
        _event(2, 40.0, "invoicer", "inv-2", "closing batch for December aborted: deadline exceeded"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]


def test_a_writers_later_symptom_with_its_errors_in_two_incidents_joins_neither(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "invoicer", "inv-2", "render template invoice.v3 failed: font bundle missing at /opt/fonts/noto.tgz"),
        _event(2, 5.0, "invoicer", "inv-2", "spool write refused: permission denied on /var/spool/invoicer"),
        _event(3, 40.0, "invoicer", "inv-2", "closing batch for December aborted: deadline exceeded"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]
    assert of["ev-3"] not in (of["ev-1"], of["ev-2"])


def test_a_writers_later_symptom_naming_where_it_went_is_tied_by_that_or_not_at_all(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "invoicer", "inv-2", "render template invoice.v3 failed: font bundle missing at /opt/fonts/noto.tgz"),
        _event(2, 40.0, "invoicer", "inv-2", "POST https://mail-relay.example.org:8025/send timed out after 30s"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] != of["ev-2"]
