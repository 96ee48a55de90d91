"""The state editor: the current state in words (workbench.state_view, its JSON behind an expander), and the one edit form (workbench.edit_form) for a
paused incident; saving writes an `update` checkpoint that the history then shows."""
from __future__ import annotations

import streamlit as st

from pipeline.errors import IncidentIQError, InvalidEdit
from pipeline.services import ReviewService
from workbench import session
from workbench.audit_words import edit_effect_words
from workbench.edit_form import collect_edits, edit_form, refusal
from workbench.state_view import readable_state
from workbench.timeline import checkpoint_name, checkpoint_numbers

SCOPE = "incident_state"


def _save(review: ReviewService, incident_id: str, interrupt_id: str, state: dict, form_key: str) -> None:
    """Callback of "Save edits" (session state read first, see workbench.session)."""
    messages = session.message_box(SCOPE)
    acting = session.acting_registry()
    reviewer = session.actor()
    edits = collect_edits(state, key=form_key)
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
            effect = review.edit_effect(edits)
            doc = review.edit(incident_id, actor=reviewer, edits=edits, expect_interrupt=interrupt_id)
    except InvalidEdit as exc:
        messages.append(("error", refusal(exc, doing="Saving the edits")))
        return
    except IncidentIQError as exc:
        messages.append(session.error_message(exc, doing="Saving the edits"))
        return
    # in the audit's words: "rca.category lands as rca's output" named a state path and a node; the
    # checkpoint as History names it ("#7 root cause analysis"), not its id's last hex digits
    messages.append(("success", f"Saved as a new checkpoint in the history, "
                                f"{_newest_name(review, incident_id, doc.get('head_checkpoint_id'))}. "
                                f"{edit_effect_words(edits, effect)}."))


def _newest_name(review: ReviewService, incident_id: str, checkpoint_id: str | None) -> str:
    """The incident's newest checkpoint (the edit's) as History's chart and pickers name it: "#7 …"."""
    tree = review.tree(incident_id, limit=1)
    entry = next((e for e in tree["nodes"] if e["checkpoint_id"] == checkpoint_id), None)
    if entry is None:
        return "the newest"
    return checkpoint_name({**entry, "number": checkpoint_numbers(tree)[entry["checkpoint_id"]]})


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
        readable_state(state)
    with right:
        if doc["status"] != "awaiting_approval" or not pending:
            st.info("The state can be edited while the incident awaits approval. To change a past state, "
                    "fork from one of its checkpoints in History.")
            return
        form_key = f"incident_state_{pending['interrupt_id'][:12]}"
        with st.container(border=True):
            st.caption("Editable fields")
            if session.blocked("edit"):
                st.caption(session.blocked("edit"))
            edit_form(state, key=form_key, mode="edit", submit_label="Save edits", on_submit=_save,
                      args=(review, doc["incident_id"], pending["interrupt_id"], state, form_key),
                      disabled=bool(session.blocked("edit")), submit_key=f"{form_key}_save")
