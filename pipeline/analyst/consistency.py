"""Consistency between an analysis's root cause, its fix plan and its diff: a proposal a reviewer
approves must not say one thing and do another.

The rules (`problems` lists the ones a proposal breaks):
- the plan's first step says "No diff" exactly when there is no diff, and otherwise names the
  change the diff makes (its file, and its key for a property);
- no by-hand step repeats the hint the diff already applies;
- the root cause does not deny what the diff changes ("the pool is not too small by itself"
  while the diff raises the pool size);
- an analysis a reviewer called "not a code defect" has no proposal.
`contradicted_hint` is the same third rule, used when a hint is chosen (pipeline/analyst/fixes.py).
"""
from __future__ import annotations

import re
from typing import Sequence

from pipeline.analyst.reading import says_not_code_defect

# "the pool is not too small", "timeouts are not too short": a quantity the root cause says is fine
_DENIED = re.compile(r"\b(?P<subject>[a-z][\w-]*)\s+(?:is|are)\s+not\s+too\s+(?P<what>small|low|short|few)\b", re.I)


def denied_subjects(root_cause: str) -> set[str]:
    """The things a root cause says are not too small (lowered words: {"pool"})."""
    return {m.group("subject").lower() for m in _DENIED.finditer(root_cause or "")}


def _raises(before: str, after: str) -> bool:
    try:
        return float(after) > float(before)
    except (TypeError, ValueError):
        return False


def contradicted_hint(root_cause: str, key: str, before: str | None, after: str) -> str | None:
    """Why raising `key` from `before` to `after` contradicts the root cause, or None."""
    words = set(re.split(r"[-_.]", key.lower()))
    for subject in denied_subjects(root_cause):
        if subject in words and (before is None or _raises(before, after)):
            return f"the root cause says the {subject} is not too small, so raising {key} would contradict it"
    return None


def problems(*, root_cause: str | None, proposal: dict | None, feedback: Sequence[str] = ()) -> list[str]:
    """The consistency rules a proposal (plan, diff, change) breaks against its root cause."""
    out: list[str] = []
    if proposal is None:
        return out
    plan, diff, change = list(proposal.get("plan") or []), proposal.get("diff"), proposal.get("change")
    if says_not_code_defect(root_cause or "") or any(says_not_code_defect(t) for t in feedback):
        out.append("a proposal for an analysis a reviewer called not a code defect")
    if not plan:
        return out + ["a proposal without a plan"]
    if bool(diff) == plan[0].startswith("No diff"):
        out.append("the plan's first step and the diff disagree on whether there is a change")
    if diff and change:
        if change.get("file") and change["file"] not in plan[0]:
            out.append(f"the plan's first step does not name the file the diff changes ({change['file']})")
        if change.get("key") and change["key"] not in plan[0]:
            out.append(f"the plan's first step does not name the key the diff changes ({change['key']})")
        hint = str(change.get("hint") or "")
        if hint and any(step.startswith("By hand") and hint in step for step in plan[1:]):
            out.append(f"a by-hand step repeats what the diff already does ({hint})")
        if change.get("kind") == "set_property":
            why = contradicted_hint(root_cause or "", str(change.get("key")), change.get("before"),
                                    str(change.get("after")))
            if why:
                out.append(why)
    return out
