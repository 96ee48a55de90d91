"""Each node of the incident graph on its own: compiled into a graph of just that node (LangGraph's
pattern for testing a node in isolation) and run with the engine's real `Deps` (records store,
knowledge base, offline analyst) on a temp data dir. The whole graph: tests/test_graph.py."""
from __future__ import annotations

import hashlib
import json

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from pipeline.engine import nodes
from pipeline.engine.graph import thread_config
from pipeline.engine.nodes import Deps
from pipeline.evaluation import EvalCase, case_state
from pipeline.state import CATEGORIES, IncidentState, RCA

# the pool incident of tests/fixtures/small.jsonl, two error lines given latest first, and a line of
# context on the same host that opens nothing
POOL = "HikariPool-1 - Connection is not available, request timed out after {}ms."
EVENTS = (
    {"_time": "2026-11-28T10:00:02Z", "service": "checkout-api", "host": "co-1", "level": "ERROR",
     "message": POOL.format(30004), "exception": "java.sql.SQLTransientConnectionException"},
    {"_time": "2026-11-28T10:00:01Z", "service": "checkout-api", "host": "co-1", "level": "ERROR",
     "message": POOL.format(30000), "exception": "java.sql.SQLTransientConnectionException"},
    {"_time": "2026-11-28T10:00:03Z", "service": "checkout-api", "host": "co-1", "level": "INFO",
     "message": "GET /health 200"},
    {"_time": "2026-11-28T10:00:04Z", "service": "search-api", "host": "se-9", "level": "ERROR",
     "message": "index shard 3 unavailable"},  # another service on another host: never in the window
)


def one_node(name: str, checkpointer=None):
    """A graph of the one node: START → name → END, the product's state and context schema."""
    builder = StateGraph(IncidentState, context_schema=Deps)
    builder.add_node(name, getattr(nodes, name))
    builder.add_edge(START, name)
    builder.add_edge(name, END)
    return builder.compile(checkpointer=checkpointer)


def run(engine, name: str, state: IncidentState, **kwargs) -> IncidentState:
    return IncidentState.model_validate(one_node(name).invoke(state, context=engine.deps, **kwargs))


@pytest.fixture
def stored(engine) -> IncidentState:
    """The events stored in the records (so the log window is real); the incident holds the pool
    errors, given latest first, on an unnamed service."""
    state = case_state(engine, EvalCase(case_id="INC-node-1", expected="db_pool_exhausted", split="tune", events=EVENTS))
    errors = [e for e in state.evidence if e.service == "checkout-api" and e.level == "ERROR"]
    return IncidentState(incident_id="INC-node-1", evidence=sorted(errors, key=lambda e: e.time, reverse=True))


def analysed(engine, state: IncidentState) -> IncidentState:
    for name in ("intake", "retrieval", "rag", "rca", "recommend"):
        state = run(engine, name, state)
    return state


def test_intake_names_the_incident_after_its_earliest_event(engine, stored):
    assert [e.message for e in stored.evidence] == [POOL.format(30004), POOL.format(30000)]
    update = nodes.intake(stored)  # the node itself, on evidence out of order
    assert update["service"] == "checkout-api" and update["title"] == POOL.format(30000)
    assert [(e.node, e.detail) for e in update["events"]] == [("intake", "2 triggering events")]
    after = run(engine, "intake", stored)  # in a graph, the state's evidence comes out in time order
    assert [e.message for e in after.evidence] == [POOL.format(30000), POOL.format(30004)]
    assert after.title == POOL.format(30000) and after.service == "checkout-api"
    named = run(engine, "intake", stored.model_copy(update={"service": "payments", "title": "kept"}))
    assert (named.service, named.title) == ("payments", "kept")


def test_retrieval_reads_the_stored_window_of_the_service_and_its_hosts(engine, stored):
    after = run(engine, "retrieval", run(engine, "intake", stored))
    assert [e.message for e in after.log_window] == [POOL.format(30000), POOL.format(30004), "GET /health 200"]
    assert after.events[-1].detail == "3 events in window"
    empty = run(engine, "retrieval", IncidentState(incident_id="INC-node-2"))
    assert empty.log_window == [] and empty.events[-1].detail == "no evidence"


def test_rag_returns_the_knowledge_bases_docs_best_first(engine, stored):
    after = run(engine, "rag", run(engine, "intake", stored))
    scores = [d.score for d in after.similar_docs]
    assert after.similar_docs and scores == sorted(scores, reverse=True)
    assert after.similar_docs[0].category == "db_pool_exhausted"
    assert {d.doc_id for d in after.similar_docs} <= set(engine.deps.kb.by_id)


def test_rca_names_a_category_with_a_confidence_and_sets_the_severity(engine, stored):
    state = run(engine, "rag", run(engine, "retrieval", run(engine, "intake", stored)))
    after = run(engine, "rca", state)
    assert after.rca.category == "db_pool_exhausted" and after.rca.category in CATEGORIES
    assert 0.5 <= after.rca.confidence <= 1.0 and after.rca.supported
    assert after.rca.doc_ids and after.rca.doc_ids[0] in engine.deps.kb.by_id
    assert after.severity in ("critical", "high", "medium", "low")
    assert after.events[-1].detail == f"db_pool_exhausted @ {after.rca.confidence:.2f}"
    # text no doc supports: `unknown`, with a confidence that can never make a fix eligible
    odd = IncidentState(incident_id="INC-node-3", evidence=[e.model_copy(update={"message": "basket total did not add up",
                                                                                  "exception": None})
                                                            for e in stored.evidence])
    unknown = run(engine, "rca", run(engine, "rag", odd))
    assert unknown.rca.category == "unknown" and unknown.rca.confidence <= 0.3


def test_recommend_proposes_an_action_and_clears_the_decision(engine, stored):
    after = analysed(engine, stored)
    assert after.recommendation.action and after.recommendation.steps
    assert after.decision is None and after.revisions == 0
    assert after.events[-1].node == "recommend"


def test_propose_fix_hashes_its_plan_diff_and_target_and_writes_nothing(engine, stored):
    state = analysed(engine, stored)
    after = run(engine, "propose_fix", state)
    proposal = after.proposal
    assert proposal.diff and proposal.target_file and proposal.plan[0].startswith("The diff")
    canonical = json.dumps({"plan": proposal.plan, "diff": proposal.diff, "target_file": proposal.target_file},
                           sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert proposal.hash == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert after.events[-1].detail.endswith(proposal.hash[:12])
    assert run(engine, "propose_fix", state).proposal == proposal  # pure: the same analysis, the same proposal
    assert engine.records.fixes("INC-node-1") == []  # recorded only after an approval (code_fix)
    low = state.model_copy(update={"rca": RCA.model_validate({**state.rca.model_dump(), "confidence": 0.2})})
    refused = run(engine, "propose_fix", low)
    assert refused.proposal is None and refused.events[-1].detail == "no code fix: confidence 0.20 is below 0.50"


def test_approval_pauses_with_what_the_reviewer_sees_and_takes_the_answer(engine, stored):
    state = run(engine, "propose_fix", analysed(engine, stored))
    gate = one_node("approval", checkpointer=engine.graph.checkpointer)  # the engine's real checkpoint store
    config = thread_config("INC-node-gate")
    paused = gate.invoke(state, config, context=engine.deps)
    (pending,) = paused["__interrupt__"]
    assert pending.value["incident_id"] == "INC-node-1" and pending.value["revisions_left"] == 2
    assert pending.value["proposal"]["hash"] == state.proposal.hash
    assert pending.value["rca"]["category"] == "db_pool_exhausted"
    assert gate.get_state(config).next == ("approval",)
    done = IncidentState.model_validate(gate.invoke(Command(resume={"action": "reject", "reviewer": "ann",
                                                                    "note": "not ours"}),
                                                    config, context=engine.deps))
    assert done.decision.action == "reject" and done.decision.reviewer == "ann" and done.outcome == "rejected"
    assert gate.get_state(config).next == ()


def test_code_fix_records_the_approved_proposal_once(engine, stored):
    state = run(engine, "propose_fix", analysed(engine, stored))
    approved = state.model_copy(update={"decision": nodes.ApprovalDecision(
        action="approve", reviewer="ann", interrupt_id="i-1", proposal_hash=state.proposal.hash)})
    first = run(engine, "code_fix", approved)
    again = run(engine, "code_fix", approved)  # a retry of the same decision
    assert first.outcome == again.outcome == "fix_proposed"
    assert first.fix.hash == again.fix.hash == state.proposal.hash and first.fix.diff == state.proposal.diff
    assert first.fix.idempotency_key == "INC-node-1:i-1" and again.events[-1].detail.endswith("(already recorded)")
    (record,) = engine.records.fixes("INC-node-1")
    assert record["attempt"] == 1 and record["proposal"]["hash"] == state.proposal.hash


def test_route_after_approval_follows_the_decision():
    def routed(action: str, outcome=None, **extra) -> str:
        decision = nodes.ApprovalDecision(action=action, reviewer="ann")
        return nodes.route_after_approval(IncidentState(incident_id="INC-r", decision=decision, outcome=outcome, **extra))

    assert routed("approve") == "code_fix"
    assert routed("approve", outcome="approved") == "__end__"  # approved, no code fix
    assert routed("reject", outcome="rejected") == "__end__"
    assert routed("revise") == "revise"
    with pytest.raises(ValueError, match="without a decision"):
        nodes.route_after_approval(IncidentState(incident_id="INC-r"))
