"""Errors that are nothing to act on (CONTRACT §2): one its own writer says came back from within
the burst window (a reconnect, a retry that worked), and one that says only that its request was
cancelled by whoever made it. Both are kept as context, not opened as incidents; the names they are
read by are line_names.py's.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta

from pipeline.incidents.line_names import DISTINCT, HEAD_CHARS, SERVICE_NAMED, component, first_line, named_things, said_by
from pipeline.analyst.subject import peer_gone
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
_LATER_ATTEMPT = re.compile(r"\b(?:on|after) (?:attempt|try|retry) #?0*[2-9]\d*\b|\bafter 0*[2-9]\d* (?:attempts|retries|tries)\b", re.I)
_STILL_TRYING = re.compile(r"\bretrying\b|\bwill retry\b|\bretry in\b|\bback(?:ing)?[ -]?off\b", re.I)
# an error that says it is one attempt of several (`failed (attempt 1/5)`, `throttled, will retry (1/3)`)
_AN_ATTEMPT = re.compile(r"\battempt #?\d+\s*(?:/|of)\s*\d+|\bwill retry\b|\bretry(?:ing)?\b[^\n]{0,20}?\(?\d+\s*/\s*\d+", re.I)
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
        if not (_RECOVERED.search(head) or (_LATER_ATTEMPT.search(head) and not _STILL_TRYING.search(head))) \
                or _NOT_RECOVERED.search(head):
            continue
        # what came back, and the operation it says worked (an attempt's error ties by it)
        back.setdefault(writer, []).append((event.time, _destinations(event) | {_subject(head)}))
    if not back:
        return set()
    window = timedelta(minutes=minutes)
    healed = set()
    for event in errors:
        after = back.get(component(event))
        if not after:
            continue
        places = _destinations(event)
        head = _head(event.message)[:300]
        if _AN_ATTEMPT.search(head):  # an attempt of several: its operation, by its first word, came back
            places = places | {_subject(head)}
        if places and any(event.time <= t <= event.time + window and places & named for t, named in after):
            healed.add(id(event))
    return healed


# a request its own caller gave up on, in the words libraries define for it: Go's `context.Canceled`
# ("context canceled"), gRPC's status code Canceled, PostgreSQL's query_canceled (57014) "canceling statement
# due to user request", nginx's 499 "client closed request"; not a deadline or a statement timeout (a failure)
_CANCELLED = re.compile(r"\bcontext canceled\b|\bcode = Canceled\b|canceling statement due to user request|"
                        r"client closed (?:the )?(?:request|connection)", re.I)
_CANCEL_WORD = re.compile(r"cancel|client closed", re.I)
_NOT_ONLY_CANCELLED = re.compile(r"deadline|timeout|timed out|refused|reset|denied|panic|fatal", re.I)


def client_gone(event: LogEvent) -> bool:
    """Whether an error says only that the client it was answering went away (`_PEER_GONE`): a download
    abandoned on a bad network, nothing broken on this side."""
    return peer_gone(first_line(event.message)[:HEAD_CHARS])


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
    if client_gone(event) or client_aborted(event) or not_there(event):
        return True
    if not any(_CANCEL_WORD.search(v[:HEAD_CHARS]) for v in (event.message, *event.fields.values()) if isinstance(v, str)):
        return False  # most errors say no such word: their stacks are not read
    text = said_by(event)[:HEAD_CHARS]
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
