"""Errors one client made or met, and a start that came good (CONTRACT §2, session 59): what a healthy service
writes about the requests of its clients, not about itself.

- `answered_own_4xx`: an error whose request was answered 4xx within a second after, by its own writer (or an access
  line, when nothing was answered 5xx then): the client's request refused for what it sent (a validation error, a
  declined card, an expired token), nothing broken on this side;
- `stranger`: a handshake or a login that a client on the public internet failed, said by the server that refused
  it (a scanner's TLS probe, a password guessed), when no client inside the network fails the same way;
- `client_left`: a server's error saying the client it served went away (Tomcat's `ClientAbortException`, a
  WebSocket closed 1006 `abnormal closure` or 1001 `going away`, a socket.io `ping timeout`);
- `start_resolved`: a failure to reach a dependency that its writer then says it is ready, started or connected,
  with no error of its own after that within the burst window (a startup race that resolved).

Each holds for logs nobody here has seen by what the line says of whose failure it is (the client's own request,
address or connection), never by a service's or a library's name; an error that also says a failure of this side
(a timeout, a refusal, an exhausted resource, an upstream) is not read as any of these.
"""
from __future__ import annotations

import bisect
import ipaddress
import re
from datetime import datetime, timedelta

from pipeline.analyst.subject import EPHEMERAL_PORTS
from pipeline.incidents.line_names import HEAD_CHARS, first_line, holds_any, masked_line, named_things
from pipeline.incidents.recovery import status_of
from pipeline.incidents.writers import SERVICE_NAMED, component, named_writer, process
from pipeline.state import LogEvent

# a failure of this side, whatever else the line says: the request was not refused for what the client sent
_OUR_FAILURE = re.compile(r"time[d ]?\s?out|timeout|refused|unavailable|unreachable|exhausted|no space|too many open|"
                          r"upstream|backend|internal server|panic|fatal error|out of memory|deadlock|"
                          r"could not connect|failed to connect|connection (?:lost|closed|reset)|no route", re.I)

OWN_ANSWER_SECONDS = 1  # the request an error was written for is answered within a second of it
# a request and its answer as a framework's request log writes them bare (`POST /api/signup 400 4ms`,
# `"GET /wp-login.php HTTP/1.1" 404 153`): the path, then the status
_ANSWER = re.compile(r"\b(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (/[^\s\"]*)(?: HTTP/[\d.]+\"?)? ([1-5]\d\d)\b")
_PATH_WORD = re.compile(r"(?<![\w/:.])(/[\w.~%-]+(?:/[\w.~%-]+)*)")


def _answer(event: LogEvent) -> tuple[int | None, str | None]:
    """The status a line answers a request with and the request's path (None when it says none)."""
    head = first_line(event.message)[:HEAD_CHARS]
    match = _ANSWER.search(head) if "/" in head else None
    status = status_of(event)
    if match is not None:
        return (status if status is not None else int(match.group(2))), match.group(1).split("?")[0].lower()
    return status, None


def answered_own_4xx(errors: list[LogEvent], others: list[LogEvent], minutes: float) -> set[int]:
    """The errors (by `id`) answered 4xx (not 408: the server gave up waiting) within `OWN_ANSWER_SECONDS` after, by
    a line of the error's own component (`POST /api/signup 400 4ms` after `signup rejected: email must be …`), or by
    any line answering a request then (an edge's access line, `"GET /api/me HTTP/1.1" 401`) when the error names no
    path, host:port or URL host of its own or names the path answered (`Not Found: /wp-login.php`, then its 404);
    never when a request was answered 5xx in that second, nor when the error says a failure of this side
    (`_OUR_FAILURE`), nor when the same words of its service are said again within the burst window unanswered (one
    request's failure does not recur). Unlike expected.answered_4xx, the error need not name the path: the answer
    that follows it at once is its request's."""
    answers: list[tuple[datetime, str, int, str | None]] = []
    window = timedelta(seconds=OWN_ANSWER_SECONDS)
    times = sorted(e.time for e in errors)
    for event in others:
        at = bisect.bisect_left(times, event.time - window)
        if at == len(times) or times[at] > event.time:
            continue  # no error in the second before it (most lines: their status is not read)
        status, path = _answer(event)
        if status is not None and 400 <= status < 600 and status != 408:
            answers.append((event.time, component(event), status, path))
    if not answers:
        return set()
    found = set()
    for event in errors:
        near = [(writer, status, path) for t, writer, status, path in answers if event.time <= t <= event.time + window]
        if not near or any(status >= 500 for _, status, _ in near) or _answer(event)[0] is not None:
            continue
        head = first_line(event.message)[:HEAD_CHARS]
        if _OUR_FAILURE.search(head) or _OUR_FAILURE.search(event.exception or ""):
            continue
        own, paths = component(event), {p.split("?")[0].lower() for p in _PATH_WORD.findall(head)}
        if any(writer == own or path in paths for writer, _, path in near) or not _goes_somewhere(event):
            found.add(id(event))
    if not found:
        return found
    # (one request's failure does not recur unanswered: the same words of the same service said again within the burst
    # window and not answered 4xx at once, a webhook's signature failing for every delivery, are a failure of its own)
    said: dict[tuple[str, str], list[LogEvent]] = {}
    for event in errors:
        said.setdefault((event.service or "", masked_line(event)), []).append(event)
    window = timedelta(minutes=minutes)
    return {i for i in found if not any(
        id(other) not in found and abs(other.time - event.time) <= window
        for event in (e for e in errors if id(e) == i)
        for other in said[(event.service or "", masked_line(event))])}


def _goes_somewhere(event: LogEvent) -> bool:
    """Whether an error names a path, a host:port or a URL host of its own (a call it made, a request it names)."""
    names = named_things(event)
    return any(n.startswith(("hp:", "host:", "path:")) for n in names) or " /" in first_line(event.message)[:HEAD_CHARS]


# the client a server names as the one it served: `from 45.148.10.81`, `client: 94.102.61.7`, `rhost=…`, `remote_addr=…`
_CLIENT_ADDRESS = re.compile(r"\b(?:from|client:?|rhost=|remote_?addr[=:]|remote[=:]|peer[=:])\s*\[?"
                             r"((?:\d{1,3}\.){3}\d{1,3})\b", re.I)
# what a client presents and a server refuses: a handshake, a password, a user, its credentials or certificate
_PRESENTED = re.compile(r"handshak|\bssl\b|\btls\b|password|invalid user|authenticat|credential|\blogin\b|"
                        r"certificate|\bpreauth\b", re.I)
# a state of this side's own certificate (the server's expired or revoked one is its outage, whoever meets it)
# (or the platform refusing this side's own process: EACCES's text, `Permission denied in replay cache code`)
_THIS_SIDES = re.compile(r"expired|revoked|not yet valid|permission denied", re.I)
CONNECTION_SECONDS = 10  # a stranger's connection: its lines are written within seconds of each other
_STRANGER_STEMS = ("handshak", "ssl", "tls", "password", "invalid user", "authenticat", "credential", "login",
                   "certificate", "preauth")


def stranger(errors: list[LogEvent]) -> set[int]:
    """The errors (by `id`) saying that a client on the public internet (`_CLIENT_ADDRESS`, a global address) failed
    a handshake or a login (`_PRESENTED`): a scanner probing the TLS port, a password guessed at sshd. Not when the
    error says a failure of this side, its certificate's state (expired, revoked) or the platform denying its own
    process (`Permission denied`), nor when a client of a private address fails in the same words on the same
    component in the batch (then the service refuses its own clients: an outage)."""
    candidates: list[tuple[LogEvent, str, bool]] = []
    for event in errors:
        head = first_line(event.message)[:HEAD_CHARS]
        if head.isascii() and not holds_any(head.lower(), _STRANGER_STEMS):
            continue  # (most errors: their addresses are not read)
        match = _CLIENT_ADDRESS.search(head)
        if match is None or not _PRESENTED.search(head) or _OUR_FAILURE.search(head) or _THIS_SIDES.search(head):
            continue
        try:
            address = ipaddress.ip_address(match.group(1))
        except ValueError:
            continue
        candidates.append((event, _said(head), address.is_global))
    inside = {(component(e), said) for e, said, public in candidates if not public}
    found = {id(e) for e, said, public in candidates if public and (component(e), said) not in inside}
    if not found:
        return found
    # (the process that served the stranger writes its other lines of that connection too, before and after: sshd's
    # `reverse mapping … POSSIBLE BREAK-IN ATTEMPT!`, `input_userauth_request: invalid user …`, `Connection reset by
    # peer [preauth]`; theirs as well, when they name nowhere this side went and no failure of its own resources)
    served: dict[str, list[datetime]] = {}
    for event in errors:
        if id(event) in found and (pid := process(event)) is not None:
            served.setdefault(pid, []).append(event.time)
    near = timedelta(seconds=CONNECTION_SECONDS)
    for event in errors:
        pid = process(event)
        if pid in served and id(event) not in found and any(abs(event.time - t) <= near for t in served[pid]) \
                and not _NOT_ONLY_LEFT.search(first_line(event.message)[:HEAD_CHARS]) \
                and not any(n.startswith(("hp:", "host:")) for n in named_things(event)):
            found.add(id(event))
    return found


def _said(head: str) -> str:
    """What a line says with its addresses, numbers and user names left out (two clients' failures alike)."""
    text = re.sub(r"\d+(?:[.:]\d+)*", "#", head)
    return re.sub(r"\bfor (?:invalid user )?\S+", "for _", text).lower()[-160:]


# a server's error saying the client it served went away: Tomcat's ClientAbortException (its response written to a
# closed connection), a WebSocket closed 1006 (abnormal closure: no close frame) or 1001 (going away: a tab closed), a
# client that stopped answering pings (socket.io's `ping timeout`), said of a client, a user or a session
_CLIENT_LEFT = re.compile(r"\bClientAbortException\b"
                          r"|\b(?:close|closed|closing|code)\b[^\n]{0,40}?\b100[16]\b|\babnormal closure\b|\bgoing away\b"
                          r"|\bping timeout\b", re.I)
_A_CLIENT = re.compile(r"\bclient\b|\buser(?:_?id)?\b|\bsession\b|\bwebsocket\b|\bws\b|\bsocket\b|\bbrowser\b", re.I)
_NOT_ONLY_LEFT = re.compile(r"refused|unavailable|exhausted|no space|upstream|backend|panic|fatal error|out of memory",
                            re.I)


# a client's own socket a server names (`from ('10.0.0.5', 51234)`, `client 10.0.0.5:51234`, `peer=10.0.0.5:51234`):
# an address on a port of the ephemeral range, the one a client's connection comes from ...
_CLIENT_SOCKET = re.compile(r"\b(?:from|client|peer|remote(?:_addr)?)\W{0,3}\(?'?\[?((?:\d{1,3}\.){3}\d{1,3})\]?'?"
                            r"(?:[:,]\s*|\s+port\s+)(\d{4,5})\b", re.I)
# ... and its connection gone while being answered (EPIPE, ECONNRESET, an EOF)
_SOCKET_GONE = re.compile(r"broken pipe|connection reset by peer|\bEPIPE\b|\bECONNRESET\b|unexpected EOF", re.I)


# a piece of text every match of `_CLIENT_LEFT` or `_SOCKET_GONE` holds, lower-cased
_LEFT_STEMS = ("clientabort", "100", "abnormal closure", "going away", "ping timeout", "broken pipe", "reset by peer",
               "epipe", "econnreset", "unexpected eof")


def client_left(event: LogEvent) -> bool:
    """Whether a server's error says only that the client it served went away (`_CLIENT_LEFT`, of a client, a user,
    a session or a socket: `_A_CLIENT`), naming no host:port or URL host it went to itself (a WebSocket this side
    opened to another service and lost is its own failure)."""
    head = first_line(event.message)[:HEAD_CHARS]
    if "499" in head and _answer(event)[0] == 499:
        return True  # (nginx's 499, `client closed request`: an answer to no one, whatever level a collector gave it)
    text = "\n".join((event.message[:600], event.exception or "", (event.stack or "")[:400]))
    if text.isascii() and not holds_any(text.lower(), _LEFT_STEMS):
        return False  # (most errors: no search of theirs can match)
    socket = _CLIENT_SOCKET.search(head)
    if socket is not None and int(socket.group(2)) >= EPHEMERAL_PORTS and _SOCKET_GONE.search(text) \
            and not _NOT_ONLY_LEFT.search(text):
        return True  # (a server answering a request from a client's socket, which went: Python's BrokenPipeError)
    if not _CLIENT_LEFT.search(text) or _NOT_ONLY_LEFT.search(head):
        return False
    if "ClientAbortException" not in text and not _A_CLIENT.search(head):
        return False
    # (a client's own socket, an address on an ephemeral port, says nowhere this side went)
    return not any(n.startswith("host:") or n.startswith("hp:") and not _ephemeral(n) for n in named_things(event))


def _ephemeral(name: str) -> bool:
    """Whether a host:port name's port is of the ephemeral range (a client's own socket)."""
    port = name.rpartition(":")[2]
    return port.isdigit() and int(port) >= EPHEMERAL_PORTS


# a failure to reach a dependency (the start raced it) ...
_CANNOT_REACH = re.compile(r"connection refused|could not connect|couldn't connect|failed to connect|unable to connect|"
                           r"cannot connect|can't connect|not (?:yet )?ready|no such host|name or service not known|"
                           r"ECONNREFUSED|server selection timed out|is the server running|could not be established|"
                           r"connection failure|no route to host", re.I)
# ... and its writer saying then that it is up: ready, started, listening, connected, its startup complete
_UP = re.compile(r"\bready\b(?!\s*[:=]\s*(?:false|0)\b)|\bstartup complete\b|\bstarted\b|"
                 r"\blistening (?:on|at)\b|\baccepting connections\b|\b(?:re)?connected to\b|\bconnection established\b|"
                 r"\b(?:is|now|became|back) healthy\b|\bup and running\b|\bserving\b[^\n]{0,20}?\b(?:on|at)\b",
                 re.I)
_NOT_UP = re.compile(r"\bnot\b|\bfail|\berror|\bunable\b|\bcannot\b|\bdisconnected\b|\bstopp|\blost\b|exception", re.I)
# a piece of text every match of `_CANNOT_REACH` holds, lower-cased
_REACH_STEMS = ("refused", "connect", "ready", "no such host", "name or service", "timed out", "server running",
                "established", "no route")


def _reaching(text: str) -> bool:
    """Whether a text says its writer could not reach a dependency (`_CANNOT_REACH`)."""
    return (not text.isascii() or holds_any(text.lower(), _REACH_STEMS)) and _CANNOT_REACH.search(text) is not None


UP_SECONDS = 30  # a start that races its dependency comes good within seconds


def start_resolved(errors: list[LogEvent], others: list[LogEvent], minutes: float) -> set[int]:
    """The errors (by `id`) saying their writer could not reach a dependency (`_CANNOT_REACH`) that then says within
    `UP_SECONDS` it is up (`_UP` in a line that opens nothing): the error's own component (`Database is ready`,
    `Application startup complete`, `connected to amqp://…`) or the dependency the error names, by what it is called
    (PostgreSQL's `database system is ready to accept connections` after its client's refusal naming `db`), with no
    error of the error's component after the line within the burst window: a start that raced its dependency and came
    good. A component that errs again after saying so is failing."""
    if not errors or minutes <= 0:
        return set()
    racing = [e for e in errors if _reaching(first_line(e.message)[:HEAD_CHARS] + "\n" + (e.stack or "")[:600])]
    if not racing:
        return set()
    first, last = min(e.time for e in racing), max(e.time for e in racing)
    soon, window = timedelta(seconds=UP_SECONDS), timedelta(minutes=minutes)
    up: list[tuple[datetime, LogEvent]] = []
    for event in others:
        if first < event.time <= last + soon:
            head = first_line(event.message)[:300]
            if _UP.search(head) and not _NOT_UP.search(head):
                up.append((event.time, event))
    if not up:
        return set()
    failed: dict[str, list[datetime]] = {}
    for event in errors:
        failed.setdefault(component(event), []).append(event.time)
    found = set()
    for event in racing:
        writer, names = component(event), named_things(event)
        back = min((t for t, line in up if event.time < t <= event.time + soon
                    and (component(line) == writer and _same_place(names, named_things(line))
                         or named_writer(line, names, frozenset()))), default=None)
        if back is not None and not any(back < t <= back + window for t in failed[writer]):
            found.add(id(event))
    return found


def _same_place(failed: frozenset[str], up: frozenset[str]) -> bool:
    """Whether a line saying its writer is up speaks of where its error failed to go: it names no place, or one the
    error names (`Connected to smtp-backup:25` says nothing of the `mail-relay:25` that refused)."""
    places = {n for n in up if n.startswith(("hp:", "host:", SERVICE_NAMED))}
    return not places or bool(places & failed)


# the call an error names (`GET http://inventory:8080/v1/stock/sku-4412 returned 503`) and a line answering that same
# call 2xx (`GET http://inventory:8080/v1/stock/sku-4412 -> 200 in 42ms`, `… returned 200`, `… status=200`)
_CALL = re.compile(r"\b(GET|HEAD|POST|PUT|PATCH|DELETE) \"?((?:https?://)?[\w.:-]*/[^\s\"?]*\d[^\s\"?]*)")
_ANSWERED_2XX = re.compile(r"^\"?[^\n]{0,24}?\b2\d\d\b")


def same_call_later(errors: list[LogEvent], others: list[LogEvent], minutes: float) -> set[int]:
    """The errors (by `id`) naming a call by its method and a path holding an id (`_CALL`) that a line of the same
    component, opening nothing, says answered 2xx later within the burst window (the status within a few words after
    the call): the same call, tried again, worked. The call must hold an id: a route every request takes
    (`GET /health`) answered 200 says nothing of the one that failed."""
    if not errors or minutes <= 0:
        return set()
    calls: dict[tuple[str, str, str], list[LogEvent]] = {}
    for event in errors:
        head = first_line(event.message)[:HEAD_CHARS]
        for match in _CALL.finditer(head) if "/" in head else ():
            calls.setdefault((component(event), match.group(1), match.group(2).lower()), []).append(event)
    if not calls:
        return set()
    window = timedelta(minutes=minutes)
    found: set[int] = set()
    writers = {writer for writer, _, _ in calls}
    for event in others:
        writer = component(event)
        if writer not in writers:
            continue
        head = first_line(event.message)[:HEAD_CHARS]
        for match in _CALL.finditer(head) if "/" in head else ():
            failed = calls.get((writer, match.group(1), match.group(2).lower()))
            if failed and _ANSWERED_2XX.match(head[match.end():]) and not _NOT_UP.search(head):
                found.update(id(e) for e in failed if e.time < event.time <= e.time + window)
    return found

