"""The `source_layouts` table: per source, the line layout it is read with (issue 21).

A row is written when a file source's reader picks its format or learns its layout, and again
when the file is replaced (its identity, see pipeline/ingest/event_ids.py, changes); `layout` is
the JSON the reader describes it with (format, pattern, columns, a sample line split into fields).
"""
from __future__ import annotations

import json

from typing import Any

from pipeline.clock import iso
from pipeline.store.records import Records


def save_layout(records: Records, *, source: str, file_identity: str, format: str, layout: dict[str, Any]) -> bool:
    """Upsert a source's layout; False when the row already holds this file identity and layout."""
    text = json.dumps(layout, sort_keys=True, default=str)
    with records.transaction() as conn:
        row = conn.execute("SELECT file_identity, layout FROM source_layouts WHERE source = $1",
                           (source,)).fetchone()
        if row is not None and row[0] == file_identity and row[1] == text:
            return False
        conn.execute(
            "INSERT INTO source_layouts(source, file_identity, format, layout, learned_at) VALUES ($1,$2,$3,$4,$5)"
            " ON CONFLICT(source) DO UPDATE SET file_identity = excluded.file_identity, format = excluded.format,"
            " layout = excluded.layout, learned_at = excluded.learned_at",
            (source, file_identity, format, text, iso(records.clock.now())))
    return True


def source_layouts(records: Records) -> list[dict[str, Any]]:
    """Every source's layout, most recently learnt first."""
    rows = records.query("SELECT source, file_identity, format, layout, learned_at FROM source_layouts"
                         " ORDER BY learned_at DESC, source")
    out = []
    for r in rows:
        d = dict(r)
        d["layout"] = json.loads(d["layout"] or "{}")
        out.append(d)
    return out
