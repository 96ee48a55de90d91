"""Pairwise judgments of a backtest's results (migration 19): for one incident, which of the live
analyst's answer and the candidate's a reviewer preferred, with the reason, the order the two were
shown in, and the category the reviewer said was right, if any. One per (backtest, incident,
reviewer): judging again replaces the reviewer's earlier judgment. Pruned with their backtest
(store/backtests.py prune_before)."""
from __future__ import annotations

from typing import Any

from pipeline.clock import iso
from pipeline.store.records import Records
from pipeline.store.sql import placeholders

SIDES = ("live", "candidate")
CHOICES = ("A", "B", "equal")
ORDERS = (*SIDES, "named")  # which side was shown as A; `named`: the sides were named, not blinded
COLUMNS = ("backtest_id", "incident_id", "reviewer", "a_side", "choice", "preferred", "reason", "correction",
           "judged_at")


def preferred_side(choice: str, a_side: str) -> str:
    """live | candidate | equal: the side a choice of A, B or equal names, given which side was A."""
    if choice == "equal":
        return "equal"
    if a_side not in SIDES:
        raise ValueError(f"a choice of {choice} needs the side shown as A (live or candidate), not {a_side!r}")
    return a_side if choice == "A" else next(s for s in SIDES if s != a_side)


def record(records: Records, *, backtest_id: str, incident_id: str, reviewer: str, a_side: str, choice: str,
           reason: str, correction: str | None = None) -> dict[str, Any]:
    """Store one judgment (replacing this reviewer's earlier one of the incident); returns it as stored."""
    if a_side not in ORDERS or choice not in CHOICES:
        raise ValueError(f"judgment: a_side {a_side!r} (of {ORDERS}), choice {choice!r} (of {CHOICES})")
    row = {"backtest_id": backtest_id, "incident_id": incident_id, "reviewer": reviewer, "a_side": a_side,
           "choice": choice, "preferred": preferred_side(choice, a_side) if a_side != "named" else choice,
           "reason": reason, "correction": correction or None, "judged_at": iso(records.clock.now())}
    if row["preferred"] not in (*SIDES, "equal"):
        raise ValueError(f"judgment with named sides: the choice is live, candidate or equal, not {choice!r}")
    values = tuple(row[c] for c in COLUMNS)
    with records.transaction() as conn:
        conn.execute(f"INSERT INTO backtest_judgments({', '.join(COLUMNS)}) VALUES"
                     f" ({placeholders(len(COLUMNS))})"
                     " ON CONFLICT (backtest_id, incident_id, reviewer) DO UPDATE SET a_side = excluded.a_side,"
                     " choice = excluded.choice, preferred = excluded.preferred, reason = excluded.reason,"
                     " correction = excluded.correction, judged_at = excluded.judged_at", values)
    return row


def of_backtest(records: Records, backtest_id: str) -> list[dict[str, Any]]:
    """A backtest's judgments, by incident then reviewer."""
    return [dict(r) for r in records.query(f"SELECT {', '.join(COLUMNS)} FROM backtest_judgments"
                                           " WHERE backtest_id = $1 ORDER BY incident_id, reviewer", (backtest_id,))]

