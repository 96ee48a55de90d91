"""`python -m pipeline poll` as real processes: one poller per data dir, clean stops, and
SIGKILL at random points never loses, duplicates or double-pauses anything; on SQLite files and
on PostgreSQL (the pollers share the test's database schema)."""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.store import lease
from pipeline.engine.graph import thread_config
from pipeline.operations.metrics import poller_status
from pipeline.store.records import Records
from pipeline.unattended.file_ingest import ingest_path
from tests.support import BOTH_BACKENDS, FIXTURES, ROOT, STORED_IDS, make_settings, wait_for

pytestmark = BOTH_BACKENDS

SERVICES = ("checkout-api", "inventory-service", "payments-gateway", "loyalty-service", "receipts-worker")
PROBLEMS = (
    ("HikariPool-1 - Connection is not available, request timed out after {n}ms.", "java.sql.SQLTransientConnectionException"),
    ("Deadlock found when trying to get lock on table orders_{s}; try restarting transaction", "DeadlockLoserDataAccessException"),
    ("Read timed out calling partner endpoint after {n}ms", "java.net.SocketTimeoutException"),
    ("'NoneType' object has no attribute 'sku' while pricing basket {n}", "AttributeError"),
    ("No space left on device while writing /var/spool/receipts/{n}.pdf", "OSError"),
    ("certificate verify failed: certificate has expired for host partner-{s}.example.com", "SSLError"),
)


def write_day(path: Path, *, per_incident: int = 20, seed: int = 7) -> None:
    """A few hundred lines (two of the file source's batches): 30 kinds of errors, context
    lines, and a few malformed ones."""
    rng = random.Random(seed)
    lines = []
    for i in range(per_incident * len(SERVICES) * len(PROBLEMS)):
        svc, (text, exc) = SERVICES[i % len(SERVICES)], PROBLEMS[(i // len(SERVICES)) % len(PROBLEMS)]
        lines.append({"_time": f"2026-11-28T09:{i // 60 % 60:02d}:{i % 60:02d}Z", "service": svc, "host": f"{svc}-1",
                      "level": "ERROR", "message": text.format(n=rng.randint(1000, 99999), s=svc), "exception": exc})
    out = [json.dumps(line) for line in lines]
    for k in range(0, len(out), 12):
        out.insert(k, json.dumps({"_time": "2026-11-28T09:00:00Z", "service": "checkout-api", "level": "INFO",
                                  "message": f"GET /health 200 in {k}ms"}))
    for k in (40, 150, 260):
        out.insert(k, "{broken json line \x00" + str(k))  # not text (a NUL): a dead letter
    path.write_text("\n".join(out) + "\n")


def poll_env(data_dir: Path, log: Path, database_url: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SPLUNK_", "INCIDENTIQ_"))}
    env.update(INCIDENTIQ_DATA_DIR=str(data_dir), INCIDENTIQ_SOURCE=f"file:{log}", PYTHONPATH=str(ROOT),
               INCIDENTIQ_REPO_DIR=str(ROOT / "samples" / "pos-backend"),
               # the day in one batch: a batch's new incidents run before the next batch is read, so
               # with smaller batches later evidence re-runs a paused incident (a second pause) after
               # the merge delay; what these tests check is kills, not batching
               INCIDENTIQ_POLL_BATCH_LINES="100000")
    if database_url:
        env["INCIDENTIQ_DATABASE_URL"] = database_url
    return env


def start_poller(env: dict, interval: float = 0.2) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pipeline", "poll", "--interval", str(interval)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def scalar(records: Records, sql: str) -> int:
    return records.query(sql)[0][0]


def pid_of(owner: str | None) -> int | None:
    return int(owner.split(":")[1]) if owner else None


@pytest.fixture
def polled_dir(data_dir, database_url) -> tuple[Path, str | None]:
    """The pollers' data dir and database URL (None: the SQLite files in that dir)."""
    return data_dir, database_url


def records_of(polled: tuple[Path, str | None]) -> Records:
    data_dir, url = polled
    return Records(url or data_dir / "app.sqlite3")


@pytest.fixture(scope="module")
def oracle(knowledge_index, tmp_path_factory) -> dict:
    """What the day's log (write_day) stores when ingested once without interruptions, by an engine on
    SQLite files of its own: the same for both backends' runs, so found once for the module."""
    from pipeline.composition import open_engine
    from pipeline.store import checkpoints

    d = tmp_path_factory.mktemp("oracle")
    shutil.copytree(knowledge_index, d / "knowledge-index")
    write_day(d / "day.jsonl")
    eng = open_engine(make_settings(d, database_url=None), sync_knowledge=False)
    try:
        ingested = ingest_path(eng, d / "day.jsonl").as_json()
        return {"ingested": ingested,
                "ids": {r["event_id"] for r in eng.records.query(f"SELECT event_id FROM {STORED_IDS}")},
                "incidents": {r["incident_id"]: r["event_count"] for r in eng.records.incidents()}}
    finally:
        eng.records.close()
        checkpoints.saver_for(d / "checkpoints.sqlite").close()


@pytest.mark.timeout(120)
def test_two_poller_processes_one_works_one_waits_and_takes_over_on_a_clean_stop(polled_dir, tmp_path):
    log = tmp_path / "app.jsonl"
    shutil.copy(FIXTURES / "small.jsonl", log)
    env = poll_env(polled_dir[0], log, polled_dir[1])
    first = start_poller(env)
    records = None
    try:
        records = records_of(polled_dir)
        wait_for(lambda: scalar(records, "SELECT count(*) FROM incidents WHERE status = 'awaiting_approval'") == 4)
        second = start_poller(env)
        try:
            standby = wait_for(lambda: [p for s in poller_status(records) for p in s["pollers"]
                                        if p["state"] == "standby" and p["live"]])
            assert pid_of(standby[0]["owner"]) == second.pid
            assert pid_of(lease.holder(records)["owner"]) == first.pid
            with log.open("a") as f:
                f.write(json.dumps({"_time": "2026-11-28T10:09:00Z", "service": "checkout-api", "level": "ERROR",
                                    "message": "HikariPool-1 - Connection is not available, request timed out after 30999ms.",
                                    "exception": "java.sql.SQLTransientConnectionException"}) + "\n")
            wait_for(lambda: scalar(records, f"SELECT count(*) FROM {STORED_IDS}") == 11)
            first.send_signal(signal.SIGTERM)
            assert first.wait(timeout=30) == 0
            holder = wait_for(lambda: lease.holder(records))  # the standby takes over at its next poll
            assert pid_of(holder["owner"]) == second.pid
            with log.open("a") as f:
                f.write(json.dumps({"_time": "2026-11-28T10:10:00Z", "service": "promo-engine", "level": "ERROR",
                                    "message": "coupon service returned malformed payload"}) + "\n")
            wait_for(lambda: scalar(records, "SELECT count(*) FROM incidents WHERE status = 'awaiting_approval'") == 5)
            assert scalar(records, f"SELECT count(*) FROM {STORED_IDS}") == 12
            assert scalar(records, "SELECT sum(event_count) FROM incidents") == 11  # 12 less the INFO line
        finally:
            second.send_signal(signal.SIGTERM)
            assert second.wait(timeout=30) == 0
        assert lease.holder(records) is None
        assert poller_status(records)[0]["state"] == "stopped"
    finally:
        if first.poll() is None:
            first.kill()
        if records is not None:
            records.close()


@pytest.mark.timeout(180)
def test_sigkill_at_random_points_loses_nothing_and_pauses_every_incident_once(oracle, polled_dir, tmp_path):
    log = tmp_path / "day.jsonl"
    write_day(log)
    # the same input, ingested once without interruptions
    ingested, expected_ids, expected_incidents = oracle["ingested"], oracle["ids"], oracle["incidents"]
    assert ingested["incidents_new"] == 30 and ingested["rejected"] == 3 and len(expected_ids) > 500

    env = poll_env(polled_dir[0], log, polled_dir[1])
    rng = random.Random(int(os.environ.get("KILL_SEED", "20261128")))
    records = records_of(polled_dir)
    paused = "SELECT count(*) FROM incidents WHERE status = 'awaiting_approval'"
    kill_points = []
    try:
        for round_no in range(4):
            proc = start_poller(env)
            try:
                if round_no == 0:
                    # after the first batch is stored: during the second one, or just after it
                    wait_for(lambda: scalar(records, f"SELECT count(*) FROM {STORED_IDS}"), step=0.005)
                    time.sleep(rng.uniform(0.0, 0.05))
                else:
                    target = min(29, scalar(records, paused) + rng.randint(1, 6))
                    wait_for(lambda: scalar(records, paused) >= target or proc.poll() is not None)
                    time.sleep(rng.uniform(0.0, 0.08))  # between, or in the middle of, graph steps
                kill_points.append((round_no, scalar(records, f"SELECT count(*) FROM {STORED_IDS}"), scalar(records, paused)))
            finally:
                proc.kill()
                proc.wait()
        done = subprocess.run([sys.executable, "-m", "pipeline", "poll", "--once", "--json"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        print("kill points (round, events stored, incidents paused):", kill_points)

        assert {r["event_id"] for r in records.query(f"SELECT event_id FROM {STORED_IDS}")} == expected_ids
        assert scalar(records, "SELECT count(*) FROM dead_letters") == 3
        rows = records.incidents()
        assert {r["incident_id"]: r["event_count"] for r in rows} == expected_incidents
        assert {r["status"] for r in rows} == {"awaiting_approval"} and {r["attempts"] for r in rows} == {0}
        assert scalar(records, "SELECT count(*) FROM events WHERE incident_id IS NOT NULL AND merged = 0") == 0
        from pipeline.store import checkpoints
        from pipeline.engine.graph import build_graph

        graph = build_graph(checkpoints.saver_for(polled_dir[1] or polled_dir[0] / "checkpoints.sqlite"))
        for row in rows:
            history = list(graph.get_state_history(thread_config(row["incident_id"])))
            pauses = [s for s in history if s.next == ("approval",)]
            assert len(pauses) == 1, (row["incident_id"], [(s.metadata["source"], s.next) for s in history])
            assert pauses[0].interrupts[0].id == row["pending_interrupt_id"]
            assert not [s for s in history if s.metadata["source"] == "update"]
    finally:
        records.close()


@pytest.mark.timeout(120)
def test_a_sigkilled_poller_is_shown_gone_not_running(polled_dir, tmp_path):
    # issue 39.10: its row kept saying `running` (nobody is left to write that it stopped)
    log = tmp_path / "app.jsonl"
    shutil.copy(FIXTURES / "small.jsonl", log)
    proc = start_poller(poll_env(polled_dir[0], log, polled_dir[1]))
    records = records_of(polled_dir)
    try:
        mine = wait_for(lambda: [p for s in poller_status(records) for p in s["pollers"]
                                 if pid_of(p["owner"]) == proc.pid and p["state"] == "running" and p["live"]])
        assert mine
        proc.kill()
        proc.wait()
        (status,) = poller_status(records)
        assert [(pid_of(p["owner"]), p["state"], p["live"]) for p in status["pollers"]] == [(proc.pid, "gone", False)]
        assert status["state"] == "stopped"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        records.close()
