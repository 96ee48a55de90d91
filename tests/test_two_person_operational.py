"""The two-person rule's `changes_files` asks what the gate asks: an analysis whose cause is
operational (a host name that does not resolve, a full volume, a container killed at its memory
limit: a runbook, no code change) or that no doc supports proposes no fix, so it needs one approval
however many fix hints its doc carries. Before, the rule read only category, confidence and
severity, and a high-severity DNS or full-disk incident showed "Two approvals needed" beside
"No code fix is eligible".
"""
from __future__ import annotations

from typing import Any

import pytest

from pipeline.config import Settings
from pipeline.review.policy import approvals_needed, proposal_changes_files

SETTINGS = Settings(two_person=("critical", "changes_files"))
HINTS = [{"diff": "--- a/app.py\n+++ b/app.py\n"}]


def _record(category: str, *, evidence: list[str] | None = None, supported: bool = True,
            severity: str = "high") -> dict[str, Any]:
    rca = {"category": category, "confidence": 0.9, "doc_ids": ["some-doc"], "supported": supported,
           "evidence": evidence or ["an error"]}
    return {"severity": severity, "approvals_floor": 1, "summary": {"rca": rca, "proposal": None}}


def _needed(record: dict[str, Any]) -> int:
    return approvals_needed(record, SETTINGS, doc_hints=lambda _doc: HINTS)


@pytest.mark.parametrize("category,evidence", [
    ("dns_resolution", ['could not translate host name "db.svc" to address: Temporary failure in name resolution']),
    ("disk_full", ["OSError: [Errno 28] No space left on device"]),
    ("tls_certificate", ["certificate verify failed: certificate has expired"]),
    ("out_of_memory", ["container receipts-worker OOMKilled (exit code 137)"]),
    ("db_pool_exhausted", ["connection refused: blocked by network policy deny-egress"]),
])
def test_an_operational_cause_needs_one_approval_whatever_its_doc_hints(category, evidence):
    record = _record(category, evidence=evidence)
    assert not proposal_changes_files(record, SETTINGS, doc_hints=lambda _doc: HINTS)
    assert _needed(record) == 1


def test_an_analysis_no_doc_supports_needs_one_approval():
    assert _needed(_record("db_pool_exhausted", supported=False)) == 1


@pytest.mark.parametrize("category,evidence", [
    ("db_pool_exhausted", ["QueuePool limit of size 5 overflow 10 reached"]),
    ("out_of_memory", ["java.lang.OutOfMemoryError: Java heap space"]),  # a heap that grows in code
])
def test_a_code_cause_whose_doc_changes_files_still_needs_two(category, evidence):
    assert _needed(_record(category, evidence=evidence)) == 2


def test_critical_and_a_kept_floor_still_need_two():
    assert _needed(_record("dns_resolution", severity="critical")) == 2
    assert _needed({**_record("dns_resolution"), "approvals_floor": 2}) == 2
