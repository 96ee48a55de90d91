"""The inbox as the reviewer reads it: statuses grouped into filters, rows with age and SLA."""
from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd

from pipeline.state import CLOSED_STATUSES

# filter label -> statuses; the first is the default view (incidents waiting for a human)
FILTERS: dict[str, tuple[str, ...]] = {
    "awaiting": ("awaiting_approval",),
    "in revision": ("in_revision",),
    "analyzing": ("analyzing",),
    "failed": ("failed",),
    "decided": CLOSED_STATUSES,
    "all": (),
}
PAGE_SIZE = 50
COLUMNS = ("incident_id", "service", "severity", "category", "confidence", "events", "age", "sla",
           "status", "title")


def filter_count(counts: dict[str, int], label: str) -> int:
    """How many incidents a filter shows, from the per-status counts."""
    statuses = FILTERS[label] or tuple(counts)
    return sum(counts.get(s, 0) for s in statuses)


def duration(delta: timedelta) -> str:
    """A compact human duration: 45s, 12m, 3h 05m, 2d 4h."""
    seconds = int(abs(delta.total_seconds()))
    if seconds < 60:
        return f"{seconds}s"
    minutes, hours, days = seconds // 60, seconds // 3600, seconds // 86400
    if hours < 1:
        return f"{minutes}m"
    if days < 1:
        return f"{hours}h {minutes % 60:02d}m"
    return f"{days}d {hours % 24}h"


def is_overdue(row: dict, now: datetime) -> bool:
    """An open incident past its SLA deadline (decided ones are never overdue)."""
    return row["status"] not in CLOSED_STATUSES and datetime.fromisoformat(row["sla_deadline"]) < now


def sla_text(row: dict, now: datetime) -> str:
    if row["status"] in CLOSED_STATUSES:
        return "decided"
    left = datetime.fromisoformat(row["sla_deadline"]) - now
    return f"overdue {duration(left)}" if left.total_seconds() < 0 else f"{duration(left)} left"


def inbox_frame(rows: list[dict], now: datetime) -> pd.DataFrame:
    """One row per incident with the columns the inbox shows, plus an `overdue` flag."""
    records = [{
        "incident_id": r["incident_id"],
        "service": r["service"],
        "severity": r["severity"],
        "category": r["category"] or "",
        "confidence": r["confidence"],
        "events": r["event_count"],
        "age": duration(now - datetime.fromisoformat(r["created_at"])),
        "sla": sla_text(r, now),
        "status": r["status"],
        "title": r.get("title") or "",
        "overdue": is_overdue(r, now),
    } for r in rows]
    return pd.DataFrame.from_records(records, columns=[*COLUMNS, "overdue"])


def highlight_overdue(frame: pd.DataFrame):
    """A Styler that tints overdue rows (show it with column_order=COLUMNS to hide the flag)."""
    def tint(row):
        style = "background-color: rgba(255, 75, 75, 0.18)" if row["overdue"] else ""
        return [style] * len(row)

    return frame.style.apply(tint, axis=1)
