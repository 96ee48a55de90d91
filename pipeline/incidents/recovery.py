"""Errors that are nothing to act on (CONTRACT §2): one its own writer says came back from within
the burst window (a reconnect, a retry that worked), one that says only that its request was
cancelled by whoever made it or refused for the client's own content, one whose request its story
says ended well (answered 2xx, done already: `handled`), and a run's that had nothing to do and ended
normally (`no_work`). All are kept as context, not opened as incidents; the names they are read by
are line_names.py's.
"""
from __future__ import annotations

import bisect
import re
from datetime import datetime, timedelta

from pipeline.incidents.leading import NEUTRAL, rank
from pipeline.incidents.line_names import DISTINCT, HEAD_CHARS, first_line, holds_any, named_things, said_by
from pipeline.incidents.writers import SERVICE_NAMED, component
from pipeline.analyst.subject import EPHEMERAL_PORTS, peer_gone
from pipeline.state import LogEvent

# a line saying a connection or an operation came back, in the words of success as clients log them
# (Lettuce's `Reconnected to`, Celery's `Connected to`, `connection restored`, `succeeded after 3 attempts`,
# `sent ... after 2 attempts`): done, not being tried (`Reconnecting`) nor failed (`disconnected`: no word)
# (a plain `sent` or `delivered` says it came back only after attempts: `1190 bytes sent` is a count)
_RECOVERED = re.compile(r"\b(?:re)?(?:connected|established|restored|recovered|resumed|succeeded|successful(?:ly)?)\b"
                        r"|\bback (?:up|online)\b"
                        r"|\b(?:sent|delivered|done|completed)\b.{0,120}?\bafter \d+ (?:attempts|retries|tries)\b", re.I)
_NOT_RECOVERED = re.compile(r"\b(?:not|no|never|cannot|can't|couldn't|unable|fail\w*|lost|refused|error|exception|"
                            r"timed? ?out|timeout)\b", re.I)
_DESTINATION = (*DISTINCT, SERVICE_NAMED, "id:")
# a retry its writer says worked, in other words than those: the operation done on a later attempt (`part 7 uploaded on attempt 2`,
# `getItem succeeded after 2 attempts`), not one still being tried (`retrying after attempt 2`)
# (or its attempt's number in parentheses or as a field: `quote ok (attempt 2)`, `attempt=2`)
_LATER_ATTEMPT = re.compile(r"\b(?:on|after) (?:attempt|try|retry) #?0*[2-9]\d*\b|\bafter 0*[2-9]\d* (?:attempts|retries|tries)\b"
                            r"|\(\s*(?:attempt|try)\s*[#:=]?\s*0*[2-9]\d*\s*\)|\battempt[=:]\s*0*[2-9]\d*\b", re.I)
# a piece of text every match of `_RECOVERED` or `_LATER_ATTEMPT` holds, lower-cased (`try`: `retry`; `after `: `after 3
# retries`): a line holding none is neither searched (exact on ASCII text, where lower-casing is what re.I compares)
_BACK_STEMS = ("connected", "established", "restored", "recovered", "resumed", "succeeded", "successful", "back ",
               "after ", "attempt", "try")
_STILL_TRYING = re.compile(r"\bretrying\b|\bwill retry\b|\bretry in\b|\bback(?:ing)?[ -]?off\b", re.I)
# an error that says its client is reconnecting (redis-py's `Connection reset by peer. reconnecting`), healed by
# its component's next `reconnected` (to wherever: the attempt it announced worked)
_RECONNECTING = re.compile(r"\breconnecting\b", re.I)
_RECONNECTED = re.compile(r"\breconnected\b", re.I)
_RECONNECT = "op:reconnect"
# an error that says it is one attempt of several (`failed (attempt 1/5)`, `throttled, will retry (1/3)`)
# (or numbers its attempt alone: `quote failed (attempt 1)`, `attempt=1`)
_AN_ATTEMPT = re.compile(r"\battempt #?\d+\s*(?:/|of)\s*\d+|\bwill retry\b|\bretry(?:ing)?\b[^\n]{0,20}?\(?\d+\s*/\s*\d+"
                         r"|\(\s*attempt\s*[#:=]?\s*\d+\s*\)|\battempt[=:]\s*\d+\b", re.I)
# Microsoft.Extensions.Logging's console layout writes `info: Category[EventId]` on a line of its own,
# the message indented on the next: the message is what the line says
_CATEGORY_LINE = re.compile(r"^\s*(?:trce|dbug|info|warn|fail|crit): [\w.`+<>]+\[\d+\]\s*$")


def recovered(errors: list[LogEvent], others: list[LogEvent], minutes: float) -> set[int]:
    """The errors (by `id`) that healed: a later line of `others` (lines that open nothing) written
    by the same component within the burst window says the same destination or resource came back
    (`_RECOVERED`: reconnected, restored, succeeded...). A client's retry that worked is nothing to act
    on; an error after the last such line is not healed (a connection that failed again)."""
    if minutes <= 0 or not errors:
        return set()
    writers = {component(event) for event in errors}
    back: dict[str, list[tuple[datetime, frozenset[str]]]] = {}
    for event in others:
        writer = component(event)
        if writer not in writers:
            continue  # only the lines of a writer with an error in the batch are read
        head = _head(event.message)[:300]
        if head.isascii() and not holds_any(head.lower(), _BACK_STEMS):
            continue  # neither search can match (most of a writer's lines): spared
        if not (_RECOVERED.search(head) or (_LATER_ATTEMPT.search(head) and not _STILL_TRYING.search(head))) \
                or _NOT_RECOVERED.search(head):
            continue
        # what came back, and the operation it says worked (an attempt's error ties by it)
        back.setdefault(writer, []).append((event.time, _destinations(event) | {_subject(head)}
                                            | ({_RECONNECT} if _RECONNECTED.search(head) else set())))
    if not back:
        return set()
    window = timedelta(minutes=minutes)
    blip = min(window, timedelta(seconds=HANDLED_SECONDS))
    healed = set()
    for event in errors:
        after = back.get(component(event))
        if not after:
            continue
        places = _destinations(event)
        head = _head(event.message)[:300]
        if _AN_ATTEMPT.search(head):  # an attempt of several: its operation, by its first word, came back
            places = places | {_subject(head)}
        if _RECONNECTING.search(head):  # a reconnect it announced: its component's `reconnected` heals it
            places = places | {_RECONNECT}
        # (a reconnect naming nothing heals only the error just before it, HANDLED_SECONDS: minutes of a
        # client's failures ended by a `reconnected` are an outage its writer came back from, not a blip)
        if places and any(event.time <= t <= event.time + (window if (places & named) - {_RECONNECT} else blip)
                          and places & named for t, named in after):
            healed.add(id(event))
    return healed


# a request its own caller gave up on, in the words libraries define for it: Go's `context.Canceled`
# ("context canceled"), gRPC's status code Canceled, PostgreSQL's query_canceled (57014) "canceling statement
# due to user request", nginx's 499 "client closed request"; not a deadline or a statement timeout (a failure)
_CANCELLED = re.compile(r"\bcontext canceled\b|\bcode = Canceled\b|canceling statement due to user request|"
                        r"client closed (?:the )?(?:request|connection)", re.I)
_CANCEL_WORD = re.compile(r"cancel|client closed", re.I)
_NOT_ONLY_CANCELLED = re.compile(r"deadline|timeout|timed out|refused|reset|denied|panic|fatal", re.I)


# (session 53) a server's TLS handshake with a client that the client closed before it ended: Go's net/http
# `http: TLS handshake error from 10.0.0.12:40122: EOF` (server.go logs the handshake's error with the remote address),
# or the peer's reset; a load balancer's TCP probe, a scanner. A handshake that failed for a reason (`tls: bad
# certificate`, `remote error: …`, a timeout) is none
_HANDSHAKE_GONE = re.compile(r"\bhandshake (?:error|failed) from \[?[\w.:-]+?\]?:(\d{1,5}): "
                             r"(?:EOF|(?:read: )?connection reset by peer)\s*$", re.I)


def client_gone(event: LogEvent) -> bool:
    """Whether an error says only that the client it was answering went away (`_PEER_GONE`): a download
    abandoned on a bad network, nothing broken on this side; or a client that closed its TLS handshake
    (`_HANDSHAKE_GONE`) from an ephemeral port."""
    head = first_line(event.message)[:HEAD_CHARS]
    handshake = _HANDSHAKE_GONE.search(head) if "andshake" in head else None
    return peer_gone(head) or (handshake is not None and int(handshake.group(1)) >= EPHEMERAL_PORTS)


# Node's http server fails a request whose client closed its connection before the request was read with
# an error whose whole message is `aborted`, code ECONNRESET (lib/_http_server.js, abortIncoming)
_ABORTED = re.compile(r"^(?:Error: )?aborted$")


def client_aborted(event: LogEvent) -> bool:
    """Whether an error's error field says only that its client aborted the request (`_ABORTED`)."""
    values = [v for v in event.fields.values() if isinstance(v, (str, dict))]
    return any(isinstance(v, str) and _ABORTED.match(v.strip()) for v in values) \
        and any("ECONNRESET" in str(v) for v in (event.message, *values))


# a request for what is not there, answered 404 by definition (RFC 9110 15.5.5): the line names the request
# (`request: "GET /favicon.ico HTTP/1.1"`, `[GET] "/wp-login.php"`) and says that no route matches it or that
# the file it maps to does not exist (ENOENT's text, a path ending in the request's path)
_REQUEST = re.compile(r"\[?\b(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\]? \"?(/[^\s\"?#]*)")
_NO_ROUTE = re.compile(r"\bno route matches\b", re.I)
_NO_FILE = re.compile(r"([\"']?)(/[^\s\"']+)\1\W{0,3}\s*(?:failed\s*)?\(2: No such file or directory\)")
_NOT_ONLY_MISSING = re.compile(r"refused|denied|permission|time[d ]?\s?out|reset|unavailable|too many|exhausted|"
                               r"no space|panic|fatal error", re.I)


def not_there(event: LogEvent) -> bool:
    """Whether an error says only that the request it names asked for what is not there (`_REQUEST`):
    a client's 404 (a scanner, a stale link), nothing broken on this side."""
    text = event.message[:HEAD_CHARS]
    if "No such file or directory" not in text and not _NO_ROUTE.search(text):
        return False  # most errors say neither: their requests are not read
    requests = [m.group(1) for m in _REQUEST.finditer(text)]
    if not requests or _NOT_ONLY_MISSING.search(text):
        return False
    if _NO_ROUTE.search(text):
        return True
    files = [m.group(2) for m in _NO_FILE.finditer(text)]
    return bool(files) and all(any(f.endswith(r) and r != "/" for r in requests) for f in files)


# an access log's line answering a request 404 or 410 (`"GET /p/DISCONTINUED-1182 HTTP/1.1" 404 1120`)
_ANSWERED_GONE = re.compile(r"\"(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (/[^\s\"]*) HTTP/[\d.]+\" (?:404|410)\b")
_SAYS_MISSING = re.compile(r"\bnot found\b|\bdoes not exist\b|\bno such\b", re.I)
ANSWER_SECONDS = 2


def answered_missing(errors: list[LogEvent], others: list[LogEvent]) -> set[int]:
    """The errors (by `id`) saying a thing is not found whose request an access log answered 404 or 410
    within `ANSWER_SECONDS` after, its path naming a value the error names (`sku=DISCONTINUED-1182`, then
    `GET /p/DISCONTINUED-1182 ... 404`): a client asked for what is not there, nothing to act on."""
    missing = [e for e in errors if _SAYS_MISSING.search(first_line(e.message)[:HEAD_CHARS])]
    if not missing:
        return set()
    answers = [(event.time, m.group(1).lower()) for event in others
               if (" 404 " in event.message or " 410 " in event.message)
               and (m := _ANSWERED_GONE.search(first_line(event.message)[:HEAD_CHARS]))]
    if not answers:
        return set()
    window = timedelta(seconds=ANSWER_SECONDS)
    found = set()
    for event in missing:
        head = first_line(event.message)[:HEAD_CHARS]
        if _NOT_ONLY_MISSING.search(head):
            continue
        said = {n.split(":", 1)[1] for n in named_things(event) if n.startswith(("res:", "id:", "path:"))}
        said = {v for v in said if len(v) >= 6}
        if said and any(event.time <= t <= event.time + window and any(v in path for v in said) for t, path in answers):
            found.add(id(event))
    return found


def cancelled(event: LogEvent) -> bool:
    """Whether an error says only that its request was cancelled by whoever made it (the user typed
    on, the client went away): nothing failed, nothing to act on (`_CANCELLED`, `client_gone`)."""
    if client_gone(event) or client_aborted(event) or not_there(event) or client_content(event):
        return True
    if not any(_CANCEL_WORD.search(v[:HEAD_CHARS]) for v in (event.message, *event.fields.values()) if isinstance(v, str)):
        return False  # most errors say no such word: their stacks are not read
    # (and its fields: a gRPC status written apart, `msg="rpc error" code=Canceled desc="context canceled"`)
    text = " ".join([said_by(event)[:HEAD_CHARS], *(v[:200] for v in event.fields.values() if isinstance(v, str))])
    return bool(_CANCELLED.search(text)) and not _NOT_ONLY_CANCELLED.search(text)


def _head(message: str) -> str:
    """A message's first line, past a category header on a line of its own (`_CATEGORY_LINE`)."""
    lines = [line for line in message[:600].splitlines()[:3] if line.strip()]
    return lines[1].strip() if len(lines) > 1 and _CATEGORY_LINE.match(lines[0]) else first_line(message)


def _subject(head: str) -> str:
    """What a line is about, by its first word (`getItem throttled, will retry` and `getItem succeeded
    after 2 attempts`): an operation its writer retried."""
    word = re.match(r"\W*(\w+)", head)
    return "op:" + (word.group(1).lower() if word else "")


def _destinations(event: LogEvent) -> frozenset[str]:
    """What a line names that a failure and its recovery both name: a host:port, a host, a resource,
    a service, an id."""
    return frozenset(n for n in named_things(event) if n.startswith(_DESTINATION))


# --- what the failed request's own story says ended well (session 48)

HANDLED_SECONDS = 10  # the seconds in which a request's story is told: its error, its answer, its conflict resolved
# what an answer's status is written as: a field (`status`, `statusCode`, `status_code`, one level down:
# pino's `res: {statusCode: 200}`), `status=200`, an access line's status after its request, or the
# verb a framework answers with (Rails' `Completed 200 OK`, Phoenix's `Sent 200 in 48ms`)
_STATUS_KEY = re.compile(r"^(?:status|statuscode|status_code|http\.status_code)$", re.I)
_STATUS_TEXT = re.compile(r"\bstatus[=:]\s*\"?([1-5]\d\d)\b|HTTP/[\d.]+\"? ([1-5]\d\d)\b"
                          r"|\b(?:Completed|Sent|responded|returned)\s+([1-5]\d\d)\b", re.I)
# what every match of `_STATUS_KEY` (`status`) or `_STATUS_TEXT` holds, lower-cased: a name or an ASCII head (where
# lower-casing is what re.I compares) holding none is not matched (issue 37.3: every error line, and every line near one)
_STATUS_WORDS = ("status", "http/", "completed", "sent", "responded", "returned")
_REQUEST_PATH = re.compile(r"\b(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\]? \"?(/[^\s\"?#]*)")
_PATH_KEY = re.compile(r"^(?:path|url|uri|route|target|request_path|http\.target|url\.path)$", re.I)
# what is no id of a request: a date or a time of day (a header both lines wrote), a version
_TIME_LIKE = re.compile(r"\d{4}-\d\d-\d\d|\d{1,2}:\d\d(?::\d\d)?(?:[.,]\d+)?|\d{1,2}/[A-Za-z]{3}/\d{4}")
_TOKEN = re.compile(r"[A-Za-z0-9][\w-]*")
# a thing its writer says was done already (an idempotent write that lost a race, a redelivered message)
_ALREADY = re.compile(r"\balready (?:been )?(?:applied|processed|handled|done|completed|committed|acknowledged|consumed|"
                      r"delivered|sent|recorded|seen)\b"
                      # (or a duplicate its writer says it dropped: `duplicate submission c0ffee12 ignored, returning
                      # existing order 8812`)
                      r"|\bduplicate\b[^.;\n]{0,80}?\b(?:ignored|skipped|discarded|dropped)\b|\breturning (?:the )?existing\b",
                      re.I)
_ALREADY_WORDS = ("already ", "duplicate", "returning ")
# an answer the client's own content made (RFC 9110 15.5.21 422 Unprocessable Content; a 400 that says the
# content was invalid): its input, nothing broken on this side
_CLIENT_CONTENT = re.compile(r"validat|invalid", re.I)
_NOT_CLIENTS = re.compile(r"time[d ]?\s?out|refused|unavailable|denied|exhausted|panic|fatal", re.I)


def status_of(event: LogEvent) -> int | None:
    """The HTTP status a line says its request was answered with, None when it says none."""
    for key, value in event.fields.items():
        for k, v in (value.items() if isinstance(value, dict) else [(key, value)]):
            name = str(k)
            if (not name.isascii() or "status" in name.lower()) and _STATUS_KEY.match(name) \
                    and str(v).isdigit() and 100 <= int(v) < 600:
                return int(v)
    head = first_line(event.message)[:HEAD_CHARS]
    if head.isascii() and not holds_any(head.lower(), _STATUS_WORDS):
        return None  # no match of `_STATUS_TEXT` can be there: not searched
    match = _STATUS_TEXT.search(head)
    return int(next(g for g in match.groups() if g)) if match else None


def client_content(event: LogEvent) -> bool:
    """Whether an error says its request was refused for the client's own content (`_CLIENT_CONTENT`)."""
    status = status_of(event)
    if status not in (400, 422):
        return False
    text = said_by(event)[:HEAD_CHARS]
    return (status == 422 or bool(_CLIENT_CONTENT.search(text))) and not _NOT_CLIENTS.search(text)


def _tokens(text: str, *, short: bool = False) -> set[str]:
    """The words of a text that may be a request's id: holding a digit, three characters or more (two: `short`)."""
    return {t.lower() for t in _TOKEN.findall(_TIME_LIKE.sub(" ", text))
            if len(t) >= (2 if short else 3) and any(c.isdigit() for c in t)}


def _everything(event: LogEvent) -> str:
    """A line's message, its record's continuation lines and its fields' values (one level down), as text."""
    parts = [event.message[:HEAD_CHARS], (event.stack or "")[:HEAD_CHARS]]
    for value in list(event.fields.values())[:24]:
        for v in (value.values() if isinstance(value, dict) else [value]):
            if isinstance(v, (str, int)) and not isinstance(v, bool):
                parts.append(str(v)[:400])
    return "\n".join(parts)


def _path_segments(event: LogEvent) -> set[str]:
    """The id-like segments of the request path a line names (its request line, a `path`/`url` field)."""
    paths = [m.group(1) for m in _REQUEST_PATH.finditer(first_line(event.message)[:HEAD_CHARS])]
    for key, value in event.fields.items():
        for k, v in (value.items() if isinstance(value, dict) else [(key, value)]):
            if isinstance(v, str) and _PATH_KEY.match(str(k)):
                paths.append(v.split("://", 1)[-1].partition("/")[2] if "://" in v else v)
    return {s for p in paths for s in _tokens(p.replace("/", " ").replace(".", " "), short=True)}


def handled(errors: list[LogEvent], others: list[LogEvent]) -> set[int]:
    """The errors (by `id`) whose request its story says ended well, within HANDLED_SECONDS after it (a second
    before, for a log that writes whole seconds), in a line that opens nothing naming an id the error names:
    the request answered 2xx (its path holding the id: a cache miss served from the source, `product:1201`
    then `GET /products/1201 200`), or the thing said to be done already (a duplicate key, then `event
    evt_88120 already applied`)."""
    if not errors:
        return set()
    second, after = timedelta(seconds=1), timedelta(seconds=HANDLED_SECONDS)
    times = sorted(e.time for e in errors)
    answers = []
    for event in others:
        at = bisect.bisect_left(times, event.time - after)  # only a line near an error is read
        if at == len(times) or times[at] > event.time + second:
            continue
        head = first_line(event.message)[:HEAD_CHARS]
        # (an ASCII head holding none of the words every match of `_ALREADY` holds is not searched)
        if (not head.isascii() or holds_any(head.lower(), _ALREADY_WORDS)) and _ALREADY.search(head) \
                and not _NOT_RECOVERED.search(head.replace("already", "")):
            answers.append((event.time, _tokens(_everything(event))))
        elif "2" in head or event.fields:  # (most lines hold no 2xx: cheap tests first)
            status = status_of(event)
            if status is not None and 200 <= status < 300 and (segments := _path_segments(event)):
                answers.append((event.time, segments))
    if not answers:
        return set()
    found = set()
    for event in errors:
        # (an answer its log stamped to the whole second may read as up to a second before the error)
        near = [ids for t, ids in answers
                if event.time - (second if t.microsecond == 0 else timedelta(0)) <= t <= event.time + after]
        if near and _tokens(_everything(event), short=True) & set().union(*near):
            found.add(id(event))
    return found


# a run that had nothing to do, said at ERROR (`no rows to export`, `No pending payouts found`, `nothing to send`),
# and its run ending normally (`finished`, `done`, `exit 0`; not a request's `Completed 200`)
_NO_WORK = re.compile(r"\bnothing (?:left )?to \w+|\bno (?:\w+ ){0,3}?(?:\w+ found|\w+ to (?!host\b)\w+)\b", re.I)
_RUN_DONE = re.compile(r"\b(?:finished|done|completed|performed|succeeded)\b|\bexit(?:ed)?(?: with)?(?: code| status)?[ :=]+0\b",
                       re.I)
_REQUEST_DONE = re.compile(r"\b(?:Completed|Sent|responded|returned)\s+[1-5]\d\d\b|\berrors?\b", re.I)


def no_work(errors: list[LogEvent], others: list[LogEvent], minutes: float) -> set[int]:
    """The errors (by `id`) saying only that their run had nothing to do (`_NO_WORK`, no cause word), whose
    writer then says, within the burst window, that its run ended normally (`_RUN_DONE`)."""
    idle = [e for e in errors if _NO_WORK.search(_head(e.message)[:300]) and rank(e) == NEUTRAL]
    if not idle or minutes <= 0:
        return set()
    writers = {component(e) for e in idle}
    ends: dict[str, list[datetime]] = {}
    for event in others:
        head = _head(event.message)[:300]
        if component(event) in writers and _RUN_DONE.search(head) and not _NOT_RECOVERED.search(head) \
                and not _REQUEST_DONE.search(head):
            ends.setdefault(component(event), []).append(event.time)
    window = timedelta(minutes=minutes)
    return {id(e) for e in idle if any(e.time <= t <= e.time + window for t in ends.get(component(e), ()))}
