"""Benchmark: wall time of the CLI commands that do not analyse (list, show, deadletters,
history), against `python -c pass` in the same run (the interpreter's own start).

Fills a temp data dir with the incidents of tests/fixtures/small.jsonl, then runs each command
--repeat times in a fresh process, interleaved with the baseline, and prints medians and the
ratio. Goal: list and show <= 0.5 s.

    .venv/bin/python bench/cli.py [--repeat 5]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wall(args: list[str], env: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {done.stderr[-500:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(Path(tmp) / "data"), "PYTHONPATH": str(ROOT)}
        subprocess.run([py, "-m", "pipeline", "ingest", str(ROOT / "tests" / "fixtures" / "small.jsonl")],
                       cwd=ROOT, env=env, check=True, capture_output=True)
        listed = json.loads(subprocess.run([py, "-m", "pipeline", "list", "--json"], cwd=ROOT, env=env,
                                           check=True, capture_output=True, text=True).stdout)
        incident = listed[0]["incident_id"]
        commands = {
            "python -c pass": [py, "-c", "pass"],
            "list": [py, "-m", "pipeline", "list"],
            "show INC": [py, "-m", "pipeline", "show", incident],
            "deadletters": [py, "-m", "pipeline", "deadletters"],
            "history INC": [py, "-m", "pipeline", "history", incident],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, command in commands.items():
                times[name].append(wall(command, env))
    base = statistics.median(times["python -c pass"])
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:<16} {med:6.2f} s  ({med / base:5.1f}x python -c pass)")


if __name__ == "__main__":
    main()
