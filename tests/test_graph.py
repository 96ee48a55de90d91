"""The graph: parallel branches merge, the gate pauses, and routes end as CONTRACT §4 says."""
from __future__ import annotations

from langgraph.types import Command

from pipeline.engine.graph import thread_config
from pipeline.engine.runner import record_from_snapshot
from pipeline.state import IncidentState
from tests.support import paused_ids


def _state(engine, incident_id) -> IncidentState:
    return IncidentState.model_validate(engine.graph.get_state(thread_config(incident_id)).values)


def _by_category(engine, category):
    return next(r["incident_id"] for r in engine.records.incidents() if r["category"] == category)


def test_retrieval_and_rag_both_ran_and_merged(paused_engine):
    for incident_id in paused_ids(paused_engine):
        state = _state(paused_engine, incident_id)
        ran = [e.node for e in state.events]
        assert {"retrieval", "rag"} <= set(ran)
        assert ran.index("rca") > max(ran.index("retrieval"), ran.index("rag"))
        assert state.log_window and state.similar_docs  # both branches' fields survived the fan-in


def test_both_branches_run_in_the_same_superstep(paused_engine):
    incident_id = paused_ids(paused_engine)[0]
    history = list(paused_engine.graph.get_state_history(thread_config(incident_id)))
    assert any(set(s.next) == {"retrieval", "rag"} for s in history)


def test_log_window_includes_context_lines_of_the_service(paused_engine):
    state = _state(paused_engine, _by_category(paused_engine, "db_pool_exhausted"))
    assert any(e.level == "INFO" for e in state.log_window)


def test_paused_incident_waits_at_approval_with_a_payload(paused_engine):
    incident_id = paused_ids(paused_engine)[0]
    snap = paused_engine.graph.get_state(thread_config(incident_id))
    assert snap.next == ("approval",)
    payload = snap.interrupts[0].value
    assert payload["incident_id"] == incident_id and payload["rca"]["category"]
    assert payload["revisions_left"] == 2


def _resume(engine, incident_id, **decision):
    cfg = thread_config(incident_id)
    pending = engine.graph.get_state(cfg).interrupts[0].id
    engine.graph.invoke(Command(resume={"reviewer": "ann", "interrupt_id": pending, **decision}), cfg,
                        context=engine.deps)
    record_from_snapshot(engine, incident_id)
    return engine.records.incident(incident_id)


def test_approve_eligible_ends_fix_proposed_with_one_fix(paused_engine):
    incident_id = _by_category(paused_engine, "db_pool_exhausted")
    row = _resume(paused_engine, incident_id, action="approve")
    assert row["status"] == "fix_proposed"
    assert len(paused_engine.records.fixes(incident_id)) == 1


def test_approve_unknown_ends_approved_without_fix(paused_engine):
    incident_id = _by_category(paused_engine, "unknown")
    row = _resume(paused_engine, incident_id, action="approve")
    assert row["status"] == "approved"
    assert paused_engine.records.fixes(incident_id) == []


def test_reject_ends_rejected_without_fix(paused_engine):
    incident_id = _by_category(paused_engine, "db_pool_exhausted")
    row = _resume(paused_engine, incident_id, action="reject", note="not now")
    assert row["status"] == "rejected" and row["closed_at"]
    assert paused_engine.records.fixes(incident_id) == []


def test_revise_redoes_the_recommendation_and_pauses_again(paused_engine):
    incident_id = _by_category(paused_engine, "db_pool_exhausted")
    before = paused_engine.records.incident(incident_id)["pending_interrupt_id"]
    row = _resume(paused_engine, incident_id, action="revise", note="prefer a config change over a code change")
    state = _state(paused_engine, incident_id)
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] != before
    # the request is answered in the steps (and is an input of the RCA), not pasted into the action
    assert state.revisions == 1 and state.recommendation.action.startswith("(revision 1)")
    assert any("prefer a config change" in step for step in state.recommendation.steps)


def test_code_fix_rerun_records_the_fix_once(paused_engine):
    incident_id = _by_category(paused_engine, "null_reference")
    _resume(paused_engine, incident_id, action="approve")
    cfg = thread_config(incident_id)
    before_fix = next(s for s in paused_engine.graph.get_state_history(cfg) if s.next == ("code_fix",))
    paused_engine.graph.invoke(None, before_fix.config, context=paused_engine.deps)  # code_fix runs again
    fixes = paused_engine.records.fixes(incident_id)
    assert len(fixes) == 1


def test_null_reference_fix_is_a_diff_of_the_named_file(paused_engine):
    incident_id = _by_category(paused_engine, "null_reference")
    _resume(paused_engine, incident_id, action="approve")
    fix = paused_engine.records.fixes(incident_id)[0]["proposal"]
    assert fix["target_file"].endswith("stock.py")
    assert fix["diff"].startswith("--- a/") and "\n+" in fix["diff"]


def test_graph_is_wired_as_the_architecture_draws_it(engine):
    # the diagram of ARCHITECTURE.md, written out: a node or edge added, dropped or rerouted fails here
    drawn = engine.graph.get_graph()
    edges = {(e.source, e.target, e.conditional) for e in drawn.edges}
    assert edges == {
        ("__start__", "intake", False), ("intake", "retrieval", False), ("intake", "rag", False),
        ("retrieval", "rca", False), ("rag", "rca", False), ("rca", "recommend", False),
        ("recommend", "propose_fix", False), ("propose_fix", "approval", False),
        ("approval", "code_fix", True), ("approval", "revise", True),
        ("approval", "__end__", True), ("revise", "rca", False), ("code_fix", "__end__", False),
    }


def test_a_first_run_and_a_counted_repeat_read_no_snapshot(engine, tmp_path, monkeypatch):
    # the runner reads a run's state once per step: a thread with no checkpoint is told by its
    # newest checkpoint id, the record is written from what the run returned, and a repeat for the
    # paused run is counted against the checkpoint its record names (issue 37.4)
    from pipeline.unattended.file_ingest import ingest_path

    line = ('{"_time":"2026-11-28T10:00:0%d","service":"checkout-api","host":"co-1","level":"ERROR",'
            '"message":"HikariPool-1 - Connection is not available, request timed out after 3000%dms.",'
            '"exception":"java.sql.SQLTransientConnectionException"}\n')
    lines, repeat = tmp_path / "one.jsonl", tmp_path / "repeat.jsonl"
    lines.write_text(line % (1, 0))
    repeat.write_text(line % (2, 4))
    from pipeline.config import Settings

    growth = Settings.model_fields["reanalyse_growth"].get_default(call_default_factory=True)
    engine.settings = engine.settings.model_copy(update={"reanalyse_growth": growth})  # conftest re-runs on any
    reads = []
    get_state = engine.graph.get_state
    monkeypatch.setattr(engine.graph, "get_state", lambda *a, **k: reads.append(a) or get_state(*a, **k))
    ingest_path(engine, lines)
    [row] = engine.records.incidents()
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] and row["pending_checkpoint_id"]
    assert reads == []
    snap = get_state(thread_config(row["incident_id"]))
    assert snap.interrupts[0].id == row["pending_interrupt_id"]
    assert snap.config["configurable"]["checkpoint_id"] == row["pending_checkpoint_id"]
    ingest_path(engine, repeat)
    [after] = engine.records.incidents()
    assert after["event_count"] == 2 and after["status"] == "awaiting_approval"
    assert (after["pending_interrupt_id"], after["pending_checkpoint_id"]) == (
        row["pending_interrupt_id"], row["pending_checkpoint_id"])  # counted: the analysis stands
    assert reads == []
