"""Chaos on the surfaces added since the first chaos suite (issue 25.4): real `python -m pipeline`
processes SIGKILLed during prune, a schema migration, an outbox delivery and a backtest; a
PostgreSQL session killed (pg_terminate_backend from another connection) during ingest; a full
disk (a small tmpfs as the data dir) during ingest and during a decision. After each round the
invariants: nothing lost or doubled, no traceback, the store's integrity, the decision completed
or changed nothing. Prints, per scenario, the rounds, the kills that landed while the process ran
(`kills`), the rounds whose recovery ended clean (`survived`) and the violations (expect 0).

    .venv/bin/python bench/chaos.py [--rounds 8] [--only prune,migration,outbox,backtest,pg_session,disk_full]

tests/test_chaos_surfaces.py runs one round of each (the quick ones) in CI; the loop is here.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401

SMALL = ROOT / "tests" / "fixtures" / "small.jsonl"
PG_SERVER = os.environ.get("INCIDENTIQ_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


@dataclass
class Figures:
    scenario: str
    rounds: int = 0
    kills: int = 0
    survived: int = 0
    violations: list[str] = field(default_factory=list)
    skipped: str | None = None
    notes: dict = field(default_factory=dict)

    def line(self) -> str:
        if self.skipped:
            return f"{self.scenario}: skipped ({self.skipped})"
        extra = "".join(f", {k} {v}" for k, v in self.notes.items())
        return (f"{self.scenario}: rounds {self.rounds}, kills {self.kills}, survived {self.survived},"
                f" violations {len(self.violations)}{extra}")


# -- processes -----------------------------------------------------------------------------------

def env_for(data_dir: Path, **extra: str) -> dict:
    env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT),
           "INCIDENTIQ_REPO_DIR": str(ROOT / "samples" / "pos-backend"), "INCIDENTIQ_TWO_PERSON": "off"}
    env.pop("INCIDENTIQ_NOTIFY_URLS", None)
    env.update(extra)
    return env


def start(env: dict, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pipeline", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run(env: dict, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    proc = start(env, *args)
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def kill_after(proc: subprocess.Popen, delay: float) -> bool:
    """SIGKILL the process after `delay` s; True when it was still running (the kill landed)."""
    try:
        proc.wait(timeout=delay)
        return False
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        return True


def traceback_in(*texts: str) -> bool:
    return any("Traceback" in (t or "") for t in texts)


def integrity(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def rows(path: Path, sql: str) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def digest(path: Path, *tables: str) -> str:
    """A hash of whole tables, to tell 'unchanged' exactly."""
    h = hashlib.sha256()
    for table in tables:
        for row in rows(path, f"SELECT * FROM {table} ORDER BY 1"):
            h.update(repr(row).encode())
    return h.hexdigest()


# -- data dirs -----------------------------------------------------------------------------------

def paused_data_dir(where: Path, *, source: Path = SMALL) -> Path:
    """A data dir with the sample incidents paused at approval (built in this process)."""
    from pipeline.config import Settings
    from pipeline.composition import open_engine
    from pipeline.unattended.file_ingest import ingest_path
    from pipeline.store import checkpoints

    data_dir = where / "data"
    os.environ["INCIDENTIQ_TWO_PERSON"] = "off"
    engine = open_engine(Settings.from_env(data_dir=data_dir, repo_dir=ROOT / "samples" / "pos-backend", merge_delay=0.0))
    try:
        ingest_path(engine, source)
    finally:
        engine.records.close()
        checkpoints.close_all()
    return data_dir


def decide_all(data_dir: Path, *, notify: str | None = None) -> int:
    """Approve and reject the paused incidents alternately (in this process); how many decided."""
    from pipeline.config import Settings
    from pipeline.composition import open_engine
    from pipeline.review.service import ReviewService
    from pipeline.store import checkpoints

    saved = os.environ.get("INCIDENTIQ_NOTIFY_URLS")
    if notify:
        os.environ["INCIDENTIQ_NOTIFY_URLS"] = notify
    engine = open_engine(Settings.from_env(data_dir=data_dir, repo_dir=ROOT / "samples" / "pos-backend"),
                         sync_knowledge=False)
    try:
        service = ReviewService(engine)
        ids = [r["incident_id"] for r in engine.records.incidents(status="awaiting_approval")]
        for k, incident_id in enumerate(ids):
            if k % 2:
                service.reject(incident_id, reviewer="chaos", reason="chaos")
            else:
                service.approve(incident_id, reviewer="chaos")
        return len(ids)
    finally:
        engine.records.close()
        checkpoints.close_all()
        if notify:
            if saved is None:
                os.environ.pop("INCIDENTIQ_NOTIFY_URLS", None)
            else:
                os.environ["INCIDENTIQ_NOTIFY_URLS"] = saved


def log_lines(n: int, *, tag: str = "", width: int = 0) -> list[str]:
    """n error lines of a few fingerprints, each distinct (their ids are their positions)."""
    pad = "x" * width
    return [json.dumps({"_time": f"2026-11-28T12:{(k // 60) % 60:02d}:{k % 60:02d}Z", "service": f"svc-{k % 7}",
                        "level": "ERROR", "exception": "java.lang.IllegalStateException",
                        "message": f"IllegalStateException in step {k % 5} {tag} req {k} {pad}"}) for k in range(n)]


# -- scenarios -----------------------------------------------------------------------------------

def decided_copy(work: Path, paused: Path | None, name: str) -> Path:
    """A data dir whose sample incidents are all decided: a copy of `paused`, or built."""
    if paused is None:
        base = paused_data_dir(work / name)
    else:
        base = work / name / "data"
        shutil.copytree(paused, base)
    decide_all(base)
    return base


def prune_scenario(work: Path, rounds: int, rng: random.Random, *, paused: Path | None = None) -> Figures:
    """SIGKILL `prune --days 0` of decided incidents; then prune again: records, audit and fixes
    unchanged, both files intact, every incident shows and its history reads."""
    fig = Figures("prune")
    base = decided_copy(work, paused, "base")
    for r in range(rounds):
        data_dir = work / f"prune-{r}"
        shutil.copytree(base, data_dir)
        env = env_for(data_dir)
        before = digest(data_dir / "app.sqlite3", "audit", "fixes")
        statuses = dict(rows(data_dir / "app.sqlite3", "SELECT incident_id, status FROM incidents"))
        proc = start(env, "prune", "--days", "0")
        fig.kills += kill_after(proc, rng.uniform(0.3, 2.5))
        done = run(env, "prune", "--days", "0", "--json")
        problems = []
        if done.returncode != 0 or traceback_in(done.stderr):
            problems.append(f"prune after the kill: exit {done.returncode}: {done.stderr[-300:]}")
        for store in ("app.sqlite3", "checkpoints.sqlite"):
            if integrity(data_dir / store) != "ok":
                problems.append(f"{store}: integrity_check failed")
        if digest(data_dir / "app.sqlite3", "audit", "fixes") != before:
            problems.append("audit or fixes changed")
        if dict(rows(data_dir / "app.sqlite3", "SELECT incident_id, status FROM incidents")) != statuses:
            problems.append("statuses changed")
        for incident_id in list(statuses)[:1]:
            shown = run(env, "history", incident_id, "--json")
            if shown.returncode != 0 or not json.loads(shown.stdout):
                problems.append(f"{incident_id}: history after prune: {shown.stderr[-200:]}")
        fig.rounds += 1
        fig.survived += not problems
        fig.violations += problems
    return fig


def _old_store(path: Path, version: int, incidents: int) -> None:
    from pipeline.clock import ManualClock
    from pipeline.state import LogEvent
    from pipeline.incidents.batch import Incidents
    from pipeline.store.records import Records
    from pipeline.store.schema import MIGRATIONS

    from bench.old_stores import written_as_before_schema_11

    t0 = ManualClock().now() - timedelta(days=1)
    old = Records(path, clock=ManualClock(t0), migrations=MIGRATIONS[:version])
    try:
        # one service's errors 350 s apart, beyond the burst window (5 min): the outage rules join
        # one service's errors of one operation family within it, and these are meant as distinct
        events = [LogEvent(event_id=f"e{k}", time=t0 + timedelta(seconds=7 * k), level="ERROR", service=f"svc-{k % 50}",
                           exception=f"com.example.Failure{k}", message=f"operation {k} failed on shard {k}")
                  for k in range(incidents)]
        with written_as_before_schema_11(old):  # today's store_batch, writing what that schema held
            for start_at in range(0, incidents, 2000):
                Incidents(old).store_batch(events[start_at:start_at + 2000], cursor=None)
    finally:
        old.close()


def migration_scenario(work: Path, rounds: int, rng: random.Random, *, incidents: int = 20_000) -> Figures:
    """SIGKILL a command opening a records store of schema 4 (it migrates to the latest in one
    transaction); then open it again: at the latest version, every incident there, counts right."""
    from pipeline.store.schema import latest

    fig = Figures("migration")
    base = work / "v4.sqlite3"
    _old_store(base, 4, incidents)
    fig.notes["incidents"] = incidents
    for r in range(rounds):
        data_dir = work / f"migration-{r}"
        data_dir.mkdir()
        shutil.copy(base, data_dir / "app.sqlite3")
        env = env_for(data_dir)
        proc = start(env, "list", "--status", "awaiting_approval", "--json")
        fig.kills += kill_after(proc, rng.uniform(0.4, 3.0))
        done = run(env, "list", "--json")
        problems = []
        if done.returncode != 0 or traceback_in(done.stderr):
            problems.append(f"list after the kill: exit {done.returncode}: {done.stderr[-300:]}")
        path = data_dir / "app.sqlite3"
        if integrity(path) != "ok":
            problems.append("app.sqlite3: integrity_check failed")
        version = rows(path, "PRAGMA user_version")[0][0]
        if version != latest():
            problems.append(f"schema {version}, not {latest()}")
        n = rows(path, "SELECT count(*) FROM incidents")[0][0]
        if n != incidents:
            problems.append(f"{n} incidents of {incidents}")
        counted = dict(rows(path, "SELECT status, n FROM incident_counts WHERE n > 0"))
        actual = dict(rows(path, "SELECT status, count(*) FROM incidents GROUP BY status"))
        if counted != actual:
            problems.append(f"counts {counted} != {actual}")
        fig.rounds += 1
        fig.survived += not problems
        fig.violations += problems
    return fig


class Webhook:
    """A loopback webhook that answers each POST after `delay` s and counts what it was sent."""

    def __init__(self, delay: float):
        self.delay, self.bodies, self.lock = delay, [], threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                time.sleep(outer.delay)
                with outer.lock:
                    outer.bodies.append(body)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def outbox_scenario(work: Path, rounds: int, rng: random.Random, *, paused: Path | None = None) -> Figures:
    """SIGKILL `poll --once` while it delivers the decisions' notifications to a slow loopback
    webhook; then poll again: every row sent (at least once), none left sending or failed."""
    fig = Figures("outbox")
    hook = Webhook(delay=0.4)
    try:
        for r in range(rounds):
            if paused is None:
                data_dir = paused_data_dir(work / f"outbox-{r}")
            else:
                data_dir = work / f"outbox-{r}" / "data"
                shutil.copytree(paused, data_dir)
            decide_all(data_dir, notify=hook.url)
            path = data_dir / "app.sqlite3"
            total = rows(path, "SELECT count(*) FROM outbox")[0][0]
            empty = work / f"outbox-{r}" / "empty.log"
            empty.write_text("")
            env = env_for(data_dir, INCIDENTIQ_NOTIFY_URLS=hook.url, INCIDENTIQ_SOURCE=f"file:{empty}")
            sent_before = len(hook.bodies)
            proc = start(env, "poll", "--once")
            fig.kills += kill_after(proc, rng.uniform(1.5, 1.5 + 0.4 * total))
            problems = []
            for _ in range(3):  # each pass delivers for at most the sender's deadline
                done = run(env, "poll", "--once")
                if done.returncode != 0 or traceback_in(done.stderr):
                    problems.append(f"poll after the kill: exit {done.returncode}: {done.stderr[-300:]}")
                    break
                if not rows(path, "SELECT count(*) FROM outbox WHERE status != 'sent'")[0][0]:
                    break
            left = rows(path, "SELECT status, count(*) FROM outbox WHERE status != 'sent' GROUP BY status")
            if left:
                problems.append(f"outbox rows not sent: {left}")
            received = len(hook.bodies) - sent_before
            if received < total:
                problems.append(f"{received} deliveries for {total} rows")
            fig.notes["rows"] = fig.notes.get("rows", 0) + total
            fig.notes["resent"] = fig.notes.get("resent", 0) + max(0, received - total)
            fig.rounds += 1
            fig.survived += not problems
            fig.violations += problems
    finally:
        hook.close()
    return fig


LIVE_TABLES = ("incidents", "audit", "fixes", "outbox", "approvals")


def backtest_scenario(work: Path, rounds: int, rng: random.Random, *, paused: Path | None = None) -> Figures:
    """SIGKILL `backtest --status all`; run the same command again: it resumes, one result per
    incident, finished, and no live row (incidents, audit, fixes, outbox, approvals) changed."""
    fig = Figures("backtest")
    base = decided_copy(work, paused, "base-bt")
    for r in range(rounds):
        data_dir = work / f"backtest-{r}"
        shutil.copytree(base, data_dir)
        env = env_for(data_dir)
        path = data_dir / "app.sqlite3"
        live = digest(path, *LIVE_TABLES)
        proc = start(env, "backtest", "--status", "all", "--json")
        fig.kills += kill_after(proc, rng.uniform(0.8, 4.0))
        done = run(env, "backtest", "--status", "all", "--json")
        problems = []
        if done.returncode != 0 or traceback_in(done.stderr):
            problems.append(f"backtest after the kill: exit {done.returncode}: {done.stderr[-300:]}")
        else:
            report = json.loads(done.stdout)["backtest"]
            results = rows(path, "SELECT incident_id, count(*) FROM backtest_results WHERE backtest_id = "
                                 f"'{report['backtest_id']}' GROUP BY incident_id")
            if any(n != 1 for _, n in results) or len(results) != report["total"]:
                problems.append(f"results {results} for {report['total']} incidents")
            if report["status"] != "done":
                problems.append(f"backtest {report['status']}")
        if digest(path, *LIVE_TABLES) != live:
            problems.append("a live row changed")
        if integrity(path) != "ok":
            problems.append("app.sqlite3: integrity_check failed")
        fig.rounds += 1
        fig.survived += not problems
        fig.violations += problems
    return fig


def _terminate_sessions(proc: subprocess.Popen, delay: float) -> bool:
    """Once the process has sessions on the server, wait `delay` s and end them all from another
    connection; True when some were ended while it still ran."""
    import psycopg

    name = f"iiq:{proc.pid}:%"
    with psycopg.connect(PG_SERVER, autocommit=True) as admin:
        until = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < until and not admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE %s", (name,)).fetchone()[0]:
            time.sleep(0.05)
        time.sleep(delay)
        if proc.poll() is not None:
            return False
        return bool(admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                                  " WHERE application_name LIKE %s", (name,)).fetchone()[0])


def pg_session_scenario(work: Path, rounds: int, rng: random.Random, *, lines: int = 3000) -> Figures:
    """Kill the records' or the checkpoints' PostgreSQL session of a running `ingest` from another
    connection (pg_terminate_backend); ingest again: every line stored once, nothing analyzing."""
    import psycopg

    fig = Figures("pg_session")
    try:
        psycopg.connect(PG_SERVER, connect_timeout=3).close()
    except psycopg.OperationalError as exc:
        fig.skipped = f"no PostgreSQL at {PG_SERVER}: {str(exc).splitlines()[0]}"
        return fig
    for r in range(rounds):
        schema = f"chaos_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(PG_SERVER, autocommit=True) as admin:
            admin.execute(f"CREATE SCHEMA {schema}")
        url = f"{PG_SERVER}?options=-csearch_path%3D{schema}"
        try:
            data_dir = work / f"pg-{r}" / "data"
            data_dir.mkdir(parents=True)
            log = work / f"pg-{r}" / "big.jsonl"
            good = log_lines(lines, tag=f"r{r}")
            log.write_text("\n".join(good) + "\n")
            env = env_for(data_dir, INCIDENTIQ_DATABASE_URL=url)
            proc = start(env, "ingest", str(log), "--json")
            killed = _terminate_sessions(proc, rng.uniform(0.2, 3.0))
            out, err = proc.communicate(timeout=300)
            problems = []
            if traceback_in(err):
                problems.append(f"ingest whose session was killed: a traceback: {err[-300:]}")
            fig.kills += killed
            fig.notes.setdefault("first_error", err.strip()[:160]) if proc.returncode else None
            done = run(env, "ingest", str(log), "--json")
            if done.returncode != 0 or traceback_in(done.stderr):
                problems.append(f"ingest after the kill: exit {done.returncode}: {done.stderr[-300:]}")
            with psycopg.connect(url) as conn:
                n, distinct = conn.execute("SELECT count(*), count(DISTINCT event_id) FROM (SELECT event_id FROM events"
                                     " UNION ALL SELECT event_id FROM context_ids) AS stored").fetchone()
                moving = conn.execute("SELECT count(*) FROM incidents WHERE status = 'analyzing'").fetchone()[0]
            if n != distinct or n != len(good):
                problems.append(f"events: {n} stored ({distinct} distinct) for {len(good)} lines")
            if moving:
                problems.append(f"{moving} incidents left analyzing")
            fig.notes.setdefault("first_exit", []).append(proc.returncode)
            fig.rounds += 1
            fig.survived += not problems
            fig.violations += problems
        finally:
            from pipeline.store import checkpoints

            checkpoints.close_all()
            with psycopg.connect(PG_SERVER, autocommit=True) as admin:
                admin.execute(f"DROP SCHEMA {schema} CASCADE")
    return fig


def _mount(directory: Path, size: str) -> str | None:
    """Mount a tmpfs of `size` at directory; the reason when that is not permitted (None: mounted)."""
    directory.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(directory)],
                          capture_output=True, text=True)
    return None if done.returncode == 0 else (done.stderr.strip() or f"mount exit {done.returncode}")


def _umount(directory: Path) -> None:
    subprocess.run(["umount", "-l", str(directory)], capture_output=True)


def _fill(directory: Path) -> Path:
    """Take every free byte of the file system (a filler file written until ENOSPC)."""
    filler = directory / "filler"
    with filler.open("wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError:
            pass
        try:
            while True:
                f.write(b"\0" * 512)
                f.flush()
        except OSError:
            pass
    return filler


def disk_full_scenario(work: Path, rounds: int, rng: random.Random, *, lines: int = 6000, free_kb: int = 1536,
                       paused: Path | None = None) -> Figures:
    """A data dir on a small tmpfs: ingest fills it (a clear error, no traceback), space returns
    (remounted larger), ingest again stores every line once; a decision on a full disk either
    completes (audited) or changes nothing, and an ingest after space returns leaves no run moving."""
    fig = Figures("disk_full")
    for r in range(rounds):
        mnt = work / f"disk-{r}"
        why = _mount(mnt, "48m")
        if why:
            fig.skipped = f"cannot mount a tmpfs ({why})"
            return fig
        try:
            problems = []
            # ingest on a full disk
            if paused is None:
                seed = paused_data_dir(mnt / "seed")  # the knowledge index and a few incidents
            else:
                seed = mnt / "seed" / "data"
                shutil.copytree(paused, seed)
            used = shutil.disk_usage(mnt).used
            subprocess.run(["mount", "-o", f"remount,size={used // 1024 + free_kb}k", str(mnt)], check=True)
            log = work / f"disk-{r}.jsonl"
            good = log_lines(lines, tag=f"d{r}", width=rng.randrange(150, 400))
            log.write_text("\n".join(good) + "\n")
            env = env_for(seed)
            first = run(env, "ingest", str(log), "--json")
            full = first.returncode != 0
            fig.kills += full  # the disk-full "kill": the run ended on ENOSPC
            if traceback_in(first.stderr):
                problems.append(f"ingest on a full disk: a traceback: {first.stderr[-400:]}")
            if full and len(first.stderr.strip().splitlines()) != 1:
                problems.append(f"ingest on a full disk said more than one line: {first.stderr[-400:]}")
            fig.notes.setdefault("ingest_error", first.stderr.strip()[:160])
            subprocess.run(["mount", "-o", "remount,size=256m", str(mnt)], check=True)
            again = run(env, "ingest", str(log), "--json")
            if again.returncode != 0:
                problems.append(f"ingest after space returned: exit {again.returncode}: {again.stderr[-300:]}")
            path = seed / "app.sqlite3"
            n, distinct = rows(path, "SELECT count(*), count(DISTINCT event_id) FROM (SELECT event_id FROM events"
                                     " UNION ALL SELECT event_id FROM context_ids) AS stored")[0]
            expected = len(good) + len([x for x in SMALL.read_text().splitlines() if x.strip()])
            if n != distinct or n != expected:
                problems.append(f"events: {n} stored ({distinct} distinct) for {expected} lines")
            # a decision on a full disk
            waiting = [i for (i,) in rows(path, "SELECT incident_id FROM incidents WHERE status = 'awaiting_approval'")]
            if waiting:
                incident_id = rng.choice(waiting)
                audit_before = rows(path, f"SELECT count(*) FROM audit WHERE incident_id = '{incident_id}'")[0][0]
                fig.notes["free_before_fill"] = shutil.disk_usage(mnt).free
                filler = _fill(mnt)
                decided = run(env, "approve", incident_id, "--as", "chaos")
                if traceback_in(decided.stderr):
                    problems.append(f"approve on a full disk: a traceback: {decided.stderr[-400:]}")
                filler.unlink()
                status = rows(path, f"SELECT status FROM incidents WHERE incident_id = '{incident_id}'")[0][0]
                audited = rows(path, f"SELECT count(*) FROM audit WHERE incident_id = '{incident_id}'"
                                     " AND action = 'approve'")[0][0]
                fig.notes.setdefault("decision_exit", []).append(decided.returncode)
                fig.notes.setdefault("decision_error", decided.stderr.strip()[:160])
                if decided.returncode == 0 and (status not in ("fix_proposed", "approved") or not audited):
                    problems.append(f"approve said ok on a full disk but {incident_id} is {status}, audited {audited}")
                if decided.returncode != 0:
                    recovered = run(env, "ingest", str(log), "--json")  # the runner puts cut-off runs back in step
                    status = rows(path, f"SELECT status FROM incidents WHERE incident_id = '{incident_id}'")[0][0]
                    audit_after = rows(path, f"SELECT count(*) FROM audit WHERE incident_id = '{incident_id}'")[0][0]
                    if recovered.returncode != 0:
                        problems.append(f"ingest after the full-disk decision: {recovered.stderr[-300:]}")
                    if status == "awaiting_approval" and audit_after != audit_before:
                        problems.append("a refused decision left an audit row")
                    if status in ("fix_proposed", "approved") and not audited:
                        problems.append(f"{incident_id} decided without an audited decision")
                    if status == "analyzing":
                        problems.append(f"{incident_id} left analyzing")
                fig.notes.setdefault("decision_after", []).append(status)
            for store in ("app.sqlite3", "checkpoints.sqlite"):
                if integrity(seed / store) != "ok":
                    problems.append(f"{store}: integrity_check failed")
            fig.rounds += 1
            fig.survived += not problems
            fig.violations += problems
        finally:
            from pipeline.store import checkpoints

            checkpoints.close_all()
            _umount(mnt)
    return fig


SCENARIOS = {"prune": prune_scenario, "migration": migration_scenario, "outbox": outbox_scenario,
             "backtest": backtest_scenario, "pg_session": pg_session_scenario, "disk_full": disk_full_scenario}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--only", default=",".join(SCENARIOS))
    parser.add_argument("--seed", type=int, default=20261202)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    total = 0
    with tempfile.TemporaryDirectory(prefix="iiq-chaos-") as tmp:
        for name in args.only.split(","):
            started = time.monotonic()
            work = Path(tmp) / name
            work.mkdir()
            fig = SCENARIOS[name](work, args.rounds, rng)
            print(f"{fig.line()} ({time.monotonic() - started:.0f} s)", flush=True)
            for problem in fig.violations:
                print(f"  violation: {problem}", flush=True)
            total += len(fig.violations)
    print(f"violations in all: {total}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
