"""Full-text search of incidents: SQLite's FTS5 with the trigram tokenizer (substring matches,
case-insensitive), kept by the triggers of migration 5; on PostgreSQL a pg_trgm index on the same
columns answers the same two questions (pipeline/store/postgres.py)."""
from __future__ import annotations

from pipeline.store.records import Records

MIN_CHARS = 3  # a trigram index cannot answer shorter text


def available(records: Records) -> bool:
    """Whether the incidents_search table exists (this SQLite build had FTS5 when it migrated)."""
    cached = getattr(records, "_fts_available", None)
    if cached is None and records.postgres:
        cached = records.query("SELECT to_regclass('incidents_search') IS NOT NULL")[0][0]
    if cached is None:
        cached = bool(records.query("SELECT 1 FROM sqlite_master WHERE name = 'incidents_search'"))
        records._fts_available = cached
    return cached


def usable(records: Records, text: str) -> bool:
    """Whether the index can answer this search text."""
    return len(text) >= MIN_CHARS and available(records)


def match_expression(text: str) -> str:
    """The text as one FTS5 phrase: quotes doubled, so no query syntax reaches the engine."""
    return '"' + text.replace('"', '""') + '"'


def like_pattern(text: str) -> str:
    """The text as a LIKE pattern that matches it anywhere, literally (no wildcard of its own)."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def newest_matches(records: Records, text: str, *, before: int | None, limit: int) -> list[tuple[int, str]]:
    """(search rowid, incident id) of matches, newest first, before a rowid (a page's cursor).

    FTS5 walks a phrase's matches in rowid order and stops at LIMIT, so a page costs the same
    whether the text matches ten incidents or a million.
    """
    if records.postgres:
        # the trigram index on the searched columns (pipeline/store/postgres.py), the same
        # substring, case-insensitive match; search_rowid keeps the order incidents opened in
        from pipeline.store.postgres import SEARCHED

        sql = f"SELECT search_rowid, incident_id FROM incidents WHERE {SEARCHED} LIKE ?"
        params: list = [like_pattern(text)]
    else:
        sql = "SELECT rowid, incident_id FROM incidents_search WHERE incidents_search MATCH ?"
        params = [match_expression(text)]
    if before is not None:
        sql += " AND search_rowid < ?" if records.postgres else " AND rowid < ?"
        params.append(int(before))
    order = "search_rowid" if records.postgres else "rowid"
    rows = records.query(sql + f" ORDER BY {order} DESC LIMIT ?", (*params, int(limit)))
    return [(r[0], r[1]) for r in rows]
