"""Time travel on the incident page: the checkpoint timeline, one checkpoint's state and diff,
and replay / fork from it after a confirmation naming the nodes that will run again."""
from __future__ import annotations


import streamlit as st

from pipeline.errors import IncidentIQError
from pipeline.services import ReviewService
from pipeline.state import EVIDENCE_HEAD, EVIDENCE_TAIL
from workbench import session
from workbench.audit_words import (ACTION_WORDS, changes_frame, setting_words, step_words, steps_in_text, steps_words,
                                   trace_words)
from workbench.edit_form import collect_edits, edit_form
from workbench.literal import escape_markdown, plain
from workbench.incident_reads import redraw_page_if_changed
from workbench.provenance import status_words
from workbench.timeline import (EVIDENCE_ADDED, FORK_NOTE, PICKED, base_spec, checkpoint_caption, checkpoint_name,
                                checkpoint_numbers, evidence_added, with_selection)

SCOPE = "incident_history"
HISTORY_WINDOW = 100  # checkpoints the timeline shows at first
CONFIRM_KEY = "incident_confirm"
CACHED = 64  # reads kept per process (a few incidents' timelines, the checkpoints picked in them)


# Checkpoints are immutable, so what a checkpoint shows (its state, its diff against its parent) is
# the same on every rerun while the incident is unchanged: reading it again on each pick, and
# drawing the chart again, was most of an interaction at a thousand checkpoints. The key names the
# review service (one per data dir), the incident and its version; `_review` is not hashed.
@st.cache_data(max_entries=CACHED, show_spinner=False)
def _tree(_review: ReviewService, where: int, incident_id: str, limit: int, version: tuple) -> dict:
    return _review.tree(incident_id, limit=limit)


@st.cache_data(max_entries=CACHED, show_spinner=False)
def _checkpoint(_review: ReviewService, where: int, incident_id: str, checkpoint_id: str, version: tuple) -> dict:
    return _review.checkpoint(incident_id, checkpoint_id, with_plan=True)  # its state, diff and rerun plan


@st.cache_data(max_entries=CACHED, show_spinner=False)
def _spec(_tree_read: dict, where: int, incident_id: str, limit: int, version: tuple, spacing: str,
          collapse: bool) -> dict:
    return base_spec(_tree_read, spacing=spacing, collapse=collapse)


def checkpoint_names(review: ReviewService, incident_id: str, version: tuple) -> dict[str, str]:
    """Each of the newest checkpoints (History's window) by its number and step, "#5 root cause
    analysis", as the chart names it: the audit's "checkpoint after" column and notes say these."""
    tree = _tree(review, id(review), incident_id, HISTORY_WINDOW, version)  # the History tab's read, cached
    numbers = checkpoint_numbers(tree)
    return {e["checkpoint_id"]: checkpoint_name({**e, "number": numbers[e["checkpoint_id"]]}) for e in tree["nodes"]}


def _pick_key(incident_id: str) -> str:
    return f"incident_history_pick_{incident_id}"


def _chart_key(incident_id: str) -> str:
    return f"incident_timeline_{incident_id}"


def _clicked_checkpoints(event) -> list[str]:
    """The checkpoint ids of the points picked in the timeline (a click picks one, a shift-click adds
    a second: the two are compared). `event` is the chart's selection state: the spec's point
    selection lists the picked points by their checkpoint id, in the order they were clicked."""
    try:
        points = event["selection"][PICKED]
    except (KeyError, TypeError):
        return []
    out = []
    for point in points if isinstance(points, list) else []:
        data = point.get("checkpoint_id") if isinstance(point, dict) else None
        if isinstance(data, str) and data not in out:
            out.append(data)
    return out


def _clicked_checkpoint(event) -> str | None:
    """The checkpoint id of the point clicked in the timeline, if any."""
    picked = _clicked_checkpoints(event)
    return picked[0] if picked else None


def _compare_key(incident_id: str) -> str:
    return f"incident_history_compare_{incident_id}"


def checkpoint_link(incident_id: str, checkpoint_id: str, base_url: str = "") -> str:
    """A URL that opens the incident page's History tab at this checkpoint (backtest_view.take_checkpoint_link)."""
    from urllib.parse import urlencode

    base = (base_url or "").split("?", 1)[0].split("#", 1)[0].rstrip("/")
    base = base.replace(" ", "%20").replace("(", "%28").replace(")", "%29")  # a markdown link's target
    page = base if base.endswith("/incident") else (base + "/incident" if base else "incident")
    return f"{page}?{urlencode({'incident': incident_id, 'checkpoint': checkpoint_id})}"


def _duration(seconds: float | None, node: str = "") -> str:
    """How long a node ran; for the approval gate, how long it waited for a reviewer (a walkthrough
    read "approval · ran in 173.1 s": that was the wait, not run time)."""
    if seconds is None:
        return "wait unknown" if node == "approval" else "run time unknown"
    if node == "approval" and seconds >= 1:  # under a second: it did not pause (no reviewer to wait for)
        return f"waited {wait_words(seconds)} for a reviewer"
    return f"ran in {seconds * 1000:.0f} ms" if seconds < 10 else f"ran in {seconds:.1f} s"


def wait_words(seconds: float) -> str:
    """A wait as a person says it: "2 min 53 s", "1 h 5 min", "4 s"."""
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    return f"{secs} s"


def _when(value) -> str:
    return str(value or "?")[:19].replace("T", " ")


def _events(count) -> str:
    return f"{count} event" if count == 1 else f"{count} events"


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
    text = (f"Evidence: {_events(then.get('events'))} up to {_when(then.get('newest_event_at'))} UTC (as at this "
            f"checkpoint); the incident now has {now.get('events')}")
    if basis.get("newer_evidence"):
        return text + f", {basis.get('newer_events')} of them newer: the branch will not see those."
    return text + ": nothing newer."


FORK_EFFECTS = {
    "reruns_dependents": "The edit lands where its field is written, so the nodes after it re-run from it.",
    "keeps_recommendation": "The edit sets the analysis and the recommendation: the recommendation is not redone, "
                            "the fix proposal is derived again.",
    "as_is": "The edit lands before the nodes that write those fields: they run again and may overwrite it.",
}


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
    edits = collect_edits(state or {}, key=form_key) if action == "fork" else None
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
        what += f" on the current evidence ({_events(doc.get('event_count'))})"
    return f"{text}: {what}, now {status_words(doc['status'], doc.get('fix') or doc.get('proposal'))}."


def _widen(window_key: str, window: int) -> None:
    st.session_state[window_key] = window


def _select(incident_id: str, checkpoint_id: str) -> None:
    st.session_state[_pick_key(incident_id)] = checkpoint_id


@st.fragment
def history(review: ReviewService, incident_id: str, drawn: tuple) -> None:
    """The timeline, the selected checkpoint's state and diff, and replay / fork from it.

    A fragment: picking a checkpoint, clicking the chart or widening the window reruns only this;
    after a replay or fork (the incident's version is no longer `drawn`, the one the page was drawn
    at) the whole page reruns, its header and decision panel change too."""
    try:
        version = redraw_page_if_changed(review, incident_id, drawn)
        _history(review, incident_id, version)
    except IncidentIQError as exc:  # e.g. the checkpoints were pruned meanwhile: said here, nothing else lost
        st.error(escape_markdown(exc.message))


def _history(review: ReviewService, incident_id: str, version: tuple) -> None:
    session.show_messages(SCOPE)
    window_key = f"incident_history_window_{incident_id}"
    window = int(st.session_state.get(window_key) or HISTORY_WINDOW)
    where = id(review)
    # the newest checkpoints only: a thread with a thousand of them keeps the chart and the
    # picker small; older ones come a window at a time
    tree = _tree(review, where, incident_id, window, version)
    entries = sorted(tree["nodes"], key=lambda e: e["checkpoint_id"], reverse=True)
    if not entries:
        st.info("No checkpoint yet: the run has not started.")
        return
    numbers = checkpoint_numbers(tree)  # the chart's axis numbers, said in the pickers too
    by_id = {e["checkpoint_id"]: {**e, "number": numbers[e["checkpoint_id"]]} for e in entries}
    pick_key = _pick_key(incident_id)
    picked = _clicked_checkpoints(st.session_state.get(_chart_key(incident_id)))
    clicked = picked[0] if picked else None
    if picked and picked != st.session_state.get("incident_timeline_applied"):
        st.session_state["incident_timeline_applied"] = picked  # a new click moves the picker once
        st.session_state[pick_key] = clicked
        if len(picked) > 1 and picked[1] in by_id:  # two points picked: the second is compared
            st.session_state[_compare_key(incident_id)] = picked[1]
    next_pick = st.session_state.get("incident_history_next_pick", {}).pop(incident_id, None)
    if next_pick in by_id:
        st.session_state[pick_key] = next_pick
    elif next_pick:  # a link's checkpoint (a backtest's, a bookmark) that is not here: say so
        st.warning(escape_markdown(
            f"The link's checkpoint {next_pick} is not one of this incident's checkpoints: showing the newest."
            if tree["total"] <= len(entries) else
            f"The link's checkpoint {next_pick} is not among this incident's {len(entries)} newest checkpoints "
            f"(of {tree['total']}): showing the newest (\"Show {HISTORY_WINDOW} older\" below reaches further)."))
    if st.session_state.get(pick_key) not in by_id:
        st.session_state[pick_key] = entries[0]["checkpoint_id"]
    selected = st.session_state[pick_key]

    controls = st.container(horizontal=True, vertical_alignment="center")
    with controls:
        spacing = st.segmented_control("Spacing", ["order", "time"], default="order", required=True,
                                       key="incident_history_spacing", persist_state="session",
                                       help="order: one step apart (a run takes milliseconds); time: real time")
        collapse = st.toggle("Live branch only", key=f"incident_history_collapse_{incident_id}",
                             value=tree["branches"] > 3, help="hide the abandoned branches")
    base = _spec(tree, where, incident_id, window, version, spacing, collapse)
    st.vega_lite_chart(with_selection(base, selected), key=_chart_key(incident_id), on_select="rerun",
                       selection_mode=PICKED, width="stretch")
    hidden = sum(1 for e in entries if not e.get("on_current_branch")) if collapse else 0
    shown = f"the newest {len(entries)} of {tree['total']}" if tree["total"] > len(entries) else f"{len(entries)}"
    st.caption(f"{shown} checkpoints on {tree['branches']} branch(es)"
               + (f", {hidden} on abandoned branches hidden" if hidden else "")
               + ". Scroll over the chart to zoom, drag to pan, double-click to reset; click a point to pick it "
               "(shift-click a second to compare), or pick a checkpoint below. ◆ live head, ◇ paused at "
               "approval, ★ human action. " + FORK_NOTE)
    if tree["total"] > len(entries):
        st.button(f"Show {HISTORY_WINDOW} older", key="incident_history_older", on_click=_widen,
                  args=(window_key, window + HISTORY_WINDOW))
    st.selectbox("Checkpoint", list(by_id), key=pick_key, format_func=lambda cid: checkpoint_caption(by_id[cid]))

    detail = _checkpoint(review, where, incident_id, selected, version)
    entry = detail["checkpoint"]
    changed = changes_frame(detail["changes"])
    named = {cid: checkpoint_name(e) for cid, e in by_id.items()}
    st.markdown(f"**Changes at {escape_markdown(named[selected])} against the checkpoint before it** "
                f"({len(changed)} fields)")
    if len(changed):
        st.dataframe(plain(changed), hide_index=True, width="stretch", key="incident_history_diff")
    else:
        st.caption("No field changed at this checkpoint.")
    if entry.get("trace"):
        st.caption("What the nodes noted")
        st.code(plain("\n".join(trace_words(line) for line in entry["trace"])), language=None, wrap_lines=True)
    node_runs(detail, named)
    compare(review, incident_id, selected, by_id)
    # asked for: the whole state (tens of KB of JSON) was drawn, folded away, on every pick and tab click
    if st.toggle("Show the state at this checkpoint (JSON)", key=f"incident_history_state_{incident_id}"):
        st.json(plain(detail["state"]), expanded=1)
    # a link, not a code block: one element on every pick instead of two and the code block's bundle
    st.markdown(f"[Link to this checkpoint]({checkpoint_link(incident_id, selected, st.context.url)}) "
                "(opens this tab at it; copy it to share)")
    _time_travel(review, incident_id, selected, named[selected], detail["state"], detail["plan"])


def node_runs(detail: dict, named: dict[str, str] | None = None) -> None:
    """Each node that wrote the checkpoint: its run time, its input (the state it was given) and its
    output (the update it returned)."""
    runs = detail.get("runs") or []
    if not runs:
        return
    st.markdown("**Nodes at this checkpoint**")
    # the poller's merge of new evidence: no node ran; the time since the checkpoint before it was the
    # wait for those events, not a run time
    entry = detail.get("checkpoint") or {}
    added = evidence_added(entry)
    # a person's edit or fork writes the checkpoint as a step's output: no node ran, and the time since
    # the checkpoint before it was the wait (a walkthrough read a fork's "ran in 533.3 s")
    by_person = entry.get("source") == "update" and entry.get("human_action")
    for run in runs:
        # drawn only while open (opening one reruns this fragment): folded, its columns, toggle and
        # output JSON were built and sent on every pick for nobody
        said = (f"{EVIDENCE_ADDED} (as {step_words(run['node'])}'s output; no node ran)" if added
                else f"{step_words(run['node'])} · written when a person "
                     f"{ACTION_WORDS.get(by_person, by_person)} (no node ran)" if by_person
                else f"{step_words(run['node'])} · {_duration(run['seconds'], run['node'])}")
        box = st.expander(said, key=f"incident_run_{run['node']}", on_change="rerun")
        if not box.open:
            continue
        with box:
            given, returned = st.columns(2)
            with given:
                given_at = (named or {}).get(str(run["input_checkpoint_id"])) or "the checkpoint before it"
                st.caption(escape_markdown(f"Input: the state at {given_at}"))
                # asked for: the whole state (log window and all) would be sent on every pick
                if st.toggle("Show the input", key=f"incident_run_input_{run['node']}"):
                    st.json(plain(detail.get("input") or {}), expanded=1)
            with returned:
                st.caption("Output: the update it returned")
                st.json(plain(run["output"] or {}), expanded=1)


def compare(review: ReviewService, incident_id: str, selected: str, by_id: dict[str, dict]) -> None:
    """A diff between the selected checkpoint and any other (picked here, or shift-clicked on the timeline)."""
    key = _compare_key(incident_id)
    options = [""] + [cid for cid in by_id if cid != selected]
    if st.session_state.get(key) not in options:
        st.session_state[key] = ""
    other = st.selectbox("Compare with checkpoint", options, key=key,
                         format_func=lambda cid: checkpoint_caption(by_id[cid]) if cid else "— none —",
                         help="any checkpoint, on any branch; or shift-click a second point on the timeline")
    if not other:
        return
    older, newer = sorted((other, selected))
    changes = changes_frame(review.compare(incident_id, older, newer)["changes"])
    st.markdown(f"**From {escape_markdown(checkpoint_name(by_id[older]))} to "
                f"{escape_markdown(checkpoint_name(by_id[newer]))}** ({len(changes)} fields differ)")
    if len(changes):
        st.dataframe(plain(changes), hide_index=True, width="stretch", key="incident_history_compare_diff")
    else:
        st.caption("The two checkpoints hold the same state.")


def _time_travel(review: ReviewService, incident_id: str, checkpoint_id: str, named: str, state: dict,
                 plan: dict) -> None:
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
            st.warning(escape_markdown(plan_text(ask["action"], named, plan, None)), icon=":material/history:")
            if ask.get("edits"):
                st.caption("It sets:")  # as text, never markdown: a root cause may quote log text
                st.code(plain(setting_words(ask["edits"], whole=True)), language=None, wrap_lines=True)
            buttons = st.container(horizontal=True)
            buttons.button(f"Confirm {ask['action']}", type="primary", key="incident_confirm_yes",
                           on_click=_confirmed, args=(review,))
            basis = plan.get("evidence") or {}
            if ask["action"] == "replay" and basis.get("newer_evidence"):
                buttons.button(f"Replay with current evidence ({basis['now']['events']} events)",
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
