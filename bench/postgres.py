"""Benchmark: the pipeline's rate on PostgreSQL against SQLite, measured in the same run.

Runs N incidents (default 200) to the approval pause through the real pipeline (offline analyzer)
on SQLite files and on a PostgreSQL database (a fresh schema, dropped after), in interleaved
rounds so both see the same machine load; and, in the same rounds, LangGraph's bare graph of the
same shape (bench/pipeline.py's) on its stock SqliteSaver and its stock PostgresSaver. Prints each
round, the medians, and both PostgreSQL/SQLite ratios: the pipeline's should be at or above the bare
graph's (what the savers alone allow).

    .venv/bin/python bench/postgres.py [--incidents 200] [--rounds 3] [--server postgresql://postgres@127.0.0.1:5432/test]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (strict msgpack before langgraph loads)
import psycopg  # noqa: E402

from bench.pipeline import bare_graph, write_events  # noqa: E402
from pipeline.config import Settings  # noqa: E402
from pipeline.composition import open_engine  # noqa: E402
from pipeline.unattended.file_ingest import ingest_path  # noqa: E402
from pipeline.store import checkpoint_format, checkpoints  # noqa: E402


def run(work: Path, n: int, url: str | None) -> tuple[float, int]:
    events = work / "events.jsonl"
    write_events(events, n)
    engine = open_engine(Settings.from_env(data_dir=work / "data", repo_dir=ROOT / "samples" / "pos-backend",
                                           database_url=url))
    start = time.perf_counter()
    ingest_path(engine, events)
    elapsed = time.perf_counter() - start
    paused = len(engine.records.incidents(status="awaiting_approval"))
    engine.records.close()
    checkpoints.close_all()
    return elapsed, paused


def run_bare(work: Path, n: int, url: str | None) -> float:
    """Seconds for n threads of the bare graph to the pause on LangGraph's stock saver: SqliteSaver
    on a file, or PostgresSaver on the database at `url`."""
    if url is None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        saver = SqliteSaver(checkpoints.connect(work / "bare.sqlite"), serde=checkpoint_format.serializer())
        conn = saver.conn
    else:
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row

        conn = psycopg.connect(url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        saver = PostgresSaver(conn, serde=checkpoint_format.serializer())  # type: ignore[arg-type]
        saver.setup()
    try:
        graph = bare_graph(saver)
        start = time.perf_counter()
        for k in range(n):
            graph.invoke({"incident_id": f"INC-{k}"}, {"configurable": {"thread_id": f"INC-{k}"}})
        return time.perf_counter() - start
    finally:
        conn.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--incidents", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--server", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    rates: dict[str, list[float]] = {"sqlite": [], "postgres": [], "bare sqlite": [], "bare postgres": []}
    for round_no in range(args.rounds):
        for backend in ("sqlite", "postgres"):
            schema = f"bench_{uuid.uuid4().hex[:12]}"
            url = None
            if backend == "postgres":
                with psycopg.connect(args.server, autocommit=True) as admin:
                    admin.execute(f"CREATE SCHEMA {schema}")
                url = f"{args.server}?options=-csearch_path%3D{schema}"
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    bare_s = run_bare(Path(tmp), args.incidents, url)
                with tempfile.TemporaryDirectory() as tmp:
                    elapsed, paused = run(Path(tmp), args.incidents, url)
            finally:
                if url:
                    with psycopg.connect(args.server, autocommit=True) as admin:
                        admin.execute(f"DROP SCHEMA {schema} CASCADE")
            if paused != args.incidents:
                print(f"error: {paused} of {args.incidents} incidents reached the pause on {backend}", file=sys.stderr)
                return 1
            rates[backend].append(args.incidents / elapsed)
            rates[f"bare {backend}"].append(args.incidents / bare_s)
            print(f"round {round_no + 1}: {backend:8} pipeline {elapsed:.2f} s = {rates[backend][-1]:.1f} incidents/s,"
                  f" bare graph {bare_s:.2f} s = {rates[f'bare {backend}'][-1]:.1f} incidents/s", flush=True)
    sqlite, postgres, bare_sqlite, bare_postgres = (
        statistics.median(rates[b]) for b in ("sqlite", "postgres", "bare sqlite", "bare postgres"))
    print(f"sqlite   : pipeline {sqlite:.1f} incidents/s, bare graph on SqliteSaver {bare_sqlite:.1f} (medians of {args.rounds})")
    print(f"postgres : pipeline {postgres:.1f} incidents/s, bare graph on PostgresSaver {bare_postgres:.1f}")
    ours, theirs = postgres / sqlite, bare_postgres / bare_sqlite
    print(f"ratio    : pipeline {ours:.2f} (postgres / sqlite); bare graph {theirs:.2f} (PostgresSaver / SqliteSaver):"
          f" {'met' if ours >= theirs else 'BELOW'} (goal: the pipeline's at or above the bare graph's)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
