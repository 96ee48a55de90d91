"""The inbox's actions on rows without opening them: keyboard navigation (j / k move the chosen row,
Enter opens it, a / r approve / reject it after a confirmation) and bulk reject / assign with a reason.

Streamlit sends no key events to Python. A custom component (st.components.v2, no iframe: its
script runs in the app's page) listens to keydown on the app's document and sends the presses as the
component's *state*: every press so far, numbered, and not a one-off trigger. Presses made faster
than the app reruns (five `j` 150 ms apart) would each be a rerun request, and Streamlit keeps only
the newest widget values of requests that arrive while a run is under way: a button click made then
is lost, a state that lists every press is not. The server applies each numbered press once
(`apply_presses`). Keys typed into a text box, a select or a text area are left alone. The hidden
buttons do what each key does, one click at a time.

Every decision goes through the review service's guarded calls (the interrupt and the proposal
the reviewer saw are expected), one audit row per incident; a refusal of one incident is said and
the others still go ahead."""
from __future__ import annotations

import json

import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.services import COMMENT_LIMIT, ReviewService
from pipeline.state import readable_title
from workbench import session
from workbench.audit_words import category_words
from workbench.literal import escape_markdown

SCOPE = "inbox_actions"
CONFIRM_KEY = "inbox_key_confirm"
CURSOR_KEY = "inbox_cursor"
REASON_MISSING_KEY = "inbox_key_reason_missing"
CURSOR_VERSION_KEY = "inbox_cursor_version"
KEYS = {"j": "inbox_key_down", "k": "inbox_key_up", "Enter": "inbox_key_open", "a": "inbox_key_approve",
        "r": "inbox_key_reject"}
LISTENER_KEY = "inbox_key_listener"
SEEN_KEY = "inbox_keys_seen"
# the presses a state carries (the newest ones): far more than can arrive between two reruns
PRESSES_KEPT = 50
_LISTENER_JS = """
export default function (component) {
  const w = window;
  w.__iiqInboxKeysSend = component.setStateValue;  // the newest mount's sender
  if (w.__iiqInboxKeysListening) return;  // one listener for the app's document
  w.__iiqInboxKeysListening = true;
  const tab = Math.random().toString(36).slice(2);  // a reload is a new session: its numbering starts again
  const keys = new Set(%s);
  const presses = [];
  let seq = 0;
  document.addEventListener("keydown", (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing || !keys.has(e.key)) return;
    const t = e.target, tag = (t && t.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || (t && t.isContentEditable)) return;
    if (!document.querySelector(".st-key-inbox_keys")) return;  // not on the inbox
    e.preventDefault();
    seq += 1;
    presses.push([seq, e.key]);
    if (presses.length > %d) presses.shift();
    w.__iiqInboxKeysSend("presses", {tab: tab, seq: seq, keys: presses.slice()});
  });
}
"""


def incident_words(row: dict, limit: int = 60) -> str:
    """An incident as a question about it names it: its id, its title and what its analysis says
    ("INC-… “AxiosError: Request failed with status code 429” (upstream rate limited, confidence 95%)");
    an id alone told a reviewer approving by key, or picking for a bulk action, nothing (walkthrough s58)."""
    title = " ".join(readable_title(row.get("title") or "").split())
    title = title if len(title) <= limit else title[:limit - 1] + "…"
    said = [category_words(row.get("category"))] if row.get("category") else []
    if row.get("confidence") is not None:
        said.append(f"confidence {round(float(row['confidence']) * 100)}%")
    return f"{row['incident_id']} \u201c{title}\u201d" + (f" ({', '.join(said)})" if said else "")


_listener = st.components.v2.component("iiq_inbox_keys", js=_LISTENER_JS % (json.dumps(list(KEYS)), PRESSES_KEPT))


def cursor() -> str | None:
    """The chosen row's incident (j / k, the "Open incident" box), kept apart from the box's value."""
    return st.session_state.get(CURSOR_KEY)


def set_cursor(incident_id: str | None) -> None:
    """Move the chosen row. The box that shows it is drawn under a new key when the server moves it:
    a request sent before the browser had drawn the last move carries the box's old value, which
    would otherwise be taken for the reviewer's choice and undo the presses in between."""
    if incident_id != cursor():
        st.session_state[CURSOR_KEY] = incident_id
        st.session_state[CURSOR_VERSION_KEY] = int(st.session_state.get(CURSOR_VERSION_KEY) or 0) + 1


def cursor_box_key() -> str:
    return f"inbox_pick_{int(st.session_state.get(CURSOR_VERSION_KEY) or 0)}"


def picked(key: str) -> None:
    """The reviewer chose a row in the box: it is the chosen row (the box already shows it). A box of
    an earlier move (the browser had not drawn the newer one yet) is not the reviewer's choice."""
    if key == cursor_box_key():
        st.session_state[CURSOR_KEY] = st.session_state.get(key)


def _move(step: int) -> None:
    shown = st.session_state.get("inbox_shown_ids") or []
    if not shown:
        return
    now = cursor()
    at = shown.index(now) if now in shown else -step if step > 0 else 0
    set_cursor(shown[max(0, min(len(shown) - 1, at + step))])


def _open() -> None:
    st.session_state["inbox_open"] = cursor()


def _ask(action: str) -> None:
    if cursor():
        st.session_state[CONFIRM_KEY] = {"action": action, "incident_id": cursor()}
        st.session_state.pop(REASON_MISSING_KEY, None)


def _cancel() -> None:
    st.session_state.pop(CONFIRM_KEY, None)
    st.session_state.pop(REASON_MISSING_KEY, None)


def _confirmed(review: ReviewService, row: dict, proposal_hash: str | None) -> None:
    reason = (st.session_state.get("inbox_key_reason") or "").strip()
    if (st.session_state.get(CONFIRM_KEY) or {}).get("action") == "reject" and not reason:
        # the confirmation stays open, saying what it needs: nothing was sent, so nothing failed
        st.session_state[REASON_MISSING_KEY] = True
        return
    st.session_state.pop(REASON_MISSING_KEY, None)
    ask = st.session_state.pop(CONFIRM_KEY, None) or {}
    box, who = session.message_box(SCOPE), session.actor()
    if who is None:
        box.append(("error", "Not sent: sign in or enter your name in the sidebar first."))
        return
    incident_id, label = row["incident_id"], "Approval" if ask.get("action") == "approve" else "Rejection"
    try:
        if ask.get("action") == "approve":
            review.approve(incident_id, actor=who, expect_interrupt=row.get("pending_interrupt_id"),
                           expect_proposal=proposal_hash or "", full=False)
        else:
            review.reject(incident_id, actor=who, expect_interrupt=row.get("pending_interrupt_id"), reason=reason,
                          full=False)
    except IncidentIQError as exc:
        box.append(session.error_message(exc, doing=f"{label} of {incident_id}"))
        return
    box.append(("success", f"{label} of {incident_id} recorded for {who.id}."))
    _step_past(incident_id)


def _step_past(incident_id: str) -> None:
    """A decided row leaves the view: the chosen row becomes the one after it (the one before, at the
    end), as a reviewer working down the list expects, not the first row."""
    shown = st.session_state.get("inbox_shown_ids") or []
    if incident_id in shown:
        at = shown.index(incident_id)
        rest = shown[at + 1:] or shown[:at][-1:]
        set_cursor(rest[0] if rest else None)


def apply_presses(presses: dict | None) -> None:
    """Do what each press the listener numbered does, once, in order: the state lists the newest
    PRESSES_KEPT presses, of which those after the last one applied are new. Enter ends a batch (it
    leaves the inbox)."""
    presses = presses or {}
    seen = st.session_state.get(SEEN_KEY) or {}
    done = int(seen.get("seq") or 0) if seen.get("tab") == presses.get("tab") else 0
    st.session_state[SEEN_KEY] = {"tab": presses.get("tab"), "seq": int(presses.get("seq") or 0)}
    actions = {"j": lambda: _move(1), "k": lambda: _move(-1), "Enter": _open, "a": lambda: _ask("approve"),
               "r": lambda: _ask("reject")}
    for number, key in presses.get("keys") or []:
        if not isinstance(number, int) or number <= done or key not in actions:
            continue
        done = number
        actions[key]()
        if key == "Enter":
            break


def _pressed() -> None:
    apply_presses((st.session_state.get(LISTENER_KEY) or {}).get("presses"))


def keyboard(review: ReviewService, rows: list[dict], where=None) -> None:
    """The hidden key buttons, the listener, and the confirmation an a / r key asks for, drawn in
    `where` (a container above the table: below a long table it was off-screen)."""
    keys = st.container(key="inbox_keys")
    keys.button("next row (j)", key=KEYS["j"], on_click=_move, args=(1,))
    keys.button("previous row (k)", key=KEYS["k"], on_click=_move, args=(-1,))
    keys.button("open (Enter)", key=KEYS["Enter"], on_click=_open)
    keys.button("approve (a)", key=KEYS["a"], on_click=_ask, args=("approve",))
    keys.button("reject (r)", key=KEYS["r"], on_click=_ask, args=("reject",))
    with keys:
        _listener(key=LISTENER_KEY, on_presses_change=_pressed)  # our script only: no data goes into it
    st.html("<style>.st-key-inbox_keys{display:none}</style>")
    ask = st.session_state.get(CONFIRM_KEY)
    by_id = {r["incident_id"]: r for r in rows}
    if not ask or ask["incident_id"] not in by_id:
        return
    row = by_id[ask["incident_id"]]
    with (where if where is not None else st).container(border=True, key="inbox_confirm"):
        if row["status"] != "awaiting_approval":
            st.info(f"{row['incident_id']} is not awaiting a decision.")
            st.button("Close", key="inbox_key_cancel", on_click=_cancel)
            return
        proposal = (review.document(row["incident_id"]).get("proposal") or {}).get("hash")
        if ask["action"] == "approve":
            st.warning(escape_markdown(f"Approve {incident_words(row)}"
                                       + (f" and its fix proposal {proposal[:12]}" if proposal else "") + "?"))
        else:
            st.warning(escape_markdown(f"Reject {incident_words(row)}? The run ends without a fix."))
            st.text_input("Reason for the rejection", key="inbox_key_reason", max_chars=COMMENT_LIMIT)
            if st.session_state.get(REASON_MISSING_KEY):
                st.error("Give a reason for the rejection: it is recorded with the incident.")
        blocked = session.blocked(ask["action"])
        if blocked:
            st.caption(blocked)
        buttons = st.container(horizontal=True)
        buttons.button(f"Confirm {ask['action']}", type="primary", key="inbox_key_yes", disabled=bool(blocked),
                       on_click=_confirmed, args=(review, row, proposal))
        buttons.button("Cancel", key="inbox_key_cancel", on_click=_cancel)


BULK_CONFIRM_KEY = "inbox_bulk_confirm"
# why a bulk action was not sent: drawn under its button, by the Reason box (walkthrough s57: above the
# table, the page scrolled away from where the reviewer typed); kept through the inbox's refreshes
# (walkthrough s58: drawn once, the next refresh a moment later drew the box without it) until the
# reviewer types a reason, changes the action or clicks again
BULK_SCOPE = "inbox_bulk"
BULK_MESSAGE_SECONDS = 60.0


def _bulk_forget() -> None:
    session.forget_messages(BULK_SCOPE)


def _bulk_ask() -> None:
    """The bulk button: checks what the action needs, then asks for a confirmation naming how many
    incidents and which (as the `r` key does for one): one click rejected six, a forked one among them."""
    chosen = list(st.session_state.get("inbox_bulk_ids") or [])
    action = st.session_state.get("inbox_bulk_action") or "Reject"
    reason = (st.session_state.get("inbox_bulk_reason") or "").strip()
    to = (st.session_state.get("inbox_bulk_to") or "").strip()
    box, who = session.message_box(BULK_SCOPE), session.actor()
    st.session_state.pop(BULK_CONFIRM_KEY, None)
    _bulk_forget()
    if who is None:
        box.append(("error", f"{action} not sent: sign in or enter your name in the sidebar first."))
        return
    if not reason:
        box.append(("error", f"{action} not sent: give a reason (it is recorded with each incident)."))
        return
    if action == "Assign" and not to:
        box.append(("error", "Assign not sent: say who to assign."))
        return
    if chosen:
        st.session_state[BULK_CONFIRM_KEY] = {"action": action, "ids": chosen, "reason": reason, "to": to}


def _bulk_cancel() -> None:
    st.session_state.pop(BULK_CONFIRM_KEY, None)


def bulk_question(ask: dict, rows: dict[str, dict]) -> str:
    """The confirmation's question: how many, which (id and title), and what it does."""
    count = len(ask["ids"])
    named = "; ".join(incident_words(rows.get(i) or {"incident_id": i}) for i in ask["ids"])
    if ask["action"] == "Reject":
        head = f"Reject {count} incident{'s' if count != 1 else ''}? Their runs end without a fix."
    else:
        head = f"Assign {count} incident{'s' if count != 1 else ''} to {ask['to']}?"
    return f"{head} {named}. Reason: {ask['reason']}"


def _bulk(review: ReviewService, rows: dict[str, dict]) -> None:
    ask = st.session_state.pop(BULK_CONFIRM_KEY, None)
    if not ask:
        return  # a second click: the first one acts
    chosen, action, reason, to = ask["ids"], ask["action"], ask["reason"], ask["to"]
    box, who = session.message_box(SCOPE), session.actor()
    if who is None:
        box.append(("error", f"{action} not sent: sign in or enter your name in the sidebar first."))
        return
    done, refused = [], []
    for incident_id in chosen:
        row = rows.get(incident_id) or {}
        try:
            if action == "Reject":
                review.reject(incident_id, actor=who, reason=reason, expect_interrupt=row.get("pending_interrupt_id"),
                              full=False)
            else:
                review.assign(incident_id, to=to, actor=who, note=reason)
        except IncidentIQError as exc:
            refused.append(f"{incident_id} ({exc.message})")
            continue
        done.append(incident_id)
    if done:  # how many it did, then which: the button below, its picks cleared, reads no count
        many = f"{len(done)} incident{'s' if len(done) != 1 else ''}"
        verb = f"Rejected {many}" if action == "Reject" else f"Assigned {many} to {to}"
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
        chosen = st.multiselect("Incidents", list(by_id), key="inbox_bulk_ids", placeholder="pick from this page",
                                format_func=lambda i: incident_words(by_id[i]) if i in by_id else i)
        action = st.segmented_control("Action", ["Reject", "Assign"], key="inbox_bulk_action", default="Reject",
                                      required=True, on_change=_bulk_forget)
        if action == "Assign":
            st.text_input("Assign to", key="inbox_bulk_to", max_chars=200, on_change=_bulk_forget)
        st.text_area("Reason", key="inbox_bulk_reason", max_chars=COMMENT_LIMIT, on_change=_bulk_forget,
                     help="recorded in each incident's audit trail")
        blocked = session.blocked("reject" if action == "Reject" else "assign")
        if blocked:
            st.caption(blocked)
        # no picks (as after a bulk action, which clears them): "Reject 0 incidents…" read as what was done
        label = f"{action} {len(chosen)} incident{'s' if len(chosen) != 1 else ''}…" if chosen else \
            f"{action}… (pick incidents above)"
        st.button(label, key="inbox_bulk_go",
                  disabled=bool(blocked) or not chosen, on_click=_bulk_ask)
        session.show_messages(BULK_SCOPE, keep_seconds=BULK_MESSAGE_SECONDS)
        ask = st.session_state.get(BULK_CONFIRM_KEY)
        if ask and (ask["ids"] != chosen or ask["action"] != action):
            st.session_state.pop(BULK_CONFIRM_KEY, None)  # the picks changed since: asked again with the new ones
        elif ask:
            with st.container(border=True, key="inbox_bulk_confirm_box"):
                st.warning(escape_markdown(bulk_question(ask, by_id)))
                buttons = st.container(horizontal=True)
                buttons.button(f"Confirm: {ask['action'].lower()} {len(ask['ids'])}", type="primary",
                               key="inbox_bulk_yes", disabled=bool(blocked), on_click=_bulk, args=(review, by_id))
                buttons.button("Cancel", key="inbox_bulk_no", on_click=_bulk_cancel)
