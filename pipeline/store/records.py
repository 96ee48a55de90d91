"""The records store (`app.sqlite3`, or a PostgreSQL schema): its connections and transactions,
and the rows of incidents, events, dead letters, cursors, fixes and audit. The other tables
(outbox, leases, layouts, backtests, ...) have a module each in pipeline/store/ that works through it.

Indexed for the inbox; every SQLite connection uses WAL and a busy timeout. Statements are
written once for both databases (pipeline/store/sql.py). Driver errors of its connections and
statements are translated into StorageError here; the few modules that talk to a driver
themselves (the checkpoint stores, the lease, retention's VACUUM) translate their own.
"""
from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import uuid
from datetime import datetime, timedelta
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

from pipeline.clock import Clock, SystemClock, iso
from pipeline.errors import IncidentNotFound, StorageError, UnknownColumn, UsageError
from pipeline.state import CLOSED_STATUSES, LogEvent
from pipeline.store import backend, context_blocks, event_bodies, schema, sqlite, summaries
from pipeline.store.owners import owner_alive
from pipeline.store.sql import LIKE, Connection, Params, Row

BUSY_TIMEOUT_MS = 30_000

# what update_incident may write; the rest is the store's own (ids, counts and times of events,
# updated_at) or the claim's (claim_owner, claimed_at: see claim / release). closed_at is stamped
# when a status closes the incident; callers only clear it (a replay or fork reopens a run).
# events.merged: 0 new evidence not yet merged; 1 in the run's evidence (or sampled out of it);
# REPEAT counted as a repeat of what the paused analysis holds, merged by its next re-run
REPEAT = 2

WRITABLE_INCIDENT_COLUMNS = frozenset({
    "status", "severity", "category", "confidence", "sla_deadline", "pending_interrupt_id",
    "pending_checkpoint_id", "revisions", "attempts", "next_attempt_at", "last_error", "summary", "closed_at",
    "approvals_floor", "backfilled", "analysed_events",
})


class Records:
    """Our queryable records. Accepts a path, ":memory:" or a postgresql:// URL (pipeline/store/postgres.py).

    `clock` stamps and compares every time the store writes (default: the system clock); the
    engine reads the time through `records.clock` too, and a test may set it on an open store.
    `migrations` is the schema to bring the file up to (tests pass their own list).
    Which events open incidents, and their SLA, is the incident step's (pipeline/incidents/).
    """

    # what pipeline/store/search.py learns of the store once and keeps on it (unset until asked)
    _fts_available: bool
    _search_recent: int

    def __init__(self, path: Path | str, *, clock: Clock | None = None,
                 migrations: Sequence[schema.Migration] = schema.MIGRATIONS):
        self.path = str(path)
        self.postgres = backend.is_postgres(self.path)
        self.where = backend.shown(self.path)  # what messages name: a URL's password masked
        self.clock: Clock = clock or SystemClock()
        if self.postgres:
            self._uri = None
        elif self.path == ":memory:":
            self._uri = f"file:records-{uuid.uuid4().hex}?mode=memory&cache=shared"
            self._keepalive = self._connect()
        else:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._uri = None
        # one connection per store per process, shared by every thread under this lock: LangGraph
        # runs nodes on fresh threads, and a connection per thread meant a new one per incident
        self._lock = threading.RLock()
        self._blocks = context_blocks.BlockCache()  # context blocks decoded last, for log windows
        self._built = context_blocks.EventCache()  # and the events they built last, rows' and blocks'
        self._conn: Connection | None = None
        try:
            self.schema_version = schema.migrate(self.conn, where=self.where, migrations=migrations)
        except backend.database_errors() as exc:
            raise StorageError(f"records store {self.where}: cannot bring its schema up to date:"
                               f" {backend.redacted(exc, self.path)}") from exc
    # -- connections -------------------------------------------------------------------
    def _connect(self) -> Connection:
        if self.postgres:
            from pipeline.store import postgres

            try:
                return postgres.connect(self.path)
            except backend.database_errors() as exc:
                raise StorageError(f"cannot open records store {self.where}: {backend.redacted(exc, self.path)}") from None
        try:
            if self._uri:
                conn = sqlite3.connect(self._uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000,
                                       isolation_level=None, check_same_thread=False)
            else:
                conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000,
                                       isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open records store {self.path}: {exc}") from exc
        conn.row_factory = sqlite3.Row
        return sqlite.Connection(conn)

    @property
    def conn(self) -> Connection:
        """The store's one connection (use it under `transaction()` or `query()`, which lock it)."""
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            return self._conn

    @contextlib.contextmanager
    def transaction(self, *, serial: bool = True, pipelined: bool = False) -> Iterator[Connection]:
        """One writer transaction (SQLite's IMMEDIATE): writers serialise here, across threads and
        processes. With `serial=False` (PostgreSQL) they serialise from `conn.serialize()` on: what
        the transaction writes before it must be rows no other writer touches meanwhile; with
        `pipelined` too it waits on the server only for what it reads (postgres.Connection.begin)."""
        with self._lock:
            conn = self.conn
            try:
                conn.begin(serial=serial, pipelined=pipelined)
                try:
                    yield conn
                except BaseException:
                    conn.rollback()
                    raise
                conn.commit()
            except backend.database_errors() as exc:
                raise StorageError(f"records store: {backend.redacted(exc, self.path)}") from exc

    @contextlib.contextmanager
    def connection(self) -> Iterator[Connection]:
        """The connection, held for this thread, outside any transaction (VACUUM needs that)."""
        with self._lock:
            yield self.conn

    @contextlib.contextmanager
    def reading(self) -> Iterator[Connection]:
        """The connection for a few reads under the store's lock, its errors ours (StorageError)."""
        try:
            with self._lock:
                yield self.conn
        except backend.database_errors() as exc:
            raise StorageError(f"records store: {backend.redacted(exc, self.path)}") from exc

    def query(self, sql: str, params: Iterable[object] = ()) -> list[Row]:
        """Rows of one statement (`$n` parameters: pipeline/store/sql.py), under the store's lock."""
        try:
            with self._lock:
                return self.conn.execute(sql, tuple(params)).fetchall()
        except backend.database_errors() as exc:
            raise StorageError(f"records store: {backend.redacted(exc, self.path)}") from exc

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def cursor(self, source: str) -> str | None:
        rows = self.query("SELECT value FROM cursors WHERE source = $1", (source,))
        return rows[0]["value"] if rows else None

    def set_cursor(self, source: str, value: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO cursors(source, value, updated_at) VALUES ($1,$2,$3)"
                " ON CONFLICT(source) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (source, value, iso(self.clock.now())),
            )

    def events_of(self, incident_id: str, *, only_unmerged: bool = False, limit: int | None = None) -> list[LogEvent]:
        sql = f"SELECT {event_bodies.EVENT_COLUMNS} FROM events WHERE incident_id = $1"
        if only_unmerged:
            sql += " AND merged = 0"
        sql += " ORDER BY time"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [event_bodies.event_of(r) for r in self.query(sql, (incident_id,))]

    def has_unmerged(self, incident_id: str) -> bool:
        return bool(self.query("SELECT 1 FROM events WHERE incident_id = $1 AND merged = 0 LIMIT 1", (incident_id,)))

    def unmerged_heads(self, incident_id: str) -> list[tuple[str, str, str | None, str]]:
        """(event id, service, exception, message) of the incident's unmerged events: what tells a
        repeat of the analysed evidence from news, without building the events."""
        rows = self.query("SELECT event_id, service, exception, message FROM events"
                          " WHERE incident_id = $1 AND merged = 0", (incident_id,))
        return [(r["event_id"], r["service"], r["exception"], r["message"]) for r in rows]

    def evidence_to_merge(self, incident_id: str, *, repeats: int, first: int | None = None,
                          last: int | None = None) -> list[LogEvent]:
        """The incident's unmerged events and the latest `repeats` of those counted as repeats
        (merged = REPEAT), oldest first: what a re-run of its analysis adds to the evidence. With
        `first` and `last`, of the unmerged events only the `first` earliest and the `last` latest:
        a sample's ends (state.merge_evidence) need no more, and a burst's incident holds hundreds."""
        cols = event_bodies.EVENT_COLUMNS
        unmerged = f"SELECT {cols} FROM events WHERE incident_id = $1 AND merged = 0"
        if first is None or last is None:
            rows = self.query(unmerged, (incident_id,))
        else:
            # events of one time in the order the whole read returns them (SQLite: as stored, off the
            # (incident_id, merged) index), so the ends are the very events the whole read's sample keeps
            tie = "event_id" if self.postgres else "rowid"
            earliest = self.query(f"{unmerged} ORDER BY time, {tie} LIMIT {int(first)}", (incident_id,))
            latest = self.query(f"{unmerged} ORDER BY time DESC, {tie} DESC LIMIT {int(last)}", (incident_id,))
            taken = {r["event_id"] for r in earliest}
            rows = [*earliest, *(r for r in reversed(latest) if r["event_id"] not in taken)]
        rows = [*rows, *self.query(f"SELECT {cols} FROM events WHERE incident_id = $1 AND merged = {REPEAT}"
                                   f" ORDER BY time DESC LIMIT {int(repeats)}", (incident_id,))]
        return sorted((event_bodies.event_of(r) for r in rows), key=lambda e: e.time)

    def mark_merged(self, event_ids: Iterable[str]) -> None:
        ids = list(event_ids)
        with self.transaction() as conn:
            conn.executemany("UPDATE events SET merged = 1 WHERE event_id = $1", [(i,) for i in ids])

    def log_window(self, *, service: str, start: datetime, end: datetime, hosts: Iterable[str] = (),
                   limit: int = 60) -> list[LogEvent]:
        """Events of the service or on the same hosts between start and end, oldest first (of one
        time, rows by id, then block events as stored), the first `limit`: rows (an incident's
        events, and context stored before blocks) and context blocks."""
        hosts = sorted(h for h in hosts if h)
        # two indexed lookups: each term of the OR names its index's columns (SQLite's multi-index
        # OR, PostgreSQL's bitmap OR), and a row matched by both is one row, found by its rowid or
        # heap position; a UNION of the halves compared whole rows to find it (wider, slower)
        p = Params([iso(start), iso(end)])  # $1, $2: the window, in both terms
        sql = f"SELECT {event_bodies.EVENT_COLUMNS} FROM events WHERE (service = {p(service)} AND time BETWEEN $1 AND $2)"
        if hosts:
            sql += f" OR (host IN ({p.each(hosts)}) AND time BETWEEN $1 AND $2)"
        # a time's rows by id: SQL leaves ties in no set order, this one is the same on both databases
        sql += f" ORDER BY time, event_id LIMIT {p(limit)}"
        with self.reading() as conn:  # the caches are the store's, shared by threads: under its lock
            rows = conn.execute(sql, p).fetchall()
            found = context_blocks.window(conn, service=service, hosts=hosts, start=start, end=end,
                                          cache=self._blocks, limit=limit)
            built, row_event = self._built, event_bodies.event_of
            if not found:
                return [built.event(tuple(r), partial(row_event, r)) for r in rows]
            # rows and blocks merged by their stored UTC times (the text sorts like the time), and
            # only the events kept are built: an id in both keeps the row's place, the block's values
            merged: dict[str, tuple[str, Row | context_blocks.Block, int]] = {
                r["event_id"]: (r["time"], r, -1) for r in rows}  # a row, or a block and a position
            for time, block, i in found:
                merged[block.id_at(i)] = (time, block, i)
            kept = sorted(merged.values(), key=itemgetter(0))[:limit]
            return [context_blocks.event_at(b, i, built) if isinstance(b, context_blocks.Block)
                    else built.event(tuple(b), partial(row_event, b)) for _, b, i in kept]

    def event_count(self) -> int:
        """How many events are stored, as rows and in context blocks."""
        with self.reading() as conn:
            row = conn.execute("SELECT count(*) AS n FROM events").fetchone()
            return int(row["n"] if row else 0) + context_blocks.count(conn)

    def all_events(self) -> list[LogEvent]:
        """Every stored event (rows, then context blocks): for exports and checks, not for hot paths."""
        with self.reading() as conn:
            stored = [event_bodies.event_of(r) for r in conn.execute(f"SELECT {event_bodies.EVENT_COLUMNS} FROM events").fetchall()]
            return stored + list(context_blocks.all_events(conn))

    # -- incidents -----------------------------------------------------------------------
    def incident(self, incident_id: str) -> dict[str, Any]:
        rows = self.query("SELECT * FROM incidents WHERE incident_id = $1", (incident_id,))
        if not rows:
            raise IncidentNotFound(incident_id)
        return _incident_dict(rows[0])

    def incident_fields(self, incident_id: str, *columns: str) -> dict[str, Any]:
        """Some columns of an incident's record, by name: the runner reads a few after every run,
        and `incident` would decompress and parse the summary for them."""
        bad = [c for c in columns if not c.isidentifier() or c == "summary"]
        if bad or not columns:
            raise UsageError(f"incident_fields: {bad[0] if bad else 'no column'} cannot be read alone")
        rows = self.query(f"SELECT {', '.join(columns)} FROM incidents WHERE incident_id = $1", (incident_id,))
        if not rows:
            raise IncidentNotFound(incident_id)
        fields = dict(rows[0])
        if isinstance(fields.get("leader"), str):  # as `incident` gives it (_incident_dict)
            fields["leader"] = json.loads(fields["leader"])
        return fields

    def incidents(self, *, status: str | Iterable[str] | None = None, search: str | None = None,
                  order: str = "newest", limit: int | None = None, offset: int = 0,
                  assignee: str | None = None) -> list[dict[str, Any]]:
        """Incidents for lists and the inbox; `order` is newest | inbox (SLA, then severity)."""
        sql = "SELECT * FROM incidents"
        where, p = [], Params()
        if assignee:
            where.append(f"assignee = {p(assignee)}")
        if status:
            statuses = [status] if isinstance(status, str) else list(status)
            where.append(f"status IN ({p.each(statuses)})")
        if search:
            pattern, like = p(f"%{search}%"), LIKE[self.conn.dialect]
            where.append(f"(incident_id {like} {pattern} OR service {like} {pattern} OR category {like} {pattern}"
                         f" OR title {like} {pattern})")
        if where:
            sql += " WHERE " + " AND ".join(where)
        if order == "inbox":
            sql += (" ORDER BY sla_deadline ASC, CASE severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1"
                    " WHEN 'medium' THEN 2 ELSE 3 END, created_at ASC")
        else:
            sql += " ORDER BY created_at DESC, incident_id DESC"
        if limit is not None:
            sql += f" LIMIT {p(limit)} OFFSET {p(offset)}"
        return [_incident_dict(r) for r in self.query(sql, p)]

    def status_counts(self) -> dict[str, int]:
        """Incidents per status, from the counts the triggers of migration 5 keep (a few rows)."""
        return {r["status"]: r["n"] for r in self.query("SELECT status, n FROM incident_counts WHERE n > 0")}

    def incidents_needing_work(self, *, merge_delay: float = 0.0) -> list[str]:
        """Incidents whose run must start, continue, merge new evidence, or be retried.

        New evidence for an incident awaiting approval is merged once its oldest unmerged event has
        waited `merge_delay` seconds: a noisy incident then re-runs its analysis (and replaces the
        reviewer's pending interrupt) at most that often, instead of on every poll.
        """
        stamp = self.clock.now()
        # three indexed reads joined by UNION (an OR across them would scan every incident): the
        # moving statuses, failed runs due a retry, and the paused incidents among those with
        # unmerged events (the events_unmerged partial index holds only those)
        rows = self.query(
            "SELECT incident_id, created_at FROM incidents WHERE status IN ('analyzing', 'in_revision')"
            " UNION SELECT incident_id, created_at FROM incidents WHERE status = 'failed'"
            "   AND (next_attempt_at IS NULL OR next_attempt_at <= $1)"
            " UNION SELECT i.incident_id, i.created_at FROM incidents i WHERE i.incident_id IN"
            "   (SELECT e.incident_id FROM events e WHERE e.merged = 0 AND e.incident_id IS NOT NULL"
            "    AND e.stored_at <= $2) AND i.status = 'awaiting_approval'",
            (iso(stamp), iso(stamp - timedelta(seconds=merge_delay))),
        )
        # sorted here: an ORDER BY would make SQLite walk every incident by created_at instead
        return [r["incident_id"] for r in sorted(rows, key=lambda r: (r["created_at"], r["incident_id"]))]

    def update_incident(self, incident_id: str, *, release_owner: str | None = None,
                        merged_event_ids: Iterable[str] = (), repeat_event_ids: Iterable[str] = (),
                        analysed: bool = False, **values: Any) -> None:
        """Write record fields (status and the fields derived from the run) in one transaction,
        optionally marking merged evidence (and new evidence counted as repeats of the analysis:
        `repeat_event_ids`), and releasing the writer's claim with them. `analysed`: the run
        that wrote them analysed every event stored but the unmerged ones (`analysed_events`).

        Only WRITABLE_INCIDENT_COLUMNS may be written: a column name reaches the SQL text."""
        unknown = sorted(set(values) - WRITABLE_INCIDENT_COLUMNS)
        if unknown:
            raise UnknownColumn("incidents", unknown[0])
        if "summary" in values and not isinstance(values["summary"], str):
            values["summary"] = summaries.stored(values["summary"], postgres=self.postgres)
        values["updated_at"] = iso(self.clock.now())
        if values.get("status") in CLOSED_STATUSES:
            values.setdefault("closed_at", values["updated_at"])
        p = Params()
        cols = ", ".join(f"{k} = {p(v)}" for k, v in values.items())
        with self.transaction() as conn:
            cur = conn.execute(f"UPDATE incidents SET {cols} WHERE incident_id = {p(incident_id)}", p)
            if cur.rowcount == 0:
                raise IncidentNotFound(incident_id)
            conn.executemany("UPDATE events SET merged = 1 WHERE event_id = $1", [(i,) for i in merged_event_ids])
            conn.executemany(f"UPDATE events SET merged = {REPEAT} WHERE event_id = $1", [(i,) for i in repeat_event_ids])
            if analysed:
                # the repeats it held back are in the analysis now (their latest in its sample)
                conn.execute(f"UPDATE events SET merged = 1 WHERE incident_id = $1 AND merged = {REPEAT}", (incident_id,))
                conn.execute("UPDATE incidents SET analysed_events = event_count - (SELECT count(*) FROM events"
                             " WHERE events.incident_id = $1 AND events.merged = 0) WHERE incident_id = $1",
                             (incident_id,))
            if release_owner:
                conn.execute("UPDATE incidents SET claim_owner = NULL, claimed_at = NULL"
                             " WHERE incident_id = $1 AND claim_owner = $2", (incident_id, release_owner))

    # -- claims: one actor drives a thread at a time ------------------------------------
    def claim(self, incident_id: str, owner: str, *, statuses: Iterable[str] | None = None,
              interrupt_id: str | None = None, set_status: str | None = None) -> bool:
        """Compare-and-set: take the incident's run for `owner` if free (or held by a dead process)
        and, when given, only if its status is one of `statuses` and its pending interrupt matches."""
        with self.transaction() as conn:
            row = conn.execute("SELECT status, pending_interrupt_id, claim_owner FROM incidents WHERE incident_id = $1",
                               (incident_id,)).fetchone()
            if row is None:
                raise IncidentNotFound(incident_id)
            if row["claim_owner"] and row["claim_owner"] != owner and owner_alive(row["claim_owner"]):
                return False
            if statuses is not None and row["status"] not in tuple(statuses):
                return False
            if interrupt_id is not None and row["pending_interrupt_id"] != interrupt_id:
                return False
            p = Params()
            sets = f"claim_owner = {p(owner)}, claimed_at = {p(iso(self.clock.now()))}"
            if set_status:
                sets += f", status = {p(set_status)}"
            conn.execute(f"UPDATE incidents SET {sets} WHERE incident_id = {p(incident_id)}", p)
            return True

    def claim_run(self, incident_id: str, owner: str, *, max_attempts: int) -> dict[str, Any] | None:
        """Claim the incident's run for `owner` (see `claim`) and count one more attempt at it, in
        one transaction; returns the row as it was before, or None when another actor has it.
        At `max_attempts` nothing is counted: the caller gives up on the run."""
        with self.transaction() as conn:
            row = conn.execute("SELECT * FROM incidents WHERE incident_id = $1", (incident_id,)).fetchone()
            if row is None:
                raise IncidentNotFound(incident_id)
            if row["claim_owner"] and row["claim_owner"] != owner and owner_alive(row["claim_owner"]):
                return None
            attempts = row["attempts"] + (1 if row["attempts"] < max_attempts else 0)
            conn.execute("UPDATE incidents SET claim_owner = $1, claimed_at = $2, attempts = $3, updated_at = $4"
                         " WHERE incident_id = $5",
                         (owner, iso(self.clock.now()), attempts, iso(self.clock.now()), incident_id))
            return _incident_dict(row)

    def release(self, incident_id: str, owner: str) -> None:
        with self.transaction() as conn:
            conn.execute("UPDATE incidents SET claim_owner = NULL, claimed_at = NULL"
                         " WHERE incident_id = $1 AND claim_owner = $2", (incident_id, owner))

    # -- fixes ---------------------------------------------------------------------------
    def record_fix_once(self, *, idempotency_key: str, incident_id: str, proposal: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Record a fix proposal under its key; a second call returns the first one unchanged."""
        with self.transaction() as conn:
            row = conn.execute("SELECT proposal FROM fixes WHERE idempotency_key = $1", (idempotency_key,)).fetchone()
            if row:
                return json.loads(row["proposal"]), False
            counted = conn.execute("SELECT count(*) FROM fixes WHERE incident_id = $1", (incident_id,)).fetchone()
            assert counted is not None  # count(*) is one row
            attempt = counted[0] + 1
            proposal = {**proposal, "attempt": attempt, "idempotency_key": idempotency_key}
            conn.execute("INSERT INTO fixes(idempotency_key, incident_id, attempt, proposal, created_at)"
                         " VALUES ($1,$2,$3,$4,$5)", (idempotency_key, incident_id, attempt, json.dumps(proposal), iso(self.clock.now())))
            return proposal, True

    def fixes(self, incident_id: str | None = None) -> list[dict[str, Any]]:
        sql, params = "SELECT * FROM fixes", []
        if incident_id:
            sql += " WHERE incident_id = $1"
            params.append(incident_id)
        sql += " ORDER BY created_at"
        return [{**dict(r), "proposal": json.loads(r["proposal"])} for r in self.query(sql, params)]

    # -- dead letters ------------------------------------------------------------------
    def dead_letters(self, *, limit: int | None = None) -> list[dict[str, Any]]:
        sql = "SELECT source, position, reason, raw, created_at FROM dead_letters ORDER BY id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [dict(r) for r in self.query(sql)]

    # -- audit ---------------------------------------------------------------------------
    def add_audit(self, *, incident_id: str, reviewer: str, action: str, checkpoint_before: str | None,
                  checkpoint_after: str | None, before: dict[str, Any], after: dict[str, Any], note: str | None = None,
                  auth: str | None = None, conn: Connection | None = None) -> None:
        """One audit entry; `auth` says how `reviewer` was authenticated (oidc, demo, cli, token, system)."""
        args = ("INSERT INTO audit(incident_id, reviewer, action, at, checkpoint_before, checkpoint_after,"
                " before, after, note, auth) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)",
                (incident_id, reviewer, action, iso(self.clock.now()), checkpoint_before, checkpoint_after,
                 json.dumps(before, default=str), json.dumps(after, default=str), note, auth))
        if conn is not None:
            conn.execute(*args)
            return
        with self.transaction() as c:
            c.execute(*args)

    def audit(self, incident_id: str | None = None) -> list[dict[str, Any]]:
        sql, params = "SELECT * FROM audit", []
        if incident_id:
            sql += " WHERE incident_id = $1"
            params.append(incident_id)
        sql += " ORDER BY id"
        return [{**dict(r), "before": json.loads(r["before"]), "after": json.loads(r["after"])}
                for r in self.query(sql, params)]

    def audit_mark(self, incident_id: str) -> tuple[int, int | None]:
        """(entries, newest entry's id) of the incident's audit, off its index: the log is
        append-only, so this changes exactly when an entry (a refusal too) is added."""
        row = self.query("SELECT count(*) AS n, max(id) AS newest FROM audit WHERE incident_id = $1", (incident_id,))[0]
        return int(row["n"]), row["newest"]

    def audit_checkpoints(self, incident_id: str) -> list[dict[str, Any]]:
        """The incident's audit entries as action and checkpoints before and after only, oldest
        first (what the history needs to mark human actions, without the values)."""
        return [dict(r) for r in self.query("SELECT action, checkpoint_before, checkpoint_after FROM audit"
                                            " WHERE incident_id = $1 ORDER BY id", (incident_id,))]


def incident_row(conn: Connection, incident_id: str) -> dict[str, Any]:
    """The incident's row as stored (summary as text), read inside the caller's transaction."""
    row = conn.execute("SELECT * FROM incidents WHERE incident_id = $1", (incident_id,)).fetchone()
    if row is None:
        raise IncidentNotFound(incident_id)
    return dict(row)


def _incident_dict(row: Row | dict[str, Any]) -> dict[str, Any]:
    d = dict(row)
    d["summary"] = summaries.parsed(d.get("summary"))
    if isinstance(d.get("leader"), str):  # the earliest cause-side error and why (incidents/leading.py)
        d["leader"] = json.loads(d["leader"])
    return d
