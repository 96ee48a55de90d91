"""Full-text search of incidents (id, service, category, title), newest first, at a cost that does
not grow with the store.

On SQLite (FTS5, migration 6) in two parts, read in that order:
- the newest 100,000 incidents (store_meta 'search_recent', schema.SEARCH_RECENT): the text anywhere (a trigram index: substrings, any case);
- every older incident: the text's words as a phrase of whole words (a unicode61 word index:
  `payments-api` finds `payments-api` and `payments api`, `deadlock` finds `db_deadlock`, the
  tail of an id after its last `-` finds the id; `deadl` does not find `deadlock` there).
A trigram index over every incident answered the same as the first part everywhere, but a text
whose trigrams are common (`svc-…` in every service name) read lists that grew with the store.
The FTS5 indexes hold id, service and title, written once when an incident opens; its category,
set by its analysis, is matched against the few categories there are and read off the index on
(category, search_rowid) (migration 20), with each part's meaning, and merged in.

On PostgreSQL a pg_trgm index on the same columns answers the first question over every incident
(migration 5, schema.py); `search_rowid` keeps the order incidents opened in.
"""
from __future__ import annotations

import re
import unicodedata

from pipeline.store.records import Records
from pipeline.store.schema import SEARCHED
from pipeline.store.sql import Params

MIN_CHARS = 3  # a trigram index cannot answer shorter text


def available(records: Records) -> bool:
    """Whether the search index exists (this SQLite build had FTS5 when it migrated)."""
    cached = getattr(records, "_fts_available", None)
    if cached is None and records.postgres:
        cached = records.query("SELECT to_regclass('incidents_search') IS NOT NULL")[0][0]
    if cached is None:
        cached = bool(records.query("SELECT 1 FROM sqlite_master WHERE name = 'incidents_search_recent'"))
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
    """(search rowid, incident id) of up to `limit` matches, newest first, older than `before` (a
    search rowid: a page's cursor).

    FTS5 walks a phrase's matches in rowid order and stops at LIMIT, so a page costs the same
    whether the text matches ten incidents or a million.
    """
    if records.postgres:
        return _postgres_matches(records, text, before=before, limit=limit)
    newest = records.query("SELECT max(search_rowid) AS n FROM incidents")[0]["n"] or 0
    boundary = newest - recent_size(records)  # search rowids above it are in the trigram index
    found: list[tuple[int, str]] = []
    if before is None or before > boundary + 1:
        found = _fts(records, "incidents_search_recent", text, before=before, limit=limit)
    if len(found) < limit:
        older = boundary + 1 if before is None else min(before, boundary + 1)
        found += _fts(records, "incidents_search", text, before=older, limit=limit - len(found))
    # the category is not in the FTS5 indexes (migration 20): each category the text matches (as the
    # index of its part would match it) has its incidents read newest first off its own index, and
    # the newest `limit` of all are the page's
    by_category = _category_matches(records, text, before=before, boundary=boundary, limit=limit)
    if not by_category:
        return found
    merged = dict(found)
    merged.update(by_category)
    return sorted(merged.items(), reverse=True)[:limit]


def _category_matches(records: Records, text: str, *, before: int | None, boundary: int,
                      limit: int) -> list[tuple[int, str]]:
    categories = _categories(records)
    substring, words = text.casefold(), _words(text)
    found: list[tuple[int, str]] = []
    for category in categories:
        # newest incidents: the text anywhere in the category (the trigram index's meaning)
        if substring in category.casefold() and (before is None or before > boundary + 1):
            found += _of_category(records, category, above=boundary, before=before, limit=limit)
        # older ones: the text's words as a phrase of the category's whole words (the word index's)
        if words and _is_phrase_of(words, _words(category)):
            older = boundary + 1 if before is None else min(before, boundary + 1)
            found += _of_category(records, category, above=None, before=older, limit=limit)
    return found


def _categories(records: Records) -> list[str]:
    """Every category some incident has: a loose scan of the category index, one seek a category."""
    rows = records.query(
        "WITH RECURSIVE c(category) AS (SELECT min(category) FROM incidents UNION ALL"
        " SELECT (SELECT min(category) FROM incidents WHERE category > c.category) FROM c"
        " WHERE c.category IS NOT NULL) SELECT category FROM c WHERE category IS NOT NULL")
    return [r[0] for r in rows]


def _of_category(records: Records, category: str, *, above: int | None, before: int | None,
                 limit: int) -> list[tuple[int, str]]:
    p = Params()
    sql = f"SELECT search_rowid, incident_id FROM incidents WHERE category = {p(category)} AND search_rowid IS NOT NULL"
    if above is not None:
        sql += f" AND search_rowid > {p(int(above))}"
    if before is not None:
        sql += f" AND search_rowid < {p(int(before))}"
    rows = records.query(f"{sql} ORDER BY search_rowid DESC LIMIT {p(int(limit))}", p)
    return [(r[0], r[1]) for r in rows]


_WORD = re.compile(r"[^\W_]+")


def _words(text: str) -> list[str]:
    """The text's words as FTS5's unicode61 tokenizer reads them: runs of letters and digits,
    case-folded, without diacritics."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    return _WORD.findall(plain.casefold())


def _is_phrase_of(words: list[str], of: list[str]) -> bool:
    n = len(words)
    return any(of[i:i + n] == words for i in range(len(of) - n + 1))


def recent_size(records: Records) -> int:
    """How many of the newest incidents the substring (trigram) index holds on this SQLite store."""
    cached = getattr(records, "_search_recent", None)
    if cached is None:
        rows = records.query("SELECT value FROM store_meta WHERE key = 'search_recent'")
        cached = records._search_recent = int(rows[0]["value"]) if rows else 0
    return cached


def _fts(records: Records, table: str, text: str, *, before: int | None, limit: int) -> list[tuple[int, str]]:
    # rowid = -search_rowid: newest first is ascending rowid, FTS5's cheap direction
    p = Params()
    sql = f"SELECT rowid, incident_id FROM {table} WHERE {table} MATCH {p(match_expression(text))}"
    if before is not None:
        sql += f" AND rowid > {p(-int(before))}"
    rows = records.query(f"{sql} ORDER BY rowid LIMIT {p(int(limit))}", p)
    return [(-r[0], r[1]) for r in rows]


def _postgres_matches(records: Records, text: str, *, before: int | None, limit: int) -> list[tuple[int, str]]:
    # the trigram index on the searched columns (migration 5), the same substring, case-insensitive
    # match (ILIKE, which the index answers; `\` escapes the pattern's own wildcards)
    p = Params()
    sql = f"SELECT search_rowid, incident_id FROM incidents WHERE {SEARCHED} ILIKE {p(like_pattern(text))}"
    if before is not None:
        sql += f" AND search_rowid < {p(int(before))}"
    rows = records.query(f"{sql} ORDER BY search_rowid DESC LIMIT {p(int(limit))}", p)
    return [(r[0], r[1]) for r in rows]
