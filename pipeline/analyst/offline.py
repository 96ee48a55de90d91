"""The offline analyzer (the `Analyst` of pipeline/analyst/protocol.py that needs no network).

The offline analyzer is deterministic and grounded: a category is named only when a curated
doc's signatures are found in the evidence (messages, exceptions, stack traces and the error
fields of structured logs); retrieval similarity alone never names a cause. Specific evidence
outweighs generic evidence (a pool-acquire timeout beats a bare timeout). Its confidence rises
with the strength of the evidence and the share of error events carrying it, and falls when
another category is nearly as well supported. Its quality is measured by `python -m pipeline
eval` (pipeline/evaluation.py).
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from pipeline.analyst import evidence_report, findings, fixes, ideas, operational, quotes, technology
from pipeline.analyst.operational import operational_cause
from pipeline.analyst.technology import ANALOGY_CONFIDENCE, by_analogy
from pipeline.analyst.reading import Reading, names_any, not_code_defect, read_requests, without_sentences
from pipeline.knowledge.index import Doc, KnowledgeBase
from pipeline.knowledge.retrieval import cause_doc, event_text, evidence_text, signature_matches
from pipeline.state import CATEGORIES, RCA, IncidentState, LogEvent, Quote, Recommendation


@dataclass(frozen=True)
class Support:
    """The signature evidence for one category: its best doc and how strongly the evidence matches."""

    category: str
    score: float
    doc: Doc
    matched: tuple[str, ...]
    worded: bool = False  # named by the ideas of its cause (pipeline/analyst/ideas.py), no signature


def category_support(kb: KnowledgeBase, text: str, *, shown: frozenset[str] | None = None) -> list[Support]:
    """Every category some doc's signatures match in `text`, strongest first.

    A category's score is its best doc's summed signature weights plus a quarter of what its
    other docs add: corroboration counts, but many weak docs do not outweigh one strong one.
    With `shown` (the technologies the evidence shows, pipeline/analyst/technology.py), the doc
    a category rests on is its best one written for those technologies when one matched: a Java
    doc's cause is not a Node service's, however many of its signatures the text carries.
    """
    per_category: dict[str, list[tuple[float, Doc, tuple[str, ...]]]] = defaultdict(list)
    for doc, support, matched in signature_matches(kb, text):
        per_category[doc.category].append((support, doc, matched))
    result = []
    for category, found in per_category.items():
        found.sort(key=lambda t: (-t[0], t[1].doc_id))
        score = found[0][0] + 0.25 * sum(t[0] for t in found[1:])
        fitting = [t for t in found if shown is not None and technology.doc_fits(t[1].systems, shown)]
        _, doc, matched = fitting[0] if fitting else found[0]
        result.append(Support(category=category, score=round(score, 3), doc=doc, matched=tuple(matched)))
    return sorted(result, key=lambda s: (-s.score, s.category))


def calibrated_confidence(support: float, runner_up: float, *, coverage: float) -> float:
    """Confidence in the best-supported category.

    Rises with the strength of its signature evidence (saturating at a score of 4: a few specific
    signatures) and with the share of error events that carry it; shrinks towards half when
    another category is nearly as well supported. Capped at 0.95: signatures are never proof.
    """
    strength = min(1.0, support / 4.0)
    margin = (support - runner_up) / support if support > 0 else 0.0
    confidence = (0.25 + 0.6 * strength + 0.15 * coverage) * (0.55 + 0.45 * margin)
    return round(max(0.05, min(0.95, confidence)), 2)


def _error_coverage(events: list[LogEvent], per_event: list[set[str]]) -> float:
    # INFO/WARN context lines need not carry the cause; the error events should
    errors = [found for e, found in zip(events, per_event) if e.level in ("ERROR", "FATAL", None)] or per_event
    return sum(1 for found in errors if found) / max(1, len(errors))


class OfflineAnalyst:
    """Deterministic analyst grounded in the retrieved docs and the evidence; needs no network.

    A reviewer's requests for changes (`state.feedback`, every one kept) steer it: a category
    named in a request is taken (with its own support, or capped low when no signature supports
    it), "the column is X" style entities become reviewer findings, and each request is answered
    in the recommendation's steps.
    """

    name = "offline"

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb

    def rca(self, state: IncidentState) -> RCA:
        extracted = findings.extract(state.evidence)
        asked = [f for text in state.feedback for f in findings.named_in_request(text)]
        found = asked + [f for f in extracted if (f.kind, f.value) not in {(a.kind, a.value) for a in asked}]
        shown = technology.shown_by(state.evidence)
        supports = self._with_worded(state, category_support(self.kb, evidence_text(state.evidence), shown=shown),
                                     shown)
        # the reviewer's words are evidence too: the doc they describe, what they say it is not
        reading = read_requests(self.kb, state.feedback) if state.feedback else Reading()
        requested = requested_category(state.feedback)
        if requested and requested != "unknown":
            return self._requested(state, requested, supports, found, reading)
        if reading.doc is not None:
            return self._described(state, reading, supports, found)
        if reading.not_words:
            kept = [s for s in supports if not names_any(s.doc, reading.not_words)]
            supports = kept or supports
        if not supports or requested == "unknown":
            return self._unknown(state, found, requested=requested is not None)
        top = supports[0]
        runner_up = supports[1] if len(supports) > 1 else None
        per_event = [set(top.doc.matched_signatures(event_text(e))) for e in state.evidence]
        confidence = calibrated_confidence(top.score, runner_up.score if runner_up else 0.0,
                                           coverage=_error_coverage(state.evidence, per_event))
        notes = [f"matches doc {top.doc.doc_id}: {top.doc.title} ({len(top.matched)} signatures found)"]
        if top.worded:
            confidence = min(confidence, ideas.IDEA_CONFIDENCE)
            notes = [f"named by the ideas of its cause in the events' words ({top.matched[0]}), no doc's signature: "
                     f"confidence stays at most {ideas.IDEA_CONFIDENCE}; doc {top.doc.doc_id} explains why"]
        if runner_up:
            closeness = "nearly as well" if runner_up.score >= 0.75 * top.score else "less well"
            notes.append(f"also consistent with {runner_up.category} ({closeness} supported: "
                         f"{runner_up.score:.1f} against {top.score:.1f})")
        return self._rca(state, category=top.category, doc=top.doc, confidence=confidence, found=found, notes=notes,
                         reading=reading)

    def _with_worded(self, state: IncidentState, supports: list[Support], shown: frozenset[str]) -> list[Support]:
        """The signatures' supports and, for a category none supports, the ideas of its cause worded
        in one event (pipeline/analyst/ideas.py), or, when neither names any, an error line's meaning
        near one doc's signatures; its doc the most similar of its category that fits the evidence's
        technology."""
        have = {s.category for s in supports}
        ranked = [self.kb.by_id[d.doc_id] for d in state.similar_docs if d.doc_id in self.kb.by_id]
        worded = []
        found = {c: (f"the ideas of {label}", ideas.IDEA_SCORE) for c, (label, _) in
                 ideas.categories_worded(state.evidence).items()}
        if not supports and not found:  # meaning, the weakest signal, only where nothing else names one
            found = {c: (label, ideas.MEANING_SCORE) for c, (label, _) in
                     ideas.categories_meant(self.kb, state.evidence).items()}
        for category, (label, score) in found.items():
            if category in have:
                continue
            docs = list({d.doc_id: d for d in [*ranked, *self.kb.docs] if d.category == category}.values())
            docs = [d for d in docs if technology.doc_fits(d.systems, shown)] or docs
            if docs:
                worded.append(Support(category=category, score=score, doc=docs[0], matched=(label,), worded=True))
        return sorted(supports + worded, key=lambda s: (-s.score, s.category)) if worded else supports

    def _rca(self, state: IncidentState, *, category: str, doc, confidence: float, found, notes,
             reading: Reading | None = None) -> RCA:
        quoted = quotes.quotes_for(state.evidence, found, doc)
        cause = quotes.concrete_cause(category, found)
        # what the events name first; the doc is the "why this happens" paragraph, not the cause
        why = f"Why this happens: {doc.root_cause.strip()}" if doc and doc.root_cause else None
        root_cause = " ".join(p for p in (cause, quotes.specifics(state.evidence), why) if p)
        notes = list(notes)
        if reading is not None and reading.says_anything:
            root_cause = without_sentences(root_cause, reading.not_words)
            if reading.cause:
                root_cause = f"{reading.cause[0].upper()}{reading.cause[1:]} (as the reviewer says). {root_cause}"
            if reading.not_words:
                notes.append(f"not {', '.join(reading.not_words)}, as a reviewer says: its wording is left out")
            if reading.not_code_defect:
                notes.append("not a code defect, as a reviewer says: no code fix is proposed")
        supported, warning = True, None
        analogy = by_analogy(state.evidence, doc)
        if analogy is not None:
            # a doc of another technology explains by analogy only: said so, capped below the
            # code-fix threshold, and never eligible for a fix (RCA.supported)
            root_cause = f"{analogy} {root_cause}"
            confidence = min(confidence, ANALOGY_CONFIDENCE)
            supported, warning = False, analogy
            notes.append(f"{analogy} Confidence stays at most {ANALOGY_CONFIDENCE}; no code fix is proposed.")
        return RCA(category=category, root_cause=root_cause, confidence=confidence,
                   evidence=[quotes.quote_text(q, len(state.evidence)) for q in quoted],
                   doc_ids=[doc.doc_id] if doc else [], analyst=self.name, findings=found, quotes=quoted,
                   notes=notes, supported=supported, warning=warning)

    def _described(self, state: IncidentState, reading: Reading, supports: list[Support], found) -> RCA:
        """The doc a reviewer described, weighed against the evidence: taken with its own support,
        with a lower confidence when the evidence shows another doc of its category, and capped low
        with the reason when the evidence supports another category and none of its signatures."""
        doc = reading.doc
        matched = {d.doc_id: support for d, support, _ in signature_matches(self.kb, evidence_text(state.evidence))}
        others = [s for s in supports if s.category != doc.category]
        runner_up = others[0].score if others else 0.0
        own = next((s for s in supports if s.category == doc.category), None)
        said = f"as a reviewer described it: doc {doc.doc_id} ({doc.title})"
        if doc.doc_id in matched:
            confidence = calibrated_confidence(matched[doc.doc_id], runner_up, coverage=1.0)
            note = f"{said}; the evidence shows its signatures"
        elif own is not None:
            confidence = round(min(calibrated_confidence(own.score, runner_up, coverage=1.0), DESCRIBED_OTHER_DOC_CONFIDENCE), 2)
            note = (f"{said}; the evidence shows signatures of {own.doc.doc_id} of the same category, none of this "
                    f"doc's, so confidence stays at most {DESCRIBED_OTHER_DOC_CONFIDENCE}")
        else:
            confidence = REQUESTED_UNSUPPORTED_CONFIDENCE
            top = supports[0] if supports else None
            against = (f"the evidence shows signatures of {top.category} ({top.doc.doc_id}: "
                       f"{'; '.join(top.matched[:2])}) and none of this doc's" if top
                       else "the evidence shows no signature of it")
            note = f"{said}; {against}, so confidence stays at most {REQUESTED_UNSUPPORTED_CONFIDENCE}"
        return self._rca(state, category=doc.category, doc=doc, confidence=confidence, found=found, notes=[note],
                         reading=reading)

    def _requested(self, state: IncidentState, category: str, supports: list[Support], found,
                   reading: Reading | None = None) -> RCA:
        own = next((s for s in supports if s.category == category), None)
        if own is not None:
            others = [s for s in supports if s.category != category]
            confidence = calibrated_confidence(own.score, others[0].score if others else 0.0, coverage=1.0)
            note = f"category {category} as a reviewer asked; its doc {own.doc.doc_id} is supported by the evidence"
            return self._rca(state, category=category, doc=own.doc, confidence=confidence, found=found,
                             notes=[note], reading=reading)
        docs = [self.kb.by_id[d.doc_id] for d in state.similar_docs if d.category == category and d.doc_id in self.kb.by_id]
        docs = docs or [d for d in self.kb.docs if d.category == category]
        if reading is not None and reading.doc is not None and reading.doc.category == category:
            docs = [reading.doc]  # the doc their words describe, of the category they name
        top = supports[0] if supports else None
        against = (f"the evidence supports {top.category} instead ({top.doc.doc_id}: {'; '.join(top.matched[:2])})"
                   if top else "no curated signature is in the evidence")
        note = (f"category {category} as a reviewer asked; no signature of its docs is in the evidence ({against}), "
                f"so confidence stays at most {REQUESTED_UNSUPPORTED_CONFIDENCE}")
        return self._rca(state, category=category, doc=docs[0] if docs else None,
                         confidence=REQUESTED_UNSUPPORTED_CONFIDENCE, found=found, notes=[note], reading=reading)

    def _unknown(self, state: IncidentState, found, *, requested: bool = False) -> RCA:
        """Inconclusive: the evidence report (pipeline/analyst/evidence_report.py) instead of a cause."""
        top = state.similar_docs[0] if state.similar_docs else None
        note = (f"closest doc {top.doc_id} (similarity {top.score:.2f}) has none of its signatures in the evidence"
                if top else "no similar doc")
        if requested:
            note = "unknown as a reviewer asked; " + note
        report = evidence_report.build(state.evidence, found, list(state.similar_docs))
        quoted = evidence_report.example_quotes(report) or _first_lines(state.evidence)
        confidence = round(min(evidence_report.INCONCLUSIVE_CONFIDENCE, 0.1 + (top.score if top else 0) * 0.2), 2)
        return RCA(category="unknown", confidence=confidence, root_cause=evidence_report.root_cause(report),
                   evidence=[quotes.quote_text(q, len(state.evidence)) for q in quoted],
                   doc_ids=[], analyst=self.name, findings=found, quotes=quoted,
                   notes=[note, *evidence_report.notes(report)])

    def recommend(self, state: IncidentState, *, feedback: str | None = None) -> Recommendation:
        rca = state.rca
        doc = cause_doc(self.kb, state)
        if not_code_defect(state):
            # a reviewer said so (a request, or the root cause they wrote): no code advice at all
            cause = rca.root_cause.split(". ")[0].rstrip(".") if rca else "the cause the reviewer named"
            steps = [f"Confirm the operational cause in the incident's time window: {cause}.",
                     "Restore the affected dependency or configuration, then watch these errors stop.",
                     "Record the incident as operational (not a code defect) with the evidence attached."]
            action = f"Handle {state.service} operationally, no code change: {cause}."
        elif doc is None:
            # inconclusive: the steps are the evidence report's checks, naming its own patterns and hosts
            report = evidence_report.build(state.evidence, rca.findings if rca else [], list(state.similar_docs))
            steps = evidence_report.steps(report, state.service)
            lead = report.hypotheses[0].statement if report.hypotheses else "no hypothesis rests on these events"
            action = f"Investigate {state.service} (inconclusive): first check whether {lead[0].lower()}{lead[1:]}"
        else:
            cause = quotes.concrete_cause(rca.category, rca.findings) if rca else None
            # a borrowed doc's steps for another stack (SQLAlchemy advice for a Kafka client) are left out
            steps = technology.own_steps(doc.remediation, state.evidence)
            kind = operational_cause(rca, state.evidence)
            if kind:
                # no code change fixes it: the runbook step first, naming the evidence's own entities
                steps = operational.runbook(kind, rca.findings if rca else [], state.service) + steps
                action = f"Handle {state.service} operationally ({operational.KINDS[kind]}), no code change: " \
                         f"{cause or steps[0]}"
            else:
                steps = steps or [f"Check what the evidence names first: {cause or doc.title}."]
                action = f"{cause} {steps[0]}" if cause else steps[0]
        revision = state.revisions + (1 if feedback else 0)
        requests = [*state.feedback] if feedback is None or feedback in state.feedback else [*state.feedback, feedback]
        if feedback:
            # every request is answered, oldest first, and kept verbatim, as data
            steps = steps + [f"Reviewer request {n}: {text}" for n, text in enumerate(requests, 1)]
            steps = [added for text in requests for added in requested_steps(text)] + steps
            # the requests changed the analysis itself (rca, via the reviewer's reading); the action says
            # which revision it is, the steps carry the requests
            action = f"(revision {revision}) {action}"
        return Recommendation(action=action, steps=steps, risk=state.severity, revision=revision, feedback=feedback)

    def fix_plan(self, state: IncidentState) -> list[str]:
        """Steps a developer does by hand beside the diff: the cited doc's fix hints (the diff's own
        step is written by pipeline/analyst/fixes.py from the change itself)."""
        return fixes.curated_plan(state, cause_doc(self.kb, state))


REQUESTED_UNSUPPORTED_CONFIDENCE = 0.3
DESCRIBED_OTHER_DOC_CONFIDENCE = 0.6
# a category is named by its exact name (`db_pool_exhausted`): prose such as "the connection refused
# errors are noise" must not re-categorise an incident
_CATEGORY_WORDS = {c: re.compile(rf"(?<![\w]){re.escape(c)}(?![\w])", re.I) for c in CATEGORIES}
_STEP_REQUEST = re.compile(r"\b(?:add|include)(?: a| the)? step(?: to)?[:\s]+(?P<step>[^.;\n]+)", re.I)


def requested_category(requests: list[str]) -> str | None:
    """The category the newest request naming exactly one asks for (`db_pool_exhausted`), or None."""
    for text in reversed(requests):
        named = [c for c, pattern in _CATEGORY_WORDS.items() if pattern.search(text or "")]
        if len(named) == 1:
            return named[0]
    return None


def requested_steps(text: str) -> list[str]:
    """Steps a request asks to add ("add a step: drain the queue first")."""
    return [m.group("step").strip() for m in _STEP_REQUEST.finditer(text or "")]


def _first_lines(events: list[LogEvent]) -> list[Quote]:
    out, seen = [], set()
    for event in events:
        line = event.message.splitlines()[0][:200] if event.message else ""
        key = quotes.line_template(line)
        if line and key not in seen:
            seen.add(key)
            out.append(Quote(event_id=event.event_id, field="message", text=line,
                             count=sum(1 for e in events if quotes.line_template(e.message.splitlines()[0][:200]) == key)))
        if len(out) >= 2:
            break
    return out
