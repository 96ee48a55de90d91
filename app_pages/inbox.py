"""Inbox: incidents awaiting a decision first, by SLA deadline and severity; refreshed in place."""
from datetime import datetime, timezone

import streamlit as st

from pipeline.errors import IncidentIQError
from workbench import session
from workbench.inbox_view import (ANYONE, COLUMNS, FILTERS, PAGE_SIZE, assignee_choices, filter_count,
                                  highlight_overdue, inbox_frame)
from workbench.evidence_view import escape_markdown

REFRESH_SECONDS = 5
OPEN = ["analyzing", "awaiting_approval", "in_revision", "failed"]
INCIDENT_PAGE = "app_pages/incident.py"

workbench = session.workbench()


def _back_to_first_page() -> None:
    st.session_state["inbox_page"] = 1
    st.session_state["inbox_cursors"] = [None]


def _page_start(page: int) -> str | None:
    """Where a page starts: the cursor the page before it ended with (keyset paging)."""
    cursors = st.session_state.get("inbox_cursors") or [None]
    return cursors[page - 1] if page - 1 < len(cursors) else None


def _open_selected_row() -> None:
    rows = st.session_state["inbox_table"].selection.rows
    shown = st.session_state.get("inbox_shown_ids") or []
    if rows and rows[0] < len(shown):
        st.session_state["inbox_open"] = shown[rows[0]]


def _open_chosen() -> None:
    st.session_state["inbox_open"] = st.session_state.get("inbox_pick")


def _counts_row(counts: dict[str, int], overdue: int) -> None:
    cols = st.columns(len(FILTERS))
    for col, label in zip(cols, [*FILTERS][:-1]):
        col.metric(label.capitalize(), filter_count(counts, label))
    cols[-1].metric("Overdue (open)", overdue)


def _assignee_filter() -> str:
    """Whose incidents to show: anyone's, mine, or one person's (the people on open incidents)."""
    me = session.actor()
    me_id = me.id if me else None
    people = [r["assignee"] for r in workbench.review.inbox(status=OPEN, limit=200) if r.get("assignee")]
    options = assignee_choices(me_id, people)
    if st.session_state.get("inbox_assignee") not in options:
        st.session_state["inbox_assignee"] = ANYONE  # a person no longer on anything, or signed out
    return st.selectbox("Assignee", options, key="inbox_assignee", on_change=_back_to_first_page, persist_state="session",
                        format_func=lambda v: f"me ({v})" if v == me_id else v)


@st.fragment(run_every=REFRESH_SECONDS)
def inbox() -> None:
    opening = st.session_state.pop("inbox_open", None)
    if opening:
        st.switch_page(INCIDENT_PAGE, query_params={"incident": opening})
    try:
        _inbox()
    except IncidentIQError as exc:  # a refresh runs this alone, outside app.py's guard
        st.error(escape_markdown(exc.message))


def _inbox() -> None:
    now = datetime.now(timezone.utc)
    counts = workbench.review.counts()
    _counts_row(counts, workbench.review.overdue_count(now))

    left, middle, right = st.columns([3, 1, 2])
    with left:
        label = st.segmented_control("Show", list(FILTERS), default="awaiting", required=True, key="inbox_filter",
                                     persist_state="session", on_change=_back_to_first_page)
    with middle:
        assignee = _assignee_filter()
    with right:
        search = st.text_input("Search", key="inbox_search", persist_state="session", on_change=_back_to_first_page,
                               placeholder="service, category or incident id").strip()
    page = int(st.session_state.get("inbox_page") or 1)
    if page > len(st.session_state.get("inbox_cursors") or [None]):
        page = st.session_state["inbox_page"] = 1  # the cursors went with a new session: start over
    statuses = list(FILTERS[label]) or None
    result = workbench.review.inbox_page(status=statuses, search=search or None, after=_page_start(page),
                                         limit=PAGE_SIZE, assignee=None if assignee == ANYONE else assignee)
    rows, next_cursor = result["rows"], result["next_cursor"]
    more = next_cursor is not None
    st.session_state["inbox_shown_ids"] = [r["incident_id"] for r in rows]

    if not rows:
        st.info("No incidents here." if not search else "No incident matches this search.")
    else:
        frame = inbox_frame(rows, now)
        st.dataframe(
            highlight_overdue(frame), key="inbox_table", on_select=_open_selected_row, selection_mode="single-row",
            hide_index=True, column_order=COLUMNS, width="stretch", height=min(len(rows), 15) * 35 + 38,
            column_config={
                "incident_id": st.column_config.TextColumn("Incident"),
                "service": st.column_config.TextColumn("Service"),
                "severity": st.column_config.TextColumn("Severity"),
                "category": st.column_config.TextColumn("Category"),
                "confidence": st.column_config.ProgressColumn("Confidence", min_value=0.0, max_value=1.0,
                                                              format="%.2f"),
                "events": st.column_config.NumberColumn("Events"),
                "age": st.column_config.TextColumn("Age"),
                "sla": st.column_config.TextColumn("SLA", help="time left before the decision is due"),
                "status": st.column_config.TextColumn("Status"),
                "approvals": st.column_config.TextColumn("Approvals", help="two-person rule: approvals given so far"),
                "assignee": st.column_config.TextColumn("Assignee"),
                "title": st.column_config.TextColumn("Title", width="large"),
            })
        total = filter_count(counts, label) if not search and assignee == ANYONE else None
        first = (page - 1) * PAGE_SIZE + 1
        shown = f"{first}–{first + len(rows) - 1}" + (f" of {total}" if total is not None else "")
        st.caption(f"Showing {shown} · escalated rows are amber and bold, other overdue rows red · "
                   "select a row to open it · "
                   f"refreshes every {REFRESH_SECONDS}s")

    bar = st.container(horizontal=True, vertical_alignment="bottom")
    if bar.button("Previous", key="inbox_prev", icon=":material/chevron_left:", disabled=page <= 1):
        st.session_state["inbox_page"] = page - 1
        st.rerun(scope="fragment")
    bar.markdown(f"page {page}")
    if bar.button("Next", key="inbox_next", icon=":material/chevron_right:", icon_position="right",
                  disabled=not more):
        cursors = (st.session_state.get("inbox_cursors") or [None])[:page]
        st.session_state["inbox_cursors"] = [*cursors, next_cursor]
        st.session_state["inbox_page"] = page + 1
        st.rerun(scope="fragment")
    if rows:
        bar.selectbox("Open incident", [r["incident_id"] for r in rows], key="inbox_pick", width=260)
        bar.button("Open", key="inbox_open_button", on_click=_open_chosen)


st.title("Inbox")
inbox()
