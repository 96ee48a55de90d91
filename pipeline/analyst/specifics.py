"""Specifics (issue 36.2): what the events name that an on-call engineer acts on, found by the
shape of the text rather than by any incident's words, each a finding quoted from an event with
its span, ranked (the deepest cause first).

- `error`: the error statement of an event: its most telling line (one naming an error class, a
  signal or an error word; the later of equally telling lines, since a traceback ends with its
  exception), never a stack frame. The deepest `Caused by:` of a trace ranks first, then the line
  that carries the cause's signature (`telling`), then the first error's line.
- `address`: a host and port the events connect to (the local side of `a->b` or `from a` is not
  a peer: an ephemeral port is no listener).
- `endpoint`: a URL with its path, `METHOD /path`, or a gRPC `package.Service/Method`.
- `expiry` and `subject`: a certificate's expiry (the date after "is after", "expired on",
  `notAfter=`, "valid until" ...) and its `CN=`.
- `queue`: a queue, topic, stream or partition named with a dotted or dashed name.
- `setting`: a `name=value` (or `name -> value`, a JVM or CLI flag) anywhere in the window whose
  name shares a word with the error statements, or whose number the problem lines repeat (a limit
  reached), or a memory flag when the statements are about memory.
- `path`: a shared library (`libvips.so.42`) or a version-stamped migration file a problem line names.

`sentence` turns them into the root cause's words; `summary` into the recommendation's step.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from pipeline.analyst.findings import _HINT_BEFORE, _HOST, _SOURCE_FILE, _in_hint
from pipeline.state import Finding, FindingKind, LogEvent, Span

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
_CLASS = re.compile(r"\b(?:[\w$]+(?:\.|::))*[A-Z][\w$]*(?:Error|Exception|Fault|Failure|Timeout|Violation|Refused|"
                    r"Exhausted)\b|\bSIG[A-Z]{3,}\b|\b[A-Z][A-Z_]{5,}\b(?=:)")
_ERROR_WORDS = re.compile(
    r"\b(?:errors?|fail(?:ed|ure|s)?|refused|denied|timed out|timeout|cannot|can't|could not|couldn't|unable|"
    r"exceeded|expired|invalid|not found|no such|unknown|fatal|killed|violates?|rejected|nacked|full|exhausted|"
    r"unavailable|panic|abort(?:ed)?|crash(?:ed)?|unrecognized|deadlock(?:ed)?|out of|missing|reset|"
    r"not (?:set|known|allowed|permitted|valid)|too many|limit)\b", re.I)

_DATE = r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|" \
        r"[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2} \d{4}(?: GMT)?"
_RULES: tuple[tuple[FindingKind, re.Pattern], ...] = (
    ("expiry", re.compile(rf"(?:is after|expired (?:on|at)|expire[sd]? (?:on|at)|notAfter\s*[=:]\s*|not valid after:?|"
                          rf"valid until:?|expiry(?: date)?[=:]?|expiration(?: date)?[=:]?)\s*(?P<v>{_DATE})", re.I)),
    ("subject", re.compile(r"(?P<v>\bCN\s?=\s?[^,/\s\"'()]+)")),
    ("endpoint", re.compile(r"(?P<v>\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+/[^\s\"'\\?]*)")),
    ("endpoint", re.compile(r"(?P<v>https?://[A-Za-z0-9.-]+(?::\d+)?/[^\s\"'\\)\]>,;]*[\w/])")),
    ("endpoint", re.compile(r"(?<![\w./])(?P<v>[a-z][\w]*(?:\.[\w]+)*\.[A-Z]\w*/[A-Z]\w*)\b")),
    ("queue", re.compile(r"\b(?:queue|topic|stream|partition|exchange)s?\s+[`\"']?(?P<v>[A-Za-z][\w]*(?:[.\-:/][\w]+)+)",
                         re.I)),
    ("path", re.compile(r"(?<![\w./-])(?P<v>lib[\w+-]*\.(?:so(?:\.\d+)*|dylib)|[\w-]+\.dll|\d{8,14}_[\w-]+\.\w{1,5})\b")),
)
# a host and port, and the words before it that make it the local side rather than the peer
_ADDRESS = re.compile(rf"(?P<v>(?:{_HOST}|(?<=to )[A-Za-z][\w-]{{1,62}}|(?<=connecting to )[A-Za-z][\w-]{{1,62}}"
                      rf"|(?<=host )[A-Za-z][\w-]{{1,62}}):\d{{2,5}})\b(?!\s*->)(?![\w.-]|:\d)")
_LOCAL_BEFORE = re.compile(r"(?:\bfrom|\blocal(?:\s+address)?|\bladdr|\bsrc|\bclient)[=:\s/]*$", re.I)
_SETTING = re.compile(r"(?<![\w.-])(?P<v>(?P<flag>-X[\w:+-]+(?:=\S+)?|--?[a-z][\w-]*(?:size|memory|limit|timeout|max)"
                      r"[\w-]*=\S+)|(?P<name>[A-Za-z][\w.-]*[A-Za-z0-9])\s?(?:=|->|:)\s?(?P<n>\d+(?:\.\d+)?\s?[a-zA-Z%]{0,3}))"
                      r"(?![\w.])")
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
_DETAIL = re.compile(r"^\s*(?:DETAIL|Detail|HINT|Hint):\s")


def _score(line: str) -> int:
    if _FRAME.match(line) or len(line.strip()) < 8:
        return 0
    return 3 * bool(_CLASS.search(line)) + 2 * bool(_ERROR_WORDS.search(line)) + bool(_OPENS_WITH_CLASS.match(line))


def statement_of(event: LogEvent) -> tuple[str, int, int, str] | None:
    """(field, start, end, line) of an event's most telling line, `Caused by` lines aside."""
    best: tuple[int, str, int, int, str] | None = None
    for field, text in _texts(event):
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
                quoted = _without_hint(text[lead:end][:STATEMENT_CHARS])
                best = (score, field, lead, lead + len(quoted), quoted)
    if best is None:
        first = (event.message.splitlines() or [""])[0].strip()
        return ("message", event.message.find(first), event.message.find(first) + len(first[:STATEMENT_CHARS]),
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


def _template(line: str) -> str:
    """A statement with every token holding a digit masked (ids, counts, times, object hashes)."""
    return re.sub(r"[\w.@:/-]*\d[\w.@:/-]*", "#", line)


def statements(events: list[LogEvent], *, telling: Callable[[str], bool] | None = None) -> list[Finding]:
    """The error statements, ranked: the deepest `Caused by`, the line carrying the cause's
    signature (`telling`), then the first error's line; one per line pattern, with every event
    carrying it."""
    problems = [e for e in events if e.level in (*_PROBLEM, "WARN")]
    by_template: dict[str, Finding] = {}
    order: list[tuple[int, int, str]] = []
    for event in sorted(problems, key=lambda e: e.time):
        found = statement_of(event)
        if found is None:
            continue
        field, start, end, line = found
        if event.level == "WARN" and not _score(line):
            continue  # a warning that says nothing failed is context, not a statement
        key = _template(line)
        if key in by_template:
            finding = by_template[key]
            if event.event_id not in finding.event_ids:
                finding.event_ids = [*finding.event_ids, event.event_id]
            continue
        by_template[key] = Finding(kind="error", value=line, event_ids=[event.event_id],
                                   spans=[Span(event_id=event.event_id, field=field, start=start, end=end)])
        order.append((0 if telling is not None and telling(line) else 1, event.level == "WARN", key))
    ranked = [by_template[k] for _, _, k in sorted(order, key=lambda t: t[:2])][:MAX_STATEMENTS]
    deepest = _deepest(events)
    if deepest is not None and not any(deepest.value in f.value for f in ranked):
        ranked.insert(0, deepest)
    return ranked


def _deepest(events: list[LogEvent]) -> Finding | None:
    """The innermost `Caused by:` of the first trace that has one, as a finding."""
    for event in events:
        for field, text in _texts(event):
            lines = [m for m in re.finditer(r"^[ \t]*Caused by:[ \t]*(?P<what>[^\n]{4,300})", text[-16_000:], re.M)]
            if lines:
                match = lines[-1]
                shift = max(0, len(text) - 16_000)
                value = match.group("what").strip()
                start = shift + match.start("what")
                return Finding(kind="error", value=value, event_ids=[event.event_id],
                               spans=[Span(event_id=event.event_id, field=field, start=start, end=start + len(value))])
    return None


def _words(text: str) -> set[str]:
    return set(_WORD.findall(_CAMEL.sub(" ", text).replace("_", " ").replace("-", " ").lower())) - _STOP


def extract(events: list[LogEvent], errors: list[Finding]) -> list[Finding]:
    """The specifics besides the error statements (module docstring), at most a few per kind, those
    the problem events name first."""
    said = " ".join(f.value for f in errors)
    said_words = _words(said)
    problem_numbers = {n for e in events if e.level in (*_PROBLEM, "WARN")
                       for n in re.findall(r"(?<![\w.])\d{2,}(?![\w])", e.message)}
    found: dict[tuple[str, str], Finding] = {}

    def add(kind: FindingKind, value: str, event: LogEvent, field: str, start: int) -> None:
        finding = found.setdefault((kind, value), Finding(kind=kind, value=value))
        if event.event_id not in finding.event_ids:
            finding.event_ids = [*finding.event_ids, event.event_id]
            if len(finding.spans) < 3:
                finding.spans = [*finding.spans, Span(event_id=event.event_id, field=field, start=start,
                                                      end=start + len(value))]

    problem_first = sorted(events, key=lambda e: (e.level not in (*_PROBLEM, "WARN"), e.time))
    for event in problem_first:
        problem = event.level in (*_PROBLEM, "WARN")
        for field, text in _texts(event):
            text = text[:8_000]
            if problem:
                for kind, pattern in _RULES:
                    for m in pattern.finditer(text):
                        if "://" in m.group("v") and _in_hint(text, m.start("v") + m.group("v").index("://") + 3):
                            continue  # a link to read, not the endpoint that fails
                        add(kind, m.group("v").rstrip(".,;:"), event, field, m.start("v"))
                for m in _ADDRESS.finditer(text):
                    value = m.group("v")
                    if _SOURCE_FILE.search(value.rsplit(":", 1)[0]) or _in_hint(text, m.start("v")) or \
                            _LOCAL_BEFORE.search(text[max(0, m.start() - 24):m.start()]):
                        continue
                    add("address", value, event, field, m.start("v"))
            for m in _SETTING.finditer(text):
                if _relevant_setting(m, said_words, problem_numbers, event.message if not problem else ""):
                    add("setting", m.group("v"), event, field, m.start("v"))
    out: list[Finding] = []
    for kind in ("address", "endpoint", "expiry", "subject", "queue", "setting", "path"):
        out += [f for (k, _), f in found.items() if k == kind][:MAX_PER_KIND]
    return out


def _relevant_setting(m: re.Match, said_words: set[str], problem_numbers: set[str], own_line: str) -> bool:
    if m.group("flag"):
        return bool(_MEMORY_FLAG.search(m.group("flag")) and said_words & _MEMORY_WORDS) or \
            bool(_words(m.group("flag")) & said_words)
    name, number = m.group("name"), m.group("n")
    if not re.search(r"[_.\-]|[a-z][A-Z]", name) or _SOURCE_FILE.search(name) or re.search(r"\.\w{1,5}$", name):
        return False  # a plain word ("attempt: 3") or a file and its line is no setting's name
    if m.group("v")[len(name):].lstrip().startswith(":") and not re.match(r"\s?:\s", m.group("v")[len(name):]):
        return False  # `host:5432`, `file:12`: a colon without a space joins, it does not assign
    digits = re.match(r"\d+", number)
    repeated = bool(own_line) and digits is not None and len(digits.group()) >= 2 and digits.group() in problem_numbers
    return bool(_words(name) & said_words) or repeated


def sentence(errors: list[Finding], others: list[Finding], events: list[LogEvent]) -> str:
    """The root cause's words for the specifics: what the first error says, where and when, the
    deepest cause, and the entities named."""
    parts = []
    first = min((e for e in events if e.level in ("ERROR", "FATAL")), key=lambda e: e.time, default=None) or \
        min((e for e in events if e.level is None), key=lambda e: e.time, default=None)
    if first is not None:
        parts.append(f"The first error came from {first.service} at {first.time.isoformat(timespec='seconds')}.")
    total = len(events)
    for finding in errors:
        deepest = finding.spans and _is_caused_by(finding, events)
        if deepest:
            parts.append(f"The deepest cause in the trace: `{finding.value}`.")
        else:
            parts.append(f"The events say: `{' '.join(finding.value.split())}` "
                         f"(in {len(finding.event_ids)} of {total} events).")
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
    return bool(re.search(r"Caused by:[ \t]*$", text[:span.start]))


def summary(findings: list[Finding]) -> str | None:
    """One recommendation step naming where to look first, from the ranked specifics."""
    wanted = ("address", "endpoint", "queue", "setting", "expiry", "subject", "path")
    named = [f"{f.kind} `{f.value}`" for kind in wanted for f in findings if f.kind == kind][:4]
    errors = [f.value for f in findings if f.kind == "error"][:1]
    if not named and not errors:
        return None
    return ("Start from what the events name: " + ", ".join(named)
            + ("; " if named and errors else "") + (f"the error `{errors[0][:160]}`" if errors else "") + ".")
