"""What the humans decided on an incident, from its record and audit entries (read only)."""
from __future__ import annotations

# the human outcomes a backtest is compared with
OUTCOMES = ("approved_as_analysed", "approved_after_edits", "revised", "rejected", "expired", "pending", "failed")
OUTCOME_WORDS = {
    "approved_as_analysed": "approved as analysed",
    "approved_after_edits": "approved after edits to the analysis",
    "revised": "approved after a request for changes",
    "rejected": "rejected",
    "expired": "expired undecided",
    "pending": "not decided yet",
    "failed": "the run failed",
}
_ANALYSIS = ("rca.", "severity")
_DECISION_AUDITS = ("approve", "approve_partial", "edit", "reject", "revise", "expire")


def analysis_edits(audit_rows: list[dict]) -> dict:
    """field → {from, to, by, at} of every reviewer change to the analysis (rca.*, severity), the
    first value before and the last after."""
    edits: dict[str, dict] = {}
    for row in audit_rows:
        if row["action"] not in ("approve", "edit"):
            continue
        before, after = row.get("before") or {}, row.get("after") or {}
        for name, value in after.items():
            if not name.startswith(_ANALYSIS) or before.get(name) == value:
                continue
            first = edits.get(name, {}).get("from", before.get(name))
            edits[name] = {"from": first, "to": value, "by": row["reviewer"], "at": row["at"]}
    return {k: v for k, v in edits.items() if v["from"] != v["to"]}


def human_outcome(row: dict, audit_rows: list[dict]) -> dict:
    """outcome (OUTCOMES), the decision (action, reviewer, note, when, proposal hash), the edits
    of the analysis, the requests for changes, and the category the humans ended with."""
    summary = row.get("summary") or {}
    decision = summary.get("decision") or {}
    requests = list(summary.get("requests") or [])
    edits = analysis_edits(audit_rows)
    status = row["status"]
    if status in ("approved", "fix_proposed"):
        outcome = "revised" if requests else "approved_after_edits" if edits else "approved_as_analysed"
    elif status in ("rejected", "expired", "failed"):
        outcome = status
    else:
        outcome = "pending"
    decided = [r for r in audit_rows if r["action"] in _DECISION_AUDITS]
    return {
        "outcome": outcome,
        "decision": {"action": decision.get("action"), "reviewer": decision.get("reviewer"),
                     "note": decision.get("note"), "at": decision.get("decided_at"),
                     "proposal_hash": decision.get("proposal_hash"), "requests": requests,
                     "reviewers": sorted({r["reviewer"] for r in decided})} if decision or requests else {},
        "edits": edits,
        # the label the humans stand behind: what they approved (a rejection names none)
        "category": row.get("category") if outcome.startswith("approved") or outcome == "revised" else None,
    }
