"""The inbox's views as keyset pages, each one index range read in order (no OFFSET, no sort).

| view | rows | order | index |
|---|---|---|---|
| one status (awaiting, in revision, analyzing, failed) | that status | SLA deadline, severity, opened | incidents_queue |
| decided | closed statuses | most recently closed first | incidents_closed |
| all | every incident | newest first | incidents_newest |
| by service | one service (any status filter) | newest first | incidents_service |
| search | the text in id, service, title or category (see search.py) | newest first | incidents_search_recent, incidents_search (FTS5), incidents_category_search |

A page ends with a cursor (the last row's sort key as JSON); the next page starts after it, so a
page costs the same at row 50 as at row 500,000. Search uses the FTS5 tables when this SQLite
build has them (migration 6) and the text has at least three characters, newest first in the order
incidents opened: substrings among the newest incidents, whole words in older ones (search.py);
otherwise a LIKE scan (substrings everywhere; slow on a large store).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Sequence

from pipeline.errors import UsageError
from pipeline.state import CLOSED_STATUSES
from pipeline.store import search as fulltext
from pipeline.store.records import Records, _incident_dict
from pipeline.store.schema import SEVERITY_RANK
from pipeline.store.sql import LIKE, Params

LIST_COLUMNS = ("incident_id, title, service, status, severity, category, confidence, event_count, first_seen,"
                " last_seen, created_at, updated_at, closed_at, sla_deadline, pending_interrupt_id, revisions,"
                " last_error, assignee, escalated_at, approvals_floor, backfilled, pattern_count, service_count, linked_to, link_kind, link_status, summary")


@dataclass(frozen=True)
class Page:
    rows: list[dict[str, Any]]
    next_cursor: str | None  # None: this is the last page


@dataclass(frozen=True)
class _Order:
    key: tuple[str, ...]  # the sort key's SQL expressions, in index order
    descending: bool
    index: str


QUEUE = _Order(("sla_deadline", SEVERITY_RANK, "created_at", "incident_id"), False, "incidents_queue")
CLOSED = _Order(("closed_at", "incident_id"), True, "incidents_closed")
NEWEST = _Order(("created_at", "incident_id"), True, "incidents_newest")
BY_SERVICE = _Order(("created_at", "incident_id"), True, "incidents_service")
# the orders a reviewer may choose (the inbox's Sort); None keeps the view's own order above
SORTS: dict[str, _Order] = {
    "sla": QUEUE,
    "newest": NEWEST,
    "oldest": _Order(("created_at", "incident_id"), False, "incidents_newest"),
    "severity": _Order((SEVERITY_RANK, "sla_deadline", "incident_id"), False, "incidents_queue"),
    "confidence": _Order(("coalesce(confidence, -1.0)", "incident_id"), True, "incidents_newest"),
    "events": _Order(("event_count", "incident_id"), True, "incidents_newest"),
}


def inbox_page(records: Records, *, statuses: Sequence[str] = (), service: str | None = None,
               search: str | None = None, after: str | None = None, limit: int = 50,
               assignee: str | None = None, severities: Sequence[str] = (), opened_from: str | None = None,
               opened_to: str | None = None, sort: str | None = None) -> Page:
    """One page of the inbox view the filters name, starting after `after` (a page's next_cursor);
    `assignee` narrows any view to one person's incidents, `severities` to those severities,
    `opened_from`/`opened_to` (ISO dates, both included) to incidents whose first error was logged
    on those days (the log's day, not the ingest day); `sort`
    (one of SORTS) replaces the view's own order (not a full-text search's: newest first)."""
    statuses = tuple(statuses or ())
    if sort is not None and sort not in SORTS:
        raise UsageError(f"no inbox order named {sort!r} (the orders: {', '.join(SORTS)})")
    where: list[str] = []
    p = Params()
    if assignee:
        where.append(f"assignee = {p(assignee)}")
    where += _narrowing(p, severities=severities, opened_from=opened_from, opened_to=opened_to)
    search = (search or "").strip() or None
    if search and fulltext.usable(records, search):
        return _search_page(records, search, statuses=statuses, service=service, after=after, limit=limit,
                            assignee=assignee, severities=severities, opened_from=opened_from, opened_to=opened_to)
    if search:
        order = NEWEST
        pattern, like = p(f"%{search}%"), LIKE[records.conn.dialect]
        where.append(f"(incident_id {like} {pattern} OR service {like} {pattern} OR category {like} {pattern}"
                     f" OR title {like} {pattern})")
        if service:
            where.append(f"service = {p(service)}")
    elif service:
        order = BY_SERVICE
        where.append(f"service = {p(service)}")
    elif len(statuses) == 1:
        order = QUEUE
    elif statuses and set(statuses) == set(CLOSED_STATUSES):
        order = CLOSED
        where.append("closed_at IS NOT NULL")
    else:
        order = NEWEST
    if sort is not None:
        order = SORTS[sort]
    if statuses:
        where.append(f"status IN ({p.each(statuses)})")
    if after is not None:
        key = _decode(after, len(order.key))
        where.append(f"({', '.join(order.key)}) {'<' if order.descending else '>'} ({p.each(key)})")
    direction = " DESC" if order.descending else ""
    sql = (f"SELECT {LIST_COLUMNS}, {', '.join(f'{k} AS _k{i}' for i, k in enumerate(order.key))}"
           f" FROM incidents{' WHERE ' + ' AND '.join(where) if where else ''}"
           f" ORDER BY {', '.join(k + direction for k in order.key)} LIMIT {p(int(limit) + 1)}")
    rows = records.query(sql, p)
    more = len(rows) > limit
    rows = rows[:limit]
    cursor = json.dumps([rows[-1][f"_k{i}"] for i in range(len(order.key))]) if more and rows else None
    return Page(rows=[{k: v for k, v in dict(r).items() if not k.startswith("_k")} for r in rows], next_cursor=cursor)


SEARCH_BATCH = 200  # matches read per step once filters have dropped some (the first step reads a page's worth)


def _narrowing(p: Params, *, severities: Sequence[str], opened_from: str | None, opened_to: str | None) -> list[str]:
    """The severity and day filters as WHERE terms. The days are the log's own (UTC): the day of the
    incident's first error (`first_seen`), not the day it was taken in, which for an old log read
    today is today (issue 38.4). Dates compare as the stored ISO text (UTC, so it sorts as time)."""
    out = []
    if severities:
        out.append(f"severity IN ({p.each(tuple(severities))})")
    if opened_from:
        out.append(f"first_seen >= {p(str(opened_from)[:10])}")
    if opened_to:
        day = date.fromisoformat(str(opened_to)[:10]) + timedelta(days=1)
        out.append(f"first_seen < {p(day.isoformat())}")
    return out


def _search_page(records: Records, text: str, *, statuses: tuple[str, ...], service: str | None,
                 after: str | None, limit: int, assignee: str | None = None, severities: Sequence[str] = (),
                 opened_from: str | None = None, opened_to: str | None = None) -> Page:
    # matches come newest first off the search index in batches; filters apply to each batch
    before = _decode(after, 1)[0] if after is not None else None
    found: list[tuple[int, dict[str, Any]]] = []
    size = limit + 1  # a page's worth first (each match costs a read of its row)...
    while len(found) <= limit:
        batch = fulltext.newest_matches(records, text, before=before, limit=size)
        if not batch:
            break
        p = Params()
        sql = f"SELECT {LIST_COLUMNS} FROM incidents WHERE incident_id IN ({p.each(i for _, i in batch)})"
        if statuses:
            sql += f" AND status IN ({p.each(statuses)})"
        if service:
            sql += f" AND service = {p(service)}"
        if assignee:
            sql += f" AND assignee = {p(assignee)}"
        for term in _narrowing(p, severities=severities, opened_from=opened_from, opened_to=opened_to):
            sql += f" AND {term}"
        by_id = {r["incident_id"]: dict(r) for r in records.query(sql, p)}
        found += [(rowid, by_id[incident_id]) for rowid, incident_id in batch if incident_id in by_id]
        before = batch[-1][0]
        if len(batch) < size:
            break
        size = SEARCH_BATCH  # ...then more at a time, when filters dropped some
    more = len(found) > limit
    found = found[:limit]
    return Page(rows=[row for _, row in found], next_cursor=json.dumps([found[-1][0]]) if more and found else None)


def _decode(cursor: str, width: int) -> list[Any]:
    try:
        key = json.loads(cursor)
    except (TypeError, ValueError):
        key = None
    if not isinstance(key, list) or len(key) != width:
        raise UsageError(f"not a cursor of this inbox view: {cursor!r}")
    return key


def page_rows(page: Page) -> list[dict[str, Any]]:
    """The page's rows as incident dicts (the shape Records.incidents returns: summary parsed)."""
    return [_incident_dict(r) for r in page.rows]
