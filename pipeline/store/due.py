"""Which incidents the poller works now, asked for in bounded batches (each one index read).

The same incidents as `Records.incidents_needing_work`, in four kinds, each read off an index in
its own keyset order, `batch` at a time (the poller and `ingest`'s runner.run_pending work through them):

| kind | which | order | index |
|---|---|---|---|
| analyzing | runs to start or continue (a crash or a stop cut them off) | opened | incidents_analyzing |
| in_revision | runs a reviewer sent back | opened | incidents_in_revision |
| retry | failed runs whose retry is due (not given up) | opened | incidents_retry_due |
| merge | paused incidents whose oldest unmerged event waited `merge_delay` | incident id | events_unmerged |

So a batch costs the same at 10k incidents as at 1M, and however many need work: the poller
reads the next batch only once it has worked the last (an incident a batch returns has moved on
by the time the next batch is read; the keyset starts after it either way). Statuses are literals
in the SQL text so the partial indexes (migration 6) match on both stores.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any, Iterator

from pipeline.clock import iso
from pipeline.store.records import Records
from pipeline.store.sql import Params

BATCH = 100
KINDS = ("analyzing", "in_revision", "retry", "merge")
GIVEN_UP = "9999-12-31T00:00:00+00:00"  # runner.NEVER: the next_attempt_at of a run given up on

# kind -> (the rows it reads, their keyset order); `{after}` is where the cursor's condition goes
_OPENED = {
    "analyzing": "status = 'analyzing'",
    "in_revision": "status = 'in_revision'",
    # the partial index's own terms, verbatim: SQLite uses a partial index only when the query repeats them
    "retry": f"status = 'failed' AND coalesce(next_attempt_at, '') < '{GIVEN_UP}' AND coalesce(next_attempt_at, '') <= $1",
}


def batch(records: Records, kind: str, *, after: list[Any] | None, merge_delay: float = 0.0,
          limit: int = BATCH) -> tuple[list[str], list[Any] | None]:
    """One batch of a kind: (incident ids due now, the cursor of the next batch or None when this
    was the last). A batch may hold fewer ids than `limit` and still have a next one (merge: the
    evidence's incident moved on meanwhile)."""
    now = records.clock.now()
    if kind in _OPENED:
        sql = f"SELECT incident_id, created_at FROM incidents WHERE {_OPENED[kind]}"
        p = Params([iso(now)] if kind == "retry" else [])  # the retry condition's $1
        if after is not None:
            sql += f" AND (created_at, incident_id) > ({p.each(after)})"
        rows = records.query(f"{sql} ORDER BY created_at, incident_id LIMIT {p(int(limit))}", p)
        ids = [r["incident_id"] for r in rows]
        more = len(rows) == limit
        return ids, [rows[-1]["created_at"], rows[-1]["incident_id"]] if more else None
    if kind != "merge":
        raise ValueError(f"not a kind of due work: {kind}")
    # the incidents with unmerged evidence, in incident id order off the events_unmerged partial
    # index (it holds only unmerged events), due when their oldest one waited merge_delay
    rows = records.query(
        "SELECT u.incident_id, i.status FROM (SELECT incident_id FROM events"
        " WHERE merged = 0 AND incident_id IS NOT NULL AND incident_id > $1"
        " GROUP BY incident_id HAVING min(stored_at) <= $2 ORDER BY incident_id LIMIT $3) AS u"
        " LEFT JOIN incidents i ON i.incident_id = u.incident_id ORDER BY u.incident_id",
        ((after or [""])[0], iso(now - timedelta(seconds=merge_delay)), int(limit)))
    ids = [r["incident_id"] for r in rows if r["status"] == "awaiting_approval"]
    return ids, [rows[-1]["incident_id"]] if len(rows) == limit else None


def due_incidents(records: Records, *, merge_delay: float = 0.0, limit: int = BATCH) -> Iterator[str]:
    """Every incident that needs work now, kind by kind, a batch read only when the caller has
    taken the last one's ids; an incident comes once per call even if it turns due again."""
    seen: set[str] = set()
    for kind in KINDS:
        after: list[Any] | None = None
        while True:
            ids, after = batch(records, kind, after=after, merge_delay=merge_delay, limit=limit)
            for incident_id in ids:
                if incident_id not in seen:
                    seen.add(incident_id)
                    yield incident_id
            if after is None:
                break
