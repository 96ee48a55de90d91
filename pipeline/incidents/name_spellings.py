"""Names written another way than `line_names.py` first reads them (CONTRACT §2, session 49): a server written
`port@host` (license managers' clients: FlexNet's and RLM's `27000@lic01`), a host and its address as Java's
`InetSocketAddress` writes them (`kafka-1/10.0.0.5:9092`: the host's port and the IP's, one server), a SQL Server named instance
written `host\\instance` after the word that leads a server (`Data Source=SQLPROD01\\ORDERS`, `server 'sql-01\\orders'`), a trace or request id written as a
JSON pair inside a message (`"trace_id":"7a1d..."`) or opening with a digit (`trace_id=9c3f...`), a JSON
object's key in quotes (`{"dur_ms":`), which names nothing, a qualified resource's own name (`warehouse.daily_agg`
is the table `dag=daily_agg` names), and the name of where an error went written in a field of its own
(Temporal's `wf-task-queue-name`, `topic_name`, `db.name`), a client a server names with its address in brackets
(session 53: Postfix's `reject: MAIL from helpdesk-1.internal[10.3.4.8]`), and a host and its port written apart (`server at "db"
(172.18.0.3), port 5432`, urllib3's `HTTPConnectionPool(host='billing', port=8080)`).
"""
from __future__ import annotations

import re
from typing import Iterator

from pipeline.state import LogEvent

# a qualified name's last part, a compound word (`daily_agg`, `order-events`): a name of its own, not a common word
_COMPOUND_LAST = re.compile(r"\.([a-z][a-z0-9]*[_-][a-z0-9][\w-]{2,})$")
# structured fields that carry the name of where an error went: names, not what the error says
_NAME_KEY = re.compile(r"(?:^|[._-])(?:topic|queue|database|db|bucket|table|index|stream)[._-]name$", re.I)
_ID_WORD = r"(?:trace|span|request|req|correlation|transaction)[_.-]?id"
# a host and its port written apart: `server at "db" (172.18.0.3), port 5432`, `host db port 5432`
HOST_COMMA_PORT = re.compile(r"""\b(?:host|server)(?: at)? ["']?([A-Za-z0-9][\w.-]*)["']?(?: \(([\d.]+|[0-9a-f:]+)\))?,? port (\d{2,5})\b""",
                             re.I)
# a host and its port as keyword arguments or fields: urllib3's `HTTPConnectionPool(host='billing', port=8080)`
# (Python's repr of its arguments), logfmt's `host=db port=5432`
HOST_KW_PORT = re.compile(r"""\bhost\s*[=:]\s*["']?([A-Za-z0-9][\w.-]*)["']?[,;]?\s+port\s*[=:]\s*["']?(\d{2,5})\b""", re.I)
# a server written `port@host`: the host's port, as `lic01:27000` says it
_PORT_AT_HOST = re.compile(r"(?<![\w.@-])(\d{2,5})@([A-Za-z][\w-]*+(?:\.[\w-]++)*+)(?![\w@-])")
# a named instance after the word that leads a server (not a `DOMAIN\\user` login nor a Windows path)
_HOST_INSTANCE = re.compile(r"\b(?:server|data source|instance|host)\s*[=:]?\s*['\"]?([A-Za-z][\w.-]{1,62})\\{1,2}[A-Za-z]\w*",
                            re.I)
_HOST_SLASH_IP = re.compile(r"(?<![\w.:/@-])([A-Za-z][\w-]*+(?:\.[\w-]++)*+)/((?:\d{1,3}\.){3}\d{1,3}):(\d{2,5})\b")
# a peer written as its name and its address in brackets, as mail servers write the client they served (Postfix's
# `reject: MAIL from helpdesk-1.internal[10.3.4.8]`, `connect from app-2.corp[10.0.0.7]`): a dotted name, not `unknown`
_HOST_BRACKET_IP = re.compile(r"(?<![\w.:/@-])([A-Za-z][\w-]*+(?:\.[\w-]++)++)\[(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9a-fA-F:]{2,39})\]")
_ID_PAIR = re.compile(r"\b" + _ID_WORD + r"=\"?(\d[\w.:-]{5,127})", re.I)
_JSON_ID = re.compile(r'"' + _ID_WORD + r'"\s*:\s*"([\w.:-]{6,128})"', re.I)
# a field or a written key whose name ends as an id's does (`trace_id`, `request_id=`, `"trace_id":`)
_ID_KEY = re.compile(r"(?:trace|span|request|req|correlation|transaction|job|task)[_.-]?id$", re.I)
_ID_KEY_WRITTEN = re.compile(r"(?:trace|span|request|req|correlation|transaction|job|task)[_.-]?id\"?\s*[=:]", re.I)


def addresses(text: str) -> Iterator[tuple[str, str]]:
    """Each (host, port) a text writes as `port@host` or `host/IP:port` (and the IP's), and each (host, "") of a
    named instance `host\\instance`."""
    for match in _PORT_AT_HOST.finditer(text):
        yield match.group(2).lower(), match.group(1)
    for match in _HOST_INSTANCE.finditer(text):
        yield match.group(1).lower(), ""
    for match in _HOST_SLASH_IP.finditer(text):  # `kafka-1/10.0.0.5:9092`: the host's port, the IP's port
        yield match.group(1).lower(), match.group(3)
        yield match.group(2), match.group(3)


def clients(text: str) -> list[str]:
    """The hosts a text names as a peer it served, written with their address in brackets (`helpdesk-1.internal[10.3.4.8]`):
    each host's first label (the client that connected, not a service called)."""
    return [m.group(1).lower().split(".")[0] for m in _HOST_BRACKET_IP.finditer(text)]


def written_ids(text: str) -> list[str]:
    """The trace or request ids a text writes as a JSON pair, or after `key=` opening with a digit."""
    return [m.group(1) for pattern in (_JSON_ID, _ID_PAIR) for m in pattern.finditer(text)]


def is_json_key(text: str, start: int, end: int) -> bool:
    """Whether the quoted word at text[start:end] is a JSON object's key (`{"trace_id":`, `, "dur_ms":`)."""
    return text[end:end + 2].lstrip()[:1] == ":" and text[max(0, start - 2):start].rstrip()[-1:] in ("{", ",")


def may_carry_id(event: LogEvent, head: int) -> bool:
    """Whether a line may name a trace or request id, by a cheap look: its trace id, a field or a written key
    whose name ends as an id's does (the first `head` characters of its message)."""
    return bool(event.trace_id) or any(_ID_KEY.search(k) for k in event.fields) \
        or bool(_ID_KEY_WRITTEN.search(event.message[:head]))


def unqualified(token: str) -> list[str]:
    """A dotted resource's last part when it is a compound word (`warehouse.daily_agg` -> `daily_agg`)."""
    match = _COMPOUND_LAST.search(token)
    return [match.group(1)] if match else []


def named_fields(event: LogEvent) -> list[str]:
    """The values of a line's fields that name where its error went (`wf-task-queue-name=order-fulfillment`)."""
    return [v[:200] for k, v in event.fields.items() if isinstance(v, str) and _NAME_KEY.search(k)][:4]


# one request as each hop writes it: its method and its path, the path holding an id (`GET /products/912` in a front
# door's access line and in the service's own `GET /products/912 failed`): that request's story, as a request id is
_REQUEST = re.compile(r"\b(GET|HEAD|POST|PUT|PATCH|DELETE)\s+(/[^\s?#\"'<>]{1,200})")
# a path segment that is an id: a number, or a word holding two digits or more (`912`, `c-881`, `u-4401`), not a version (`v2`)
_ID_SEGMENT = re.compile(r"^(?!v\d+$)(?=(?:\D*\d){2})[\w.~-]+$|^\d+$", re.I)


def requests(text: str) -> Iterator[str]:
    """The requests a text names by method and a path holding an id (`GET /products/912`), as `METHOD /path`."""
    for match in _REQUEST.finditer(text):
        path = match.group(2).rstrip(".:,;)")
        segments = [s for s in path.split("/") if s]
        if segments and any(_ID_SEGMENT.match(s) for s in segments) and not _FILE_NAME.search(path):
            yield f"{match.group(1)} {path.lower()}"


_FILE_NAME = re.compile(r"\.[A-Za-z][\w]{0,7}$")  # a file served (`/static/main.3f1c.css`): no one request's story
