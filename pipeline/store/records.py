"""The records store (`app.sqlite3`, or a PostgreSQL schema): incidents, events, dead letters,
cursors, fixes, audit.

Indexed for the inbox; every SQLite connection uses WAL and a busy timeout. Statements are
written once for both databases (pipeline/store/sql.py). Driver errors are translated into
StorageError here and nowhere else.
"""
from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Iterable, Iterator, Sequence

from pipeline.clock import Clock, SystemClock, iso, parse_iso
from pipeline.errors import IncidentNotFound, StorageError, UnknownColumn, UsageError
from pipeline.ingest import correlation
from pipeline.ingest.opening import DEFAULT_RULE, OpeningRule
from pipeline.ingest.reading import content_id_of
from pipeline.ingest.templates import TemplateMiner
from pipeline.sla import DEFAULT_SEVERITY, SLA_HOURS, sla_base, sla_deadline
from pipeline.state import CLOSED_STATUSES, OPEN_STATUSES, LogEvent
from pipeline.store import backend, schema, sqlite, summaries
from pipeline.store.owners import owner_alive
from pipeline.store.sql import GREATEST, LEAST, LIKE, Params

BUSY_TIMEOUT_MS = 30_000

# what update_incident may write; the rest is the store's own (ids, counts and times of events,
# updated_at) or the claim's (claim_owner, claimed_at: see claim / release). closed_at is stamped
# when a status closes the incident; callers only clear it (a replay or fork reopens a run).
WRITABLE_INCIDENT_COLUMNS = frozenset({
    "status", "severity", "category", "confidence", "sla_deadline", "pending_interrupt_id",
    "pending_checkpoint_id", "revisions", "attempts", "next_attempt_at", "last_error", "summary", "closed_at",
})


@dataclass
class IngestCounts:
    """What one store call added (CONTRACT §5 `ingest --json`)."""

    events: int = 0
    rejected: int = 0
    incidents_new: set[str] = field(default_factory=set)
    incidents_updated: set[str] = field(default_factory=set)

    def add(self, other: "IngestCounts") -> None:
        self.events += other.events
        self.rejected += other.rejected
        self.incidents_new |= other.incidents_new
        self.incidents_updated |= other.incidents_updated - self.incidents_new

    def as_json(self) -> dict:
        return {
            "events": self.events,
            "rejected": self.rejected,
            "incidents_new": len(self.incidents_new),
            "incidents_updated": len(self.incidents_updated - self.incidents_new),
        }


class Records:
    """Our queryable records. Accepts a path, ":memory:" or a postgresql:// URL (pipeline/store/postgres.py).

    `clock` stamps and compares every time the store writes (default: the system clock); the
    engine reads the time through `records.clock` too, and a test may set it on an open store.
    `migrations` is the schema to bring the file up to (tests pass their own list).
    `opening` is the rule that says which events open incidents (the engine sets the configured one).
    """

    def __init__(self, path: Path | str, *, clock: Clock | None = None,
                 migrations: Sequence[schema.Migration] = schema.MIGRATIONS,
                 opening: OpeningRule = DEFAULT_RULE, sla_hours: dict[str, float] | None = None,
                 sla_from: str = "first_seen"):
        self.path = str(path)
        self.postgres = backend.is_postgres(self.path)
        self.where = backend.shown(self.path)  # what messages name: a URL's password masked
        self.clock: Clock = clock or SystemClock()
        self.opening = opening
        # the template miner as of `_miner_revision` of template_state (None: load it)
        self._miner: TemplateMiner | None = None
        self._miner_revision: int | None = None
        # the SLA policy a new incident's first deadline is computed with (the runner keeps it in step)
        self.sla_hours = dict(sla_hours or SLA_HOURS)
        self.sla_from = sla_from
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
        self._conn: sqlite.Connection | None = None
        try:
            self.schema_version = schema.migrate(self.conn, where=self.where, migrations=migrations)
        except backend.database_errors() as exc:
            raise StorageError(f"records store {self.where}: cannot bring its schema up to date:"
                               f" {backend.redacted(exc, self.path)}") from exc
    # -- connections -------------------------------------------------------------------
    def _connect(self) -> sqlite.Connection:
        if self.postgres:
            from pipeline.store import postgres

            try:
                return postgres.connect(self.path)  # type: ignore[return-value]  - the same interface
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
    def conn(self) -> sqlite.Connection:
        """The store's one connection (use it under `transaction()` or `query()`, which lock it)."""
        with self._lock:
            if self._conn is None:
                self._conn = self._connect()
            return self._conn

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite.Connection]:
        """One writer transaction (SQLite's IMMEDIATE): writers serialise here, across threads and processes."""
        with self._lock:
            conn = self.conn
            try:
                conn.begin()
                try:
                    yield conn
                except BaseException:
                    conn.rollback()
                    raise
                conn.commit()
            except backend.database_errors() as exc:
                raise StorageError(f"records store: {backend.redacted(exc, self.path)}") from exc

    @contextlib.contextmanager
    def connection(self) -> Iterator[sqlite.Connection]:
        """The connection, held for this thread, outside any transaction (VACUUM needs that)."""
        with self._lock:
            yield self.conn

    def query(self, sql: str, params: Iterable = ()) -> list[sqlite3.Row]:
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

    # -- events and correlation --------------------------------------------------------
    def store_batch(self, items: Iterable, *, cursor: tuple[str, str] | None, reopen_minutes: float) -> IngestCounts:
        """Store events and dead letters and advance the source cursor in one transaction.

        Each event is stored once (by event_id); an event the opening rule picks joins the open
        incident of its fingerprint or opens a new one; other events are kept as context for log
        windows. Fingerprints come from the template miner, whose state is read (when another
        process changed it) and written in this same transaction, under the lock that correlates.
        """
        from pipeline.ingest.events import DeadLetter

        counts = IngestCounts()
        stamp = iso(self.clock.now())
        with self.transaction() as conn, self._templates(conn, stamp):
            content_ids = self._has_content_ids(conn)
            for item in items:
                if isinstance(item, DeadLetter):
                    counts.rejected += _store_dead_letter(conn, item, stamp)
                    continue
                self._store_event(conn, item, reopen_minutes, counts, stamp, content_ids)
            if cursor is not None:
                conn.execute(
                    "INSERT INTO cursors(source, value, updated_at) VALUES ($1,$2,$3)"
                    " ON CONFLICT(source) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                    (cursor[0], cursor[1], stamp),
                )
        counts.incidents_updated -= counts.incidents_new
        return counts

    def _store_event(self, conn, event: LogEvent, reopen_minutes: float, counts: IngestCounts, stamp: str,
                     content_ids: bool) -> None:
        if conn.execute("SELECT 1 FROM events WHERE event_id = $1", (event.event_id,)).fetchone():
            return  # seen before: it already counted where it belongs
        content_id = (event._content_id or (content_id_of(event._content_line) if event._content_line else None)
                      if content_ids else None)
        if content_id and conn.execute("SELECT 1 FROM events WHERE event_id = $1", (content_id,)).fetchone():
            return  # stored by an older version, under the id its content hashed to
        incident = self._correlate(conn, event, reopen_minutes, counts, stamp) if self.opening.opens(event) else None
        conn.execute(
            "INSERT INTO events(event_id, incident_id, time, service, host, level,"
            " exception, message, body, source, position, stored_at)"
            " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)",
            (event.event_id, incident, iso(event.time), event.service, event.host, event.level,
             event.exception, event.message, event.model_dump_json(), event.source, event.position, stamp),
        )
        counts.events += 1
        if incident is not None:
            conn.execute(
                "UPDATE incidents SET event_count = event_count + 1,"
                f" first_seen = {LEAST[conn.dialect]}(first_seen, $1), last_seen = {GREATEST[conn.dialect]}(last_seen, $2),"
                " updated_at = $3 WHERE incident_id = $4",
                (iso(event.time), iso(event.time), stamp, incident),
            )

    def _correlate(self, conn, event: LogEvent, reopen_minutes: float, counts: IngestCounts, stamp: str) -> str:
        template_id = self._miner.add(correlation.first_line(event.message)).template_id
        fp = correlation.fingerprint(event, template_id=template_id)
        # clusters the miner joined since an incident opened still lead to it, and so does the
        # masked fingerprint incidents had before the miner
        known = [correlation.fingerprint(event, template_id=t) for t in self._miner.group_members(template_id)]
        known = list(dict.fromkeys([fp, *known, correlation.fingerprint(event)]))
        p = Params()
        row = conn.execute(
            f"SELECT incident_id, status, closed_at FROM incidents WHERE fingerprint IN ({p.each(known)})"
            " ORDER BY created_at DESC LIMIT 1",
            p,
        ).fetchone()
        if row is not None:
            closed_at = parse_iso(row["closed_at"])
            within_reopen = closed_at is not None and self.clock.now() < closed_at + timedelta(minutes=reopen_minutes)
            if row["status"] in OPEN_STATUSES or within_reopen:
                counts.incidents_updated.add(row["incident_id"])
                return row["incident_id"]
        new_id = correlation.incident_id(fp, event.time)
        salt = 0
        while conn.execute("SELECT 1 FROM incidents WHERE incident_id = $1", (new_id,)).fetchone():
            # an earlier incident of this fingerprint opened at the very same instant (a backfilled
            # host's log): derive another id rather than fail the whole batch
            salt += 1
            new_id = correlation.incident_id(f"{fp}:{salt}", event.time)
        conn.execute(
            "INSERT INTO incidents(incident_id, fingerprint, title, service, status, severity,"
            " first_seen, last_seen, created_at, updated_at, sla_deadline)"
            " VALUES ($1,$2,$3,$4, 'analyzing', $5, $6,$7,$8,$9,$10)",
            (new_id, fp, correlation.title(event), event.service, DEFAULT_SEVERITY, iso(event.time),
             iso(event.time), stamp, stamp, iso(self.sla_deadline_of(first_seen=event.time, opened=parse_iso(stamp),
                                                                      severity=DEFAULT_SEVERITY))),
        )
        counts.incidents_new.add(new_id)
        return new_id

    @contextlib.contextmanager
    def _templates(self, conn: sqlite.Connection, stamp: str) -> Iterator[TemplateMiner]:
        """The miner, current with template_state (inside the caller's transaction), saved back
        when it learned something; forgotten when the transaction fails, so it is read again."""
        row = conn.execute("SELECT revision FROM template_state WHERE id = 1").fetchone()
        revision = row["revision"] if row else 0
        if self._miner is None or self._miner_revision != revision:
            state = conn.execute("SELECT state FROM template_state WHERE id = 1").fetchone() if row else None
            self._miner = TemplateMiner.from_state(json.loads(state["state"]) if state else None)
            self._miner_revision = revision
        learned = self._miner.revision
        try:
            yield self._miner
            if self._miner.revision != learned:
                conn.execute(
                    "INSERT INTO template_state(id, revision, state, updated_at) VALUES (1, $1, $2, $3)"
                    " ON CONFLICT(id) DO UPDATE SET revision = excluded.revision, state = excluded.state,"
                    " updated_at = excluded.updated_at",
                    (revision + 1, json.dumps(self._miner.state(), separators=(",", ":")), stamp))
                self._miner_revision = revision + 1
        except BaseException:
            self._miner, self._miner_revision = None, None
            raise

    def _has_content_ids(self, conn: sqlite.Connection) -> bool:
        return conn.execute("SELECT 1 FROM store_meta WHERE key = 'content_ids'").fetchone() is not None

    def templates(self) -> dict[str, str]:
        """Every template the miner knows: id → template text (as last saved by any process)."""
        rows = self.query("SELECT state FROM template_state WHERE id = 1")
        return TemplateMiner.from_state(json.loads(rows[0]["state"]) if rows else None).templates()

    def sla_deadline_of(self, *, first_seen: datetime, opened: datetime, severity: str) -> datetime:
        """An incident's SLA deadline under this store's policy."""
        return sla_deadline(sla_base(first_seen=first_seen, opened=opened, sla_from=self.sla_from), severity,
                            self.sla_hours)

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
        sql = "SELECT body FROM events WHERE incident_id = $1"
        if only_unmerged:
            sql += " AND merged = 0"
        sql += " ORDER BY time"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [LogEvent.model_validate_json(r["body"]) for r in self.query(sql, (incident_id,))]

    def has_unmerged(self, incident_id: str) -> bool:
        return bool(self.query("SELECT 1 FROM events WHERE incident_id = $1 AND merged = 0 LIMIT 1", (incident_id,)))

    def mark_merged(self, event_ids: Iterable[str]) -> None:
        ids = list(event_ids)
        with self.transaction() as conn:
            conn.executemany("UPDATE events SET merged = 1 WHERE event_id = $1", [(i,) for i in ids])

    def log_window(self, *, service: str, start: datetime, end: datetime, hosts: Iterable[str] = (),
                   limit: int = 60) -> list[LogEvent]:
        """Events of the service or on the same hosts between start and end, oldest first."""
        hosts = sorted(h for h in hosts if h)
        # two indexed lookups joined by UNION: an OR across columns would scan the table
        p = Params([iso(start), iso(end)])  # $1, $2: the window, in both halves
        sql = f"SELECT event_id, time, body FROM events WHERE service = {p(service)} AND time BETWEEN $1 AND $2"
        if hosts:
            sql += (" UNION SELECT event_id, time, body FROM events"
                    f" WHERE host IN ({p.each(hosts)}) AND time BETWEEN $1 AND $2")
        sql += f" ORDER BY time LIMIT {p(limit)}"
        return [LogEvent.model_validate_json(r["body"]) for r in self.query(sql, p)]

    # -- incidents -----------------------------------------------------------------------
    def incident(self, incident_id: str) -> dict:
        rows = self.query("SELECT * FROM incidents WHERE incident_id = $1", (incident_id,))
        if not rows:
            raise IncidentNotFound(incident_id)
        return _incident_dict(rows[0])

    def incident_fields(self, incident_id: str, *columns: str) -> dict:
        """Some columns of an incident's record, by name: the runner reads a few after every run,
        and `incident` would decompress and parse the summary for them."""
        bad = [c for c in columns if not c.isidentifier() or c == "summary"]
        if bad or not columns:
            raise UsageError(f"incident_fields: {bad[0] if bad else 'no column'} cannot be read alone")
        rows = self.query(f"SELECT {', '.join(columns)} FROM incidents WHERE incident_id = $1", (incident_id,))
        if not rows:
            raise IncidentNotFound(incident_id)
        return dict(rows[0])

    def incidents(self, *, status: str | Iterable[str] | None = None, search: str | None = None,
                  order: str = "newest", limit: int | None = None, offset: int = 0,
                  assignee: str | None = None) -> list[dict]:
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
                        merged_event_ids: Iterable[str] = (), **values) -> None:
        """Write record fields (status and the fields derived from the run) in one transaction,
        optionally marking merged evidence and releasing the writer's claim with them.

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

    def claim_run(self, incident_id: str, owner: str, *, max_attempts: int) -> dict | None:
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
    def record_fix_once(self, *, idempotency_key: str, incident_id: str, proposal: dict) -> tuple[dict, bool]:
        """Record a fix proposal under its key; a second call returns the first one unchanged."""
        with self.transaction() as conn:
            row = conn.execute("SELECT proposal FROM fixes WHERE idempotency_key = $1", (idempotency_key,)).fetchone()
            if row:
                return json.loads(row["proposal"]), False
            attempt = conn.execute("SELECT count(*) FROM fixes WHERE incident_id = $1", (incident_id,)).fetchone()[0] + 1
            proposal = {**proposal, "attempt": attempt, "idempotency_key": idempotency_key}
            conn.execute("INSERT INTO fixes(idempotency_key, incident_id, attempt, proposal, created_at)"
                         " VALUES ($1,$2,$3,$4,$5)", (idempotency_key, incident_id, attempt, json.dumps(proposal), iso(self.clock.now())))
            return proposal, True

    def fixes(self, incident_id: str | None = None) -> list[dict]:
        sql, params = "SELECT * FROM fixes", []
        if incident_id:
            sql += " WHERE incident_id = $1"
            params.append(incident_id)
        sql += " ORDER BY created_at"
        return [{**dict(r), "proposal": json.loads(r["proposal"])} for r in self.query(sql, params)]

    # -- dead letters ------------------------------------------------------------------
    def dead_letters(self, *, limit: int | None = None) -> list[dict]:
        sql = "SELECT source, position, reason, raw, created_at FROM dead_letters ORDER BY id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [dict(r) for r in self.query(sql)]

    # -- audit ---------------------------------------------------------------------------
    def add_audit(self, *, incident_id: str, reviewer: str, action: str, checkpoint_before: str | None,
                  checkpoint_after: str | None, before: dict, after: dict, note: str | None = None,
                  auth: str | None = None, conn: sqlite.Connection | None = None) -> None:
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

    def audit(self, incident_id: str | None = None) -> list[dict]:
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

    def audit_checkpoints(self, incident_id: str) -> list[dict]:
        """The incident's audit entries as action and checkpoints before and after only, oldest
        first (what the history needs to mark human actions, without the values)."""
        return [dict(r) for r in self.query("SELECT action, checkpoint_before, checkpoint_after FROM audit"
                                            " WHERE incident_id = $1 ORDER BY id", (incident_id,))]


def incident_row(conn: sqlite.Connection, incident_id: str) -> dict:
    """The incident's row as stored (summary as text), read inside the caller's transaction."""
    row = conn.execute("SELECT * FROM incidents WHERE incident_id = $1", (incident_id,)).fetchone()
    if row is None:
        raise IncidentNotFound(incident_id)
    return dict(row)


def _store_dead_letter(conn: sqlite.Connection, item, stamp: str) -> int:
    """Store a rejected line once; 1 if it is new. A re-read of the same line at the same place
    is no news, but a different line at an offset used before (the file was rewritten or rotated
    under the same name) is, and is kept as `position#2`, `#3`... (positions are unique)."""
    # a range on (source, position), the unique index: '#' and the digits after it sort below '~'
    rows = conn.execute("SELECT position, raw, reason FROM dead_letters WHERE source = $1"
                        " AND (position = $2 OR (position > $3 AND position < $4))",
                        (item.source, item.position, f"{item.position}#", f"{item.position}#~")).fetchall()
    if any(r["raw"] == item.raw and r["reason"] == item.reason for r in rows):
        return 0
    position = item.position if not rows else f"{item.position}#{len(rows) + 1}"
    conn.execute("INSERT INTO dead_letters(source, position, reason, raw, created_at) VALUES ($1,$2,$3,$4,$5)",
                 (item.source, position, item.reason, item.raw, stamp))
    return 1


def open_records(settings, *, clock: Clock | None = None) -> Records:
    """The records store of a data dir (`Settings`; or its database_url), creating the folder; a data dir that is a
    file is a UsageError, one that cannot be created a StorageError."""
    data_dir = Path(settings.data_dir)
    if data_dir.exists() and not data_dir.is_dir():
        raise UsageError(f"INCIDENTIQ_DATA_DIR {data_dir} is not a folder")
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot create the data dir {data_dir}: {exc.strerror}") from None
    return Records(settings.database_url or data_dir / "app.sqlite3", clock=clock,
                   sla_hours=settings.sla, sla_from=settings.sla_from)


def _incident_dict(row: sqlite3.Row) -> dict:
    d = dict(row)
    d["summary"] = summaries.parsed(d.get("summary"))
    return d
