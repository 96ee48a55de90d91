"""The cause a person set (issue 36): a root cause a reviewer wrote (an edit, a fork, Edit & approve) or a
category they set, read back from the analysis so that what is derived from it after (the recommendation,
the code-fix eligibility) follows their cause, not the analyst's.

A written root cause is marked by a note the edit adds (`written_note`, pipeline/review/edits.py); a category
a reviewer set carries the note `OfflineAnalyst.set_by_reviewer` writes ("category C as set by reviewer R").
Both are the RCA's own notes, so they travel with the analysis through every checkpoint and are dropped when
the analyst answers again (a request for changes redoes the RCA)."""
from __future__ import annotations

import re

from pipeline.state import RCA

WRITTEN = "root cause as written by reviewer "
_SET = re.compile(r"^category (\w+) as set by reviewer (.+?)(?:;|$)")
# the written cause as the action leads with it: a sentence or two, never a pasted page
_SHOWN_CHARS = 300


def written_note(reviewer: str) -> str:
    return f"{WRITTEN}{reviewer or 'unnamed'}: the recommendation and the fix follow it"


def written_by(rca: RCA | None) -> str | None:
    """Who wrote the RCA's root cause, when a reviewer did (else None)."""
    for note in (rca.notes if rca else []):
        if note.startswith(WRITTEN):
            return note[len(WRITTEN):].partition(":")[0]
    return None


def set_by(rca: RCA | None) -> str | None:
    """Who set the RCA's category, when a reviewer did (else None)."""
    for note in (rca.notes if rca else []):
        if (match := _SET.match(note)) and match.group(1) == rca.category:  # type: ignore[union-attr]
            return match.group(2)
    return None


def with_written_note(rca: RCA, reviewer: str) -> RCA:
    """The RCA marked as carrying `reviewer`'s root cause (one such note, the newest writer's)."""
    notes = [n for n in rca.notes if not n.startswith(WRITTEN)]
    return rca.model_copy(update={"notes": [written_note(reviewer), *notes]})


def written_cause(rca: RCA | None) -> str | None:
    """The root cause a reviewer wrote, as the recommendation quotes it (clipped at a sentence end), or None."""
    who = written_by(rca)
    if rca is None or who is None or not rca.root_cause.strip():
        return None
    text = " ".join(rca.root_cause.split())
    if len(text) > _SHOWN_CHARS:
        cut = text.rfind(". ", 0, _SHOWN_CHARS)
        text = text[:cut + 1] if cut > 0 else text[:_SHOWN_CHARS].rstrip() + "\u2026"
    return f"As reviewer {who} states: {text}"
