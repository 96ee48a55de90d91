"""The incident page's "Related incidents": past incidents of the same fingerprint (paged) and the
nearest by evidence, each with its status, category, who decided what, the reason or the fix, and when.
A row selected opens that incident on this page."""
from __future__ import annotations

import functools

import pandas as pd
import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.services import ReviewService, related_of
from workbench.inbox_view import status_text
from workbench.literal import escape_markdown, plain

PAGE = 10


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{
        "incident": r["incident_id"], "title": r.get("title") or "", "status": status_text(r["status"]),
        "category": r["category"] or "",
        "decided by": ", ".join(r["decided_by"]), "decision": r["decision"] or "",
        "rejection reason / fix approved": r["rejection_reason"] or (
            (r["fix"]["target_file"] or r["fix"]["hash"][:12]) if r["fix"] and r["fix"].get("hash") else ""),
        "when": (r["decided_at"] or r["created_at"] or "")[:16],
        **({"similarity": r["similarity"]} if "similarity" in r else {}),
    } for r in rows])


def _follow(key: str, ids: list[str]) -> None:
    """A row of a related table was selected: open that incident (the URL names it, so Back returns)."""
    rows = st.session_state[key].selection.rows
    if rows and rows[0] < len(ids):
        st.query_params["incident"] = ids[rows[0]]


def _table(rows: list[dict], key: str) -> None:
    ids = [r["incident_id"] for r in rows]
    st.dataframe(plain(_frame(rows)), hide_index=True, key=key, on_select=functools.partial(_follow, key, ids),
                 selection_mode="single-row",
                 column_config={"title": st.column_config.TextColumn("title", width="medium"),
                                "similarity": st.column_config.NumberColumn(
                                    "similarity", format="%.2f",
                                    help="the share of this incident's error words the other's errors use too, "
                                         "rare words counting most")})


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
        st.markdown("**Same fingerprint** (the same template of the opening line; select a row to open it)")
        if same["rows"]:
            _table(same["rows"], f"incident_related_same_{incident_id}")
        else:
            st.caption("No other incident had this fingerprint.")
        older, newer = st.columns(2)
        if same["next"] and older.button("Older", key=f"incident_related_older_{incident_id}"):
            cursors.append(same["next"])
            st.rerun()
        if len(cursors) > 1 and newer.button("Newer", key=f"incident_related_newer_{incident_id}"):
            cursors.pop()
            st.rerun()
        st.markdown("**Nearest by evidence** (other incidents whose errors are told in the same words; "
                    "select a row to open it)")
        if found["nearest"]:
            _table(found["nearest"], f"incident_related_near_{incident_id}")
        else:
            st.caption("No past incident's evidence is near this one's (the poller indexes an incident's "
                       "evidence once it has read what its source had).")
