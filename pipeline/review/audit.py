"""The audit log as files a compliance reviewer opens: JSON, or CSV with before/after as JSON text."""
from __future__ import annotations

import csv
import io
import json

from pipeline.errors import UsageError

COLUMNS = ("id", "at", "incident_id", "reviewer", "action", "checkpoint_before", "checkpoint_after",
           "before", "after", "note", "auth")
FORMATS = ("json", "csv")


def export_audit(rows: list[dict], *, fmt: str = "json") -> str:
    """Audit rows (oldest first) as a JSON document or CSV text."""
    if fmt == "json":
        return json.dumps([{c: row.get(c) for c in COLUMNS} for row in rows], indent=2, default=str)
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow([json.dumps(row.get(c), sort_keys=True, default=str) if c in ("before", "after")
                             else ("" if row.get(c) is None else row.get(c)) for c in COLUMNS])
        return out.getvalue()
    raise UsageError(f"unknown audit format {fmt!r}: use one of {', '.join(FORMATS)}")
