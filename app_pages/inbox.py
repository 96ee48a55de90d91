"""Inbox: incidents awaiting a decision first, by SLA deadline and severity; refreshed in place.

The view (filter, search, assignee, page) is in the URL (?show=decided&q=checkout&page=2): a
reload, a deep link and the browser's Back show the same view. A URL naming no view (the sidebar,
"Back to the inbox") keeps the one this browser session had, and so does a rerun carrying a URL this
session wrote before its last one (the browser not yet at the last: a choice made during a run)."""
from datetime import date, datetime, timezone
from urllib.parse import urlencode

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from pipeline.errors import IncidentIQError
from pipeline.services import SEEN_HELP
from workbench import session
from workbench.inbox_actions import (SCOPE as ACTIONS_SCOPE, bulk_actions, cursor, cursor_box_key, keyboard, picked,
                                     set_cursor)
from workbench.inbox_view import (ANYONE, BACKFILLED_MARK, COLUMN_LABELS, COLUMN_PX, COLUMNS, DEFAULT_FILTER, FILTERS,
                                  PAGE_SIZE, SEVERITY_CHOICES, SORT_LABELS, URL_PARAMS, assignee_choices, filter_count,
                                  filter_label, highlight_overdue, inbox_frame, nothing_shown, reversed_days,
                                  shown_columns, showing_text, view_from_url, view_to_url)
from workbench.literal import escape_markdown, plain

REFRESH_SECONDS = 5
# how long what a key or a bulk action did stays above the table (unless a newer action's replaces it)
ACTION_MESSAGE_SECONDS = 3 * REFRESH_SECONDS
# a fresh data dir's first inbox waits this long at most for the poller's first poll, so it draws what
# that poll found (a fresh demo's first incident) instead of an empty inbox and a refresh later
FIRST_POLL_WAIT_SECONDS = 3.0
# while no incident has come out of its first analysis (a fresh demo: none yet, or the first ones
# still analysing): the first one to await a decision shows at once, not at the next 5 s refresh
EMPTY_REFRESH_SECONDS = 1
INCIDENT_PAGE = "app_pages/incident.py"
# the widgets of "Filter, sort and columns", whose values are the view's
# the URLs this session wrote or took a view from, newest last: one of them on a rerun that is not the
# browser's Back or Forward is a URL the browser had not yet replaced, not a link followed
URLS_REMEMBERED = 50
NARROWING_KEYS = ("inbox_sev", "inbox_service", "inbox_from", "inbox_to", "inbox_sort", "inbox_cols")

workbench = session.workbench()


def _back_to_first_page() -> None:
    st.session_state["inbox_page"] = 1
    st.session_state["inbox_cursors"] = [None]
    st.session_state["inbox_url_problems"] = []  # the reviewer chose a view: the link's complaints are moot


def _to_page(page: int, cursors: list) -> None:
    st.session_state["inbox_page"], st.session_state["inbox_cursors"] = page, cursors


def _open_selected_row() -> None:
    rows = st.session_state["inbox_table"].selection.rows
    shown = st.session_state.get("inbox_shown_ids") or []
    if rows and rows[0] < len(shown):
        st.session_state["inbox_open"] = shown[rows[0]]


def _open_chosen() -> None:
    st.session_state["inbox_open"] = cursor()


def _history_navigation() -> bool:
    """This run is the browser's Back or Forward (Streamlit's rerun says so)."""
    ctx = get_script_run_ctx()
    return bool(ctx and ctx.is_history_navigation)


def _remember_url(params: dict) -> None:
    seen = st.session_state.setdefault("inbox_urls_seen", [])
    if params in seen:
        seen.remove(params)
    seen.append(params)
    del seen[:-URLS_REMEMBERED]


def _view_from_url() -> None:
    """Show the view the URL names when it is a navigation (a reload, a deep link, Back or Forward):
    set into the widgets' keys before they are drawn.

    The browser sends its URL with every rerun, and it takes this session's newest URL only when the
    run that wrote it has reached it: a choice made meanwhile (a sort right after a severity, under
    load) reruns with an older URL of this session's. That is no navigation, and the widgets keep the
    choice: only Back and Forward (whose reruns say so) bring back a URL this session had."""
    params = {k: v for k, v in st.query_params.to_dict().items() if k in URL_PARAMS}
    found = view_from_url(params)
    if found is None:
        return
    if params in (st.session_state.get("inbox_urls_seen") or ()) and not _history_navigation():
        return  # a URL this session wrote: the widgets already hold it or a newer choice
    _remember_url(params)
    view, problems = found
    st.session_state["inbox_filter"] = view["show"]
    st.session_state["inbox_search"] = view["q"]
    st.session_state["inbox_assignee"] = view["assignee"] or ANYONE
    st.session_state["inbox_page"] = view["page"]
    st.session_state["inbox_cursors"] = [None]
    st.session_state["inbox_sev"] = view["sev"]
    st.session_state["inbox_service"] = view["service"] or ""
    st.session_state["inbox_from"] = date.fromisoformat(view["from"]) if view["from"] else None
    st.session_state["inbox_to"] = date.fromisoformat(view["to"]) if view["to"] else None
    st.session_state["inbox_sort"] = view["sort"]
    st.session_state["inbox_cols"] = view["cols"]
    # a link that narrows the view shows how (the filters' expander open), one that does not leaves it
    st.session_state["inbox_narrowing"] = bool(view["sev"] or view["service"] or view["from"] or view["to"]
                                               or view["sort"]) or bool(st.session_state.get("inbox_narrowing"))
    st.session_state["inbox_url_problems"] = [f"In the link, {p}: showing the default instead." for p in problems]


def _view_to_url(view: dict) -> None:
    """Put the view drawn in the URL (dropping anything else, such as a stale ?incident=)."""
    params = view_to_url(view)
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)
    st.session_state["inbox_url_written"] = params
    _remember_url(params)


def _assignee_filter() -> str:
    """Whose incidents to show: anyone's, mine, or one person's (the people on open incidents)."""
    me = session.actor()
    me_id = me.id if me else None
    # the people on open incidents, one index read (not the first 200 open rows with their
    # approvals, recurrence and titles, as before: 8-10 ms of each inbox run at load 11)
    options = assignee_choices(me_id, workbench.review.assignees())
    chosen = st.session_state.get("inbox_assignee")
    if chosen not in options:
        if chosen and chosen != ANYONE:
            st.session_state.setdefault("inbox_url_problems", []).append(
                f"Nobody named {chosen!r} is on an open incident: showing anyone's.")
        st.session_state["inbox_assignee"] = ANYONE  # a person no longer on anything, or signed out
    return st.selectbox("Assignee", options, key="inbox_assignee", on_change=_back_to_first_page, persist_state="session",
                        format_func=lambda v: f"me ({v})" if v == me_id else v)


def _page_cursors(page: int, query: dict) -> tuple[int, list]:
    """The page to show and the cursors the pages up to it start after (keyset paging). A deep link
    to page N walks the N-1 pages before it once; past the last page it shows the last one."""
    cursors = st.session_state.get("inbox_cursors") or [None]
    while len(cursors) < page:
        after = workbench.review.inbox_page(**query, after=cursors[-1], limit=PAGE_SIZE)["next_cursor"]
        if after is None:
            break
        cursors.append(after)
    return min(page, len(cursors)), cursors


def _open_incident() -> None:
    """Go to the incident chosen (a row or the Open button), from a run of the whole page: a page
    switched from within the refreshing fragment could be sent the fragment's next refresh."""
    opening = st.session_state.pop("inbox_open", None)
    if opening:
        st.switch_page(INCIDENT_PAGE, query_params={"incident": opening})


def inbox(empty: bool) -> None:
    """The refreshing part of the page: every EMPTY_REFRESH_SECONDS while every incident (if any) is
    in its first analysis (`empty`), then every REFRESH_SECONDS (the refresh that finds one analysed
    reruns the page, which switches to the slower fragment)."""
    if empty:
        _inbox_while_empty()
    else:
        _inbox_refreshing()


def _empty() -> bool:
    """No incident has been analysed yet: none, or all of them still `analyzing`."""
    return not any(n for status, n in (workbench.review.counts() or {}).items() if status != "analyzing")


@st.fragment(run_every=EMPTY_REFRESH_SECONDS)
def _inbox_while_empty() -> None:
    if st.session_state.get("app_page", "Inbox") == "Inbox" and not _empty():
        st.rerun(scope="app")
    _inbox_body()


@st.fragment(run_every=REFRESH_SECONDS)
def _inbox_refreshing() -> None:
    _inbox_body()


def _inbox_body() -> None:
    if st.session_state.get("app_page", "Inbox") != "Inbox":
        # a refresh that reached the server after the reviewer went to another page: drawing
        # the inbox's elements into that page's tree breaks the browser's page (a blank page)
        return
    if st.session_state.get("inbox_open"):
        st.rerun(scope="app")  # the whole page's run opens it (_open_incident)
    try:
        _inbox()
    except IncidentIQError as exc:  # a refresh runs this alone, outside app.py's guard
        st.error(escape_markdown(exc.message))


def _inbox() -> None:
    now = datetime.now(timezone.utc)
    counts = workbench.review.counts()
    _view_from_url()
    if st.session_state.get("inbox_filter") not in FILTERS:
        st.session_state["inbox_filter"] = DEFAULT_FILTER
    # the counts are in the filters' own words: "Awaiting approval (4)"; the caption under the
    # table repeats them ("Showing 1–4 of 4 awaiting approval")
    label = st.segmented_control("Show", list(FILTERS), required=True, key="inbox_filter", persist_state="session",
                                 on_change=_back_to_first_page, format_func=lambda name: filter_label(name, counts),
                                 width="stretch")
    left, right = st.columns([1, 2])
    with left:
        assignee = _assignee_filter()
    with right:
        search = st.text_input("Search", key="inbox_search", persist_state="session", on_change=_back_to_first_page,
                               placeholder="service, category, title or incident id").strip()
    narrowing = _narrowing()
    query = {"status": list(FILTERS[label]) or None, "search": search or None,
             "assignee": None if assignee == ANYONE else assignee, "severities": narrowing["sev"],
             "service": narrowing["service"], "opened_from": narrowing["from"], "opened_to": narrowing["to"],
             "sort": narrowing["sort"] or None}
    asked = max(1, int(st.session_state.get("inbox_page") or 1))
    page, cursors = _page_cursors(asked, query)
    if page < asked:  # a link past the last page: said once, then the page shown is the one asked for
        st.session_state.setdefault("inbox_url_problems", []).append(
            f"The link's page {asked} is past the last page of this view: showing page {page}, the last.")
    st.session_state["inbox_page"], st.session_state["inbox_cursors"] = page, cursors
    _view_to_url({"show": label, "q": search, "assignee": query["assignee"], "page": page, **narrowing})
    for problem in st.session_state.get("inbox_url_problems") or []:
        st.warning(escape_markdown(problem))
    if reversed_days(narrowing):
        st.warning(reversed_days(narrowing))

    result = workbench.review.inbox_page(**query, after=cursors[page - 1], limit=PAGE_SIZE)
    rows, next_cursor = result["rows"], result["next_cursor"]
    shown = st.session_state["inbox_shown_ids"] = [r["incident_id"] for r in rows]
    overdue = workbench.review.overdue_count(now)
    # what a key or a bulk action did, above the table: also when it emptied the view, and through the
    # refreshes of the next ACTION_MESSAGE_SECONDS (the first may come a moment after the decision's run)
    session.show_messages(ACTIONS_SCOPE, keep_seconds=ACTION_MESSAGE_SECONDS)

    if not rows:
        st.info(nothing_shown(search, narrowing, query["assignee"] is not None))
    else:
        if cursor() not in shown:
            set_cursor(shown[0])
        frame = plain(inbox_frame(rows, now))
        confirm_slot = st.container()  # a key's confirmation (a / r): above the table, where the reviewer looks
        st.dataframe(
            # the chosen row (j / k, the box below) tinted blue where it is read: the keys' cursor
            highlight_overdue(frame, chosen=shown.index(cursor())),
            key="inbox_table", on_select=_open_selected_row, selection_mode="single-row",
            hide_index=True, column_order=narrowing["cols"], width="stretch", height=min(len(rows), 15) * 35 + 38,
            column_config=_column_config())
        narrowed = any(narrowing[k] for k in ("sev", "service", "from", "to"))
        total = filter_count(counts, label) if not search and assignee == ANYONE and not narrowed else None
        first = (page - 1) * PAGE_SIZE + 1
        st.caption(f"{showing_text(first, len(rows), total, label, more=next_cursor is not None)} · "
                   f"SLA overdue (open): {overdue} · escalated rows are amber and bold, other overdue rows red · "
                   f"select a row to open it · refreshes every {REFRESH_SECONDS}s")

    bar = st.container(horizontal=True, vertical_alignment="bottom")
    bar.button("Previous", key="inbox_prev", icon=":material/chevron_left:", disabled=page <= 1,
               on_click=_to_page, args=(page - 1, cursors))
    bar.markdown(f"page {page}")
    bar.button("Next", key="inbox_next", icon=":material/chevron_right:", icon_position="right",
               disabled=next_cursor is None, on_click=_to_page, args=(page + 1, [*cursors[:page], next_cursor]))
    if rows:
        box = cursor_box_key()
        bar.selectbox("Open incident", shown, index=shown.index(cursor()), key=box, width=260,
                      on_change=picked, args=(box,),
                      help="j / k move it, Enter opens it, a / r approve / reject it after a confirmation")
        bar.button("Open", key="inbox_open_button", on_click=_open_chosen)
        keyboard(workbench.review, rows, where=confirm_slot)
        bulk_actions(workbench.review, rows)
    # inline code, not st.code: a code block loads the browser's 1.5 MB syntax highlighter on every
    # inbox load (urlencode leaves no backtick or markup in it)
    st.markdown("Link to this view (bookmark it to keep it): `?"
                + urlencode(st.session_state.get("inbox_url_written") or {}) + "`")


def _column_config() -> dict:
    """The table's columns: their words, and widths that keep the default set in view (COLUMN_PX)."""
    px = COLUMN_PX
    text = st.column_config.TextColumn
    return {
        "incident_id": text("Incident", pinned=True, width=px["incident_id"]),
        "title": text("Title", width=px["title"]),
        "status": text("Status", width=px["status"], help="escalated: past its SLA deadline, and the people to tell were told"),
        "severity": text("Severity", width=px["severity"]),
        "category": text("Category", width=px["category"]),
        "confidence": st.column_config.ProgressColumn("Conf.", min_value=0.0, max_value=1.0, format="%.2f",
                                                      width=px["confidence"], help="confidence"),
        "sla": text("SLA", width=px["sla"], help="time left before the decision is due, or how late it is;"
                    f" {BACKFILLED_MARK} backfilled: its log was past the SLA when opened here (the clock counts"
                    " from then)"),
        "service": text("Service", width=px["service"]),
        "people": text("People", width=px["people"],
                       help="who is on it, and the approvals given so far under the two-person rule"),
        "extent": text("Reach", width=px["extent"],
                       help="its patterns (templates of its errors), the services they came from, its events"),
        "seen": text("Seen", width=px["seen"], help=SEEN_HELP),
        "events": st.column_config.NumberColumn("Events", width=px["events"]),
        "age": text("Age", width=px["age"], help="since the incident was opened"),
    }


def _narrowing() -> dict:
    """The severity, service and opened-on filters, the order and the columns (in an expander)."""
    services = [""] + workbench.review.services()
    if st.session_state.get("inbox_service") not in services:
        if st.session_state.get("inbox_service"):  # a link's service no incident has: said, not silently widened
            st.session_state.setdefault("inbox_url_problems", []).append(
                f"No incident comes from a service named {st.session_state['inbox_service']!r}: showing every service.")
        st.session_state["inbox_service"] = ""
    if st.session_state.get("inbox_sort") not in SORT_LABELS:
        st.session_state["inbox_sort"] = ""
    # the default set, or the columns chosen that still exist (an old session may hold one renamed since)
    st.session_state["inbox_cols"] = shown_columns([c for c in st.session_state.get("inbox_cols") or () if c in COLUMNS])
    # drawn only while open (a closed one reruns the page when opened): its date inputs and selects
    # are ~0.2-0.25 s of the browser's main thread on every load of the inbox; the values are the view's
    # (in the URL), kept while it is closed
    session.keep_values(*NARROWING_KEYS)
    # open or closed as the reviewer left it, opened by a link that narrows the view (_view_from_url) and
    # by a return from another page to a narrowed view (a page switch forgets an expander's state): the
    # reviewer sees how the view is narrowed
    if "inbox_narrowing" not in st.session_state and any(st.session_state.get(k) for k in NARROWING_KEYS[:5]):
        st.session_state["inbox_narrowing"] = True
    box = st.expander("Filter, sort and columns", key="inbox_narrowing", on_change="rerun")
    if box.open:
        with box:
            cells = st.columns(5)
            cells[0].multiselect("Severity", SEVERITY_CHOICES, key="inbox_sev", on_change=_back_to_first_page,
                                 placeholder="any", persist_state="session")
            cells[1].selectbox("Service", services, key="inbox_service", on_change=_back_to_first_page,
                               format_func=lambda v: plain(v) or "any", persist_state="session")
            # the log's own day (its first error's), not the day the workbench read it: the label says which
            logged = ("the day of the incident's first error in its log (UTC), whenever the log was read: an old "
                      "log ingested today is found under its own days")
            cells[2].date_input("Logged from", value=None, key="inbox_from", on_change=_back_to_first_page,
                                help=logged, persist_state="session")
            cells[3].date_input("Logged to", value=None, key="inbox_to", on_change=_back_to_first_page,
                                help=logged, persist_state="session")
            cells[4].selectbox("Sort", list(SORT_LABELS), key="inbox_sort", on_change=_back_to_first_page,
                               format_func=SORT_LABELS.get, persist_state="session")
            st.multiselect("Columns", COLUMNS, key="inbox_cols", format_func=COLUMN_LABELS.get, persist_state="session")
    # the widgets' values (drawn or kept): one reading whether the expander is open or not
    chosen = st.session_state
    opened_from, opened_to = chosen.get("inbox_from"), chosen.get("inbox_to")
    return {"sev": list(chosen.get("inbox_sev") or ()), "service": chosen.get("inbox_service") or None,
            "from": opened_from.isoformat() if opened_from else None,
            "to": opened_to.isoformat() if opened_to else None, "sort": chosen.get("inbox_sort") or "",
            "cols": shown_columns(chosen.get("inbox_cols"))}

_open_incident()
st.title("Inbox")
empty = _empty()
if empty and workbench.await_first_poll(FIRST_POLL_WAIT_SECONDS):
    empty = _empty()  # what the first poll found
inbox(empty)
