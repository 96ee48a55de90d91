"""The decision panel of a paused incident: approve, reject, request changes, edit then approve.

Every decision names the interrupt the page showed, so a decision on an analysis that has since
changed is refused and explained. A decision is sent at most once per interrupt from a browser
session: the marker is set before the review service is called, so a double click (two reruns)
sends one decision; the service's claim stops anything that still gets through.
"""
from __future__ import annotations

import streamlit as st

from pipeline.errors import Conflict, IncidentIQError
from pipeline.review import ReviewService
from workbench import session
from workbench.conflicts import shown_marker, what_changed
from workbench.edit_form import collect_edits, render_fields

SCOPE = "incident_decision"
LABELS = {"approve": "Approval", "reject": "Rejection", "revise": "Request for changes",
          "edit_approve": "Edit-then-approve"}


def _shown_key(incident_id: str) -> str:
    return f"incident_shown_{incident_id}"


def remember_shown(doc: dict) -> None:
    """Record what this render shows; decisions made from it refer to this interrupt."""
    st.session_state[_shown_key(doc["incident_id"])] = shown_marker(doc)


def _submitted() -> dict:
    return st.session_state.setdefault("incident_submitted", {})


def decide(review: ReviewService, incident_id: str, action: str, state: dict | None, form_key: str) -> None:
    """Callback of the decision buttons: send one decision for the interrupt the page showed."""
    shown = st.session_state.get(_shown_key(incident_id)) or {}
    interrupt_id = shown.get("interrupt_id")
    label = LABELS[action]
    if not interrupt_id:
        session.flash(SCOPE, "warning", f"{label} not sent: the page showed no pending analysis.")
        return
    if interrupt_id in _submitted():
        session.flash(SCOPE, "info", f"{label} not sent again: a decision on this analysis was already submitted.")
        return
    reviewer = session.reviewer()
    if not reviewer:
        session.flash(SCOPE, "error", f"{label} not sent: enter your name in the sidebar first.")
        return
    values = st.session_state
    _submitted()[interrupt_id] = action
    try:
        if action == "approve":
            doc = review.approve(incident_id, reviewer=reviewer, expect_interrupt=interrupt_id,
                                 note=(values.get(f"{form_key}_note") or "").strip() or None)
        elif action == "reject":
            doc = review.reject(incident_id, reviewer=reviewer, expect_interrupt=interrupt_id,
                                reason=values.get(f"{form_key}_reason") or "")
        elif action == "revise":
            doc = review.revise(incident_id, reviewer=reviewer, expect_interrupt=interrupt_id,
                                feedback=values.get(f"{form_key}_feedback") or "")
        else:
            edits = collect_edits(state or {}, key=f"{form_key}_field")
            if not edits:
                del _submitted()[interrupt_id]
                session.flash(SCOPE, "error", "Edit-then-approve not sent: no field was changed. "
                                              "Change a field, or use Approve.")
                return
            doc = review.approve(incident_id, reviewer=reviewer, expect_interrupt=interrupt_id, edits=edits)
    except Conflict as exc:
        now_doc = review.incident(incident_id)
        reason = what_changed(shown, now_doc, review.audit(incident_id))
        session.flash(SCOPE, "warning", f"{label} not applied: {reason} ({exc.message})")
        return
    except IncidentIQError as exc:
        del _submitted()[interrupt_id]  # nothing was decided: let the reviewer correct and retry
        session.flash(SCOPE, "error", f"{label} not sent: {exc.message}")
        return
    session.flash(SCOPE, "success", f"{label} recorded for {reviewer}; the incident is now "
                                    f"{doc['status'].replace('_', ' ')}.")


def panel(review: ReviewService, doc: dict) -> None:
    """The panel, shown only while the incident is paused at the approval gate."""
    session.show_flashes(SCOPE)
    pending = doc.get("pending")
    if doc["status"] != "awaiting_approval" or not pending:
        decision = doc.get("decision")
        if decision:
            st.info(f"Decided: {decision['action']} by {decision['reviewer']}.", icon=":material/gavel:")
        else:
            st.caption("No decision is pending: the panel appears when the run pauses at approval.")
        return
    remember_shown(doc)
    interrupt_id = pending["interrupt_id"]
    incident_id = doc["incident_id"]
    form_key = f"incident_{interrupt_id[:12]}"
    reviewer = session.reviewer()
    done = _submitted().get(interrupt_id)
    st.caption(f"Deciding on analysis {interrupt_id[:12]} · {doc.get('revisions_left', 0)} revision(s) left")
    if done:
        st.info("Your decision on this analysis was submitted.")
    elif not reviewer:
        st.info("Enter your name in the sidebar to decide.", icon=":material/person:")
    disabled = bool(done) or not reviewer
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
