"""The decision panel of a paused incident: approve (beside the fix proposal it approves), reject,
request changes (with every request and what each revision changed), edit then approve.

Every decision names the interrupt and the fix proposal the page showed, so a decision on an
analysis or a proposal that has since changed is refused and explained. A refused action keeps
the reviewer on the tab they were on, its message there. A decision is sent at most once per interrupt from a browser
session: the marker is set before the review service is called, so a double click (two runs, two
threads with Streamlit's fast reruns) sends one decision; the service's claim stops anything
that still gets through.
"""
from __future__ import annotations

import threading


import streamlit as st

from pipeline.errors import Conflict, IncidentIQError
from pipeline.services import Actor, ReviewService
from pipeline.state import counted
from workbench import session
from workbench.audit_words import categories_in_text, category_words, changes_frame, edit_effect_words
from workbench.conflicts import shown_marker, what_changed
from workbench.edit_form import collect_edits, edit_form
from workbench.event_counts import approval_warning
from workbench.literal import escape_markdown, plain
from workbench.incident_view import proposal_view
from workbench.provenance import decision_lines, edits, status_words

_SUBMITTING = threading.Lock()
LABELS = {"approve": "Approval", "reject": "Rejection", "revise": "Request for changes",
          "edit_approve": "Edit-then-approve"}
# short labels: the four fit beside the analysis from a 1024 px window
TABS = {"approve": "Approve", "reject": "Reject", "revise": "Changes", "edit_approve": "Edit"}


def _tab_key(interrupt_id: str) -> str:
    return f"incident_{interrupt_id[:12]}_tab"


def _shown_key(incident_id: str) -> str:
    return f"incident_shown_{incident_id}"


def remember_shown(doc: dict) -> None:
    """Record what this render shows; decisions made from it refer to this interrupt."""
    st.session_state[_shown_key(doc["incident_id"])] = shown_marker(doc)


def decide(review: ReviewService, incident_id: str, action: str, state: dict | None, form_key: str) -> None:
    """Callback of the decision buttons: send one decision for the interrupt the page showed.

    Everything it needs from session state is read first (see workbench.session).
    """
    values = st.session_state
    shown = dict(values.get(_shown_key(incident_id)) or {})
    submitted = values.setdefault("incident_submitted", {})
    outcomes = values.setdefault("incident_outcome", {})
    acting = session.acting_registry()
    reviewer = session.actor()
    values[_tab_key(shown.get("interrupt_id") or "")] = TABS[action]  # a refusal keeps this tab open
    inputs = {"note": (values.get(f"{form_key}_note") or "").strip() or None,
              "reason": values.get(f"{form_key}_reason") or "",
              "feedback": values.get(f"{form_key}_feedback") or "",
              "edits": collect_edits(state or {}, key=f"{form_key}_field") if action == "edit_approve" else None}
    # no Streamlit from here on
    outcome = _decide(review, incident_id, action, shown=shown, reviewer=reviewer, inputs=inputs,
                      submitted=submitted, acting=acting)
    if outcome is not None:
        outcomes[incident_id] = (*outcome, action, shown.get("interrupt_id"), reviewer.id if reviewer else None)


def _submitted_key(interrupt_id: str, reviewer: Actor | None) -> str:
    """A submission is a reviewer's: another name typed in the same browser (the second of two
    approvals) may still decide on the same analysis."""
    return f"{interrupt_id}:{reviewer.id if reviewer else ''}"


def _decide(review: ReviewService, incident_id: str, action: str, *, shown: dict, reviewer: Actor | None,
            inputs: dict, submitted: dict, acting: dict) -> tuple[str, str] | None:
    """Send the decision; the (kind, text) message the panel keeps showing, or None for a repeat."""
    interrupt_id = shown.get("interrupt_id")
    label = LABELS[action]
    if not interrupt_id:
        return "warning", f"{label} not sent: the page showed no pending analysis."
    if not reviewer:
        return "error", f"{label} not sent: sign in or enter your name in the sidebar first."
    if action == "edit_approve" and not inputs["edits"]:
        return "error", "Edit-then-approve not sent: no field was changed. Change a field, or use Approve."
    mark = _submitted_key(interrupt_id, reviewer)
    with _SUBMITTING:
        if mark in submitted:
            return None  # a second click on the same analysis: the first one's message stays
        submitted[mark] = action
    try:
        with session.acting_on(acting, incident_id):
            if action == "approve":
                doc = review.approve(incident_id, actor=reviewer, expect_interrupt=interrupt_id, note=inputs["note"],
                                     expect_proposal=shown.get("proposal_hash") or "", full=False)
            elif action == "reject":
                doc = review.reject(incident_id, actor=reviewer, expect_interrupt=interrupt_id,
                                    reason=inputs["reason"], full=False)
            elif action == "revise":
                doc = review.revise(incident_id, actor=reviewer, expect_interrupt=interrupt_id,
                                    feedback=inputs["feedback"], full=False)
            else:
                effect = review.edit_effect(inputs["edits"])
                doc = review.approve(incident_id, actor=reviewer, expect_interrupt=interrupt_id,
                                     edits=inputs["edits"], expect_proposal=shown.get("proposal_hash") or "",
                                     full=False)
    except Conflict:
        reason = what_changed(shown, review.incident(incident_id), review.audit(incident_id))
        return "warning", f"{label} not applied: {reason}"  # the reason in words: no status codes, no ids
    except IncidentIQError as exc:
        submitted.pop(mark, None)  # nothing was decided: the reviewer may correct and retry
        return "error", f"{label} not sent: {exc.message}"
    if action in ("approve", "edit_approve") and doc["status"] == "awaiting_approval":
        # the first of two approvals: the gate is still shut, and "now awaiting approval" would read
        # as if the click had done nothing
        given = len(doc.get("approvals") or ()) or 1
        said = (f"{label} recorded for {reviewer.id} ({given} of {max(given, doc.get('approvals_needed') or 2)}); "
                "a different person must approve to open the gate.")
    else:
        said = (f"{label} recorded for {reviewer.id}; the incident is now "
                f"{status_words(doc['status'], doc.get('fix') or doc.get('proposal'))}.")
    if action == "edit_approve":
        said += f" {edit_effect_words(inputs['edits'], effect)}, before the approval."
    return "success", said


def _message(outcome) -> None:
    getattr(st, outcome[0])(escape_markdown(outcome[1]))
    toasted = st.session_state.setdefault("incident_outcome_toasted", {})
    if not any(seen is outcome for seen in toasted.values()):
        # the decision's result once as a toast too, in view wherever the page sits (walkthrough s57:
        # after Approve the shorter page sat mid-way, its confirmation above the viewport)
        toasted[outcome[1]] = outcome
        st.toast(escape_markdown(outcome[1]), icon=session.TOAST_ICONS.get(outcome[0]))


def decided(doc: dict, audit_rows: list[dict]) -> None:
    """What was decided, by whom and why, and who edited the analysis before it."""
    lines = decision_lines(doc, audit_rows)
    if doc.get("decision"):
        st.info(escape_markdown(f"{status_words(doc['status'], doc.get('fix') or doc.get('proposal')).capitalize()}."), icon=":material/gavel:")
    elif doc["status"] == "awaiting_approval":
        st.caption("The run is pausing at approval; the panel appears in a moment.")
    else:
        st.caption(f"No decision is pending ({status_words(doc['status'], doc.get('fix') or doc.get('proposal'))}): the panel appears when the run "
                   "pauses at approval.")
    if lines:
        st.text(plain("\n".join(lines)))  # plain text: names, notes and reasons are people's words


def revisions_view(revisions: list[dict], requests: list) -> None:
    """Every request for changes, and what each re-analysis changed: before and after side by side."""
    if not revisions and not requests:
        return
    st.caption(f"Requests so far ({len(requests or revisions)})")
    asked = [r.get("feedback") for r in revisions] or list(requests)
    st.text(plain("\n".join(f"{n}. {text}" for n, text in enumerate(asked, 1))))
    for rev in revisions:
        # the fields in the audit's words, as History's diff says them (audit_words.changes_frame)
        changed = changes_frame(rev["changes"])
        with st.expander(f"Revision {rev['revision']}: what the re-analysis changed ({counted(len(changed), 'field')})",
                         expanded=rev is revisions[-1]):
            st.text(plain(f"Asked by {rev.get('reviewer') or '?'}: {rev.get('feedback') or ''}"))
            st.text(plain(analysis_change(rev)))
            if not changed.empty:
                st.dataframe(plain(changed), hide_index=True, width="stretch", key=f"incident_revision_{rev['revision']}",
                             column_config={"before": st.column_config.TextColumn(width="large"),
                                            "after": st.column_config.TextColumn(width="large")})
            else:
                st.caption("The re-analysis changed nothing.")


def analysis_change(rev: dict) -> str:
    """What the re-analysis changed in the analysis itself (category, confidence, root cause, the doc
    it rests on, a fix proposal), in one line; says so when only the recommendation was redone."""
    before, after = rev["before"].get("rca") or {}, rev["after"].get("rca") or {}
    parts = []
    if before.get("category") != after.get("category"):
        parts.append(f"category {category_words(before.get('category'))} → {category_words(after.get('category'))}")
    if before.get("confidence") != after.get("confidence"):
        parts.append(f"confidence {before.get('confidence')} → {after.get('confidence')}")
    if before.get("doc_ids") != after.get("doc_ids"):
        parts.append(f"rests on {', '.join(after.get('doc_ids') or []) or 'no doc'} "
                     f"(was {', '.join(before.get('doc_ids') or []) or 'no doc'})")
    if before.get("root_cause") != after.get("root_cause"):
        parts.append("root cause rewritten")
    had, has = bool(rev["before"].get("proposal")), bool(rev["after"].get("proposal"))
    if had != has:
        parts.append("fix proposal " + ("added" if has else "withdrawn"))
    # the analyst's answer to this request (pipeline/analyst/answers.py): why it changed, or why not
    prefix = f"Reviewer request {rev.get('revision')} ("
    answer = next((n.split("\u201d): ", 1)[-1] for n in after.get("notes") or [] if n.startswith(prefix)), None)
    answer = categories_in_text(answer) if answer else answer  # "the category db deadlock stands", not its code
    if not parts:
        return ("The analysis is unchanged: " + answer) if answer else \
            "The analysis is unchanged: only the recommendation was redone."
    return "The analysis changed: " + "; ".join(parts) + "." + (f" {answer}" if answer else "")


def analysis_words(doc: dict, audit_rows: list[dict] | None = None) -> str:
    """Which analysis the decision is on, in words: "Deciding on the analysis of 2026-12-06 16:42:17 UTC
    (revision 1) · 1 revision left", never the interrupt's id; before any revision, whose it is: the
    analyst's first, or the person's who forked the run or edited it (a walkthrough read "the analyst's
    first" on carol's fork)."""
    done, left = int(doc.get("revisions") or 0), int(doc.get("revisions_left") or 0)
    when = str(doc.get("head_created_at") or "")[:19].replace("T", " ")
    which = f"the analysis of {when} UTC" if when else "this analysis"
    person = next((e for e in reversed(edits(audit_rows or [])) if e["how"] in ("forked the run", "edited")), None)
    # the newest of a re-run and an edit made it: a person's replay is theirs, not "the analyst's first"
    rerun = next((r for r in reversed(audit_rows or []) if r.get("action") in ("replay", "fork", "edit")), None)
    if done:
        which += f" (revision {done})"
    elif rerun is not None and rerun["action"] == "replay":
        which += f" (re-run by {rerun['reviewer']})"
    elif person:
        which += f" ({'forked' if person['how'] == 'forked the run' else 'edited'} by {person['by']})"
    else:
        which += " (the analyst's first)"
    return f"Deciding on {which} · {left} revision{'' if left == 1 else 's'} left"


def panel(review: ReviewService, doc: dict, *, audit_rows: list[dict] | None = None) -> None:
    """The panel: while paused at the approval gate, the four decisions (the fix proposal beside
    Approve); otherwise what was decided, by whom and why."""
    audit_rows = audit_rows or []
    outcome = st.session_state.get("incident_outcome", {}).get(doc["incident_id"])
    pending = doc.get("pending")
    if doc["status"] != "awaiting_approval" or not pending:
        if outcome:
            _message(outcome)
        decided(doc, audit_rows)
        return
    remember_shown(doc)
    interrupt_id = pending["interrupt_id"]
    form_key = f"incident_{interrupt_id[:12]}"
    blocked = session.blocked("approve")
    who = session.actor()
    done = st.session_state.get("incident_submitted", {}).get(_submitted_key(interrupt_id, who))
    if outcome and len(outcome) > 4 and outcome[3] == interrupt_id and (who.id if who else None) != outcome[4]:
        outcome = None  # another reviewer's message about this analysis: not this one's to read
    st.caption(escape_markdown(analysis_words(doc, audit_rows)))
    in_tab = outcome[2] if outcome and len(outcome) > 3 and outcome[3] == interrupt_id else None
    if outcome and not in_tab:
        _message(outcome)  # about an earlier analysis (a revision's result, a conflict): above the tabs
    if done:
        st.info("Your decision on this analysis was submitted.")
    elif blocked:
        st.info(blocked, icon=":material/person:")
    if doc.get("approvals"):
        st.text(plain("Approved so far by " + ", ".join(str(a.get("by")) for a in doc["approvals"])
                      + f" ({len(doc['approvals'])} of {doc.get('approvals_needed', 1)})"))
    if (doc.get("approvals_needed") or 1) > 1 and (doc.get("approvals_limit") or (who and who.auth == "demo")):
        from pipeline.services import UNVERIFIED_LIMIT

        st.warning(f"Two approvals needed. Note: {UNVERIFIED_LIMIT}.", icon=":material/group:")
    edits_lines = decision_lines({}, audit_rows)
    if edits_lines:
        st.text(plain("\n".join(edits_lines)))
    disabled = bool(done) or bool(blocked)
    # one decision at a time, chosen with a segmented control (it wraps in a narrow panel, tabs
    # would scroll); the choice is session state: a rerun (a refused Reject) keeps it
    st.session_state.setdefault(_tab_key(interrupt_id), TABS["approve"])
    choice = st.segmented_control("Decision", list(TABS.values()), required=True, key=_tab_key(interrupt_id),
                                  label_visibility="collapsed")
    action = next((a for a, label in TABS.items() if label == choice), "approve")
    if in_tab:
        _message(outcome)  # a refusal stays where it happened: its decision is still the chosen one
    DRAW[action](review, doc, form_key, disabled)


def _approve(review: ReviewService, doc: dict, form_key: str, disabled: bool) -> None:
    """The fix proposal an approval approves, with its hash, right above the button."""
    proposal = doc.get("proposal")
    if proposal:
        st.markdown(f"**Fix proposal** `{escape_markdown(str(proposal.get('hash') or '')[:12])}`")
        st.caption("Approving approves exactly this proposal (its hash is recorded with the decision); "
                   "it is a proposal for a person to apply: nothing is changed in any repository.")
        proposal_view(proposal)
    else:
        st.caption(f"No fix proposal: {doc.get('fix_ineligible_reason') or 'no code fix is eligible'}. "
                   "An approval records the analysis only.")
    me = session.actor()
    if me is not None and any(a.get("by") == me.id for a in doc.get("approvals") or []):
        # the two-person rule: a second approval must come from someone else, so none is offered
        st.info(f"You ({me.id}) approved this analysis already: a different person must give the next approval.",
                icon=":material/how_to_reg:")
        return
    if warning := approval_warning(doc):  # the header's "arrived since", said where the decision is made
        st.warning(warning, icon=":material/schedule:")
    with st.form(f"{form_key}_approve_form", border=False):
        st.text_input("Note (optional)", key=f"{form_key}_note")
        st.form_submit_button("Approve", type="primary", disabled=disabled, key=f"{form_key}_approve",
                              on_click=decide, args=(review, doc["incident_id"], "approve", None, form_key))


def _reject(review: ReviewService, doc: dict, form_key: str, disabled: bool) -> None:
    with st.form(f"{form_key}_reject_form", border=False):
        st.text_area("Reason", key=f"{form_key}_reason", placeholder="why this analysis is wrong or not actionable")
        st.form_submit_button("Reject", disabled=disabled, key=f"{form_key}_reject",
                              on_click=decide, args=(review, doc["incident_id"], "reject", None, form_key))


def _revise(review: ReviewService, doc: dict, form_key: str, disabled: bool) -> None:
    if doc.get("revisions") or doc.get("requests"):
        revisions_view(review.revisions(doc["incident_id"]), doc.get("requests") or [])
    with st.form(f"{form_key}_revise_form", border=False):
        left = doc.get("revisions_left", 0)
        st.text_area("Feedback", key=f"{form_key}_feedback", placeholder="what the analysis should change")
        st.caption("The analysis (RCA, recommendation, fix proposal) is redone with every request so far.")
        st.form_submit_button(f"Request changes ({left} left)", disabled=disabled or left <= 0,
                              key=f"{form_key}_revise",
                              on_click=decide, args=(review, doc["incident_id"], "revise", None, form_key))


def _edit_approve(review: ReviewService, doc: dict, form_key: str, disabled: bool) -> None:
    if warning := approval_warning(doc):
        st.warning(warning, icon=":material/schedule:")
    edit_form(doc.get("state") or {}, key=f"{form_key}_field", mode="approve",
              submit_label="Save edits and approve", on_submit=decide,
              args=(review, doc["incident_id"], "edit_approve", doc.get("state"), form_key), disabled=disabled,
              submit_key=f"{form_key}_edit_approve")


DRAW = {"approve": _approve, "reject": _reject, "revise": _revise, "edit_approve": _edit_approve}
