"""Benchmark: work that grows with input is linear (issue 39.2).

`ingest` of a file of 1, 2, 4 and 8 JSON lines, each an ERROR whose stack trace is about 250 KB of
distinct application frames (under the default 256 KiB line limit), all one incident: read, stored,
analysed to the approval gate with its fix proposal. Before the fix, the proposal's frame scan
compared each frame with every frame kept before it: 1, 2, 4, 8 traces took 21, 36, 106, 397 s.
The baseline is the run of 2 traces in the same sweep; goal: 8 traces in <= 4x its time.

    .venv/bin/python bench/size_sweep.py [--sizes 1,2,4,8] [--kb 250] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GOAL = 4.0


def trace_line(n: int, *, kb: int) -> str:
    """One JSON line: an NPE whose stack holds about `kb` KB of frames no other line names."""
    frames, size, i = [], 0, 0
    while size < kb * 1000:
        frame = f"\tat com.pos.checkout.Cart{n}x{i // 50}.step{i}(Cart{n}x{i // 50}.java:{i % 4000 + 1})"
        frames.append(frame)
        size += len(frame) + 1
        i += 1
    return json.dumps({"_time": f"2026-11-28T10:00:{n:02d}Z", "level": "ERROR", "service": "checkout-api",
                       "host": "pos-1", "exception": "java.lang.NullPointerException",
                       "message": "java.lang.NullPointerException: Cannot invoke \"Cart.total()\" because cart is null",
                       "stack": "\n".join(frames)})


def run(traces: int, *, kb: int, index: Path) -> float:
    """Seconds `ingest` takes for a file of `traces` such lines, on a fresh data dir (its
    knowledge index a copy of `index`, built once: not part of what is measured)."""
    from pipeline.composition import open_engine
    from pipeline.config import Settings
    from pipeline.unattended.file_ingest import ingest_path
    from pipeline.store import checkpoints

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(index, data / "knowledge-index")
        log = Path(tmp) / "traces.jsonl"
        log.write_text("".join(trace_line(n, kb=kb) + "\n" for n in range(traces)))
        os.environ["INCIDENTIQ_DATA_DIR"] = str(data)
        engine = open_engine(Settings.from_env())
        try:
            started = time.perf_counter()
            ingest_path(engine, log)
            return time.perf_counter() - started
        finally:
            engine.records.close()
            checkpoints.close_all()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1,2,4,8", help="numbers of traces, comma-separated (2 and 8 for the ratio)")
    ap.add_argument("--kb", type=int, default=250, help="size of each trace's line in KB")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("INCIDENTIQ_REPO_DIR", str(ROOT / "samples" / "pos-backend"))
    os.environ.setdefault("INCIDENTIQ_POLLER", "off")
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        from pipeline.knowledge.embeddings import HashedNgramEmbedder
        from pipeline.knowledge.index import KnowledgeBase

        index = Path(tmp) / "knowledge-index"
        KnowledgeBase(index_dir=index, embedder=HashedNgramEmbedder()).sync()
        seconds = {n: run(n, kb=args.kb, index=index) for n in sizes}
    ratio = seconds[8] / seconds[2] if 8 in seconds and 2 in seconds and seconds[2] else None
    if args.json:
        print(json.dumps({"kb": args.kb, "seconds": seconds, "ratio_8_to_2": ratio, "goal": GOAL}))
        return 0
    for n in sizes:
        print(f"{n} trace(s) of {args.kb} KB: {seconds[n]:.2f} s")
    if ratio is not None:
        print(f"8 / 2 traces: x{ratio:.2f} (goal <= {GOAL:g}x: {'met' if ratio <= GOAL else 'NOT met'})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
