"""The state editor: the current state as JSON, and a form for the editable fields of a paused
incident; saving writes an `update` checkpoint that the history then shows."""
from __future__ import annotations

import streamlit as st

from pipeline.errors import IncidentIQError, InvalidEdit
from pipeline.services import ReviewService
from workbench import session
from workbench.edit_form import collect_edits, render_fields

SCOPE = "incident_state"
AS_NODES = {"recommend": "keep it as the analysis and recommendation to approve",
            "rca": "treat it as the analysis and redo the recommendation from it"}


def _save(review: ReviewService, incident_id: str, interrupt_id: str, state: dict, form_key: str) -> None:
    """Callback of "Save edits" (session state read first, see workbench.session)."""
    messages = session.message_box(SCOPE)
    acting = session.acting_registry()
    reviewer = session.actor()
    edits = collect_edits(state, key=form_key)
    as_node = st.session_state.get(f"{form_key}_as_node") or "recommend"
    if incident_id in acting:
        return  # a second click while the first one saves
    if not reviewer:
        messages.append(("error", "Edits not saved: enter your name in the sidebar first."))
        return
    if not edits:
        messages.append(("info", "Nothing to save: no field was changed."))
        return
    try:
        with session.acting_on(acting, incident_id):
            doc = review.edit(incident_id, actor=reviewer, edits=edits, as_node=as_node,
                              expect_interrupt=interrupt_id)
    except InvalidEdit as exc:
        where = f" ({exc.field})" if exc.field else ""
        messages.append(("error", f"Edits not saved{where}: {exc.message}"))
        return
    except IncidentIQError as exc:
        messages.append(session.error_message(exc, doing="Saving the edits"))
        return
    messages.append(("success", f"Saved {', '.join(edits)} as a new update checkpoint "
                                f"({(doc.get('head_checkpoint_id') or '')[-8:]}); it is in the history."))


def editor(review: ReviewService, doc: dict) -> None:
    session.show_messages(SCOPE)
    state = doc.get("state")
    if not state:
        st.info("No state yet: the run has not started.")
        return
    pending = doc.get("pending")
    left, right = st.columns([1, 1])
    with left:
        st.caption("Current state (newest checkpoint)")
        st.json(state, expanded=1)
    with right:
        if doc["status"] != "awaiting_approval" or not pending:
            st.info("The state can be edited while the incident awaits approval. To change a past state, "
                    "fork from one of its checkpoints in History.")
            return
        form_key = f"incident_state_{pending['interrupt_id'][:12]}"
        with st.form(f"{form_key}_form"):
            st.caption("Editable fields")
            render_fields(state, key=form_key)
            st.radio("Save the edit as", list(AS_NODES), format_func=lambda n: f"{n}: {AS_NODES[n]}",
                     key=f"{form_key}_as_node")
            if session.blocked("edit"):
                st.caption(session.blocked("edit"))
            st.form_submit_button("Save edits", disabled=bool(session.blocked("edit")), key=f"{form_key}_save",
                                  on_click=_save, args=(review, doc["incident_id"], pending["interrupt_id"], state,
                                                        form_key))
