"""The inbox's actions on rows without opening them: keyboard navigation (j / k move the chosen row,
Enter opens it, a / r approve / reject it after a confirmation) and bulk reject / assign with a reason.

Streamlit sends no key events to Python. A small script (st.html with its JavaScript allowed, as
workbench/identity.py writes the name cookie: no iframe to load) listens to keydown on the app's
document and clicks one of a few hidden buttons, so
each key is an ordinary button click: its callback runs on the server like any other. Keys typed
into a text box, a select or a text area are left alone.

Every decision goes through the review service's guarded calls (the interrupt and the proposal
the reviewer saw are expected), one audit row per incident; a refusal of one incident is said and
the others still go ahead."""
from __future__ import annotations

import json

import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.services import COMMENT_LIMIT, ReviewService
from workbench import session

SCOPE = "inbox_actions"
CONFIRM_KEY = "inbox_key_confirm"
KEYS = {"j": "inbox_key_down", "k": "inbox_key_up", "Enter": "inbox_key_open", "a": "inbox_key_approve",
        "r": "inbox_key_reject"}
_SCRIPT = """<script>
(() => {
  const doc = document;
  if (window.__iiqInboxKeys) return;  // one listener for the app's document
  window.__iiqInboxKeys = true;
  const keys = %s;
  doc.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
    const t = e.target, tag = (t && t.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || (t && t.isContentEditable)) return;
    const key = keys[e.key];
    const button = key && doc.querySelector(".st-key-" + key + " button");
    if (!button) return;  // not on the inbox
    e.preventDefault();
    button.click();
  });
})();
</script>"""


def _move(step: int) -> None:
    shown = st.session_state.get("inbox_shown_ids") or []
    if not shown:
        return
    now = st.session_state.get("inbox_pick")
    at = shown.index(now) if now in shown else -step if step > 0 else 0
    st.session_state["inbox_pick"] = shown[max(0, min(len(shown) - 1, at + step))]


def _open() -> None:
    st.session_state["inbox_open"] = st.session_state.get("inbox_pick")


def _ask(action: str) -> None:
    if st.session_state.get("inbox_pick"):
        st.session_state[CONFIRM_KEY] = {"action": action, "incident_id": st.session_state["inbox_pick"]}


def _cancel() -> None:
    st.session_state.pop(CONFIRM_KEY, None)


def _confirmed(review: ReviewService, row: dict, proposal_hash: str | None) -> None:
    ask = st.session_state.pop(CONFIRM_KEY, None) or {}
    reason = (st.session_state.get("inbox_key_reason") or "").strip()
    box, who = session.message_box(SCOPE), session.actor()
    if who is None:
        box.append(("error", "Not sent: sign in or enter your name in the sidebar first."))
        return
    incident_id, label = row["incident_id"], "Approval" if ask.get("action") == "approve" else "Rejection"
    try:
        if ask.get("action") == "approve":
            review.approve(incident_id, actor=who, expect_interrupt=row.get("pending_interrupt_id"),
                           expect_proposal=proposal_hash or "")
        else:
            review.reject(incident_id, actor=who, expect_interrupt=row.get("pending_interrupt_id"), reason=reason)
    except IncidentIQError as exc:
        box.append(session.error_message(exc, doing=f"{label} of {incident_id}"))
        return
    box.append(("success", f"{label} of {incident_id} recorded for {who.id}."))


def keyboard(review: ReviewService, rows: list[dict]) -> None:
    """The hidden key buttons, the listener, and the confirmation an a / r key asks for."""
    session.show_messages(SCOPE)
    keys = st.container(key="inbox_keys")
    keys.button("next row (j)", key=KEYS["j"], on_click=_move, args=(1,))
    keys.button("previous row (k)", key=KEYS["k"], on_click=_move, args=(-1,))
    keys.button("open (Enter)", key=KEYS["Enter"], on_click=_open)
    keys.button("approve (a)", key=KEYS["a"], on_click=_ask, args=("approve",))
    keys.button("reject (r)", key=KEYS["r"], on_click=_ask, args=("reject",))
    st.html("<style>.st-key-inbox_keys{display:none}</style>" + _SCRIPT % json.dumps(KEYS),
            unsafe_allow_javascript=True)  # our script only: no data goes into it
    ask = st.session_state.get(CONFIRM_KEY)
    by_id = {r["incident_id"]: r for r in rows}
    if not ask or ask["incident_id"] not in by_id:
        return
    row = by_id[ask["incident_id"]]
    with st.container(border=True, key="inbox_confirm"):
        if row["status"] != "awaiting_approval":
            st.info(f"{row['incident_id']} is not awaiting a decision.")
            st.button("Close", key="inbox_key_cancel", on_click=_cancel)
            return
        proposal = (review.document(row["incident_id"]).get("proposal") or {}).get("hash")
        if ask["action"] == "approve":
            st.warning(f"Approve {row['incident_id']}"
                       + (f" and its fix proposal {proposal[:12]}" if proposal else "") + "?")
        else:
            st.warning(f"Reject {row['incident_id']}? The run ends without a fix.")
            st.text_input("Reason for the rejection", key="inbox_key_reason", max_chars=COMMENT_LIMIT)
        blocked = session.blocked(ask["action"])
        if blocked:
            st.caption(blocked)
        buttons = st.container(horizontal=True)
        buttons.button(f"Confirm {ask['action']}", type="primary", key="inbox_key_yes", disabled=bool(blocked),
                       on_click=_confirmed, args=(review, row, proposal))
        buttons.button("Cancel", key="inbox_key_cancel", on_click=_cancel)


def _bulk(review: ReviewService, rows: dict[str, dict]) -> None:
    chosen = list(st.session_state.get("inbox_bulk_ids") or [])
    action = st.session_state.get("inbox_bulk_action") or "Reject"
    reason = (st.session_state.get("inbox_bulk_reason") or "").strip()
    to = (st.session_state.get("inbox_bulk_to") or "").strip()
    box, who = session.message_box(SCOPE), session.actor()
    if who is None:
        box.append(("error", f"{action} not sent: sign in or enter your name in the sidebar first."))
        return
    if not reason:
        box.append(("error", f"{action} not sent: give a reason (it is recorded with each incident)."))
        return
    if action == "Assign" and not to:
        box.append(("error", "Assign not sent: say who to assign."))
        return
    done, refused = [], []
    for incident_id in chosen:
        row = rows.get(incident_id) or {}
        try:
            if action == "Reject":
                review.reject(incident_id, actor=who, reason=reason, expect_interrupt=row.get("pending_interrupt_id"))
            else:
                review.assign(incident_id, to=to, actor=who, note=reason)
        except IncidentIQError as exc:
            refused.append(f"{incident_id} ({exc.message})")
            continue
        done.append(incident_id)
    verb = "Rejected" if action == "Reject" else f"Assigned to {to}"
    if done:
        box.append(("success", f"{verb}: {', '.join(done)}."))
        st.session_state["inbox_bulk_ids"] = []
    if refused:
        box.append(("warning", f"Not applied to {len(refused)}: " + "; ".join(refused)))


def bulk_actions(review: ReviewService, rows: list[dict]) -> None:
    """Reject or assign several of the shown incidents at once, with one reason for all."""
    by_id = {r["incident_id"]: r for r in rows}
    if st.session_state.get("inbox_bulk_ids"):
        st.session_state["inbox_bulk_ids"] = [i for i in st.session_state["inbox_bulk_ids"] if i in by_id]
    # drawn only while open, as the inbox's filters are (a closed one reruns the page when opened): what
    # was picked and typed is kept by setting it again (a widget not drawn in a run loses its value)
    session.keep_values("inbox_bulk_ids", "inbox_bulk_to", "inbox_bulk_reason")
    # its open state is the reviewer's (key): an `expanded` that changed with the picks would make it a
    # new expander, closed
    box = st.expander("Act on several incidents", key="inbox_bulk_open", on_change="rerun")
    if not box.open:
        return
    with box:
        chosen = st.multiselect("Incidents", list(by_id), key="inbox_bulk_ids", placeholder="pick from this page")
        action = st.segmented_control("Action", ["Reject", "Assign"], key="inbox_bulk_action", default="Reject",
                                      required=True)
        if action == "Assign":
            st.text_input("Assign to", key="inbox_bulk_to", max_chars=200)
        st.text_area("Reason", key="inbox_bulk_reason", max_chars=COMMENT_LIMIT,
                     help="recorded in each incident's audit trail")
        blocked = session.blocked("reject" if action == "Reject" else "assign")
        if blocked:
            st.caption(blocked)
        st.button(f"{action} {len(chosen)} incident{'s' if len(chosen) != 1 else ''}", key="inbox_bulk_go",
                  disabled=bool(blocked) or not chosen, on_click=_bulk, args=(review, by_id))
