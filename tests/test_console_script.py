"""The project installs (`pip install -e .`, as requirements-dev.txt does) with an `incidentiq`
command that is `python -m pipeline`: same commands, same output, same exit codes."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _incidentiq() -> Path:
    script = Path(sys.executable).parent / "incidentiq"
    if not script.exists():
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("CI: the incidentiq command is not installed beside python (requirements-dev.txt has -e .)")
        pytest.skip("the project is not installed in this venv (pip install -e .)")
    return script


def _run(command: list[str], tmp_path: Path, **env: str):
    return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "INCIDENTIQ_DATA_DIR": str(tmp_path / "data"), **env})


def test_incidentiq_is_python_m_pipeline_from_any_directory(tmp_path):
    script = _incidentiq()
    for args in (["settings", "--json"], ["list", "--json"]):
        installed = _run([str(script), *args], tmp_path)
        module = _run([sys.executable, "-m", "pipeline", *args], tmp_path)
        assert installed.returncode == module.returncode == 0, installed.stderr
        assert installed.stdout == module.stdout
    refused = _run([str(script), "list"], tmp_path, INCIDENTIQ_POLL_INTERVAL="inf")
    assert refused.returncode == 2 and refused.stderr.startswith("error: INCIDENTIQ_POLL_INTERVAL must be")
