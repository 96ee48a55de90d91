"""The read-only parts of the incident page: header, evidence, RCA, recommendation, fix, audit.

Everything that comes from logs or the analyst is shown as text (st.text, st.code, dataframes)
or escaped before it reaches a markdown-rendering element.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from workbench.evidence_view import (EVIDENCE_COLUMNS, evidence_frame, highlight_triggers,
                                     text_heading, with_stack)
from workbench.inbox_view import sla_text

STATUS_COLORS = {"awaiting_approval": "orange", "in_revision": "violet", "analyzing": "blue", "failed": "red",
                 "fix_proposed": "green", "approved": "gray", "rejected": "gray", "expired": "gray"}
SEVERITY_COLORS = {"critical": "red", "high": "orange", "medium": "yellow", "low": "gray"}
STACKS_SHOWN = 20


def header(doc: dict) -> None:
    """Id, title, status, severity, service, first/last seen, event count and SLA."""
    st.title(doc["incident_id"])
    st.html(text_heading(doc.get("title") or ""))
    badges = st.container(horizontal=True, vertical_alignment="center")
    badges.badge(doc["status"].replace("_", " "), color=STATUS_COLORS.get(doc["status"], "blue"))
    badges.badge(f"severity {doc['severity']}", color=SEVERITY_COLORS.get(doc["severity"], "gray"))
    badges.text(f"service {doc['service']}")
    now = datetime.now(timezone.utc)
    cols = st.columns(4)
    cols[0].metric("Events", doc["event_count"])
    cols[1].metric("First seen (UTC)", _clock(doc.get("first_seen")), help=_short_time(doc.get("first_seen")))
    cols[2].metric("Last seen (UTC)", _clock(doc.get("last_seen")), help=_short_time(doc.get("last_seen")))
    cols[3].metric("SLA", sla_text(doc, now), help=f"due {_short_time(doc.get('sla_deadline'))} UTC")
    st.caption(f"Seen from {_short_time(doc.get('first_seen'))} to {_short_time(doc.get('last_seen'))} UTC · "
               f"opened {_short_time(doc.get('created_at'))} UTC")
    if doc.get("last_error"):
        st.error("The run failed; the poller retries it. The error:")
        st.code(doc["last_error"], language=None, wrap_lines=True)  # may quote model or log text


def _clock(value: str | None) -> str:
    return str(value or "—")[11:19] or "—"


def _short_time(value: str | None) -> str:
    return str(value or "—")[:19].replace("T", " ")


def evidence(doc: dict) -> None:
    """The log window as a table with the incident's own events tinted, and their stack traces."""
    frame = evidence_frame(doc.get("log_window") or [], doc.get("evidence") or [])
    st.caption(f"{int(frame['trigger'].sum())} triggering events (tinted) in a window of {len(frame)} log lines")
    st.dataframe(highlight_triggers(frame), hide_index=True, width="stretch", key="incident_evidence_table",
                 column_order=EVIDENCE_COLUMNS,
                 column_config={"trigger": st.column_config.CheckboxColumn("Trigger", help="this incident's own event"),
                                "message": st.column_config.TextColumn("Message", width="large")})
    stacks = with_stack(doc.get("evidence") or []) or with_stack(doc.get("log_window") or [])
    if stacks:
        with st.expander(f"Stack traces ({len(stacks)} distinct)", expanded=len(stacks) == 1):
            # options are plain text (not markdown), so log text may name them
            chosen = st.selectbox("Stack trace of", range(len(stacks)), key="incident_stack_pick",
                                  format_func=lambda i: _event_name(stacks[i]))
            st.code(stacks[chosen]["stack"], language=None, wrap_lines=True)


def _event_name(event: dict) -> str:
    return (f"{str(event.get('time'))[11:23]} · {event.get('host') or '?'} · "
            f"{event.get('exception') or event.get('level') or 'error'}")


def confidence_gauge(confidence: float, threshold: float) -> go.Figure:
    """The RCA's confidence, with the code-fix threshold marked."""
    fig = go.Figure(go.Indicator(
        mode="gauge+number", value=round(confidence * 100), number={"suffix": "%"},
        gauge={"axis": {"range": [0, 100], "tickvals": [0, 25, 50, 75, 100]}, "bar": {"color": "#4c78a8"},
               "steps": [{"range": [0, threshold * 100], "color": "#f3f3f3"}],
               "threshold": {"line": {"color": "#e45756", "width": 3}, "value": threshold * 100}},
        title={"text": "confidence", "font": {"size": 14}}))
    fig.update_layout(height=190, margin={"l": 30, "r": 30, "t": 40, "b": 0})
    return fig


def rca(doc: dict, *, code_fix_min_confidence: float) -> None:
    """Category, root cause, confidence gauge, the evidence it rests on and the similar docs."""
    st.subheader("Root cause analysis")
    found = doc.get("rca")
    if not found:
        st.info("No analysis yet: the run has not reached the RCA.")
        return
    if found.get("warning"):
        # plain text: the warning names what the model answered
        st.text(f"⚠ {found['warning']}")
    left, right = st.columns([3, 2])
    with left:
        st.badge(found["category"], color="violet", icon=":material/category:")
        st.text(f"Analyst: {found.get('analyst') or 'offline'}")
        st.text(found["root_cause"])
        if found.get("findings"):
            st.caption("Findings")
            st.text("\n".join(f"• {f['kind']}: {f['value']} ({len(f.get('event_ids') or [])} events)"
                              for f in found["findings"]))
        st.caption("Evidence it rests on (log lines)")
        st.text("\n".join(f"• {line}" for line in found.get("evidence") or []) or "none")
        if found.get("notes"):
            st.caption(" · ".join(found["notes"]))
    with right:
        st.plotly_chart(confidence_gauge(found["confidence"], code_fix_min_confidence), key="incident_gauge",
                        config={"displayModeBar": False})
        st.caption(f"The red mark is the code-fix threshold ({code_fix_min_confidence:.2f}).")
    similar_docs(doc.get("similar_docs") or [])


def similar_docs(docs: list[dict]) -> None:
    st.caption("Similar error docs (retrieval similarity)")
    if not docs:
        st.text("none")
        return
    st.dataframe(pd.DataFrame([{"doc": d["doc_id"], "score": d["score"], "category": d["category"],
                                "signatures found": len(d.get("matched_signatures") or []), "title": d["title"]}
                               for d in docs]),
                 hide_index=True, width="stretch", key="incident_similar_table",
                 column_config={"score": st.column_config.ProgressColumn("score", min_value=0.0, max_value=1.0,
                                                                         format="%.2f")})
    with st.expander("What the similar docs say"):
        chosen = st.selectbox("Doc", range(len(docs)), key="incident_doc_pick",
                              format_func=lambda i: f"{docs[i]['doc_id']} · {docs[i]['score']:.2f}")
        doc = docs[chosen]
        st.text(doc["title"])
        if doc.get("matched_signatures"):
            st.caption("Signatures found in the evidence")
            st.code("\n".join(doc["matched_signatures"]), language=None)
        st.text(doc.get("root_cause") or "")
        if doc.get("remediation"):
            st.caption("Remediation")
            st.text("\n".join(f"• {step}" for step in doc["remediation"]))


def recommendation(doc: dict) -> None:
    st.subheader("Recommendation")
    rec = doc.get("recommendation")
    if not rec:
        st.info("No recommendation yet.")
        return
    st.text(rec["action"])
    if rec.get("steps"):
        st.text("\n".join(f"{i}. {step}" for i, step in enumerate(rec["steps"], 1)))
    st.caption(f"risk {rec.get('risk')} · revision {rec.get('revision', 0)}")
    if rec.get("feedback"):
        st.caption("Reviewer feedback this revision answers")
        st.text(rec["feedback"])


def fix(doc: dict) -> None:
    """The fix proposal, its diff rendered as a diff: before approval the one an approval approves,
    after it the recorded one (the same hash). A proposal is never said to have fixed anything."""
    recorded = doc.get("fix")
    proposal = recorded or (doc.get("proposal") if doc.get("status") == "awaiting_approval" else None)
    if not proposal:
        if doc.get("status") == "awaiting_approval" and doc.get("fix_ineligible_reason"):
            st.subheader("Fix proposal")
            st.caption(f"None: {doc['fix_ineligible_reason']}. An approval records the analysis only.")
        return
    st.subheader("Fix proposal")
    st.caption(("Recorded on approval; nothing was applied to any repository" if recorded
                else "Approving approves exactly this proposal") + f" · proposal {str(proposal.get('hash') or '')[:12]}")
    if proposal.get("plan"):
        st.text("\n".join(f"• {step}" for step in proposal["plan"]))
    if proposal.get("diff"):
        st.caption(f"Proposed change to {proposal.get('target_file') or 'the code'}")
        st.code(proposal["diff"], language="diff")


def audit(rows: list[dict], export_csv: str | None, incident_id: str) -> None:
    """Every human action on this incident, with its before/after values."""
    if not rows:
        st.info("No human action yet.")
        return
    frame = pd.DataFrame([{"at": str(r["at"])[:19].replace("T", " "), "reviewer": r["reviewer"], "action": r["action"],
                           "note": r.get("note") or "", "before": json.dumps(r.get("before"), default=str),
                           "after": json.dumps(r.get("after"), default=str),
                           "checkpoint after": (r.get("checkpoint_after") or "")[-8:]} for r in rows])
    st.dataframe(frame, hide_index=True, width="stretch", key="incident_audit_table")
    if export_csv is not None:
        st.download_button("Download audit (CSV)", export_csv, file_name=f"{incident_id}-audit.csv", mime="text/csv",
                           key="incident_audit_download", on_click="ignore")
