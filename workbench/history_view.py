"""Time travel on the incident page: the checkpoint timeline, one checkpoint's state and diff,
and replay / fork from it after a confirmation naming the nodes that will run again."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.services import ReviewService
from workbench import session
from workbench.edit_form import collect_edits, render_fields
from workbench.evidence_view import escape_markdown
from workbench.timeline import checkpoint_caption, timeline_figure

SCOPE = "incident_history"
HISTORY_WINDOW = 100  # checkpoints the timeline shows at first
CONFIRM_KEY = "incident_confirm"


def _pick_key(incident_id: str) -> str:
    return f"incident_history_pick_{incident_id}"


def _chart_key(incident_id: str) -> str:
    return f"incident_timeline_{incident_id}"


def _clicked_checkpoint(event) -> str | None:
    """The checkpoint id of the point clicked in the timeline, if any."""
    try:
        points = event["selection"]["points"]
    except (KeyError, TypeError):
        return None
    for point in points:
        data = point.get("customdata")
        if isinstance(data, list):
            data = data[0] if data else None
        if isinstance(data, str):
            return data
    return None


def _as_text(value) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str)


def changes_frame(changes: list[dict]) -> pd.DataFrame:
    """A field-level diff as rows of text (values as JSON), for a dataframe."""
    return pd.DataFrame([{"field": c["field"], "before": _as_text(c["before"]), "after": _as_text(c["after"])}
                         for c in changes], columns=["field", "before", "after"])


def plan_text(action: str, checkpoint_id: str, plan: dict, edits: dict | None) -> str:
    """The confirmation: what will run again and whether code_fix is among it."""
    nodes = " → ".join(plan["nodes"]) or "nothing"
    text = f"{action.capitalize()} from checkpoint {checkpoint_id[-8:]} runs again: {nodes}."
    if plan["includes_code_fix"]:
        text += " code_fix IS among them: a fix proposal may be recorded again."
    else:
        text += " code_fix is not among them"
        text += ": the approval gate fires again and needs a new decision." if plan["pauses_at_approval"] else "."
    if edits:
        text += " With edits: " + "; ".join(f"{k} = {_as_text(v)}" for k, v in edits.items())
    if plan.get("label"):
        text += f" It is a {plan['label']}."
    for warning in plan.get("warnings") or []:
        text += f" Note: {warning}."
    return text


def _ask(action: str, incident_id: str, checkpoint_id: str, state: dict | None, form_key: str | None) -> None:
    edits = collect_edits(state or {}, key=form_key) if action == "fork" else None
    if action == "fork" and not edits:
        session.message_box(SCOPE).append(("error", "Fork not started: change at least one field (or use Replay)."))
        return
    st.session_state[CONFIRM_KEY] = {"incident_id": incident_id, "action": action,
                                     "checkpoint_id": checkpoint_id, "edits": edits}


def _cancel() -> None:
    st.session_state.pop(CONFIRM_KEY, None)


def _confirmed(review: ReviewService) -> None:
    """Callback of the confirmation: replay or fork (session state read first, see workbench.session)."""
    messages = session.message_box(SCOPE)
    picks = st.session_state.setdefault("incident_history_next_pick", {})
    acting = session.acting_registry()
    reviewer = session.actor()
    ask = st.session_state.pop(CONFIRM_KEY, None)  # last: once taken, this callback must act
    if not ask or ask["incident_id"] in acting:
        return  # a second click: the first one acts
    action = ask["action"].capitalize()
    if not reviewer:
        messages.append(("error", f"{action} not started: enter your name in the sidebar."))
        return
    incident_id, checkpoint_id = ask["incident_id"], ask["checkpoint_id"]
    try:
        with session.acting_on(acting, incident_id):
            if ask["action"] == "replay":
                doc = review.replay(incident_id, checkpoint_id=checkpoint_id, actor=reviewer)
            else:
                doc = review.fork(incident_id, checkpoint_id=checkpoint_id, actor=reviewer, edits=ask["edits"])
    except IncidentIQError as exc:
        messages.append(session.error_message(exc, doing=action))
        return
    if doc.get("head_checkpoint_id"):
        picks[incident_id] = doc["head_checkpoint_id"]  # the timeline then selects the new head
    messages.append(("success", f"{action} from {checkpoint_id[-8:]} done by {reviewer.id}: "
                                f"{ask.get('label') or 'done'}, now {doc['status'].replace('_', ' ')}."))


def _widen(window_key: str, window: int) -> None:
    st.session_state[window_key] = window


def _select(incident_id: str, checkpoint_id: str) -> None:
    st.session_state[_pick_key(incident_id)] = checkpoint_id


def history(review: ReviewService, incident_id: str) -> None:
    """The timeline, the selected checkpoint's state and diff, and replay / fork from it."""
    session.show_messages(SCOPE)
    window_key = f"incident_history_window_{incident_id}"
    window = int(st.session_state.get(window_key) or HISTORY_WINDOW)
    # the newest checkpoints only: a thread with a thousand of them keeps the chart and the
    # picker small; older ones come a window at a time
    tree = review.tree(incident_id, limit=window)
    entries = sorted(tree["nodes"], key=lambda e: e["checkpoint_id"], reverse=True)
    if not entries:
        st.info("No checkpoint yet: the run has not started.")
        return
    by_id = {e["checkpoint_id"]: e for e in entries}
    pick_key = _pick_key(incident_id)
    clicked = _clicked_checkpoint(st.session_state.get(_chart_key(incident_id)))
    if clicked and clicked != st.session_state.get("incident_timeline_applied"):
        st.session_state["incident_timeline_applied"] = clicked  # a new click moves the picker once
        st.session_state[pick_key] = clicked
    next_pick = st.session_state.get("incident_history_next_pick", {}).pop(incident_id, None)
    if next_pick in by_id:
        st.session_state[pick_key] = next_pick
    if st.session_state.get(pick_key) not in by_id:
        st.session_state[pick_key] = entries[0]["checkpoint_id"]
    selected = st.session_state[pick_key]

    spacing = st.segmented_control("Spacing", ["time", "order"], default="order", required=True,
                                   key="incident_history_spacing", persist_state="session",
                                   help="order: one step apart, easier to read when a run took milliseconds")
    st.plotly_chart(timeline_figure(tree, selected=selected, spacing=spacing), key=_chart_key(incident_id),
                    on_select="rerun", selection_mode="points", config={"displayModeBar": False})
    shown = f"the newest {len(entries)} of {tree['total']}" if tree["total"] > len(entries) else f"{len(entries)}"
    st.caption(f"{shown} checkpoints on {tree['branches']} branch(es). Click a point or pick a checkpoint.")
    if tree["total"] > len(entries):
        st.button(f"Show {HISTORY_WINDOW} older", key="incident_history_older", on_click=_widen,
                  args=(window_key, window + HISTORY_WINDOW))
    st.selectbox("Checkpoint", list(by_id), key=pick_key, format_func=lambda cid: checkpoint_caption(by_id[cid]))

    detail = review.checkpoint(incident_id, selected)
    entry = detail["checkpoint"]
    st.markdown(f"**Changes against its parent** ({len(detail['changes'])} fields)")
    if detail["changes"]:
        st.dataframe(changes_frame(detail["changes"]), hide_index=True, width="stretch",
                     key="incident_history_diff")
    else:
        st.caption("No field changed at this checkpoint.")
    if entry.get("trace"):
        st.caption("What the nodes noted")
        st.code("\n".join(entry["trace"]), language=None, wrap_lines=True)
    with st.expander("State at this checkpoint (JSON)"):
        st.json(detail["state"], expanded=1)
    _time_travel(review, incident_id, selected, detail["state"])


def _time_travel(review: ReviewService, incident_id: str, checkpoint_id: str, state: dict) -> None:
    st.markdown("**Time travel**")
    plan = review.rerun_plan(incident_id, checkpoint_id)
    if not plan["allowed"]:
        st.info(plan["reason"])
        if plan.get("suggested_checkpoint"):
            st.button("Select the gate checkpoint before it", key="incident_pick_suggested", on_click=_select,
                      args=(incident_id, plan["suggested_checkpoint"]))
        return
    ask = st.session_state.get(CONFIRM_KEY)
    if ask and ask["incident_id"] == incident_id and ask["checkpoint_id"] == checkpoint_id:
        if ask.get("edits"):  # a fork's plan depends on what it edits (upstream edits re-run recommend)
            plan = review.rerun_plan(incident_id, checkpoint_id, edits=ask["edits"])
        ask["label"] = plan.get("label")
        with st.container(border=True):
            # the plan as escaped text and the edits (which may quote log text) as code: never
            # markdown, whose links and remote images would be live in a confirmation
            st.warning(escape_markdown(plan_text(ask["action"], checkpoint_id, plan, None)), icon=":material/history:")
            if ask.get("edits"):
                st.caption("With edits:")
                st.code("\n".join(f"{k} = {_as_text(v)}" for k, v in ask["edits"].items()), language=None,
                        wrap_lines=True)
            yes, no = st.columns(2)
            yes.button(f"Confirm {ask['action']}", type="primary", key="incident_confirm_yes",
                       on_click=_confirmed, args=(review,))
            no.button("Cancel", key="incident_confirm_no", on_click=_cancel)
        return
    blocked = session.blocked("replay")
    if blocked:
        st.caption(blocked)
    st.caption(plan["reason"])
    st.button("Replay from here…", key="incident_replay", disabled=bool(blocked), on_click=_ask,
              args=("replay", incident_id, checkpoint_id, None, None))
    form_key = f"incident_fork_{checkpoint_id[-12:]}"
    with st.expander("Fork from here with edits"):
        with st.form(f"{form_key}_form", border=False):
            render_fields(state, key=form_key)
            st.form_submit_button("Fork from here…", disabled=bool(blocked), key=f"{form_key}_submit",
                                  on_click=_ask, args=("fork", incident_id, checkpoint_id, state, form_key))
