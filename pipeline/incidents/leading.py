"""Which of an incident's errors leads it (CONTRACT §2), and why, in the reviewer's words.

The leader is the incident's earliest error on the cause side: an error that names a cause (a
refusal, an exhausted pool, an expired certificate, a kill, no space...) before the others (one
that names nothing, a symptom: a timeout, a 5xx, unavailable, a retry), the earliest of its class. A
caller's error (`side`: it names another writer of the incident, and none names it) comes after
every other; a WARN that states the cause's own failure (`states_cause`) may lead, though it opens
nothing. A leader's words are read by `leader_rank` (what it states: no field's name, a signal sent to a worker or a
guess asked, no thing's or level's name, `HikariPool-1`, `certificate`, `FATAL:`; its trace's first line; a 401/403
answered), the grouping rules' by `rank`: choosing a leader never changes what is grouped. Its reason quotes the clause
that placed it (`stated`) and says whether it says what is wrong, what a connection to another end met or only how a
call fared.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from pipeline.clock import iso
from pipeline.incidents.line_names import ERROR_KEY, STACK_ERROR, first_line, holds_any
from pipeline.incidents.saturation import over_limit, saturated
from pipeline.incidents.writers import BY, OF
from pipeline.ingest.readable import readable_line
from pipeline.state import LogEvent

WARNED = "warn:"  # the pattern of a leader that is a WARN (it opened nothing): its masked line's fingerprint
CAUSE, NEUTRAL, SYMPTOM = 0, 1, 2
_RANKS = ("cause", "neutral", "symptom")
CALLEE, BETWEEN, CALLER = 0, 1, 2
_SIDES = ("callee", "between", "caller")

# a limit reached, in the words servers log it (`reached pm.max_children`, `max connections reached`)
# (a retry budget is no resource: `reached max retries: 9`)
_LIMIT_REACHED = (r"\breached (?:the |its )?(?:[\w-]+[ ._])?(?:max|maximum|limit)(?![\w ]{0,12}(?:retr|attempt|tries))"
                  r"|\b(?:max\w*|limit) (?:reached|hit)\b"
                  # a count at its ceiling, said as the count (Redis's `max number of clients reached`), not a retry budget
                  r"|\bmax(?:imum)? number of (?!retr|attempt|tries)\w+ (?:reached|exceeded)\b")
# memory run out, of any kind (`out of memory`, PostgreSQL's lock table's `out of shared memory`, `out of direct memory`)
_OUT_OF_MEMORY = r"out of (?:[\w-]+ )?memory"
# a limit or a rate a provider enforces (`Rate exceeded`, `limit exceeded`, `throttled`)
_THROTTLED = r"(?:rate|limit|quota)(?: of [\w.,]+)? exceeded|throttl|too ?many ?requests"
# a resource full (`1 full osd(s)`, `disk is full`), not a queue or buffer full behind a slow consumer (backpressure:
# `outbox full` is what a failing publisher leaves) nor a whole text (`full error: {...}`)
_FULL = r"\bfull\b(?! (?:error|message|details?|stack|trace|text|response|output|name|path|url|list|scan|sync|restart|backup)\b)"
# (the queue-like thing full, said before it: `outbox full`, `outbox for 'audit-log' full`, `send buffer is full`)
_BACKPRESSURE = re.compile(r"\b(?:queue|buffer|outbox|backlog|channel|inbox|mailbox)s?\b[^.;:\n]{0,40}?\bfull\b", re.I)
# what a line says about where it stands in a failure (lower-case, searched in the message's head)
_SYMPTOM = re.compile(
    r"time[d ]?\s?out|timeout|deadline exceeded|unavailable|bad gateway|internal server error|upstream|"
    r"(?:status|code|http/\d(?:\.\d)?|returned|responded|response|error)\W{0,3}5\d\d\b|\b50[234]\b|"
    r"circuit|slow|latency|degraded|failed to (?:call|fetch|reach)",
    re.I)
# what a component does about a failure (a retry, a back-off): a symptom only when the line names no
# cause (`connection refused; retrying in 1s (attempt 1/5)` is the refusal, said by the one refused)
_REACTION = re.compile(r"retry|retrying|retries|backoff|back-off|trying again|giving up", re.I)
_CAUSE = re.compile(
    r"refused|unreachable|no route|reset by peer|could not resolve|unknown host|name resolution|dns|"
    r"expired|certificate|x509|handshake|denied|unauthori[sz]ed|forbidden|authentication failed|"
    # (a retry budget spent is a reaction, not a resource: `retry 3 exhausted`, `retries exhausted`)
    r"(?<!retry )(?<!retries )(?<!attempts )(?<!\d )exhausted|pool|too many (?:connections|clients|open files)|max(?:imum)? connections|"
    # a limit or a rate a provider enforces (`Rate exceeded`, `limit exceeded`, `throttled`)
    + _THROTTLED + r"|rate.?limit|" + _OUT_OF_MEMORY + r"|outofmemory|\boom|"
    r"killed|no space|disk full|quota|segfault|segmentation|panic|"
    r"fatal|crash|corrupt|deadlock|not found|no such|missing|not configured|undefined|invalid|parity|machine check|"
    r"leak|could not be established|(?:could not|cannot|can't|unable to) connect|(?:connection|broker|node) lost|"
    r"lost connection|"
    # a store that takes no writes (MySQL's `--read-only option`, Redis's `READONLY`, a disk remounted read-only), a
    # lock another holder keeps (`Could not acquire change log lock. Currently locked by …`, a file `locked by another
    # process`), a device failing its I/O (`blk_update_request: I/O error`, EIO's `Input/output error`)
    r"read[- ]?only|\blocked by\b|\bi/o error|input/output error|"
    # a resource full or short, a limit reached (session 49: `1 full osd(s)`, `not enough free space in mail queue`,
    # `worker_connections are not enough`, `server reached pm.max_children setting`)
    + _FULL + r"|\bnot enough\b|" + _LIMIT_REACHED,
    re.I)
# what a WARN must say to lead (it opens nothing): the cause's own failure, not a word of it
# (`HikariPool-1 - Thread starvation...` names a pool, it states no failure)
_WARN_CAUSE = re.compile(
    r"refused|unreachable|no route|reset by peer|could not resolve|unknown host|name resolution|"
    r"expired|certificate|x509|handshake fail|denied|authentication failed|exhausted|"
    r"too many (?:connections|clients|open files)|" + _OUT_OF_MEMORY + r"|outofmemory|\boom|killed|no space|disk full|"
    # a provider's limit said by the one it throttles (botocore's `Retry needed … (ThrottlingException from kms…)`)
    + _THROTTLED + r"|"
    r"leak|could not be established|(?:could not|cannot|can't|unable to|failed to) connect|"
    r"(?:connection|broker|node) lost|lost connection|is down|not available|unavailable|not configured|"
    + _FULL + r"|\bnot enough\b|" + _LIMIT_REACHED,
    re.I)


def side(service: str, names: set[str] | frozenset[str]) -> int:
    """Where a service stands among an incident's writers (by its names, `line_names.writer_names`): CALLEE when
    another writer's error names it and its own errors name none of the others (the failing end of
    the calls), CALLER when it names another and none names it, BETWEEN otherwise (both, or neither)."""
    svc = service.lower()
    of_me, by_me = f"{OF}{svc}|", f"{BY}{svc}|"
    mine: set[str] = set()
    others: set[str] = set()
    for n in names:
        if n.startswith(OF):
            (mine if n.startswith(of_me) else others).add(n.split("|", 1)[1])
    others -= mine  # two services on one host: the host is no other writer
    named = calls = False
    for n in names:
        if n.startswith(BY):
            target = n.split("|", 1)[1]
            if n.startswith(by_me):
                calls = calls or target in others
            else:
                named = named or target in mine
    if named != calls:
        return CALLEE if named else CALLER
    return BETWEEN


def states_cause(event: LogEvent) -> bool:
    """Whether a WARN states a cause's own failure (a refusal, a leak, a broker unreachable, a measured quantity at or
    past the bound it names: `saturation.saturated`...)."""
    # the narrow words first: most WARNs state no failure, and are dismissed by one search
    head = first_line(event.message)[:400]
    return bool(_WARN_CAUSE.search(head) or saturated(head)) and leader_rank(event) == CAUSE


# what names a thing a failure may be about, not a failure (`reloaded TLS certificate for api.example`): a WARN saying it
# may lead, a line below WARN must say more
_THING = re.compile(r"certificate|x509", re.I)


# a piece of text every stated failure holds (every branch of _WARN_CAUSE, but a thing's name; `saturated` has its own):
# `_WARN_CAUSE` tries each of its branches at each character, too slow for every INFO line of a log
_STATED_STEMS = ("refused", "unreachable", "no route", "reset by peer", "resol", "unknown host", "expired", "handshake fail",
                 "denied", "authentication failed", "exhausted", "many", "memory", "oom", "killed", "no space", "full",
                 "exceeded", "throttl", "leak", "established", "connect", "lost", "is down", "available", "not configured",
                 "not enough", "reached", "limit", "max", "hit")


# narrower pieces, one of which every match of a `_WARN_CAUSE` branch holds as written (`t connect`: could not,
# cannot, can't or failed to connect; `be established`; `out of ` memory) once `_THING` has nothing to take out:
# `connect`, `memory` or `max` alone let through a fifth of a Hadoop or Spark log's INFO lines (`Connecting to
# ResourceManager`, `MemoryStore started`), each then searched by `_WARN_CAUSE`, for none stating a failure.
# Exact only where lower-casing is what `re.I` compares (ASCII text): any other line takes the wide stems alone.
_FAILURE_STEMS = ("refused", "unreachable", "no route", "reset by peer", "resol", "unknown host", "expired",
                  "handshake fail", "denied", "authentication failed", "exhausted", "many", "out of ", "outofmemory",
                  "oom", "killed", "no space", "full", "exceeded", "throttl", "leak", "be established", "t connect",
                  "o connect", "lost", "is down", "not available", "unavailable", "not configured", "not enough",
                  "reached", " hit")


def states_failure(event: LogEvent) -> bool:
    """Whether a line below WARN states a cause's own failure (`states_cause`), in more than the name of a thing."""
    head = first_line(event.message)[:400]
    lowered = head.lower()
    if not holds_any(lowered, _STATED_STEMS) or (head.isascii() and "certificate" not in lowered and "x509" not in lowered
                                                 and not holds_any(lowered, _FAILURE_STEMS)):
        # (most of a log is below WARN and states nothing: a few substring tests dismiss it) no branch of `_WARN_CAUSE`
        # can match: spare its search; `saturated` dismisses most lines by a few substring tests of its own
        return saturated(head, lowered) and leader_rank(event) == CAUSE
    head = _THING.sub(" ", head)
    return bool(_WARN_CAUSE.search(head) or saturated(head)) and leader_rank(event) == CAUSE


# (or its reason phrase alone, RFC 9110 15.6: Django's `Internal Server Error: /api/signup`, session 53)
_STATUS_5XX = re.compile(r"\b5\d\d\b|\bInternal Server Error\b|\bBad Gateway\b", re.I)
_NOT_ONLY_STATUS = re.compile(r"time[d ]?\s?out|timeout|deadline|upstream|circuit|slow|unavailable|refused|reset", re.I)


def answered_5xx(event: LogEvent) -> bool:
    """Whether an error says only that a request was answered with a 5xx status (no timeout, no cause)."""
    head = first_line(event.message)[:400]
    return (bool(_STATUS_5XX.search(head)) and rank(event) == SYMPTOM and not _NOT_ONLY_STATUS.search(head)
            and not _CAUSE.search(head))


def names_cause(text: str) -> bool:
    """Whether a text names a cause and no symptom (a refusal, a limit reached, `Too many connections`)."""
    return bool(_CAUSE.search(text)) and not _SYMPTOM.search(text)


def names_failure(text: str) -> bool:
    """Whether a text names a cause or a symptom (`database space exceeded`, `connection refused`, `deadline exceeded`)."""
    return bool(_CAUSE.search(text) or _SYMPTOM.search(text) or _EXCEEDED.search(text))


# a quantity past what it may be (etcd's `database space exceeded`, `memory limit exceeded`)
_EXCEEDED = re.compile(r"\bexceed(?:ed|s)\b", re.I)


def rank(event: LogEvent) -> int:
    """CAUSE, NEUTRAL or SYMPTOM, by what the line says (a symptom's wording wins: "timed out
    after connection refused" is a caller's view of the refusal)."""
    return _rank(event, _said(event), leader=False)


def leader_rank(event: LogEvent) -> int:
    """`rank` as a leader is ranked (the grouping rules read `rank`, unchanged): by what the line states, not by the
    names of its fields (`internal_log_rate_limit=true`, `"pool_size": 20` name a field; a value says what happened),
    and a line that says only what failed speaks through the first line of the trace it carries, whatever its class is
    called (`WebClientResponseException$Forbidden: 403 Forbidden … rate limit exceeded`)."""
    said = _UNSTATED.sub(" ", _said(event))
    return _rank(event, _FIELD_NAME.sub(" ", said), leader=True, measured=said)


def stated(event: LogEvent) -> str:
    """The clause that places a line as a leader (`leader_rank`'s reading: the symptom or the cause it names, the cause
    its stack's exception lines name), as written, for its reason to quote; '' when it names neither."""
    text = _FIELD_NAME.sub(" ", _UNSTATED.sub(" ", _said(event)))
    # (each found where `_rank` finds it, a thing's or a level's name and a backpressure blanked, positions kept; a
    # severity's word, `FATAL ERROR`, says less than the failure stated beside it)
    causes = list(_CAUSE.finditer(_BACKPRESSURE.sub(lambda m: " " * len(m.group(0)), _unnamed(text))))
    found = (_SYMPTOM.search(text) or next((m for m in causes if not _SEVERITY.fullmatch(m.group(0))), None)
             or (causes[0] if causes else None) or _DENIED_STATUS.search(text))
    if found is None and event.stack and not _REACTION.search(text):
        # (the stack's exception line that names it, whole: `psycopg.errors.UndefinedColumn: column "x" does not exist`)
        raised = [m.group(0).strip()[:400] for _, m in zip(range(8), STACK_ERROR.finditer(event.stack[:20_000]))]
        if not any(_SYMPTOM.search(line) for line in raised):
            return next((" ".join(line.split())[:80] for line in raised if _CAUSE.search(line)), "")
    return "" if found is None else _clause(text, found.start(), found.end())


# where a clause ends: a colon, a semicolon or a full stop before a space, a comma, a bracket, a new line, ` - `
_CLAUSE_END = re.compile(r"[:;.,](?:\s|$)|[()\[\]{}\n]|\s-\s")


def _clause(text: str, start: int, end: int) -> str:
    """The clause a match is part of (`Connection to orders-db:5432 refused`), as written, at most 80 characters."""
    begin = max((m.end() for m in _CLAUSE_END.finditer(text, max(0, start - 60), start)), default=max(0, start - 60))
    stop = next((m.start() for m in _CLAUSE_END.finditer(text, end, end + 60)), min(len(text), end + 60))
    return " ".join(text[begin:stop].split()).strip(" \t\"'`")[:80]


# a field's name, not what it holds: a `key=` of a logfmt or query string, a JSON object's `"key":`
_FIELD_NAME = re.compile(r"\b[A-Za-z_][\w.-]*(?==)|\"[A-Za-z_][\w.-]*\"(?=\s*:)")


# a denial said by the status that answered it (401, 403: as a 5xx is a symptom's), `wrong status code '403'`
_DENIED_STATUS = re.compile(r"(?:status|code|returned|responded|response|http/\d(?:\.\d)?)\W{0,3}40[13]\b", re.I)


# what a line says that states no cause of its own: a signal its writer sent its worker (`was sent SIGKILL`, `killed by
# signal 9`, `exited with 'signal 9 (SIGKILL)'`: a supervisor's reaction to why, which its line before says: a worker
# timeout, a harakiri, a time limit) and a guess asked as a question (gunicorn's `Perhaps out of memory?`)
_UNSTATED = re.compile(r"\b(?:was |were )?(?:sent|killed by|terminated by|exited with)\s+'?(?:signal\s*\d+|SIG[A-Z]+)"
                       r"(?:\s*\(SIG[A-Z]+\))?'?|\b(?:perhaps|maybe|possibly|probably)\b[^.!?\n]{0,80}\?", re.I)


def _said(event: LogEvent) -> str:
    """What a line says: its exception, its first line and its error fields."""
    fields = [v[:400] for k, v in event.fields.items() if isinstance(v, str) and ERROR_KEY.search(k)][:4]
    return " ".join(t for t in (event.exception or "", first_line(event.message)[:400], *fields) if t)


def _rank(event: LogEvent, text: str, *, leader: bool, measured: str = "") -> int:
    if _SYMPTOM.search(text):
        return SYMPTOM
    # as a leader, a thing's or a level's name is no cause (`HikariPool-1`, a `certificate`, `dns`, `FATAL:`)
    causal = _BACKPRESSURE.sub(" ", _unnamed(text) if leader else text)
    if _CAUSE.search(causal) or over_limit(text) or leader and _DENIED_STATUS.search(text):
        return CAUSE
    # as a leader, a quantity at or past the bound it names (a field's name may say which is which: `used=`, `"max":`),
    # not a queue's or a buffer's behind a slow consumer
    if leader and saturated(_BACKPRESSURE.sub(" ", measured)):
        return CAUSE
    if _REACTION.search(text):
        return SYMPTOM
    if event.stack:
        # a line that says only what failed (`list invoices failed`, `Application run failed`) and whose traceback
        # ends with why (`psycopg.errors.UndefinedColumn: column "tax_region" does not exist`, a Java stack's `Caused by:
        # …LockException: Could not acquire change log lock`; its exception's class alone says no more): the stack's
        # exception lines (as a leader, and the trace's first line, which states its exception whatever its class is named)
        lines = [m.group(0)[:400] for _, m in zip(range(8), STACK_ERROR.finditer(event.stack[:20_000]))]
        if leader:
            lines.append(first_line(event.stack[:2_000])[:400])
        raised = " ".join(lines)
        if _CAUSE.search(raised) and not _SYMPTOM.search(raised):
            return CAUSE
    return NEUTRAL


@dataclass(frozen=True)
class Leader:
    """An incident's leader: the event, its pattern, and what it was chosen by."""

    event_id: str
    pattern: str
    service: str
    time: str
    rank: int
    message: str
    position: str = ""  # where the event was read (`source@offset`): a leading WARN is stored as context
    side: int = 1  # BETWEEN: where its service stands in the incident's calls (`side`), set when chosen
    said: str = ""  # the words that placed it (`stated`: the cause or the symptom it names), quoted by its reason

    @classmethod
    def of(cls, event: LogEvent, pattern: str) -> "Leader":
        return cls(event.event_id, pattern, event.service, iso(event.time), leader_rank(event),
                   readable_line(first_line(event.message), event.exception)[:200], event.position or "",
                   said=stated(event))

    def key(self) -> tuple[int, str, str, int, str]:
        """Earliest cause first, then the earliest of the rest (a line naming no cause says no more of
        where the failure began by naming no symptom either: `outbox full` after the publisher's
        deadlines); at the same instant (times a line did not write are inferred from its neighbours')
        the one read first from the same source."""
        source, _, offset = self.position.rpartition("@")
        return (min(self.rank, NEUTRAL), self.time, source, int(offset) if offset.isdigit() else 0, self.event_id)

    def ranked(self, names: set[str] | frozenset[str]) -> tuple[Any, ...]:
        """Its order among an incident's possible leaders (the incident's `names`): a caller's error
        after every other (`side`: it names another writer of the incident, and none names it; what it
        says is its view of the other's failure, however early it wrote it or whatever cause it names),
        then `key`."""
        return (side(self.service, names) == CALLER, *self.key())

    def reason(self) -> str:
        """Why this event leads, in the reviewer's words (true when it was chosen): what its line says (`said`), and
        whether that says what is wrong, what a connection to another end met (the cause is at that end) or only how a
        call fared."""
        if self.side == CALLEE:  # set only when it decided: a caller's error came first by `key`
            first = ("a warning it wrote before its errors" if self.pattern.startswith(WARNED) else "its earliest error")
            return (f"{first}{self._quoted()}: {self.service} is the service the incident's other errors name (their"
                    " calls to it failed), so its side is the cause and its line leads theirs, even those written"
                    " earlier: they say how their calls to it fared")
        return self._reason()

    def _quoted(self) -> str:
        return f" ('{self.said}')" if self.said else ""

    def _reason(self) -> str:
        quoted = self._quoted()
        if self.pattern.startswith(WARNED):
            what = "stating the cause" if self.rank == CAUSE else "about the same thing its errors name"
            return (f"the first sign: a warning written before the incident's errors, {what}{quoted}; a warning opens"
                    " nothing, but the errors that followed name what it names")
        if self.rank == CAUSE:
            if self.said and _CALL_WORDS.search(self.said) and not _CAUSE.search(_CALL_WORDS.sub(" ", self.said)):
                return (f"the earliest error that names a cause{quoted}, said of a connection to another end (a"
                        " refusal, a reset, a name not resolved): the cause is at that end; the incident's other errors"
                        " came later or say only how their calls fared (a timeout, a 5xx, a retry)")
            return (f"the earliest error that names a cause{quoted}: it says what is wrong, not only how a call fared;"
                    " the incident's other errors came later or say only how their calls fared (a timeout, a 5xx,"
                    " a retry)")
        if self.rank == NEUTRAL:
            return ("the earliest error; none of the incident's errors names a cause (they say that something failed,"
                    " not what), so the first of them leads")
        return (f"the earliest error, read as a symptom{quoted}: it says how a call or a service fared (a timeout, a"
                " 5xx, unavailable, slow, a retry), not what went wrong; none of the incident's errors names a cause")

    def as_json(self) -> dict[str, Any]:
        return {"event_id": self.event_id, "pattern": self.pattern, "service": self.service, "time": self.time,
                "message": self.message, "rank": _RANKS[self.rank], "reason": self.reason(),
                "position": self.position, "side": _SIDES[self.side], "said": self.said}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Leader":
        rank_name = data.get("rank", "neutral")
        side_name = data.get("side", "between")
        return cls(data["event_id"], data["pattern"], data["service"], data["time"],
                   _RANKS.index(rank_name) if rank_name in _RANKS else NEUTRAL, data.get("message", ""),
                   data.get("position", ""), _SIDES.index(side_name) if side_name in _SIDES else BETWEEN,
                   str(data.get("said") or ""))


# a cause said as what a connection to another end met (a refusal, a reset, a name not resolved, a connection that could
# not be made), whichever end wrote it: the reason says the cause is at that other end
_CALL_WORDS = re.compile(r"refused|unreachable|no route|reset by peer|could not resolve|unknown host|name resolution|dns|"
                         r"could not be established|(?:could not|cannot|can't|unable to) connect|"
                         r"(?:connection|broker|node) lost|lost connection", re.I)
# what names a thing or a level, not a failure (as a leader): a pool's or its thread's name (`HikariPool-1`,
# `pool-3-thread-7`, `HTTPConnectionPool`, `pooler`), a certificate, x509, DNS (a failure of one is said by other words:
# `expired`, `exhausted`, `could not resolve`, `no such host`), a level written in the text (`FATAL:`, `[fatal]`)
_NAMED = re.compile(r"(?i:\w*pool\w*|certificate|x509|\bdns\b)|\b(?:FATAL|PANIC|CRITICAL)(?=:|\])|\[(?i:fatal)\]")
# a severity's word, which says less than a failure stated beside it (`FATAL ERROR: Reached heap limit`)
_SEVERITY = re.compile(r"fatal|panic|crash", re.I)


def _unnamed(text: str) -> str:
    """`text` with the names of things and levels (`_NAMED`) blanked, each by as many spaces (positions kept)."""
    return _NAMED.sub(lambda m: " " * len(m.group(0)), text)
