"""app.sqlite3's schema is versioned: old data dirs are adopted, new migrations apply once, and a
data dir written by newer code is refused rather than misread."""
from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest

from pipeline.errors import StorageError
from pipeline.operations.metrics import poller_status
from pipeline.store import lease
from pipeline.store.records import Records
from pipeline.store.schema import MIGRATIONS, Migration, latest
from tests.support import BOTH_BACKENDS, ROOT, count

# The records schema exactly as the release before versioning created it (records.py's SCHEMA,
# copied literally; the operations tables and the lease were created later, on a poller's first use).
PREVIOUS_RELEASE_SQL = """
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
"""

# a next migration, numbered after whatever the release has
NEXT = latest() + 1
WITH_PROBE = (*MIGRATIONS, Migration(NEXT, "a probe column", ("ALTER TABLE incidents ADD COLUMN probe TEXT",)))


def user_version(path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("PRAGMA user_version").fetchone()[0]


def columns(path, table: str) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


@pytest.fixture
def previous_release_dir(tmp_path):
    """app.sqlite3 as the release before versioning left it: its tables, a paused incident, user_version 0."""
    path = tmp_path / "app.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript(PREVIOUS_RELEASE_SQL)
    conn.execute("INSERT INTO incidents(incident_id, fingerprint, title, service, status, first_seen, last_seen,"
                 " created_at, updated_at, sla_deadline, summary) VALUES ('INC-20261128-0001', 'fp1', 'pool exhausted',"
                 " 'checkout-api', 'awaiting_approval', '2026-11-28T10:00:00+00:00', '2026-11-28T10:05:00+00:00',"
                 " '2026-11-28T10:00:01+00:00', '2026-11-28T10:06:00+00:00', '2026-11-29T10:00:01+00:00',"
                 " '{\"title\": \"pool exhausted\"}')")
    conn.execute("INSERT INTO audit(incident_id, reviewer, action, at) VALUES"
                 " ('INC-20261128-0001', 'ann', 'edit', '2026-11-28T10:07:00+00:00')")
    conn.execute("INSERT INTO cursors(source, value, updated_at) VALUES ('source:demo', '42', '2026-11-28T10:06:00+00:00')")
    conn.commit()
    conn.close()
    assert user_version(path) == 0
    return path


def test_a_data_dir_of_the_release_before_versioning_opens_with_its_rows(previous_release_dir):
    records = Records(previous_release_dir)
    assert records.schema_version == latest() == user_version(previous_release_dir)
    row = records.incident("INC-20261128-0001")
    assert (row["status"], row["summary"], row["sla_deadline"]) == (
        "awaiting_approval", {"title": "pool exhausted"}, "2026-11-29T10:00:01+00:00")
    assert [a["reviewer"] for a in records.audit("INC-20261128-0001")] == ["ann"]
    assert records.cursor("source:demo") == "42"
    # the tables the old release created on a poller's first use are there now: a poller can start
    assert poller_status(records) == [] and lease.holder(records) is None
    assert lease.acquire(records, "host:1:0:abc", source="demo", ttl=30)
    records.close()


def test_an_older_store_marks_the_incidents_it_opened_already_overdue_as_backfilled(previous_release_dir):
    # a second incident opened from a log a week old: its deadline (from that log's time) had passed at opening
    with sqlite3.connect(previous_release_dir) as conn:
        conn.execute("INSERT INTO incidents(incident_id, fingerprint, service, status, first_seen, last_seen,"
                     " created_at, updated_at, sla_deadline) VALUES ('INC-20261121-0002', 'fp2', 'billing',"
                     " 'awaiting_approval', '2026-11-21T08:00:00+00:00', '2026-11-21T08:00:00+00:00',"
                     " '2026-11-28T10:00:01+00:00', '2026-11-28T10:00:01+00:00', '2026-11-22T08:00:00+00:00')")
    records = Records(previous_release_dir)
    assert (records.incident("INC-20261128-0001")["backfilled"], records.incident("INC-20261121-0002")["backfilled"]) \
        == (0, 1)
    records.close()


def test_an_older_store_counts_each_incidents_services_from_its_events(previous_release_dir):
    # the incident of the fixture gets events of two services, a second incident events of one
    with sqlite3.connect(previous_release_dir) as conn:
        conn.execute("INSERT INTO incidents(incident_id, fingerprint, service, status, first_seen, last_seen,"
                     " created_at, updated_at, sla_deadline) VALUES ('INC-20261128-0002', 'fp2', 'billing',"
                     " 'awaiting_approval', '2026-11-28T08:00:00+00:00', '2026-11-28T08:00:00+00:00',"
                     " '2026-11-28T10:00:01+00:00', '2026-11-28T10:00:01+00:00', '2026-11-29T08:00:00+00:00')")
        conn.executemany(
            "INSERT INTO events(event_id, incident_id, time, service, message, body, source, position, stored_at)"
            " VALUES (?, ?, '2026-11-28T10:00:00+00:00', ?, 'refused', '{}', 'file', ?, '2026-11-28T10:00:00+00:00')",
            [("e1", "INC-20261128-0001", "checkout", "1"), ("e2", "INC-20261128-0001", "payments", "2"),
             ("e3", "INC-20261128-0001", "checkout", "3"), ("e4", "INC-20261128-0002", "billing", "4")])
    records = Records(previous_release_dir)
    assert [records.incident(i)["service_count"] for i in ("INC-20261128-0001", "INC-20261128-0002")] == [2, 1]
    records.close()


def test_a_new_migration_applies_once_to_a_data_dir_at_the_current_version(tmp_path):
    path = tmp_path / "app.sqlite3"
    old = Records(path)
    old.set_cursor("source:demo", "7")
    old.close()
    assert user_version(path) == latest() and "probe" not in columns(path, "incidents")

    for _ in range(2):  # the second open finds nothing to do (a second ALTER would fail)
        records = Records(path, migrations=WITH_PROBE)
        assert records.schema_version == NEXT and records.cursor("source:demo") == "7"
        records.close()
    assert user_version(path) == NEXT and columns(path, "incidents")[-1] == "probe"


def test_a_data_dir_written_by_newer_code_is_refused(tmp_path):
    path = tmp_path / "app.sqlite3"
    Records(path, migrations=WITH_PROBE).close()
    with pytest.raises(StorageError, match=f"schema version {NEXT}, newer than .* knows \\(up to {latest()}\\)"):
        Records(path)
    assert user_version(path) == NEXT  # refused, not rewritten


def test_a_failing_migration_leaves_the_data_dir_at_its_old_version(tmp_path):
    path = tmp_path / "app.sqlite3"
    Records(path).close()
    broken = (*MIGRATIONS, Migration(NEXT, "half a change", ("ALTER TABLE incidents ADD COLUMN probe TEXT",
                                                          "ALTER TABLE no_such_table ADD COLUMN x TEXT")))
    with pytest.raises(StorageError, match="no_such_table"):
        Records(path, migrations=broken)
    assert user_version(path) == latest() and "probe" not in columns(path, "incidents")


OPENER = r"""
import sys
import pipeline
from pipeline.store.records import Records
from pipeline.store.schema import MIGRATIONS, Migration, latest
# a migration that is slow (it fills a table) and not idempotent (ALTER TABLE): a second run would fail
slow = Migration(latest() + 1, "slow", (
    "CREATE TABLE filler AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 300000) SELECT x FROM n",
    "ALTER TABLE incidents ADD COLUMN probe TEXT"))
print("ready", flush=True)
sys.stdin.readline()  # the parent's "go", written to both children once both are ready
print(Records(sys.argv[1], migrations=(*MIGRATIONS, slow)).schema_version)
"""


@BOTH_BACKENDS
def test_two_processes_opening_one_data_dir_at_once_migrate_it_once(tmp_path, database_url):
    path = database_url or tmp_path / "app.sqlite3"
    Records(path).close()
    children = [subprocess.Popen([sys.executable, "-c", OPENER, str(path)], cwd=ROOT, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    # both imported and waiting on their stdin, then both told at once
    assert [child.stdout.readline() for child in children] == ["ready\n", "ready\n"]
    for child in children:
        child.stdin.write("go\n")
        child.stdin.flush()
    results = [child.communicate(timeout=60) for child in children]
    assert [(child.returncode, out.strip()) for child, (out, _) in zip(children, results)] == [(0, str(NEXT)), (0, str(NEXT))], \
        [err for _, err in results]
    if database_url:
        assert count(database_url, "SELECT count(*) FROM information_schema.columns WHERE table_schema ="
                                   " current_schema() AND table_name = 'incidents' AND column_name = 'probe'") == 1
    else:
        assert columns(path, "incidents").count("probe") == 1
    assert count(path, "SELECT count(*) FROM filler") == 300000
