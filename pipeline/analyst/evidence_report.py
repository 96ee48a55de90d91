"""The evidence report an analysis gives when no known cause fits (issue 36.3): inconclusive, said
so, and built from the incident's own events rather than a fixed paragraph.

It holds the line patterns (a line with its numbers and ids masked) with their counts and up to
three example lines each, the pattern that came first, the services and hosts the events touch,
and one to three hypotheses. A hypothesis cites the events it rests on and says what would
confirm or refute it; one citing no event of the incident is dropped by `cited` (code, not
care), so the report never claims what the evidence does not show. The recommendation is read
off the report: its steps are the hypotheses' checks, naming the patterns, services and hosts.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

from pipeline.analyst.findings import first
from pipeline.analyst.quotes import line_template
from pipeline.analyst.specifics import statement_of
from pipeline.state import ErrorDoc, Finding, LogEvent, Quote

EXAMPLES = 3  # lines per pattern, as Grafana Sift shows
MAX_PATTERNS = 5
MAX_HYPOTHESES = 3
INCONCLUSIVE_CONFIDENCE = 0.25  # the cap of an inconclusive analysis's confidence
_LINE_CHARS = 200
_PROBLEM_LEVELS = ("ERROR", "FATAL", "WARN")


@dataclass
class Pattern:
    template: str
    count: int = 0
    first_event: LogEvent | None = None
    examples: list[LogEvent] = field(default_factory=list)
    services: dict[str, None] = field(default_factory=dict)


@dataclass(frozen=True)
class Hypothesis:
    statement: str
    event_ids: tuple[str, ...]
    confirm: str
    refute: str


@dataclass(frozen=True)
class Report:
    patterns: tuple[Pattern, ...]
    first: Pattern | None
    services: tuple[str, ...]
    hosts: tuple[str, ...]
    hypotheses: tuple[Hypothesis, ...]
    total: int
    pattern_count: int = 0  # every pattern's, `patterns` holding the first MAX_PATTERNS
    problem_count: int = 0


def _said(event: LogEvent) -> tuple[str, str]:
    """(field, line) of what an event says: its error statement (pipeline/analyst/specifics.py: the
    exception's line, not a banner such as `#` or `usage:` before it), else its first line."""
    found = statement_of(event)
    return (found[0], " ".join(found[3].split())[:_LINE_CHARS]) if found else ("message", "")


def _line(event: LogEvent) -> str:
    return _said(event)[1]


def patterns_of(events: list[LogEvent]) -> list[Pattern]:
    """The events' line patterns, the problem ones (WARN and worse) first, then by count."""
    found: dict[str, Pattern] = {}
    for event in sorted(events, key=lambda e: e.time):
        line = _line(event)
        key = line_template(line) or (event.exception or "")
        if not key:
            continue
        pattern = found.setdefault(key, Pattern(template=key))
        pattern.count += 1
        pattern.first_event = pattern.first_event or event
        pattern.services.setdefault(event.service)
        if len(pattern.examples) < EXAMPLES and all(_line(e) != line for e in pattern.examples):
            pattern.examples.append(event)
    return sorted(found.values(), key=lambda p: (not _problem(p), -p.count, _started(p)))


def _started(pattern: Pattern) -> datetime:
    return pattern.first_event.time if pattern.first_event else datetime.max.replace(tzinfo=timezone.utc)


def _problem(pattern: Pattern) -> bool:
    return any(e.level in _PROBLEM_LEVELS or e.level is None or e.exception for e in pattern.examples)


def build(events: list[LogEvent], findings: list[Finding], similar: list[ErrorDoc]) -> Report:
    """The evidence report of an incident no known cause fits."""
    patterns = patterns_of(events)
    problems = [p for p in patterns if _problem(p)] or patterns
    earliest = min(problems, key=_started, default=None)
    services = tuple(dict.fromkeys(e.service for e in events if e.service))
    hosts = tuple(dict.fromkeys([e.host for e in events if e.host]
                                + [f.value for f in findings if f.kind == "host"]))
    hypotheses = cited(_hypotheses(events, problems, earliest, findings, similar), events)
    return Report(patterns=tuple(patterns[:MAX_PATTERNS]), first=earliest, services=services, hosts=hosts,
                  hypotheses=tuple(hypotheses[:MAX_HYPOTHESES]), total=len(events), pattern_count=len(patterns),
                  problem_count=sum(1 for p in patterns if _problem(p)))


def cited(hypotheses: list[Hypothesis], events: list[LogEvent]) -> list[Hypothesis]:
    """The hypotheses that cite events of this incident, each citing only those (the rest dropped)."""
    ids = {e.event_id for e in events}
    out = []
    for h in hypotheses:
        kept = tuple(i for i in h.event_ids if i in ids)
        if kept:
            out.append(Hypothesis(h.statement, kept, h.confirm, h.refute))
    return out


def _ids(pattern_events: list[LogEvent]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(e.event_id for e in pattern_events))


def _hypotheses(events: list[LogEvent], problems: list[Pattern], earliest: Pattern | None, findings: list[Finding],
                similar: list[ErrorDoc]) -> list[Hypothesis]:
    out: list[Hypothesis] = []
    host, port = first(findings, "host"), first(findings, "port")
    if host:
        target = f"{host}:{port}" if port else host
        at = next(f for f in findings if f.kind == "host")
        out.append(Hypothesis(
            statement=f"The dependency `{target}` the errors name is failing or unreachable.",
            event_ids=tuple(at.event_ids[:5]),
            confirm=f"its own logs, health and restarts for the incident's window show it failing, or a call "
                    f"to `{target}` from where {events[0].service} runs fails",
            refute=f"calls to `{target}` from the same place succeed while these errors continue"))
    if earliest is not None and earliest.first_event is not None:
        start = earliest.first_event
        later = [p for p in problems if p is not earliest]
        statement = (f"The first error pattern, \"{_line(start)[:120]}\" ({start.service}, "
                     f"{start.time.isoformat(timespec='seconds')}), started it"
                     + (f"; the {len(later)} later pattern(s) follow from it." if later else "."))
        out.append(Hypothesis(
            statement=statement, event_ids=_ids(earliest.examples),
            confirm=f"{start.service}'s logs, deploys and config changes just before "
                    f"{start.time.isoformat(timespec='seconds')} show what changed",
            refute="the same pattern also appears, without the later ones, in an earlier healthy window"))
    raised = first(findings, "class")
    where = first(findings, "file_line")
    if raised or where:
        carrying = [e for e in events if (raised and e.exception == raised) or (where and where in (e.stack or e.message))]
        what = f"`{raised.rsplit('.', 1)[-1]}`" if raised else "the error"
        out.append(Hypothesis(
            statement=f"A code path raises {what}" + (f" at `{where}`" if where else "") + " for some inputs.",
            event_ids=_ids(carrying[:5]),
            confirm="the requests that fail share an input, and replaying one fails the same way",
            refute="the same requests succeed when retried unchanged (then the cause is outside the code)"))
    if similar and len(out) < MAX_HYPOTHESES:
        doc = similar[0]
        words = {w for w in doc.title.lower().split() if len(w) > 4}
        near = [e for e in events if words & set(e.message.lower().split())]
        out.append(Hypothesis(
            statement=f"It may be {doc.category} like doc {doc.doc_id} ({doc.title}), though none of its "
                      f"signatures is in the events.",
            event_ids=_ids(near[:5]),
            confirm=f"a wider log window shows one of that doc's signatures ({'; '.join(doc.signatures[:2])})",
            refute="a wider window shows none of them"))
    return out


def example_quotes(report: Report) -> list[Quote]:
    """Up to three example lines of each pattern, as the RCA's quoted evidence (its count on the first)."""
    out = []
    for pattern in report.patterns:
        for n, event in enumerate(pattern.examples):
            field_name, line = _said(event)
            out.append(Quote(event_id=event.event_id, field=field_name, text=line,
                             count=pattern.count if n == 0 else 1))
    return out


def root_cause(report: Report) -> str:
    """The inconclusive root cause: what the events show, not a cause they do not."""
    head = "Inconclusive: no known cause is supported by the evidence."
    if report.first is None or report.first.first_event is None:
        return head
    start = report.first.first_event
    return (f"{head} {report.total} events in {report.pattern_count} pattern(s)"
            + (f", {report.problem_count} of them errors or warnings" if report.problem_count else "")
            + f"; the first, \"{_line(start)[:120]}\", came from {start.service} at "
            f"{start.time.isoformat(timespec='seconds')}. Services: {', '.join(report.services) or '-'}"
            + (f"; hosts: {', '.join(report.hosts[:5])}." if report.hosts else "."))


def notes(report: Report) -> list[str]:
    """The report as the RCA's notes: each pattern with its count and first time, then each hypothesis."""
    out = [f"pattern ×{p.count} ({', '.join(p.services)}; first {p.first_event.time.isoformat(timespec='seconds')}): "
           f"{p.template[:160]}" for p in report.patterns if p.first_event is not None]
    for n, h in enumerate(report.hypotheses, 1):
        out.append(f"hypothesis {n}: {h.statement} Rests on events {', '.join(h.event_ids)}. Confirmed if "
                   f"{h.confirm}; refuted if {h.refute}.")
    return out


def steps(report: Report, service: str) -> list[str]:
    """The recommendation's steps, read off the report: check each hypothesis, first cited first."""
    out = [f"Check hypothesis {n}: {h.statement} It is confirmed if {h.confirm}; refuted if {h.refute}."
           for n, h in enumerate(report.hypotheses, 1)]
    if any(e.trace_id for p in report.patterns for e in p.examples):
        out.append("Follow the trace ids of the example lines into the calling services.")
    out.append(f"Escalate to the owners of {', '.join(report.services) or service} with these patterns and "
               f"hypotheses if none is confirmed.")
    return out
