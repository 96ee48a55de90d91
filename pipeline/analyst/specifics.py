"""Specifics (issue 36.2): what the events name that an on-call engineer acts on, found by the
shape of the text rather than by any incident's words, each a finding quoted from an event with
its span, ranked (the deepest cause first).

- `error`: the error statement of an event: its most telling line (one naming an error class, a
  signal or an error word; the later of equally telling lines, since a traceback ends with its
  exception), never a stack frame. The deepest `Caused by:` of a trace ranks first, then the line
  that carries the cause's signature (`telling`), then the first error's line.
- `address`: a host and port the events connect to, by its role (findings.served_or_client: the local side of
  `a->b`, `from a`, a `client:` field, an access line's client and the host its request names, an ephemeral port
  no word says is called, are no peer); those the error statements' own events name first, and a host those
  events name without a port (a URL's, "for host X") when they name no host and port.
- `endpoint`: a URL with its path, `METHOD /path`, or a gRPC `package.Service/Method`.
- `expiry` and `subject`: a certificate's expiry (the date after "is after", "expired on",
  `notAfter=`, "valid until" ...) and its `CN=`.
- `queue`: a queue, topic, stream or partition named with a dotted or dashed name.
- `setting`: a `name=value` (or `name -> value`, a JVM or CLI flag) anywhere in the window whose
  name shares a word with the error statements, or whose number the problem lines repeat (a limit
  reached), or a memory flag when the statements are about memory, or whose name the cause's doc
  writes (`ip_local_port_range`); a context line's run of `key=value` pairs from a key the error
  statements say (`table=orders wcu=400`); for a resource run out, the count at its maximum, or the
  line counting none free while callers wait, whole.
- a certificate's expiry and subject said in a context line count when the errors speak of a certificate.
- `path`: a shared library (`libvips.so.42`) or a version-stamped migration file a problem line names.

`sentence` turns them into the root cause's words; `summary` into the recommendation's step.
"""
from __future__ import annotations

import functools
import re
from collections.abc import Callable

from pipeline.analyst.findings import _HINT_BEFORE, _SOURCE_FILE, _in_hint, served_or_client
from pipeline.ingest.readable import readable_line
from pipeline.state import Finding, FindingKind, LogEvent, Span, counted, source_of

STATEMENT_CHARS = 300  # of one quoted statement: enough for an exception and its message
MAX_STATEMENTS = 2  # plus the deepest cause
MAX_PER_KIND = 2
_LINES = 60  # of one text: a statement is in a trace's head or its exception line
_PROBLEM = ("ERROR", "FATAL", None)
# fields whose text is an error or its trace (exc_info, error, err, reason, cause, detail ...)
_ERROR_FIELD = re.compile(r"exc|err|traceback|stack|reason|cause|detail|fault", re.I)
_FRAME = re.compile(r"^\s*(?:at\s+\S+[(\s]|File \"|\.\.\. \d+ more|[\w/.-]+\.(?:go|py|js|ts|rb):\d+(?:\s+\+0x[0-9a-f]+)?\s*$|"
                    r"[\w.]+\((?:0x[0-9a-f]+|\{)|"
                    r"goroutine \d+|Traceback \(most recent call last\)|\^+\s*$|#\s*$|[-=*#~]{3,}\s*$)")
_CAUSED_BY = re.compile(r"^\s*Caused by:\s*")
# a cause chain's inner link, Java's `Caused by:` or .NET's `--->`, and the line after it
_INNER = re.compile(r"^[ \t]*(?:Caused by:|---> )[ \t]*(?P<what>[^\n]{4,300})(?:(?=\n(?P<more>[ \t]+\S[^\n]*)))?", re.M)
FRAME, CAUSED_BY, INNER = _FRAME, _CAUSED_BY, _INNER  # read by pipeline/analyst/ideas.py too
# an error class's name (`LinkageError`, `PoolTimeout`, `UniqueViolation`), a signal, a status code
# before a colon (`DEADLINE_EXCEEDED:`): only whether a line holds one matters, so no name is spanned
_CLASS = re.compile(r"[A-Za-z0-9_$](?:Error|Exception|Fault|Failure|Timeout|Violation|Refused|Exhausted)\b|"
                    r"\bSIG[A-Z]{3,}\b|\b[A-Z][A-Z_]{5,}:")
# words and phrases that say something failed (a set lookup per line word: cheaper than a regex
# alternation tried at every position of every line)
_ERROR_WORDS = frozenset("error errors fail failed failure fails refused denied timeout cannot unable exceeded expired "
                         "invalid unknown fatal killed violates violate rejected nacked full exhausted unavailable panic "
                         "abort aborted crash crashed unrecognized deadlock deadlocked missing reset limit".split())
_ERROR_PHRASES = ("timed out", "can't", "could not", "couldn't", "not found", "no such", "out of", "not set",
                  "not known", "not allowed", "not permitted", "not valid", "too many")
_LINE_WORDS = re.compile(r"[a-z]+")


_CERTIFICATE = re.compile(r"certificate|\bcert\b|x509|\btls\b|\bssl\b", re.I)


# `key=value` pairs in a run (`table=orders wcu=400`): the key a word, the value up to a blank or a separator
_PAIRS = re.compile(r"(?<![\w.\-/])[A-Za-z][\w.-]*=[^\s,;=\"'()\[\]{}]+(?:[ \t]+[A-Za-z][\w.-]*=[^\s,;=\"'()\[\]{}]+)*")
_PAIR_KEY = re.compile(r"([A-Za-z][\w.-]*)=")


def _keyed_runs(text: str, said_words: set[str]) -> list[tuple[str, int]]:
    """(value, start) of each run of `key=value` pairs in a text from its first pair whose key (a word of four
    letters or more, not a stop word) the error statements say."""
    out = []
    for m in _PAIRS.finditer(text):
        for key in _PAIR_KEY.finditer(m.group()):
            if _words(key.group(1)) & said_words and len(key.group(1)) >= 4:
                out.append((m.group()[key.start():], m.start() + key.start()))
                break
    return out


def _counting_line(text: str) -> str | None:
    """The first line of a text that counts a resource at its maximum (counted_at_max), stripped, or None."""
    if not counted_at_max(text):
        return None
    return next((line.strip()[:STATEMENT_CHARS] for line in text[:2_000].splitlines() if counted_at_max(line)), None)


def _says_failure(line: str) -> bool:
    lowered = line.lower()
    return not _ERROR_WORDS.isdisjoint(_LINE_WORDS.findall(lowered)) or any(p in lowered for p in _ERROR_PHRASES)

_DATE = r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|" \
        r"[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4}(?: GMT)?"
_RULES: tuple[tuple[FindingKind, re.Pattern, tuple[str, ...]], ...] = (
    ("subject", re.compile(r"(?P<v>\bCN\s?=\s?[^,/\s\"'()]+)"), ("cn",)),
    ("endpoint", re.compile(r"(?P<v>\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+/[^\s\"'\\?]*)"),
     ("get ", "post ", "put ", "patch ", "delete ", "head ", "options ")),
    ("endpoint", re.compile(r"(?P<v>https?://[A-Za-z0-9.-]+(?::\d+)?/[^\s\"'\\)\]>,;]*[\w/])"), ("http",)),
    ("endpoint", re.compile(r"(?<![\w./])(?P<v>[a-z][\w]*(?:\.[\w]+)*\.[A-Z]\w*/[A-Z]\w*)\b"), ("/",)),
    ("queue", re.compile(r"\b(?:queue|topic|stream|partition|exchange)s?\s+[`\"']?(?P<v>[A-Za-z][\w]*(?:[.\-:/][\w]+)+)",
                         re.I), ("queue", "topic", "stream", "partition", "exchange")),
    ("path", re.compile(r"(?<![\w./-])(?P<v>lib[\w+-]*\.(?:so(?:\.\d+)*|dylib)|[\w-]+\.dll|\d{8,14}_[\w-]+\.\w{1,5})\b"),
     (".so", ".dylib", ".dll", "0_", "1_", "2_", "3_", "4_", "5_", "6_", "7_", "8_", "9_")),
)
# a certificate's expiry: a date (found first: dates are rare) after words that say it ends there
_DATE_AT = re.compile(_DATE)
_EXPIRY_BEFORE = re.compile(r"(?:is after|expired (?:on|at)|expire[sd]? (?:on|at)|notAfter\s*[=:]\s*|not valid after:?|"
                            r"valid until:?|expiry(?: date)?[=:]?|expiration(?: date)?[=:]?)\s*$", re.I)
# a host and port: the port found first (`:` and digits), then the host written just before it; the
# words before them make it the local side rather than the peer
_PORT = re.compile(r":(\d{2,5})\b(?!\s*->)(?![\w.-]|:\d)")
_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
_HOST_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*")
_EXPIRY_WORDS = ("after", "expir", "notafter", "valid")
_PEER_WORDS = ("to ", "connecting to ", "host ")
_GRPC_HINT = re.compile(r"/[A-Z]")
_SETTING_HINT = re.compile(r"(?:=|->|:\s)\s?\d|-X|--[a-z]|\bulimit\b")
# a process's own limits as the shell sets them (`ulimit -n 1024`: open files): a flag of a bound
_ULIMIT = re.compile(r"\bulimit\s+-[a-zA-Z]\s+(?:\d+|unlimited)\b")
# (a flag that is its bound's own word, `--timeout=60`, is one too; its value ends before a bracket closing round it)
_SETTING = re.compile(r"(?<![\w.-])(?P<v>(?P<flag>-X[\w:+-]+(?:=\S+)?|--?(?:[a-z][\w-]*)?(?:size|memory|limit|timeout|max)"
                      r"[\w-]*=[^\s)\],;]+)|(?P<name>[A-Za-z][\w.-]*[A-Za-z0-9])(?:\s?(?:=|->)\s?|:\s)(?P<n>\d+(?:\.\d+)?(?:=?[ \t]\d+(?=[)\],;]|$))?\s?[a-zA-Z%]{0,3}))"
                      r"(?![\w.])")
# a connection string's `Key Name=value;` (ADO.NET's `Maximum Pool Size=50;Connect Timeout=15`): words with blanks
_SPACED_SETTING = re.compile(r"(?:(?<=;)|(?<=^)|(?<=\s))(?P<v>(?P<name>[A-Z][A-Za-z]+(?: [A-Z][A-Za-z]+){1,3})=(?P<n>\d+(?:\.\d+)?))"
                             r"(?=;|\s|$)")
# what is taken of a bounded resource, counted against its maximum (`pool in use 50/50`, `acquired=20 idle=0
# maxSize=20`, `CURDEPTH(5000) MAXDEPTH(5000)`): read by pipeline/analyst/capacity.py too
_TAKEN = r"(?:in[ _-]?use|active|busy|used|acquired|leased|borrowed|checked[ _-]?out|cur\w*depth|depth|open(?:ed)?\s+[a-z]+)"
_AMOUNT = r"(\d+(?:\.\d+)?(?:[KMGTP]i?B?)?)"  # a count, or a size with its unit (`48.9G/48.9G`)
AT_MAX = re.compile(rf"\b{_TAKEN}\W{{0,3}}{_AMOUNT}\s*(?:/|of)\s*{_AMOUNT}(?![\w.])|"
                    rf"\b{_TAKEN}\W{{0,3}}(\d+)\b[^\n]{{0,80}}?\bmax[\w.]*\W{{0,3}}(\d+)\b", re.I)
# ... or none of it free while callers wait for it (`idle=0 waiting=12`): every one taken, its other counts the
# maximum reached, whatever words the line has for it
_NONE_FREE = re.compile(r"\b(?:idle|free|available)\w*\W{0,3}0\b(?!\.\d)", re.I)
_WAITING = re.compile(r"\b(?:pending|waiting|waiters|queued)\w*\W{0,3}[1-9]\d*", re.I)
_COUNT = re.compile(r"\b[A-Za-z_][\w.]*\W{1,2}(\d+)\b")


# ... or a measured length, depth or size said beside its threshold or limit and past it (`message_queue_len=4120
# (threshold 1000)`, `queue depth: 912 (limit 500)`): the bound crossed
_PAST_BOUND = re.compile(r"\b(?:[a-z][\w.]*[_.-])?(?:len|length|depth|size|count|backlog|pending)\W{1,3}(\d+)\s*"
                         r"\(\s*(?:threshold|limit|max(?:imum)?)\W{1,3}(\d+)\s*\)", re.I)
_COUNTS = re.compile(r"\d(?:[KMGTP]i?B?)?\s*(?:/|of)\s*\d|max|idle|free|available|threshold|limit", re.I)


@functools.lru_cache(maxsize=4096)
def counted_at_max(text: str) -> frozenset[str]:
    """The maxima a text counts a resource taken to (`in use 50/50` -> {"50"})."""
    if not _COUNTS.search(text[:2_000]):
        return frozenset()  # no two numbers a slash, "of" or a max apart: most lines
    out = set()
    for m in AT_MAX.finditer(text[:2_000]):
        taken, most = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        if float(re.match(r"[\d.]+", taken).group()) > 0 and taken == most:  # type: ignore[union-attr]
            out.add(most)
    out |= {bound for taken, bound in _PAST_BOUND.findall(text[:2_000]) if int(taken) >= int(bound) > 0}
    if (free := _NONE_FREE.search(text[:2_000])) and (waiting := _WAITING.search(text[:2_000])):
        out |= {m.group(1) for m in _COUNT.finditer(text[:2_000]) if m.group(1) != "0"
                and not free.start() <= m.start(1) < free.end() and not waiting.start() <= m.start(1) < waiting.end()}
    return frozenset(out)


# a setting whose name says it bounds something (`max_pool_size`, `pool.limit`) is the one a limit reached names
_BOUND = re.compile(r"max|limit|capacity|^-Xmx", re.I)
_MEMORY_FLAG = re.compile(r"^-Xm[xs]|max[-_]?old[-_]?space|MaxRAM|memlimit|heap|mem", re.I)
_MEMORY_WORDS = frozenset({"memory", "heap", "oom", "oomkilled", "rss"})
_WORD = re.compile(r"[a-z]{4,}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_STOP = frozenset({"with", "from", "that", "this", "have", "been", "error", "errors", "failed", "true", "false",
                   "none", "null", "request", "requests", "after", "when", "while", "into", "than", "http", "https"})


def _texts(event: LogEvent) -> list[tuple[str, str]]:
    out = [("message", event.message)]
    if event.stack:
        out.append(("stack", event.stack))
    for key, value in (event.fields or {}).items():
        if isinstance(value, str) and value.strip() and _ERROR_FIELD.search(key) and key.lower() != "trace_id":
            out.append((f"fields.{key}", value))
    return out


_OPENS_WITH_CLASS = re.compile(r"^(?:[\w$]+(?:\.|::))*[A-Z][\w$]*(?:Error|Exception|Fault|Failure|Timeout|Violation)\b")
# lines a database or runtime prints under its error to say which row or key (libpq's DETAIL)
OPENS_WITH_CLASS = _OPENS_WITH_CLASS
_DETAIL = re.compile(r"^\s*(?:DETAIL|Detail|HINT|Hint):\s")
_PANIC = re.compile(r"^\s*(?:panic|fatal error): \S")


def _score(line: str) -> int:
    """How telling one line is: an error class 3, an error word 2, opening with its class 1; 0 for a
    stack frame, a banner or a near-empty line."""
    if _FRAME.match(line) or len(line.strip()) < 8:
        return 0
    # a runtime's panic heading (`panic: runtime error: ...`) says what failed; the signal line under it, how it died
    return 3 * bool(_CLASS.search(line) or _PANIC.match(line)) + 2 * _says_failure(line) + \
        bool(_OPENS_WITH_CLASS.match(line) or _PANIC.match(line))


def statement_of(event: LogEvent) -> tuple[str, int, int, str] | None:
    """(field, start, end, line) of an event's most telling line, `Caused by` lines aside."""
    return _statement(tuple(_texts(event)))


@functools.lru_cache(maxsize=4096)
def _statement(texts: tuple[tuple[str, str], ...]) -> tuple[str, int, int, str] | None:
    best: tuple[int, str, int, int, str] | None = None
    for field, text in texts:
        offset = 0
        lines = text.splitlines(keepends=True)
        for n, line in enumerate(lines[:_LINES]):
            start, offset = offset, offset + len(line)
            stripped = line.strip()
            if _CAUSED_BY.match(line):
                continue
            score = _score(stripped)
            if score and (best is None or score > best[0]):
                lead = start + len(line) - len(line.lstrip())
                end = start + len(line.rstrip())
                if n + 1 < len(lines) and _DETAIL.match(lines[n + 1]):  # the row or key it is about
                    end = offset + len(lines[n + 1].rstrip())
                elif stripped.endswith(":") and n + 1 < len(lines) and lines[n + 1].strip() and \
                        not _FRAME.match(lines[n + 1]):
                    # a line announcing what follows (R's "Error in `req_perform()`:", Dart's "(OS Error:"): with it
                    end = offset + len(lines[n + 1].rstrip())
                quoted = _without_hint(text[lead:end][:STATEMENT_CHARS])
                best = (score, field, lead, lead + len(quoted), quoted)
    if best is None:
        message = texts[0][1]
        lines = [line.strip() for line in message.splitlines() if line.strip()]
        first = lines[0] if lines else ""
        if first.endswith(":") and len(lines) > 1 and not _FRAME.match(lines[1]):
            # a header announcing what follows (Dart's `Unhandled exception:`): the statement is what it announces
            end = message.find(lines[1], message.find(first) + len(first)) + len(lines[1])
            first = message[message.find(first):end]
        return ("message", message.find(first), message.find(first) + len(first[:STATEMENT_CHARS]),
                first[:STATEMENT_CHARS]) if first else None
    return best[1], best[2], best[3], best[4]


def _without_hint(line: str) -> str:
    """A statement without the link it points a reader to ("; For more details see: http://wiki…"):
    the link is no part of what failed."""
    for m in re.finditer(r"https?://", line):
        if _in_hint(line, m.end()):
            sentence = re.split(r"[.;!?]\s|\n", line[:m.start()])[-1]  # the hint's own sentence, cut whole
            hint = _HINT_BEFORE.search(sentence)
            cut = m.start() - len(sentence) if len(sentence) <= 60 else m.start() - len(sentence) + (
                hint.start() if hint else len(sentence))
            return line[:cut].rstrip(" ;:,.-([") or line
    return line


@functools.lru_cache(maxsize=4096)
def _template(line: str) -> str:
    """A statement with every token holding a digit masked (ids, counts, times, object hashes)."""
    return re.sub(r"[\w.@:/-]*\d[\w.@:/-]*", "#", line)


def statements(events: list[LogEvent], *, telling: Callable[[str], bool] | None = None) -> list[Finding]:
    """The error statements, ranked: the deepest `Caused by`, the line carrying the cause's
    signature (`telling`), then the first error's line; one per line pattern, with every event
    carrying it."""
    problems = [e for e in events if e.level in (*_PROBLEM, "WARN")]
    # plain data while counting (a Finding validates every assignment), Findings for the ranked few
    by_template: dict[str, tuple[str, Span, dict[str, None]]] = {}
    order: list[tuple[int, int, str]] = []
    for event in sorted(problems, key=lambda e: e.time):
        found = statement_of(event)
        if found is None:
            continue
        field, start, end, line = found
        if event.level == "WARN" and not _score(line) and not (telling is not None and telling(line)) \
                and not counted_at_max(line):
            # a warning that says nothing failed is context, not a statement (unless it says the cause, or counts
            # a resource at its maximum)
            continue
        key = _template(line)
        if key in by_template:
            by_template[key][2].setdefault(event.event_id)
            continue
        by_template[key] = (line, Span(event_id=event.event_id, field=field, start=start, end=end),
                            {event.event_id: None})
        order.append((0 if telling is not None and telling(line) else 1, event.level == "WARN", key))
    ranked = [Finding(kind="error", value=by_template[k][0], event_ids=list(by_template[k][2]),
                      spans=[by_template[k][1]])
              for _, _, k in sorted(order, key=lambda t: t[:2])[:MAX_STATEMENTS]]
    deepest = _deepest(events)
    if deepest is not None and not any(deepest.value in f.value for f in ranked):
        ranked.insert(0, deepest)
    ran = _statement_run(problems)
    return ranked + [ran] if ran is not None and not any(ran.value in f.value for f in ranked) else ranked


# the SQL a database error says it was running, on its own labelled line (`SQL: UPDATE ...`, `STATEMENT:  DELETE ...`,
# `CONTEXT:  SQL statement "SELECT ..."`): which statement deadlocked or broke a constraint
_RAN = re.compile(r"^[#\s]*(?:SQL|STATEMENT|QUERY|CONTEXT:\s+SQL statement)\s*:?\s*\"?(?P<v>(?:SELECT|INSERT|UPDATE|DELETE|"
                  r"MERGE|WITH|CALL)\b[^\n\"]{4,160})", re.M | re.I)


# ... or puts in brackets after its error (`... try restarting transaction" at X.php line 56 (UPDATE stock SET ...)`,
# Laravel's `(SQL: insert into ...)`): a statement's own shape, its keyword and the clause it needs
_RAN_INLINE = re.compile(r"\((?:SQL:\s*)?(?P<v>(?:UPDATE\s+\S+\s+SET|INSERT\s+INTO|DELETE\s+FROM|SELECT\s[^()\n]{1,120}?\sFROM)"
                         r"\s)", re.I)


def _statement_run(events: list[LogEvent]) -> Finding | None:
    """The first SQL statement a problem event's text labels as the one it ran, as a finding."""
    for event in events:
        for field, text in _texts(event):
            if "\n" in text and (m := _RAN.search(text[:8_000])):
                value, start = m.group("v").rstrip(), m.start("v")
            elif "(" in text and (m := _RAN_INLINE.search(text[:8_000])):
                start = m.start("v")
                value = _bracketed(text, start)
            else:
                continue
            return Finding(kind="error", value=value, event_ids=[event.event_id],
                           spans=[Span(event_id=event.event_id, field=field, start=start, end=start + len(value))])
    return None


def _bracketed(text: str, start: int) -> str:
    """The text from `start` to the bracket that closes the one before it (a statement's own brackets kept), at most
    200 characters."""
    depth = 0
    for n, char in enumerate(text[start:start + 200]):
        if char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return text[start:start + n].rstrip()
            depth -= 1
    return text[start:start + 200].rstrip()


def _deepest(events: list[LogEvent]) -> Finding | None:
    """The innermost `Caused by:` (or .NET's inner exception, `--->`) of the first trace that has one, as a
    finding, with the line that continues its message (`   RemoteCertificateChainErrors for CN=…`), a frame
    or another cause aside."""
    for event in events:
        for field, text in _texts(event):
            if "Caused by:" not in text and "---> " not in text:
                continue  # most texts have no cause chain: no regex pass over them
            lines = [m for m in _INNER.finditer(text[-16_000:])]
            if lines:
                match = lines[-1]
                shift = max(0, len(text) - 16_000)
                value = match.group("what").strip()
                start = shift + match.start("what")
                more = match.group("more")
                if more and not _FRAME.match(more) and not _INNER.match(more) and not more.lstrip().startswith("---") \
                        and len(value) + len(more) < 300:
                    value = text[start:shift + match.start("more") + len(more.rstrip())]
                return Finding(kind="error", value=value, event_ids=[event.event_id],
                               spans=[Span(event_id=event.event_id, field=field, start=start, end=start + len(value))])
    return None


def _words(text: str) -> set[str]:
    # a plural is its singular: `max_connections=8` is the setting of "an open connection"
    words = set(_WORD.findall(_CAMEL.sub(" ", text).replace("_", " ").replace("-", " ").lower())) - _STOP
    if "timed" in words:
        words.add("timeout")  # a call that timed out speaks of its timeout
    return {_singular(w) for w in words}


def _singular(word: str) -> str:
    if word.endswith("ed") and len(word) > 5:
        return word[:-2]  # `pooled` connections are the pool's, a `limited` rate the limit's
    if word.endswith("ies") and len(word) > 5:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 4:
        return word[:-1]
    return word


# the causes that are a bounded resource run out: any setting whose name says it bounds something is the limit
# they reached (`maxTotal=20` before a pool's borrow timed out), and a count at its maximum says it was reached
BOUNDED = frozenset({"db_pool_exhausted", "resource_exhaustion", "queue_backlog", "out_of_memory", "disk_full"})


def extract(events: list[LogEvent], errors: list[Finding], *, bounded: bool = False, doc_text: str = "") -> list[Finding]:
    """The specifics besides the error statements (module docstring), at most a few per kind, those
    the problem events name first; with `bounded` (the cause is a resource run out, BOUNDED) every bound
    named and the lines counting a resource at its maximum too; a setting whose name the cause's doc
    (`doc_text`) writes is the one it speaks of."""
    said = " ".join(f.value for f in errors)
    said_words = _words(said)
    # a certificate the errors speak of: a context line's expiry and subject are that certificate's
    of_certificate = bool(_CERTIFICATE.search(said))
    problem_numbers = {n for e in events if e.level in (*_PROBLEM, "WARN")
                       for n in re.findall(r"(?<![\w.])\d{2,}(?![\w])", e.message)}
    # the values the problem lines say (`in 5.0 seconds`): a setting of that value is the one they hit
    problem_values = {n for e in events if e.level in (*_PROBLEM, "WARN")
                      for n in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])", e.message) if len(n) >= 2}
    # the maxima a line counts a resource taken to, at any level (a health check's `pool in use 50/50`): a bound
    # of that value is the limit reached
    at_max = {n for e in events for n in counted_at_max(e.message)}
    rank: dict[str, int] = {}  # a setting's value -> how plainly the problem lines point at it
    # (kind, value) -> event ids and spans, as plain data until the few kept become Findings
    found: dict[tuple[FindingKind, str], tuple[dict[str, None], list[Span]]] = {}

    def add(kind: FindingKind, value: str, event: LogEvent, field: str, start: int) -> None:
        ids, spans = found.setdefault((kind, value), ({}, []))
        if event.event_id not in ids:
            ids[event.event_id] = None
            if len(spans) < 3:
                spans.append(Span(event_id=event.event_id, field=field, start=start, end=start + len(value)))

    problem_first = sorted(events, key=lambda e: (e.level not in (*_PROBLEM, "WARN"), e.time))
    # the events the error statements are quoted from: a peer their own text names beats one seen only elsewhere
    stated = {i for f in errors for i in f.event_ids}
    for event in problem_first:
        problem = event.level in (*_PROBLEM, "WARN")
        for field, text in _texts(event):
            if problem:
                shaped = _shaped(text[:8_000])
                for kind, value, start in shaped:
                    add(kind, value, event, field, start)
                if event.event_id in stated and not any(k == "address" for k, _, _ in shaped):
                    # the error's own text names its peer by a host without a port (`GET https://api.github.com/...
                    # failed`, `for host db-2`): that host is the address
                    for value, start in _hosts_named(text[:8_000]):
                        add("address", value, event, field, start)
            elif of_certificate and _CERTIFICATE.search(text[:2_000]):
                for kind, value, start in _shaped(text[:2_000]):
                    if kind in ("expiry", "subject"):
                        add(kind, value, event, field, start)
            if not problem and "=" in text:
                # a context line naming by key what the errors speak of (`table=orders-2026 wcu=400` beside a table's
                # throughput exceeded): that pair and the pairs after it
                for value, start in _keyed_runs(text[:2_000], said_words):
                    add("setting", value, event, field, start)
                    rank[value] = max(rank.get(value, 0), 1)
            if not problem and not any(k == "address" for k, _ in found):
                # no problem line names the peer: the context line that says whom it connects to does
                # (`connecting to ('10.8.0.21', 5672)` before `error=111 (Connection refused)`)
                for value, start in _peers_announced(text[:2_000]):
                    add("address", value, event, field, start)
            if bounded:
                counted = False
                for m in AT_MAX.finditer(text[:2_000]):
                    if m.group(1) and m.group(1) == m.group(2) and float(re.match(r"[\d.]+", m.group(1)).group()) > 0:  # type: ignore[union-attr]
                        add("setting", m.group(), event, field, m.start())
                        rank[m.group()] = 5  # the count at its maximum: what the problem lines point at
                        counted = True
                if not counted and (line := _counting_line(text)) is not None:
                    # none free while callers wait (`size: 16, available: 0, waiting: 57`): the line, every count it gives
                    add("setting", line, event, field, text.find(line))
                    rank[line] = 5
            for value, start, flag, name, number in _settings_in(text[:8_000]):
                reached = bool(name and number and _BOUND.search(name) and number.split()[0] in at_max)
                # (or the setting the cause's doc speaks of: `ip_local_port_range` beside ports run out)
                reached = reached or bool(doc_text and name and "_" in name and name.rsplit(".", 1)[-1] in doc_text)
                # (a bound of a resource run out is named, ranked by its words like any other)
                if reached or bounded and _BOUND.search(name or flag or "") or _relevant_setting(flag, name, number, said_words, problem_numbers, not problem):
                    add("setting", value, event, field, start)
                    named = _words(name or flag or "")
                    said_value = bool(number) and re.sub(r"\s?[a-zA-Z%]+$", "", number or "") in problem_values
                    # (a memory flag beside a memory error is its limit: _relevant_setting)
                    said_value = said_value or bool(flag and _MEMORY_FLAG.search(flag))
                    rank[value] = max(rank.get(value, 0), 2 * (said_value or reached) + len(named & said_words)
                                      + bool(_BOUND.search(name or flag or "")))
    out: list[Finding] = []
    for kind in ("address", "endpoint", "expiry", "subject", "queue", "setting", "path"):
        of_kind = [(value, ids, spans) for (k, value), (ids, spans) in found.items() if k == kind]
        if kind == "address":
            # an address the error statements' own events name first (stable: problem lines, then time, after);
            # a host they name without a port gives way to its host and port another line writes (the same peer)
            bare = {value for value, _, _ in of_kind if ":" not in value}
            ported = {value.rsplit(":", 1)[0] for value, _, _ in of_kind if ":" in value}
            named = {value for value, ids, _ in of_kind if not stated.isdisjoint(ids)}
            of_kind = [t for t in of_kind if t[0] not in ported]
            of_kind.sort(key=lambda t: stated.isdisjoint(t[1]) and t[0].rsplit(":", 1)[0] not in (bare & named))
        if kind == "setting":
            # the settings the problem lines point at plainest first (their value said, their words shared, a bound)
            of_kind.sort(key=lambda t: -rank.get(t[0], 0))
        out += [Finding(kind=kind, value=value, event_ids=list(ids), spans=spans)
                for value, ids, spans in of_kind[:MAX_PER_KIND]]
    return out


@functools.lru_cache(maxsize=4096)
def _shaped(text: str) -> tuple[tuple[FindingKind, str, int], ...]:
    """(kind, value, start) of the shaped specifics in one problem text (a burst repeats its text:
    it is read once)."""
    out: list[tuple[FindingKind, str, int]] = []
    lowered = text.lower()
    for kind, pattern, needs in _RULES:
        if needs and not any(n in lowered for n in needs) or (needs == ("/",) and not _GRPC_HINT.search(text)):
            continue
        for m in pattern.finditer(text):
            if "://" in m.group("v") and _in_hint(text, m.start("v") + m.group("v").index("://") + 3):
                continue  # a link to read, not the endpoint that fails
            out.append((kind, m.group("v").rstrip(".,;:"), m.start("v")))
    if any(w in lowered for w in _EXPIRY_WORDS):
        for m in _DATE_AT.finditer(text):
            if (lead := _EXPIRY_BEFORE.search(text[max(0, m.start() - 40):m.start()])):
                # written as a key's value (`notAfter=2027-01-01T00:00:00Z`): quoted with its key, as the tool printed it
                keyed = re.search(r"[A-Za-z]\w*=$", lead.group())
                at = m.start() - (len(lead.group()) - keyed.start()) if keyed else m.start()
                out.append(("expiry", text[at:m.end()], at))
    for m in _PORT.finditer(text):
        start = m.start()
        while start > 0 and m.start() - start < 255 and text[start - 1] in _HOST_CHARS:
            start -= 1
        host = _HOST_NAME.fullmatch(text, start, m.start())
        if host is None or text[max(0, start - 1):start] == "@" or (
                text[max(0, start - 1):start] == "/" and text[max(0, start - 2):start] != "//"):
            continue  # no host name before the port, or a path's or user's part (`/a:80`, `u@h:22`)
        before = text[max(0, start - 24):start]
        if "." not in host.group() and not before.endswith(_PEER_WORDS):
            continue  # `level:20`, `line:42`: a bare word is a host only where the line says it is the peer
        if _SOURCE_FILE.search(host.group()) or _in_hint(text, start) or served_or_client(text, start, m.group(1)):
            continue  # (a client's or the writer's own side: findings.served_or_client)
        out.append(("address", text[start:m.end()], start))
    if "('" in text:
        # Python's socket address, the peer's (`raddr=('10.0.0.5', 5672)`, `connecting to ('db', 5432)`),
        # never the local one (`laddr=(...)`)
        for m in _SOCKET_TUPLE.finditer(text):
            before = text[max(0, m.start() - 24):m.start()]
            if re.search(r"(?:\braddr=|\bpeer(?:name)?[=:]?\s?|\bto\s)$", before):
                out.append(("address", m.group(), m.start()))
    return tuple(out)


# a host the text names as the one called, without a port: a URL's (`https://api.github.com/repos/...`), or after
# "for host" / "to host" (`could not connect to host db-2`)
_URL_HOST = re.compile(r"\bhttps?://(?P<host>[A-Za-z0-9][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)+)(?![\w.-]|:\d)|"
                       r"\b(?:for|to) host\s+[`\"']?(?P<named>[A-Za-z0-9][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*)(?![\w.-]|:\d)", re.I)


_DOC_KEY = re.compile(r"\b\w*(?:documentation|docs?|help|info)[_-]?(?:url|uri|link|href)[\"']?\s*[:=]\s*[\"']?https?://$", re.I)


@functools.lru_cache(maxsize=1024)
def _hosts_named(text: str) -> tuple[tuple[str, int], ...]:
    """(value, start) of the hosts a problem text names as called without a port (_URL_HOST), not a link to read,
    nor the writer's own (an access line's request) or its client's side."""
    if "://" not in text and "host" not in text.lower():
        return ()
    out = []
    for m in _URL_HOST.finditer(text):
        group = "host" if m.group("host") else "named"
        start = m.start(group)
        if _in_hint(text, start) or served_or_client(text, start, None) or _DOC_KEY.search(text, max(0, start - 40), start):
            continue  # (or a key's link to read: GitHub's `"documentation_url":"https://docs.github.com/..."`)
        out.append((m.group(group), start))
    return tuple(out)


_ANNOUNCED = re.compile(r"\b(?:connecting|connect|connection|dialing|dial|opening)\s+(?:to|with)\s+(?:\w+\s+)?"
                       r"(?:at\s+)?[\[(<]?\s*['\"]?(?P<host>[A-Za-z0-9][\w.-]*)['\"]?(?::|\s*,\s*|\s+port\s+)"
                       r"(?P<port>\d{2,5})\b", re.I)
# ... or names it by its URL (`connecting ldaps://dc02.corp.example:636 as ...`): the scheme says how it is reached
# (or says it goes through it: `upload ... via http://minio-0.storage.internal:9000`)
_ANNOUNCED_URL = re.compile(r"\b(?:(?:connecting|connect|dialing|dial|opening)\s+(?:to\s+)?|via\s+)"
                           r"(?P<url>[a-z][\w+.-]*://[A-Za-z0-9][\w.-]*:\d{2,5})(?![\w.:])", re.I)
_SOCKET_TUPLE = re.compile(r"\(\s*'(?P<host>[\w.:-]+)'\s*,\s*(?P<port>\d{2,5})\s*\)")


@functools.lru_cache(maxsize=1024)
def _peers_announced(text: str) -> tuple[tuple[str, int], ...]:
    """(value, start) of the peer a context line says it connects to: `connecting to db:5432`,
    Python's socket address `('10.8.0.21', 5672)`; never a local address (`laddr=(...)`)."""
    out = [(m.group("url"), m.start("url")) for m in _ANNOUNCED_URL.finditer(text)]
    for m in _ANNOUNCED.finditer(text):
        tuple_at = _SOCKET_TUPLE.match(text, m.start("host") - 2) if text[m.start("host") - 1:m.start("host")] == "'" else None
        if tuple_at is not None:
            out.append((tuple_at.group(), tuple_at.start()))
        else:
            out.append((text[m.start("host"):m.end("port")], m.start("host")))
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def _settings_in(text: str) -> tuple[tuple[str, int, str | None, str | None, str | None], ...]:
    """(value, start, flag, name, number) of the `name=value` settings and flags in one text."""
    if not _SETTING_HINT.search(text):
        return ()
    spaced = tuple((m.group("v"), m.start("v"), None, m.group("name").replace(" ", "_"), m.group("n"))
                   for m in _SPACED_SETTING.finditer(text)) if ";" in text else ()
    limits = tuple((m.group(), m.start(), m.group(), None, None) for m in _ULIMIT.finditer(text)) if "ulimit" in text else ()
    return tuple((m.group("v"), m.start("v"), m.group("flag"), m.group("name"), m.group("n"))
                 for m in _SETTING.finditer(text)) + spaced + limits


def _relevant_setting(flag: str | None, name: str | None, number: str | None, said_words: set[str],
                      problem_numbers: set[str], context: bool) -> bool:
    if flag:
        return bool(_MEMORY_FLAG.search(flag) and said_words & _MEMORY_WORDS) or bool(_words(flag) & said_words)
    if not name or not number:
        return False
    if not re.search(r"[_.\-]|[a-z][A-Z]", name) or _SOURCE_FILE.search(name) or re.search(r"\.\w{1,5}$", name):
        return False  # a plain word ("attempt: 3") or a file and its line is no setting's name
    digits = re.match(r"\d+", number)
    repeated = context and digits is not None and len(digits.group()) >= 2 and digits.group() in problem_numbers
    return bool(_words(name) & said_words) or repeated


def sentence(errors: list[Finding], others: list[Finding], events: list[LogEvent]) -> str:
    """The root cause's words for the specifics: what the first error says, where and when, the
    deepest cause, and the entities named."""
    parts = []
    first = min((e for e in events if e.level in ("ERROR", "FATAL")), key=lambda e: e.time, default=None) or \
        min((e for e in events if e.level is None), key=lambda e: e.time, default=None)
    if first is not None:
        parts.append(f"The first error came from {source_of(first.service)} at {first.time.isoformat(timespec='seconds')}.")
    total = len(events)
    for finding in errors:
        deepest = finding.spans and _is_caused_by(finding, events)
        if deepest:
            parts.append(f"The deepest cause in the trace: `{readable_line(finding.value)}`.")
        else:
            parts.append(f"The events say: `{' '.join(readable_line(finding.value).split())}` "
                         f"(in {len(finding.event_ids)} of {counted(total, 'event')}).")
    named = [f"{f.kind} `{f.value}`" for f in others]
    if named:
        parts.append(f"They name {', '.join(named)}.")
    return " ".join(parts)


def _is_caused_by(finding: Finding, events: list[LogEvent]) -> bool:
    span = finding.spans[0]
    event = next((e for e in events if e.event_id == span.event_id), None)
    if event is None:
        return False
    text = dict(_texts(event)).get(span.field, "")
    return bool(re.search(r"(?:Caused by:|---> )[ \t]*$", text[:span.start]))


def summary(findings: list[Finding]) -> str | None:
    """One recommendation step naming where to look first, from the ranked specifics."""
    wanted = ("address", "endpoint", "queue", "setting", "expiry", "subject", "path")
    named = [f"{f.kind} `{f.value}`" for kind in wanted for f in findings if f.kind == kind][:4]
    # a line that is a JSON object's text is quoted by its words (pipeline/ingest/readable.py)
    errors = [readable_line(f.value) for f in findings if f.kind == "error"][:1]
    if not named and not errors:
        return None
    return ("Start from what the events name: " + ", ".join(named)
            + ("; " if named and errors else "") + (f"the error `{errors[0][:160]}`" if errors else "") + ".")
