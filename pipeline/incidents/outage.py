"""One outage, one incident (CONTRACT §2): what ties an error to an open incident of the same
outage (`Candidate.ties`), and whether a line is one line of a dump.

An error that would open an incident joins instead an open incident whose errors were written
within the burst window of it (`INCIDENTIQ_BURST_MINUTES`) and that shares a *named thing* with it
(`line_names.py`): the same host:port, URL host or path, resource, trace or request id, mail
address, exception chain; or a service one of them names (the timeouts of `web` that say
`orders-service` join the refusal `orders-service` logged). Two errors at the same moment that name
nothing in common stay apart. Errors of one service also tie by what identifies their failure (an
errno, a qualified exception class, an operation family past any route), never when they name
different destinations or resources; and a server's error ties to the client relaying it in its
own words (`Wording`).

A line of a dump (`r24=0x… r25=0x…`, `i-fetch......0`, `address: 0x1f`) written by the same
component (service and host) within FOLD_SECONDS of that component's error is part of that error's
record: it joins the error's incident and counts toward its pattern, not one incident per line.
Which of an incident's errors leads it is `leading.py`'s to decide.
"""
from __future__ import annotations

import errno
import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pipeline.clock import parse_iso
from pipeline.incidents.leading import NEUTRAL, answered_5xx, names_cause, names_failure, rank
from pipeline.incidents.machines import nameless_symptom
from pipeline.incidents.line_names import (ADDRESSES, DISTINCT, LABEL, ERROR_KEY, FRAME, HEAD_CHARS, LONG_WORD, first_line,
                                          said_by, went_to)
from pipeline.incidents.same_service import SAME_SERVICE
from pipeline.incidents.writers import CALLS, CLIENT_NAMED, COMPONENT, IS, SERVICE_NAMED, component, identities, process
from pipeline.state import LogEvent

BURST_MINUTES = 5.0  # INCIDENTIQ_BURST_MINUTES's default
FOLD_SECONDS = 2.0  # a dump's lines are written together
HOST, RESOURCE = "host:", "res:"

# a dump's line: fields of numbers and hex (`r24=0x1f r25=0x0`, `address: 0x1f`), or a flag with a
# dotted leader (`i-fetch......0`)
_LEADER_DOTS = re.compile(r"\w\s*\.{4,}\s*[\w-]+\s*$"
                          # a flag padded to its column: `privileged instruction...0`, `(0=sup,1=usr).......0`,
                          # `scratchpad portion of L3.........0 (0M)`
                          r"|[^\s.]\s*\.{2,}\s*(?:0x)?[0-9a-f]{1,8}(?:\s*\(\w{1,8}\))?\s*$", re.I)
# a flag whose label fills its column leaves one dot: `guaranteed instruction cache block touch.0`
_ONE_DOT_FLAG = re.compile(r"^[A-Za-z][A-Za-z ]{30,}[A-Za-z]\.[01]$")
# a dump's heading: a few words and a colon, nothing after (`special purpose registers:`)
_HEADING = re.compile(r"^[A-Za-z][A-Za-z ]{2,60}:$")
_NOT_HEADING = re.compile(r"error|fail|exception|fatal|panic|abort|cannot|can't|unable|denied|refused|invalid", re.I)
_FIELD_LINE = re.compile(r"^[\w .()/-]{1,48}:\s*(?:0x[0-9a-f]+|[0-9a-f]{4,}|\d+)\s*$", re.I)
_DUMP_LABEL = re.compile(r"^[A-Za-z][\w.()/-]*[:=]$")
_DUMP_VALUE = re.compile(r"^(?:[\w.()/-]+[=:])?(?:(?=[\w:.+-]*\d)(?:0x)?[0-9a-f]+(?:[:.](?:0x)?[0-9a-f]+)*"
                         r"|[0-9a-f]{8}|[0-9a-f]{16})[,;]?$", re.I)  # a machine word may hold no digit: ffffffff

# an error's own wording (`Wording`): the clause after its last `: ` (`sorry, too many clients already`),
# as words (those holding a digit and level words left out), at least WORDING_WORDS of them
WORDING_WORDS = 5
# a peer's IP address (v4; v6 compressed with `::` or in its eight groups, so a clock's `12:30:45` is none), which no named
# thing holds without a port
_PEER_ADDRESS = re.compile(r"(?<![\w.:])(?:(?:\d{1,3}\.){3}\d{1,3}|(?:[0-9a-f]{1,4}:)*:(?::?[0-9a-f]{1,4})+"
                           r"|[0-9a-f]{1,4}(?::[0-9a-f]{1,4}){7})(?![\w.:])", re.I)
RELAYED_WORDS = 8  # a clause two clients both relay, the server not in the log: longer, to be no common phrase
WORDING_CHARS = 1_500
MAX_WORDINGS = 64  # the texts (and their clauses) an incident keeps for one batch
REASON_WORDS = 3
_REASON = re.compile(r"\(([^()\n]{6,200})\)\W{0,2}$")
# a server's message its client quotes (Connector/J's `message from server: "Too many connections"`, PyMySQL's
# `(1040, 'Too many connections')`): QUOTED_WORDS or more words in quotes that name a cause
QUOTED_WORDS = 3
_QUOTED_TEXT = re.compile(r"""(?<![\w\\])(?:"([A-Za-z][^"'\n]{6,160})"|'([A-Za-z][^"'\n]{6,160})')(?!\w)""")
_WORDING_TOKEN = re.compile(r"[a-z0-9]+")
_LEVEL_WORDS = frozenset({"error", "err", "warn", "warning", "info", "debug", "trace", "fatal", "critical", "crit",
                          "notice", "severe", "level"})


@dataclass(frozen=True)
class Wording:
    """What an error says in its own words: `clauses`, the clause after the last `: ` of its first line
    and of its error fields (the error a wrapped error ends with: Go's `op: op: cause`, Java's
    `Exception: message`, PostgreSQL's `FATAL:  sorry, too many clients already`), and `text`, all it
    says (`said_by`); both as words, those holding a digit and level words left out."""

    clauses: frozenset[str]
    text: str
    # the long clauses (RELAYED_WORDS or more) its message's lines and its stack's exception lines end with:
    # a third party's words two clients relay alike (`No active warehouse selected in the current session...`
    # after dbt's `000606 (57P03): ` and after the JDBC driver's `SnowflakeSQLException: `)
    relayed: frozenset[str] = frozenset()
    # the reason it gives in parentheses at its end (`giving up on batch 4471 after 3 attempts (certificate has
    # expired)`), as words, REASON_WORDS or more: the error its writer met, said again
    reason: str = ""
    # the server's messages it quotes, as words (`too many connections`): QUOTED_WORDS or more, naming a cause
    quoted: frozenset[str] = frozenset()

    @classmethod
    def of(cls, event: LogEvent) -> "Wording":
        heads = [first_line(event.message)[:HEAD_CHARS]]
        heads += [first_line(v)[:HEAD_CHARS] for k, v in event.fields.items() if isinstance(v, str) and ERROR_KEY.search(k)][:3]
        # an exception written with its message in its own field (a JSON record's `"exception": "psycopg.errors.DiskFull:
        # could not resize …"` under `"event": "query failed"`) says the failure as a stack's last line does
        raised = first_line(event.exception or "")[:HEAD_CHARS] if ": " in (event.exception or "") else ""
        heads += [raised] if raised else []
        clauses = set()
        for head in heads:
            parts = head.rsplit(": ", 2)
            clause = _as_words(parts[-1])
            if clause in _ERRNO_WORDS and len(parts) > 1:
                # the platform's text of an errno is no one's own words: the clause is the operation that met it and
                # the errno together (`could not resize shared memory segment … to … bytes: No space left on device`)
                clause = _as_words(": ".join(parts[-2:]))
            if clause.count(" ") + 1 >= WORDING_WORDS and clause not in _ERRNO_WORDS:
                clauses.add(clause)
        said = said_by(event)[:WORDING_CHARS]
        if raised and raised not in said:
            said = f"{said}\n{raised}"
        relayed = set()
        # (and a record's first continuation lines that are no frames: dbt's indented `000606 (57P03): ...`)
        more = [ln for ln in (event.stack or "")[:HEAD_CHARS].splitlines()[:4] if not FRAME.match(ln)]
        for line in [ln for ln in [*said.splitlines(), *more] if ": " in ln][:16]:
            clause = _as_words(line.rsplit(": ", 1)[-1])
            if clause.count(" ") + 1 >= RELAYED_WORDS:
                relayed.add(clause)
        # an error value of one library relayed whole, its package chain and all (etcd's `etcdserver: mvcc: database space
        # exceeded` in the API server's, a controller's and kubectl's words): a third party's words, however short
        relayed.update(chain for text in (said, *heads) for chain in _chains(text))
        given = _REASON.search(heads[0])
        reason = _as_words(given.group(1)) if given else ""
        # (a JSON record's quoted keys and values are most quotes: the words are counted before the cause is read)
        quoted = {words for m in _QUOTED_TEXT.finditer(said) if (q := m.group(1) or m.group(2)).count(" ") + 1 >= QUOTED_WORDS
                  and (words := _as_words(q)).count(" ") + 1 >= QUOTED_WORDS and words not in _ERRNO_WORDS
                  and names_cause(q)}
        # and an error field whose whole value names a cause: the server's message its client wrote in a field of its own
        # (`"err": "ERR max number of clients reached"`), as a quote of it
        quoted.update(words for k, v in event.fields.items() if isinstance(v, str) and ERROR_KEY.search(k)
                      and (words := _as_words(first_line(v)[:HEAD_CHARS])).count(" ") + 1 >= QUOTED_WORDS
                      and words not in _ERRNO_WORDS and names_cause(first_line(v)[:HEAD_CHARS]))
        return cls(frozenset(clauses), f" {_as_words(said)} ", frozenset(relayed),
                   reason if reason.count(" ") + 1 >= REASON_WORDS else "", frozenset(quoted))

    def relays(self, clauses: set[str], texts: set[str], relayed: set[str] | frozenset[str] = frozenset(),
               quoted: set[str] | frozenset[str] = frozenset()) -> bool:
        """Whether this error says one of an incident's errors' `clauses` word for word, or one of its
        `texts` says this error's clause: a server's error its client relays, either way round."""
        # a relay says more than what it relays: the server's own line is its clause alone (PostgreSQL's
        # `FATAL:  sorry, too many clients already`), the client's says it after its own words; two
        # services writing the same whole line (two regions' copies of one program) relay nothing
        alone = {t.strip() for t in texts}
        mine = self.text.strip()
        return (any(f" {c} " in self.text for c in clauses if c in alone and c != mine)
                or (mine in self.clauses and any(f" {mine} " in t and t.strip() != mine for t in texts))
                # or both relay a third party's long clause, each in its own words (not the same whole line)
                or (bool(self.relayed & relayed) and mine not in alone)
                # or one quotes a server's message that names a cause (`"Too many connections"`) and the other says it,
                # quoted or not (Laravel's `[1040] Too many connections (Connection: mysql, …)`), in its own words
                or (mine not in alone and (any(f" {q} " in t for q in self.quoted for t in texts)
                                           or any(f" {q} " in self.text for q in quoted))))


# a wrapped error written as its packages' prefixes (Go's `pkg: subpkg: message`): two lower-case one-word prefixes or
# more, then its message
_PREFIX_CHAIN = re.compile(r"(?<![\w.-])((?:[a-z][a-z0-9_]{1,30}: ){2,}[A-Za-z][^:\n\"'\\{}()\[\]]{3,160})")


def _chains(text: str) -> list[str]:
    """The prefixed error chains a text says (`_PREFIX_CHAIN`), as words: WORDING_WORDS or more, two prefixes that are no
    level word, its message naming a cause or a symptom (`leading.rank`'s words)."""
    found = []
    for match in _PREFIX_CHAIN.finditer(text[:WORDING_CHARS]):
        *prefixes, message = match.group(1).split(": ")
        prefixes = [p for p in prefixes if p not in _LEVEL_WORDS]
        if not names_failure(message):
            continue
        # (where a chain begins is not written: `Failed to update lock: etcdserver: mvcc: …`, each suffix of two prefixes
        # or more is said)
        for start in range(len(prefixes) - 1):
            words = _as_words(": ".join([*prefixes[start:], message]))
            if words.count(" ") + 1 >= WORDING_WORDS:
                found.append(words)
    return found


def _as_words(text: str) -> str:
    return " ".join(t for t in _WORDING_TOKEN.findall(LONG_WORD.sub(" ", text).lower())
                    if len(t) > 1 and not any(c.isdigit() for c in t) and t not in _LEVEL_WORDS)


# the C library's text of an errno (`No space left on device`) is the platform's wording, said alike by
# every program that meets it, no server's own message relayed
_ERRNO_WORDS = frozenset(_as_words(os.strerror(n)) for n in errno.errorcode)



def other_spelling(names: frozenset[str] | set[str]) -> list[str]:
    """Each dotted host or resource of `names` as the other kind (`res:shop.example` -> `host:shop.example`):
    a host name read from a quoted or dotted word, or from a URL, is the same name."""
    return [(HOST if n.startswith(RESOURCE) else RESOURCE) + n.split(":", 1)[1] for n in names
            if n.startswith((HOST, RESOURCE)) and "." in n and "/" not in n]


def answering_writers_incident(event: LogEvent, names: frozenset[str], near: list["Candidate"]) -> "Candidate | None":
    """The one open incident holding an error its writer wrote within the burst window, for a line of that writer
    saying only that it answered a request with a 5xx and naming no address (an access log's `"POST /checkout" 502`
    a few seconds after its `no live upstreams`): the failure it answered with is that one; session 54: or any symptom
    of it naming no host:port, URL host or service (`machines.nameless_symptom`: a shipping job's `label creation
    failed: auth unavailable` after its token requests failed). None when its writer's errors are in two incidents or
    more (which one it suffers is not said) or in none."""
    if went_to(names) or not (answered_5xx(event) or nameless_symptom(event, names)):
        return None
    writer = component(event)
    held = [c for c in near if writer in c.recent and c.recent[writer] <= event.time]
    return held[0] if len(held) == 1 and not held[0].distinct(names) else None


def same_process_incident(event: LogEvent, names: frozenset[str], near: list["Candidate"]) -> "Candidate | None":
    """The one open incident holding an error the event's process (its header's pid on the same service and host) wrote
    within FOLD_SECONDS before it, for a line naming nothing of its own (no address, resource, id or service, no peer's
    IP): what came of that failure, however it is worded (klogind's `Kerberos authentication failed` after its
    `Authentication failed from <peer>: Permission denied in replay cache code`). None when the process's errors are in
    two incidents or more (which one it concludes is not said: it merges none) or in none; a line naming a peer by its
    address (sshd's `Failed password for root from 203.0.113.9 port 4711`) is about that peer, a failure of its own."""
    writer = process(event)
    if writer is None or not all(n.startswith((COMPONENT, LABEL, *SAME_SERVICE)) for n in names) \
            or _PEER_ADDRESS.search(first_line(event.message)[:HEAD_CHARS]):
        return None
    fold = timedelta(seconds=FOLD_SECONDS)
    held = [c for c in near if writer in c.recent and timedelta(0) <= event.time - c.recent[writer] <= fold]
    return held[0] if len(held) == 1 else None


def concluding_writers_incident(event: LogEvent, names: frozenset[str], near: list["Candidate"]) -> "Candidate | None":
    """The one open incident holding an error the event's writer (its component: service and host) wrote within
    FOLD_SECONDS before it, for a line naming neither a cause nor a symptom (`leading.rank`) and nothing of its own (no
    address, resource, id or service, no peer's IP): what came of that failure, said by the one that failed (a Go
    program's `exit status 1` in the second its `giving up after 5 attempts: … connection refused` was written), as a
    process's line is its process's (`same_process_incident`). Anchored on the writer's latest error, not the incident's
    first: a retrying writer concludes after its last attempt. None when the writer's errors just before are in two
    incidents or more (which failure it concludes is not said: it merges none) or in none; a line saying a cause or a
    symptom is a failure of its own."""
    if rank(event) != NEUTRAL or not all(n.startswith((COMPONENT, LABEL, *SAME_SERVICE)) for n in names) \
            or _PEER_ADDRESS.search(first_line(event.message)[:HEAD_CHARS]):
        return None
    writer = component(event)
    fold = timedelta(seconds=FOLD_SECONDS)
    held = [c for c in near if writer in c.recent and timedelta(0) <= event.time - c.recent[writer] <= fold]
    return held[0] if len(held) == 1 else None


def is_dump(message: str) -> bool:
    """Whether a line reads as one line of a dump: mostly number or hex fields, a `label: 0x…`
    field, or a flag with a dotted leader."""
    line = first_line(message).strip()
    if not line or len(line) > 400:
        return False
    if _LEADER_DOTS.search(line) or _FIELD_LINE.match(line) or _ONE_DOT_FLAG.match(line):
        return True
    if _HEADING.match(line) and " " in line.strip() and not _NOT_HEADING.search(line):
        return True
    tokens = line.split()
    values = [t for t in tokens if not _DUMP_LABEL.match(t)]  # `RAX:` labels the value after it
    return len(tokens) >= 2 and bool(values) and sum(1 for t in values if _DUMP_VALUE.match(t)) * 2 > len(values)


def is_part(event: LogEvent) -> bool:
    """Whether a line carries neither a level nor a time of its own (both inferred: a banner's line
    printed under another's header, compose's exit line): part of what its component wrote with it.
    An unlevelled line with its own time (sshd's, a Go program's) is a line of its own."""
    return bool(event.fields.get("level_inferred") and event.fields.get("time_inferred"))



@dataclass
class Candidate:
    """An open incident an error may join: its window and what its errors named."""

    incident_id: str
    fingerprint: str  # the pattern that opened it: a dump's lines count toward it
    first: str
    last: str
    names: set[str]
    services: set[str]
    recent: dict[str, datetime] = field(default_factory=dict)  # writer -> its latest error here, read in this batch
    # writer -> its latest error here, for a writer whose first error here in this batch was a `nameless_symptom`
    symptoms: dict[str, datetime] = field(default_factory=dict)
    # what its errors read in this batch said (`Wording`): their clauses and their texts
    clauses: set[str] = field(default_factory=set)
    texts: set[str] = field(default_factory=set)
    relayed: set[str] = field(default_factory=set)
    quoted: set[str] = field(default_factory=set)
    own_texts: dict[str, set[str]] = field(default_factory=dict)  # service -> its errors' texts read in this batch
    # `first` and `last` as times, each parsed once when it changes (not once for each error compared with it)
    _first_at: tuple[str, datetime | None] | None = field(default=None, repr=False, compare=False)
    _last_at: tuple[str, datetime | None] | None = field(default=None, repr=False, compare=False)

    def wrote(self, comp: str | None, event: LogEvent) -> None:
        """`event`'s component and process wrote one of its errors at its time (the latest is kept)."""
        for writer in (comp, process(event)):
            if writer is not None and (writer not in self.recent or event.time > self.recent[writer]):
                self.recent[writer] = event.time

    def first_at(self) -> datetime | None:
        """The time of its first error (None: none kept)."""
        if self._first_at is None or self._first_at[0] is not self.first:
            self._first_at = (self.first, parse_iso(self.first))
        return self._first_at[1]

    def last_at(self) -> datetime | None:
        """The time of its last error (None: none kept)."""
        if self._last_at is None or self._last_at[0] is not self.last:
            self._last_at = (self.last, parse_iso(self.last))
        return self._last_at[1]

    def near(self, moment: datetime, minutes: float) -> bool:
        first, last = self.first_at(), self.last_at()
        window = timedelta(minutes=minutes)
        return first is not None and last is not None and first - window <= moment <= last + window

    def ties(self, event: LogEvent, names: frozenset[str], said: frozenset[str],
             wording: Wording | None = None) -> int:
        """How many named things tie the event to this incident (0: none): the things both named
        (a component is no such thing), a service of the incident the event names (or says as a
        word), the event's service named by the incident's errors, an error's wording one of the
        incident's errors said (`Wording`: a server's error its client relays)."""
        # a route is every error of the service that serves it ("POST /api/checkout failed: …"):
        # it ties a caller to that service, not two errors of one service
        own = event.service in self.services
        both = names & self.names
        shared = sum(1 for n in both if not n.startswith((COMPONENT, CLIENT_NAMED, *SAME_SERVICE))
                     and not (own and n.startswith("path:")))
        # a host named as a resource by one line and as a URL's host by another (nginx's `server: shop.example`
        # and `host: "shop.example"`, a checker's `https://shop.example/`) is one name
        shared += sum(1 for n in other_spelling(names) if n in self.names)
        others = {s.lower() for s in self.services if s not in (event.service, "unknown")}
        shared += len((said | {n[len(SERVICE_NAMED):] for n in names if n.startswith(SERVICE_NAMED)}) & others)
        shared += int(event.service != "unknown"
                      and any(k + event.service.lower() in self.names for k in (SERVICE_NAMED, CALLS)))
        if not shared and event.service not in self.services and len(mine_said := _as_words(event.service)) >= 3:
            # the event's service said as a word by one of the incident's errors (a proxy's `service=search@docker`
            # before the search service's own error was read), as the event saying one of the incident's services is
            shared += int(any(f" {mine_said} " in text for text in self.texts))
        if not shared and (spoken := [w for o in others if " " in (w := _as_words(o))]):
            # one of the incident's services said in words by the event (`shipping quote failed: 502` of the service
            # `shipping-quote`), as a word names a one-word service: a name of two words or more, not one word
            text = wording.text if wording is not None else f" {_as_words(said_by(event)[:WORDING_CHARS])} "
            shared += int(any(f" {w} " in text for w in spoken))
        # a caller and its callee by any spelling of the callee's name: the caller's `redis-master:6379`,
        # `http://billing:8080/...` or `billing.shop.svc.cluster.local` names the writer whose service or
        # host is `redis-master-0` or `billing-1` (`identities`), either way round
        mine = identities(event)
        # a server's error naming the client it served, and that client's error, either way round: one failure told
        # by both ends (a deadlock the database reports and its client relays)
        shared += int(any(CLIENT_NAMED + i in self.names for i in {event.service.lower(), *mine}))
        shared += sum(1 for n in names if n.startswith(CLIENT_NAMED) and IS + n[len(CLIENT_NAMED):] in self.names)
        shared += sum(1 for n in names if n.startswith((SERVICE_NAMED, CALLS)) and IS + n.split(":", 1)[1] in self.names
                      and n.split(":", 1)[1] not in mine)
        shared += int(any(k + i in self.names for i in mine if i != event.service.lower()
                          for k in (SERVICE_NAMED, CALLS)))
        if not shared and wording is not None and not any(n.startswith(ADDRESSES) for n in names) \
                and not self.distinct(names) and wording.relays(self.clauses, self.texts, self.relayed, self.quoted):
            # the same failure in the same words (a callee's error text, relayed by a caller that names no
            # address); an error that names where it went is tied by that address or not at all (two
            # databases refusing alike are two failures)
            shared = 1
        if shared:
            return shared
        # one service's own ties (an operation family, an errno, an exception class) join its errors
        # only when they name no different destinations or resources: two jobs of one scheduler that
        # fail in the same words, one writing a bucket and one logging in to a mail server, stay apart
        weak = sum(1 for n in both if n.startswith(SAME_SERVICE))
        if wording is not None and wording.reason:
            # the reason it gives is what an error of its own service here said (its retry's last error, given up on)
            weak += int(any(f" {wording.reason} " in text for text in self.own_texts.get(event.service, ())))
        # or one burst of one writer: an error naming neither a cause nor a symptom written within
        # FOLD_SECONDS of the incident's first error, its writer's error there (a shutdown's lines, the
        # exit an exception caused), says what came of that failure; one naming a cause (a refused
        # connection, a full disk) or a symptom (a timeout of another call) is a failure of its own, and
        # so is one written later (a busy writer's stream of other errors is no burst of this one)
        if component(event) in self.recent and rank(event) == NEUTRAL:
            first = self.first_at()
            weak += int(first is not None and abs(event.time - first) <= timedelta(seconds=FOLD_SECONDS))
        elif component(event) in self.recent and answered_5xx(event) and not went_to(names):
            # the 5xx its writer answered the failed request with, written just after that error (ASP.NET's
            # `HTTP GET /api/orders responded 500 in 12.8 ms`, Rails' `Completed 500 Internal Server Error`)
            since = event.time - self.recent[component(event)]
            weak += int(timedelta(0) <= since <= timedelta(seconds=FOLD_SECONDS))
        return weak if weak and not self.distinct(names) else 0

    def distinct(self, names: frozenset[str]) -> bool:
        """Whether the event names a destination or resource of a kind the incident names too, and
        none of the incident's of that kind."""
        for kind in DISTINCT:
            # a path is a place on the writer's storage, not a thing one failure names and another does not:
            # two files of one full disk are one failure
            mine = {n for n in names if n.startswith(kind) and "/" not in n}
            theirs = {n for n in self.names if n.startswith(kind) and "/" not in n}
            if mine and theirs and not mine & theirs:
                return True
        return False

