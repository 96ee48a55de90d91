"""A PostgreSQL server that drops its clients (a restart, a failover, an administrator): the shared
server cannot be restarted under other people's tests, so the sessions of one process are ended as
a restart ends them, by pg_terminate_backend on their application_name (`iiq:<pid>:...`, set on
every connection). The next statement reconnects; a transaction cut in the middle fails whole and
the next one works; two pollers whose sessions all drop never work at the same time, and what
they store has no duplicates."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from pipeline.errors import StorageError
from pipeline.review.service import ReviewService
from pipeline.store.records import Records
from tests.support import PG_SERVER, ROOT, STORED_IDS, paused_ids, pending, poller_env, wait_for

pytestmark = pytest.mark.parametrize("backend", ["postgres"], indirect=True)

SERVICES = ("checkout-api", "inventory-service", "receipts-worker")


def terminate(pid: int) -> int:
    """End every session of process `pid` on the server, as a restart does; how many there were."""
    with psycopg.connect(PG_SERVER, autocommit=True) as admin:
        return len(admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                                 " WHERE application_name LIKE %s", (f"iiq:{pid}:%",)).fetchall())


def lines(start: int, count: int) -> str:
    out = []
    for i in range(start, start + count):
        service = SERVICES[i % len(SERVICES)]
        out.append(json.dumps({"_time": f"2026-11-28T09:{i // 60 % 60:02d}:{i % 60:02d}Z", "service": service,
                               "host": f"{service}-1", "level": "ERROR", "exception": "java.io.IOException",
                               "message": f"{service}: upstream connection reset by peer"}))
    return "\n".join(out) + "\n"


def test_a_workbench_whose_sessions_were_dropped_reads_and_decides_on_the_next_operation(paused_engine):
    engine = paused_engine
    inc = paused_ids(engine)[0]
    interrupt = pending(engine, inc)
    engine.graph.get_state({"configurable": {"thread_id": inc}})  # the checkpoint store is open too
    assert terminate(os.getpid()) >= 2  # the records store's session and the checkpoint store's
    # a read, then a decision (a records transaction and checkpoint writes), each on a new session
    assert engine.records.incident(inc)["status"] == "awaiting_approval"
    service = ReviewService(engine)
    assert terminate(os.getpid()) >= 1  # the records store's new one (the checkpoint store reconnects when used)
    service.approve(inc, reviewer="ann", expect_interrupt=interrupt)
    assert engine.records.incident(inc)["status"] in ("fix_proposed", "approved")
    assert [a["action"] for a in engine.records.audit(inc)] == ["approve"]


def test_a_transaction_cut_by_the_server_fails_whole_and_the_next_one_works(database_url):
    records = Records(database_url)
    try:
        with pytest.raises(StorageError):
            with records.transaction() as conn:
                conn.execute("INSERT INTO cursors(source, value, updated_at) VALUES ($1, $2, $3)", ("a", "1", "t"))
                terminate(os.getpid())
                conn.execute("INSERT INTO cursors(source, value, updated_at) VALUES ($1, $2, $3)", ("b", "2", "t"))
        with records.transaction() as conn:
            conn.execute("INSERT INTO cursors(source, value, updated_at) VALUES ($1, $2, $3)", ("c", "3", "t"))
        assert [r["source"] for r in records.query("SELECT source FROM cursors ORDER BY source")] == ["c"]
    finally:
        records.close()


# a real `python -m pipeline poll` whose probe appends [what, start, end] (time.time()) for each step of
# the work that only one process may do at a time, stamped around that step alone (not the whole
# poll: on PostgreSQL one poller may read a source while another, holding the data dir's lock and
# no source, does the housekeeping, and that is no overlap):
# - "source:<name>": a read of the source that stored under its lease; a read whose batch was refused
#   (LeaseLost: its lease was taken over) or failed counts up to the end of its last stored batch,
#   as nothing after that was stored (the counts below check nothing was stored twice)
# - "housekeeping": each of recovering lost runs, advancing due incidents, escalating, pruning,
#   whatever its outcome (a step cut by a dropped session must still be over before another
#   process's begins: a standby waits out the grace of lease.py before it takes the lock)
PROBED_POLLER = r"""
import json, sys, threading, time
from pipeline.cli import main
from pipeline.incidents.batch import Incidents
from pipeline.unattended import escalation, poller
from pipeline.unattended.poller import Poller

worked = open(sys.argv[1], "a", buffering=1)
stored = threading.local()  # when the read in progress last stored a batch

def note(what, start, end):
    worked.write(json.dumps([what, start, end]) + "\n")

store_batch = Incidents.store_batch

def probed_store(self, *args, **kwargs):
    counts = store_batch(self, *args, **kwargs)
    stored.at = time.time()
    return counts

read_and_store = Poller._read_and_store

def probed_read(self, report, source):
    stored.at, start = None, time.time()
    try:
        read_and_store(self, report, source)
    except BaseException:
        if stored.at is not None:
            note("source:" + source.name, start, stored.at)
        raise
    note("source:" + source.name, start, time.time())

def housekeeping(step):
    def probed(*args, **kwargs):
        start = time.time()
        try:
            return step(*args, **kwargs)
        finally:
            note("housekeeping", start, time.time())
    return probed

Incidents.store_batch = probed_store
Poller._read_and_store = probed_read
poller.recover_lost_runs = housekeeping(poller.recover_lost_runs)
Poller._advance_incidents = housekeeping(Poller._advance_incidents)
escalation.run = housekeeping(escalation.run)
Poller._prune_now_and_then = housekeeping(Poller._prune_now_and_then)
sys.exit(main(["poll", "--interval", "0.2"]))
"""


def start_poller(data_dir: Path, log: Path, url: str, worked: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", PROBED_POLLER, str(worked)], cwd=ROOT, env=poller_env(data_dir, log, url),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def steps(path: Path) -> list[tuple[str, float, float]]:
    """What the probe of one poller noted: (what, start, end) of each step only one process may do."""
    return [tuple(json.loads(line)) for line in path.read_text().splitlines()] if path.exists() else []


def overlaps(by_process: dict[str, list[tuple[str, float, float]]]) -> list[str]:
    """Each step of one process that began before another process's step of the same kind ended."""
    found = []
    for what in sorted({step[0] for noted in by_process.values() for step in noted}):
        ended: dict[str, float] = {}  # each process's latest end so far, the steps taken in order of start
        for start, end, who in sorted((s, e, who) for who, noted in by_process.items() for w, s, e in noted if w == what):
            found += [f"{what}: {other} until {until}, {who} from {start}"
                      for other, until in ended.items() if other != who and until > start]
            ended[who] = max(end, ended.get(who, end))
    return found


@pytest.mark.timeout(300)
def test_pollers_whose_sessions_drop_reconnect_and_never_work_at_the_same_time(data_dir, database_url, tmp_path,
                                                                              request):
    log = tmp_path / "app.jsonl"
    log.write_text(lines(0, 30))
    records = Records(database_url)
    request.addfinalizer(records.close)  # a failed assertion below must not leave its session to the collector
    hosts = []
    for name in ("host-a", "host-b"):
        other = data_dir.parent / name
        shutil.copytree(data_dir / "knowledge-index", other / "knowledge-index")
        hosts.append(other)
    worked = [tmp_path / "a.worked", tmp_path / "b.worked"]
    a = start_poller(hosts[0], log, database_url, worked[0])
    pollers = [a]
    events = lambda: records.query(f"SELECT count(*) FROM {STORED_IDS}")[0][0]  # noqa: E731
    try:
        wait_for(lambda: events() == 30)
        b = start_poller(hosts[1], log, database_url, worked[1])
        pollers.append(b)
        wait_for(lambda: records.query("SELECT count(*) FROM pollers WHERE state = 'standby'")[0][0] >= 1)
        # the working poller's sessions drop (its records, checkpoints and lock sessions): it
        # reconnects and takes its lock back; the standby, which sees it come back, stays standby
        assert terminate(a.pid) >= 3
        with log.open("a") as f:
            f.write(lines(30, 15))
        wait_for(lambda: events() == 45)
        assert steps(worked[1]) == []  # b neither read nor kept house
        # every session of both drops, as a restart does; both come back, one works
        terminate(a.pid), terminate(b.pid)
        with log.open("a") as f:
            f.write(lines(45, 15))
        wait_for(lambda: events() == 60)
        wait_for(lambda: records.query("SELECT count(*) FROM incidents WHERE status = 'analyzing'")[0][0] == 0)
        assert a.poll() is None and b.poll() is None  # neither process died of it
    finally:
        for p in pollers:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(timeout=60)
    noted = {"a": steps(worked[0]), "b": steps(worked[1])}
    assert {what.split(":")[0] for what, _, _ in noted["a"]} == {"source", "housekeeping"}, noted["a"][:5]
    assert overlaps(noted) == []
    assert records.query(f"SELECT count(*) FROM {STORED_IDS}")[0][0] == 60
    assert records.query(f"SELECT count(DISTINCT event_id) FROM {STORED_IDS}")[0][0] == 60
    fingerprints = [r["fingerprint"] for r in records.incidents()]
    assert len(fingerprints) == len(set(fingerprints)) == len(SERVICES)
    assert records.query("SELECT coalesce(sum(event_count), 0) FROM incidents")[0][0] == 60
