"""The analyst seam: both analysts implement everything the graph calls, and run it to a fix;
the knowledge docs' fix hints reach the model's prompts."""
from __future__ import annotations

import inspect

import pytest
from langgraph.types import Command

from pipeline.analyst.model import ModelAnalyst
from pipeline.analyst.offline import OfflineAnalyst
from pipeline.analyst.protocol import Analyst
from pipeline.engine.graph import thread_config
from pipeline.engine.runner import record_from_snapshot
from pipeline.state import IncidentState
from tests.support import ingest_one

PROTOCOL_METHODS = ("rca", "recommend", "fix_plan")
HIKARI_HINT = "Raise the pool size moderately if the database has headroom"


def _params(function) -> list[tuple]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


@pytest.mark.parametrize("cls", [OfflineAnalyst, ModelAnalyst])
def test_each_analyst_has_the_protocols_methods_with_its_signatures(cls):
    members = [name for name, _ in inspect.getmembers(Analyst, inspect.isfunction) if not name.startswith("_")]
    assert sorted(members) == sorted(PROTOCOL_METHODS)
    for name in PROTOCOL_METHODS:
        assert _params(getattr(cls, name)) == _params(getattr(Analyst, name)), f"{cls.__name__}.{name}"


def test_the_engines_analyst_satisfies_the_protocol(engine):
    assert isinstance(engine.analyst, OfflineAnalyst) and isinstance(engine.analyst, Analyst)


def _approve(engine, incident_id) -> IncidentState:
    cfg = thread_config(incident_id)
    pending = engine.graph.get_state(cfg).interrupts[0].id
    engine.graph.invoke(Command(resume={"action": "approve", "reviewer": "ann", "interrupt_id": pending}), cfg,
                        context=engine.deps)
    record_from_snapshot(engine, incident_id)
    return IncidentState.model_validate(engine.graph.get_state(cfg).values)


def test_offline_analyst_writes_the_fix_plan_of_an_approved_incident(paused_engine):
    inc = next(r["incident_id"] for r in paused_engine.records.incidents() if r["category"] == "db_pool_exhausted")
    paused = IncidentState.model_validate(paused_engine.graph.get_state(thread_config(inc)).values)
    state = _approve(paused_engine, inc)
    plan = state.fix.plan
    # the recorded fix is the proposal the reviewer saw at the gate
    assert state.fix.hash == paused.proposal.hash and plan == paused.proposal.plan
    # first the change the diff makes, with its numbers; then the analyst's by-hand steps
    assert plan[0].startswith("The diff changes spring.datasource.hikari.maximum-pool-size") and "from 10 to 30" in plan[0]
    by_hand = paused_engine.analyst.fix_plan(paused)
    # every by-hand step but the one the diff already does (issue 23: a plan never lists it twice)
    assert by_hand and all(step in plan for step in by_hand if "Raise the pool size" not in step)
    assert not [step for step in plan[1:] if "Raise the pool size" in step]
    assert any(step.startswith("By hand (not in the diff):") and "(application.yml)" in step for step in plan)
    assert paused_engine.records.incident(inc)["status"] == "fix_proposed"


def test_model_analyst_writes_the_fix_plan_and_the_curated_hints_follow(model_engine, stub, tmp_path):  # noqa: F811
    inc = ingest_one(model_engine, tmp_path)
    state = _approve(model_engine, inc)
    assert model_engine.records.incident(inc)["status"] == "fix_proposed"
    # the diff's own step first (deterministic), then the model's plan, then the curated hints
    assert state.fix.plan[0].startswith("The diff changes")
    assert state.fix.plan[1:3] == ["Set maximumPoolSize in application.yml", "Load test"]
    assert HIKARI_HINT in state.fix.plan[0]  # the hint the diff applies, stated with the change
    assert any(step.startswith("By hand (not in the diff):") for step in state.fix.plan[3:])
    fix_request = next(r for r in reversed(stub.chat_requests()) if r.schema_name == "FixPlanAnswer")
    assert fix_request.schema_name == "FixPlanAnswer" and HIKARI_HINT in fix_request.text()


def test_retrieved_docs_carry_their_fix_hints_into_the_state_and_the_rca_prompt(model_engine, stub, tmp_path):  # noqa: F811
    inc = ingest_one(model_engine, tmp_path)
    state = IncidentState.model_validate(model_engine.graph.get_state(thread_config(inc)).values)
    hikari = next(d for d in state.similar_docs if d.doc_id == "java-hikari-pool-exhausted")
    assert any(HIKARI_HINT in h["hint"] for h in hikari.fix_hints)
    rca_request = next(r for r in stub.chat_requests() if r.schema_name == "RCAAnswer")
    docs_block = rca_request.text().split("Retrieved error docs", 1)[1].split("<untrusted_log_data", 1)[0]
    assert HIKARI_HINT in docs_block  # among the trusted docs, not inside the log data
