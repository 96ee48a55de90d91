"""What an error line names (CONTRACT §2): the things by which `outage.py` ties two errors to one
outage, and what the line's writer is called.

A line names the same host:port, URL host or path, dotted or slashed resource name, quoted or
`key=value` resource, trace or request id, mail address or exception chain another line of the same
failure names, or a service (a host, a compound word). The names are shapes, not words of any log.
Errors of one service also tie by what identifies their failure (an errno, a qualified exception
class, an operation family past any route: `same_service.py`). Its writer is its component (service and
host) and what others call it (`writers.py`); the names it adds to its incident about who wrote it and whom
it named are `writer_names` (where it stands is `leading.side`'s to read); what it says of its failure is `said_by`.
"""
from __future__ import annotations

import re

from pipeline.analyst.subject import EPHEMERAL_PORTS
from pipeline.incidents import name_spellings as spellings
from pipeline.incidents.same_service import same_service_names
from pipeline.incidents.writers import (
    BY, CALLS, CLIENT_NAMED, INSTANCE, IS, KIND_SUFFIX, OF, SERVICE_NAMED, bare, component, host_address, identities, service_named as _service_named,
)
from pipeline.incidents.writers import IP_OR_ADDRESS as _IP
from pipeline.ingest.readable import record_text
from pipeline.state import LogEvent

HEAD_CHARS = 2_000  # names are read from a message's head (bounds the work on hostile lines)
MAX_NAMES = 24  # names kept of one event
# the kinds of name that tell two failures apart: an error naming one destination or resource is
# not the same failure as one naming another (when neither names the other's)
DISTINCT = ("hp:", "host:", "res:")
ADDRESSES = ("hp:", "host:")  # where an error went: a host:port, a URL's host
LABEL = "lbl:"  # a field label and its value a writer wrote (`pid:24`): ties that writer's errors only

# possessive quantifiers (`*+`): a failed match gives nothing back, so a long hostile word costs
# one pass, not one a character
# (a sentence's full stop may end it: `Error 111 connecting to broker:6379.`; a version's dot may not)
_HOST_PORT = re.compile(r"(?<![\w.:/@-])((?:\d{1,3}\.){3}\d{1,3}|[A-Za-z][\w-]*+(?:\.[\w-]++)*+):(\d{2,5})(?!\w|\.\w|:(?!\s|$))")
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*+://(?:[^\s@/]+@)?([^\s/:?#'\"<>]+)(?::(\d{1,5}))?(/[^\s?#'\"<>]*)?", re.I)
_PATH = re.compile(r"(?=/)(?<![\w.:/~@-])(/[A-Za-z_][\w.-]*+(?:/[\w.{}:-]++)++)")
# (a dotted word called, `Servlet.service()`, `Thread.start0(`, is a method: code, no resource)
_DOTTED = re.compile(r"(?<![\w./@:-])([A-Za-z_][\w-]*+(?:\.[A-Za-z_][\w-]*+)++)(?![\w/@(-])")
# (a quote escaped inside a quoted value, klog's `err="... \\"registry.io/app:v1\\": ..."`, quotes it too)
_QUOTED = re.compile(r"""['"`]([A-Za-z][\w.:/-]*+)\\*['"`]""")
# an IPv4 address alone in quotes (`server on '10.20.1.77'`)
_QUOTED_IP = re.compile(r"""(?<![\w.])['"`]((?:\d{1,3}\.){3}\d{1,3})['"`]""")
# a product and its version (RFC 9110's `product/version`: a user agent's `Mozilla/5.0`, `python-requests/2.31`):
# what a client is, said alike by every request of every client of that kind, no place a failure is about
_PRODUCT = re.compile(r"^[A-Za-z][\w.-]*/v?\d+(?:\.[\w-]+)*$")
_KEY_VALUE = re.compile(r"\b([A-Za-z][\w.-]*+)=\"?([A-Za-z][\w.:/-]*+)")
# a mail address (`<ana@example.org>`, `'ana@example.org'`): the message or account a failure was about,
# named alike by the sender that failed and the relay that refused it
_MAIL = re.compile(r"(?<![\w.+-])([A-Za-z0-9][\w.+-]{0,63}@[A-Za-z0-9-]++(?:\.[A-Za-z0-9-]++)++)(?![\w@-])")
_HOST_KEY = re.compile(r"^(?:host|hostname|server_name|server\.address|peer)$", re.I)
# a process id a writer's lines name with a space (uWSGI's `worker 3 (pid: 19, try: 1)`, `worker 3 (pid: 19) died`)
_PID = re.compile(r"\bpid:\s+(\d+)\b", re.I)
# klog's object references (`pod="ns/name"`, an Event's `object="ns/name"`): the pod a kubelet's or a
# controller's line is about; it speaks for that pod's service
_OBJECT_KEYS = frozenset({"pod", "object"})
_OBJECT_REF = re.compile(r"\b(?:pod|object)=\\*\"([a-z0-9][\w.-]*)/([a-z0-9][\w.-]*)\\*\"")
_ID_KEY = re.compile(r"(?:trace|span|request|req|correlation|transaction|job|task)[_.-]?id$", re.I)
ID = "id:"  # a trace or request id, a mail address: one request's or message's story
# (a field's key is no name: logfmt's `trace_id=`, JSON's `"dur_ms":`)
_COMPOUND = re.compile(r"(?<![\w.-])([A-Za-z][A-Za-z0-9]*+(?:[-_][A-Za-z0-9]++)++)(?![\w-]|\"?\s*=|\"\s*:)")
LONG_WORD = re.compile(r"\S{160,}")
FRAME = re.compile(r"(?m)^[ \t]+at [^\n]*")  # a stack frame (Java, JavaScript, .NET)
_CONSTANT = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
_WORD = re.compile(r"[A-Za-z][\w.-]{2,}")
_CAUSED_BY = re.compile(r"(?:^|\n)\s*Caused by:\s*([\w.$]+)")
# a qualified class (a logger column's `o.s.b.SpringApplication`, `c.s.intake.OrderPublisher`, an exception):
# lower-case packages, a capitalised last name; the class that logged or raised, no resource a failure is about
_CLASS_NAME = re.compile(r"(?:[a-z_][\w]*\.)+[A-Z][A-Za-z0-9_$]*[a-z][A-Za-z0-9_$]*")
_VARIABLE = re.compile(r"^(?:\d+|[0-9a-f]{8,}|[0-9a-f-]{36}|\{[^}]*\}|:\w+)$", re.I)
_HTTP_STATUS = range(100, 600)
# a gRPC method's full name, as the protocol spells it (`/{package}.{Service}/{Method}`,
# grpc/doc/PROTOCOL-HTTP2.md): its package's first segment is the called service's name
_GRPC_METHOD = re.compile(r"(?<![\w/.])/([a-z_][a-z0-9_]*)(?:\.[A-Za-z_]\w*)*\.[A-Z]\w*/[A-Z]\w*\b")
# structured fields that name the service called (OpenTelemetry's semantic conventions: `peer.service`,
# `rpc.service`, `server.address`, `net.peer.name`, `destination.address`)
_PEER_KEY = re.compile(r"(?:^|[._])(?:peer\.service|rpc\.service|server\.address|net\.peer\.name|"
                       r"destination\.(?:address|domain))$", re.I)
# a class named after the service it calls (`GeoIndexClient`, .NET's typed `InventoryClient`, a generated
# `PaymentsServiceClient`): its words before `Client`, hyphenated, are that service's name (`bare` drops `-service`); a
# one-word name of four letters or fewer (`HttpClient`, `RestClient`, `WebClient`) is a protocol's or a framework's client
_CLIENT_CLASS = re.compile(r"(?<![A-Za-z0-9])((?:[A-Z][a-z0-9]+){2,}|[A-Z][a-z0-9]{4,})Client\b")
_WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_NAME_VALUE = re.compile(r"[A-Za-z][\w.-]{1,200}$")
# structured fields a server writes naming the client application it served (PostgreSQL's `application_name`, MySQL's
# `program_name` connection attribute, MongoDB's `appName`, a generic `client_app`)
_CLIENT_KEY = re.compile(r"(?:^|[._])(?:application_?name|app_?name|program_name|client_?app(?:lication)?)$", re.I)
# structured fields that carry an error or where it went (their last key segment): `err`, `error.message`
ERROR_KEY = re.compile(r"(?:^|[._])(?:err|error|errors|exception|cause|reason|detail|upstream|url|uri|peer|remote|method|"
                        r"address|addr|endpoint|target|server|broker|redis|database|db|topic|queue)(?:\.message)?$", re.I)
# a stack's exception lines: Java's `Caused by: x.Y: msg`, a traceback's `pkg.Error: msg`
STACK_ERROR = re.compile(r"(?m)^\s*(?:Caused by:\s*)?(?:[A-Za-z_$][\w$]*\.)*[A-Z][\w$]*(?:Exception|Error|Fault)\b:? .*$"
                          # a traceback's last line names its class qualified, whatever it ends in
                          # (`psycopg2.errors.DiskFull: could not extend file ...`)
                          r"|^(?:[a-z_][\w]*\.)+[A-Z][\w]*: .*$")
_UNIX_SOCKET = re.compile(r":(/[^\s:?#'\"<>]+)")  # the socket's path after `unix:` in a URL
_FILE = re.compile(r"/[^/]*[A-Za-z0-9]\.[A-Za-z][\w]{0,7}$")


def holds_any(lowered: str, stems: tuple[str, ...]) -> bool:
    """Whether `lowered` holds one of `stems`: the cheap test before a search, on the incident rules' hot path."""
    for stem in stems:  # a plain loop: any() over a generator cost half as much again, on most context lines
        if stem in lowered:
            return True
    return False


def first_line(message: str) -> str:
    return next((line for line in message.splitlines() if line.strip()), "")


def named_things(event: LogEvent) -> frozenset[str]:
    """What an error line names that another line of the same failure may name too: `hp:`
    host:port, `host:` a URL's host, `path:` a URL or route path (its variable segments dropped),
    `file:` a file's path on the line's host, `lbl:` a field label and its value (`pid:24`) of the line's writer,
    `res:` a dotted, quoted or key=value resource, `id:` a trace or request id (or one request by method and path), `exc:` an exception
    chain (two classes or more), `svc:` a service the line names (a host, a compound word)."""
    # no named thing is a word of hundreds of characters; cutting them bounds the regexes' work on
    # hostile lines (their backtracking grows with a word's length)
    text = LONG_WORD.sub(" ", "\n".join([said_by(event)[:HEAD_CHARS * 2], *spellings.named_fields(event)]))
    names: list[str] = []
    for match in spellings.HOST_COMMA_PORT.finditer(text):  # `server at "db" (172.18.0.3), port 5432`
        for host in (match.group(1), match.group(2)):
            if host:
                names.append(f"hp:{host.lower()}:{match.group(3)}")
        if not match.group(1)[0].isdigit():  # the host a service names, as for `db:5432`
            names.extend(_service_named(match.group(1)))
    for match in spellings.HOST_KW_PORT.finditer(text):  # `HTTPConnectionPool(host='billing', port=8080)`
        names.append(f"hp:{match.group(1).lower()}:{match.group(2)}")
        if not match.group(1)[0].isdigit():
            names.extend(_service_named(match.group(1)))
    for match in _GRPC_METHOD.finditer(text):  # `/inventory.v1.Inventory/Reserve`
        names.extend(_service_named(match.group(1)))
    logger = event.fields.get("logger")  # (the class that wrote the line, a logger column's, says it as well)
    for match in _CLIENT_CLASS.finditer(f"{text}\n{logger}" if isinstance(logger, str) else text):  # (session 55)
        called = _WORD_START.sub("-", match.group(1)).lower()
        names.extend(dict.fromkeys((CALLS + called, CALLS + bare(called))))
    for key, value in event.fields.items():
        if isinstance(value, str) and _PEER_KEY.search(key) and _NAME_VALUE.match(value) and not _IP.search(value):
            names.extend(_service_named(value))
        elif isinstance(value, str) and _CLIENT_KEY.search(key) and _NAME_VALUE.match(value) and not _IP.search(value):
            names.extend(dict.fromkeys((CLIENT_NAMED + value.lower(), CLIENT_NAMED + bare(value))))
    if event.trace_id:
        names.append(f"id:{event.trace_id}")
    for match in _URL.finditer(text):
        host, port, path = match.group(1).lower(), match.group(2), match.group(3)
        if host == "unix" and not port and (socket := _UNIX_SOCKET.match(text, match.end(1))):
            # a Unix socket written as a URL (nginx's `http://unix:/app/tmp/sockets/puma.sock:/stores/88`): a file on the
            # writer's host, no host called `unix`
            names.append(f"file:{event.host or ''}:{socket.group(1).lower()}")
            continue
        names.append(f"hp:{host}:{port}" if port else f"host:{host}")
        if not host[0].isdigit() and not host.startswith("["):
            names.extend(_service_named(host))
        elif port and host_address(host):
            names.append(SERVICE_NAMED + host)  # the machine at that address: a writer whose host it is (`ip-10-0-12-41`)
        if path and (route := _route(path)):
            names.append(f"path:{route}")
    text_no_urls = _URL.sub(" ", text)
    for match in _HOST_PORT.finditer(text_no_urls):
        host, port = match.group(1).lower(), int(match.group(2))
        if port in _HTTP_STATUS and "." not in host and not host.isdigit():
            continue  # status:503, not a host
        if _is_label(host, text_no_urls[:match.start()]):
            # `(pid:24)`, `[size:50; busy:50]`, `Manager:450`: a field or a line number, its writer's own
            names.append(f"{LABEL}{component(event)}|{host}:{port}")
            continue
        names.append(f"hp:{host}:{port}")
        if not host[0].isdigit():
            names.extend(_service_named(host))
        elif host_address(host):
            names.append(SERVICE_NAMED + host)
    names.extend(f"{LABEL}{component(event)}|pid:{m.group(1)}" for m in _PID.finditer(text_no_urls))
    for host, port in spellings.addresses(text_no_urls):  # `27000@lic01`, `Data Source=SQLPROD01\ORDERS`
        names.extend([*([f"hp:{host}:{port}"] if port else []), *(_service_named(host) if host[0].isalpha() else [])])
    for host in spellings.clients(text_no_urls):  # `MAIL from helpdesk-1.internal[10.3.4.8]`: the client it served
        names.extend(dict.fromkeys((CLIENT_NAMED + host, CLIENT_NAMED + bare(host))))
    for match in _PATH.finditer(text_no_urls):
        if route := _route(match.group(1)):
            # a file (its last segment has an extension) is the host's own; a route is the service's
            names.append(f"file:{event.host or ''}:{route}" if _FILE.search(route) else f"path:{route}")
    # a stack frame's `at Object.writeSync (node:fs:927:3)`, `at com.shop.Repo.find(Repo.java:45)` names code, no
    # resource a failure is about
    for match in _DOTTED.finditer(FRAME.sub(" ", text_no_urls)):
        token = match.group(1).rstrip(".").lower()
        if token.count(".") and len(token) >= 5 and not _CLASS_NAME.fullmatch(match.group(1)):
            names.append(f"res:{token}")
            names.extend(f"res:{short}" for short in spellings.unqualified(token))
    for match in _QUOTED.finditer(text_no_urls):
        # a name with parts, not a word in quotes nor a client's product and version (`"okhttp/4.12.0"`)
        if any(c in match.group(1) for c in "-_.:/") and not _PRODUCT.match(match.group(1)) \
                and not spellings.is_json_key(text_no_urls, match.start(), match.end()):
            names.append(f"res:{match.group(1).lower()}")
    for match in _QUOTED_IP.finditer(text_no_urls):
        # (session 56) a server's IPv4 address alone in quotes (MySQL's `Can't connect to MySQL server on '10.20.1.77'`):
        # the machine at that address, as `10.20.1.77:3306` names it
        if host_address(match.group(1)) and not match.group(1).startswith(("0.", "127.")):
            names.append(SERVICE_NAMED + match.group(1))
    for match in _MAIL.finditer(text_no_urls):
        address = match.group(1).rstrip(".").lower()
        if address.rsplit(".", 1)[-1].isalpha():  # a domain, not `user@10.0.3.11` (a connection's peer)
            names.append(f"id:{address}")
    for match in _KEY_VALUE.finditer(text):
        key, value = match.group(1), match.group(2).rstrip(".,;:")
        if _ID_KEY.search(key):
            names.append(f"id:{value}")
        elif _HOST_KEY.search(key) and "." in value and not _IP.search(value) and value.lower() != (event.host or "").lower():
            # `host=api.partner.example`: the host a call went to, as a URL to it names it
            names.append(f"host:{value.lower().rstrip('.')}")
            names.extend(_service_named(value))
        elif key.lower() in _OBJECT_KEYS and value.count("/") == 1:
            # klog's object reference `pod="platform/notifications-6f9d7c-k2x8p"` (namespace/name): the line is
            # about that pod, whose service its callers name (`notifications.platform.svc...`)
            names.extend(_service_named(value.split("/")[1]))
        elif any(c in value for c in "-_.:/") and not _VARIABLE.match(value) and not _PRODUCT.match(value):
            names.append(f"res:{value.lower()}")
    names.extend(f"id:{i}" for i in spellings.written_ids(text))  # `"trace_id":"7a1d..."`, `trace_id=9c3f...`
    names.extend(f"id:{r}" for r in spellings.requests(text))  # `GET /products/912`: one request, at each hop
    own_names: frozenset[str] = frozenset()
    for match in _COMPOUND.finditer(text_no_urls):
        # (`HikariPool-1`: a process's own; `DEADLINE_EXCEEDED`: a status every failure of its kind says)
        if INSTANCE.search(match.group(1)):
            # a process's own numbered thing (its pool `HikariPool-1`, an instance it names; not its own host's name,
            # which its header may write on every line) ties its writer's errors naming it: the pool's initialisation
            # refused, then its requests timed out
            if match.group(1).lower() not in (own_names := own_names or identities(event)):
                names.append(f"{LABEL}{component(event)}|{match.group(1).lower()}")
        elif not _CONSTANT.fullmatch(match.group(1)):
            names.append(SERVICE_NAMED + match.group(1).lower())
            if KIND_SUFFIX.search(match.group(1)):  # `quotes-svc`: the service `quotes`
                names.append(SERVICE_NAMED + bare(match.group(1)))
    chain = _exception_chain(event)
    if len(chain) >= 2:
        names.append("exc:" + ">".join(chain))
    names.extend(same_service_names(event, first_line(event.message)[:HEAD_CHARS], text, chain))
    # a dotted host named with its port is the host a URL without one or a bare word names (`quotes.example.com:443`
    # and `(quotes.example.com)`): one name written two ways
    names.extend(f"host:{n[3:].rsplit(':', 1)[0]}" for n in list(names)
                 if n.startswith("hp:") and "." in n and not n[3:].rsplit(":", 1)[0].replace(".", "").isdigit())
    # a writer naming itself (its own host:port, its pod's DNS name) names no other service
    own = {p + i for i in identities(event) for p in (SERVICE_NAMED, CALLS)}
    return frozenset(n for n in dict.fromkeys(names) if n not in own and len(n) < 200)


def went_to(names: set[str] | frozenset[str], *, services: bool = False) -> bool:
    """Whether an error's names say where it went: a host:port or URL host (`services`: or a service), not a client's
    own socket, an IPv4 address on an ephemeral port (session 56: the peer a server answered, uvicorn's `10.30.1.2:51122
    - "POST /v1/media HTTP/1.1" 500`, and that address as a machine)."""
    clients = {host for n in names if n.startswith("hp:") for host, _, port in [n[3:].rpartition(":")]
               if port.isdigit() and int(port) >= EPHEMERAL_PORTS and host_address(host)}
    kinds = (*ADDRESSES, SERVICE_NAMED) if services else ADDRESSES
    return any(n.startswith(kinds) and n.split(":", 1)[1].rpartition(":")[0 if n.startswith("hp:") else 2] not in clients
               for n in names)


def values(names: set[str] | frozenset[str], kinds: tuple[str, ...]) -> set[str]:
    """The values of `names` of the given kinds, without their kind (`res:ephemeral-storage` → `ephemeral-storage`)."""
    return {n.split(":", 1)[1] for n in names if n.startswith(kinds)}


def writer_names(event: LogEvent, things: list[str]) -> list[str]:
    """The names an error adds to its incident about who wrote it and whom it named: `is:` each of
    its writer's identities (a caller's error naming one ties to it), `of:service|identity`, and
    `by:service|named` for each service it names (`side` reads them)."""
    service = event.service.lower()
    # a line about a pod (klog's `pod="ns/name"`) speaks for it: its callers are callers of this writer
    mine = identities(event) | {bare(m.group(2)) for m in _OBJECT_REF.finditer(event.message[:HEAD_CHARS])}
    return [*(IS + i for i in mine), *(f"{OF}{service}|{i}" for i in mine),
            *(f"{BY}{service}|{n.split(':', 1)[1]}" for n in things if n.startswith((SERVICE_NAMED, CALLS))),
            # (the client a server says it served calls that server)
            *(f"{BY}{n[len(CLIENT_NAMED):]}|{service}" for n in things if n.startswith(CLIENT_NAMED))]


# A one-label name (no dot, no dash: not an IP, not `localhost`) before `:digits` is as often a
# logger's field label with its value (`Worker (pid:24)`, `[size:50; busy:50]`, `UID:1000`, a Java
# class and its line `Manager:450`) as a bare host (a compose service's `db:5432`). It is read as a
# host only where a line writes an address: the line's (or a field value's) start, in quotes (Envoy's
# `"checkout:8080"` upstream column), or after the word that leads an address in the clients' own
# errors (pgjdbc `Connection to db:5432 refused`, redis-py `connecting to redis:6379`, Go `dial tcp
# db:5432`, `from flagd:8013`, `upstream: api:8080`, `addr=db:5432`): the last part of that word.
_ADDRESS_LEAD = frozenset({"to", "from", "at", "via", "tcp", "udp", "connect", "connecting", "dial",
                           "dialing", "reach", "reaching", "host", "hostname", "server", "upstream", "peer",
                           "remote", "endpoint", "address", "addr", "backend", "target", "proxy", "broker"})
_LAST_WORD = re.compile(r"([A-Za-z0-9]+)[^\w\n]*$")


def _is_label(host: str, before: str) -> bool:
    """Whether `host:port` read at the end of `before` is a field label and its value, not an address."""
    if "." in host or "-" in host or host == "localhost" or host[0].isdigit():
        return False  # a dotted or dash-separated hostname, an IP, localhost: an address anywhere
    line = before[before.rfind("\n") + 1:][-80:]
    if not line.strip() or line[-1:] in "\"'":
        return False  # a line or field value that starts with it, a quoted address
    last = _LAST_WORD.search(line)
    return not (last and last.group(1).lower() in _ADDRESS_LEAD and line[last.end(1):].strip() in ("", ":", "=", ":="))


def masked_line(event: LogEvent) -> str:
    """An event's first line with its variable parts masked: the same line logged again, at any
    level, reads the same."""
    from pipeline.incidents.correlation import template  # correlation imports nothing of this module

    return template(first_line(event.message)[:HEAD_CHARS])


def carries_error_fields(event: LogEvent) -> bool:
    """Whether a line's structured fields carry its error or where it went (`said_by` reads them):
    what its message's template does not hold."""
    return any(isinstance(v, str) and ERROR_KEY.search(k) for k, v in event.fields.items())


def said_by(event: LogEvent) -> str:
    """What an error line says of its failure: its message, the error its structured fields carry
    (`err=...`, `"error": {...}`, a destination: `upstream`, `redis`...), and the exception lines of
    its stack (`Caused by: ...: Connection to db:5432 refused`, a traceback's last line)."""
    parts = [event.message[:HEAD_CHARS]]
    if event.message.startswith('{"') and (record := record_text(first_line(event.message)[:HEAD_CHARS])):
        # a JSON object's text the reader could not take apart (no message key, cut off): its pairs as `key=value` words,
        # which a text written without a space (`{"url":"/account/orders","origin":"origin.acme.com",…}`) is not
        parts.append(" ".join(f"{k}={v}" for k, v in list(record.items())[:24] if isinstance(v, (str, int, float))))
    for key, value in event.fields.items():
        if isinstance(value, str) and len(parts) < 12 and ERROR_KEY.search(key):
            parts.append(value[:HEAD_CHARS // 2])
        elif isinstance(value, dict) and ERROR_KEY.search(key):
            # an error object's own fields (pino's `"err": {"url": "http://billing.payments:3000/charges"}`)
            parts.extend(f"{k}={v[:HEAD_CHARS // 2]}" for k, v in list(value.items())[:6] if isinstance(v, str))
    if event.stack:
        parts.extend(m.group(0)[:400] for _, m in zip(range(8), STACK_ERROR.finditer(event.stack[:20_000])))
    return "\n".join(parts)


def words(event: LogEvent) -> frozenset[str]:
    """The words of an error's first line that may be another service's name (lower-case)."""
    head = LONG_WORD.sub(" ", first_line(event.message)[:300].lower())
    return frozenset(w.rstrip(".:") for w in _WORD.findall(head)) - {event.service.lower()}


_CLOSERS = {")": "(", "]": "[", "}": "{"}


def _route(path: str) -> str | None:
    """A path's fixed segments (ids and numbers dropped); None when fewer than two remain."""
    path = path.rstrip(".:,;")
    while path[-1:] in _CLOSERS and path.count(_CLOSERS[path[-1]]) < path.count(path[-1]):
        # the bracket that closed around a URL (`… (https://geo.example/v1/geocode)`), not the path's own
        path = path[:-1].rstrip(".:,;")
    segments = [s for s in path.strip("/").split("/") if s and not _VARIABLE.match(s)]
    return "/" + "/".join(segments).lower() if len(segments) >= 2 else None


def _exception_chain(event: LogEvent) -> list[str]:
    chain = [event.exception] if event.exception else []
    for text in (event.message[:HEAD_CHARS], (event.stack or "")[:20_000]):
        chain.extend(_CAUSED_BY.findall(text))
    return list(dict.fromkeys(c.strip() for c in chain if c and c.strip()))
