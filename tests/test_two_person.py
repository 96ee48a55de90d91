"""The two-person rule: a first approval is partial (the run stays paused on the same interrupt), a
second by another person opens the gate with both; the same person twice is refused and audited;
new evidence voids a partial approval; two processes approving at once count as first and second."""
from __future__ import annotations

import subprocess
import sys

import pytest

from pipeline.errors import SameApprover
from pipeline.review.identity import new_token
from pipeline.review.service import ReviewService
from tests.support import BOTH_BACKENDS, ROOT, by_category, child_env, pending, state_of, write_jsonl

# durability and concurrency hold on either store
pytestmark = BOTH_BACKENDS

RULE = ("critical", "changes_files")


@pytest.fixture
def service(paused_engine):
    paused_engine.settings = paused_engine.settings.model_copy(update={"two_person": RULE})
    return ReviewService(paused_engine)


def _pool(service) -> str:
    inc = by_category(service.engine, "db_pool_exhausted")
    assert service.approvals_needed(inc) == 2  # eligible for a fix whose doc changes files
    return inc


def test_the_first_approval_is_partial_and_the_second_person_opens_the_gate(service):
    inc = _pool(service)
    gate = pending(service.engine, inc)
    doc = service.approve(inc, reviewer="ann", expect_interrupt=gate)
    assert doc["status"] == "awaiting_approval" and doc["pending"]["interrupt_id"] == gate
    assert [a["by"] for a in doc["approvals"]] == ["ann"] and doc["approvals_needed"] == 2
    assert state_of(service.engine, inc).decision is None  # the graph was not resumed
    row = next(r for r in service.inbox(status="awaiting_approval") if r["incident_id"] == inc)
    assert [a["by"] for a in row["approvals"]] == ["ann"] and row["approvals_needed"] == 2

    done = service.approve(inc, reviewer="bob", expect_interrupt=gate)
    assert done["status"] == "fix_proposed"
    decision = state_of(service.engine, inc).decision
    assert decision.reviewer == "bob" and [a["by"] for a in decision.approvals] == ["ann", "bob"]
    actions = [(a["action"], a["reviewer"]) for a in service.audit(inc)]
    assert actions == [("approve_partial", "ann"), ("approve", "bob")]
    assert len(service.records.fixes(inc)) == 1


def test_the_same_person_twice_is_refused_audited_and_changes_nothing(service):
    inc = _pool(service)
    gate = pending(service.engine, inc)
    service.approve(inc, reviewer="ann", expect_interrupt=gate)
    with pytest.raises(SameApprover, match="ann already approved"):
        service.approve(inc, reviewer="ann", expect_interrupt=gate)
    row = service.records.incident(inc)
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] == gate
    assert [a["action"] for a in service.audit(inc)] == ["approve_partial", "refused:approve"]
    assert [a["by"] for a in service.document(inc)["approvals"]] == ["ann"]


def test_new_evidence_between_the_approvals_voids_the_first(service, tmp_path):
    from pipeline.engine.runner import run_pending
    from pipeline.unattended.file_ingest import ingest_path

    inc = _pool(service)
    gate = pending(service.engine, inc)
    service.approve(inc, reviewer="ann", expect_interrupt=gate)
    # one more event of the same incident (same service, exception and template)
    event = next(e for e in service.records.events_of(inc))
    more = {"_time": "2026-11-28T11:59:00Z", "service": event.service, "host": event.host, "level": "ERROR",
            "message": event.message, "exception": event.exception}
    ingest_path(service.engine, write_jsonl(tmp_path / "more.jsonl", [more]))
    run_pending(service.engine)
    new_gate = pending(service.engine, inc)
    assert new_gate != gate
    assert service.document(inc)["approvals"] == []  # ann approved the old analysis, not this one
    doc = service.approve(inc, reviewer="bob", expect_interrupt=new_gate)
    assert doc["status"] == "awaiting_approval" and [a["by"] for a in doc["approvals"]] == ["bob"]


def _approve_in_two_processes(data_dir, inc, gate, people) -> list[subprocess.CompletedProcess]:
    # each person with their own API token: a two-person approval is never an operator's --as (issue 25)
    tokens = {who: new_token() for who in set(people)}
    tokens_file = data_dir.parent / "tokens.toml"
    tokens_file.write_text("".join(f'[[tokens]]\nname = "{who}"\nuser = "{who}"\nrole = "reviewer"\n'
                                   f'sha256 = "{digest}"\n' for who, (_, digest) in tokens.items()))
    env = {**child_env(data_dir), "INCIDENTIQ_TWO_PERSON": ",".join(RULE),
           "INCIDENTIQ_REPO_DIR": str(ROOT / "samples" / "pos-backend"), "INCIDENTIQ_TOKENS_FILE": str(tokens_file)}
    procs = [subprocess.Popen([sys.executable, "-m", "pipeline", "approve", inc, "--token", tokens[who][0],
                               "--expect-interrupt", gate], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for who in people]
    return [subprocess.CompletedProcess(p.args, p.wait(timeout=240), *p.communicate()) for p in procs]


def test_two_people_approving_at_once_in_two_processes_are_first_and_second(service, data_dir):
    inc = _pool(service)
    gate = pending(service.engine, inc)
    results = _approve_in_two_processes(data_dir, inc, gate, ["ann", "bob"])
    assert [r.returncode for r in results] == [0, 0], [r.stderr for r in results]
    assert service.records.incident(inc)["status"] == "fix_proposed"
    assert sorted(a["by"] for a in state_of(service.engine, inc).decision.approvals) == ["ann", "bob"]
    actions = sorted(a["action"] for a in service.audit(inc))
    assert actions == ["approve", "approve_partial"] and len(service.records.fixes(inc)) == 1


def test_one_person_approving_twice_at_once_gets_one_partial_and_one_refusal(service, data_dir):
    inc = _pool(service)
    gate = pending(service.engine, inc)
    results = _approve_in_two_processes(data_dir, inc, gate, ["ann", "ann"])
    assert sorted(r.returncode for r in results) == [0, 3], [r.stderr for r in results]
    refused = next(r for r in results if r.returncode == 3)
    assert refused.stderr.count("\n") == 1 and "ann already approved" in refused.stderr
    row = service.records.incident(inc)
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] == gate
    assert sorted(a["action"] for a in service.audit(inc)) == ["approve_partial", "refused:approve"]
