"""One outage, one incident (issue 35.1, session 56): an address learnt from the log. A port the batch's errors name with
one host name and no other is that host's port, so an error dialling an IPv4 address on it names that host (and the
other way round); two names on one port, a client's ephemeral port or `localhost` teach nothing. A server's IPv4 address
alone in quotes names the machine at it, as the address with a port does. Every line here is written for these tests
(no bed's words)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.incidents import line_names
from pipeline.incidents.learnt_addresses import AddressBook
from pipeline.state import LogEvent
from tests.support import events_of, incidents_by_first_seen

T0 = datetime(2026, 12, 7, 4, 0, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level="ERROR", message=message, source=f"{service}.log", position=f"{service}.log@{n}")


def _learnt(*lines: str) -> frozenset[str]:
    """The names of the last line, read after the others through one batch's book."""
    book = AddressBook()
    spelt = frozenset()
    for n, line in enumerate(lines):
        spelt = book.spelt(line_names.named_things(_event(n, n, f"svc{n}", f"host{n}", line)))
    return spelt


@pytest.mark.parametrize("first, last, learnt", [
    # an address read after its name, and a name read after its address
    ("orders read failed: ledger-db.data.svc:27123 connection closed", "monitor to 10.9.4.2:27123 closed",
     {"hp:ledger-db.data.svc:27123", "svc:ledger-db"}),
    ("monitor to 10.9.4.2:27123 closed", "orders read failed: ledger-db.data.svc:27123 connection closed",
     {"hp:10.9.4.2:27123"}),
])
def test_a_port_named_with_one_host_names_that_host_by_its_address(first, last, learnt):
    assert learnt <= _learnt(first, last)


@pytest.mark.parametrize("lines", [
    # near misses: two names on the port (which one the address is, the log does not say)
    ("dial ledger-db:27123 refused", "dial audit-db:27123 refused", "monitor to 10.9.4.2:27123 closed"),
    # a line naming a host without a port beside the address it dialled names a second host on the port
    ('charge failed: Post "http://pay.pay.svc/charge": dial tcp 10.9.4.7:27123: connect: refused',
     "dial ledger-db:27123 refused", "monitor to 10.9.4.2:27123 closed"),
    # another port; a client's ephemeral port; `localhost`, every machine's own
    ("dial ledger-db:27123 refused", "monitor to 10.9.4.2:27124 closed"),
    ("reset by ledger-db:41822", "write to 10.9.4.2:41822 failed"),
    ("dial localhost:27123 refused", "monitor to 10.9.4.2:27123 closed"),
    # the web's default port is every site's (a CDN's address beside a partner's name); a wildcard listen address
    ("push to https://ledger-db.example:443/v1 failed", "connect to 10.9.4.2:443 timed out"),
    ("dial ledger-db:27123 refused", "handshake failed, server: 0.0.0.0:27123"),
])
def test_a_port_that_names_no_one_host_teaches_nothing(lines):
    last = _event(len(lines) - 1, len(lines) - 1, f"svc{len(lines) - 1}", f"host{len(lines) - 1}", lines[-1])
    assert _learnt(*lines) == line_names.named_things(last)


@pytest.mark.parametrize("line, named", [
    ("query failed: (2003, \"Can't connect to MySQL server on '10.20.4.71' (timed out)\")", True),
    # near misses: an address inside a longer quoted word (a CIDR block), a loopback address, a version of three numbers
    ("route '10.20.4.71/32' rejected by the policy", False),
    ("bind failed on '127.0.0.1'", False),
    ("agent '4.2.1' refused the config", False),
])
def test_an_address_alone_in_quotes_names_the_machine_at_it(line, named):
    assert ("svc:10.20.4.71" in line_names.named_things(_event(1, 0, "app", "app-1", line))) is named


def _incident_of(engine) -> dict[str, str]:
    return {e: i["incident_id"] for i in incidents_by_first_seen(engine) for e in events_of(engine, i["incident_id"])}


_NAMED = "catalog sync failed: ledger-db.data.svc:27123: connection closed by server"
_DIALLED = "MongoServerSelectionError: connection <monitor> to 10.9.4.2:27123 closed"


@pytest.mark.parametrize("order", [(1, 2), (2, 1)])
def test_a_caller_dialling_the_learnt_address_joins_the_named_callers_incident(engine, order):
    lines = {1: _event(1, 0.0, "catalog", "catalog-1", _NAMED), 2: _event(2, 2.0, "orders", "orders-1", _DIALLED)}
    engine.incidents.store_batch([lines[i] for i in order], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]


def test_two_names_on_the_port_keep_an_address_apart(engine):
    # the guard: two causes at one moment, one named by its host and port, one by an address on the same port, while
    # another host is named on that port too: the address is neither's for sure, and no incident merges them
    engine.incidents.store_batch([
        _event(1, 0.0, "catalog", "catalog-1", _NAMED),
        _event(2, 1.0, "billing", "billing-1", "invoice store failed: audit-db.data.svc:27123: authentication failed"),
        _event(3, 2.0, "orders", "orders-1", _DIALLED),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-3"] not in (of["ev-1"], of["ev-2"])


@pytest.mark.parametrize("line, went", [
    # a server's access line naming the client it answered (an IPv4 address on an ephemeral port): nowhere it went
    ('INFO:     10.31.2.7:50418 - "PUT /v2/blobs HTTP/1.1" 500 Internal Server Error', False),
    # near misses: a server's port (below the ephemeral range), a client's socket beside where it went (Go's net.OpError)
    ('upstream 10.31.2.7:8443 answered "PUT /v2/blobs HTTP/1.1" 502', True),
    ("write tcp 10.31.2.9:50418->10.31.2.7:5432: write: broken pipe", True),
    # a named host on a high port is a server's (a name is never a client's socket)
    ("GET http://blob-store:50418/v2 failed: 503", True),
])
def test_a_clients_own_socket_says_nowhere_an_error_went(line, went):
    names = line_names.named_things(_event(1, 0, "blobs", "blobs-1", line))
    assert line_names.went_to(names) is went
    assert line_names.went_to(names, services=True) is went


def test_a_5xx_answered_to_a_client_at_its_socket_joins_its_writers_failure(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "blobs", "blobs-1", "blob put failed: quota of bucket tenant-77 exhausted (2048 of 2048 objects)"),
        _event(2, 0.2, "blobs", "blobs-1", 'INFO:     10.31.2.7:50418 - "PUT /v2/blobs HTTP/1.1" 500 Internal Server Error'),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-1"] == of["ev-2"]


_SHUN = "HostGroups_Manager: Shunning server 10.20.4.71:3306 with 5 errors/sec. Shunning for 10 seconds"
_LOST = "reports.sql: query failed: (2013, 'Lost connection to MySQL server during query (timed out)')"


@pytest.mark.parametrize("address, one", [("10.20.4.71", True), ("10.20.4.72", False)])
def test_a_patterns_later_error_naming_a_machines_address_merges_the_incident_naming_it(engine, address, one):
    # the proxy shuns the database by its address; the app's first lost query names nothing, its later one names the
    # server's address in quotes: one machine, one outage (near miss: another address merges nothing)
    engine.incidents.store_batch([
        _event(1, 0.0, "sqlproxy", "sqlproxy-1", _SHUN),
        _event(2, 1.0, "reports", "reports-3", _LOST),
        _event(3, 19.0, "reports", "reports-1",
               f"reports.sql: query failed: (2003, \"Can't connect to MySQL server on '{address}' (timed out)\")"),
    ], cursor=None)
    of = _incident_of(engine)
    assert of["ev-2"] == of["ev-3"]
    assert (of["ev-1"] == of["ev-3"]) is one
