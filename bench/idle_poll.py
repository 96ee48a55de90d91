"""Benchmark: one idle poll (a source with nothing new) at 1k, 10k and 100k incidents (issue 37.5).

Each size is a fresh data dir whose records store is seeded in one transaction (`seed`, also the
tests' store in tests/test_idle_poll.py), at schema 4 and then brought up to date as an older store
is: one incident in twenty-nine paused, one failed and given up, the rest decided; one in four
critical, the paused critical ones announced and the decided ones never (decided before anyone was
told: the rows the announce index kept for good before schema 13); an event each, merged; the evidence index's cursor at the newest incident. Then the product's
`Poller` polls an empty file (the seeded incidents have no checkpoints: the check for runs lost with
a replaced checkpoints file is marked done); the first poll is left out, and the median wall and CPU time of `--repeat` polls after it is what an idle poller
costs each interval. Prints the times and the growth against the smallest size. Goal: flat
(<= 1.5x) from 1k up.

    .venv/bin/python bench/idle_poll.py [--sizes 1000,10000,100000] [--repeat 20]

Run it from another checkout's tree (`python OTHER/bench/idle_poll.py`, the file copied there) for a
before/after in one session: it imports the `pipeline` beside it.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (strict msgpack before langgraph loads)

from pipeline.clock import iso  # noqa: E402
from pipeline.state import CLOSED_STATUSES  # noqa: E402
from pipeline.store.sql import placeholders  # noqa: E402

STATUSES = ["awaiting_approval"] * 5 + ["failed"] + list(CLOSED_STATUSES) * 23
SEVERITIES = ("critical", "high", "medium", "low")
GIVEN_UP = "9999-12-31T00:00:00+00:00"


def seed(records, n: int) -> None:
    """n incidents (and an event each) in one transaction."""
    now = records.clock.now()
    start = now - timedelta(days=30)
    incidents, events = [], []
    for k in range(n):
        opened = iso(start + timedelta(seconds=k))
        status = STATUSES[k % len(STATUSES)]
        severity = SEVERITIES[k % 4]
        paused = status == "awaiting_approval"
        incidents.append((f"INC-{k:07d}", f"fp{k % 5000}", f"failure {k}", f"svc-{k % 300}", status, severity,
                          opened, opened, opened, opened, opened if status in CLOSED_STATUSES else None,
                          iso(now + timedelta(hours=4)), opened if paused and severity == "critical" else None,
                          GIVEN_UP if status == "failed" else None))
        events.append((f"ev-{k}", f"INC-{k:07d}", opened, f"svc-{k % 300}", "ERROR", "operation failed", "{}",
                       "seed", str(k), opened))
    with records.transaction() as conn:
        conn.executemany(
            "INSERT INTO incidents(incident_id, fingerprint, title, service, status, severity, first_seen, last_seen,"
            " created_at, updated_at, closed_at, sla_deadline, announced_at, next_attempt_at)"
            f" VALUES ({placeholders(14)})", incidents)
        conn.executemany("INSERT INTO events(event_id, incident_id, time, service, level, message, body, source,"
                         f" position, stored_at, merged) VALUES ({placeholders(10)}, 1)", events)


def seeded_engine(settings, n: int):
    """An engine on a records store seeded with `n` incidents through the bulk path bench/inbox.py
    takes (rows written before the search indexes, which opening the store builds in bulk), its
    statistics gathered and the evidence index caught up with the incidents."""
    from pipeline.composition import open_engine
    from pipeline.review.related import RelatedIncidents
    from pipeline.store.records import Records
    from pipeline.store.schema import MIGRATIONS, migrate

    # the rows go into a store of schema 4, before the inbox's per-row count triggers and (PostgreSQL) the
    # trigram index: schema 5 then counts and indexes them in bulk, as it upgrades any older store. Written
    # at 5, every row fired the count trigger (on PostgreSQL: one counter row updated 100k times in one
    # transaction, each update walking the versions before it) and went into the trigram index one by one
    before_inbox = tuple(m for m in MIGRATIONS if m.version < 5)
    before_search = tuple(replace(m, optional=()) if m.optional else m for m in MIGRATIONS if m.version < 6)
    Path(settings.data_dir).mkdir(parents=True, exist_ok=True)
    seeding = Records(settings.database_url or Path(settings.data_dir) / "app.sqlite3", migrations=before_inbox)
    try:
        seed(seeding, n)
        migrate(seeding.conn, where=seeding.where, migrations=before_search)
    finally:
        seeding.close()
    engine = open_engine(settings)
    # the seeded incidents have no checkpoints by construction: not runs lost with a replaced
    # checkpoints file (lost_runs.py would analyse the paused ones again and note the decided ones)
    engine.graph.checkpointer.lost_runs_checked = True
    engine.records.query("ANALYZE")
    newest = engine.records.query("SELECT incident_id, created_at FROM incidents"
                                  " ORDER BY created_at DESC, incident_id DESC LIMIT 1")[0]
    index = RelatedIncidents(records=engine.records, settings=settings).index
    index.index_dir.mkdir(parents=True, exist_ok=True)  # as set_cursor does since 37.5; the bench also runs on older trees
    index.set_cursor(
        (newest["created_at"], newest["incident_id"]))
    return engine


def idle_polls(engine, log: Path, repeat: int) -> tuple[float, float]:
    """(median wall ms, median CPU ms) of `repeat` idle polls after the first."""
    from pipeline.sources.file import FileSource
    from pipeline.unattended.poller import Poller

    poller = Poller(engine, FileSource(log, max_bytes=engine.settings.max_event_bytes), interval=0.05)
    walls, cpus = [], []
    try:
        poller.poll_once()
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            poller.poll_once()
            walls.append((time.perf_counter() - wall) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
    finally:
        poller.close()
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    from pipeline.config import Settings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[int, tuple[float, float]] = {}
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "quiet.log"
            log.write_text("")
            settings = Settings.from_env(data_dir=Path(tmp) / "data", repo_dir=ROOT / "samples" / "pos-backend")
            engine = seeded_engine(settings, n)
            try:
                results[n] = idle_polls(engine, log, args.repeat)
            finally:
                engine.records.close()
        wall, cpu = results[n]
        print(f"{n:>9,} incidents: idle poll {wall:7.2f} ms wall, {cpu:7.2f} ms CPU"
              f"   ({wall / results[sizes[0]][0]:5.2f}x / {cpu / results[sizes[0]][1]:5.2f}x the {sizes[0]:,})",
              flush=True)


if __name__ == "__main__":
    main()
