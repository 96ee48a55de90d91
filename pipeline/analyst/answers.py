"""Each request for changes answered against the evidence (issue 36.4): adopted, agreed with, or
not adopted with the events that contradict it, quoted. Never "unchanged" without a reason, never
the reviewer's sentence pasted into the cause.

`weigh` reads every request (pipeline/analyst/requested.py) in order, the newest weighing most,
and returns what the analysis does with them; pipeline/analyst/offline.py builds the RCA from it:
- a claim of a category the evidence supports (a doc's signatures, the ideas of its cause) is
  adopted: the analysis rests on that category's support, its confidence calibrated from it;
- a claim of the category the analysis already names is agreed with, unless it is about a topic
  of that category the analysis' doc is not about and no event carries (a lock wait timeout when
  the events say `deadlock detected`): then the events that say otherwise are quoted; nor when it
  names a source file no event names (`PointsCalculator.java` when the trace says `points.js`);
- a claim no event supports is not adopted: the analysis stays, and the answer says what is
  missing and what the events say instead;
- a denial ("not X") the events contradict (they carry its words, or the analysis' doc is about
  it and its signatures are in them) is answered with those events; otherwise it is agreed with:
  another category it names is left out, and sentences with its words leave the root cause.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence

from pipeline.analyst import quotes, requested
from pipeline.analyst.requested import Meaning, Request
from pipeline.analyst.technology import evidence_stack, named_technologies
from pipeline.ingest.readable import readable_line
from pipeline.knowledge.index import Doc, KnowledgeBase
from pipeline.knowledge.retrieval import event_text
from pipeline.state import LogEvent


class SupportLike(Protocol):
    category: str
    score: float
    doc: Doc
    matched: tuple[str, ...]
    worded: bool


@dataclass
class Verdict:
    """What the requests do to the analysis: the support a claim made it rest on (None: the
    evidence's own), categories left out, words to leave out of the root cause, one answer each."""

    chosen: Any = None  # a Support (pipeline/analyst/offline.py)
    chosen_by: int = 0  # the request (1-based) whose claim was adopted
    excluded: set[str] = field(default_factory=set)
    drop_words: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)


def _clip(text: str, n: int = 160) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _line(event: LogEvent) -> str:
    text = event.message or event.exception or ""
    return _clip(readable_line(text.splitlines()[0], event.exception) if text else "")


def quoted(events: list[LogEvent]) -> str:
    """The events quoted: the first one's line, and how many events say the same."""
    if not events:
        return "no event"
    key = quotes.line_template(_line(events[0]))
    alike = sum(1 for e in events if quotes.line_template(_line(e)) == key)
    more = f" ({alike} events say so)" if alike > 1 else ""
    return f"\u201c{_line(events[0])}\u201d{more}"


def _problems(events: list[LogEvent]) -> list[LogEvent]:
    return [e for e in events if e.level in (None, "WARN", "ERROR", "FATAL")] or list(events)


def resting_on(events: list[LogEvent], support: SupportLike | None) -> list[LogEvent]:
    """The events an analysis rests on: those carrying its doc's signatures (all problem events
    when it was named by the ideas of its cause, or has none)."""
    problems = _problems(events)
    if support is None or support.worded:
        return problems
    own = [e for e in problems if support.doc.matched_signatures(event_text(e))]
    return own or problems


def _words(m: Meaning) -> str:
    return m.words() if m.stems else m.text


def weigh(kb: KnowledgeBase, events: list[LogEvent], supports: Sequence[SupportLike],
          requests: Sequence[Request], *, explicit: tuple[int, str] | None = None) -> Verdict:
    """Every request answered, oldest first, against the evidence and the supports it gives.
    `explicit`: the request (1-based) that names a category by its id, and that category: it is set
    as asked (pipeline/analyst/offline.py), and its answer says what the evidence says of it."""
    verdict = Verdict()
    stack = evidence_stack(events)
    for n, request in enumerate(requests, 1):
        parts: list[str] = []

        def current() -> SupportLike | None:
            if verdict.chosen is not None and verdict.chosen.category not in verdict.excluded:
                return verdict.chosen
            return next((s for s in supports if s.category not in verdict.excluded), None)

        for denial in request.denials:
            parts.append(_deny(kb, events, denial, current(), verdict))
        if explicit is not None and explicit[0] == n:
            parts.append(_set(events, explicit[1], current(), supports))
        elif request.claim is not None:
            parts.append(_claim(kb, events, request.claim, current(), supports, verdict, n, stack))
        if not parts:
            now = current()
            rests = (f"it rests on {now.category} ({quoted(resting_on(events, now))})" if now
                     else f"no known cause fits the events ({quoted(_problems(events))})")
            parts.append("it names no cause, category, component or \u201cnot X\u201d this analyst can weigh "
                         f"against the evidence, so the analysis stands: {rests}")
        verdict.answers.append(f"Reviewer request {n} (\u201c{_clip(request.text, 120)}\u201d): " + "; ".join(parts) + ".")
    return verdict


def _deny(kb: KnowledgeBase, events: list[LogEvent], denial: Meaning, now: SupportLike | None,
          verdict: Verdict) -> str:
    said = f"not \u201c{_clip(denial.text, 60)}\u201d"
    carriers = requested.carrying(events, denial)
    hits_now = now is not None and (denial.category == now.category or requested.about(kb, now.doc, denial))
    if carriers and (hits_now or denial.category is None):
        return f"{said}: the events contradict it, they say {quoted(carriers)}"
    if now is not None and requested.about(kb, now.doc, denial):
        return (f"{said}: the events contradict it: they carry the signatures of doc {now.doc.doc_id} "
                f"({now.doc.title}), {quoted(resting_on(events, now))}")
    if now is not None and denial.category == now.category:
        verdict.drop_words.extend(w for w in denial.stems if len(w) > 3)
        return (f"{said}: agreed, no event says it; the category {now.category} stands on what the events do say, "
                f"{quoted(resting_on(events, now))}, and the root cause leaves out its wording")
    if denial.category:
        verdict.excluded.add(denial.category)
        if verdict.chosen is not None and verdict.chosen.category == denial.category:
            verdict.chosen = None
    rests = (f"it rests on {now.category}, {quoted(resting_on(events, now))}" if now
             else f"no known cause fits the events, {quoted(_problems(events))}")
    return f"{said}: agreed, the analysis does not name it: {rests}"


def _set(events: list[LogEvent], category: str, now: SupportLike | None, supports: Sequence[SupportLike]) -> str:
    said = f"set to {category} as asked by its name"
    if category == "unknown":
        return f"{said}: the evidence report stands in for a cause"
    own = next((s for s in supports if s.category == category), None)
    if own is not None:
        return f"{said}; the evidence supports it: {quoted(resting_on(events, own))}"
    rests = f"{quoted(resting_on(events, now))}, which is {now.category}" if now else quoted(_problems(events))
    return (f"{said}, but no event of this incident shows it (none of its docs' signatures, none of the ideas of "
            f"its cause): the events say {rests}; so it is not supported, its confidence capped, and no code fix")


def _claim(kb: KnowledgeBase, events: list[LogEvent], claim: Meaning, now: SupportLike | None,
           supports: Sequence[SupportLike], verdict: Verdict, n: int, stack: frozenset[str]) -> str:
    said = f"\u201c{_clip(claim.text, 80)}\u201d"
    missing = [t for t in claim.technologies if t not in stack and f"named:{t}" not in stack]
    if claim.category is None:
        if missing:
            return (f"{said} names {', '.join(missing)}, which no event of this incident names; "
                    f"the events say {quoted(resting_on(events, now))}")
        return f"{said}: agreed, the events name {', '.join(claim.technologies)}"
    own = next((s for s in supports if s.category == claim.category), None)
    if now is not None and claim.category == now.category:
        topic = _topic_not_carried(kb, events, claim, now)
        if topic:
            return (f"{said}: the category {now.category} stands, but no event says {topic}: the events say "
                    f"{quoted(resting_on(events, now))} (doc {now.doc.doc_id}), which is what the analysis rests on")
        unnamed = code_places_not_named(claim.text, events)
        if unnamed:
            return (f"{said}: the category {now.category} stands, but no event names {', '.join(unnamed)}: the "
                    f"events say {quoted(resting_on(events, now))}")
        return f"{said}: agreed, the evidence shows it: {quoted(resting_on(events, now))}"
    if claim.category in verdict.excluded:
        verdict.excluded.discard(claim.category)  # the newest word wins
    if own is not None:
        verdict.chosen, verdict.chosen_by = own, n
        how = ("the ideas of its cause in the events' words" if own.worded
               else f"the signatures of doc {own.doc.doc_id}")
        return (f"{said}: adopted as {claim.category}, the evidence supports it ({how}): "
                f"{quoted(resting_on(events, own))}")
    rests = (f"the events say {quoted(resting_on(events, now))}, which is {now.category}" if now
             else f"the events say {quoted(_problems(events))}, which no known cause fits")
    return (f"{said}: not adopted, no event of this incident shows {claim.category} (none of its docs' signatures, "
            f"no event with the words {_words(claim)}); {rests}")


def _topic_not_carried(kb: KnowledgeBase, events: list[LogEvent], claim: Meaning, now: SupportLike) -> str | None:
    """The claim's words that name a topic of the category the analysis' doc is not about (another
    doc of it is) and no event carries: a "lock wait timeout" against `deadlock detected`."""
    vocab = requested.vocabulary(kb, kb.generation)
    core = requested.core(now.category)
    siblings = [d for d in kb.docs if d.category == now.category and d.doc_id != now.doc.doc_id]
    told = vocab.about.get(now.doc.doc_id, Counter())
    topic = [s for s in claim.stems if s not in core and told[s] < 3
             and any(vocab.about.get(d.doc_id, Counter())[s] >= 3 for d in siblings)]
    if not topic or requested.carrying(events, Meaning(text=claim.text, stems=tuple(topic))):
        return None
    return claim.words(tuple(topic))


# a place in code a reviewer may name: a source file (with its folders, if written)
_CODE_PLACE = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[A-Za-z_$][\w$-]*\.(?:java|kt|kts|scala|groovy|py|js|mjs|cjs|ts|"
                         r"tsx|jsx|go|rb|cs|fs|vb|php|rs|c|cc|cpp|h|hpp|swift|m|ex|exs|erl|clj|dart|lua)\b")


def code_places_not_named(text: str, events: list[LogEvent]) -> list[str]:
    """The source files a request names that no event of the incident names (a claim that the NPE is in
    `PointsCalculator.java` when the trace says `points.js` is not agreed with)."""
    # a technology written as a file (`node.js`, `socket.io`'s kin) is the claim's own technology word, no source file
    techs = named_technologies(text)
    said = dict.fromkeys(m.group(0) for m in _CODE_PLACE.finditer(text) if m.group(0).lower() not in techs)
    if not said:
        return []
    seen = "\n".join(event_text(e) for e in events).lower()
    return [p for p in said if p.rsplit("/", 1)[-1].lower() not in seen]
