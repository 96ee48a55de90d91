"""How often an incident's patterns were seen here lately: the inbox's "new / rare / frequent".

Which incident new events of a pattern join is decided here too (`absorbs`): only one nobody has
decided yet. After a decision the next event of its patterns opens a new incident linked to it
(`recurred`): "recurred after INC-… was approved" (`link_text`), shown on the new incident and its
inbox row. A reviewer's split and merge link incidents the same way (review/grouping.py).

A pattern is the fingerprint of an error's template (`correlation.fingerprint`); it is seen on a
day when this data dir stored an event of it that day, by the store's clock and not the log's own
time (an old log read today is news today, and a burst read in one day is one day). The label
counts the distinct days of the last WINDOW_DAYS on which any of the incident's patterns was seen:
one day (this burst alone) is `new`, a pattern back on a few days `rare`, on many `frequent`.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Mapping

from pipeline.state import OPEN_STATUSES

WINDOW_DAYS = 30
RARE_FROM_DAYS = 2  # seen on 2 to 6 of the last 30 days
FREQUENT_FROM_DAYS = 7  # seen on 7 or more: about weekly, or more often
LABELS = ("new", "rare", "frequent")


def label(days_seen: int) -> str:
    """The label for patterns seen on `days_seen` distinct days of the window."""
    if days_seen >= FREQUENT_FROM_DAYS:
        return "frequent"
    return "rare" if days_seen >= RARE_FROM_DAYS else "new"


def window_start(now: datetime) -> str:
    """The first day (ISO date, UTC) the window counts, today being its last."""
    return (now.date() - timedelta(days=WINDOW_DAYS - 1)).isoformat()


def help_text() -> str:
    """The thresholds in the reviewer's words (the inbox column's help)."""
    return (f"how many of the last {WINDOW_DAYS} days its patterns were seen here: new (one day),"
            f" rare ({RARE_FROM_DAYS}–{FREQUENT_FROM_DAYS - 1} days), frequent ({FREQUENT_FROM_DAYS} or more)")


# how a link reads (incidents.link_kind, schema 16); `recurred` names the decision's status
RECURRED, SPLIT, MERGED = "recurred", "split", "merged"
_DECIDED_WORDS = {"fix_proposed": "approved with a fix proposal", "approved": "approved", "rejected": "rejected",
                  "expired": "left to expire", "merged": "merged"}


def absorbs(status: str) -> bool:
    """Whether an incident in `status` takes new events of its patterns: only while nobody has
    decided it (analysing, awaiting approval, in revision, failed and retried). A decided one never
    does, however soon after its decision they come: they open a new incident linked to it."""
    return status in OPEN_STATUSES


def link_text(row: Mapping[str, Any]) -> str | None:
    """What an incident's link says (None: it has none): "recurred after INC-… was approved",
    "split out of INC-…", "merged into INC-…"."""
    linked, kind = row.get("linked_to"), row.get("link_kind")
    if not linked or not kind:
        return None
    if kind == RECURRED:
        decided = _DECIDED_WORDS.get(str(row.get("link_status") or ""), "decided")
        return f"recurred after {linked} was {decided}"
    return f"split out of {linked}" if kind == SPLIT else f"merged into {linked}"
