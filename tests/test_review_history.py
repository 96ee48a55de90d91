"""History, the checkpoint tree, replay and fork: branches from the past that pause at approval
again and never run code_fix without a new approval."""
from __future__ import annotations

import json
import threading

from pipeline.review.service import ReviewService
from tests.support import BOTH_BACKENDS, by_category, checkpoint_count, cli, pending


def _at(history: list[dict], next_nodes: list[str]) -> dict:
    """The oldest checkpoint on the current branch whose next nodes are `next_nodes`."""
    return [h for h in history if h["next"] == next_nodes and h["on_current_branch"]][-1]


def test_history_lists_checkpoints_newest_first_with_parents_and_field_changes(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    code, out, err = cli(capsys, "history", inc, "--json")
    assert code == 0, err
    rows = json.loads(out)
    for key in ("checkpoint_id", "parent_checkpoint_id", "step", "source", "next", "created_at"):
        assert all(key in r for r in rows)
    assert [r["step"] for r in rows] == sorted((r["step"] for r in rows), reverse=True)
    assert all(r["parent_checkpoint_id"] == older["checkpoint_id"] for r, older in zip(rows, rows[1:]))
    assert rows[-1]["source"] == "input" and rows[-1]["parent_checkpoint_id"] is None
    assert rows[0]["is_pending"] and rows[0]["next"] == ["approval"]
    analysed = next(r for r in rows if r["writes_by"] == ["rca"])
    fields = {c["field"]: c for c in analysed["changes"]}
    assert fields["rca.category"] == {"field": "rca.category", "before": None, "after": "db_pool_exhausted"}
    assert "events" not in fields and any(t.startswith("rca:") for t in analysed["trace"])


def test_history_pages_with_limit_and_before(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    service.edit(inc, reviewer="ann", edits={"severity": "high"})
    everything = service.history(inc, limit=100)
    first = service.history(inc, limit=3)
    second = service.history(inc, limit=3, before=first[-1]["checkpoint_id"])
    assert first + second == everything[:6]
    assert len(everything) == checkpoint_count(paused_engine, inc)


@BOTH_BACKENDS
def test_history_leaves_the_checkpoint_store_unlocked(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    service.history(inc, limit=2)
    lock = paused_engine.graph.checkpointer.lock  # either saver holds it while a listing is open
    got = []
    t = threading.Thread(target=lambda: got.append(lock.acquire(timeout=2)))
    t.start()
    t.join()
    assert got == [True]
    lock.release()


def test_history_of_unknown_checkpoint_or_incident_exits_4(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    assert cli(capsys, "history", inc, "--before", "1f000000-0000-6000-8000-000000000000")[0] == 4
    assert cli(capsys, "history", "INC-20990101-000000")[0] == 4


def test_rerun_plan_names_the_nodes_until_the_gate(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    fanned_out = _at(service.history(inc), ["retrieval", "rag"])
    plan = service.rerun_plan(inc, fanned_out["checkpoint_id"])
    assert plan["nodes"] == ["retrieval", "rag", "rca", "recommend", "propose_fix", "approval"]
    assert plan["allowed"] and plan["pauses_at_approval"] and not plan["includes_code_fix"]


def test_replay_branches_pauses_again_and_never_runs_code_fix_without_a_new_approval(paused_engine, capsys):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    service.approve(inc, reviewer="ann")
    assert len(paused_engine.records.fixes(inc)) == 1
    history = service.history(inc)
    fixed_head = history[0]["checkpoint_id"]
    before_recommend = _at(history, ["recommend"])["checkpoint_id"]

    code, _, err = cli(capsys, "replay", inc, "--checkpoint", before_recommend, "--reviewer", "bob")
    assert code == 0, err
    row = paused_engine.records.incident(inc)
    assert row["status"] == "awaiting_approval" and row["closed_at"] is None
    assert len(paused_engine.records.fixes(inc)) == 1  # the gate fired again: nothing ran past it

    tree = service.tree(inc)
    assert tree["branches"] == 2
    nodes = {n["checkpoint_id"]: n for n in tree["nodes"]}
    assert not nodes[fixed_head]["on_current_branch"]
    assert tree["current"][0] == row["pending_checkpoint_id"] and before_recommend in tree["current"]
    branch = [n for n in tree["nodes"] if n["branch"] == 1]
    assert {n["human_action"] for n in branch} == {"replay"}
    assert sorted(n["source"] for n in branch) == ["fork", "loop", "loop"]  # recommend, propose_fix
    assert [before_recommend, branch[-1]["checkpoint_id"]] in tree["edges"]
    last = paused_engine.records.audit(inc)[-1]
    assert last["action"] == "replay" and last["before"]["status"] == "fix_proposed"
    assert last["after"]["status"] == "awaiting_approval"

    # a new approval on the replayed branch is a new, separately recorded attempt
    service.approve(inc, reviewer="bob", expect_interrupt=row["pending_interrupt_id"])
    fixes = paused_engine.records.fixes(inc)
    assert [f["attempt"] for f in fixes] == [1, 2]
    assert fixes[0]["idempotency_key"] != fixes[1]["idempotency_key"]


def test_fork_runs_the_edited_branch_to_the_gate_and_answers_go_to_the_new_branch(paused_engine, capsys):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    original = pending(paused_engine, inc)
    analysed = paused_engine.records.incident(inc)["severity"]
    assert analysed != "high"
    at_recommend = _at(service.history(inc), ["recommend"])["checkpoint_id"]

    code, _, err = cli(capsys, "fork", inc, "--checkpoint", at_recommend, "--reviewer", "ann",
                       "--set", 'severity="high"')
    assert code == 0, err
    doc = service.incident(inc)
    assert doc["status"] == "awaiting_approval" and doc["pending"]["interrupt_id"] != original
    assert doc["severity"] == "high" and doc["recommendation"]["risk"] == "high"  # recommend ran again
    assert paused_engine.records.fixes(inc) == []

    tree = service.tree(inc)
    assert tree["branches"] == 2
    forked = next(n for n in tree["nodes"] if n["source"] == "update")
    assert forked["parent_checkpoint_id"] == at_recommend and forked["human_action"] == "fork"
    assert {"field": "severity", "before": analysed, "after": "high"} in \
        service.checkpoint(inc, forked["checkpoint_id"])["changes"]  # read for the one selected
    abandoned = next(n for n in tree["nodes"] if n["interrupt_id"] == original)
    assert abandoned["is_paused"] and not abandoned["is_pending"] and not abandoned["on_current_branch"]
    entry = paused_engine.records.audit(inc)[-1]
    assert entry["action"] == "fork" and entry["before"]["severity"] == analysed and entry["after"]["severity"] == "high"

    # the original pause can no longer be answered; the fork's can
    assert cli(capsys, "approve", inc, "--reviewer", "bob", "--expect-interrupt", original)[0] == 3
    assert paused_engine.records.fixes(inc) == []
    assert cli(capsys, "approve", inc, "--reviewer", "bob", "--expect-interrupt", doc["pending"]["interrupt_id"])[0] == 0
    assert paused_engine.records.incident(inc)["status"] == "fix_proposed"
    assert len(paused_engine.records.fixes(inc)) == 1


def test_replay_past_the_gate_is_refused_and_writes_nothing(paused_engine, capsys):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    service.approve(inc, reviewer="ann")
    history = service.history(inc)
    before_fix = _at(history, ["code_fix"])
    plan = service.rerun_plan(inc, before_fix["checkpoint_id"])
    assert plan["includes_code_fix"] and not plan["allowed"]
    assert _at(history, ["approval"])["checkpoint_id"] == plan["suggested_checkpoint"]
    count = checkpoint_count(paused_engine, inc)
    code, _, err = cli(capsys, "replay", inc, "--checkpoint", before_fix["checkpoint_id"], "--reviewer", "bob")
    assert code == 2 and "code_fix" in err
    assert checkpoint_count(paused_engine, inc) == count
    assert paused_engine.records.incident(inc)["status"] == "fix_proposed"
    assert len(paused_engine.records.fixes(inc)) == 1


def test_fork_with_an_invalid_edit_writes_nothing(paused_engine, capsys):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    at_recommend = _at(service.history(inc), ["recommend"])["checkpoint_id"]
    count = checkpoint_count(paused_engine, inc)
    code, _, err = cli(capsys, "fork", inc, "--checkpoint", at_recommend, "--reviewer", "ann",
                       "--set", "rca.confidence=2")
    assert code == 2 and "rca.confidence" in err
    assert checkpoint_count(paused_engine, inc) == count
    assert paused_engine.records.audit(inc) == []


def test_replay_of_unknown_checkpoint_exits_4(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    code, _, err = cli(capsys, "replay", inc, "--checkpoint", "nope", "--reviewer", "ann")
    assert code == 4 and "nope" in err


def test_replay_of_an_incident_in_use_exits_3(paused_engine, capsys):
    from pipeline.store.owners import process_owner

    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    at_recommend = _at(service.history(inc), ["recommend"])["checkpoint_id"]
    owner = process_owner()
    assert paused_engine.records.claim(inc, owner)
    count = checkpoint_count(paused_engine, inc)
    code, _, err = cli(capsys, "replay", inc, "--checkpoint", at_recommend, "--reviewer", "ann")
    assert code == 3 and "in use" in err
    assert checkpoint_count(paused_engine, inc) == count
    paused_engine.records.release(inc, owner)
