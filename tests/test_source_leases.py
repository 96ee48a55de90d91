"""Several pollers share a data dir's sources (issue 37.6): each source is leased to one poller,
renewed as it polls and taken over once it expires or its holder died; a holder whose lease was
taken has its cursor write refused (the lease's generation), so its batch is stored by the new
holder only. Real processes on PostgreSQL: two pollers split four sources and store every line
exactly once; one killed with SIGKILL in the middle of ingest has its sources moved to the other
within the lease, and still nothing is lost or stored twice."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from pipeline.clock import ManualClock
from pipeline.errors import LeaseLost
from pipeline.incidents.batch import Incidents
from pipeline.ingest.events import DeadLetter
from pipeline.sources.file import FileSource
from pipeline.store import source_leases
from pipeline.store.owners import process_owner
from pipeline.store.records import Records
from pipeline.unattended.poller import Poller
from tests.support import BOTH_BACKENDS, ROOT, SAMPLE_REPO, STORED_IDS, wait_for

LEASE = 2.0  # INCIDENTIQ_SOURCE_LEASE_SECONDS of the processes below: short, so a test waits little
SOURCES = ("a", "b", "c", "d")


def source_lines(source: str, start: int, count: int) -> list[str]:
    """A source's lines: mostly context, two kinds of errors of its own service, and a malformed
    line (a NUL: a dead letter) every 97th."""
    out = []
    for i in range(start, start + count):
        stamp = f"2026-11-28T09:{i // 60 % 60:02d}:{i % 60:02d}Z"
        service = f"{source}-service"
        if i % 97 == 50:
            out.append("{broken json line \x00" + f"{source}{i}")
        elif i % 10 == 3:
            kind = ("Read timed out calling partner endpoint after 5000ms", "java.net.SocketTimeoutException") \
                if i % 20 == 3 else ("No space left on device while writing /var/spool/x.pdf", "OSError")
            out.append(json.dumps({"_time": stamp, "service": service, "host": f"{service}-1", "level": "ERROR",
                                   "message": kind[0], "exception": kind[1]}))
        else:
            out.append(json.dumps({"_time": stamp, "service": service, "level": "INFO",
                                   "message": f"GET /orders/{i} 200 in {i % 37}ms"}))
    return out


def expected(lines: list[str]) -> tuple[int, int, int]:
    """(events, dead letters, errors) the lines make."""
    dead = sum("\x00" in line for line in lines)
    errors = sum('"ERROR"' in line for line in lines)
    return len(lines) - dead, dead, errors


def append(path: Path, lines: list[str]) -> None:
    with path.open("a") as f:
        f.write("\n".join(lines) + "\n")


# -- in one process: the lease's rules -----------------------------------------------------------

@BOTH_BACKENDS
def test_a_holder_taken_over_after_its_lease_expired_has_its_batch_refused(engine, tmp_path):
    clock = ManualClock()
    engine.records.clock = clock
    ann, bob = process_owner(), process_owner()
    assert source_leases.claim(engine.records, ann, ["s"], ttl=5, share=True) == {"s": 1}
    assert source_leases.claim(engine.records, bob, ["s"], ttl=5, share=True) == {}  # ann's, not expired
    clock.advance(seconds=6)
    assert source_leases.claim(engine.records, bob, ["s"], ttl=5, share=True) == {"s": 2}
    line = DeadLetter("s", "s@0", "not text", "x")
    # ann, thought dead, wakes up with the batch it read: refused, nothing of it stored
    with pytest.raises(LeaseLost):
        engine.incidents.store_batch([line], cursor=("source:s", "ann's"), fence=("s", ann, 1))
    assert engine.records.cursor("source:s") is None
    assert engine.records.query("SELECT count(*) AS n FROM dead_letters")[0]["n"] == 0
    engine.incidents.store_batch([line], cursor=("source:s", "bob's"), fence=("s", bob, 2))
    assert engine.records.cursor("source:s") == "bob's"
    with pytest.raises(LeaseLost):  # nor a batch that moves no cursor
        engine.incidents.store_batch([line], cursor=None, fence=("s", ann, 1))


@BOTH_BACKENDS
def test_pollers_split_the_sources_by_their_heartbeats_and_a_stopped_ones_move_at_once(engine):
    records = engine.records
    ann, bob, cid = process_owner(), process_owner(), process_owner()
    assert list(source_leases.claim(records, ann, SOURCES, ttl=30, share=True)) == list(SOURCES)  # alone: all
    assert source_leases.claim(records, bob, SOURCES, ttl=30, share=True) == {}  # all held, none expired
    kept = source_leases.claim(records, ann, SOURCES, ttl=30, share=True, keep="d")  # two live now: two each
    assert len(kept) == 2 and "d" in kept
    taken = source_leases.claim(records, bob, SOURCES, ttl=30, share=True)
    assert sorted(taken) == sorted(set(SOURCES) - set(kept))
    assert all(generation == 2 for generation in taken.values())  # a takeover raises the generation
    assert source_leases.claim(records, cid, SOURCES, ttl=30, share=True) == {}  # ceil(4/3) = 2: they shed one each
    assert len(source_leases.claim(records, ann, SOURCES, ttl=30, share=True)) == 2
    source_leases.release(records, bob)  # bob stops: its sources are free, its heartbeat gone
    assert len(source_leases.claim(records, cid, SOURCES, ttl=30, share=True)) == 2
    assert {h["holder"] for h in source_leases.holders(records) if h["live"]} == {ann, cid}
    # on SQLite's one working poller there is no share: it takes every free source
    assert len(source_leases.claim(records, bob, SOURCES, ttl=30, share=False)) == 0


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_on_postgres_a_batch_stores_its_own_lines_while_another_writer_holds_the_lock(database_url, tmp_path):
    """Two pollers store their sources side by side: a batch writes its dead letters and the lines
    that open nothing before it waits for the writer lock (which it takes only for the miner, the
    incidents and the cursor), and commits all of it, or none, when it has it."""
    log = tmp_path / "a.jsonl"
    lines = source_lines("a", 0, 120)
    append(log, lines)
    batch = FileSource(log, max_bytes=1 << 20).read(None)
    incidents = Incidents(Records(database_url))
    other, watcher = Records(database_url), Records(database_url)  # each a session of its own
    holding, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:  # another process's correlation, say
        with other.transaction():
            holding.set()
            release.wait(10)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    assert holding.wait(10)
    storing = threading.Thread(target=incidents.store_batch, args=(batch.items,),
                               kwargs={"cursor": ("source:a", batch.cursor)})
    storing.start()
    try:
        ours = f"iiq:{os.getpid()}:%"
        # waiting for the lock, its context block and dead letters already written (their tables' row locks)
        waiting_with = ("SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_stat_activity AS a"
                        " JOIN pg_locks AS l ON l.pid = a.pid AND l.granted AND l.mode = 'RowExclusiveLock'"
                        " JOIN pg_class AS c ON c.oid = l.relation AND c.relkind = 'r'"
                        " WHERE a.application_name LIKE $1 AND a.wait_event = 'advisory'")
        tables = wait_for(lambda: watcher.query(waiting_with, (ours,))[0][0], timeout=10)
        assert set(tables.split(",")) >= {"context_blocks", "context_ids", "dead_letters"}
        assert watcher.cursor("source:a") is None  # nothing of it committed yet
    finally:
        release.set()
        holder.join(10)
        storing.join(10)
        other.close()
    assert watcher.cursor("source:a") == batch.cursor
    assert_each_line_once(watcher, lines)
    watcher.close()
    incidents.records.close()


def test_on_sqlite_the_one_working_poller_reads_every_listed_source(engine, tmp_path):
    logs = [tmp_path / f"{name}.jsonl" for name in SOURCES]
    every: list[str] = []
    for name, log in zip(SOURCES, logs):
        lines = source_lines(name, 0, 60)
        append(log, lines)
        every += lines
    sources = [FileSource(log, max_bytes=engine.settings.max_event_bytes) for log in logs]
    poller = Poller(engine, sources, interval=0.05)
    report = poller.poll_once()
    poller.close()
    events, dead, _ = expected(every)
    assert (report.counts.events, report.counts.rejected) == (events, dead)
    assert report.source == ";".join(s.name for s in sources)
    assert all(engine.records.cursor(f"source:{s.name}") for s in sources)
    assert source_leases.holders(engine.records) and not any(h["live"] for h in source_leases.holders(engine.records))


# -- real processes on PostgreSQL ----------------------------------------------------------------

def machine(data_dir: Path, name: str) -> Path:
    other = data_dir.parent / name
    shutil.copytree(data_dir / "knowledge-index", other / "knowledge-index")
    return other


def poller(data_dir: Path, logs: list[Path], url: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SPLUNK_", "INCIDENTIQ_"))}
    env.update(INCIDENTIQ_DATA_DIR=str(data_dir), INCIDENTIQ_SOURCE=";".join(f"file:{log}" for log in logs),
               PYTHONPATH=str(ROOT), INCIDENTIQ_REPO_DIR=str(SAMPLE_REPO), INCIDENTIQ_DATABASE_URL=url,
               INCIDENTIQ_MERGE_DELAY="0", INCIDENTIQ_SOURCE_LEASE_SECONDS=str(LEASE),
               INCIDENTIQ_POLL_BATCH_LINES="50")
    return subprocess.Popen([sys.executable, "-m", "pipeline", "poll", "--interval", "0.1"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def pid(owner: str | None) -> int | None:
    return int(owner.split(":")[1]) if owner else None


def held_by(records: Records) -> dict[str, int | None]:
    """source -> the pid of its live holder."""
    return {Path(h["source"][5:]).stem: pid(h["holder"]) if h["live"] else None
            for h in source_leases.holders(records)}


def scalar(records: Records, sql: str) -> int:
    return records.query(sql)[0][0]


def assert_each_line_once(records: Records, lines: list[str]) -> None:
    events, dead, errors = expected(lines)
    assert scalar(records, f"SELECT count(*) FROM {STORED_IDS}") == events
    assert scalar(records, f"SELECT count(DISTINCT event_id) FROM {STORED_IDS}") == events
    assert scalar(records, "SELECT count(*) FROM dead_letters") == dead
    assert scalar(records, "SELECT coalesce(sum(event_count), 0) FROM incidents") == errors


def unread(records: Records, log: Path) -> int:
    """Bytes of a file source past its stored cursor."""
    cursor = json.loads(records.cursor(f"source:file:{log}") or '{"files": []}')
    return log.stat().st_size - sum(int(f["off"]) for f in cursor["files"])


def stop(processes: list[subprocess.Popen]) -> None:
    for p in processes:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in processes:
        if p.poll() is None:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
@pytest.mark.timeout(300)
def test_two_processes_split_four_sources_a_killed_ones_move_within_the_lease_and_each_line_is_stored_once(
        data_dir, database_url, tmp_path, request):
    logs = [tmp_path / f"{name}.jsonl" for name in SOURCES]
    written: dict[str, int] = {}
    every: list[str] = []

    def write(count: int) -> None:
        for name, log in zip(SOURCES, logs):
            lines = source_lines(name, written.get(name, 0), count)
            written[name] = written.get(name, 0) + count
            append(log, lines)
            every.extend(lines)

    write(300)
    records = Records(database_url)
    request.addfinalizer(records.close)
    processes = [poller(machine(data_dir, "host-a"), logs, database_url)]
    try:
        wait_for(lambda: set(held_by(records).values()) == {processes[0].pid}, timeout=60)  # alone: all four
        processes.append(poller(machine(data_dir, "host-b"), logs, database_url))
        # the second one's heartbeat makes the first give back two at its next renewal
        halves = Counter({processes[0].pid: 2, processes[1].pid: 2})
        split = wait_for(lambda: (lambda h: h if Counter(h.values()) == halves else None)(held_by(records)),
                         timeout=60)
        write(300)
        wait_for(lambda: scalar(records, f"SELECT count(*) FROM {STORED_IDS}") > 0)
        # busy: lines keep coming while one holder is killed in the middle of its ingest
        victim, survivor = processes
        for _ in range(10):  # kill it with lines of its sources still unread (a fast holder may catch up)
            write(400)
            time.sleep(0.1)
            theirs = [name for name, holder in held_by(records).items() if holder == victim.pid]
            if any(unread(records, tmp_path / f"{name}.jsonl") for name in theirs):
                break
        victim.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        victim.wait(timeout=30)
        assert theirs and any(unread(records, tmp_path / f"{name}.jsonl") for name in theirs)  # mid-ingest
        moved = wait_for(lambda: set(held_by(records).values()) == {survivor.pid}, timeout=60)
        took = time.monotonic() - killed_at
        assert moved and took <= LEASE + 1.5, took  # within the lease (and the survivor's next poll)
        write(200)
        events, dead, _ = expected(every)
        wait_for(lambda: scalar(records, f"SELECT count(*) FROM {STORED_IDS}") == events
                 and scalar(records, "SELECT count(*) FROM dead_letters") == dead, timeout=120)
        wait_for(lambda: scalar(records, "SELECT count(*) FROM incidents WHERE status = 'analyzing'") == 0)
        assert sorted(split) == sorted(SOURCES)
    finally:
        stop(processes)
    assert_each_line_once(records, every)
    # every source's cursor is at its file's end, moved by both holders in turn
    assert not any(unread(records, log) for log in logs)
    generations = {Path(h["source"][5:]).stem: h["generation"] for h in source_leases.holders(records)}
    assert sum(generations.values()) >= len(SOURCES) + 2 + 2  # taken at start, two split off, two after the kill
    assert not any(p.stderr and "Traceback" in (p.stderr.read() or "") for p in processes)


@BOTH_BACKENDS
def test_the_operations_status_says_which_poller_reads_each_source(engine, tmp_path):
    from pipeline.operations.metrics import poller_status

    logs = [tmp_path / f"{name}.jsonl" for name in SOURCES[:2]]
    for name, log in zip(SOURCES, logs):
        append(log, source_lines(name, 0, 20))
    poller = Poller(engine, [FileSource(log, max_bytes=engine.settings.max_event_bytes) for log in logs], interval=0.05)
    poller.poll_once()
    status = {row["source"]: row for row in poller_status(engine.records)}
    assert sorted(status) == sorted(f"file:{log}" for log in logs)
    assert all(row["held_by"] == poller.owner and row["state"] == "running" for row in status.values())
    poller.close()
    assert all(row["held_by"] is None and row["state"] == "stopped" for row in poller_status(engine.records))
