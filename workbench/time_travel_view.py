"""Time travel from a checkpoint on the History tab: replay or fork (with edits) after a confirmation
naming the steps that will run again and the evidence they will rest on, and what was done, said."""
from __future__ import annotations

import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.services import ReviewService
from pipeline.state import EVIDENCE_HEAD, EVIDENCE_TAIL, counted
from workbench import session
from workbench.audit_words import (REFUSED_WORDS, changes_words, note_words, setting_words, step_words, steps_in_text,
                                   steps_words)
from workbench.edit_form import collect_edits, edit_form
from workbench.literal import escape_markdown, plain
from workbench.provenance import status_words

SCOPE = "incident_history"
CONFIRM_KEY = "incident_confirm"


def pick_key(incident_id: str) -> str:
    return f"incident_history_pick_{incident_id}"


def _when(value) -> str:
    return str(value or "?")[:19].replace("T", " ")


def reason_words(plan: dict) -> str:
    """Why (or why not) the checkpoint can be run again, with the steps in words: the engine's sentence
    names its nodes ("so code_fix cannot run")."""
    if plan.get("allowed") and plan.get("pauses_at_approval") and not plan.get("includes_code_fix"):
        return (f"Runs again: {steps_words(plan.get('nodes') or [])}; the approval gate fires again, so no fix is "
                "recorded without a new approval")
    said = steps_in_text(str(plan.get("reason") or ""))
    return said[:1].upper() + said[1:]  # a sentence ("the run had ended at this checkpoint: …" began lower-case)


def evidence_text(plan: dict) -> str:
    """Which evidence the branch is analysed on, against what the incident has now."""
    basis = plan.get("evidence") or {}
    then, now = basis.get("at_checkpoint") or {}, basis.get("now") or {}
    if plan.get("with_current_evidence"):
        return (f"Evidence: all {now.get('events')} events the incident has now (newest {_when(now.get('newest_event_at'))} "
                "UTC) are merged in first, so the whole analysis re-runs on them.")
    if not basis.get("newer_evidence") and then.get("events") == EVIDENCE_HEAD + EVIDENCE_TAIL < (now.get("events") or 0):
        # the state keeps the first and the latest events (pipeline.state.merge_evidence): a sample, not work left
        return (f"Evidence: all {now.get('events')} events the incident has, up to {_when(then.get('newest_event_at'))} "
                f"UTC; the analysis quotes a sample of {then.get('events')} (the first {EVIDENCE_HEAD} and the latest "
                f"{EVIDENCE_TAIL}): nothing newer.")
    text = (f"Evidence: {counted(then.get('events') or 0, 'event')} up to {_when(then.get('newest_event_at'))} UTC (as at this "
            f"checkpoint); the incident now has {now.get('events')}")
    if basis.get("newer_evidence"):
        return text + f", {basis.get('newer_events')} of them newer: the branch will not see those."
    return text + ": nothing newer."


FORK_EFFECTS = {
    "reruns_dependents": "The edit lands where its field is written, so the steps after it run again from it.",
    "keeps_recommendation": "The edit sets the analysis and the recommendation: the recommendation is not redone, "
                            "the fix proposal is derived again.",
    "as_is": "The edit lands before the nodes that write those fields: they run again and may overwrite it.",
}


# what a person did that a branch from an earlier checkpoint leaves behind, as a noun ("mira's edit");
# the rest of the audit (assignments, comments, SLA marks) is about the incident, not its run's state
LEFT_BEHIND_NOUNS = {"edit": "edit", "fork": "fork", "revise": "request for changes", "replay": "replay",
                     "approve_partial": "first approval"}


def left_behind(audit: list[dict], current: list[str], parents: dict[str, str | None],
                checkpoint_id: str) -> list[str]:
    """What people did on the current branch after `checkpoint_id` (or after where its branch left the
    current one), in reviewer words, oldest first: a new branch from it does not carry these over
    (walkthrough s58: a replay silently dropped a colleague's severity edit). `audit`: the incident's
    audit rows; `current`: the current branch's checkpoint ids; `parents`: checkpoint id → parent id."""
    on_current, anchor, seen = set(current), checkpoint_id, set()
    while anchor not in on_current and parents.get(anchor) and anchor not in seen:  # where its branch left
        seen.add(anchor)
        anchor = parents[anchor] or anchor
    out = []
    for row in audit:
        after_id, action = row.get("checkpoint_after"), str(row.get("action") or "")
        if action not in LEFT_BEHIND_NOUNS or after_id not in on_current or not after_id > anchor:
            continue
        before, after = row.get("before") or {}, row.get("after") or {}
        theirs = [f for f in after.get("edited") or [] if f in after]
        if theirs:  # what the person set, not every field the analysis redid for it
            what = "; ".join(changes_words({f: before[f] for f in theirs if f in before}, {f: after[f] for f in theirs}))
        elif action == "revise":
            asked = after.get("recommendation.feedback") or row.get("note") or ""
            what = f"“{note_words(str(asked[-1] if isinstance(asked, list) and asked else asked)).strip()}”" if asked else ""
        else:
            what = ""
        noun = LEFT_BEHIND_NOUNS.get(action) or REFUSED_WORDS.get(action, action.replace("_", " "))
        out.append(f"{row.get('reviewer') or 'someone'}'s {noun}" + (f": {what}" if what else ""))
    return out


def left_behind_text(items: list[str]) -> str:
    """The confirmation's sentence on what a new branch leaves behind (empty: nothing)."""
    if not items:
        return ""
    return ("What people did after this checkpoint stays on the branch it abandons: "
            + "; ".join(f"{item} will not be carried over" for item in items) + ".")


def plan_text(action: str, named: str, plan: dict, edits: dict | None) -> str:
    """The confirmation: rerun or new branch, what will run again (and whether recording the fix is
    among it), which evidence the analysis will rest on, and what an edit makes re-run. `named`: the
    checkpoint as the chart numbers it ("#5 root cause analysis")."""
    nodes = " → ".join(step_words(n) for n in plan["nodes"]) or "nothing"  # in words, not node names
    if plan.get("kind") == "rerun":
        head = f"{action.capitalize()} from the newest checkpoint, {named}, is a re-run on the current branch"
    else:
        head = (f"{action.capitalize()} from {named} starts a new branch (the current one "
                "stays in the history as abandoned)")
    text = f"{head}; it runs again: {nodes}."
    if plan["includes_code_fix"]:
        text += f" The {step_words('code_fix')} IS among them: a fix proposal may be recorded again."
    else:
        text += f" The {step_words('code_fix')} is not among them"
        text += ": the approval gate fires again and needs a new decision." if plan["pauses_at_approval"] else "."
    if plan.get("fork_effect"):
        text += " " + FORK_EFFECTS.get(plan["fork_effect"], "")
    if edits:
        text += f" It sets {setting_words(edits, whole=True)}."
    text += " " + evidence_text(plan)
    for warning in plan.get("warnings") or []:
        if "newer events" not in warning:  # the evidence sentence above says it
            text += f" Note: {steps_in_text(warning)}."
    return text


def _ask(action: str, incident_id: str, checkpoint_id: str, state: dict | None, form_key: str | None) -> None:
    edits = collect_edits(state or {}, key=form_key or "") if action == "fork" else None
    if action == "fork" and not edits:
        session.message_box(SCOPE).append(("error", "Fork not started: change at least one field (or use Replay)."))
        return
    st.session_state[CONFIRM_KEY] = {"incident_id": incident_id, "action": action,
                                     "checkpoint_id": checkpoint_id, "edits": edits}


def _current_evidence(review: ReviewService) -> None:
    """Callback of "Replay with current evidence": the confirmed replay, on every stored event."""
    ask = st.session_state.get(CONFIRM_KEY)
    if ask:
        ask["with_current_evidence"] = True
    _confirmed(review)


def _cancel() -> None:
    st.session_state.pop(CONFIRM_KEY, None)


def _confirmed(review: ReviewService) -> None:
    """Callback of the confirmation: replay or fork (session state read first, see workbench.session)."""
    messages = session.message_box(SCOPE)
    picks = st.session_state.setdefault("incident_history_next_pick", {})
    acting = session.acting_registry()
    reviewer = session.actor()
    ask = st.session_state.pop(CONFIRM_KEY, None)  # last: once taken, this callback must act
    if not ask or ask["incident_id"] in acting:
        return  # a second click: the first one acts
    action = ask["action"].capitalize()
    if not reviewer:
        messages.append(("error", f"{action} not started: enter your name in the sidebar."))
        return
    incident_id, checkpoint_id = ask["incident_id"], ask["checkpoint_id"]
    try:
        with session.acting_on(acting, incident_id):
            if ask["action"] == "replay":
                doc = review.replay(incident_id, checkpoint_id=checkpoint_id, actor=reviewer,
                                    with_current_evidence=bool(ask.get("with_current_evidence")))
            else:
                doc = review.fork(incident_id, checkpoint_id=checkpoint_id, actor=reviewer, edits=ask["edits"])
    except IncidentIQError as exc:
        messages.append(session.error_message(exc, doing=action))
        return
    if ask["action"] == "fork":  # done: its form, kept while folded (persist_state), starts afresh
        for name in [k for k in st.session_state if str(k).startswith(fork_form_key(checkpoint_id) + "_")]:
            del st.session_state[name]
    if doc.get("head_checkpoint_id"):
        picks[incident_id] = doc["head_checkpoint_id"]  # the timeline then selects the new head
    messages.append(("success", done_words(reviewer.id, ask, doc)))


def done_words(who: str, ask: dict, doc: dict) -> str:
    """What a confirmed replay or fork did, in a sentence: "carol forked from #5 root cause analysis,
    setting the category to upstream timeout: a new branch, now awaiting approval"."""
    did = {"replay": "re-ran" if ask.get("kind") == "rerun" else "replayed", "fork": "forked"}[ask["action"]]
    text = f"{who} {did} from {ask.get('named') or 'the checkpoint'}"
    if ask.get("edits"):
        text += f", setting {setting_words(ask['edits'])}"
    what = "a re-run on the current branch" if ask.get("kind") == "rerun" else "a new branch"
    if ask.get("with_current_evidence"):
        what += f" on the current evidence ({counted(doc.get('event_count') or 0, 'event')})"
    return f"{text}: {what}, now {status_words(doc['status'], doc.get('fix') or doc.get('proposal'))}."


def _widen(window_key: str, window: int) -> None:
    st.session_state[window_key] = window


def _select(incident_id: str, checkpoint_id: str) -> None:
    st.session_state[pick_key(incident_id)] = checkpoint_id



def time_travel(review: ReviewService, incident_id: str, checkpoint_id: str, named: str, state: dict,
                plan: dict, tree: dict | None = None) -> None:
    """Replay / fork from the checkpoint after a confirmation. `tree`: the History tab's read of the
    checkpoints (review.tree), for what a new branch leaves behind."""
    st.markdown("**Time travel**")
    if not plan["allowed"]:
        st.info(escape_markdown(reason_words(plan)))
        if plan.get("suggested_checkpoint"):
            st.button("Select the gate checkpoint before it", key="incident_pick_suggested", on_click=_select,
                      args=(incident_id, plan["suggested_checkpoint"]))
        return
    ask = st.session_state.get(CONFIRM_KEY)
    if ask and ask["incident_id"] == incident_id and ask["checkpoint_id"] == checkpoint_id:
        if ask.get("edits"):  # a fork's plan depends on what it edits (upstream edits re-run recommend)
            plan = review.rerun_plan(incident_id, checkpoint_id, edits=ask["edits"])
        ask["label"], ask["kind"], ask["named"] = plan.get("label"), plan.get("kind"), named
        with st.container(border=True):
            # the plan as escaped text and the edits (which may quote log text) as code: never
            # markdown, whose links and remote images would be live in a confirmation
            text = plan_text(ask["action"], named, plan, None)
            if plan.get("kind") != "rerun" and tree:
                parents = {n["checkpoint_id"]: n.get("parent_checkpoint_id") for n in tree.get("nodes") or []}
                left = left_behind_text(left_behind(review.audit(incident_id), tree.get("current") or [], parents,
                                                    checkpoint_id))
                text += (" " + left) if left else ""
            st.warning(escape_markdown(text), icon=":material/history:")
            if ask.get("edits"):
                st.caption("It sets:")  # as text, never markdown: a root cause may quote log text
                st.code(plain(setting_words(ask["edits"], whole=True)), language=None, wrap_lines=True)
            buttons = st.container(horizontal=True)
            buttons.button(f"Confirm {ask['action']}", type="primary", key="incident_confirm_yes",
                           on_click=_confirmed, args=(review,))
            basis = plan.get("evidence") or {}
            if ask["action"] == "replay" and basis.get("newer_evidence"):
                buttons.button(f"Replay with current evidence ({counted(basis['now']['events'], 'event')})",
                               key="incident_confirm_current", on_click=_current_evidence, args=(review,))
            buttons.button("Cancel", key="incident_confirm_no", on_click=_cancel)
        return
    blocked = session.blocked("replay")
    if blocked:
        st.caption(blocked)
    st.caption(escape_markdown(reason_words(plan) + ". " + evidence_text(plan)))
    st.button("Re-run from here…" if plan.get("kind") == "rerun" else "Replay from here…", key="incident_replay",
              disabled=bool(blocked), on_click=_ask, args=("replay", incident_id, checkpoint_id, None, None),
              help="from the newest checkpoint: a re-run on the current branch; from an older one: a new branch")
    form_key = fork_form_key(checkpoint_id)
    # the form (a widget per editable field) drawn only while its expander is open: folded, it was
    # built and sent on every pick and tab click. Opening or closing it reruns this fragment; what
    # was typed in it is kept while it is folded (Streamlit drops a value a run does not draw, unless
    # the widget persists it)
    box = st.expander("Fork from here with edits", key=f"{form_key}_open", on_change="rerun")
    if box.open:
        with box:
            edit_form(state, key=form_key, mode="fork", submit_label="Fork from here…", on_submit=_ask,
                      args=("fork", incident_id, checkpoint_id, state, form_key), disabled=bool(blocked),
                      primary=False, persist_state="page")


def fork_form_key(checkpoint_id: str) -> str:
    return f"incident_fork_{checkpoint_id[-12:]}"
