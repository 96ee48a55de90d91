"""Reads the workbench needs that the review service does not offer, on the indexed records store."""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Callable

from pipeline.clock import iso
from pipeline.store.records import Records
from pipeline.store.sql import Params
from pipeline.state import OPEN_STATUSES


def overdue_count(records: Records, at: datetime | None = None) -> int:
    """Open incidents past their SLA deadline. On SQLite, the per-minute counts of open incidents'
    deadlines (migration 7) for the minutes before now, plus the current minute's rows off the
    incidents_inbox index: the same whether 50 or 50,000 are overdue. On PostgreSQL, the overdue
    rows counted off that index."""
    now = iso(at or records.clock.now())
    p = Params([now])  # $1
    if records.postgres:
        rows = records.query(f"SELECT count(*) AS n FROM incidents WHERE status IN ({p.each(OPEN_STATUSES)})"
                             " AND sla_deadline < $1", p)
        return int(rows[0]["n"])
    minute = p(now[:16])  # stored deadlines are UTC ISO text: "2026-11-28T10:05"
    rows = records.query(
        f"SELECT (SELECT coalesce(sum(n), 0) FROM open_deadlines WHERE minute < {minute})"
        f" + (SELECT count(*) FROM incidents WHERE status IN ({p.each(OPEN_STATUSES)})"
        f" AND sla_deadline >= {minute} AND sla_deadline < $1) AS n", p)
    return int(rows[0]["n"])


def services(records: Records) -> list[str]:
    """The services incidents were opened for, in name order (the inbox's service filter; off the
    incidents_service index)."""
    return [r["service"] for r in records.query("SELECT DISTINCT service FROM incidents ORDER BY service")]


def assignees(records: Records, statuses: tuple[str, ...] = OPEN_STATUSES) -> list[str]:
    """The people on incidents of these statuses (open ones by default), in name order (the inbox's
    assignee filter; off the incidents_assignee index, no incident row read)."""
    p = Params()
    rows = records.query(f"SELECT DISTINCT assignee FROM incidents WHERE assignee IS NOT NULL"
                         f" AND status IN ({p.each(statuses)}) ORDER BY assignee", p)
    return [r["assignee"] for r in rows]


def dead_letter_count(records: Records) -> int:
    """How many input lines were rejected, in total."""
    return int(records.query("SELECT count(*) AS n FROM dead_letters")[0]["n"])


def arrivals(records: Records, since: datetime, *, bucket: str = "hour") -> list[dict[str, Any]]:
    """Events stored and incidents opened per time bucket (minute or hour, UTC) since `since`."""
    width = {"minute": 16, "hour": 13}[bucket]
    stamp = iso(since)
    events = records.query(f"SELECT bucket, sum(n) AS n FROM (SELECT substr(stored_at, 1, {width}) AS bucket,"
                           " count(*) AS n FROM events WHERE stored_at >= $1 GROUP BY bucket"
                           f" UNION ALL SELECT substr(stored_at, 1, {width}) AS bucket, sum(events) AS n"
                           " FROM context_blocks WHERE stored_at >= $2 GROUP BY bucket) AS both_kinds GROUP BY bucket",
                           (stamp, stamp))
    opened = records.query(f"SELECT substr(created_at, 1, {width}) AS bucket, count(*) AS n FROM incidents"
                           " WHERE created_at >= $1 GROUP BY bucket", (stamp,))
    out: dict[str, dict[str, Any]] = {}
    for kind, rows in (("events", events), ("incidents", opened)):
        for r in rows:
            out.setdefault(r["bucket"], {"bucket": r["bucket"], "events": 0, "incidents": 0})[kind] = r["n"]
    return [out[k] for k in sorted(out)]


DECISIONS = ("approve", "reject", "revise")


def decisions(records: Records, since: datetime | None = None) -> list[dict[str, Any]]:
    """Reviewer decisions (approve / reject / revise), oldest first, with how long the incident had
    waited since it was opened and its severity."""
    p = Params()
    sql = (f"SELECT a.incident_id, a.action, a.reviewer, a.at, i.created_at, i.severity FROM audit a"
           f" JOIN incidents i ON i.incident_id = a.incident_id WHERE a.action IN ({p.each(DECISIONS)})")
    if since is not None:
        sql += f" AND a.at >= {p(iso(since))}"
    rows = records.query(sql + " ORDER BY a.at", p)
    out = []
    for r in rows:
        waited = (datetime.fromisoformat(r["at"]) - datetime.fromisoformat(r["created_at"])).total_seconds()
        out.append({**dict(r), "waited_seconds": max(0.0, waited)})
    return out


def storage_sizes(data_dir: Path) -> dict[str, int]:
    """Bytes on disk of the records store, the checkpoint store (with their WAL files) and the index."""
    def size(name: str) -> int:
        return sum((data_dir / f"{name}{suffix}").stat().st_size
                   for suffix in ("", "-wal", "-shm") if (data_dir / f"{name}{suffix}").exists())

    index = data_dir / "knowledge-index"
    index_bytes = sum(p.stat().st_size for p in index.rglob("*") if p.is_file()) if index.exists() else 0
    return {"app.sqlite3": size("app.sqlite3"), "checkpoints.sqlite": size("checkpoints.sqlite"),
            "knowledge-index": index_bytes}


# the checkpoint store's tables (langgraph-checkpoint-postgres); every other table of the schema is ours
CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes", "checkpoint_migrations")


def table_sizes(records: Records) -> dict[str, int]:
    """Bytes the records and the checkpoint store take in the schema (pg_total_relation_size of
    each of its tables: with their indexes and TOAST), as the operations page shows them (PostgreSQL only)."""
    rows = records.query("SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c"
                         " JOIN pg_namespace n ON n.oid = c.relnamespace"
                         " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')")
    checkpoints = sum(int(size) for name, size in rows if name in CHECKPOINT_TABLES)
    return {"records": sum(int(size) for _, size in rows) - checkpoints, "checkpoints": checkpoints}


def schema_of(records: Records) -> str:
    """The schema the stores live in on PostgreSQL (the URL's search_path, else `public`)."""
    schema: str = records.query("SELECT current_schema()")[0][0]
    return schema


def query_plans(records: Records, read: Callable[[], object]) -> list[tuple[str, str]]:
    """The SELECTs `read` runs on this thread's connection, each with SQLite's query plan
    (the inbox benchmark checks that the inbox query uses its index)."""
    statements: list[str] = []
    records.conn.set_trace_callback(statements.append)
    try:
        read()
    finally:
        records.conn.set_trace_callback(None)
    return [(sql, " | ".join(r["detail"] for r in records.query("EXPLAIN QUERY PLAN " + sql)))
            for sql in statements if sql.lstrip().upper().startswith("SELECT")]
