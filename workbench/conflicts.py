"""Saying what changed when a decision meets a newer state than the page showed."""
from __future__ import annotations

from workbench.provenance import status_words

# what a person did, in words (the audit's action codes are for the records)
ACTION_WORDS = {"approve": "approved", "reject": "rejected", "revise": "asked for changes",
                "edit_approve": "edited and approved", "edit": "edited the analysis", "fork": "forked a run",
                "replay": "replayed a run", "assign": "assigned it", "unassign": "unassigned it", "comment": "commented",
                "approve_partial": "gave the first of two approvals", "expire": "expired it"}


def action_words(action: str | None) -> str:
    return ACTION_WORDS.get(action or "", (action or "acted").replace("_", " "))


def shown_marker(doc: dict) -> dict:
    """What the page showed the reviewer, kept to explain a later conflict."""
    pending = doc.get("pending") or {}
    return {"interrupt_id": pending.get("interrupt_id"), "status": doc.get("status"),
            "event_count": doc.get("event_count"), "revisions": doc.get("revisions"),
            "updated_at": doc.get("updated_at"),
            "proposal_hash": (doc.get("proposal") or {}).get("hash") or ""}


def what_changed(shown: dict, now: dict, audit: list[dict]) -> str:
    """One sentence on why the incident is no longer the one the reviewer decided on."""
    later = [a for a in audit if shown.get("updated_at") is None or str(a.get("at")) > str(shown["updated_at"])]
    decision = now.get("decision")
    if now.get("status") != "awaiting_approval":
        if decision and decision.get("reviewer"):
            return (f"{decision['reviewer']} already decided ({action_words(decision.get('action'))}); "
                    f"the incident is now {status_words(now.get('status') or '', now.get('fix') or now.get('proposal'))}.")
        return f"the incident is no longer awaiting approval; it is now {status_words(now.get('status') or '', now.get('fix') or now.get('proposal'))}."
    new_events = (now.get("event_count") or 0) - (shown.get("event_count") or 0)
    if new_events > 0:
        return (f"new evidence ({new_events} more event{'s' if new_events != 1 else ''}) re-ran the analysis; "
                "review the new analysis below.")
    now_hash = (now.get("proposal") or {}).get("hash") or ""
    if "proposal_hash" in shown and now_hash != shown["proposal_hash"]:
        # the hash is the proposal's name beside Approve (not an internal id): it says which one
        return (f"the fix proposal changed since you saw it ({shown['proposal_hash'][:12] or 'none'} → "
                f"{now_hash[:12] or 'none'}); review the new proposal below.")
    if (now.get("revisions") or 0) > (shown.get("revisions") or 0):
        return "a revision was requested and the recommendation was redone; review it below."
    if later:
        last = later[-1]
        return (f"{last.get('reviewer')} acted on it ({action_words(last.get('action'))}) since you opened it; "
                "review it again below.")
    return "the analysis was re-run since you opened it; review the new analysis below."
