"""Addresses learnt from the log (CONTRACT §2, session 56): within one stored batch, which named host a port is
dialled at, so an error naming the machine only by its IPv4 address and that port (a proxy's `upstream:
"http://10.3.0.20:27017/…"`, a driver's `connection <monitor> to 10.3.0.20:27017 closed`) names the host the batch's
other errors name on that port (`mongo-0.mongo.db.svc:27017`), and the other way round.

The log says it: a port that the batch's errors name with one host name and no other is that host's port here, and
an address dialled on it is that host's. Two names on one port (two databases on 5432), or none, and nothing is
learnt: no two causes are tied by a port alone. A client's port (32768 and above, the ephemeral range) is no
server's; the web's default ports (80, 443) are every site's; a loopback or a wildcard listen address is no one
host's. `joining.py` reads each error's names through `AddressBook.spelt`.
"""
from __future__ import annotations

import re

from pipeline.analyst.subject import EPHEMERAL_PORTS as EPHEMERAL
from pipeline.incidents.writers import service_named

_IPV4 = re.compile(r"^(?:\d{1,3}\.){3}\d{1,3}$")
MAX_ADDRESSES = 4  # addresses of one port added to an error naming its host (a service's few replicas)
MAX_PORTS = 4_096  # ports a batch keeps (bounds the book on a hostile log)
# every machine's own (a loopback) or none (a server's wildcard listen address, `server: 0.0.0.0:443`): no one host's
_NO_NAME = frozenset({"localhost", "0.0.0.0", "127.0.0.1"})
# the web's default ports (a URL without a port dials them): every site's, so a port shared by unrelated hosts, and an
# address on it says nothing of which host it is (a CDN's IP on 443 beside a partner API's name on 443)
_EVERY_HOSTS = frozenset({"80", "443"})


class AddressBook:
    """One batch's ports, each with the host names and the IPv4 addresses its errors named with it."""

    def __init__(self) -> None:
        self.named: dict[str, set[str]] = {}  # port -> host names written with it
        self.beside: dict[str, set[str]] = {}  # port -> host names a line wrote, without a port, beside an address on it
        self.addresses: dict[str, set[str]] = {}  # port -> IPv4 addresses written with it

    def spelt(self, names: frozenset[str]) -> frozenset[str]:
        """`names` (an error's, `line_names.named_things`), kept in the book, and the other spelling of each host:port
        the book knows: an address's host name (with the services it names), or a host name's addresses."""
        pairs = [(host, port) for n in names if n.startswith("hp:")
                 for host, _, port in [n[3:].rpartition(":")]
                 if port.isdigit() and int(port) < EPHEMERAL and port not in _EVERY_HOSTS and host not in _NO_NAME]
        if not pairs:
            return names
        # a host the line names without a port beside an address it dialled (Go's `Post "http://payments.svc/charge":
        # dial tcp 10.0.3.88:8080: …`; or a front door's virtual host, a DNS query's name): maybe a name on that port,
        # so the port has no one name any more; never a name the port is learnt to be
        dialled = {port for host, port in pairs if _IPV4.match(host)}
        for n in names:
            if n.startswith("host:") and not _IPV4.match(n[5:]):
                for port in dialled:
                    self._keep(self.beside, port, n[5:])
        for host, port in pairs:
            self._keep(self.addresses if _IPV4.match(host) else self.named, port, host)
        added: list[str] = []
        for host, port in pairs:
            hosts = self.named.get(port, set())
            if len(hosts) != 1 or not self.beside.get(port, set()) <= hosts:
                continue  # (no name, or two: which host an address is, the log does not say)
            (name,) = hosts
            if _IPV4.match(host):
                added.extend([f"hp:{name}:{port}", *service_named(name)])
            else:
                added.extend(f"hp:{a}:{port}" for a in sorted(self.addresses.get(port, ()))[:MAX_ADDRESSES])
        return names | frozenset(added) if added else names

    def _keep(self, table: dict[str, set[str]], port: str, host: str) -> None:
        if port in table or len(self.named) + len(self.beside) + len(self.addresses) < MAX_PORTS:
            table.setdefault(port, set()).add(host)
