"""The reference pages of bench/browser.py: a plain Streamlit app with the same parts as the
workbench's inbox and incident pages, and no data layer behind them.

`streamlit run bench/reference_app.py`. Each page draws the element kinds the product's page draws,
in the same counts and sizes (bench/browser.py prints both pages' deltas side by side): the inbox's
grid (a 50-row `st.dataframe` with the same columns, row tints and single-row selection), its
filters, buttons, key listener (a v2 component) and refreshing fragment; the incident page's
header, metrics, decision form, findings / similar-docs / evidence tables, quoted lines, expanders
and tabs, and in the History tab a Vega-Lite chart of the same points and layers, a picker and a
diff table. It is written as a plain page would be: every click reruns the whole page (no
fragments, no caches), the tabs are `st.tabs` with `on_change="rerun"` (only the open one drawn,
as the product's), and Back is a button whose rerun switches page. The data are made up here, of
the same sizes as the bench's seeded incidents.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import streamlit as st

ROWS = 50  # the inbox's page
CHECKPOINTS = 7  # an incident paused at approval: input, __start__, intake, retrieval+rag, rca, recommend, propose_fix
NODES = ["input", "__start__", "intake", "retrieval+rag", "rca", "recommend", "propose_fix"]
WINDOW = 12  # the evidence window's lines
LINE = "HikariPool-1 - Connection is not available, request timed out after 30001ms."

st.set_page_config(page_title="Reference", layout="wide")


def sidebar() -> None:
    with st.sidebar:
        st.markdown("**You**")
        st.text_input("Your name", key="ref_name", placeholder="recorded with each decision")
        st.divider()
        st.markdown(":gray[●] **Poller off**")
        st.caption("showing what is in the data dir")
        st.caption("Data dir: /tmp/reference")


def inbox_frame() -> pd.DataFrame:
    now = datetime(2026, 11, 28, tzinfo=timezone.utc)
    return pd.DataFrame([{
        "incident_id": f"INC-20261128-{k:04d}", "title": f"{LINE[:40]} · operation {k}", "status": "awaiting approval",
        "severity": ("critical", "high", "medium", "low")[k % 4], "category": "connection_pool_exhaustion",
        "confidence": (k % 100) / 100, "sla": f"{k % 24}h {k % 60:02d}m left", "service": f"checkout-{k % 9}",
        "people": "", "extent": f"1 pattern · 1 service · {k + 3} events", "seen": "3×", "events": k + 3,
        "age": f"{k}m", "overdue": k % 7 == 0, "escalated": k % 11 == 0, "created": now - timedelta(minutes=k)}
        for k in range(ROWS)])


def styled(frame: pd.DataFrame, chosen: int):
    tints = {i: "background-color: rgba(255, 75, 75, 0.18)" for i in frame.index[frame["overdue"]]}
    tints[chosen] = "background-color: rgba(28, 131, 225, 0.30); font-weight: 600"
    return frame.style.apply(lambda row: [tints[row.name]] * len(row), axis=1, subset=pd.IndexSlice[list(tints), :])


KEYS_JS = "export default function () { return () => {}; }"
keys = st.components.v2.component("ref_keys", js=KEYS_JS)


def inbox() -> None:
    st.title("Reference inbox")
    st.segmented_control("Show", ["Awaiting approval (50)", "In revision (0)", "Analyzing (0)", "Failed (0)",
                                  "Decided (0)", "All (50)"], default="Awaiting approval (50)", required=True,
                         key="ref_filter", width="stretch")
    left, right = st.columns([1, 2])
    left.selectbox("Assignee", ["anyone"], key="ref_assignee")
    right.text_input("Search", key="ref_search", placeholder="service, category, title or incident id")
    st.expander("Filter, sort and columns", key="ref_narrowing", on_change="rerun")
    frame = inbox_frame()
    text = st.column_config.TextColumn
    st.dataframe(styled(frame, 0), key="ref_table", on_select="rerun", selection_mode="single-row", hide_index=True,
                 column_order=("incident_id", "title", "status", "severity", "category", "confidence", "sla"),
                 width="stretch", height=15 * 35 + 38,
                 column_config={"incident_id": text("Incident", pinned=True, width=140), "title": text("Title", width=300),
                                "status": text("Status"), "severity": text("Severity", width=60),
                                "category": text("Category", width=150),
                                "confidence": st.column_config.ProgressColumn("Conf.", min_value=0.0, max_value=1.0,
                                                                              format="%.2f", width=56),
                                "sla": text("SLA", width=100), "events": st.column_config.NumberColumn("Events")})
    st.caption(f"Showing 1–{ROWS} of {ROWS} awaiting approval · select a row to open it · refreshes every 5s")
    bar = st.container(horizontal=True, vertical_alignment="bottom")
    bar.button("Previous", key="ref_prev", icon=":material/chevron_left:", disabled=True)
    bar.markdown("page 1")
    bar.button("Next", key="ref_next", icon=":material/chevron_right:", icon_position="right")
    bar.selectbox("Open incident", list(frame["incident_id"]), key="ref_pick", width=260)
    bar.button("Open", key="ref_open")
    with st.container(key="ref_keys_box"):
        keys(key="ref_listener")
    st.html("<style>.st-key-ref_keys_box{display:none}</style>")
    st.expander("Act on several incidents", key="ref_bulk", on_change="rerun")
    st.markdown("Link to this view (bookmark it to keep it): `?show=awaiting`")


@st.fragment(run_every=5)
def inbox_refreshing() -> None:
    inbox()


def inbox_page() -> None:
    inbox_refreshing()


def header() -> None:
    st.title("INC-REFERENCE-0001")
    st.html(f"<h3 style='margin:0'>{LINE}</h3>")
    badges = st.container(horizontal=True, vertical_alignment="center")
    badges.badge("awaiting approval", color="orange")
    badges.badge("severity critical", color="red")
    badges.text("service checkout-a")
    cols = st.columns(4)
    cols[0].metric("Events", 3)
    cols[1].metric("First seen (UTC)", "10:00:01", help="2026-11-28 10:00:01")
    cols[2].metric("Last seen (UTC)", "10:00:03", help="2026-11-28 10:00:03")
    cols[3].metric("SLA left", "3h 59m", help="due 14:00 UTC")
    st.caption("Seen from 2026-11-28 10:00:01 to 10:00:03 UTC · opened 2026-11-28 10:00:04 UTC · SLA due 14:00 UTC")


def decision() -> None:
    with st.container(border=True):
        st.subheader("Decision")
        st.caption("Deciding on analysis 0123456789ab · 2 revision(s) left")
        st.segmented_control("Decision", ["Approve", "Reject", "Changes", "Edit"], default="Approve", required=True,
                             key="ref_decision")
        st.markdown("**Fix proposal** `0123456789ab`")
        st.caption("Approving approves exactly this proposal (its hash is recorded with the decision)")
        st.info("One approval opens the gate.", icon=":material/group:")
        for i in range(4):
            st.caption(f"Plan step {i + 1} is checked against the evidence.")
        st.text("\n".join(f"• step {i}: set maximum-pool-size from 10 to 20" for i in range(4)))
        st.code("--- a/application.yml\n+++ b/application.yml\n@@ -1 +1 @@\n-maximum-pool-size: 10\n"
                "+maximum-pool-size: 20\n", language="diff", wrap_lines=True)
        with st.form("ref_approve_form", border=False):
            st.text_input("Note (optional)", key="ref_note")
            approved = st.form_submit_button("Approve", type="primary", key="ref_approve")
        if approved or st.session_state.get("ref_approved"):
            st.session_state["ref_approved"] = True
            st.success(f"Approval recorded for {st.session_state.get('ref_name') or 'you'}.")


def analysis() -> None:
    st.subheader("Root cause analysis")
    badges = st.container(horizontal=True, vertical_alignment="center")
    badges.badge("connection_pool_exhaustion", color="violet", icon=":material/category:")
    badges.text("Analyst: offline")
    st.html("<div style='font-size:0.9rem'>confidence <b>82%</b></div>")
    st.text("The connection pool HikariPool-1 was exhausted: requests timed out after 30001 ms waiting for one.")
    st.caption("The analyst named the category from the matched signatures.")
    st.markdown("**Findings**")
    st.dataframe(pd.DataFrame([{"finding": f"finding {i}", "events": "3", "value": f"value {i}", "seen in": "message",
                                "from": "regex"} for i in range(6)]), hide_index=True, width="stretch",
                 key="ref_findings")
    st.markdown("**Evidence it rests on** (3 distinct log lines)")
    st.caption("Highlighted: the findings (bold) and the matched error signatures (tinted).")
    for i in range(3):
        with st.container(border=True):
            head = st.container(horizontal=True, vertical_alignment="center")
            head.caption(f"10:00:0{i + 1} · co-{i + 1} · message · ×1")
            head.button("Context in the log", key=f"ref_context_{i}", type="tertiary", icon=":material/manage_search:")
            st.html(f"<code>{LINE}</code>")
    st.caption("Analyst notes")
    st.text("• the pool's size is named in the evidence")
    st.markdown("**Similar error docs** (the one the analysis rests on first, then by retrieval similarity)")
    st.dataframe(pd.DataFrame([{"score": 0.9 - i / 10, "doc": f"doc-{i}", "category": "connection_pool_exhaustion",
                                "signatures": i, "title": f"Similar doc {i}"} for i in range(5)]),
                 hide_index=True, width="stretch", key="ref_similar",
                 column_config={"score": st.column_config.ProgressColumn("score", min_value=0.0, max_value=1.0)})
    with st.expander("What the similar docs say"):
        st.selectbox("Doc", [f"doc-{i}" for i in range(5)], key="ref_doc")
        st.text("Similar doc 0")
        st.code("Connection is not available", language=None)
        st.text("Remediation")
    st.subheader("Recommendation")
    st.text("Raise the pool's size and find what holds connections.")
    st.text("\n".join(f"{i}. step {i} of the recommendation" for i in range(1, 6)))
    st.caption("risk critical · revision 0")
    st.caption("Reviewer feedback this revision answers: none")
    st.expander("Related incidents")
    st.expander("Grouping: split or merge", icon=":material/call_split:")


def evidence_tab() -> None:
    st.markdown("**Leader**: checkout-a at 10:00:01: " + LINE)
    st.caption("Why it leads: the earliest error")
    st.caption(f"3 triggering events (ticked) in a window of {WINDOW} log lines")
    st.dataframe(pd.DataFrame([{"trigger": i < 3, "time": f"10:00:{i:02d}", "level": "ERROR", "host": f"co-{i}",
                                "service": "checkout-a", "exception": "java.sql.SQLTransientConnectionException",
                                "message": LINE} for i in range(WINDOW)]), hide_index=True, width="stretch",
                 key="ref_evidence")


def spec(selected: int) -> dict:
    points = [{"x": i + 1, "lane": "branch 0 (live)", "label": NODES[i], "kind": "loop"} for i in range(CHECKPOINTS)]
    edges = [{"x": i + 1, "x2": i + 2, "lane": "branch 0 (live)"} for i in range(CHECKPOINTS - 1)]
    return {"height": 80, "autosize": {"type": "fit-x", "contains": "padding"},
            "encoding": {"x": {"field": "x", "type": "quantitative", "title": "checkpoint order"},
                         "y": {"field": "lane", "type": "nominal", "title": None}, "tooltip": {"field": "label"}},
            "layer": [{"data": {"values": edges}, "mark": "rule", "encoding": {"x2": {"field": "x2"}}},
                      {"data": {"values": points}, "mark": {"type": "point", "filled": True},
                       "params": [{"name": "picked", "select": {"type": "point", "fields": ["x"], "on": "click"}}],
                       "encoding": {"color": {"field": "kind", "type": "nominal"}}},
                      {"data": {"values": points}, "mark": {"type": "text", "dy": -14},
                       "encoding": {"text": {"field": "label"}}},
                      {"data": {"values": [points[selected]]}, "mark": {"type": "point", "size": 780}}],
            "usermeta": {"embedOptions": {"renderer": "svg"}}}


def history_tab() -> None:
    controls = st.container(horizontal=True, vertical_alignment="center")
    controls.segmented_control("Spacing", ["order", "time"], default="order", required=True, key="ref_spacing")
    controls.toggle("Live branch only", key="ref_collapse")
    options = [f"#{i + 1} · {NODES[i]} · branch 0 (live) · {i + 1:08x}" for i in range(CHECKPOINTS)]
    chosen = st.session_state.get("ref_checkpoint") or options[-1]
    st.vega_lite_chart(spec(options.index(chosen)), key="ref_timeline", on_select="rerun", selection_mode="picked",
                       width="stretch")
    st.caption(f"{CHECKPOINTS} checkpoints on 1 branch(es). Scroll over the chart to zoom, drag to pan.")
    st.selectbox("Checkpoint", options, index=len(options) - 1, key="ref_checkpoint")
    short = chosen.rsplit(" · ", 1)[1]
    st.markdown(f"**Changes of checkpoint {short} against its parent** (12 fields)")
    st.dataframe(pd.DataFrame([{"field": f"field_{i}", "before": "null", "after": f'"value {i} {short}"'}
                               for i in range(12)]), hide_index=True, width="stretch", key="ref_diff")
    for node in NODES[2:4]:
        st.expander(f"{node} · ran in 3 ms", key=f"ref_run_{node}", on_change="rerun")
    st.code('{"incident_id": "INC-REFERENCE-0001"}', language=None)
    st.button("Replay from here…", key="ref_replay")
    st.expander("Fork from here with edits", key="ref_fork", on_change="rerun")


TABS = ["Evidence", "History & time travel", "State", "Graph", "Audit trail"]


def incident_page() -> None:
    if st.button("Back to the inbox", icon=":material/arrow_back:", key="ref_back", type="tertiary"):
        st.switch_page(PAGES[0])
    header()
    main, side = st.columns([5, 4], gap="medium")
    with side:
        decision()
    with main:
        analysis()
    tabs = dict(zip(TABS, st.tabs(TABS, key="ref_tab", on_change="rerun")))
    if tabs["Evidence"].open:
        with tabs["Evidence"]:
            evidence_tab()
    if tabs["History & time travel"].open:
        with tabs["History & time travel"]:
            history_tab()
    st.subheader("People")
    st.text("Nobody is on it.")
    bar = st.container(horizontal=True)
    bar.button("I'm on it", key="ref_assign", icon=":material/front_hand:")
    bar.button("Unassign", key="ref_unassign", disabled=True)
    st.markdown("**Comments** (0)")
    with st.form("ref_comment_form", border=False):
        st.text_area("Add a comment", key="ref_comment")
        st.caption("At most 4,000 characters.")
        st.form_submit_button("Comment", key="ref_comment_submit")


def banner() -> None:
    st.warning("Demo sign-in: anyone may act as anyone.", icon=":material/badge:")


PAGES = [st.Page(inbox_page, title="Inbox", default=True), st.Page(incident_page, title="Incident", url_path="incident")]
navigation = st.navigation(PAGES)
banner()
sidebar()
navigation.run()
