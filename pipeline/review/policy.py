"""The two-person rule: how many distinct reviewers must approve an incident before its gate opens.

One function decides it, for the documents, the inbox and the decision itself, from the incident's
record (no checkpoint is opened): two approvals when a configured rule (INCIDENTIQ_TWO_PERSON)
matches, else one. Maker-checker is the norm where a fix touches production.

`changes_files` means the fix proposal would change files. Until the proposal is computed before
the gate, it is read from what makes one: the RCA is eligible for code_fix (a known category,
confident enough, supported, severity not low, not an operational cause such as a host name that
does not resolve or a full volume, whose answer is a runbook) and the matched doc carries fix hints
(a diff or a set_property change); a record that already holds a proposal answers by its diff.

The rule is decided on the analysis as the analyst made it: before a person replaces an analysis
(an edit, Edit & approve, a fork, a replay, a request for changes), the approvals it needed are
kept as the record's `approvals_floor`, and no analysis that follows needs fewer. Lowering the
severity from critical to high and then approving alone is one person approving twice.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from pipeline.analyst.operational import operational_kind
from pipeline.config import Settings

TWO = 2


def approvals_needed(incident: dict[str, Any], settings: Settings, *, doc_hints: Callable[[str], Sequence[dict[str, Any]]]) -> int:
    """1 or 2: the approvals an incident (its record) needs before the gate opens.

    `doc_hints(doc_id)` returns the fix hints of a knowledge-base doc (empty when unknown)."""
    return max(int(incident.get("approvals_floor") or 1), rule_needs(incident, settings, doc_hints=doc_hints))


def rule_needs(incident: dict[str, Any], settings: Settings, *, doc_hints: Callable[[str], Sequence[dict[str, Any]]]) -> int:
    """1 or 2: what the configured rules ask of this analysis alone (no floor kept from an earlier one)."""
    rules = settings.two_person
    if not rules:
        return 1
    severity = incident.get("severity")
    if "critical" in rules and severity == "critical":
        return TWO
    if "high" in rules and severity in ("high", "critical"):
        return TWO
    if "changes_files" in rules and proposal_changes_files(incident, settings, doc_hints=doc_hints):
        return TWO
    return 1


def proposal_changes_files(incident: dict[str, Any], settings: Settings, *, doc_hints: Callable[[str], Sequence[dict[str, Any]]]) -> bool:
    """Whether approving would lead to a fix proposal that changes files."""
    summary = incident.get("summary") or {}
    proposal = summary.get("fix_proposal") or summary.get("proposal")
    if isinstance(proposal, dict):  # computed before the gate: its diff says it
        return bool(proposal.get("diff"))
    rca = summary.get("rca") or {}
    # the same conditions as the gate's (engine/nodes.py fix_eligible) that a record can answer:
    # an unsupported analysis or an operational cause (a runbook, no code change) proposes no fix
    eligible = (rca.get("category") not in (None, "unknown") and rca.get("supported", True) is not False
                and float(rca.get("confidence") or 0.0) >= settings.code_fix_min_confidence
                and incident.get("severity") != "low"
                and operational_kind(rca.get("category"), "\n".join(map(str, rca.get("evidence") or []))) is None)
    if not eligible:
        return False
    doc_ids = rca.get("doc_ids") or []
    return bool(doc_ids and doc_hints(doc_ids[0]))
