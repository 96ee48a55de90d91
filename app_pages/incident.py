"""Incident: the analysis to review (findings and the log lines they rest on first), the decision
panel beside it with the fix proposal an approval approves, and, one at a time (only the open tab
is computed), the evidence window, time travel, the state editor, the graph and the audit trail.

The page follows the incident: when its state changes elsewhere (another reviewer decides, new
evidence re-runs the analysis) an open page redraws within LIVE_SECONDS."""
from datetime import timedelta

import streamlit as st

from pipeline.errors import IncidentIQError, NotFound
from pipeline.state import readable_title
from workbench import session
from workbench.decision_panel import panel
from workbench.graph_view import graph_dot, graph_mermaid
from workbench.grouping_view import grouping, links
from workbench.backtest_view import take_checkpoint_link
from workbench.bundle_warmup import warm_history_bundles
from workbench.history_view import checkpoint_names, history
from workbench.incident_reads import PageRun, audit_rows as read_audit, incident_version, redraw_page_if_changed
from workbench.incident_view import audit, evidence, fix, header, rca, recommendation
from workbench.people_view import people
from workbench.provenance import edited_by, status_words
from workbench.related_view import related
from workbench.state_editor import editor
from workbench.literal import escape_markdown

LIVE_SECONDS = 4
INBOX_PAGE = "app_pages/inbox.py"
TABS = ["Evidence", "History & time travel", "State", "Graph", "Audit trail"]

workbench = session.workbench()
review = workbench.review


def _open(incident_id: str) -> None:
    st.query_params["incident"] = incident_id


def _back() -> None:
    """Callback of Back: forget the incident, so neither the URL nor the next visit reopens it, and
    go to the inbox. The switch is made here, in the callback: the run it asks for is the inbox's,
    and this page's script does not run first (switched from the page's top, the click cost a whole
    run of app.py and its sidebar before the inbox's: bench/browser.py)."""
    st.session_state.pop("incident_current", None)
    st.query_params.pop("incident", None)
    st.switch_page(INBOX_PAGE)


@st.fragment(run_every=timedelta(seconds=LIVE_SECONDS))
def follow(incident_id: str, drawn: tuple, page: PageRun) -> None:
    """Redraw the page when the incident changed since it was drawn (records store only: cheap); not
    on the page's own run, which has just read it."""
    if page.fresh() or incident_id in session.acting_registry():
        return  # this session's own action is running; its result redraws the page
    try:
        now = incident_version(review.document(incident_id))
    except IncidentIQError:
        return  # the next full run says what is wrong
    if now != drawn:
        st.rerun()


@st.fragment
def tabs_view(incident_id: str, doc: dict, audit_rows: list[dict], drawn: tuple, page: PageRun) -> None:
    """The tabs, tracked (only the open one runs, the choice kept per incident across reruns) and a
    fragment: a tab click reruns and redraws only this, not the header, the analysis and the
    decision panel above. When the incident changed since the page was drawn (a state edit or a
    replay made in a tab, or a change made elsewhere) the whole page reruns instead; the page's own
    run, which has just read it, does not ask again."""
    session.wait_while_acting(incident_id)
    if not page.fresh():
        redraw_page_if_changed(review, incident_id, drawn)
    tabs = dict(zip(TABS, st.tabs(TABS, key=f"incident_tab_{incident_id}", on_change="rerun")))
    if tabs["Evidence"].open:
        with tabs["Evidence"]:
            evidence(doc)
    if tabs["History & time travel"].open:
        with tabs["History & time travel"]:
            try:
                history(review, incident_id, drawn)
            except IncidentIQError as exc:
                st.error(escape_markdown(exc.message))
    if tabs["State"].open:
        with tabs["State"]:
            editor(review, doc)
    if tabs["Graph"].open:
        with tabs["Graph"]:
            trace = [e.get("node") for e in (doc.get("state") or {}).get("events") or []]
            newest = review.history(incident_id, limit=1)
            current = (newest[0]["next"] or ["__end__"]) if newest else ["__start__"]
            st.graphviz_chart(graph_dot(review.flow(), current=current, visited=trace))
            st.caption("Orange: where the run stands now. Outlined: nodes that ran. Dashed: the router's choices.")
            with st.expander("Mermaid source"):
                st.code(graph_mermaid(review.flow()), language=None)
    if tabs["Audit trail"].open:
        with tabs["Audit trail"]:
            audit(audit_rows, {fmt: review.export_audit(incident_id, fmt=fmt) for fmt in ("csv", "json")}
                  if audit_rows else None, incident_id, doc.get("fix") or doc.get("proposal"),
                  checkpoint_names(review, incident_id, drawn) if audit_rows else None)


def picker(missing: str | None = None) -> None:
    """Choose an incident when the page was opened without one (or with an unknown one, named)."""
    st.button("Back to the inbox", icon=":material/arrow_back:", key="incident_back", type="tertiary", on_click=_back)
    st.title("Incident")
    if missing:
        st.error(escape_markdown(f"The link's incident {missing} was not found here (a mistyped id, another "
                                 "installation's, or one pruned): choose one below, or go back to the inbox."))
    recent = review.inbox_page(limit=200)["rows"]
    if not recent:
        st.info("No incidents yet.")
        return
    titles = {r["incident_id"]: f"{r['incident_id']} · {status_words(r['status'])} · "
                                f"{readable_title(r.get('title') or '')[:80]}" for r in recent}
    st.selectbox("Incident", list(titles), key="incident_pick", format_func=titles.get)
    st.button("Open", key="incident_pick_open", on_click=lambda: _open(st.session_state["incident_pick"]))


incident_id = st.query_params.get("incident") or st.session_state.get("incident_current")
if not incident_id:
    picker()
    st.stop()
session.wait_while_acting(incident_id)  # a second click's run shows the first click's result
try:
    doc = review.incident(incident_id)
except NotFound:
    st.session_state.pop("incident_current", None)
    picker(missing=incident_id)
    st.stop()
except IncidentIQError as exc:
    st.error(escape_markdown(exc.message))
    st.stop()
st.session_state["incident_current"] = incident_id
if st.query_params.get("incident") != incident_id:
    st.query_params["incident"] = incident_id

st.button("Back to the inbox", icon=":material/arrow_back:", key="incident_back", type="tertiary", on_click=_back)
# a link to a checkpoint (?checkpoint=, the Backtests page) opens time travel there; a bad one is said here
take_checkpoint_link(incident_id, review)
follow(incident_id, incident_version(doc), PageRun())
header(doc, sla_from=workbench.settings.sla_from)
links(doc)  # recurred after, split out of, merged into (workbench/grouping_view.py)
audit_rows = read_audit(review, incident_id)  # cached until an entry is added
edited = edited_by(audit_rows)
main, side = st.columns([5, 4], gap="medium")
with side:
    with st.container(border=True):
        st.subheader("Decision")
        panel(review, doc, audit_rows=audit_rows)
with main:
    rca(doc, code_fix_min_confidence=review.code_fix_min_confidence, edited=edited)
    recommendation(doc, edited=edited)
    fix(doc)
    grouping(review, doc)  # split a pattern out, merge another incident in (workbench/grouping_view.py)
# same fingerprint and nearest by evidence (workbench/related_view.py): the page's whole width, its
# table's columns whole (in the left column the similarity and the decision were off to the right)
related(review, incident_id)

tabs_view(incident_id, doc, audit_rows, incident_version(doc), PageRun())

people(review, doc)  # who is on it, the approvals so far, and the comments (workbench/people_view.py)
warm_history_bundles()  # the timeline's JavaScript, loaded while the reviewer reads (workbench/bundle_warmup.py)
