"""Errors the log itself shows are a healthy system's (CONTRACT §2, session 56): a server's failure that is
its client's (the client reset or closed the connection, said in words), an error whose request the server
answered 4xx on a path it names (the client's own request refused: throttled, unauthorised), a lost connection to a
host that announced its own graceful stop just before and wrote again after (a planned restart that completed), and
a retry announced that then worked. All are kept as context, as recovery.py's are; the names they are read by are
line_names.py's.
"""
from __future__ import annotations

import bisect
import re
from datetime import datetime, timedelta

from pipeline.analyst.subject import client_gone as client_went
from pipeline.incidents.line_names import HEAD_CHARS, first_line, holds_any, named_things
from pipeline.incidents.recovery import (_BACK_STEMS, HANDLED_SECONDS, _AN_ATTEMPT, _NOT_RECOVERED, _RECOVERED, _head,
                                         _subject, status_of)
from pipeline.incidents.writers import component
from pipeline.state import LogEvent


def expected(errors: list[LogEvent], others: list[LogEvent], minutes: float) -> set[int]:
    """The errors (by `id`) the log shows a healthy system wrote: its client's (`clients_own`), a request answered
    4xx (`answered_4xx`), a peer lost to a planned stop that completed (`planned_stop`), a retry announced that
    worked (`retry_worked`). `others`: the lines that open nothing; `minutes`: the burst window."""
    found = {id(event) for event in errors if clients_own(event)}
    return found | answered_4xx(errors, others) | planned_stop(errors, others, minutes) | retry_worked(errors, others, minutes)


def clients_own(event: LogEvent) -> bool:
    """Whether a server's error is its client's: the client reset or closed the connection, said in words
    (PostgreSQL's `could not receive data from client: Connection reset by peer`, `unexpected EOF on client
    connection`: analyst/subject.py's `client_gone`, which the analyst reads as naming no cause)."""
    return client_went(event)


# an access log's line answering a request (`"GET /products?page=120 HTTP/1.1" 429 32`): a 4xx is the client's
# request refused, whatever for (not 408: the server gave up waiting); a 5xx is a failure of its own
_ANSWERED = re.compile(r"\"(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS) (/[^\s\"]*) HTTP/[\d.]+\" ([45]\d\d)\b")
# the request an error names: its request line, or a path written as a field in its text (`path=/products?page=120`)
_ERROR_PATH = re.compile(r"\b(?:GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\]? \"?(/[^\s\"]+)"
                         r"|\b(?:path|url|uri|route|request_path)[=:] ?\"?(/[^\s\"]+)", re.I)
_NOT_ONLY_REFUSED = re.compile(r"refused|time[d ]?\s?out|reset|unavailable|too many open|exhausted|no space|panic|"
                               r"fatal error|upstream|unreachable", re.I)
ANSWER_SECONDS = 2


def _paths(event: LogEvent) -> set[str]:
    """The request paths an error names (`_ERROR_PATH`, a `path`/`url` field), lower-cased; `/` alone is none."""
    found = {a or b for a, b in _ERROR_PATH.findall(first_line(event.message)[:HEAD_CHARS])}
    found.update(v for k, v in event.fields.items() if isinstance(v, str) and v.startswith("/")
                 and k.lower() in ("path", "url", "uri", "route", "request_path"))
    return {p.lower().rstrip(",;") for p in found if len(p) > 1}


def answered_4xx(errors: list[LogEvent], others: list[LogEvent]) -> set[int]:
    """The errors (by `id`) whose request an access log answered 4xx within `ANSWER_SECONDS` after, the
    request's path the one the error names or holding a value it names (rack-attack's `throttled ...
    path=/products?page=120`, then `"GET /products?page=120 HTTP/1.1" 429`), and no answer 5xx on that path
    then: the client's request refused, nothing broken on this side. An error saying a refusal, timeout, reset
    or exhaustion of its own (`_NOT_ONLY_REFUSED`) opens."""
    answers = [(event.time, m.group(1).lower(), int(m.group(2))) for event in others
               if "HTTP/" in event.message and (m := _ANSWERED.search(first_line(event.message)[:HEAD_CHARS]))
               and m.group(2) != "408"]
    if not any(400 <= status < 500 for _, _, status in answers):
        return set()
    window = timedelta(seconds=ANSWER_SECONDS)
    answers.sort(key=lambda answer: answer[0])
    times = [t for t, _, _ in answers]
    found = set()
    for event in errors:
        at = bisect.bisect_left(times, event.time)
        if at == len(times) or times[at] > event.time + window \
                or _NOT_ONLY_REFUSED.search(first_line(event.message)[:HEAD_CHARS]):
            continue  # no answer in the seconds after it (most errors: their names are not read), or a failure of its own
        paths = _paths(event)
        said = {n.split(":", 1)[1].lower() for n in named_things(event) if n.startswith(("res:", "id:", "path:"))}
        said = {v for v in said if len(v) >= 6}
        near = [(path, status) for t, path, status in answers if event.time <= t <= event.time + window
                and (path in paths or any(v in path for v in said))]
        if near and all(status < 500 for _, status in near):
            found.add(id(event))
    return found


# a writer announcing its own stop as a planned one (`shutting down signal=terminated`, Erlang's `Application
# presence exited: :stopped`, `Stopping`, `SIGTERM received`) ...
_STOPPING = re.compile(r"\b(?:stopp(?:ed|ing)|shutting down|shut down|exit(?:ed|ing)|terminat(?:ed|ing)|SIGTERM|draining)\b",
                       re.I)
# ... not a crash, a kill or a failed exit (`exited with code 1`, `status=1/FAILURE`, `killed`, `OOM`)
_NOT_PLANNED = re.compile(r"crash|kill|\boom|out of memory|panic|fatal|fail|error|abort|abnormal|segfault|unexpected|"
                          r"core dumped|(?:code|status)[=: ]+\"?-?[1-9]|SIG(?:KILL|SEGV|ABRT|BUS)", re.I)
# a piece of text every match of `_STOPPING` holds, lower-cased
_STOP_STEMS = ("stopp", "shut", "exit", "termin", "sigterm", "drain")
STOP_SECONDS = 10  # the seconds after a planned stop in which its peers' lost connections are its own


def planned_stop(errors: list[LogEvent], others: list[LogEvent], minutes: float) -> set[int]:
    """The errors (by `id`) naming a host that announced its own planned stop (`_STOPPING`, no `_NOT_PLANNED`
    word) within `STOP_SECONDS` before them, that host writing again later within the burst window with no
    error of its own after its stop: a peer's `Node "presence@10.0.5.2" not responding` after that node's
    `Application presence exited: :stopped` and before its restart. A host that stops and stays silent, or
    writes an error, is a failure; an error naming no stopped host is not read."""
    if not errors or minutes <= 0:
        return set()
    stops: dict[str, list[datetime]] = {}
    for event in others:
        head = first_line(event.message)[:300]
        host = event.host or ""
        if len(host) >= 4 and (not head.isascii() or holds_any(head.lower(), _STOP_STEMS)) \
                and _STOPPING.search(head) and not _NOT_PLANNED.search(head):
            stops.setdefault(host, []).append(event.time)
    if not stops:
        return set()
    window, quiet = timedelta(minutes=minutes), timedelta(seconds=STOP_SECONDS)
    lines_of: dict[str, list[datetime]] = {}
    for event in others:
        if event.host in stops:
            lines_of.setdefault(event.host, []).append(event.time)
    failed_of: dict[str, list[datetime]] = {}
    for event in errors:
        if event.host in stops:
            failed_of.setdefault(event.host, []).append(event.time)
    found = set()
    for event in errors:
        text = event.message[:HEAD_CHARS].lower()
        for host, times in stops.items():
            if host == event.host or host.lower() not in text \
                    or not re.search(r"(?<![\w.@-])" + re.escape(host.lower()) + r"(?![\w.-]*\w)", text):
                continue  # (a whole name: `db-1` is not named by `db-12`)
            for t in times:
                back = min((b for b in lines_of[host] if t < b <= t + window and b not in times), default=None)
                # (back: its first line after the stop; an error of its own before that is a restart that failed)
                if t <= event.time <= t + quiet and back is not None \
                        and not any(t <= bad <= back for bad in failed_of.get(host, ())):
                    found.add(id(event))
                    break
    return found


# a retry or a fallback its writer announces (`The operation will be retried after 0ms`, `retrying`, `will retry`,
# `falling back to initial contact points`), in the error's own line or a line of its writer just after it ...
_RETRY_ANNOUNCED = re.compile(r"\bwill be retried\b|\bretrying\b|\bwill retry\b|\bretry in\b|\bfall(?:ing|s)? back\b", re.I)
ANNOUNCE_SECONDS = 2
# a piece of text every match of `_RETRY_ANNOUNCED` or recovery's `_AN_ATTEMPT` holds, lower-cased
_RETRY_STEMS = ("retr", "fall", "attempt")
# ... not a retry given up on (`retrying failed`, `giving up`, `exhausted`)
_NOT_PLANNED_RETRY = re.compile(r"giv(?:e|ing) up|exhausted|abort|fatal", re.I)


def retry_worked(errors: list[LogEvent], others: list[LogEvent], minutes: float) -> set[int]:
    """The errors (by `id`) whose writer announced a retry or a fallback (`_RETRY_ANNOUNCED`: the error's line, or
    a line of its component within `ANNOUNCE_SECONDS` after it) and then, within `HANDLED_SECONDS` of the error,
    said it worked: a line that opens nothing saying it connected, was restored, succeeded (recovery's words) or
    answering a request 2xx; and whose first word (its operation) no error of that component says again after that
    within the burst window (a retry that failed again is an outage). A client's blip: Npgsql's `Exception while
    reading from stream`, `will be retried`, then `responded 200`; gocql's `unable to dial ... refused`, `falling back`,
    then `connected to cluster`."""
    if not errors or minutes <= 0:
        return set()
    announced: dict[str, list[tuple[datetime, str, timedelta]]] = {}
    tried: dict[tuple[str, str], list[datetime]] = {}  # the announcements by writer and operation (first word)
    worked: dict[str, list[datetime]] = {}
    context = {id(event) for event in others}
    window, soon, blip = timedelta(minutes=minutes), timedelta(seconds=ANNOUNCE_SECONDS), timedelta(seconds=HANDLED_SECONDS)
    times = sorted(e.time for e in errors)
    for event in (*others, *errors):  # (a caller's retry logged at WARN is among the errors: it may join one)
        at = bisect.bisect_right(times, event.time)
        if at == 0 or event.time - times[at - 1] > window:
            continue  # no error at or before it within the burst window: nothing it could say worked (most lines)
        head = _head(event.message)[:300]
        lowered = head.lower() if head.isascii() else None  # (an ASCII head holding no stem is not searched)
        fields = [f"{k}={v}" for k, v in event.fields.items() if isinstance(v, (str, int))]
        said = " ".join([head, *fields])[:600]
        if (lowered is None or fields or holds_any(lowered, _RETRY_STEMS)) \
                and (_RETRY_ANNOUNCED.search(said) or _AN_ATTEMPT.search(said)) and not _NOT_PLANNED_RETRY.search(said):
            writer = component(event)
            announced.setdefault(writer, []).append((event.time, " ".join(_WORD.findall(said.lower())),
                                                     min(_delay(said), window)))
            tried.setdefault((writer, _subject(head)), []).append(event.time)
        elif id(event) in context and (
                (lowered is None or holds_any(lowered, _BACK_STEMS)) and _RECOVERED.search(head)
                and not _NOT_RECOVERED.search(head)
                or (status := status_of(event)) is not None and 200 <= status < 300):
            worked.setdefault(component(event), []).append(event.time)
    if not worked:
        return set()
    again: dict[tuple[str, str], list[datetime]] = {}
    for event in errors:
        again.setdefault((component(event), _subject(_head(event.message))), []).append(event.time)
    found = set()
    for event in errors:
        writer, head = component(event), _head(event.message)[:300]
        # who retried it: its writer (its own line, or one just after it), or a caller whose retry quotes its words
        quoted = _quotable(head)
        # (and by when it said it would have: the delay it stated, `will be retried in 30 seconds`, then the blip)
        retries = [(who, t + delay) for who, lines in announced.items() for t, text, delay in lines
                   if event.time <= t <= event.time + soon and (who == writer or quoted and quoted in text)]
        success = min((t for who, by in retries for t in worked.get(who, ()) if event.time < t <= by + blip),
                      default=None)
        # (not when its operation, by its first word, is failed or announced as retried again after that: `putItem
        # still retrying` after another operation's success)
        if success is not None and not any(success < t <= success + window
                                           for t in again.get((writer, _subject(head)), ())) \
                and not any(success < t <= success + window for who, _ in retries
                            for t in tried.get((who, _subject(head)), ())):
            found.add(id(event))
    return found


_WORD = re.compile(r"[a-z]{3,}")
# the delay a retry's announcement states (`will be retried in 30 seconds`, `retrying after 0.137s`, `retry in 5m`)
_DELAY = re.compile(r"\b(?:in|after)(?: a delay of:?)? (\d+(?:\.\d+)?) ?(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?)\b", re.I)


def _delay(text: str) -> timedelta:
    """The delay a retry's announcement states (`_DELAY`), none when it states none."""
    match = _DELAY.search(text)
    if not match:
        return timedelta(0)
    unit = match.group(2).lower()
    scale = 0.001 if unit.startswith("m") and unit not in ("m", "min", "mins", "minute", "minutes") else \
        60.0 if unit.startswith("m") else 1.0
    return timedelta(seconds=float(match.group(1)) * scale)


_LEVEL_WORDS = {"error", "err", "fatal", "fail", "panic", "critical", "severe", "warn", "warning", "info", "log"}


def _quotable(head: str) -> str:
    """What a caller quoting a short error would repeat: its first line's words, past its level word (PostgreSQL's
    `ERROR:  deadlock detected`: `deadlock detected`); "" for a line of one word or of more than six."""
    words = [w for w in _WORD.findall(head.lower()) if w not in _LEVEL_WORDS]
    return " ".join(words) if 2 <= len(words) <= 6 else ""
