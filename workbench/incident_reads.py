"""The incident page's reads that a rerun would otherwise repeat, cached per process: the audit
is append-only, so its rows are kept under its mark (entries, newest id); a thread with a thousand
checkpoints has hundreds of audit entries, read and decoded on every click before."""
from __future__ import annotations

import streamlit as st

from pipeline.services import ReviewService

CACHED = 64


def incident_version(doc: dict) -> tuple:
    """What the page drew of an incident (its `document`): anything that adds a checkpoint or a
    decision changes it, so reads cached under it never show a stale history."""
    pending = doc.get("pending") or {}
    return (doc.get("status"), doc.get("updated_at"), pending.get("interrupt_id"), doc.get("event_count"),
            doc.get("revisions"), len(doc.get("approvals") or []), len(doc.get("comments") or []))


@st.cache_data(max_entries=CACHED, show_spinner=False)
def _audit(_review: ReviewService, where: int, incident_id: str, mark: tuple) -> list[dict]:
    return _review.audit(incident_id)


def audit_rows(review: ReviewService, incident_id: str) -> list[dict]:
    """Every human action on the incident, oldest first (`review.audit`), read again only when one was added."""
    return _audit(review, id(review), incident_id, review.audit_mark(incident_id))


class PageRun:
    """Given to a fragment of the incident page with the version the page drew. Fresh on the call
    the page's own run makes: that run read the incident a moment before, so checking the version
    again there is the same read twice (two of every click's reruns' reads, approve's too). A
    fragment's own reruns (its timer, a click in it) are made with the same arguments, this same
    object, no longer fresh: they check."""

    def __init__(self) -> None:
        self._fresh = True

    def fresh(self) -> bool:
        fresh, self._fresh = self._fresh, False
        return fresh


def redraw_page_if_changed(review: ReviewService, incident_id: str, drawn: tuple) -> tuple:
    """In a fragment of the incident page (the tabs, the history): the incident's version now, and a
    rerun of the whole page when it is not `drawn`, the version the page was drawn at. A fragment
    reruns alone, so after a state edit, a replay or a fork made in it (or a change made elsewhere)
    the header and the decision panel above would otherwise show the incident as it was."""
    now = incident_version(review.document(incident_id))
    if now != drawn:
        st.rerun(scope="app")
    return now
