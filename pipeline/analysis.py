"""The analyst seam behind rca, recommend and code_fix, and the offline analyzer.

The offline analyzer is deterministic and grounded: a category is named only when a curated
doc's signatures are found in the evidence; retrieval similarity alone never names a cause.
Its confidence rises with the number and specificity of matched signatures and falls when
another category is nearly as well supported.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Protocol

from pipeline.knowledge import Doc, KnowledgeBase
from pipeline.state import RCA, SEVERITIES, ErrorDoc, IncidentState, LogEvent, Recommendation

CRITICAL_PATH_WORDS = ("checkout", "payment", "pos", "order", "register")


class Analyst(Protocol):
    """What the graph's analysis nodes call."""

    name: str

    def rca(self, state: IncidentState) -> RCA: ...

    def recommend(self, state: IncidentState, *, feedback: str | None = None) -> Recommendation: ...


def evidence_text(events: list[LogEvent]) -> str:
    """The text signatures are matched against: exceptions, messages and stack traces."""
    parts = []
    for e in events:
        parts.append(e.exception or "")
        parts.append(e.message)
        if e.stack:
            parts.append(e.stack[:4000])
        for key in ("error_code", "sqlstate", "code", "errno", "http_status", "status", "reason"):
            if key in e.fields:
                parts.append(f"{key}={e.fields[key]}")
    return "\n".join(p for p in parts if p)


def query_text(events: list[LogEvent], limit: int = 6) -> str:
    """A compact retrieval query: distinct exception/message lines and the top stack lines."""
    seen, lines = set(), []
    for e in events:
        for line in (e.exception, e.message.splitlines()[0] if e.message else "", *(e.stack or "").splitlines()[:3]):
            if line and line not in seen:
                seen.add(line)
                lines.append(line)
        if len(lines) >= limit * 3:
            break
    return "\n".join(lines)


def _weight(signature: str) -> float:
    # a regex or a long literal is more specific than a short fragment
    if signature.startswith("re:"):
        return 1.5
    return 1.0 + min(len(signature), 60) / 60


def find_similar(kb: KnowledgeBase, events: list[LogEvent], *, k: int = 5) -> list[ErrorDoc]:
    """Docs for the rag node: retrieval similarity combined with signature evidence, best first."""
    text = evidence_text(events)
    lowered = text.lower()
    similarities = dict(kb.search(query_text(events), k=max(k, 8)))
    scored: dict[str, tuple[float, list[str]]] = {}
    for doc in kb.docs:
        matched = doc.matched_signatures(text, lowered=lowered)
        sim = similarities.get(doc.doc_id, 0.0)
        if matched or doc.doc_id in similarities:
            support = sum(_weight(s) for s in matched)
            scored[doc.doc_id] = (sim + 0.6 * support, matched)
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[0]))[:k]
    return [kb.by_id[doc_id].as_error_doc(score=similarities.get(doc_id, 0.0), matched=matched)
            for doc_id, (_, matched) in ranked]


def severity_for(events: list[LogEvent], service: str, doc_severity: str | None) -> str:
    """Severity from the matched doc, raised by fatal levels, a high event rate and critical services."""
    rank = SEVERITIES.index(doc_severity) if doc_severity else 1
    levels = {e.level for e in events}
    if "FATAL" in levels:
        rank = max(rank, 2)
    if levels and levels <= {"WARN", "INFO", "DEBUG"}:
        rank = min(rank, 1)
    if len(events) >= 2:
        span = (max(e.time for e in events) - min(e.time for e in events)).total_seconds() / 60
        if len(events) >= 20 and span <= 10:
            rank += 1
    if any(word in service.lower() for word in CRITICAL_PATH_WORDS) and rank >= 2:
        rank += 1
    return SEVERITIES[min(rank, len(SEVERITIES) - 1)]


class OfflineAnalyst:
    """Deterministic analyst grounded in the retrieved docs and the evidence; needs no network."""

    name = "offline"

    def __init__(self, kb: KnowledgeBase):
        self.kb = kb

    def rca(self, state: IncidentState) -> RCA:
        text = evidence_text(state.evidence)
        lowered = text.lower()
        by_category: dict[str, float] = defaultdict(float)
        best: dict[str, tuple[float, Doc, list[str]]] = {}
        for doc in self.kb.docs:
            matched = doc.matched_signatures(text, lowered=lowered)
            if not matched:
                continue
            support = sum(_weight(s) for s in matched)
            by_category[doc.category] = max(by_category[doc.category], support)
            if doc.category not in best or support > best[doc.category][0]:
                best[doc.category] = (support, doc, matched)
        if not by_category:
            top = state.similar_docs[0] if state.similar_docs else None
            note = f"closest doc {top.doc_id} (similarity {top.score:.2f}) has none of its signatures in the evidence" if top else "no similar doc"
            return RCA(category="unknown", confidence=round(min(0.3, 0.1 + (top.score if top else 0) * 0.2), 2),
                       root_cause="No known cause is supported by the evidence: no curated error signature "
                                  "matches these events.",
                       evidence=[note] + [f"message: {e.message.splitlines()[0][:200]}" for e in state.evidence[:2]],
                       doc_ids=[], analyst=self.name)
        ranked = sorted(by_category.items(), key=lambda kv: -kv[1])
        category, support = ranked[0]
        runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
        _, doc, matched = best[category]
        margin = (support - runner_up) / support
        per_event = [set(doc.matched_signatures(evidence_text([e]))) for e in state.evidence]
        coverage = sum(1 for found in per_event if found) / max(1, len(per_event))
        confidence = 0.35 + 0.25 * min(1.0, support / 3.0) + 0.25 * margin + 0.1 * coverage
        confidence = round(max(0.05, min(0.97, confidence)), 2)
        evidence = [f"signature {s!r} found in {sum(1 for found in per_event if s in found)}"
                    f" of {len(state.evidence)} events" for s in matched[:4]]
        evidence.append(f"matches doc {doc.doc_id}: {doc.title}")
        if runner_up:
            evidence.append(f"also consistent with {ranked[1][0]} (weaker support)")
        return RCA(category=category, root_cause=doc.root_cause, confidence=confidence, evidence=evidence,
                   doc_ids=[doc.doc_id], analyst=self.name)

    def recommend(self, state: IncidentState, *, feedback: str | None = None) -> Recommendation:
        rca = state.rca
        doc = self.kb.by_id.get(rca.doc_ids[0]) if rca and rca.doc_ids else None
        if doc is None:
            steps = ["Collect more context: widen the log window and check recent deploys and config changes.",
                     "Reproduce the failing request in staging with the trace ids from the evidence.",
                     "Escalate to the owning team of the service with the evidence attached."]
            action = f"Investigate {state.service}: no known cause matched; gather more evidence before changing anything."
        else:
            steps = list(doc.remediation) or [doc.root_cause]
            action = steps[0]
        revision = state.revisions + (1 if feedback else 0)
        if feedback:
            # the reviewer's ask goes first and is kept verbatim, as data
            steps = [f"Reviewer asked: {feedback}"] + steps
            action = f"(revision {revision}) {action} Addresses reviewer feedback: {feedback}"
        return Recommendation(action=action, steps=steps, risk=state.severity, revision=revision, feedback=feedback)
