"""What the humans did on an incident, read from who did what (read only).

Two records say it: the run's checkpoints (which the analyst's nodes made, which a person's edit or
fork wrote with `update_state`) and the audit (who forked, edited, re-ran, asked for changes,
approved, rejected). Only what lies on the thread's current branch after the analysis a backtest
starts from counts: a fork someone left behind, or an edit an evidence merge re-analysed away, did
not shape what was decided. A human-made analysis is never read as the analyst's: the analyst's
answer (`AnalysisPoints.live`) is the first gate pause its own nodes reached from that start.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

# the human outcomes a backtest is compared with
OUTCOMES = ("approved_as_analysed", "approved_after_edits", "revised", "rejected", "merged", "expired", "pending",
            "failed")
APPROVED = ("approved_as_analysed", "approved_after_edits", "revised")
OUTCOME_WORDS = {
    "approved_as_analysed": "approved as analysed",
    "approved_after_edits": "approved after a person changed the analysis",
    "revised": "approved after a request for changes",
    "rejected": "rejected",
    # a reviewer said it is the same problem as another incident: its events are that one's now, and
    # it names no category of its own (the other's decision is the other's outcome)
    "merged": "merged into another incident",
    "expired": "expired undecided",
    "pending": "not decided yet",
    "failed": "the run failed",
}
_ANALYSIS = ("rca.", "severity")
# the audited actions that shape what was decided, in the order people take them
STEP_ACTIONS = ("fork", "edit", "replay", "revise", "merge", "approve_partial", "approve", "reject", "expire")
_SETTING = ("fork", "edit", "approve")  # the actions by which a person sets analysis fields themselves
_BEFORE_RCA = {"rag", "retrieval"}  # the step that ran them leaves the checkpoint whose next is rca


@dataclass(frozen=True)
class AnalysisPoints:
    """Where a backtest reads an incident: `start`, the newest checkpoint of the current branch the
    evidence steps made (its next is rca; a revision's is skipped: its analysis answers a
    reviewer); `live`, the analyst's own answer from there (the first gate pause its nodes reached
    with no person's edit or fork between); `branch`, the current branch, oldest first."""
    start: str | None
    live: str | None
    branch: tuple[str, ...]


def analysis_points(rows: list[dict[str, Any]]) -> AnalysisPoints:
    """The points of a thread's checkpoint rows (pipeline/store/checkpoints.checkpoint_rows, oldest first)."""
    if not rows:
        return AnalysisPoints(None, None, ())
    by_id = {r["checkpoint_id"]: r for r in rows}
    branch: list[str] = []
    node: str | None = max(by_id)  # the newest: the thread's head
    while node is not None and node in by_id:
        branch.append(node)
        node = by_id[node]["parent_checkpoint_id"]
    branch.reverse()
    start = next((cid for cid in reversed(branch) if _BEFORE_RCA & set(by_id[cid]["parent_ran"])), None)
    if start is None:
        return AnalysisPoints(None, None, tuple(branch))
    after = branch[branch.index(start) + 1:]
    gate = next((i for i, cid in enumerate(after) if by_id[cid]["raised"]), None)
    if gate is not None and all(by_id[cid]["source"] != "update" for cid in after[:gate + 1]):
        return AnalysisPoints(start, after[gate], tuple(branch))
    # a person's edit or fork lies between: the analyst's answer is on the run its nodes made first
    children: dict[str, list[str]] = defaultdict(list)
    for r in rows:
        children[r["parent_checkpoint_id"]].append(r["checkpoint_id"])
    node = start
    while True:
        node = next((c for c in sorted(children[node]) if by_id[c]["source"] == "loop"), None)
        if node is None or by_id[node]["raised"]:
            return AnalysisPoints(start, node, tuple(branch))


def human_steps(audit_rows: list[dict[str, Any]], points: AnalysisPoints | None = None) -> list[dict[str, Any]]:
    """Who did what, oldest first: each step's action, person, time, note and the analysis fields
    (rca.*, severity) they set, {field: {from, to}}. With `points`, only the steps that ended on
    the current branch after the analysis start."""
    on_branch = set(points.branch) if points and points.branch else None
    steps = []
    for row in audit_rows:
        if row["action"] not in STEP_ACTIONS:
            continue
        ended = row.get("checkpoint_after")
        unplaced = row["action"] == "merge"  # a regrouping ends on no checkpoint of its own: always counts
        if on_branch is not None and not unplaced and (ended not in on_branch or (points and points.start and ended <= points.start)):
            continue
        before, after = row.get("before") or {}, row.get("after") or {}
        set_by_person = after.get("edited")  # what the person set; the rest was re-derived from it
        if row["action"] not in _SETTING:
            names = []  # a revision's or a replay's analysis is the analyst's (at a person's request)
        else:
            names = set_by_person if isinstance(set_by_person, list) else list(after)
        fields = {name: {"from": before.get(name), "to": after.get(name)} for name in names
                  if name.startswith(_ANALYSIS) and name in after and before.get(name) != after.get(name)}
        step = {"action": row["action"], "by": row["reviewer"], "at": row["at"], "note": row.get("note"),
                "fields": fields}
        if unplaced:  # which incident went where
            step.update(into=after.get("merged_into"), merged=after.get("merged"))
        steps.append(step)
    return steps


def analysis_edits(steps: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """field → {from, to, by, at, how} of every person's change to the analysis (edits, forks, the
    edits of an approval), the first value before and the last after."""
    edits: dict[str, dict[str, Any]] = {}
    for step in steps:
        for name, change in step["fields"].items():
            first = edits.get(name, {}).get("from", change["from"])
            edits[name] = {"from": first, "to": change["to"], "by": step["by"], "at": step["at"],
                           "how": step["action"]}
    return {k: v for k, v in edits.items() if v["from"] != v["to"]}


def human_outcome(row: dict[str, Any], audit_rows: list[dict[str, Any]],
                  points: AnalysisPoints | None = None) -> dict[str, Any]:
    """outcome (OUTCOMES), the decision (action, reviewer, note, when, proposal hash, the people who
    approved, and `steps`: who did what), the edits of the analysis, and the category the humans
    ended with. An analysis a person edited or forked is `approved_after_edits`, whoever approved it."""
    summary = row.get("summary") or {}
    decision = summary.get("decision") or {}
    steps = human_steps(audit_rows, points)
    edits = analysis_edits(steps)
    requests = [s for s in steps if s["action"] == "revise"]
    status = row["status"]
    if status in ("approved", "fix_proposed"):
        outcome = "approved_after_edits" if edits else "revised" if requests else "approved_as_analysed"
    elif status in ("rejected", "merged", "expired", "failed"):
        outcome = status
    else:
        outcome = "pending"
    approvers = [a.get("by") for a in decision.get("approvals") or [] if a.get("by")]
    return {
        "outcome": outcome,
        "decision": {"action": decision.get("action"), "reviewer": decision.get("reviewer"),
                     "note": decision.get("note"), "at": decision.get("decided_at"),
                     "proposal_hash": decision.get("proposal_hash"),
                     "requests": [s["note"] for s in requests], "approvers": approvers,
                     "reviewers": sorted({s["by"] for s in steps}), "steps": steps} if decision or steps else {},
        "edits": edits,
        # the label the humans stand behind: what they approved (a rejection names none)
        "category": row.get("category") if outcome in APPROVED else None,
    }
