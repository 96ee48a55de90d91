"""One PostgreSQL database, many processes (as on many machines, each with a data dir of its own):
two real pollers on the same source work it one at a time, with takeover when the working one is
SIGKILLed; what they store has no duplicates; two approver processes racing on each paused
incident leave one winner per decision."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.composition import open_engine
from pipeline.unattended.file_ingest import ingest_path
from pipeline.store import lease
from pipeline.store.records import Records
from tests.support import RACER, ROOT, STORED_IDS, make_settings, paused_ids, poller_env, wait_for

pytestmark = pytest.mark.parametrize("backend", ["postgres"], indirect=True)

KINDS = (
    ("checkout-api", "HikariPool-1 - Connection is not available, request timed out after 30000ms.",
     "java.sql.SQLTransientConnectionException"),
    ("inventory-service", "Deadlock found when trying to get lock on table orders; try restarting transaction",
     "DeadlockLoserDataAccessException"),
    ("receipts-worker", "No space left on device while writing /var/spool/receipts/1.pdf", "OSError"),
    ("payments-gateway", "Read timed out calling partner endpoint after 5000ms", "java.net.SocketTimeoutException"),
)


def lines(start: int, count: int) -> str:
    out = []
    for i in range(start, start + count):
        service, message, exc = KINDS[i % len(KINDS)]
        out.append(json.dumps({"_time": f"2026-11-28T09:{i // 60 % 60:02d}:{i % 60:02d}Z", "service": service,
                               "host": f"{service}-1", "level": "ERROR", "message": message, "exception": exc}))
        out.append(json.dumps({"_time": f"2026-11-28T09:{i // 60 % 60:02d}:{i % 60:02d}Z", "service": service,
                               "level": "INFO", "message": f"GET /health 200 in {i}ms"}))
    return "\n".join(out) + "\n"


def machine(data_dir: Path, name: str) -> Path:
    """Another machine's data dir: its own knowledge index (same docs), the shared database."""
    other = data_dir.parent / name
    shutil.copytree(data_dir / "knowledge-index", other / "knowledge-index")
    return other


def poller(data_dir: Path, log: Path, url: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pipeline", "poll", "--interval", "0.2"], cwd=ROOT, env=poller_env(data_dir, log, url),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def holder_pid(records: Records) -> int | None:
    row = lease.holder(records)
    return int(row["owner"].split(":")[1]) if row and row["live"] else None


def scalar(records: Records, sql: str) -> int:
    return records.query(sql)[0][0]


@pytest.mark.timeout(300)
def test_two_pollers_on_one_database_one_works_a_standby_takes_over_and_nothing_is_duplicated(
        data_dir, database_url, tmp_path, request):
    log = tmp_path / "app.jsonl"
    log.write_text(lines(0, 40))
    records = Records(database_url)
    request.addfinalizer(records.close)  # a failed assertion below must not leave its session to the collector
    pollers = [poller(machine(data_dir, "host-a"), log, database_url)]
    try:
        first = wait_for(lambda: holder_pid(records))
        assert first == pollers[0].pid
        pollers.append(poller(machine(data_dir, "host-b"), log, database_url))
        wait_for(lambda: scalar(records, f"SELECT count(*) FROM {STORED_IDS}") == 80)
        wait_for(lambda: scalar(records, "SELECT count(*) FROM pollers WHERE state = 'standby'") >= 1)
        assert holder_pid(records) == first  # the second one stands by while the first lives
        pollers[0].send_signal(signal.SIGKILL)
        pollers[0].wait(timeout=30)
        # its session ended with it, the server freed the lock: the standby works now
        assert wait_for(lambda: holder_pid(records) == pollers[1].pid)
        with log.open("a") as f:
            f.write(lines(40, 20))
        wait_for(lambda: scalar(records, f"SELECT count(*) FROM {STORED_IDS}") == 120)
        wait_for(lambda: scalar(records, "SELECT count(*) FROM incidents WHERE status = 'analyzing'") == 0)
    finally:
        for p in pollers:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(timeout=60)
    assert scalar(records, f"SELECT count(DISTINCT event_id) FROM {STORED_IDS}") == 120
    # the same file ingested once, by one process, on SQLite, is the oracle
    oracle = open_engine(make_settings(tmp_path / "oracle", database_url=None), sync_knowledge=False)
    request.addfinalizer(oracle.records.close)
    shutil.copytree(data_dir / "knowledge-index", tmp_path / "oracle" / "knowledge-index", dirs_exist_ok=True)
    ingest_path(oracle, log)
    fingerprints = sorted(r["fingerprint"] for r in records.incidents())
    assert fingerprints == sorted(r["fingerprint"] for r in oracle.records.incidents())
    assert len(fingerprints) == len(set(fingerprints)) == len(KINDS)
    assert scalar(records, "SELECT coalesce(sum(event_count), 0) FROM incidents") == 60




@pytest.mark.timeout(300)
def test_approvers_on_two_machines_racing_on_each_incident_leave_one_winner(engine, data_dir, database_url, tmp_path):
    events = tmp_path / "burst.jsonl"
    events.write_text(lines(0, 8))
    ingest_path(engine, events)
    incidents = paused_ids(engine)
    assert len(incidents) == len(KINDS)
    racers = []
    for name in ("host-a", "host-b"):
        env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(machine(data_dir, name)), "PYTHONPATH": str(ROOT),
               "INCIDENTIQ_DATABASE_URL": database_url}
        racers.append(subprocess.Popen([sys.executable, "-c", RACER], cwd=ROOT, env=env, stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    try:
        for racer in racers:
            assert racer.stdout.readline().strip() == "ready", racer.stderr.read()
        for n, inc in enumerate(incidents):
            start = tmp_path / f"start-{n}"
            for racer, who in zip(racers, ("ann", "bob")):
                racer.stdin.write(json.dumps([str(start), ["approve", inc, "--reviewer", who]]) + "\n")
                racer.stdin.flush()
            time.sleep(0.05)
            start.touch()
            results = [json.loads(racer.stdout.readline()) for racer in racers]
            assert sorted(code for code, _ in results) == [0, 3], results
            assert [a["action"] for a in engine.records.audit(inc)] == ["approve"]
            assert len(engine.records.fixes(inc)) <= 1
            assert engine.records.incident(inc)["status"] in ("fix_proposed", "approved")
    finally:
        for racer in racers:
            racer.stdin.close()
            racer.wait(timeout=30)
