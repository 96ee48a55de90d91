"""Who wrote an error line and what others call it (CONTRACT §2): its component (service and host,
`component`), the names a caller's error may name it by (`identities`: its service and host as written, by
their first label, and bare of what one instance adds), and the service names a host a line names stands for
(`service_named`). `line_names.py` reads what a line names; this module, whom a name can be.
"""
from __future__ import annotations

import re
from functools import lru_cache

from pipeline.state import LogEvent

SERVICE_NAMED = "svc:"  # a service a line names (a host or a compound word)
# the client a server's line says it served (PostgreSQL's `application_name`, MySQL's `program_name`): that client's
# errors of the same moment are the same failure told from the other end, and the client is its caller
CLIENT_NAMED = "cli:"
# (session 55) a service a line's code names as the one it calls, by its client class (`c.r.p.GeoIndexClient`): it ties
# the line to that service's writer as a service it names does, but says no more of where the line's request went (a
# symptom naming only this is still a nameless one: machines.py, outage.py)
CALLS = "calls:"
COMPONENT = "@"  # a component's name (service@host): only dumps fold by it
# what the incident's writers are called (`identities`): `is:<identity>` ties a caller naming one of them;
# `of:<service>|<identity>` and `by:<service>|<named>` say which service is called by which (the leader's side)
IS, OF, BY = "is:", "of:", "by:"
INSTANCE = re.compile(r"[-_]\d+$")
# a Kubernetes pod's generated suffix: a ReplicaSet's hash and the pod's own five characters, or a
# DaemonSet's or Job's five, in the alphabet the API server encodes them with (`SafeEncodeString`:
# no vowels, no 0, 1 or 3): `billing-7c9d5f6b8-q2xlm` is a pod of `billing`
_POD_SUFFIX = re.compile(r"(?:-[bcdfghjklmnpqrstvwxz2456789]{6,10})?-[bcdfghjklmnpqrstvwxz2456789]{5}$")
KIND_SUFFIX = re.compile(r"[-_](?:svc|service)$")
_NOT_A_NAME = frozenset({"", "unknown", "localhost", "-"})
# an IP address, or a name holding a port: an address, no one's name
IP_OR_ADDRESS = re.compile(r"^(?:\d{1,3}\.){3}\d{1,3}$|:")


# a qualified class (lower-case packages, a capitalised name: `o.a.s.h.RequestHandlerBase`, `c.s.intake.OrderPublisher`)
_CLASS = re.compile(r"(?:[a-z_][\w]*\.)+[A-Z][\w$]*")


def writer_service(event: LogEvent) -> str:
    """The service that wrote a line: its service; when that was read from a logger column (a class name: each line of
    one application's file names its own; session 53: or a column a layout read as the service whose value is a
    qualified class, Solr's `o.a.s.h.RequestHandlerBase`), the source it was read from."""
    writer = event.service
    if event.source and (event.fields.get("logger") == writer or _CLASS.fullmatch(writer or "")):
        writer = event.source.rsplit("@", 1)[0]
    return writer


def component(event: LogEvent) -> str:
    """The writer of a line: its service (`writer_service`) on its host."""
    return f"{COMPONENT}{writer_service(event)}@{event.host or ''}"


def process(event: LogEvent) -> str | None:
    """The process that wrote a line, when its header says its id (syslog's `klogind[19272]:`): its component and pid."""
    pid = event.fields.get("pid")
    return f"{component(event)}#{pid}" if isinstance(pid, (str, int)) and str(pid).strip() else None


def identities(event: LogEvent) -> frozenset[str]:
    """What others call the writer of a line (lower-case): its service and its host, each as written,
    by its first label and bare (`bare`): the names a caller's error may name it by. A service read
    from a logger column (a class name) is no such name; nor is an address. Its host's IPv4 address, when
    the host is written as one or spells one (`host_address`), is how a caller dialling it names it."""
    found: set[str] = set()
    logger = event.fields.get("logger") == event.service
    for raw, dotted in ((event.service, not logger), (event.host, True)):
        if not raw or IP_OR_ADDRESS.search(raw) or raw.lower() in _NOT_A_NAME:
            continue
        found.add(raw.lower())
        if dotted:
            found.update((raw.lower().split(".")[0], bare(raw)))
    address = host_address(event.host or "")
    return frozenset({*(n for n in found if len(n) >= 2 and n not in _NOT_A_NAME), *([address] if address else [])})


# a host named by its IPv4 address in dashes, as a cloud's private DNS name spells it (EC2's `ip-10-0-12-41`,
# `ip-10-0-12-41.eu-west-1.compute.internal`): the machine at that address
_DASHED_IP = re.compile(r"^ip-(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})(?:\.|$)", re.I)
_IPV4 = re.compile(r"^(?:\d{1,3}\.){3}\d{1,3}$")


@lru_cache(maxsize=4096)  # (asked for each writer compared with each open incident: a log has few hosts)
def host_address(host: str) -> str | None:
    """The IPv4 address a host is written as (`10.0.12.41`) or spells in dashes (`ip-10-0-12-41`); None otherwise."""
    # (an Erlang node's name, `chat@10.0.3.4`, RabbitMQ's `rabbit@10.4.0.7`: a node name at its host, session 55)
    host = host.strip().lower().rpartition("@")[2]
    if _IPV4.match(host):
        return host
    match = _DASHED_IP.match(host)
    return ".".join(match.groups()) if match and all(int(part) <= 255 for part in match.groups()) else None


def names_address(name: str) -> bool:
    """Whether a name is a machine named by its IPv4 address (`svc:10.20.1.77`, session 56): one machine, as specific as a
    request's id (a pattern's later error naming it ties to another incident of the batch naming it)."""
    return name.startswith(SERVICE_NAMED) and host_address(name[len(SERVICE_NAMED):]) is not None


def bare(name: str) -> str:
    """A service's or host's name without what one instance of it adds: a domain
    (`redis-master.cache.svc.cluster.local`), a pod's generated suffix (`billing-7c9d5f6b8-q2xlm`), a
    replica's or ordinal's number (compose's `billing-1`, a StatefulSet's `redis-master-0`)."""
    label = name.lower().split(".")[0]
    plain = INSTANCE.sub("", _POD_SUFFIX.sub("", label)) or label
    # (and the word that says it is a service, `quotes-svc`, `orders-service`: the service `quotes` a URL names)
    return KIND_SUFFIX.sub("", plain) if len(KIND_SUFFIX.sub("", plain)) >= 3 else plain


def service_named(host: str) -> list[str]:
    """The service names a host a line names stands for: its first label, and that label bare."""
    label = host.lower().split(".")[0]
    return list(dict.fromkeys((SERVICE_NAMED + label, SERVICE_NAMED + bare(label))))


def host_named(event: LogEvent, names: set[str] | frozenset[str]) -> bool:
    """Whether `names` (an incident's) name the machine a line was written on (session 55): a host:port's, a URL's or a
    dotted name's host that is its host, or whose first label is its host's (an executor lost `on wn-17.hadoop.lan`
    names the node manager's host `wn-17`)."""
    host = (event.host or "").lower()
    if host in _NOT_A_NAME or ":" in host:
        return False
    label = host if _IPV4.match(host) else host.split(".")[0]
    for name in names:
        kind, _, value = name.partition(":")
        if kind == "hp":
            value = value.rsplit(":", 1)[0]
        elif kind not in ("host", "res") or kind == "res" and "." not in value:
            continue
        if value == host or value == label or not _IPV4.match(value) and value.split(".")[0] == label:
            return True
    return False


# the name a writer's service is said by in an error's words: as a word (a client's `org.elasticsearch.action…` says
# the search server's), or as its server program's, its name and what it is (`etcdserver: request timed out` is etcd's,
# `mysqld` MySQL's)
_PROGRAM_SUFFIXES = ("", "server", "d")


def named_writer(event: LogEvent, names: set[str] | frozenset[str], texts: set[str] | frozenset[str]) -> bool:
    """Whether an incident's errors name the writer of a line: a service their calls named (`names`), or its service's
    one-word name said in their words (`texts`: lower-case words, each set in spaces), alone or as its server program's
    (`etcdserver: mvcc: database space exceeded`, relayed by the API server from etcd): the writer they relay or call.
    A name inside a longer word (`workers`, `kvstoreclient`), of two words or more, or under 4 letters ties nothing."""
    if any(SERVICE_NAMED + i in names for i in identities(event)):
        return True
    name = bare(event.service)
    if len(name) < 4 or not name.isalpha() or name in _NOT_A_NAME:
        return False
    return any(f" {name}{suffix} " in text for suffix in _PROGRAM_SUFFIXES for text in texts)
