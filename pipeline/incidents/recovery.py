"""Errors that are nothing to act on (CONTRACT §2): one its own writer says came back from within
the burst window (a reconnect, a retry that worked), and one that says only that its request was
cancelled by whoever made it. Both are kept as context, not opened as incidents; the names they are
read by are outage.py's.
"""
from __future__ import annotations

import re
from datetime import datetime, timedelta

from pipeline.incidents.outage import DISTINCT, HEAD_CHARS, SERVICE_NAMED, component, first_line, named_things, said_by
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
        head = first_line(event.message)[:300]
        if _RECOVERED.search(head) and not _NOT_RECOVERED.search(head):
            back.setdefault(writer, []).append((event.time, _destinations(event)))
    if not back:
        return set()
    window = timedelta(minutes=minutes)
    healed = set()
    for event in errors:
        after = back.get(component(event))
        if not after:
            continue
        places = _destinations(event)
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


def cancelled(event: LogEvent) -> bool:
    """Whether an error says only that its request was cancelled by whoever made it (the user typed
    on, the client went away): nothing failed, nothing to act on (`_CANCELLED`, `client_gone`)."""
    if client_gone(event):
        return True
    if not any(_CANCEL_WORD.search(v[:HEAD_CHARS]) for v in (event.message, *event.fields.values()) if isinstance(v, str)):
        return False  # most errors say no such word: their stacks are not read
    text = said_by(event)[:HEAD_CHARS]
    return bool(_CANCELLED.search(text)) and not _NOT_ONLY_CANCELLED.search(text)


def _destinations(event: LogEvent) -> frozenset[str]:
    """What a line names that a failure and its recovery both name: a host:port, a host, a resource,
    a service, an id."""
    return frozenset(n for n in named_things(event) if n.startswith(_DESTINATION))
