"""Incident: the analysis to review, the decision panel while paused, the evidence, time travel
through the checkpoint history, the state editor, the graph and the audit trail."""
import streamlit as st

from pipeline.errors import IncidentIQError, NotFound
from workbench import session
from workbench.decision_panel import panel
from workbench.graph_view import graph_dot, graph_mermaid
from workbench.history_view import history
from workbench.incident_view import audit, evidence, fix, header, rca, recommendation
from workbench.people_view import people
from workbench.state_editor import editor
from workbench.evidence_view import escape_markdown

workbench = session.workbench()
review = workbench.review


def _open(incident_id: str) -> None:
    st.query_params["incident"] = incident_id


def picker(message: str | None = None) -> None:
    """Choose an incident when the page was opened without one (or with an unknown one)."""
    st.title("Incident")
    if message:
        st.error(escape_markdown(message))
    recent = review.inbox_page(limit=200)["rows"]
    if not recent:
        st.info("No incidents yet.")
        return
    st.selectbox("Incident", [r["incident_id"] for r in recent], key="incident_pick")
    st.button("Open", key="incident_pick_open", on_click=lambda: _open(st.session_state["incident_pick"]))


incident_id = st.query_params.get("incident") or st.session_state.get("incident_current")
if not incident_id:
    picker()
    st.stop()
session.wait_while_acting(incident_id)  # a second click's run shows the first click's result
try:
    doc = review.incident(incident_id)
except NotFound as exc:
    st.session_state.pop("incident_current", None)
    picker(exc.message)
    st.stop()
except IncidentIQError as exc:
    st.error(escape_markdown(exc.message))
    st.stop()
st.session_state["incident_current"] = incident_id
if st.query_params.get("incident") != incident_id:
    st.query_params["incident"] = incident_id

st.page_link("app_pages/inbox.py", label="Back to the inbox", icon=":material/arrow_back:")
header(doc)
main, side = st.columns([3, 2], gap="large")
with side:
    with st.container(border=True):
        st.subheader("Decision")
        panel(review, doc)
with main:
    rca(doc, code_fix_min_confidence=review.code_fix_min_confidence)
    recommendation(doc)
    fix(doc)

evidence_tab, history_tab, state_tab, graph_tab, audit_tab = st.tabs(
    ["Evidence", "History & time travel", "State", "Graph", "Audit trail"], key="incident_tabs")
with evidence_tab:
    evidence(doc)
with history_tab:
    try:
        history(review, incident_id)
    except IncidentIQError as exc:
        st.error(escape_markdown(exc.message))
with state_tab:
    editor(review, doc)
with graph_tab:
    trace = [e.get("node") for e in (doc.get("state") or {}).get("events") or []]
    newest = review.history(incident_id, limit=1)
    current = (newest[0]["next"] or ["__end__"]) if newest else ["__start__"]
    st.graphviz_chart(graph_dot(review.flow(), current=current, visited=trace))
    st.caption("Orange: where the run stands now. Outlined: nodes that ran. Dashed: the router's choices.")
    with st.expander("Mermaid source"):
        st.code(graph_mermaid(review.flow()), language=None)
with audit_tab:
    rows = review.audit(incident_id)
    audit(rows, review.export_audit(incident_id, fmt="csv") if rows else None, incident_id)

people(review, doc)  # who is on it, the approvals so far, and the comments (workbench/people_view.py)
