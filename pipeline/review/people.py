"""Who is on an incident and what people said: assignment ("on it: ann") and plain-text comments."""
from __future__ import annotations

from typing import Any

from pipeline.errors import Conflict, UsageError
from pipeline.review.claims import Claims, required
from pipeline.review.identity import Actor
from pipeline.state import CLOSED_STATUSES
from pipeline.store import assignments


COMMENT_LIMIT = 4000


class People(Claims):
    """Assignment and comments: audited, and refused like any action for a role without them."""

    def assign(self, incident_id: str, *, to: str, actor: Actor | None = None, reviewer: str | None = None,
               note: str | None = None) -> dict[str, Any]:
        """Put a person on an open incident ("on it: ann"); audited, with `note` (why) when given."""
        with self._acting(incident_id, "assign", actor, reviewer) as who:
            assignee = required(to, "who to assign (--to)")
            row = self.records.incident(incident_id)
            if row["status"] in CLOSED_STATUSES:
                raise Conflict(f"{incident_id} is {row['status']}: only open incidents are assigned")
            assignments.set_assignee(self.records, incident_id, assignee, audit=dict(
                incident_id=incident_id, reviewer=who.id, auth=who.auth, action="assign",
                checkpoint_before=row["pending_checkpoint_id"], checkpoint_after=row["pending_checkpoint_id"],
                note=(note or "").strip() or None))
        return self.document(incident_id)

    def unassign(self, incident_id: str, *, actor: Actor | None = None, reviewer: str | None = None) -> dict[str, Any]:
        """Take the incident off whoever had it; audited."""
        with self._acting(incident_id, "unassign", actor, reviewer) as who:
            row = self.records.incident(incident_id)
            assignments.set_assignee(self.records, incident_id, None, audit=dict(
                incident_id=incident_id, reviewer=who.id, auth=who.auth, action="unassign",
                checkpoint_before=row["pending_checkpoint_id"], checkpoint_after=row["pending_checkpoint_id"]))
        return self.document(incident_id)

    def comment(self, incident_id: str, *, text: str, actor: Actor | None = None, reviewer: str | None = None) -> dict[str, Any]:
        """Add a plain-text comment to the incident (stored, in the document and the audit)."""
        with self._acting(incident_id, "comment", actor, reviewer) as who:
            text = required(text, "a comment's text")
            if len(text) > COMMENT_LIMIT:
                raise UsageError(f"a comment holds at most {COMMENT_LIMIT:,} characters (this one has {len(text):,})")
            row = self.records.incident(incident_id)
            return assignments.add_comment(self.records, incident_id, author=who.id, author_name=who.name,
                                           auth=who.auth, text=text, audit=dict(
                incident_id=incident_id, reviewer=who.id, auth=who.auth, action="comment", note=text,
                checkpoint_before=row["pending_checkpoint_id"], checkpoint_after=row["pending_checkpoint_id"],
                before={}, after={"comments": "+1"}))
