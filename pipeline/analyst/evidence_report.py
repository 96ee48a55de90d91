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

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from pipeline.analyst.findings import first
from pipeline.analyst.quotes import line_template
from pipeline.analyst.specifics import statement_of
from pipeline.ingest.readable import readable_line
from pipeline.knowledge.index import signature_words
from pipeline.state import ErrorDoc, Finding, LogEvent, Quote, counted, names_service, service_or_writer, source_of

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
    before: int = 0  # its events in the previous window of the same length (`against`)
    earlier: int = 0  # its events anywhere in the stored window before the incident

    @property
    def new(self) -> bool:
        """Never in the source's stored lines before the incident (those the log window holds)."""
        return self.earlier == 0

    @property
    def rose(self) -> bool:
        """Seen in the previous window, and more often now."""
        return 0 < self.before < self.count


@dataclass(frozen=True)
class Hypothesis:
    statement: str
    event_ids: tuple[str, ...]
    confirm: str
    refute: str
    rests_on: str = ""  # the cited events in words: "3 lines of checkout-api from 09:12:03" (set by `cited`)


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
    baseline: int = 0  # stored events of the source before the incident (the log window's)
    baseline_minutes: float = 0.0  # how far back they reach
    last: LogEvent | None = None  # the last line the log wrote, when not of the first's pattern: how it ended


def _said(event: LogEvent) -> tuple[str, str]:
    """(field, line) of what an event says: its error statement (pipeline/analyst/specifics.py: the
    exception's line, not a banner such as `#` or `usage:` before it), else its first line."""
    found = statement_of(event)
    return (found[0], " ".join(readable_line(found[3], event.exception).split())[:_LINE_CHARS]) if found \
        else ("message", "")


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


def against(patterns: list[Pattern], events: list[LogEvent], window: list[LogEvent]) -> tuple[int, float]:
    """Count each pattern in the source's stored lines before the incident (`window`, the log window
    the records store gave: the service's and hosts' events), anywhere there (`earlier`) and in the
    previous window as long as the incident (`before`, at least a minute); returns how many stored
    lines precede the incident and how many minutes back they reach."""
    if not events:
        return 0, 0.0
    ids = {e.event_id for e in events}
    start, end = min(e.time for e in events), max(e.time for e in events)
    previous = [e for e in window if e.event_id not in ids and e.time < start]
    span = max(end - start, timedelta(minutes=1))
    by_template = {p.template: p for p in patterns}
    for event in previous:
        pattern = by_template.get(line_template(_line(event)) or (event.exception or ""))
        if pattern is not None:
            pattern.earlier += 1
            pattern.before += event.time >= start - span
    reach = (start - min(e.time for e in previous)).total_seconds() / 60 if previous else 0.0
    return len(previous), round(reach, 1)


def build(events: list[LogEvent], findings: list[Finding], similar: list[ErrorDoc],
          window: list[LogEvent] | tuple[LogEvent, ...] = ()) -> Report:
    """The evidence report of an incident no known cause fits; `window` is the log window around
    it (the lines before it are the baseline that says which patterns are new and which rose)."""
    patterns = patterns_of(events)
    baseline, reach = against(patterns, events, list(window))
    problems = [p for p in patterns if _problem(p)] or patterns
    # the first in time, and of lines logged in the same second the first the log wrote
    order = {e.event_id: n for n, e in enumerate(events)}
    earliest = min(problems, key=lambda p: (_started(p), order.get(p.first_event.event_id, 0) if p.first_event else 0),
                   default=None)
    services = tuple(dict.fromkeys(e.service for e in events if e.service))
    hosts = tuple(dict.fromkeys([e.host for e in events if e.host]
                                + [f.value for f in findings if f.kind == "host"]))
    hypotheses = cited(_hypotheses(events, problems, earliest, findings, similar, baseline=baseline), events)
    last = max(enumerate(events), key=lambda t: (t[1].time, t[0]))[1] if events else None
    if last is not None and earliest is not None and earliest.first_event is not None and \
            (not _line(last) or _line(last) == _line(earliest.first_event)):
        last = None
    return Report(patterns=tuple(patterns[:MAX_PATTERNS]), first=earliest, services=services, hosts=hosts,
                  hypotheses=tuple(hypotheses[:MAX_HYPOTHESES]), total=len(events), pattern_count=len(patterns),
                  problem_count=sum(1 for p in patterns if _problem(p)), baseline=baseline, baseline_minutes=reach,
                  last=last)


def cited(hypotheses: list[Hypothesis], events: list[LogEvent]) -> list[Hypothesis]:
    """The hypotheses that cite events of this incident, each citing only those (the rest dropped)."""
    by_id = {e.event_id: e for e in events}
    out = []
    for h in hypotheses:
        kept = tuple(i for i in h.event_ids if i in by_id)
        if kept:
            out.append(Hypothesis(h.statement, kept, h.confirm, h.refute, _in_words([by_id[i] for i in kept])))
    return out


def _in_words(cited: list[LogEvent]) -> str:
    """Events as a reviewer reads them, not their ids: how many lines, whose, from when."""
    whose = _services(tuple(dict.fromkeys(e.service for e in cited if e.service)), unnamed=False) or "the source"
    start = min(e.time for e in cited).strftime("%H:%M:%S")
    return f"{len(cited)} line{'s' if len(cited) > 1 else ''} of {whose} from {start}"


def _ids(pattern_events: list[LogEvent]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(e.event_id for e in pattern_events))


def _hypotheses(events: list[LogEvent], problems: list[Pattern], earliest: Pattern | None, findings: list[Finding],
                similar: list[ErrorDoc], *, baseline: int = 0) -> list[Hypothesis]:
    """Candidate hypotheses, the most specific first; `cited` then drops those citing no event."""
    out: list[Hypothesis] = []
    address = first(findings, "address")
    host, port = first(findings, "host"), first(findings, "port")
    if address or host:
        target = address or (f"{host}:{port}" if port else host)
        at = next(f for f in findings if f.kind == ("address" if address else "host"))
        out.append(Hypothesis(
            statement=f"The dependency `{target}` the errors name is failing or unreachable.",
            event_ids=tuple(at.event_ids[:5]),
            confirm=f"its own logs, health and restarts for the incident's window show it failing, or a call "
                    f"to `{target}` from where {service_or_writer(events[0].service)} runs fails",
            refute=f"calls to `{target}` from the same place succeed while these errors continue"))
    change = _change_before(events, earliest)
    if change is not None:
        # a deploy, a rollout or a flag flipped just before the first problem: the likeliest cause of what
        # started after it
        when = change.time.isoformat(timespec='seconds')
        out.append(Hypothesis(
            statement=f"The change \"{_first_line(change)[:160]}\" ({_tag(change.service)}, {when}), logged before the "
                      f"first problem, started it.",
            event_ids=(change.event_id,),
            confirm="undoing that change (a rollback, the flag or setting back) stops the errors",
            refute="the errors began before it, or go on once it is undone"))
    changed = [p for p in problems if p.new] if baseline else []
    risen = [p for p in problems if p.rose]
    if changed and changed[0].first_event is not None:
        # a pattern the source never wrote before it: what changed is where it starts
        p, start = changed[0], changed[0].first_event
        out.append(Hypothesis(
            statement=f"The new pattern \"{_line(start)[:120]}\" ({_tag(start.service)}, first at "
                      f"{start.time.isoformat(timespec='seconds')}; none in the {baseline} stored lines before) "
                      f"marks what changed.",
            event_ids=_ids(p.examples),
            confirm=f"a deploy, config or dependency change of {service_or_writer(start.service)} just before "
                    f"{start.time.isoformat(timespec='seconds')} introduced it",
            refute="the same pattern is in an earlier window of this source without the failures"))
    rising = risen[0].first_event if risen else None
    if rising is not None:
        p = risen[0]
        out.append(Hypothesis(
            statement=f"The pattern \"{_line(rising)[:120]}\" rose from {p.before} in the previous window "
                      f"to {p.count}: a load or dependency shift drives the errors.",
            event_ids=_ids(p.examples),
            confirm="its rate rose before or with the failures, and traffic or a dependency's latency rose then too",
            refute="its rate was as high in earlier windows without failures"))
    if earliest is not None and earliest.first_event is not None and earliest not in changed[:1]:
        start = earliest.first_event
        later = [p for p in problems if p is not earliest]
        # (with no line a warning or worse, it is the first pattern, not an error's)
        statement = (f"The first {'error ' if _problem(earliest) else ''}pattern, \"{_line(start)[:120]}\" "
                     f"({_tag(start.service)}, "
                     f"{start.time.isoformat(timespec='seconds')}), started it"
                     + (f"; the {counted(len(later), 'later pattern')} {'follows' if len(later) == 1 else 'follow'} from it."
                        if later else "."))
        out.append(Hypothesis(
            statement=statement, event_ids=_ids(earliest.examples),
            confirm=f"the logs, deploys and config changes of {service_or_writer(start.service)} just before "
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
        # cited only by problem lines sharing a distinctive word with the doc's title or signatures
        # (an INFO line's "request" ties nothing to a doc about failed requests)
        words = {w for text in (doc.title, *doc.signatures) for w in re.findall(r"[a-z]{5,}", text.lower())} - _GENERIC
        near = [e for p in problems for e in p.examples if words & set(re.findall(r"[a-z]{5,}", _line(e).lower()))]
        out.append(Hypothesis(
            statement=f"It may be {doc.category} like doc {doc.doc_id} ({doc.title}), though none of its "
                      f"signatures is in the events.",
            event_ids=_ids(near[:5]),
            confirm="a wider log window shows one of that doc's signatures"
                    + (f" ({'; '.join(signature_words(s) for s in doc.signatures[:2])})" if doc.signatures else ""),
            refute="a wider window shows none of them"))
    return out


# a line saying something was changed: a deploy, a rollout or rollback, an upgrade, a flag or setting flipped
# ... or a process told to stop (`received SIGTERM, draining ...`, `Stopping container api`): its callers' resets follow
_CHANGE = re.compile(r"\b(?:deploy(?:ed|ing|ment)|redeploy\w*|rolled\s+(?:out|back)|roll-?(?:out|back)|upgraded|downgraded|"
                     r"bumped|migrated|SIG(?:TERM|INT|QUIT)|(?:stopping|killing)\s+container|shutting\s+down|draining|"
                     r"(?:flag|config\w*|setting|feature)\b[^\n]{0,60}?\b(?:changed|enabled|disabled|"
                     r"updated|reloaded|flipped|set\s+to))\b", re.I)
CHANGE_REACH = timedelta(minutes=30)  # a change this long before the first problem is still "just before"


def _change_before(events: list[LogEvent], earliest: Pattern | None) -> LogEvent | None:
    """The last context line (not a problem) at or before the first problem, within CHANGE_REACH, that says a
    change."""
    if earliest is None or earliest.first_event is None or not _problem(earliest):
        return None
    start = earliest.first_event.time
    said = [(e.time, n, e) for n, e in enumerate(events) if e.level not in (*_PROBLEM_LEVELS, None)
            and start - CHANGE_REACH <= e.time <= start and _CHANGE.search(_first_line(e))]
    return max(said, key=lambda t: t[:2])[2] if said else None  # (the last the log wrote, of one second)


def _first_line(event: LogEvent) -> str:
    lines = readable_line(event.message, event.exception).strip().splitlines()
    return lines[0] if lines else ""


# words too common in error lines to tie one to a doc
_GENERIC = frozenset({"error", "errors", "failed", "failure", "exception", "request", "requests", "while", "after",
                      "cannot", "could", "unable", "invalid", "connection", "server", "client", "service"})


def example_quotes(report: Report) -> list[Quote]:
    """Up to three example lines of each pattern, as the RCA's quoted evidence (its count on the first)."""
    out = []
    for pattern in report.patterns:
        for n, event in enumerate(pattern.examples):
            field_name, line = _said(event)
            out.append(Quote(event_id=event.event_id, field=field_name, text=line,
                             count=pattern.count if n == 0 else 1))
    return out


def _said_as(pattern: Pattern) -> str:
    """A pattern in the log's own words: its first line (its template masks numbers and ids as `#`,
    which a reviewer does not read: "Ledger seal mismatch on volume v#")."""
    return _line(pattern.first_event) if pattern.first_event is not None else pattern.template


def root_cause(report: Report) -> str:
    """The inconclusive root cause: what the events show, not a cause they do not."""
    head = "Inconclusive: no known cause is supported by the evidence."
    if report.first is None or report.first.first_event is None:
        return head
    start = report.first.first_event
    new = [p for p in report.patterns if p.new and _problem(p)] if report.baseline else []
    risen = [p for p in report.patterns if p.rose]
    against = ""
    if report.baseline:
        against = (f" Against the {counted(report.baseline, 'stored line')} of the {counted(report.baseline_minutes, 'minute')} before: "
                   + "; ".join([*(f"new in this source: \"{_said_as(p)[:100]}\" (×{p.count})" for p in new[:2]),
                                *(f"rose from {p.before} to {p.count}: \"{_said_as(p)[:100]}\"" for p in risen[:2])]
                               or ["no pattern is new and none rose"]) + ".")
    # the pattern said most often (of the problem ones, when there are any), when it is not the first
    said = [p for p in report.patterns if _problem(p)] if report.problem_count else list(report.patterns)
    most = max(said, key=lambda p: p.count, default=None)
    often = f"; the most frequent, \"{_said_as(most)[:120]}\" (×{most.count})" \
        if most is not None and most is not report.first and most.count > 1 else ""
    if report.last is not None and (most is None or _line(report.last) != _said_as(most)):
        often += f"; the last, \"{_line(report.last)[:120]}\", at {report.last.time.isoformat(timespec='seconds')}"
    return (f"{head} {counted(report.total, 'event')} in {counted(report.pattern_count, 'pattern')}"
            + (f", {report.problem_count} of them errors or warnings" if report.problem_count
               else ", none of them an error or a warning")
            + f"; the first, \"{_line(start)[:120]}\", came from {source_of(start.service)} at "
            f"{start.time.isoformat(timespec='seconds')}{often}. Services: {_services(report.services) or '-'}"
            + (f"; hosts: {', '.join(report.hosts[:5])}." if report.hosts else ".") + against)


def notes(report: Report) -> list[str]:
    """The report as the RCA's notes: each pattern with its count and first time, then each hypothesis."""
    out = [f"pattern ×{p.count} ({_services(p.services) or '-'}; first {p.first_event.time.isoformat(timespec='seconds')}"
           + (("; new in this source" if p.new else f"; {p.before} in the previous window") if report.baseline else "")
           + f"): {_said_as(p)[:160]}" for p in report.patterns if p.first_event is not None]
    for n, h in enumerate(report.hypotheses, 1):
        out.append(f"hypothesis {n}: {h.statement} Rests on {h.rests_on or counted(len(h.event_ids), 'line')}. Confirmed if "
                   f"{h.confirm}; refuted if {h.refute}.")
    return out


def steps(report: Report, service: str) -> list[str]:
    """The recommendation's steps, read off the report: check each hypothesis, first cited first."""
    out = [f"Check hypothesis {n}: {h.statement} It is confirmed if {h.confirm}; refuted if {h.refute}."
           for n, h in enumerate(report.hypotheses, 1)]
    if any(e.trace_id for p in report.patterns for e in p.examples):
        out.append("Follow the trace ids of the example lines into the calling services.")
    out.append(f"Escalate to the owners of {_services(report.services, unnamed=False) or service_or_writer(service)} with these patterns and "
               f"hypotheses if none is confirmed.")
    return out


def _tag(service: str) -> str:
    return service if names_service(service) else "no service named"


def _services(services, *, unnamed: bool = True) -> str:
    """The services named, and (`unnamed`) "none named" or "lines naming none" for lines that name none."""
    named = [s for s in services if names_service(s)]
    if not unnamed or len(named) == len(services):
        return ", ".join(named)
    return ", ".join([*named, "lines naming none"]) if named else "none named"
