"""The people on an incident: who is on it ("on it: ann"), who approved so far, and the comments.

Everything people typed (names, comments) is shown with st.text / st.code, never markdown: a
comment holding `<script>` or a `[link](http://…)` reads literally and links nowhere.
"""
from __future__ import annotations

import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.services import ReviewService
from pipeline.services import COMMENT_LIMIT
from pipeline.state import CLOSED_STATUSES, counted
from workbench import session
from workbench.literal import plain

SCOPE = "incident_people"


def _stamp(at: str | None) -> str:
    return str(at or "")[:19].replace("T", " ")


def _act(review: ReviewService, incident_id: str, action: str, form_key: str | None = None) -> None:
    """Callback of the assignment and comment controls (session state read first, see workbench.session)."""
    messages = session.message_box(SCOPE)
    who = session.actor()
    text = str(st.session_state.get(f"{form_key}_text") or "").strip() if form_key else ""
    if who is None:
        messages.append(("error", f"Not done: {session.blocked(action) or 'sign in first.'}"))
        return
    try:
        if action == "assign":
            review.assign(incident_id, to=who.id, actor=who)
            messages.append(("success", f"You ({who.id}) are on {incident_id}."))
        elif action == "unassign":
            review.unassign(incident_id, actor=who)
            messages.append(("success", f"Nobody is on {incident_id} now."))
        else:
            review.comment(incident_id, text=text, actor=who)
            messages.append(("success", "Comment added."))
            st.session_state[f"{form_key}_text"] = ""  # only a comment that was added leaves the box
    except IncidentIQError as exc:
        messages.append(session.error_message(exc, doing={"assign": "Assigning", "unassign": "Unassigning"}
                                              .get(action, "Commenting")))


def approvals_line(doc: dict) -> str | None:
    """Who approved so far (with how they signed in), while approvals are pending or after the decision."""
    decision = doc.get("decision") or {}
    given = doc.get("approvals") or decision.get("approvals") or []
    needed = int(doc.get("approvals_needed") or 1)
    if not given:
        return f"Needs {needed} approvals from different people." if needed > 1 and doc.get("pending") else None
    names = ", ".join(f"{a.get('by')} ({a.get('auth') or '?'}) at {_stamp(a.get('at'))}" for a in given)
    if doc.get("pending") and len(given) < needed:
        return f"{len(given)} of {counted(needed, 'approval')}: {names}. A different person must approve to open the gate."
    return f"Approved by {names}."


def people(review: ReviewService, doc: dict) -> None:
    """Assignment, approvals and comments of one incident."""
    incident_id = doc["incident_id"]
    st.subheader("People")
    session.show_messages(SCOPE)
    me = session.actor()
    assignee = doc.get("assignee")
    st.text(plain(f"On it: {assignee} (since {_stamp(doc.get('assigned_at'))})" if assignee else "Nobody is on it."))
    line = approvals_line(doc)
    if line:
        st.text(plain(line))
    closed = doc["status"] in CLOSED_STATUSES
    blocked = session.blocked("assign")
    bar = st.container(horizontal=True)
    bar.button("I'm on it", key="incident_people_assign", icon=":material/front_hand:",
               disabled=bool(blocked) or closed or bool(me and assignee == me.id),
               on_click=_act, args=(review, incident_id, "assign"))
    bar.button("Unassign", key="incident_people_unassign", disabled=bool(blocked) or not assignee,
               on_click=_act, args=(review, incident_id, "unassign"))
    if blocked:
        st.caption(blocked)
    elif closed:
        st.caption(f"Only open incidents are assigned; this one is {doc['status'].replace('_', ' ')}.")

    comments = doc.get("comments") or []
    st.markdown(f"**Comments** ({len(comments)})")
    for c in comments:
        st.text(plain(f"{c.get('name') or c.get('by')} ({c.get('by')}, {c.get('auth') or '?'}) · {_stamp(c.get('at'))}"))
        st.code(plain(c.get("text") or ""), language=None, wrap_lines=True)
    form_key = f"incident_comment_{incident_id}"
    blocked = session.blocked("comment")
    # no max_chars on the box: a longer paste would be cut or lost there; the service refuses it with
    # the limit and the text stays in the box to shorten (the form is not cleared on submit)
    with st.form(f"{form_key}_form", clear_on_submit=False, border=False):
        st.text_area("Add a comment", key=f"{form_key}_text", placeholder="plain text, shown as written",
                     help=f"Plain text, at most {COMMENT_LIMIT:,} characters.")
        st.caption(f"At most {COMMENT_LIMIT:,} characters.")
        if blocked:
            st.caption(blocked)
        st.form_submit_button("Comment", disabled=bool(blocked), key=f"{form_key}_submit",
                              on_click=_act, args=(review, incident_id, "comment", form_key))
