"""Where an incident came from and what came from it ("recurred after INC-… was approved", "split
out of INC-…", "merged into INC-…"), and the Grouping panel of a paused incident: split a member
pattern out into an incident of its own, or merge another paused incident into this one. Both need
a reason; the analysis is redone on the evidence that results (CONTRACT §2)."""
from __future__ import annotations

import streamlit as st

from pipeline.errors import Conflict, IncidentIQError
from pipeline.services import ReviewService
from pipeline.state import counted, readable_title
from workbench import session
from workbench.literal import escape_markdown

MERGE_CHOICES = 50  # the paused incidents offered to merge in (the queue's first page)


def links(doc: dict) -> None:
    """The incident's link, and the incidents linked to it, each a link to its page."""
    link = doc.get("link")
    if link:
        st.info(escape_markdown(link["text"][:1].upper() + link["text"][1:]), icon=":material/link:")
        st.page_link("app_pages/incident.py", label=f"Open {link['incident_id']}",
                     query_params={"incident": link["incident_id"]})
    for other in doc.get("linked_from") or []:
        st.caption(escape_markdown(other["text"]))


@st.cache_data(max_entries=64, show_spinner=False)
def _patterns(_review: ReviewService, incident_id: str, version: str) -> list[dict]:
    """The incident's member patterns but the one it was opened with, as of `version` (its
    updated_at): read once per change, not on every rerun of the page."""
    return [p for p in _review.patterns(incident_id) if not p["opening"]]


def _key(incident_id: str, what: str) -> str:
    return f"grouping_{incident_id}_{what}"


def _act(review: ReviewService, incident_id: str, action: str, shown: str | None, others: dict[str, str]) -> None:
    """Callback of Split and Merge: read the form, call the service, keep the message to show. Each
    names the analyses the page showed (`shown`: this incident's interrupt; `others`: each offered
    incident's), so one that changed since is refused, as a decision is."""
    values = st.session_state
    reviewer = session.actor()
    acting = session.acting_registry()
    reason = (values.get(_key(incident_id, f"{action}_reason")) or "").strip()
    choice = values.get(_key(incident_id, f"{action}_choice"))
    label = "Split" if action == "split" else "Merge"
    out: tuple[str, str]
    if reviewer is None:
        out = ("error", f"{label} not sent: sign in or enter your name in the sidebar first.")
    elif not choice:
        out = ("error", f"{label} not sent: choose {'a pattern' if action == 'split' else 'an incident'} first.")
    else:
        try:
            with session.acting_on(acting, incident_id):
                if action == "split":
                    done = review.split(incident_id, pattern=choice, reason=reason, actor=reviewer,
                                        expect_interrupt=shown)
                    out = ("success", f"Split out as {done['split']['incident_id']}; both are analysed again.")
                else:
                    review.merge(choice, into=incident_id, reason=reason, actor=reviewer,
                                 expect_interrupt=others.get(choice), expect_into_interrupt=shown)
                    out = ("success", f"{choice} merged into this incident; its analysis is redone on both's events.")
        except Conflict as exc:
            out = ("warning", f"{label} not applied: {exc.message}")
        except IncidentIQError as exc:
            out = ("error", f"{label} not sent: {exc.message}")
    values[_key(incident_id, "said")] = out


def grouping(review: ReviewService, doc: dict) -> None:
    """The Grouping panel: only while the incident waits for a decision."""
    incident_id = doc["incident_id"]
    said = st.session_state.pop(_key(incident_id, "said"), None)
    if said:
        getattr(st, said[0])(escape_markdown(said[1]))
    if doc["status"] != "awaiting_approval":
        return
    blocked = session.blocked("split")
    shown = (doc.get("pending") or {}).get("interrupt_id")
    with st.expander("Grouping: split or merge", icon=":material/call_split:"):
        if blocked:
            st.caption(escape_markdown(blocked))
        patterns = (_patterns(review, incident_id, str(doc.get("updated_at")))
                    if (doc.get("pattern_count") or 0) > 1 else [])
        if patterns:
            with st.form(_key(incident_id, "split_form"), border=False):
                st.selectbox("Pattern to split out", [p["pattern"] for p in patterns], key=_key(incident_id, "split_choice"),
                             format_func=lambda p: next(f"{counted(x['events'], 'event')} · {x['example'][:80]}"
                                                        for x in patterns if x["pattern"] == p))
                st.text_input("Reason for the split", key=_key(incident_id, "split_reason"), placeholder="why it is another problem")
                st.form_submit_button("Split out", disabled=bool(blocked), key=_key(incident_id, "split"),
                                      on_click=_act, args=(review, incident_id, "split", shown, {}))
        else:
            st.caption("One pattern: nothing to split out (the pattern it was opened with stays).")
        others = [r for r in review.inbox_page(status="awaiting_approval", limit=MERGE_CHOICES)["rows"]
                  if r["incident_id"] != incident_id]
        titles = {r["incident_id"]: f"{r['incident_id']} · {r['service']} · {readable_title(r['title'])[:60]}" for r in others}
        with st.form(_key(incident_id, "merge_form"), border=False):
            st.selectbox("Merge into this incident", list(titles), key=_key(incident_id, "merge_choice"),
                         format_func=lambda i: titles.get(i, i), index=None, placeholder="another paused incident")
            st.text_input("Reason for the merge", key=_key(incident_id, "merge_reason"), placeholder="why it is the same outage")
            st.caption("Its events and patterns become this incident's, this analysis is redone on them all, "
                       "and it ends merged.")
            st.form_submit_button("Merge in", disabled=bool(blocked) or not titles, key=_key(incident_id, "merge"),
                                  on_click=_act, args=(review, incident_id, "merge", shown,
                                                                    {r["incident_id"]: r["pending_interrupt_id"] for r in others}))
