"""Benchmark: a backtest over N decided incidents (default 1,000) on the offline analyzer, against
running those analyses fresh through bench/pipeline.py's path (ingest: records, log window,
Chroma retrieval, RCA, recommendation, proposal, checkpoints) in the same run.

The fresh run is timed on N incidents; they are then approved (untimed) and a backtest of the
live analyst over them is timed. Prints both rates, their ratio (goal: >= 0.8) and the backtest's
peak Python memory (tracemalloc, in a second backtest of the same incidents, untimed) for N and N/4:
bounded memory is a peak that does not grow with N.

    .venv/bin/python bench/backtest.py [--incidents 1000]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (strict msgpack before langgraph loads)
from bench.pipeline import write_events  # noqa: E402
from pipeline.backtest.candidate import candidate_for  # noqa: E402
from pipeline.backtest.run import run_backtest  # noqa: E402
from pipeline.config import Settings  # noqa: E402
from pipeline.composition import open_engine  # noqa: E402
from pipeline.gc_tuning import tune_garbage_collector  # noqa: E402
from pipeline.unattended.file_ingest import ingest_path  # noqa: E402
from pipeline.review.service import ReviewService  # noqa: E402


def peak_of(engine, candidate, limit: int) -> int:
    tracemalloc.start()
    run_backtest(engine, candidate, status="decided", limit=limit)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--incidents", type=int, default=1000)
    args = parser.parse_args()
    n = args.incidents
    tune_garbage_collector()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        events = work / "events.jsonl"
        write_events(events, n)
        engine = open_engine(Settings.from_env(data_dir=work / "data", repo_dir=ROOT / "samples" / "pos-backend",
                                               two_person=()))
        start = time.perf_counter()
        ingest_path(engine, events)
        fresh_s = time.perf_counter() - start
        paused = [r["incident_id"] for r in engine.records.incidents(status="awaiting_approval")]
        review = ReviewService(engine)
        start = time.perf_counter()
        for incident_id in paused:
            review.approve(incident_id, reviewer="bench")
        approve_s = time.perf_counter() - start
        candidate = candidate_for(engine)
        start = time.perf_counter()
        run = run_backtest(engine, candidate, status="decided")
        backtest_s = time.perf_counter() - start
        done = len(run.analysed)
        peak_all = peak_of(engine, candidate, n)
        peak_quarter = peak_of(engine, candidate, max(1, n // 4))
    fresh_rate, backtest_rate = len(paused) / fresh_s, done / backtest_s
    print(f"incidents: {n} ingested, {len(paused)} paused and approved ({approve_s:.1f} s, untimed)")
    print(f"fresh analyses (ingest to the gate): {fresh_s:.2f} s = {fresh_rate:.1f} incidents/s")
    print(f"backtest of the decided incidents:   {backtest_s:.2f} s = {backtest_rate:.1f} incidents/s"
          f" ({done} analysed, {len(run.skipped)} skipped)")
    print(f"ratio backtest/fresh: {backtest_rate / fresh_rate:.2f} (goal >= 0.8)")
    print(f"backtest peak Python memory: {peak_all / 2**20:.1f} MiB over {n} incidents,"
          f" {peak_quarter / 2**20:.1f} MiB over {max(1, n // 4)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
