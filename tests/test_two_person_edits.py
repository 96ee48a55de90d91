"""Two-person approval is decided on the analysis as the analyst made it: whichever way a person
lowers a critical analysis (the CLI's `edit`, the State tab's edit, Edit & approve, a fork with an
edited severity, a request for changes the re-analysis answers with a lower severity, a replay
from before the evidence that made it critical), their own approval alone never opens the gate;
a second person's does. On both stores: the kept rule is a column of the incident's record."""
from __future__ import annotations


import pytest

from pipeline.errors import SameApprover
from pipeline.review.service import ReviewService
from tests.support import BOTH_BACKENDS, by_category, cli, pending, write_jsonl

pytestmark = BOTH_BACKENDS

RULE = ("critical",)  # severity alone decides: a lowered severity is what would let one person through


@pytest.fixture
def service(paused_engine, monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_TWO_PERSON", ",".join(RULE))  # for the CLI's own engine too
    paused_engine.settings = paused_engine.settings.model_copy(update={"two_person": RULE})
    return ReviewService(paused_engine)


def _at_recommend(service, inc) -> str:
    """The oldest checkpoint on the current branch about to run recommend: the analyst's own RCA."""
    return [h for h in service.history(inc) if h["next"] == ["recommend"] and h["on_current_branch"]][-1]["checkpoint_id"]


def _cli_edit(service, inc, capsys) -> None:
    # the operator at the terminal, as themselves: `--as` someone else is refused for two-person approvals
    code, _, err = cli(capsys, "edit", inc, "--set", 'severity="high"')
    assert code == 0, err


def _state_tab_edit(service, inc, capsys) -> None:
    service.edit(inc, reviewer="ann", edits={"severity": "high"})


def _edit_and_approve(service, inc, capsys) -> None:
    service.approve(inc, reviewer="ann", edits={"severity": "high"})


def _fork(service, inc, capsys) -> None:
    service.fork(inc, checkpoint_id=_at_recommend(service, inc), reviewer="ann", edits={"severity": "high"})


def _revision(service, inc, capsys) -> None:
    # the reviewer's words steer the re-analysis to a cause whose doc is not critical
    service.revise(inc, reviewer="ann", feedback="I think this is serialization_error, not the pool")


def _approve_in_the_cli(service, inc, capsys) -> int:
    return cli(capsys, "approve", inc)[0]


def _approve_in_the_service(service, inc, capsys) -> int:
    try:
        service.approve(inc, reviewer="ann")
    except SameApprover:
        return 3
    return 0


@pytest.mark.parametrize("lower,approve", [(_cli_edit, _approve_in_the_cli), (_state_tab_edit, _approve_in_the_service),
                                           (_edit_and_approve, _approve_in_the_service),
                                           (_fork, _approve_in_the_service), (_revision, _approve_in_the_service)])
def test_a_person_who_lowered_the_severity_cannot_approve_alone(service, capsys, lower, approve):
    inc = by_category(service.engine, "db_pool_exhausted")
    assert service.records.incident(inc)["severity"] == "critical" and service.approvals_needed(inc) == 2

    lower(service, inc, capsys)
    row = service.records.incident(inc)
    assert row["status"] == "awaiting_approval" and row["severity"] != "critical", row["severity"]
    # every place the count is read says two: the record's rule, `show`, the inbox
    assert service.approvals_needed(inc) == 2 and service.document(inc)["approvals_needed"] == 2
    listed = next(r for r in service.inbox_page(status="awaiting_approval")["rows"] if r["incident_id"] == inc)
    assert listed["approvals_needed"] == 2

    if lower is not _edit_and_approve:  # that one already was the person's approval
        assert approve(service, inc, capsys) == 0
    assert service.records.incident(inc)["status"] == "awaiting_approval"  # the gate stays shut
    assert len(service.document(inc)["approvals"]) == 1
    assert approve(service, inc, capsys) == 3  # the same person again: refused
    done = service.approve(inc, reviewer="bob", expect_interrupt=pending(service.engine, inc))
    assert done["status"] in ("fix_proposed", "approved")
    assert [a["action"] for a in service.audit(inc)][-2:] == ["refused:approve", "approve"]


def test_an_analysis_that_never_needed_two_is_not_raised_by_an_edit(service):
    inc = next(r["incident_id"] for r in service.records.incidents() if r["severity"] != "critical")
    assert service.approvals_needed(inc) == 1
    service.edit(inc, reviewer="ann", edits={"severity": "low"})
    assert service.approvals_needed(inc) == 1
    assert service.approve(inc, reviewer="ann")["status"] in ("fix_proposed", "approved")


def test_a_replay_from_before_the_evidence_that_made_it_critical_still_needs_two(service, tmp_path):
    from pipeline.engine.runner import run_pending
    from pipeline.unattended.file_ingest import ingest_path

    inc = next(r["incident_id"] for r in service.records.incidents() if r["service"] == "inventory-service")
    assert service.records.incident(inc)["severity"] == "high" and service.approvals_needed(inc) == 1
    first_gate = service.records.incident(inc)["pending_checkpoint_id"]
    # a burst of the same error (20 events within 10 minutes): the analyst raises it to critical
    event = service.records.events_of(inc)[0]
    burst = [{"_time": f"2026-11-28T10:{2 + n // 6:02d}:{n % 6 * 10:02d}Z", "service": event.service,
              "host": event.host, "level": "ERROR", "message": event.message, "exception": event.exception,
              "stack": event.stack} for n in range(22)]
    ingest_path(service.engine, write_jsonl(tmp_path / "burst.jsonl", burst))
    run_pending(service.engine)
    assert service.records.incident(inc)["severity"] == "critical" and service.approvals_needed(inc) == 2

    # a person replays from the gate of the analysis before the burst: it says high again
    service.replay(inc, checkpoint_id=first_gate, reviewer="ann")
    assert service.records.incident(inc)["severity"] == "high"
    assert service.approvals_needed(inc) == 2
    assert service.approve(inc, reviewer="ann")["status"] == "awaiting_approval"
    assert service.approve(inc, reviewer="bob")["status"] in ("fix_proposed", "approved")
