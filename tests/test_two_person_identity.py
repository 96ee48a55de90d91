"""One person cannot satisfy the two-person rule, by spelling their name
another way, by an edit at approval time that lowers the rule, or by one CLI operator acting
`--as` two people; typed (demo) names are stated as unverified in the document, the CLI and the audit."""
from __future__ import annotations

import json

import pytest

from pipeline.errors import SameApprover
from pipeline.review.service import ReviewService
from tests.support import by_category, cli, pending

RULE = ("critical", "changes_files")


@pytest.fixture
def service(paused_engine, monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_TWO_PERSON", ",".join(RULE))  # for the CLI's own engine too
    paused_engine.settings = paused_engine.settings.model_copy(update={"two_person": RULE})
    return ReviewService(paused_engine)


def _critical(service) -> str:
    inc = by_category(service.engine, "db_pool_exhausted")
    assert service.records.incident(inc)["severity"] == "critical" and service.approvals_needed(inc) == 2
    return inc


@pytest.mark.parametrize("first,second", [("ann", "ANN"), ("bob", "bob\u200b"), ("ann", "\uff41\uff4e\uff4e"),
                                          ("eve", "\u2060Eve\u3164")])
def test_one_person_spelt_two_ways_is_one_approver(service, first, second):
    inc = _critical(service)
    service.approve(inc, reviewer=first)
    with pytest.raises(SameApprover):
        service.approve(inc, reviewer=second)
    row = service.records.incident(inc)
    assert row["status"] == "awaiting_approval" and len(service.document(inc)["approvals"]) == 1


def test_an_edit_at_approval_time_never_lowers_the_rule(service):
    inc = _critical(service)
    doc = service.approve(inc, reviewer="ann", edits={"severity": "medium"})
    assert doc["status"] == "awaiting_approval", doc["status"]  # the gate stays shut: one approval of two
    assert service.records.incident(inc)["severity"] == "medium"
    assert service.document(inc)["approvals_needed"] == 2
    with pytest.raises(SameApprover):
        service.approve(inc, reviewer="ann")
    assert service.approve(inc, reviewer="bob")["status"] in ("fix_proposed", "approved")


def test_a_later_edit_does_not_lower_the_rule_of_a_first_approval(service):
    inc = _critical(service)
    service.approve(inc, reviewer="ann")
    service.edit(inc, reviewer="ann", edits={"severity": "low"})
    assert service.approvals_needed(inc) == 2
    assert service.approve(inc, reviewer="ann")["status"] == "awaiting_approval"  # the new analysis's first
    assert service.approve(inc, reviewer="bob")["status"] in ("fix_proposed", "approved")


def test_one_operator_acting_as_two_people_is_refused_and_audited(service, capsys):
    inc = _critical(service)
    gate = pending(service.engine, inc)
    code, _, err = cli(capsys, "approve", inc, "--as", "ann")
    assert code == 3 and "--as" in err and err.count("\n") == 1, err
    row = service.records.incident(inc)
    assert row["status"] == "awaiting_approval" and row["pending_interrupt_id"] == gate
    assert service.document(inc)["approvals"] == []
    assert [a["action"] for a in service.audit(inc)] == ["refused:approve"]
    # the operator's own approval counts: once, as themselves
    code, out, err = cli(capsys, "approve", inc)
    assert code == 0, err
    assert service.records.incident(inc)["status"] == "awaiting_approval"


def test_typed_names_are_stated_as_unverified_in_the_document_the_cli_and_the_audit(service, capsys):
    inc = _critical(service)
    service.approve(inc, reviewer="ann")
    doc = service.document(inc)
    assert "not verified" in doc["approvals_limit"]
    code, out, _ = cli(capsys, "show", inc)
    assert code == 0 and "names are typed, not verified" in out
    (partial,) = [a for a in service.audit(inc) if a["action"] == "approve_partial"]
    assert "not verified" in json.dumps(partial["after"])
    service.approve(inc, reviewer="bob")
    (final,) = [a for a in service.audit(inc) if a["action"] == "approve"]
    assert "not verified" in json.dumps(final["after"])
