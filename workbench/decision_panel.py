"""The decision panel of a paused incident: approve, reject, request changes, edit then approve.

Every decision names the interrupt the page showed, so a decision on an analysis that has since
changed is refused and explained. A decision is sent at most once per interrupt from a browser
session: the marker is set before the review service is called, so a double click (two runs, two
threads with Streamlit's fast reruns) sends one decision; the service's claim stops anything
that still gets through.
"""
from __future__ import annotations

import threading

import streamlit as st

from pipeline.errors import Conflict, IncidentIQError
from pipeline.services import Actor, ReviewService
from workbench import session
from workbench.conflicts import shown_marker, what_changed
from workbench.edit_form import collect_edits, render_fields
from workbench.evidence_view import escape_markdown

_SUBMITTING = threading.Lock()
LABELS = {"approve": "Approval", "reject": "Rejection", "revise": "Request for changes",
          "edit_approve": "Edit-then-approve"}


def _shown_key(incident_id: str) -> str:
    return f"incident_shown_{incident_id}"


def remember_shown(doc: dict) -> None:
    """Record what this render shows; decisions made from it refer to this interrupt."""
    st.session_state[_shown_key(doc["incident_id"])] = shown_marker(doc)


def decide(review: ReviewService, incident_id: str, action: str, state: dict | None, form_key: str) -> None:
    """Callback of the decision buttons: send one decision for the interrupt the page showed.

    Everything it needs from session state is read first (see workbench.session).
    """
    values = st.session_state
    shown = dict(values.get(_shown_key(incident_id)) or {})
    submitted = values.setdefault("incident_submitted", {})
    outcomes = values.setdefault("incident_outcome", {})
    acting = session.acting_registry()
    reviewer = session.actor()
    inputs = {"note": (values.get(f"{form_key}_note") or "").strip() or None,
              "reason": values.get(f"{form_key}_reason") or "",
              "feedback": values.get(f"{form_key}_feedback") or "",
              "edits": collect_edits(state or {}, key=f"{form_key}_field") if action == "edit_approve" else None}
    # no Streamlit from here on
    outcome = _decide(review, incident_id, action, shown=shown, reviewer=reviewer, inputs=inputs,
                      submitted=submitted, acting=acting)
    if outcome is not None:
        outcomes[incident_id] = outcome


def _decide(review: ReviewService, incident_id: str, action: str, *, shown: dict, reviewer: Actor | None,
            inputs: dict, submitted: dict, acting: dict) -> tuple[str, str] | None:
    """Send the decision; the (kind, text) message the panel keeps showing, or None for a repeat."""
    interrupt_id = shown.get("interrupt_id")
    label = LABELS[action]
    if not interrupt_id:
        return "warning", f"{label} not sent: the page showed no pending analysis."
    if not reviewer:
        return "error", f"{label} not sent: sign in or enter your name in the sidebar first."
    if action == "edit_approve" and not inputs["edits"]:
        return "error", "Edit-then-approve not sent: no field was changed. Change a field, or use Approve."
    with _SUBMITTING:
        if interrupt_id in submitted:
            return None  # a second click on the same analysis: the first one's message stays
        submitted[interrupt_id] = action
    try:
        with session.acting_on(acting, incident_id):
            if action == "approve":
                doc = review.approve(incident_id, actor=reviewer, expect_interrupt=interrupt_id, note=inputs["note"])
            elif action == "reject":
                doc = review.reject(incident_id, actor=reviewer, expect_interrupt=interrupt_id,
                                    reason=inputs["reason"])
            elif action == "revise":
                doc = review.revise(incident_id, actor=reviewer, expect_interrupt=interrupt_id,
                                    feedback=inputs["feedback"])
            else:
                doc = review.approve(incident_id, actor=reviewer, expect_interrupt=interrupt_id,
                                     edits=inputs["edits"])
    except Conflict as exc:
        reason = what_changed(shown, review.incident(incident_id), review.audit(incident_id))
        return "warning", f"{label} not applied: {reason} ({exc.message})"
    except IncidentIQError as exc:
        submitted.pop(interrupt_id, None)  # nothing was decided: the reviewer may correct and retry
        return "error", f"{label} not sent: {exc.message}"
    return "success", f"{label} recorded for {reviewer.id}; the incident is now {doc['status'].replace('_', ' ')}."


def panel(review: ReviewService, doc: dict) -> None:
    """The panel, shown only while the incident is paused at the approval gate."""
    outcome = st.session_state.get("incident_outcome", {}).get(doc["incident_id"])
    if outcome:
        getattr(st, outcome[0])(escape_markdown(outcome[1]))
    pending = doc.get("pending")
    if doc["status"] != "awaiting_approval" or not pending:
        decision = doc.get("decision")
        if decision:
            st.info(escape_markdown(f"Decided: {decision['action']} by {decision['reviewer']}."),
                    icon=":material/gavel:")
        else:
            st.caption("No decision is pending: the panel appears when the run pauses at approval.")
        return
    remember_shown(doc)
    interrupt_id = pending["interrupt_id"]
    incident_id = doc["incident_id"]
    form_key = f"incident_{interrupt_id[:12]}"
    blocked = session.blocked("approve")
    done = st.session_state.get("incident_submitted", {}).get(interrupt_id)
    st.caption(f"Deciding on analysis {interrupt_id[:12]} · {doc.get('revisions_left', 0)} revision(s) left")
    if done:
        st.info("Your decision on this analysis was submitted.")
    elif blocked:
        st.info(blocked, icon=":material/person:")
    disabled = bool(done) or bool(blocked)
    approve_tab, reject_tab, revise_tab, edit_tab = st.tabs(["Approve", "Reject", "Request changes", "Edit & approve"])
    with approve_tab, st.form(f"{form_key}_approve_form", border=False):
        st.text_input("Note (optional)", key=f"{form_key}_note")
        st.form_submit_button("Approve", type="primary", disabled=disabled, key=f"{form_key}_approve",
                              on_click=decide, args=(review, incident_id, "approve", None, form_key))
    with reject_tab, st.form(f"{form_key}_reject_form", border=False):
        st.text_area("Reason", key=f"{form_key}_reason", placeholder="why this analysis is wrong or not actionable")
        st.form_submit_button("Reject", disabled=disabled, key=f"{form_key}_reject",
                              on_click=decide, args=(review, incident_id, "reject", None, form_key))
    with revise_tab, st.form(f"{form_key}_revise_form", border=False):
        left = doc.get("revisions_left", 0)
        st.text_area("Feedback", key=f"{form_key}_feedback", placeholder="what the recommendation should change")
        st.form_submit_button(f"Request changes ({left} left)", disabled=disabled or left <= 0,
                              key=f"{form_key}_revise",
                              on_click=decide, args=(review, incident_id, "revise", None, form_key))
    with edit_tab, st.form(f"{form_key}_edit_form", border=False):
        st.caption("Correct the analysis, then approve it as corrected (one audited change).")
        render_fields(doc.get("state") or {}, key=f"{form_key}_field")
        st.form_submit_button("Save edits and approve", type="primary", disabled=disabled,
                              key=f"{form_key}_edit_approve",
                              on_click=decide, args=(review, incident_id, "edit_approve", doc.get("state"), form_key))
