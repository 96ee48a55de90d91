"""The schema of app.sqlite3, as ordered migrations; `PRAGMA user_version` says which ran.

Opening a records store applies the pending migrations in one IMMEDIATE transaction, so two
processes opening one data dir at once migrate it once. A migration is never edited after a
release: a change to the schema is a new migration at the end of the list.

Migration 1 is the schema as it stood before versioning (every table with IF NOT EXISTS): a data
dir from that release has user_version 0 and its tables in place; migration 1 adopts it as it is,
creating only the tables it had not needed yet (the operations tables and the lease were created
on a poller's first use).
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Sequence

from pipeline.errors import StorageError


@dataclass(frozen=True)
class Migration:
    version: int
    why: str
    statements: tuple[str, ...]
    # statements run only when this SQLite build has the named extension ("fts5"); without it the
    # store falls back to slower plain SQL for what they would have served
    optional: tuple[str, ...] = ()
    optional_needs: str | None = None


def _statements(sql: str) -> tuple[str, ...]:
    # our DDL has no ';' inside literals; executescript would commit the open transaction
    return tuple(s.strip() for s in sql.split(";") if s.strip())


V1_SCHEMA = """
CREATE TABLE IF NOT EXISTS incidents (
    incident_id TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    service TEXT NOT NULL,
    status TEXT NOT NULL,
    severity TEXT NOT NULL DEFAULT 'medium',
    category TEXT,
    confidence REAL,
    event_count INTEGER NOT NULL DEFAULT 0,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    closed_at TEXT,
    sla_deadline TEXT NOT NULL,
    pending_interrupt_id TEXT,
    pending_checkpoint_id TEXT,
    revisions INTEGER NOT NULL DEFAULT 0,
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    last_error TEXT,
    summary TEXT NOT NULL DEFAULT '{}',
    claim_owner TEXT,
    claimed_at TEXT
);
CREATE INDEX IF NOT EXISTS incidents_inbox ON incidents(status, sla_deadline);
CREATE INDEX IF NOT EXISTS incidents_fingerprint ON incidents(fingerprint, created_at);
CREATE INDEX IF NOT EXISTS incidents_updated ON incidents(updated_at);
CREATE INDEX IF NOT EXISTS incidents_service ON incidents(service);
CREATE INDEX IF NOT EXISTS incidents_category ON incidents(category);

CREATE TABLE IF NOT EXISTS events (
    event_id TEXT PRIMARY KEY,
    incident_id TEXT,
    time TEXT NOT NULL,
    service TEXT NOT NULL,
    host TEXT,
    level TEXT,
    exception TEXT,
    message TEXT NOT NULL,
    body TEXT NOT NULL,
    source TEXT NOT NULL,
    position TEXT NOT NULL,
    merged INTEGER NOT NULL DEFAULT 0,
    stored_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_incident ON events(incident_id, merged);
CREATE INDEX IF NOT EXISTS events_service_time ON events(service, time);
CREATE INDEX IF NOT EXISTS events_stored ON events(stored_at);
CREATE INDEX IF NOT EXISTS events_host_time ON events(host, time);

CREATE TABLE IF NOT EXISTS dead_letters (
    id INTEGER PRIMARY KEY,
    source TEXT NOT NULL,
    position TEXT NOT NULL,
    reason TEXT NOT NULL,
    raw TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE(source, position)
);

CREATE TABLE IF NOT EXISTS cursors (
    source TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS fixes (
    idempotency_key TEXT PRIMARY KEY,
    incident_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    proposal TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS fixes_incident ON fixes(incident_id);

CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY,
    incident_id TEXT NOT NULL,
    reviewer TEXT NOT NULL,
    action TEXT NOT NULL,
    at TEXT NOT NULL,
    checkpoint_before TEXT,
    checkpoint_after TEXT,
    before TEXT NOT NULL DEFAULT '{}',
    after TEXT NOT NULL DEFAULT '{}',
    note TEXT
);
CREATE INDEX IF NOT EXISTS audit_incident ON audit(incident_id, at);
CREATE INDEX IF NOT EXISTS audit_at ON audit(at);

CREATE TABLE IF NOT EXISTS pollers (
    owner TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    state TEXT NOT NULL,
    started_at TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL,
    stale_after TEXT NOT NULL,
    next_poll_at TEXT,
    last_error TEXT,
    last_error_at TEXT
);

CREATE TABLE IF NOT EXISTS source_stats (
    source TEXT PRIMARY KEY,
    polls INTEGER NOT NULL DEFAULT 0,
    errors INTEGER NOT NULL DEFAULT 0,
    events_read INTEGER NOT NULL DEFAULT 0,
    dead_letters INTEGER NOT NULL DEFAULT 0,
    incidents_opened INTEGER NOT NULL DEFAULT 0,
    incidents_updated INTEGER NOT NULL DEFAULT 0,
    runs_started INTEGER NOT NULL DEFAULT 0,
    runs_failed INTEGER NOT NULL DEFAULT 0,
    runs_retried INTEGER NOT NULL DEFAULT 0,
    consecutive_errors INTEGER NOT NULL DEFAULT 0,
    last_poll_at TEXT,
    last_ok_at TEXT,
    last_latency_ms REAL,
    lag_seconds REAL,
    last_error TEXT,
    last_error_at TEXT
);

CREATE TABLE IF NOT EXISTS poll_metrics (
    id INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    source TEXT NOT NULL,
    events INTEGER NOT NULL,
    dead_letters INTEGER NOT NULL,
    opened INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    runs_started INTEGER NOT NULL,
    runs_failed INTEGER NOT NULL,
    runs_retried INTEGER NOT NULL,
    latency_ms REAL NOT NULL,
    lag_seconds REAL,
    error TEXT
);
CREATE INDEX IF NOT EXISTS poll_metrics_at ON poll_metrics(at);

CREATE TABLE IF NOT EXISTS poller_lease (
    scope TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    source TEXT NOT NULL,
    acquired_at TEXT NOT NULL,
    renewed_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
"""

V2_TEMPLATES = """
CREATE TABLE template_state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    revision INTEGER NOT NULL,
    state TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE store_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
INSERT INTO store_meta(key, value) SELECT 'content_ids', 'yes' WHERE EXISTS (SELECT 1 FROM events)
"""

# issue 14: who decides, and what happens when nobody does
V3_DECIDERS = """
ALTER TABLE audit ADD COLUMN auth TEXT;
ALTER TABLE incidents ADD COLUMN assignee TEXT;
ALTER TABLE incidents ADD COLUMN assigned_at TEXT;
ALTER TABLE incidents ADD COLUMN escalated_at TEXT;
ALTER TABLE incidents ADD COLUMN announced_at TEXT;
CREATE INDEX incidents_assignee ON incidents(assignee, status);
CREATE INDEX incidents_to_escalate ON incidents(sla_deadline)
    WHERE status = 'awaiting_approval' AND escalated_at IS NULL;
CREATE INDEX incidents_to_announce ON incidents(created_at)
    WHERE severity = 'critical' AND announced_at IS NULL;
CREATE TABLE approvals (
    incident_id TEXT NOT NULL,
    interrupt_id TEXT NOT NULL,
    actor_id TEXT NOT NULL,
    actor_name TEXT NOT NULL,
    auth TEXT NOT NULL,
    at TEXT NOT NULL,
    PRIMARY KEY (incident_id, interrupt_id, actor_id)
);
CREATE TABLE comments (
    id INTEGER PRIMARY KEY,
    incident_id TEXT NOT NULL,
    author TEXT NOT NULL,
    author_name TEXT NOT NULL,
    auth TEXT NOT NULL,
    text TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX comments_incident ON comments(incident_id, id);
CREATE TABLE outbox (
    id INTEGER PRIMARY KEY,
    idempotency_key TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    incident_id TEXT,
    target_id TEXT NOT NULL,
    target_host TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    sender TEXT,
    sending_since TEXT,
    last_error TEXT,
    created_at TEXT NOT NULL,
    sent_at TEXT
);
CREATE INDEX outbox_due ON outbox(status, next_attempt_at)
"""

# 0.2 renames the closed statuses of approved incidents: an approval records a fix *proposal*
# (`fix_proposed`, was `fixed`), or nothing when no code fix is eligible (`approved`, was
# `not_eligible`). The audit log keeps the words it was written with: it is history.
V4_STATUS_NAMES = """
UPDATE incidents SET status = 'fix_proposed' WHERE status = 'fixed';
UPDATE incidents SET status = 'approved' WHERE status = 'not_eligible'
"""
# the inbox's sort orders, as SQL shared by the index and the queries that must match it
SEVERITY_RANK = ("(CASE severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 ELSE 3 END)")

V4_INBOX = (
    "ALTER TABLE incidents ADD COLUMN search_rowid INTEGER",  # see V4_SEARCH
    "ALTER TABLE incidents ADD COLUMN pruned_at TEXT",  # when retention compacted its history
    # every inbox view is one index range read in order (keyset pages, no sort, no OFFSET scan)
    "DROP INDEX IF EXISTS incidents_inbox",
    f"CREATE INDEX incidents_queue ON incidents(status, sla_deadline, {SEVERITY_RANK}, created_at, incident_id)",
    "CREATE INDEX incidents_newest ON incidents(created_at, incident_id)",
    "CREATE INDEX incidents_closed ON incidents(closed_at, incident_id) WHERE closed_at IS NOT NULL",
    "DROP INDEX IF EXISTS incidents_service",
    "CREATE INDEX incidents_service ON incidents(service, created_at, incident_id)",
    # the poller's question "which paused incidents have new evidence" reads only unmerged events,
    # and its answers come off covering indexes (no row of a large table read at random)
    "CREATE INDEX events_unmerged ON events(incident_id, stored_at) WHERE merged = 0 AND incident_id IS NOT NULL",
    "CREATE INDEX incidents_retry ON incidents(status, next_attempt_at, created_at, incident_id)",
    "CREATE INDEX incidents_work ON incidents(incident_id, status, created_at)",
    # per-status counts kept by triggers, so the inbox's counts read a handful of rows
    "CREATE TABLE incident_counts (status TEXT PRIMARY KEY, n INTEGER NOT NULL)",
    "INSERT INTO incident_counts(status, n) SELECT status, count(*) FROM incidents GROUP BY status",
    "CREATE TRIGGER incident_counts_insert AFTER INSERT ON incidents BEGIN"
    " INSERT INTO incident_counts(status, n) VALUES (new.status, 1)"
    " ON CONFLICT(status) DO UPDATE SET n = n + 1; END",
    "CREATE TRIGGER incident_counts_delete AFTER DELETE ON incidents BEGIN"
    " UPDATE incident_counts SET n = n - 1 WHERE status = old.status; END",
    "CREATE TRIGGER incident_counts_status AFTER UPDATE OF status ON incidents WHEN new.status IS NOT old.status"
    " BEGIN UPDATE incident_counts SET n = n - 1 WHERE status = old.status;"
    " INSERT INTO incident_counts(status, n) VALUES (new.status, 1)"
    " ON CONFLICT(status) DO UPDATE SET n = n + 1; END",
)
V4_SEARCH = (
    # substring search (trigram tokens) over what the inbox's search box names. The search table's
    # own rowid keeps the order incidents opened in (newest first = rowid descending, read straight
    # off the index); incidents.search_rowid points at an incident's row there, because finding it
    # by its id through the trigram index reads the long lists of trigrams every id shares
    "CREATE VIRTUAL TABLE incidents_search USING fts5(incident_id, service, category, title, tokenize='trigram')",
    "UPDATE incidents SET search_rowid = ranked.n FROM (SELECT incident_id,"
    " row_number() OVER (ORDER BY created_at, incident_id) AS n FROM incidents) AS ranked"
    " WHERE ranked.incident_id = incidents.incident_id",
    "INSERT INTO incidents_search(rowid, incident_id, service, category, title)"
    " SELECT search_rowid, incident_id, service, coalesce(category, ''), title FROM incidents",
    "CREATE TRIGGER incidents_search_insert AFTER INSERT ON incidents BEGIN"
    " INSERT INTO incidents_search(incident_id, service, category, title)"
    " VALUES (new.incident_id, new.service, coalesce(new.category, ''), new.title);"
    " UPDATE incidents SET search_rowid = last_insert_rowid() WHERE rowid = new.rowid; END",
    "CREATE TRIGGER incidents_search_category AFTER UPDATE OF category ON incidents"
    " WHEN new.category IS NOT old.category BEGIN"
    " UPDATE incidents_search SET category = coalesce(new.category, '') WHERE rowid = new.search_rowid; END",
    "CREATE TRIGGER incidents_search_delete AFTER DELETE ON incidents BEGIN"
    " DELETE FROM incidents_search WHERE rowid = old.search_rowid; END",
)

# issue 12: the poller asks for due work in bounded batches (pipeline/store/due.py), each off a
# small partial index in its keyset order; delivered notifications are pruned by their send time;
# the poll metrics count what escalation did (announced, escalated, expired)
V6_DUE = """
CREATE INDEX incidents_analyzing ON incidents(created_at, incident_id) WHERE status = 'analyzing';
CREATE INDEX incidents_in_revision ON incidents(created_at, incident_id) WHERE status = 'in_revision';
CREATE INDEX incidents_retry_due ON incidents(created_at, incident_id, next_attempt_at)
    WHERE status = 'failed' AND coalesce(next_attempt_at, '') < '9999-12-31T00:00:00+00:00';
CREATE INDEX outbox_sent ON outbox(sent_at) WHERE status = 'sent';
ALTER TABLE source_stats ADD COLUMN announced INTEGER NOT NULL DEFAULT 0;
ALTER TABLE source_stats ADD COLUMN escalated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE source_stats ADD COLUMN expired INTEGER NOT NULL DEFAULT 0;
ALTER TABLE poll_metrics ADD COLUMN announced INTEGER NOT NULL DEFAULT 0;
ALTER TABLE poll_metrics ADD COLUMN escalated INTEGER NOT NULL DEFAULT 0;
ALTER TABLE poll_metrics ADD COLUMN expired INTEGER NOT NULL DEFAULT 0
"""
# Search in two parts whose cost does not grow with the store (pipeline/store/search.py): the
# trigram index of migration 5 (substrings) now holds only the newest SEARCH_RECENT incidents
# (its lists of common trigrams grew with every incident), and a word index (unicode61) holds every
# incident. Both are keyed by -search_rowid, so "newest first" is FTS5's forward rowid order,
# which stops at LIMIT (its reverse order reads a term's whole list first). How many are "newest"
# is the store's own (store_meta 'search_recent'), set when the indexes are built.
SEARCH_RECENT = 100_000
_RECENT = "(SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'search_recent')"
V6_SEARCH = (
    f"INSERT OR REPLACE INTO store_meta(key, value) VALUES ('search_recent', '{SEARCH_RECENT}')",
    "DROP TRIGGER IF EXISTS incidents_search_insert",
    "DROP TRIGGER IF EXISTS incidents_search_category",
    "DROP TRIGGER IF EXISTS incidents_search_delete",
    "DROP TABLE IF EXISTS incidents_search",
    # a store migrated to 5 by a build without FTS5 has no search_rowid yet: number the rest after the others
    "UPDATE incidents SET search_rowid = ranked.n FROM (SELECT incident_id, row_number() OVER"
    " (ORDER BY created_at, incident_id) + (SELECT coalesce(max(search_rowid), 0) FROM incidents) AS n"
    " FROM incidents WHERE search_rowid IS NULL) AS ranked WHERE ranked.incident_id = incidents.incident_id",
    "CREATE INDEX incidents_search_order ON incidents(search_rowid)",
    "CREATE VIRTUAL TABLE incidents_search USING fts5(incident_id, service, category, title, tokenize='unicode61')",
    "CREATE VIRTUAL TABLE incidents_search_recent USING fts5(incident_id, service, category, title,"
    " tokenize='trigram')",
    "INSERT INTO incidents_search(rowid, incident_id, service, category, title)"
    " SELECT -search_rowid, incident_id, service, coalesce(category, ''), title FROM incidents",
    "INSERT INTO incidents_search_recent(rowid, incident_id, service, category, title)"
    " SELECT -search_rowid, incident_id, service, coalesce(category, ''), title FROM incidents"
    f" WHERE search_rowid > (SELECT coalesce(max(search_rowid), 0) FROM incidents) - {_RECENT}",
    # a new incident takes the next number, enters both indexes, and the one 'search_recent' before
    # it leaves the trigram index (numbers are never reused, so it holds the newest that many)
    "CREATE TRIGGER incidents_search_insert AFTER INSERT ON incidents BEGIN"
    " UPDATE incidents SET search_rowid = (SELECT coalesce(max(search_rowid), 0) + 1 FROM incidents)"
    " WHERE rowid = new.rowid;"
    " INSERT INTO incidents_search(rowid, incident_id, service, category, title)"
    " SELECT -search_rowid, new.incident_id, new.service, coalesce(new.category, ''), new.title FROM incidents"
    " WHERE rowid = new.rowid;"
    " INSERT INTO incidents_search_recent(rowid, incident_id, service, category, title)"
    " SELECT -search_rowid, new.incident_id, new.service, coalesce(new.category, ''), new.title FROM incidents"
    " WHERE rowid = new.rowid;"
    f" DELETE FROM incidents_search_recent WHERE rowid = (SELECT -search_rowid + {_RECENT} FROM incidents"
    " WHERE rowid = new.rowid); END",
    "CREATE TRIGGER incidents_search_category AFTER UPDATE OF category ON incidents"
    " WHEN new.category IS NOT old.category BEGIN"
    " UPDATE incidents_search SET category = coalesce(new.category, '') WHERE rowid = -new.search_rowid;"
    " UPDATE incidents_search_recent SET category = coalesce(new.category, '') WHERE rowid = -new.search_rowid;"
    " END",
    "CREATE TRIGGER incidents_search_delete AFTER DELETE ON incidents BEGIN"
    " DELETE FROM incidents_search WHERE rowid = -old.search_rowid;"
    " DELETE FROM incidents_search_recent WHERE rowid = -old.search_rowid; END",
)

# issue 12: the overdue count off counts of the open incidents per deadline minute, kept by
# triggers, so it reads the minutes before now plus the current minute's rows instead of every
# overdue incident (store/inbox.py). Deadlines are stored as UTC ISO text: the first 16 characters
# are the minute. SQLite only; PostgreSQL counts its rows (postgres.py).
_OPEN = "('analyzing', 'awaiting_approval', 'in_revision', 'failed')"
_MINUTE = "substr({}.sla_deadline, 1, 16)"
V7_OVERDUE = (
    "CREATE TABLE open_deadlines (minute TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID",
    f"INSERT INTO open_deadlines(minute, n) SELECT {_MINUTE.format('incidents')}, count(*) FROM incidents"
    f" WHERE status IN {_OPEN} GROUP BY 1",
    f"CREATE TRIGGER open_deadlines_insert AFTER INSERT ON incidents WHEN new.status IN {_OPEN} BEGIN"
    f" INSERT INTO open_deadlines(minute, n) VALUES ({_MINUTE.format('new')}, 1)"
    " ON CONFLICT(minute) DO UPDATE SET n = n + 1; END",
    f"CREATE TRIGGER open_deadlines_delete AFTER DELETE ON incidents WHEN old.status IN {_OPEN} BEGIN"
    f" UPDATE open_deadlines SET n = n - 1 WHERE minute = {_MINUTE.format('old')};"
    f" DELETE FROM open_deadlines WHERE minute = {_MINUTE.format('old')} AND n <= 0; END",
    # open -> closed, closed -> open, or an open incident's deadline moved to another minute
    f"CREATE TRIGGER open_deadlines_update AFTER UPDATE OF status, sla_deadline ON incidents"
    f" WHEN (old.status IN {_OPEN}) IS NOT (new.status IN {_OPEN})"
    f" OR (new.status IN {_OPEN} AND {_MINUTE.format('new')} IS NOT {_MINUTE.format('old')}) BEGIN"
    f" UPDATE open_deadlines SET n = n - 1 WHERE old.status IN {_OPEN} AND minute = {_MINUTE.format('old')};"
    f" DELETE FROM open_deadlines WHERE minute = {_MINUTE.format('old')} AND n <= 0;"
    f" INSERT INTO open_deadlines(minute, n) SELECT {_MINUTE.format('new')}, 1 WHERE new.status IN {_OPEN}"
    " ON CONFLICT(minute) DO UPDATE SET n = n + 1; END",
)

# issue 24: backtests of a candidate analyst over past incidents (pipeline/backtest/), never the
# live run: one row per backtest (its selection, so a rerun resumes the same incidents) and one per
# incident analysed, keyed by both ids (a resumed or concurrent worker cannot add a second)
V8_BACKTESTS = """
CREATE TABLE backtests (
    backtest_id TEXT PRIMARY KEY,
    candidate TEXT NOT NULL,
    candidate_key TEXT NOT NULL,
    selection TEXT NOT NULL,
    total INTEGER NOT NULL DEFAULT 0,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    owner TEXT
);
CREATE INDEX backtests_key ON backtests(candidate_key, status);
CREATE INDEX backtests_started ON backtests(started_at);
CREATE TABLE backtest_results (
    backtest_id TEXT NOT NULL,
    incident_id TEXT NOT NULL,
    checkpoint_id TEXT,
    outcome TEXT NOT NULL,
    human_decision TEXT NOT NULL DEFAULT '{}',
    human_edit TEXT NOT NULL DEFAULT '{}',
    human_category TEXT,
    old_category TEXT,
    new_category TEXT,
    old_confidence REAL,
    new_confidence REAL,
    old_root_cause TEXT,
    new_root_cause TEXT,
    old_proposal_hash TEXT,
    new_proposal_hash TEXT,
    skipped TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (backtest_id, incident_id)
);
CREATE INDEX backtest_results_incident ON backtest_results(incident_id)
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "the schema before versioning: records, operations and the poller lease",
              _statements(V1_SCHEMA)),
    # events are identified by position now; a data dir that holds events has them under content
    # ids, which store_batch keeps checking (store_meta 'content_ids') so a re-read adds nothing
    Migration(2, "the template miner's state, shared by every process on the data dir; where event ids"
                 " by content may still be found", _statements(V2_TEMPLATES)),
    Migration(3, "who decides: the actor's sign-in in the audit, assignment, escalation, partial approvals,"
                 " comments and the notification outbox", _statements(V3_DECIDERS)),
    Migration(4, "status names of 0.2: fixed -> fix_proposed, not_eligible -> approved",
              _statements(V4_STATUS_NAMES)),
    # issue 12: every inbox view one index read; retention
    Migration(5, "inbox views served by indexes (keyset orders, counts kept by triggers, trigram search);"
                 " when retention compacted an incident",
              V4_INBOX, optional=V4_SEARCH, optional_needs="fts5"),
    Migration(6, "the poller's due work in bounded batches off partial indexes; delivered notifications pruned;"
                 " escalations in the poll metrics;"
                 " search by words over every incident and by substring over the newest ones",
              _statements(V6_DUE), optional=V6_SEARCH, optional_needs="fts5"),
    Migration(7, "the overdue count off per-minute counts of open incidents' deadlines", V7_OVERDUE),
    Migration(8, "backtests of a candidate analyst over past incidents and their per-incident results",
              _statements(V8_BACKTESTS)),
)


def has_extension(conn: sqlite3.Connection, name: str) -> bool:
    """Whether this SQLite build was compiled with an extension (fts5)."""
    options = {row[0] for row in conn.execute("PRAGMA compile_options")}
    return f"ENABLE_{name.upper()}" in options


def latest(migrations: Sequence[Migration] = MIGRATIONS) -> int:
    return migrations[-1].version if migrations else 0


def version_of(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, *, where: str, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Apply the pending migrations in one IMMEDIATE transaction; returns the version reached.

    `conn` must be in autocommit mode (isolation_level=None). Raises StorageError for a data dir
    written by newer code, whose schema this code does not know.
    """
    _check_order(migrations)
    target = latest(migrations)
    if _check_version(version_of(conn), target, where) == target:
        return target  # the common case: nothing to do, no write lock taken
    conn.execute("BEGIN IMMEDIATE")
    try:
        # read again under the write lock: another process may have migrated meanwhile
        current = _check_version(version_of(conn), target, where)
        for migration in migrations:
            if migration.version > current:
                # PostgreSQL brings its own text where SQLite's has no translation (triggers, FTS5)
                own = getattr(conn, "statements_of", None)
                for statement in own(migration) if own else migration.statements:
                    conn.execute(statement)
                if not own and migration.optional and has_extension(conn, migration.optional_needs or ""):
                    for statement in migration.optional:
                        conn.execute(statement)
        # user_version lives in the database header and commits with the transaction
        conn.execute(f"PRAGMA user_version = {int(target)}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return target


def _check_version(current: int, target: int, where: str) -> int:
    if current > target:
        raise StorageError(f"records store {where} is at schema version {current}, newer than this version"
                           f" of IncidentIQ knows (up to {target}): upgrade IncidentIQ to open it")
    return current


def _check_order(migrations: Sequence[Migration]) -> None:
    versions = [m.version for m in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migrations must be numbered 1, 2, 3, ... in order; got {versions}")
