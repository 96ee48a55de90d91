"""Durability with real processes: pauses survive process exits and SIGKILL mid-analysis."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pipeline.engine.graph import thread_config
from tests.support import BOTH_BACKENDS, count, FIXTURES, ROOT, STORED_IDS, cli_here, make_settings, run_cli as cli

# durability and concurrency hold on either store
pytestmark = BOTH_BACKENDS

SERVICES = ["checkout-api", "inventory-service", "loyalty-service", "payments-gateway", "receipts-worker"]
MESSAGES = [
    ("java.sql.SQLTransientConnectionException", "HikariPool-1 - Connection is not available, request timed out after {n}ms."),
    ("psycopg2.errors.DeadlockDetected", "deadlock detected DETAIL: Process {n} waits for ShareLock on transaction 77"),
    ("AttributeError", "'NoneType' object has no attribute 'sku{i}'"),
    ("Error", "connect ECONNREFUSED 10.0.0.{i}:5432"),
    ("OSError", "[Errno 28] No space left on device: '/var/receipts/{i}/r-{i}-{n}.pdf'"),
]


def write_many_incidents(path: Path, incidents: int, per_incident: int = 3) -> int:
    """Distinct fingerprints: each (service, message kind) is one incident. A variant word in the
    message does not make another one (the template miner generalises it), so past 25 incidents the
    service names take a round number. Nor do two incidents name a thing in common within minutes
    (one outage would be one incident: CONTRACT §2): each disk-full names its own file on its own host
    (one host's full disk is one outage of every service writing there)."""
    lines = []
    for k in range(incidents):
        service = f"{SERVICES[k % len(SERVICES)]}-{k // 25}"
        exc, template = MESSAGES[(k // len(SERVICES)) % len(MESSAGES)]
        for j in range(per_incident):
            message = template.format(n=1000 + j, i=k) + f" [op {'abcdefghijklmnopqrstuvwxyz'[k % 26]}{k // 26}x]"
            lines.append(json.dumps({"_time": f"2026-11-28T10:{k % 60:02d}:{j:02d}Z", "service": service,
                                     "host": f"h{k}", "level": "ERROR", "exception": exc, "message": message}))
    path.write_text("\n".join(lines) + "\n")
    return len(lines)


def test_a_pause_is_shown_identically_by_a_fresh_process(data_dir):
    # ingested here; listed, and the first incident shown, by fresh processes that never held the run
    # (the other incidents shown through the CLI's entry point here: each reads its stores anew from disk)
    assert cli_here(data_dir, "ingest", str(FIXTURES / "small.jsonl")).returncode == 0
    listed = json.loads(cli(data_dir, "list", "--status", "awaiting_approval", "--json").stdout)
    assert len(listed) > 1
    from pipeline.composition import open_engine

    engine = open_engine(make_settings(data_dir), sync_knowledge=False)
    try:
        for n, row in enumerate(listed):
            shown = json.loads((cli if n == 0 else cli_here)(data_dir, "show", row["incident_id"], "--json").stdout)
            snap = engine.graph.get_state(thread_config(row["incident_id"]))
            assert shown["pending"] == {"interrupt_id": snap.interrupts[0].id,
                                        "checkpoint_id": snap.config["configurable"]["checkpoint_id"]}
    finally:
        engine.records.close()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("kill_after_paused", [1, 12])
def test_sigkill_during_analysis_loses_nothing_and_duplicates_nothing(data_dir, database_url, tmp_path,
                                                                      kill_after_paused):
    source = tmp_path / "burst.jsonl"
    incidents = 30
    total_lines = write_many_incidents(source, incidents)
    env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(data_dir)}
    proc = subprocess.Popen([sys.executable, "-m", "pipeline", "ingest", str(source)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    records = database_url or data_dir / "app.sqlite3"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if count(records, "SELECT count(*) FROM incidents WHERE status='awaiting_approval'") >= kill_after_paused:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "ingest finished before it could be killed; make the input larger"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    paused_at_kill = count(records, "SELECT count(*) FROM incidents WHERE status='awaiting_approval'")
    assert paused_at_kill < incidents  # killed in the middle of analysis

    # the recovery is run by this process: the killed one is what has to be a real process
    again = cli_here(data_dir, "ingest", str(source), "--json")
    assert again.returncode == 0, again.stderr
    assert count(records, f"SELECT count(*) FROM {STORED_IDS}") == total_lines
    assert count(records, f"SELECT count(DISTINCT event_id) FROM {STORED_IDS}") == total_lines
    assert count(records, "SELECT count(*) FROM incidents") == incidents
    assert count(records, "SELECT count(*) FROM incidents WHERE status='awaiting_approval'") == incidents
    assert count(records, "SELECT count(*) FROM fixes") == 0
    assert count(records, "SELECT coalesce(sum(event_count), 0) FROM incidents") == total_lines

    from pipeline.composition import open_engine

    engine = open_engine(make_settings(data_dir), sync_knowledge=False)
    try:
        for row in engine.records.incidents():
            history = list(engine.graph.get_state_history(thread_config(row["incident_id"])))
            pauses = [s for s in history if s.next == ("approval",)]
            assert len(pauses) == 1, (row["incident_id"], [s.next for s in history])
            assert row["pending_checkpoint_id"] == pauses[0].config["configurable"]["checkpoint_id"]
    finally:
        engine.records.close()

    third = json.loads(cli_here(data_dir, "ingest", str(source), "--json").stdout)
    assert third == {"events": 0, "rejected": 0, "incidents_new": 0, "incidents_updated": 0}
