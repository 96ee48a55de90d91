"""The incident page's "Related incidents": past incidents of the same fingerprint (paged) and the
nearest by evidence, each with its status, category, who decided what, the reason or the fix, and when."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.services import ReviewService, related_of
from workbench.literal import escape_markdown, plain

PAGE = 10


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{
        "incident": r["incident_id"], "status": r["status"], "category": r["category"] or "",
        "decided by": ", ".join(r["decided_by"]), "decision": r["decision"] or "",
        "rejection reason / fix approved": r["rejection_reason"] or (
            (r["fix"]["target_file"] or r["fix"]["hash"][:12]) if r["fix"] and r["fix"].get("hash") else ""),
        "when": (r["decided_at"] or r["created_at"] or "")[:16],
        **({"similarity": r["similarity"]} if "similarity" in r else {}),
    } for r in rows])


def related(review: ReviewService, incident_id: str) -> None:
    """An expander: same fingerprint (pages of 10, older on demand) and the nearest by evidence."""
    with st.expander("Related incidents"):
        pages_key = f"incident_related_pages_{incident_id}"
        cursors = st.session_state.setdefault(pages_key, [None])
        try:
            found = related_of(review).related(incident_id, limit=PAGE, before=cursors[-1])
        except IncidentIQError as exc:
            st.error(escape_markdown(exc.message))
            return
        same = found["same_fingerprint"]
        st.markdown("**Same fingerprint** (the same template of the opening line)")
        if same["rows"]:
            st.dataframe(plain(_frame(same["rows"])), hide_index=True, key=f"incident_related_same_{incident_id}")
        else:
            st.caption("No other incident had this fingerprint.")
        older, newer = st.columns(2)
        if same["next"] and older.button("Older", key=f"incident_related_older_{incident_id}"):
            cursors.append(same["next"])
            st.rerun()
        if len(cursors) > 1 and newer.button("Newer", key=f"incident_related_newer_{incident_id}"):
            cursors.pop()
            st.rerun()
        st.markdown("**Nearest by evidence**")
        if found["nearest"]:
            st.dataframe(plain(_frame(found["nearest"])), hide_index=True, key=f"incident_related_near_{incident_id}")
        else:
            st.caption("No past incident's evidence is near this one's (the poller indexes an incident's "
                       "evidence once it has read what its source had).")
