"""The README documents every setting and every command, and starts with the two commands."""
from __future__ import annotations

import argparse

from pipeline.cli import build_parser
from pipeline.config import SETTINGS
from tests.support import ROOT

README = (ROOT / "README.md").read_text()


def _commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


def test_every_setting_is_documented():
    missing = [s.name for s in SETTINGS if f"`{s.name}`" not in README]
    assert missing == []


def test_every_command_is_documented():
    missing = [c for c in _commands() if f"| `{c}" not in README]
    assert missing == []


def test_readme_opens_with_the_run_and_test_commands():
    commands = [line.strip() for line in README.splitlines() if line.startswith("    ")][:2]
    assert commands[0].endswith("streamlit run app.py")
    assert commands[1].endswith("python -m pytest -q")


def test_ci_runs_exactly_the_readme_test_command():
    test_command = [line.strip() for line in README.splitlines() if line.startswith("    ")][1]
    assert test_command in (ROOT / ".ci" / "run").read_text()
