"""Time travel on the incident page: the checkpoint timeline and its pickers, one fragment drawing
the checkpoint picked (workbench/checkpoint_view.py) and replay / fork from it
(workbench/time_travel_view.py)."""
from __future__ import annotations


import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.services import ReviewService
from pipeline.state import counted
from workbench import session
from workbench.audit_words import trace_words
from workbench.checkpoint_view import changes_at, compare, compare_key, node_runs
from workbench.literal import escape_markdown, plain
from workbench.incident_reads import redraw_page_if_changed
from workbench.time_travel_view import SCOPE, pick_key, time_travel
from workbench.timeline import FORK_NOTE, PICKED, base_spec, checkpoint_caption, checkpoint_name, checkpoint_numbers, with_selection

HISTORY_WINDOW = 100  # checkpoints the timeline shows at first
CACHED = 64  # reads kept per process (a few incidents' timelines, the checkpoints picked in them)


# Checkpoints are immutable, so what a checkpoint shows (its state, its diff against its parent) is
# the same on every rerun while the incident is unchanged: reading it again on each pick, and
# drawing the chart again, was most of an interaction at a thousand checkpoints. The key names the
# review service (one per data dir), the incident and its version; `_review` is not hashed.
@st.cache_data(max_entries=CACHED, show_spinner=False)
def _tree(_review: ReviewService, where: int, incident_id: str, limit: int, version: tuple) -> dict:
    return _review.tree(incident_id, limit=limit)


@st.cache_data(max_entries=CACHED, show_spinner=False)
def _checkpoint(_review: ReviewService, where: int, incident_id: str, checkpoint_id: str, version: tuple) -> dict:
    return _review.checkpoint(incident_id, checkpoint_id, with_plan=True)  # its state, diff and rerun plan


@st.cache_data(max_entries=CACHED, show_spinner=False)
def _spec(_tree_read: dict, where: int, incident_id: str, limit: int, version: tuple, spacing: str,
          collapse: bool) -> dict:
    return base_spec(_tree_read, spacing=spacing, collapse=collapse)


def checkpoint_names(review: ReviewService, incident_id: str, version: tuple) -> dict[str, str]:
    """Each of the newest checkpoints (History's window) by its number and step, "#5 root cause
    analysis", as the chart names it: the audit's "checkpoint after" column and notes say these."""
    tree = _tree(review, id(review), incident_id, HISTORY_WINDOW, version)  # the History tab's read, cached
    numbers = checkpoint_numbers(tree)
    return {e["checkpoint_id"]: checkpoint_name({**e, "number": numbers[e["checkpoint_id"]]}) for e in tree["nodes"]}


def _chart_key(incident_id: str) -> str:
    return f"incident_timeline_{incident_id}"


def _clicked_checkpoints(event) -> list[str]:
    """The checkpoint ids of the points picked in the timeline (a click picks one, a shift-click adds
    a second: the two are compared). `event` is the chart's selection state: the spec's point
    selection lists the picked points by their checkpoint id, in the order they were clicked."""
    try:
        points = event["selection"][PICKED]
    except (KeyError, TypeError):
        return []
    out = []
    for point in points if isinstance(points, list) else []:
        data = point.get("checkpoint_id") if isinstance(point, dict) else None
        if isinstance(data, str) and data not in out:
            out.append(data)
    return out


def _clicked_checkpoint(event) -> str | None:
    """The checkpoint id of the point clicked in the timeline, if any."""
    picked = _clicked_checkpoints(event)
    return picked[0] if picked else None


def checkpoint_link(incident_id: str, checkpoint_id: str, base_url: str = "") -> str:
    """A URL that opens the incident page's History tab at this checkpoint (backtest_view.take_checkpoint_link)."""
    from urllib.parse import urlencode

    base = (base_url or "").split("?", 1)[0].split("#", 1)[0].rstrip("/")
    base = base.replace(" ", "%20").replace("(", "%28").replace(")", "%29")  # a markdown link's target
    page = base if base.endswith("/incident") else (base + "/incident" if base else "incident")
    return f"{page}?{urlencode({'incident': incident_id, 'checkpoint': checkpoint_id})}"


def _widen(window_key: str, window: int) -> None:
    st.session_state[window_key] = window


@st.fragment
def history(review: ReviewService, incident_id: str, drawn: tuple) -> None:
    """The timeline, the selected checkpoint's state and diff, and replay / fork from it.

    A fragment: picking a checkpoint, clicking the chart or widening the window reruns only this;
    after a replay or fork (the incident's version is no longer `drawn`, the one the page was drawn
    at) the whole page reruns, its header and decision panel change too."""
    try:
        version = redraw_page_if_changed(review, incident_id, drawn)
        _history(review, incident_id, version)
    except IncidentIQError as exc:  # e.g. the checkpoints were pruned meanwhile: said here, nothing else lost
        st.error(escape_markdown(exc.message))


def _history(review: ReviewService, incident_id: str, version: tuple) -> None:
    session.show_messages(SCOPE, toast=True)  # a fork's or replay's result, wherever the page sits
    window_key = f"incident_history_window_{incident_id}"
    window = int(st.session_state.get(window_key) or HISTORY_WINDOW)
    where = id(review)
    # the newest checkpoints only: a thread with a thousand of them keeps the chart and the
    # picker small; older ones come a window at a time
    tree = _tree(review, where, incident_id, window, version)
    entries = sorted(tree["nodes"], key=lambda e: e["checkpoint_id"], reverse=True)
    if not entries:
        st.info("No checkpoint yet: the run has not started.")
        return
    numbers = checkpoint_numbers(tree)  # the chart's axis numbers, said in the pickers too
    by_id = {e["checkpoint_id"]: {**e, "number": numbers[e["checkpoint_id"]]} for e in entries}
    picker = pick_key(incident_id)
    picked = _clicked_checkpoints(st.session_state.get(_chart_key(incident_id)))
    clicked = picked[0] if picked else None
    if picked and picked != st.session_state.get("incident_timeline_applied"):
        st.session_state["incident_timeline_applied"] = picked  # a new click moves the picker once
        st.session_state[picker] = clicked
        if len(picked) > 1 and picked[1] in by_id:  # two points picked: the second is compared
            st.session_state[compare_key(incident_id)] = picked[1]
    next_pick = st.session_state.get("incident_history_next_pick", {}).pop(incident_id, None)
    if next_pick in by_id:
        st.session_state[picker] = next_pick
    elif next_pick:  # a link's checkpoint (a backtest's, a bookmark) that is not here: say so
        st.warning(escape_markdown(
            f"The link's checkpoint {next_pick} is not one of this incident's checkpoints: showing the newest."
            if tree["total"] <= len(entries) else
            f"The link's checkpoint {next_pick} is not among this incident's {len(entries)} newest checkpoints "
            f"(of {tree['total']}): showing the newest (\"Show {HISTORY_WINDOW} older\" below reaches further)."))
    if st.session_state.get(picker) not in by_id:
        st.session_state[picker] = entries[0]["checkpoint_id"]
    selected = st.session_state[picker]

    controls = st.container(horizontal=True, vertical_alignment="center")
    with controls:
        spacing = st.segmented_control("Spacing", ["order", "time"], default="order", required=True,
                                       key="incident_history_spacing", persist_state="session",
                                       help="order: one step apart (a run takes milliseconds); time: real time")
        collapse = st.toggle("Live branch only", key=f"incident_history_collapse_{incident_id}",
                             value=tree["branches"] > 3, help="hide the abandoned branches")
    base = _spec(tree, where, incident_id, window, version, spacing, collapse)
    st.vega_lite_chart(with_selection(base, selected), key=_chart_key(incident_id), on_select="rerun",
                       selection_mode=PICKED, width="stretch")
    hidden = sum(1 for e in entries if not e.get("on_current_branch")) if collapse else 0
    shown = (f"the newest {len(entries)} of {counted(tree['total'], 'checkpoint')}" if tree["total"] > len(entries)
             else counted(len(entries), "checkpoint"))
    st.caption(f"{shown} on {counted(tree['branches'], 'branch', 'branches')}"
               + (f", {hidden} on abandoned branches hidden" if hidden else "")
               + ". Scroll over the chart to zoom, drag to pan, double-click to reset; click a point to pick it "
               "(shift-click a second to compare), or pick a checkpoint below. ◆ live head, ◇ paused at "
               "approval, ★ human action. " + FORK_NOTE)
    if tree["total"] > len(entries):
        st.button(f"Show {HISTORY_WINDOW} older", key="incident_history_older", on_click=_widen,
                  args=(window_key, window + HISTORY_WINDOW))
    st.selectbox("Checkpoint", list(by_id), key=picker, format_func=lambda cid: checkpoint_caption(by_id[cid]))

    detail = _checkpoint(review, where, incident_id, selected, version)
    entry = detail["checkpoint"]
    named = {cid: checkpoint_name(e) for cid, e in by_id.items()}
    changes_at(detail, named[selected])
    if entry.get("trace"):
        st.caption("What the nodes noted")
        st.code(plain("\n".join(trace_words(line) for line in entry["trace"])), language=None, wrap_lines=True)
    node_runs(detail, named)
    compare(review, incident_id, selected, by_id)
    # asked for: the whole state (tens of KB of JSON) was drawn, folded away, on every pick and tab click
    if st.toggle("Show the state at this checkpoint (JSON)", key=f"incident_history_state_{incident_id}"):
        st.json(plain(detail["state"]), expanded=1)
    # a link, not a code block: one element on every pick instead of two and the code block's bundle
    st.markdown(f"[Link to this checkpoint]({checkpoint_link(incident_id, selected, st.context.url)}) "
                f"(opens this tab at it; copy it to share) · its id `{selected}`")
    time_travel(review, incident_id, selected, named[selected], detail["state"], detail["plan"], tree)


