"""Who changed the analysis a reviewer is looking at, and what a status means in words.

Read from the audit trail (every human action, oldest first): the page marks fields a person
edited and says who decided what, so an approval of an edited RCA is never mistaken for the
analyst's own answer.
"""
from __future__ import annotations

from workbench.audit_words import STATUS_WORDS, field_words, setting_words, status_words  # noqa: F401  (re-exported)

EDITING_ACTIONS = {"edit": "edited", "approve": "edited and approved", "fork": "forked the run"}
_NOT_FIELDS = {"status", "change_id", "edited", "reran", "approvals", "proposal_hash", "approvals_needed"}


def _edited(row: dict) -> list[str]:
    after = row.get("after") or {}
    if row["action"] == "approve" or (row["action"] in EDITING_ACTIONS and "edited" in after):
        # what the person set; fields re-derived from it (a re-run recommendation) are not theirs
        return list(after.get("edited") or [])  # an approval without edits changed no field
    if row["action"] in ("edit", "fork"):
        return [f for f in after if f not in _NOT_FIELDS and not f.startswith(("proposal", "events", "trace"))]
    return []


def edits(audit: list[dict]) -> list[dict]:
    """Each human edit of the analysis: who, when, how (edited, edited and approved, forked) and which fields."""
    out = []
    for row in audit:
        fields = _edited(row)
        if fields:
            out.append({"by": row["reviewer"], "at": str(row.get("at") or "")[:19].replace("T", " "),
                        "how": EDITING_ACTIONS[row["action"]], "fields": fields,
                        "values": {f: (row.get("after") or {})[f] for f in fields if f in (row.get("after") or {})}})
    return out


def edited_by(audit: list[dict]) -> dict[str, str]:
    """Field → the person who edited it last (for the human-edited marks)."""
    marks: dict[str, str] = {}
    for edit in edits(audit):
        for field in edit["fields"]:
            marks[field] = edit["by"]
    return marks


def decision_lines(doc: dict, audit: list[dict]) -> list[str]:
    """The decision in sentences: who decided what, why (a rejection's reason, an approval's note),
    which proposal an approval approved, and every edit of the analysis before it."""
    lines = []
    decision = doc.get("decision") or {}
    if decision:
        action = {"approve": "Approved", "reject": "Rejected", "revise": "Changes requested",
                  "expire": "Expired"}.get(decision.get("action"), str(decision.get("action")))
        people = [a.get("by") for a in decision.get("approvals") or []] or [decision.get("reviewer")]
        line = f"{action} by {' and '.join(str(p) for p in people)}"
        if decision.get("decided_at"):
            line += f" at {str(decision['decided_at'])[:19].replace('T', ' ')} UTC"
        lines.append(line + ".")
        if decision.get("note"):
            lines.append(("Reason: " if decision.get("action") == "reject" else "Note: ") + str(decision["note"]))
        if decision.get("proposal_hash"):
            lines.append(f"Approved fix proposal {decision['proposal_hash'][:12]} (recorded, not applied).")
        elif decision.get("action") == "approve":
            lines.append("No code fix was eligible: the approval records the analysis only.")
    for edit in edits(audit):
        if edit["how"] == EDITING_ACTIONS["fork"]:  # "carol forked the run, setting the category to upstream timeout"
            set_to = setting_words(edit["values"]) if edit["values"] else ", ".join(field_words(f) for f in edit["fields"])
            lines.append(f"{edit['by']} forked the run, setting {set_to}, at {edit['at']} UTC.")
            continue
        lines.append(f"{edit['by']} {edit['how']} {', '.join(field_words(f) for f in edit['fields'])} at {edit['at']} UTC.")
    return lines


def hand_set_confidence_words(found: dict, who: str) -> str:
    """What the confidence is when a person set the category: capped, when no event of the incident
    shows their category (a walkthrough read "the analyst's confidence in its own answer" on a fork's
    30% cap); the analyst's confidence in their category when it scored it (edits.category_set);
    otherwise the analyst's in its own answer."""
    pct = f"{found['confidence']:.0%}"
    if found.get("supported") is False:
        return (f"{who} set the category by hand and no event of this incident shows it: "
                f"the confidence is capped at {pct}.")
    if any(f"as set by reviewer {who}" in str(note) for note in found.get("notes") or []):
        return f"{who} set the category by hand: the {pct} is the analyst's confidence in it from the events."
    return (f"{who} set the category by hand: the {pct} is the analyst's confidence in its own answer, "
            "not in this category.")
