"""Full-text search of incidents: SQLite's FTS5 with the trigram tokenizer (substring matches,
case-insensitive), kept by the triggers of migration 2. SQLite-specific by nature; a Postgres
store would answer the same two questions with pg_trgm."""
from __future__ import annotations

from pipeline.store.records import Records

MIN_CHARS = 3  # a trigram index cannot answer shorter text


def available(records: Records) -> bool:
    """Whether the incidents_search table exists (this SQLite build had FTS5 when it migrated)."""
    cached = getattr(records, "_fts_available", None)
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


def matching_ids_sql() -> str:
    """A subquery of the incident ids whose id, service or title contains the phrase (one `?`)."""
    return "SELECT incident_id FROM incidents_search WHERE incidents_search MATCH ?"
