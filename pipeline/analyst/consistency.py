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

import functools
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


# words a signature shares with any sentence: they say nothing of which symptom it is
_COMMON = frozenset({"the", "a", "an", "to", "of", "by", "on", "at", "in", "is", "for", "and", "or", "error", "failed",
                     "exception", "connection", "connect", "re", "s", "d", "w", "n"})


@functools.lru_cache(maxsize=4096)  # a doc's signatures, read for every incident it explains
def _sig_words(signature: str) -> frozenset[str]:
    text = signature[3:] if signature.startswith("re:") else signature
    return frozenset({w for w in re.findall(r"[a-z][a-z0-9]+|\d{2,}", re.sub(r"\\[a-zA-Z]", " ", text).lower())}
                     - _COMMON)


@functools.lru_cache(maxsize=4096)
def _word_start(word: str) -> re.Pattern[str]:
    return re.compile(rf"\b{re.escape(word)}")


def uncontradicted_why(why: str, signatures: Sequence[str], matched: Sequence[str], evidence: str) -> str:
    """A doc's "why this happens" paragraph without the sentences about a symptom of it the evidence
    does not show (issue 36.2: no claim the evidence contradicts): a sentence that quotes one of the
    doc's literal signatures (two words or more) the events do not carry, whose own words no event
    says ("Connection reset by peer (errno 104) means ..." when the events say "Connection
    refused"), unless it names what they do show as well. The first sentence always stays."""
    if not matched:
        return why
    lowered = evidence.lower()
    carried = frozenset().union(*(_sig_words(s) for s in matched))
    symptoms = [s.lower() for s in signatures if s not in matched and not s.startswith("re:") and len(s.split()) >= 2
                and (_sig_words(s) - carried)
                and not any(w in lowered and _word_start(w).search(lowered) for w in _sig_words(s) - carried)]
    if not symptoms:
        return why
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Za-z\"`'(])", why.strip())
    shown = [m.lower() for m in matched if not m.startswith("re:")]

    def other_symptom(sentence: str) -> bool:
        low = sentence.lower()
        # a sentence naming what the events do show too (a carried signature, a quote of them) stays
        if any(m in low for m in shown) or any(q.lower() in lowered for q in re.findall(r'"([^"]{8,})"', sentence)):
            return False
        return any(symptom in low for symptom in symptoms)

    return " ".join(sentences[:1] + [x for x in sentences[1:] if not other_symptom(x)])
