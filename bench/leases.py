"""Benchmark: several processes share ingest on PostgreSQL (issue 37.6): one poller process against
two, four busy file sources, the same lines, in interleaved rounds of the same run.

Each round starts the pollers (`python -m pipeline poll`, the four files as INCIDENTIQ_SOURCE) on a
fresh schema, waits until they hold the sources (two each when two run), then appends the same
lines to every file at once and times the ingest until every line is stored (events and dead
letters; the last record of each file waits the tail's settle time for continuation lines, so the
clock stops when all but those four are in). Prints each round, the two-to-one ratio of the ingest
rates (min / median / max), each process's CPU seconds over the ingest, and `uptime`'s load
before and after (the machine may be shared: read the ratio with it). `--hog` runs a busy loop on
one core meanwhile.

    .venv/bin/python bench/leases.py [--lines 4000] [--rounds 3] [--hog] [--server postgresql://postgres@127.0.0.1:5432/test]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psycopg  # noqa: E402

SOURCES = ("a", "b", "c", "d")
TICKS = os.sysconf("SC_CLK_TCK")
WARM = 60  # lines per file before the clock starts


def lines(source: str, count: int, start: int = 0) -> list[str]:
    """A busy service's log: mostly requests, an error every tenth line (four kinds: a few
    incidents), a malformed line (a NUL: a dead letter) every 500th."""
    kinds = (("Read timed out calling partner endpoint after 5000ms", "java.net.SocketTimeoutException"),
             ("No space left on device while writing /var/spool/x.pdf", "OSError"),
             ("HikariPool-1 - Connection is not available, request timed out after 30000ms.",
              "java.sql.SQLTransientConnectionException"),
             ("Deadlock found when trying to get lock; try restarting transaction", "DeadlockLoserDataAccessException"))
    out = []
    service = f"{source}-service"
    for i in range(start, start + count):
        stamp = f"2026-11-28T{9 + i // 3600 % 12:02d}:{i // 60 % 60:02d}:{i % 60:02d}Z"
        if i % 500 == 250:
            out.append("{broken json line \x00" + f"{source}{i}")
        elif i % 10 == 3:
            message, exc = kinds[(i // 10) % len(kinds)]
            out.append(json.dumps({"_time": stamp, "service": service, "host": f"{service}-{i % 3}",
                                   "level": "ERROR", "message": message, "exception": exc}))
        else:
            out.append(json.dumps({"_time": stamp, "service": service, "host": f"{service}-{i % 3}", "level": "INFO",
                                   "message": f"GET /orders/{i} 200 in {i % 37}ms user={i * 7919 % 10007}"}))
    return out


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


_watchers: dict[str, psycopg.Connection] = {}  # one connection per schema: a new one per look costs the server a fork


def scalar(url: str, sql: str) -> int:
    conn = _watchers.get(url)
    if conn is None:
        conn = _watchers[url] = psycopg.connect(url, autocommit=True)
    try:
        row = conn.execute(sql).fetchone()
    except psycopg.errors.UndefinedTable:
        return 0
    return row[0] if row else 0


def wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


def start_poller(work: Path, name: str, logs: list[Path], url: str, index: Path) -> subprocess.Popen:
    data = work / name
    shutil.copytree(index, data / "knowledge-index")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SPLUNK_", "INCIDENTIQ_"))}
    env.update(INCIDENTIQ_DATA_DIR=str(data), INCIDENTIQ_SOURCE=";".join(f"file:{log}" for log in logs),
               PYTHONPATH=str(ROOT), INCIDENTIQ_REPO_DIR=str(ROOT / "samples" / "pos-backend"),
               INCIDENTIQ_DATABASE_URL=url, INCIDENTIQ_SOURCE_LEASE_SECONDS="15")
    return subprocess.Popen([sys.executable, "-m", "pipeline", "poll", "--interval", "0.1"], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def one_round(server: str, processes: int, count: int, index: Path) -> dict:
    schema = f"leases_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    url = f"{server}?options=-csearch_path%3D{schema}"
    work = Path(tempfile.mkdtemp(prefix="leases-bench-"))
    logs = [work / f"{name}.jsonl" for name in SOURCES]
    for log in logs:
        log.touch()
    pollers = []
    try:
        for k in range(processes):
            pollers.append(start_poller(work, f"host-{k}", logs, url, index))
            # one at a time: the first holds all four, the next one's heartbeat has it give back its share
            share = len(SOURCES) // (k + 1)
            wait(lambda: scalar(url, "SELECT count(*) FROM source_leases WHERE holder IS NOT NULL GROUP BY holder"
                                " ORDER BY count(*) LIMIT 1") == share
                 and scalar(url, "SELECT count(DISTINCT holder) FROM source_leases") == k + 1, 120,
                 f"{k + 1} pollers to split the sources")
        # warm-up, untimed: each process's first runs open its checkpoint store (a one-time cost, its
        # setup lock taken by trying) and each source's four incidents; the timed lines join them
        stored = ("SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM context_ids)"
                  " + (SELECT count(*) FROM dead_letters)")
        for log in logs:
            log.write_text("\n".join(lines(log.stem, WARM)) + "\n")
        wait(lambda: scalar(url, stored) >= len(SOURCES) * (WARM - 1)
             and scalar(url, "SELECT count(*) FROM incidents WHERE status = 'awaiting_approval'") >= len(SOURCES) * 4,
             300, "the warm-up")
        time.sleep(2.5)  # the tail's settle time: the warm-up's last records are in
        before = scalar(url, stored)
        texts = {log: "\n".join(lines(log.stem, count, WARM)) + "\n" for log in logs}
        dead = sum(text.count("\x00") for text in texts.values())
        expected = len(SOURCES) * count - dead
        cpu = [cpu_seconds(p.pid) for p in pollers]
        start = time.perf_counter()
        for log, text in texts.items():
            with log.open("a") as f:
                f.write(text)
        wait(lambda: scalar(url, stored) - before >= (expected + dead) * 0.9, 600, "90% of the lines")
        ninety = time.perf_counter() - start
        wait(lambda: scalar(url, stored) - before >= expected + dead - len(SOURCES), 600, "the lines to be stored")
        elapsed = time.perf_counter() - start
        cpu = [cpu_seconds(p.pid) - c for p, c in zip(pollers, cpu)]
        wait(lambda: scalar(url, stored) - before == expected + dead, 60, "the last records")
        # every take raises a source's generation: 4 at the start, 2 more when the second splits them off;
        # more means a lease expired under a busy holder and its batch was refused
        takes = scalar(url, "SELECT sum(generation) FROM source_leases")
        return {"processes": processes, "lines": len(SOURCES) * count, "seconds": elapsed,
                "rate": (len(SOURCES) * count - len(SOURCES)) / elapsed, "ninety": ninety, "cpu": cpu, "takes": takes}
    finally:
        for p in pollers:
            p.terminate()
        for p in pollers:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)
        watcher = _watchers.pop(url, None)
        if watcher is not None:
            watcher.close()
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=4000, help="lines appended to each of the four files")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hog", action="store_true", help="keep one core busy meanwhile")
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    from pipeline.knowledge.embeddings import embedder_from_setting
    from pipeline.knowledge.index import KnowledgeBase

    kb = Path(tempfile.mkdtemp(prefix="leases-kb-")) / "knowledge-index"
    KnowledgeBase(index_dir=kb, embedder=embedder_from_setting("offline")).sync()
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if args.hog else None
    print(f"load before: {uptime()}" + ("; one core hogged" if hog else ""))
    ratios, rows = [], []
    try:
        for n in range(args.rounds):
            one = one_round(args.server, 1, args.lines, kb)
            two = one_round(args.server, 2, args.lines, kb)
            ratios.append(two["rate"] / one["rate"])
            for r in (one, two):
                rows.append(r)
                print(f"round {n + 1}: {r['processes']} process(es): {r['lines']} lines in {r['seconds']:.2f} s"
                      f" = {r['rate']:.0f} lines/s (90% in {r['ninety']:.2f} s); CPU s per process {[round(c, 2) for c in r['cpu']]}; lease takes {r['takes']}")
    finally:
        if hog:
            hog.kill()
        shutil.rmtree(kb.parent, ignore_errors=True)
    print(f"load after: {uptime()}")
    print(f"two processes / one, ingest rate: min {min(ratios):.2f}  median {statistics.median(ratios):.2f}"
          f"  max {max(ratios):.2f}  (goal >= 1.7)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
