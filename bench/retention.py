"""Benchmark: bytes on disk per incident, paused, decided, and decided after `prune`.

Runs --incidents incidents (bench/pipeline.py's synthetic ones, 3 events each) to the approval
pause, measures both files (WAL folded in, after a VACUUM so free pages do not count), decides
them all (approve or reject, alternately), measures again, then compacts them with
retention.prune(days=0) and measures a third time. The baseline, in the same run, is the bare
LangGraph graph of bench/pipeline.py on the product's checkpoint store (and, for reference, on
LangGraph's stock SqliteSaver): bytes per thread paused at its interrupt. Goals: <= 30 KB per
paused incident, <= 20 KB per decided incident after pruning (records and checkpoints together).

    .venv/bin/python bench/retention.py [--incidents 300]
"""
from __future__ import annotations

import argparse
import importlib.util
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401

from pipeline.config import Settings  # noqa: E402
from pipeline.composition import open_engine  # noqa: E402
from pipeline.unattended.file_ingest import ingest_path  # noqa: E402
from pipeline.unattended.retention import prune  # noqa: E402
from pipeline.review.service import ReviewService  # noqa: E402
from pipeline.store import checkpoints, retention  # noqa: E402

def _bench_pipeline():
    # bench/pipeline.py by path (its name would shadow the package); registered so its TypedDict resolves
    spec = importlib.util.spec_from_file_location("bench_pipeline", ROOT / "bench" / "pipeline.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_pipeline"] = module
    spec.loader.exec_module(module)
    return vars(module)


SHAPE = _bench_pipeline()


def file_bytes(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


def sizes(engine) -> tuple[int, int]:
    checkpoints.shrink_file(engine.graph.checkpointer)
    retention.shrink_file(engine.records)
    return file_bytes(engine.records_path), file_bytes(engine.checkpoint_path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--incidents", type=int, default=300)
    args = parser.parse_args()
    n = args.incidents
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        SHAPE["run_bare"](work, n)
        SHAPE["run_bare"](work, n, stock=True)
        checkpoints.close_all()
        bare = file_bytes(work / "bare.sqlite") / n
        stock = file_bytes(work / "stock.sqlite") / n
        events = work / "events.jsonl"
        SHAPE["write_events"](events, n)
        engine = open_engine(Settings.from_env(data_dir=work / "data", repo_dir=ROOT / "samples" / "pos-backend"))
        ingest_path(engine, events)
        paused = sizes(engine)
        review = ReviewService(engine)
        for k, row in enumerate(engine.records.incidents(status="awaiting_approval")):
            if k % 2:
                review.reject(row["incident_id"], reviewer="bench", reason="noise")
            else:
                review.approve(row["incident_id"], reviewer="bench")
                if engine.records.incident(row["incident_id"])["status"] == "awaiting_approval":
                    review.approve(row["incident_id"], reviewer="bench-2")  # a two-person rule
        decided = sizes(engine)
        report = prune(engine, days=0)
        pruned = sizes(engine)
        print(f"{n} incidents; prune compacted {len(report.incidents)}, removed {report.checkpoints_removed} checkpoints")
        print(f"{'state':<26}{'records KB':>12}{'checkpoints KB':>16}{'total KB':>10}{'x bare':>8}")
        for name, (records_b, cp_b) in (("paused", paused), ("decided", decided), ("decided, after prune", pruned)):
            total = (records_b + cp_b) / n
            print(f"{name:<26}{records_b / n / 1024:12.1f}{cp_b / n / 1024:16.1f}{total / 1024:10.1f}{total / bare:8.1f}")
        print(f"{'bare graph, paused':<26}{'':>12}{bare / 1024:16.1f}{bare / 1024:10.1f}{1.0:8.1f}")
        print(f"{'  on stock SqliteSaver':<26}{'':>12}{stock / 1024:16.1f}{stock / 1024:10.1f}{stock / bare:8.1f}")


if __name__ == "__main__":
    main()
