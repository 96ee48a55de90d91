"""The State tab's view of a state: its fields in the reviewer's words, grouped as the analysis reads
(the incident, the root cause analysis, the recommendation, the fix proposal, the people's part, the
steps that ran), long text wrapped; the raw JSON only behind an expander, for debugging (walkthrough
s59: the tab showed the paused state as JSON, keys like `rca.doc_ids` and `awaiting_approval`)."""
from __future__ import annotations

import streamlit as st

from pipeline.state import counted
from workbench.audit_words import category_words, trace_words
from workbench.literal import analysis_text, doc_titles, plain

RAW_LABEL = "Raw state (JSON, for debugging)"
DECISION_WORDS = {"approve": "approved", "reject": "rejected", "revise": "changes requested", "expire": "expired",
                  "merge": "merged into another incident"}


def _percent(value) -> str:
    return f"{float(value):.0%}" if isinstance(value, (int, float)) else "—"


def _doc_title(doc_id: str) -> str:
    title = doc_titles().get(doc_id)
    return f"\u201c{title}\u201d" if title else doc_id


def _when(value) -> str:
    return str(value or "")[:19].replace("T", " ") + (" UTC" if value else "")


def _fields(pairs: list[tuple[str, str | None]]) -> None:
    """Short fields, one a line: "Category: db pool exhausted"; a value none has is left out."""
    lines = [f"{label}: {value}" for label, value in pairs if value not in (None, "")]
    if lines:
        st.text(plain("\n".join(lines)))


def _long(label: str, text: str | None) -> None:
    """A long text under its label, wrapped (st.text keeps the log's words as text, never markdown)."""
    if text:
        st.caption(label)
        st.text(plain(text))


def _numbered(label: str, items: list) -> None:
    if items:
        st.caption(label)
        st.text(plain("\n".join(f"{n}. {analysis_text(item)}" for n, item in enumerate(items, 1))))


def _evidence_words(events: list[dict]) -> str:
    if not events:
        return "none"
    times = sorted(str(e.get("time") or "") for e in events)
    return f"{counted(len(events), 'event')}, from {_when(times[0])} to {_when(times[-1])}"


def readable_state(state: dict) -> None:
    """A state (an IncidentState's JSON) as labelled sections, then the raw JSON in an expander."""
    st.markdown("**Incident**")
    events = state.get("evidence") or []
    _fields([("Title", plain(state.get("title") or "")), ("Service", plain(state.get("service") or "")),
             ("Severity", state.get("severity")), ("Evidence", _evidence_words(events)),
             ("Log window", counted(len(state.get("log_window") or []), "line"))])
    rca = state.get("rca")
    st.markdown("**Root cause analysis**")
    if not rca:
        st.caption("Not analysed yet.")
    else:
        _fields([("Category", category_words(rca.get("category"))), ("Confidence", _percent(rca.get("confidence"))),
                 ("Analyst", plain(rca.get("analyst") or "")),
                 ("Supported by the evidence", "yes" if rca.get("supported", True) else "no"),
                 ("Rests on", ", ".join(_doc_title(d) for d in rca.get("doc_ids") or [])),
                 ("Findings", ", ".join(f"{f.get('kind', '').replace('_', ' ')} {f.get('value')}"
                                        for f in rca.get("findings") or []))])
        _long("Root cause", analysis_text(rca.get("root_cause") or ""))
        _long("Warning", analysis_text(rca.get("warning") or ""))
        _long("Evidence cited", "\n".join(analysis_text(line) for line in rca.get("evidence") or []))
        _long("Analyst notes", "\n".join(f"• {analysis_text(note)}" for note in rca.get("notes") or []))
    recommendation = state.get("recommendation")
    st.markdown("**Recommendation**")
    if not recommendation:
        st.caption("None yet.")
    else:
        _long("Action", analysis_text(recommendation.get("action") or ""))
        _numbered("Steps", recommendation.get("steps") or [])
        _fields([("Risk", recommendation.get("risk"))])
    st.markdown("**Fix proposal**")
    proposal = state.get("proposal")
    if not proposal:
        st.caption("None: no code fix is proposed for this analysis.")
    else:
        _fields([("File", plain(proposal.get("target_file") or "none: a plan without a diff"))])
        _numbered("Plan", proposal.get("plan") or [])
        if proposal.get("diff"):
            st.caption("Diff")
            st.code(proposal["diff"], language="diff")
    _people(state)
    _steps(state)
    with st.expander(RAW_LABEL):
        st.json(state, expanded=1)


def _people(state: dict) -> None:
    """What people did to this state: their requests for changes and a decision, when there are any."""
    feedback, decision = state.get("feedback") or [], state.get("decision")
    if not feedback and not decision:
        return
    st.markdown("**Reviewers**")
    _numbered("Requests for changes", feedback)
    _fields([("Revisions", str(state.get("revisions") or 0) if feedback else "")])
    if decision:
        _fields([("Decision", DECISION_WORDS.get(decision.get("action"), decision.get("action"))),
                 ("By", plain(decision.get("reviewer") or "")), ("At", _when(decision.get("decided_at"))),
                 ("Approvals", ", ".join(str(a.get("by") or "?") for a in decision.get("approvals") or []))])
        _long("Note", decision.get("note"))


def _steps(state: dict) -> None:
    """The steps that ran, each in words ("Root cause analysis: connection refused, confidence 95%"),
    and the errors the run met."""
    trace = [trace_words(f"{e.get('node')}: {e.get('detail') or ''}".rstrip(": ")) for e in state.get("events") or []]
    _long("Steps that ran", "\n".join(trace))
    _long("Errors", "\n".join(state.get("errors") or []))
