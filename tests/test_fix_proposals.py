"""The fix proposal is computed before the gate, shown, approved by its hash and recorded as shown;
its plan and its diff never contradict each other (the rules below, checked over every demo incident
and every eval case in tests/test_consistency.py, on the same runs as the root cause's)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.analyst.fixes import sha256_of
from pipeline.review.service import ReviewService
from pipeline.state import IncidentState
from tests.support import by_category, cli, pending, state_of



def proposal_problems(state: IncidentState) -> list[str]:
    """The consistency rules of a fix proposal; empty when it keeps them all.

    1. A diff, a target file and a described change come together or not at all.
    2. With a diff, the plan's first step states that change: its file, and for a property its key
       and both values, which are the diff's removed and added values.
    3. Without a diff, the first step says "No diff:", and no step claims a change or points at a
       file as if it were changed ("The diff", "Evidence points at").
    4. No step says the incident is fixed: a proposal fixes nothing.
    5. The hash is the sha256 of the canonical plan, diff and target file.
    """
    p = state.proposal
    if p is None:
        return []
    problems = []
    if (p.diff is None) != (p.target_file is None) or (p.diff is None) != (p.change is None):
        problems.append("diff, target_file and change disagree")
    if p.diff:
        first = p.plan[0]
        if not first.startswith("The diff") or p.target_file not in first:
            problems.append(f"first step does not state the diff's change: {first!r}")
        if p.change and p.change["kind"] == "set_property":
            removed = [line for line in p.diff.splitlines() if line.startswith("-") and not line.startswith("---")]
            added = [line for line in p.diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
            if f"from {p.change['before']} to {p.change['after']}" not in first or p.change["key"] not in first:
                problems.append(f"first step lacks the key or the numbers: {first!r}")
            if not (removed and p.change["before"] in removed[0] and added and p.change["after"] in added[0]):
                problems.append("the plan's numbers are not the diff's")
        if any(step.startswith("No diff") for step in p.plan):
            problems.append("a diff and a 'No diff' step")
    else:
        if not p.plan or not p.plan[0].startswith("No diff:"):
            problems.append("no diff, but the plan does not say so first")
        if any("The diff" in step or "Evidence points at" in step for step in p.plan):
            problems.append("no diff, but a step claims a change")
    if any(re.search(r"\bfixed\b", step, re.I) for step in p.plan):
        problems.append("a step says fixed")
    if p.hash != sha256_of(p.plan, p.diff, p.target_file):
        problems.append("hash is not the plan's and diff's")
    return problems


def test_the_proposal_is_in_the_gate_payload_and_the_document_before_approval(paused_engine):
    inc = by_category(paused_engine, "db_pool_exhausted")
    state = state_of(paused_engine, inc)
    snap = paused_engine.graph.get_state({"configurable": {"thread_id": inc}})
    payload = snap.interrupts[0].value
    assert payload["proposal"]["hash"] == state.proposal.hash and payload["proposal"]["diff"] == state.proposal.diff
    doc = ReviewService(paused_engine).incident(inc)
    assert doc["status"] == "awaiting_approval" and doc["fix"] is None
    assert doc["proposal"]["hash"] == state.proposal.hash and doc["proposal"]["diff"].startswith("--- a/")
    assert paused_engine.records.fixes(inc) == []  # computing a proposal records nothing


def test_approval_records_exactly_the_proposal_shown_and_names_its_hash(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    shown = state_of(paused_engine, inc).proposal
    code, out, err = cli(capsys, "show", inc)
    assert code == 0 and shown.hash in out and shown.plan[0] in out and "--- a/" in out
    code, _, err = cli(capsys, "approve", inc, "--reviewer", "ann", "--expect-proposal", shown.hash)
    assert code == 0, err
    recorded = paused_engine.records.fixes(inc)[0]["proposal"]
    assert (recorded["hash"], recorded["plan"], recorded["diff"]) == (shown.hash, shown.plan, shown.diff)
    after = state_of(paused_engine, inc)
    assert after.decision.proposal_hash == shown.hash and after.fix.hash == shown.hash
    entry = paused_engine.records.audit(inc)[-1]
    assert entry["action"] == "approve" and entry["after"]["proposal_hash"] == shown.hash
    assert paused_engine.records.incident(inc)["status"] == "fix_proposed"


def test_approve_expecting_another_proposal_exits_3_and_changes_nothing(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    before = pending(paused_engine, inc)
    code, _, err = cli(capsys, "approve", inc, "--reviewer", "ann", "--expect-proposal", "0" * 64)
    assert code == 3 and "fix proposal you reviewed" in err
    assert pending(paused_engine, inc) == before and paused_engine.records.fixes(inc) == []
    assert paused_engine.records.audit(inc) == []


def test_an_edit_derives_the_proposal_again_so_the_old_hash_is_refused(paused_engine, capsys):
    inc = by_category(paused_engine, "db_pool_exhausted")
    old = state_of(paused_engine, inc).proposal
    assert cli(capsys, "edit", inc, "--reviewer", "ann", "--set", "rca.confidence=0.3")[0] == 0
    state = state_of(paused_engine, inc)
    assert state.proposal is None  # below the code-fix threshold now: nothing to approve as a fix
    code, _, err = cli(capsys, "approve", inc, "--reviewer", "bob", "--expect-proposal", old.hash)
    assert code == 3
    doc = ReviewService(paused_engine).incident(inc)
    assert doc["fix_ineligible_reason"].startswith("no code fix: confidence 0.30")


@pytest.mark.parametrize("words", [("fixed",), ("the incident is now fixed",)])
def test_no_text_calls_a_recorded_proposal_fixed(paused_engine, capsys, words):
    inc = by_category(paused_engine, "null_reference")
    code, out, _ = cli(capsys, "approve", inc, "--reviewer", "ann")
    assert code == 0 and "fix_proposed" in out and "nothing was changed" in out
    code, shown, _ = cli(capsys, "show", inc)
    assert code == 0 and not any(w in shown.lower() for w in words)


def test_the_source_tree_listing_sees_files_added_removed_and_renamed(tmp_path):
    # repo_files keeps the tree's listing while no folder changed: every change to the tree must
    # show in the next proposal's listing, as a fresh os.walk would give it
    import os

    from pipeline.analyst.fixes import repo_files

    def walked(pattern="*"):
        return sorted(p for top, _, names in os.walk(tmp_path) for name in names
                      if (p := tmp_path.joinpath(os.path.relpath(top, tmp_path), name)).match(pattern))

    def age_folders():  # folders older than the racy window, so the listing is kept
        for top, _, _ in os.walk(tmp_path):
            os.utime(top, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))

    (tmp_path / "svc" / "src").mkdir(parents=True)
    (tmp_path / "svc" / "src" / "Cart.java").write_text("class Cart {}\n")
    (tmp_path / "svc" / "application.properties").write_text("pool.size=5\n")
    age_folders()
    assert repo_files(tmp_path) == walked() and len(walked()) == 2
    assert repo_files(tmp_path, "*.properties") == [tmp_path / "svc" / "application.properties"]

    (tmp_path / "svc" / "src" / "Order.java").write_text("class Order {}\n")  # added in a deep folder
    assert repo_files(tmp_path, "*.java") == walked("*.java") and len(walked("*.java")) == 2
    age_folders()
    repo_files(tmp_path)
    (tmp_path / "svc" / "src" / "Cart.java").rename(tmp_path / "svc" / "src" / "Basket.java")
    assert repo_files(tmp_path, "*.java") == walked("*.java")
    assert tmp_path / "svc" / "src" / "Cart.java" not in repo_files(tmp_path)
    age_folders()
    repo_files(tmp_path)
    (tmp_path / "svc" / "application.properties").unlink()
    (tmp_path / "other").mkdir()  # a new folder with a file
    (tmp_path / "other" / "application.properties").write_text("pool.size=9\n")
    assert repo_files(tmp_path, "*.properties") == [tmp_path / "other" / "application.properties"]
    assert repo_files(tmp_path) == walked()


def test_a_tree_named_absolute_then_relative_lists_paths_relative_to_either(tmp_path, monkeypatch):
    # the workbench names the sample tree absolutely (INCIDENTIQ_REPO_DIR), the engine's default
    # relatively: a proposal takes each listed path relative to the tree as it named it
    import os

    from pipeline.analyst.fixes import repo_files

    (tmp_path / "tree" / "svc").mkdir(parents=True)
    (tmp_path / "tree" / "svc" / "stock.py").write_text("x = 1\n")
    for top, _, _ in os.walk(tmp_path / "tree"):  # older than the racy window: the listing is kept
        os.utime(top, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    monkeypatch.chdir(tmp_path)
    absolute, relative = tmp_path / "tree", Path("tree")
    assert [p.relative_to(absolute).as_posix() for p in repo_files(absolute)] == ["svc/stock.py"]
    assert [p.relative_to(relative).as_posix() for p in repo_files(relative)] == ["svc/stock.py"]
    assert [p.relative_to(absolute).as_posix() for p in repo_files(absolute)] == ["svc/stock.py"]
