"""Chaos: real `python -m pipeline` processes SIGKILLed at random points and stores held
locked by a second process, across ingest, poll, decisions, edits, replay and fork; then the invariants. Seeded
and bounded (a dozen rounds, well under 2 minutes on 2 cores); the figures are reported as a warning.
The surfaces added since (prune, migration, outbox, full disk, PostgreSQL session) are in
tests/test_chaos_surfaces.py, a file of its own so that two workers share the chaos suite."""
from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

from tests.support import BOTH_BACKENDS, FIXTURES, ROOT, STORED_IDS, ChaosFigures, cli_here

# durability and concurrency hold on either store
pytestmark = BOTH_BACKENDS

ROUNDS = 12
SEED = 20261128


def start(data_dir: Path, *args: str, source: str | None = None) -> subprocess.Popen:
    env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(data_dir), "INCIDENTIQ_REPO_DIR": str(ROOT / "samples" / "pos-backend")}
    if source:
        env["INCIDENTIQ_SOURCE"] = source
    return subprocess.Popen([sys.executable, "-m", "pipeline", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    proc = start(data_dir, *args)
    out, err = proc.communicate(timeout=240)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def hold_lock(path: Path, seconds: float, url: str | None = None) -> subprocess.Popen:
    """A second process holding an EXCLUSIVE transaction on a store for a while (on PostgreSQL: the
    records' writer lock, or an EXCLUSIVE lock on the checkpoints table, which lets only reads by)."""
    if url is None:
        code = (f"import sqlite3, time; c = sqlite3.connect({str(path)!r}, isolation_level=None, timeout=30);"
                f" c.execute('BEGIN EXCLUSIVE'); time.sleep({seconds}); c.execute('ROLLBACK')")
    else:
        lock = ("SELECT pg_advisory_xact_lock(1229541714, hashtext(current_schema()))" if path.name == "app.sqlite3"
                else "LOCK TABLE checkpoints IN EXCLUSIVE MODE")
        code = (f"import psycopg, time; c = psycopg.connect({url!r}); c.execute({lock!r});"
                f" time.sleep({seconds}); c.rollback()")
    return subprocess.Popen([sys.executable, "-c", code])


class Reader:
    """The invariants' queries, on the SQLite files or the PostgreSQL database: rows as dicts."""

    def __init__(self, data_dir: Path, url: str | None):
        self.data_dir, self.url = data_dir, url

    def rows(self, store: str, sql: str) -> list[dict]:
        if self.url:
            import psycopg
            from psycopg.rows import dict_row

            with psycopg.connect(self.url, row_factory=dict_row) as conn:
                return conn.execute(sql).fetchall()
        conn = sqlite3.connect(self.data_dir / store)
        conn.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in conn.execute(sql)]
        finally:
            conn.close()


def lines_for(round_no: int) -> list[str]:
    """Each round appends a few new error lines (new and existing fingerprints) and a bad one."""
    out = []
    for j in range(3):
        out.append(json.dumps({"_time": f"2026-11-28T11:{round_no:02d}:{j:02d}Z", "service": f"svc-{(round_no + j) % 4}",
                               "level": "ERROR", "exception": "java.lang.NullPointerException",
                               "message": f"NullPointerException in step {j} [op {chr(97 + round_no % 5)}x]"}))
    out.append('{"_time": "2026-11-28T11:00:00Z", "message": "bad \\ud800 ' + str(round_no) + '"}')
    return out


def paused(data_dir: Path) -> list[dict]:
    """The paused incidents, read between rounds (no child runs then) through the CLI's entry point in
    this process: a lookup to choose the round's command, not a command under test."""
    result = cli_here(data_dir, "list", "--status", "awaiting_approval", "--json")
    return json.loads(result.stdout) if result.returncode == 0 else []


def test_kills_and_locks_leave_every_invariant_intact(data_dir, database_url, tmp_path):
    rng = random.Random(SEED)
    log = tmp_path / "chaos.jsonl"
    log.write_bytes((FIXTURES / "small.jsonl").read_bytes())
    assert run(data_dir, "ingest", str(log)).returncode == 0
    figures = {"rounds": 0, "kills": 0, "locks": 0, "commands": 0, "exit_codes": {}}
    good_lines = {line for line in log.read_text().splitlines() if line.strip()}
    bad_lines = 0
    # each round's commands are slower on PostgreSQL (a connection per process, the server's
    # fsync); fewer rounds keep the suite's time, with the same mix of kills and locks
    for round_no in range(ROUNDS if database_url is None else ROUNDS // 2):
        new = lines_for(round_no)
        with log.open("a") as f:
            f.write("\n".join(new) + "\n")
        good_lines |= set(new[:3])
        bad_lines += 1
        waiting = paused(data_dir)
        choice = rng.choice(["ingest", "poll", "approve", "reject", "edit", "fork", "replay"])
        args = ["ingest", str(log)] if choice != "poll" else ["poll", "--once"]
        if waiting and choice != "ingest":
            inc = rng.choice(waiting)["incident_id"]
            if choice == "approve":
                args = ["approve", inc, "--reviewer", "chaos", "--set", 'rca.root_cause="chaos edit"']
            elif choice == "reject":
                args = ["reject", inc, "--reviewer", "chaos", "--reason", "chaos"]
            elif choice == "edit":
                args = ["edit", inc, "--reviewer", "chaos", "--set", f'recommendation.action="act {round_no}"']
            else:
                rows = json.loads(cli_here(data_dir, "history", inc, "--json").stdout)  # a lookup too
                target = next((r for r in rows if r.get("writes_by") == ["rca"]), None)
                if target is not None:
                    args = [choice, inc, "--checkpoint", target["checkpoint_id"], "--reviewer", "chaos"]
                    if choice == "fork":
                        args += ["--set", f'rca.root_cause="fork {round_no}"']
        locker = None
        if rng.random() < 0.4:
            store = rng.choice(["app.sqlite3", "checkpoints.sqlite"])
            locker = hold_lock(data_dir / store, rng.uniform(0.5, 2.0), database_url)
            figures["locks"] += 1
        proc = start(data_dir, *args, source=f"file:{log}")  # `poll` reads the same file as `ingest`
        figures["commands"] += 1
        if rng.random() < 0.6:
            time.sleep(rng.uniform(0.3, 4.0))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                figures["kills"] += 1
        _, err = proc.communicate(timeout=240)
        assert "Traceback" not in err, err[-2000:]
        if args[0] == "edit" and proc.returncode == 0:
            figures["edits"] = figures.get("edits", 0) + 1
        figures["exit_codes"][str(proc.returncode)] = figures["exit_codes"].get(str(proc.returncode), 0) + 1
        if locker is not None:
            locker.wait(timeout=30)
        figures["rounds"] += 1

    # recovery: one more ingest continues every cut-off run; decisions' dead claims are taken over
    final = run(data_dir, "ingest", str(log), "--json")
    assert final.returncode == 0, final.stderr
    reader = Reader(data_dir, database_url)
    violations = invariants(reader, good_lines, bad_lines)
    figures["invariant violations"] = len(violations)
    warnings.warn(ChaosFigures(f"chaos: {json.dumps(figures, sort_keys=True)}"), stacklevel=1)
    assert violations == []
    edits = reader.rows("app.sqlite3", "SELECT 1 FROM audit WHERE action = 'edit'")
    assert len(edits) >= figures.get("edits", 0)  # an edit that reported success was audited


def invariants(reader: Reader, good_lines: set[str], bad_lines: int) -> list[str]:
    problems = []
    for store in ("app.sqlite3", "checkpoints.sqlite") if reader.url is None else ():  # SQLite's own check
        if reader.rows(store, "PRAGMA integrity_check")[0]["integrity_check"] != "ok":
            problems.append(f"{store}: integrity_check failed")
    records = "app.sqlite3"
    events = reader.rows(records, f"SELECT count(*) AS n, count(DISTINCT event_id) AS d FROM {STORED_IDS}")[0]
    if events["n"] != events["d"] or events["n"] != len(good_lines):
        problems.append(f"events: {events['n']} stored ({events['d']} distinct) for {len(good_lines)} good lines")
    letters = reader.rows(records, "SELECT count(*) AS n FROM dead_letters")[0]["n"]
    if letters != bad_lines:
        problems.append(f"dead letters: {letters} for {bad_lines} bad lines")
    for row in reader.rows(records, "SELECT incident_id, status, claim_owner FROM incidents"):
        if row["status"] == "analyzing":
            problems.append(f"{row['incident_id']} left analyzing")
    audit = reader.rows(records, "SELECT * FROM audit")
    # every person's change written to a checkpoint (edits, and approvals with --set) is audited,
    # including those whose process was killed between the two writes
    audited_changes = {json.loads(a["after"]).get("change_id") for a in audit}
    metadata = [r["metadata"] for r in reader.rows("checkpoints.sqlite", "SELECT metadata FROM checkpoints")]
    changes = {(m if isinstance(m, dict) else json.loads(m)).get("incidentiq_change") for m in metadata} - {None}
    problems += [f"change {c} written but not audited" for c in sorted(changes - audited_changes)]
    decided = {(a["incident_id"], json.loads(a["after"]).get("decision.interrupt_id")) for a in audit
               if a["action"] in ("approve", "reject")}
    approvals = [a for a in audit if a["action"] == "approve"]
    fixes = reader.rows(records, "SELECT incident_id, idempotency_key FROM fixes")
    if len({f["idempotency_key"] for f in fixes}) != len(fixes) or len(fixes) > len(approvals):
        problems.append(f"fixes: {len(fixes)} for {len(approvals)} approvals")
    for row in reader.rows(records, "SELECT incident_id, status FROM incidents WHERE status IN"
                                    " ('fix_proposed', 'approved', 'rejected')"):
        if not any(inc == row["incident_id"] for inc, _ in decided):
            problems.append(f"{row['incident_id']} is {row['status']} without an audited decision")
    return problems
