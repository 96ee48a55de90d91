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


# a real `python -m pipeline poll`, which appends each working poll's start and end (time.time())
# to a file: the probe that says when this process worked
PROBED_POLLER = r"""
import json, sys, time
import pipeline
from pipeline.cli import main
from pipeline.unattended.poller import Poller

worked = open(sys.argv[1], "a", buffering=1)
poll = Poller._poll

def probed(self):
    start = time.time()
    report, error = poll(self)
    # a poll whose sessions were killed under it fails: its lock went with its session, so the
    # standby may start while the failing poll unwinds, storing nothing (its session is gone);
    # what never overlaps is polls that worked (the counts below check nothing was doubled)
    if not report.standby and error is None:
        worked.write(json.dumps([start, time.time()]) + "\n")
    return report, error

Poller._poll = probed
sys.exit(main(["poll", "--interval", "0.2"]))
"""


def start_poller(data_dir: Path, log: Path, url: str, worked: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", PROBED_POLLER, str(worked)], cwd=ROOT, env=poller_env(data_dir, log, url),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def working_polls(path: Path) -> list[tuple[float, float]]:
    return [tuple(json.loads(line)) for line in path.read_text().splitlines()] if path.exists() else []


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
        assert working_polls(worked[1]) == []
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
    polls = sorted([(s, e, "a") for s, e in working_polls(worked[0])] + [(s, e, "b") for s, e in working_polls(worked[1])])
    assert polls
    for (_, end, who), (start, _, other) in zip(polls, polls[1:]):
        assert who == other or end <= start, f"{who} worked until {end}, {other} from {start}"
    assert records.query(f"SELECT count(*) FROM {STORED_IDS}")[0][0] == 60
    assert records.query(f"SELECT count(DISTINCT event_id) FROM {STORED_IDS}")[0][0] == 60
    fingerprints = [r["fingerprint"] for r in records.incidents()]
    assert len(fingerprints) == len(set(fingerprints)) == len(SERVICES)
    assert records.query("SELECT coalesce(sum(event_count), 0) FROM incidents")[0][0] == 60
