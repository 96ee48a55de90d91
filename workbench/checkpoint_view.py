"""One checkpoint on the History tab: what changed at it, the nodes that wrote it (how long each ran,
its input and output), and its diff against any other checkpoint."""
from __future__ import annotations

import streamlit as st

from pipeline.services import ReviewService
from pipeline.state import counted
from workbench.audit_words import ACTION_WORDS, MACHINE_FIELDS, changes_frame, field_words, step_words, value_text
from workbench.literal import analysis_text, escape_markdown, plain
from workbench.timeline import EVIDENCE_ADDED, checkpoint_caption, checkpoint_name, evidence_added


def compare_key(incident_id: str) -> str:
    return f"incident_history_compare_{incident_id}"


def changes_at(detail: dict, named: str) -> None:
    """What the checkpoint `named` ("#5 root cause analysis") changed against the checkpoint before it;
    where it changed nothing, what its step wrote all the same (a fix proposal step that proposed no
    fix, or the same one again, read "0 fields" as if it had done nothing)."""
    changed = changes_frame(detail["changes"])
    count = f"{len(changed)} field{'' if len(changed) == 1 else 's'} changed" if len(changed) else "no field changed"
    st.markdown(f"**Changes at {escape_markdown(named)} against the checkpoint before it** ({count})")
    if len(changed):
        st.dataframe(plain(changed), hide_index=True, width="stretch", key="incident_history_diff")
        return
    wrote = unchanged_writes(detail)
    st.caption(escape_markdown(f"{wrote[:1].upper()}{wrote[1:]}, as the checkpoint before it held." if wrote else
                               "Nothing was written at this checkpoint."))


# the state's own record of what each step did: "What the nodes noted" shows it
_NOTES = "events"


def short_value(value) -> str:
    """A written value in a few words: "none", a text's first line, a record's first text."""
    if isinstance(value, dict):
        value = next((v for v in value.values() if isinstance(v, str) and v.strip()
                      or isinstance(v, list) and v and all(isinstance(i, str) for i in v)), None)
    if isinstance(value, list) and value and all(isinstance(i, str) for i in value):
        value = value[0]
    if value is None or value == [] or value == "":
        return "none"
    # as the incident page says it: docs by their titles, no code-span backticks (walkthrough s58)
    text = " ".join(analysis_text(value_text(value)).split())
    return text if len(text) <= 90 else text[:89] + "…"


def unchanged_writes(detail: dict) -> str:
    """What the steps of a checkpoint that changed no field wrote, in words ("fix proposal wrote the
    fix proposal: none"); empty when they returned nothing."""
    said = []
    for run in detail.get("runs") or []:
        fields = [(k, v) for k, v in (run.get("output") or {}).items() if k != _NOTES and k not in MACHINE_FIELDS]
        if fields:
            said.append(f"the {step_words(run['node'])} step wrote " + "; ".join(
                f"the {field_words(k)}: {short_value(v)}" for k, v in fields))
    return "; ".join(said)


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
    key = compare_key(incident_id)
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
                f"{escape_markdown(checkpoint_name(by_id[newer]))}** ({counted(len(changes), 'field')} "
                + ("differs)" if len(changes) == 1 else "differ)"))
    if len(changes):
        st.dataframe(plain(changes), hide_index=True, width="stretch", key="incident_history_compare_diff")
    else:
        st.caption("The two checkpoints hold the same state.")
