"""The audit log as files a compliance reviewer opens: JSON, or CSV with before/after as JSON text."""
from __future__ import annotations

import csv
import io
import json
from typing import Any

from pipeline.errors import UsageError

COLUMNS = ("id", "at", "incident_id", "reviewer", "action", "checkpoint_before", "checkpoint_after",
           "before", "after", "note", "auth")
FORMATS = ("json", "csv")
# A spreadsheet runs a cell starting with one of these as a formula (`=HYPERLINK(...)` in a reason or
# a reviewer name); OWASP's rule: prefix such a cell with a quote, in CSV only (JSON stays exact).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def export_audit(rows: list[dict[str, Any]], *, fmt: str = "json") -> str:
    """Audit rows (oldest first) as a JSON document or CSV text."""
    if fmt == "json":
        return json.dumps([{c: row.get(c) for c in COLUMNS} for row in rows], indent=2, default=str)
    if fmt == "csv":
        out = io.StringIO()
        # RFC 4180 line ends: the writer then quotes any cell holding a CR or LF, so a reason cannot
        # start a row of its own in a reader
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(COLUMNS)
        for row in rows:
            writer.writerow([_cell(json.dumps(row.get(c), sort_keys=True, default=str) if c in ("before", "after")
                                   else ("" if row.get(c) is None else row.get(c))) for c in COLUMNS])
        return out.getvalue()
    raise UsageError(f"unknown audit format {fmt!r}: use one of {', '.join(FORMATS)}")


def _cell(value: object) -> object:
    """A CSV cell a spreadsheet shows as text, never evaluates."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value
