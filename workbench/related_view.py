"""The incident page's "Related incidents": past incidents of the same fingerprint (paged) and the
nearest by evidence, each with its status, category, who decided what, the reason or the fix, and when.
A row selected opens that incident on this page."""
from __future__ import annotations

import functools

import pandas as pd
import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.services import ReviewService, related_of
from workbench.audit_words import ACTION_WORDS, category_words
from workbench.inbox_view import status_text, told_apart
from workbench.literal import escape_markdown, plain

PAGE = 10


def when_words(value) -> str:
    """A stored time as the rest of the page writes it ("2026-12-06 16:28 UTC"), never ISO's T."""
    text = str(value or "")[:16].replace("T", " ")
    return f"{text} UTC" if text else ""


# the log's time, as the header's "First seen (UTC)" and the evidence say it: not when it was opened here
WHEN = "first seen (log, UTC)"
# what a related incident may not have yet (no decision): a column empty in every row is dropped
_OPTIONAL = ("decision", "decided by", "rejection reason / fix approved")
# pixel widths the incident's id ("INC-20261128-c890ef") and the time ("2026-12-06 16:28 UTC") fit in
# (a walkthrough read "INC-202611" and "2026-12-06" at 1440 px)
WIDTHS = {"incident": 170, "similarity": 80, WHEN: 140, "near by": 190}


def _frame(rows: list[dict]) -> pd.DataFrame:
    """A row per related incident, what a reviewer compares first (how near, what was decided) left,
    beside its title: in the page's left column the similarity and the decision were off to the right.
    A column no row has a value in (no related incident decided yet) is left out."""
    frame = _full_frame(rows)
    return frame.drop(columns=[c for c in _OPTIONAL if c in frame.columns and not frame[c].astype(bool).any()])


def _full_frame(rows: list[dict]) -> pd.DataFrame:
    # titles alike in the column's first characters (one error on several days) said by what tells them
    # apart, as the inbox says them; the column shows ~30 characters at 1440 px, so one first word leads
    titles = told_apart([r.get("title") or "" for r in rows], lead_words=1)
    return pd.DataFrame([{
        "incident": r["incident_id"],
        # said with how near, in one column: a row near by its cause was not measured by its words, and its
        # similarity read "0.00", as if measured and found unlike (walkthrough s58; one column fewer fits 1440 px)
        **({"near by": _near_by(r)} if "near_by" in r else {"similarity": r["similarity"]} if "similarity" in r
           else {}),
        "title": title, "status": status_text(r["status"]),
        "decision": ACTION_WORDS.get(str(r["decision"] or ""), str(r["decision"] or "").replace("_", " ")), "category": category_words(r["category"]),
        "decided by": ", ".join(r["decided_by"]),
        WHEN: when_words(r.get("first_seen") or r["created_at"]).removesuffix(" UTC"),
        "rejection reason / fix approved": r["rejection_reason"] or (
            (r["fix"]["target_file"] or r["fix"]["hash"][:12]) if r["fix"] and r["fix"].get("hash") else ""),
    } for r, title in zip(rows, titles)])


def _near_by(row: dict) -> str:
    """Why a row is near: its errors' words, or an analysis naming the same cause (its category in words)."""
    if row["near_by"] == "cause":
        return f"same cause: {str(row['category'] or '').replace('_', ' ')}"
    return f"same error words ({row['similarity']:.2f})" if row.get("similarity") is not None else "same error words"


def _follow(key: str, ids: list[str]) -> None:
    """A row of a related table was selected: open that incident (the URL names it, so Back returns)."""
    rows = st.session_state[key].selection.rows
    if rows and rows[0] < len(ids):
        st.query_params["incident"] = ids[rows[0]]


def _table(rows: list[dict], key: str) -> None:
    ids = [r["incident_id"] for r in rows]
    st.dataframe(plain(_frame(rows)), hide_index=True, key=key, on_select=functools.partial(_follow, key, ids),
                 selection_mode="single-row",
                 width="stretch",
                 column_config={"incident": st.column_config.TextColumn("incident", width=WIDTHS["incident"]),
                                "title": st.column_config.TextColumn("title", width="medium"),
                                "near by": st.column_config.TextColumn(
                                    "near by", width=WIDTHS["near by"],
                                    help="the same error words (with the share of this incident's error words the "
                                         "other's errors use too, rare words counting most), or an analysis naming "
                                         "the same cause"),
                                WHEN: st.column_config.TextColumn(WHEN, width=WIDTHS[WHEN],
                                                                  help="when its first event was logged"),
                                "similarity": st.column_config.NumberColumn(
                                    "similarity", format="%.2f", width=WIDTHS["similarity"],
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
        st.markdown("**Nearest by evidence** (other incidents whose errors are told in the same words, then "
                    "those whose analysis names the same cause; select a row to open it)")
        if found["nearest"]:
            _table(found["nearest"], f"incident_related_near_{incident_id}")
        else:
            st.caption("No other incident's errors are told in the same words or analysed as the same cause "
                       "(the poller indexes an incident's evidence once it has read what its source had).")
