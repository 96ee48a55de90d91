"""The graph's nodes: plain functions named like the node, returning partial updates.

Dependencies arrive through the run's context (`Deps`), never module globals. Nothing before
`interrupt()` in `approval` has side effects: it re-runs from its first line on resume. The fix
proposal is computed before the gate (`propose_fix`, pure) and recorded after it (`code_fix`).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import interrupt

from pipeline.analyst.callee_lines import LEADS
from pipeline.analyst.cause_doc import cause_doc
from pipeline.clock import parse_iso
from pipeline.incidents.leading import WARNED
from pipeline.knowledge.retrieval import find_similar, severity_for
from pipeline.analyst.protocol import Analyst
from pipeline.analyst.reading import not_code_defect, reranked_docs
from pipeline.errors import IncidentNotFound, UsageError
from pipeline.analyst.fixes import facts_of, foreign_fix, propose
from pipeline.analyst.operational import KINDS, operational_cause
from pipeline.knowledge.index import KnowledgeBase
from pipeline.store.records import Records
from pipeline.state import (MAX_REVISIONS, ApprovalDecision, FixProposal, IncidentState, LogEvent, NodeEvent, Revision,
                           counted, window_excerpt)

WINDOW_BEFORE = timedelta(minutes=5)
WINDOW_AFTER = timedelta(minutes=2)
LOG_WINDOW_LIMIT = 40


@dataclass(frozen=True)
class Deps:
    """What nodes may use: stores, knowledge base, analyst and a few settings."""

    records: Records
    kb: KnowledgeBase
    analyst: Analyst
    code_fix_min_confidence: float = 0.5
    critical_services: tuple[str, ...] = ()
    repo_dir: Path = Path("samples/pos-backend")


def intake(state: IncidentState) -> dict[str, Any]:
    """Normalise the triggering evidence: order, service and title."""
    evidence = sorted(state.evidence, key=lambda e: e.time)
    first = evidence[0] if evidence else None
    update: dict[str, Any] = {"events": [NodeEvent(node="intake", detail=f"{len(evidence)} triggering events")]}
    if first is not None:
        update["service"] = state.service if state.service != "unknown" else first.service
        update["title"] = state.title or first.message.splitlines()[0][:120]
    return update


def retrieval(state: IncidentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """The log window around the evidence: the service's and the hosts' events, errors or not."""
    if not state.evidence:
        return {"log_window": [], "events": [NodeEvent(node="retrieval", detail="no evidence")]}
    start = min(e.time for e in state.evidence) - WINDOW_BEFORE
    end = max(e.time for e in state.evidence) + WINDOW_AFTER
    window = runtime.context.records.log_window(service=state.service, start=start, end=end,
                                                hosts={e.host for e in state.evidence if e.host}, limit=LOG_WINDOW_LIMIT)
    window = [window_excerpt(e) for e in window]
    # the warning the incident's grouping found leading it (it opened nothing, so no evidence holds it), though
    # another writer's (a client library's logger, beside the service's own): where its errors' cause is said
    lead = leading_warning(runtime.context.records, state.incident_id)
    if lead is not None and lead.event_id not in {e.event_id for e in [*state.evidence, *window]}:
        window = sorted([lead, *window], key=lambda e: e.time)
    return {"log_window": window, "events": [NodeEvent(node="retrieval", detail=f"{counted(len(window), 'event')} in window")]}


def leading_warning(records: Records, incident_id: str) -> LogEvent | None:
    """The incident's stored leader when it is a warning (incidents/leading.py WARNED), as a window event marked
    LEADS (pipeline/analyst/callee_lines.py), or None."""
    try:
        lead = records.incident_fields(incident_id, "leader").get("leader")
    except IncidentNotFound:
        return None
    if not isinstance(lead, dict) or not str(lead.get("pattern", "")).startswith(WARNED) or not lead.get("time"):
        return None
    when = parse_iso(lead["time"])
    if when is None:  # a leader stored without a readable time: no place in the window
        return None
    return LogEvent(event_id=lead["event_id"], time=when, message=lead.get("message") or "",
                    service=lead.get("service") or "unknown", level="WARN", position=lead.get("position") or "",
                    fields={LEADS: True})


def rag(state: IncidentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """Similar error docs from the knowledge base."""
    docs = find_similar(runtime.context.kb, state.evidence)
    return {"similar_docs": docs,
            "events": [NodeEvent(node="rag", detail=", ".join(f"{d.doc_id}:{d.score:.2f}" for d in docs[:3]))]}


def rca(state: IncidentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """Root cause, category and confidence, and the incident's severity. After a request for
    changes the retrieved docs are re-ranked with the reviewer's words as evidence (the doc they
    describe first), and both analysts answer from those."""
    update: dict[str, Any] = {}
    if state.feedback:
        docs = reranked_docs(runtime.context.kb, state)
        state = state.model_copy(update={"similar_docs": docs})
        update["similar_docs"] = docs
    result = runtime.context.analyst.rca(state)
    doc = runtime.context.kb.by_id.get(result.doc_ids[0]) if result.doc_ids else None
    severity = severity_for(state.evidence, state.service, doc.severity if doc else None,
                            critical_services=runtime.context.critical_services)
    return {**update, "rca": result, "severity": severity,
            "events": [NodeEvent(node="rca", detail=f"{result.category} @ {result.confidence:.2f}")]}


def recommend(state: IncidentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """The proposed action; after a request for changes, the revised one (every request kept)."""
    revising = state.decision is not None and state.decision.action == "revise"
    feedback = state.feedback[-1] if revising and state.feedback else None
    rec = runtime.context.analyst.recommend(state, feedback=feedback)
    update: dict[str, Any] = {"recommendation": rec, "decision": None,
              "events": [NodeEvent(node="recommend", detail=rec.action[:80])]}
    if revising:
        update["revisions"] = state.revisions + 1
    return update


def propose_fix(state: IncidentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """The fix proposal (plan and diff) the reviewer approves, computed before the gate.

    Pure: it reads the read-only source tree and asks the analyst for a plan; nothing is recorded
    here (code_fix records this exact proposal after an approval).
    """
    deps = runtime.context
    if not fix_eligible(state, deps.code_fix_min_confidence, deps.kb):
        return {"proposal": None, "events": [NodeEvent(node="propose_fix", detail=not_eligible_reason(
            state, deps.code_fix_min_confidence, deps.kb))]}
    doc = cause_doc(deps.kb, state)
    # the analyst writes the by-hand steps; the diff and its step stay the deterministic ones
    # grounded in the source tree, so the plan cannot claim a change the diff does not make
    values = propose(state, doc, deps.repo_dir, plan=deps.analyst.fix_plan(state), facts=facts_of(state))
    proposal = FixProposal(**values)
    detail = f"{f'diff of {proposal.target_file}' if proposal.diff else 'no diff'} · {proposal.hash[:12]}"
    return {"proposal": proposal, "events": [NodeEvent(node="propose_fix", detail=detail)]}


def not_eligible_reason(state: IncidentState, min_confidence: float, kb: KnowledgeBase | None = None) -> str:
    """Why an approval of this analysis would propose no code fix (empty when one is proposed).
    With the knowledge base, also when none of its doc's fix hints is for the evidence's technology."""
    if state.rca is None or state.rca.category == "unknown":
        return "no code fix: no known cause"
    if not state.rca.supported:
        return f"no code fix: {state.rca.warning or 'the analysis is not supported by a retrieved doc'}"
    if state.rca.confidence < min_confidence:
        return f"no code fix: confidence {state.rca.confidence:.2f} is below {min_confidence:.2f}"
    if state.severity == "low":
        return "no code fix: severity low"
    if not_code_defect(state):
        return "no code fix: a reviewer says it is not a code defect"
    kind = operational_cause(state.rca, state.evidence)
    if kind:
        return f"no code fix: an operational cause ({KINDS[kind]}): the recommendation's runbook steps handle it"
    return (foreign_fix(state, cause_doc(kb, state)) or "") if kb is not None else ""


def approval_payload(state: IncidentState) -> dict[str, Any]:
    """What the reviewer sees at the gate (JSON only)."""
    return {
        "incident_id": state.incident_id,
        "service": state.service,
        "severity": state.severity,
        "rca": state.rca.model_dump(mode="json") if state.rca else None,
        "recommendation": state.recommendation.model_dump(mode="json") if state.recommendation else None,
        "similar_docs": [{"doc_id": d.doc_id, "score": d.score} for d in state.similar_docs],
        "revisions_left": MAX_REVISIONS - state.revisions,
        # what an approval approves: this exact proposal (its hash goes into the decision)
        "proposal": state.proposal.model_dump(mode="json") if state.proposal else None,
        "requests": list(state.feedback),
    }


def fix_eligible(state: IncidentState, min_confidence: float, kb: KnowledgeBase | None = None) -> bool:
    """Approved incidents get a code fix only when the RCA is confident, the severity not low, the
    cause one code can fix (not operational: pipeline/analyst/operational.py) and, with the
    knowledge base, its doc has a fix for the evidence's technology (fixes.foreign_fix)."""
    return (state.rca is not None and state.rca.category != "unknown" and state.rca.supported
            and state.rca.confidence >= min_confidence and state.severity != "low" and not not_code_defect(state)
            and operational_cause(state.rca, state.evidence) is None
            and (kb is None or foreign_fix(state, cause_doc(kb, state)) is None))


def approval(state: IncidentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """The human gate: pause until a reviewer decides."""
    answer = interrupt(approval_payload(state))
    decision = ApprovalDecision.model_validate(answer)
    update: dict[str, Any] = {"decision": decision, "events": [NodeEvent(node="approval", detail=f"{decision.action} by {decision.reviewer}")]}
    if decision.action == "approve":
        proposes = state.proposal is not None or (_paused_before_proposals(state) and fix_eligible(
            state, runtime.context.code_fix_min_confidence, runtime.context.kb))
        update["outcome"] = None if proposes else "approved"
    elif decision.action == "reject":
        update["outcome"] = "rejected"
    elif decision.action == "expire":
        update["outcome"] = "expired"
    elif decision.action == "merge":  # merged into another incident, which analyses its events now
        update["outcome"] = "merged"
    else:
        if state.revisions >= MAX_REVISIONS:
            raise UsageError(f"{state.incident_id}: revision limit of {MAX_REVISIONS} reached")
        update["feedback"] = [*state.feedback, decision.note or ""]
    return update


def _paused_before_proposals(state: IncidentState) -> bool:
    # a thread paused by 0.1, before propose_fix existed: its proposal is computed after approval
    return not any(e.node == "propose_fix" for e in state.events)


def route_after_approval(state: IncidentState) -> Literal["code_fix", "revise", "__end__"]:
    """Where an answered gate leads."""
    decision = state.decision
    if decision is None:
        raise ValueError(f"{state.incident_id}: routed after approval without a decision")
    if decision.action == "revise":
        return "revise"
    if decision.action == "approve" and state.outcome is None:
        return "code_fix"
    return "__end__"


def revise(state: IncidentState) -> dict[str, Any]:
    """Keep the request and the analysis it answers; rca, recommend and propose_fix then redo it."""
    decision = state.decision
    entry = Revision(revision=state.revisions + 1, feedback=state.feedback[-1] if state.feedback else "",
                     reviewer=decision.reviewer if decision else "", rca=state.rca,
                     recommendation=state.recommendation, proposal=state.proposal)
    return {"revision_log": [*state.revision_log, entry],
            "events": [NodeEvent(node="revise", detail=f"revision {entry.revision}: re-analysing")]}


def code_fix(state: IncidentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """Record the approved proposal, exactly once per approved decision, as it was shown."""
    deps = runtime.context
    assert state.decision is not None  # code_fix follows an approval (route_after_approval)
    key = f"{state.incident_id}:{state.decision.interrupt_id or 'approval'}"
    shown = state.proposal
    if shown is None:  # a 0.1 thread approved without a proposal on screen (see _paused_before_proposals)
        shown = FixProposal(**propose(state, cause_doc(deps.kb, state),
                                      deps.repo_dir, plan=deps.analyst.fix_plan(state), facts=facts_of(state)))
    proposal = shown.model_dump(mode="json", include={"plan", "diff", "target_file", "hash", "change"})
    recorded, created = deps.records.record_fix_once(idempotency_key=key, incident_id=state.incident_id,
                                                     proposal=proposal)
    fields = ("plan", "diff", "target_file", "idempotency_key", "attempt", "hash", "change")
    fix = FixProposal.model_validate({k: recorded[k] for k in fields if k in recorded})
    detail = f"attempt {fix.attempt} · {fix.hash[:12]}" + ("" if created else " (already recorded)")
    return {"fix": fix, "outcome": "fix_proposed", "events": [NodeEvent(node="code_fix", detail=detail)]}
