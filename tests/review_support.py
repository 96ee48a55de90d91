"""Helpers shared by the review tests: the CLI in this process, the CLI in a child process,
and small readers of the stores."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pipeline.cli import main
from pipeline.engine.graph import thread_config

ROOT = Path(__file__).resolve().parent.parent


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """Run `python -m pipeline ARGS` in this process: (exit code, stdout, stderr)."""
    capsys.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse refusing the arguments, as `python -m pipeline` would exit
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys, *args: str):
    code, out, err = cli(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def child_env(data_dir: Path) -> dict:
    return {**os.environ, "INCIDENTIQ_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}


def run_child(data_dir: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `python -m pipeline ARGS` in a new process on the data dir."""
    return subprocess.run([sys.executable, "-m", "pipeline", *map(str, args)], cwd=ROOT, env=child_env(data_dir),
                          capture_output=True, text=True, timeout=timeout)


def pending(engine, incident_id: str) -> str:
    """The interrupt id the incident waits on (from the record)."""
    row = engine.records.incident(incident_id)
    assert row["status"] == "awaiting_approval", row["status"]
    return row["pending_interrupt_id"]


def checkpoint_count(engine, incident_id: str) -> int:
    return len(list(engine.graph.get_state_history(thread_config(incident_id))))


def by_category(engine, category: str) -> str:
    return next(r["incident_id"] for r in engine.records.incidents() if r["category"] == category)
