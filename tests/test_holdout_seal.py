"""The fresh hold-out (`holdout2`, knowledge/eval/holdout-2026-12.jsonl) is sealed: only
`python -m pipeline eval --split holdout2` reads it, and an edited file is refused, so its figures
stay a measurement of an analyzer nobody tuned on it. The one test file allowed to name the file
and the unseal token is this one."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.errors import UsageError
from pipeline.evaluation import EVAL_DIR, HOLDOUT_FILE_NAME, HOLDOUT_UNSEAL, load_cases
from tests.support import ROOT

ALLOWED = {"pipeline/evaluation.py", "pipeline/cli/eval.py", "tests/test_holdout_seal.py"}
NAMES = ("holdout-2026-12", "HOLDOUT_FILE_NAME", "HOLDOUT_UNSEAL", "HOLDOUT_SHA256", "unseal=")
TUNE_CASE = {"id": "t-1", "expected": "disk_full", "split": "tune",
             "events": [{"_time": "2026-11-28T10:00:00Z", "service": "pos", "level": "ERROR",
                         "message": "write /var/spool/x: no space left on device"}]}


def _sources() -> list[Path]:
    skip = {".git", ".venv", "node_modules", "__pycache__", "data"}
    return [p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts)]


def test_no_other_module_names_the_holdout_or_the_unseal():
    named = sorted(f"{p.relative_to(ROOT)}: {name}" for p in _sources() for name in NAMES
                   if str(p.relative_to(ROOT)) not in ALLOWED and name in p.read_text(encoding="utf-8"))
    assert named == []
    # and the command unseals it for --split holdout2 only, in one line
    unsealing = [line for line in (ROOT / "pipeline/cli/eval.py").read_text().splitlines() if "HOLDOUT_UNSEAL" in line]
    assert len(unsealing) == 2 and 'args.split == SEALED_SPLIT' in unsealing[1]


def test_the_committed_set_is_one_file_per_split_with_the_holdout_sealed():
    assert sorted(p.name for p in EVAL_DIR.glob("*.jsonl")) == ["holdout-2026-11.jsonl", HOLDOUT_FILE_NAME,
                                                                "tune.jsonl"]
    everything = load_cases(EVAL_DIR, split="all")
    assert {c.split for c in everything} == {"tune", "holdout"} and len(everything) == 61 + 62
    assert len({c.case_id for c in everything}) == len(everything)
    with pytest.raises(UsageError, match="sealed: only `python -m pipeline eval --split holdout2` reads it"):
        load_cases(EVAL_DIR, split="holdout2")
    with pytest.raises(UsageError, match="sealed"):
        load_cases(EVAL_DIR, split="holdout2", unseal="let me look")


@pytest.fixture
def tampered(tmp_path) -> Path:
    """An eval dir whose hold-out file is not the pinned one (and not even JSON)."""
    d = tmp_path / "eval"
    d.mkdir()
    (d / "tune.jsonl").write_text(json.dumps(TUNE_CASE) + "\n")
    (d / HOLDOUT_FILE_NAME).write_text("this is not the hold-out\n")
    return d


def test_a_sealed_file_is_skipped_unread(tampered):
    # were it parsed, its garbage line would be refused as "not an eval case"
    assert [c.case_id for c in load_cases(tampered, split="all")] == ["t-1"]
    assert [c.case_id for c in load_cases(tampered)] == ["t-1"]


def test_an_edited_holdout_is_refused_even_unsealed(tampered):
    with pytest.raises(UsageError, match="sealed hold-out was changed"):
        load_cases(tampered, split="holdout2", unseal=HOLDOUT_UNSEAL)


HOOK = r"""
import json, sys
opened = []
sys.addaudithook(lambda event, args: event == "open" and str(args[0]).endswith(sys.argv[1]) and opened.append(1))
from pipeline.cli import main
results = []
for argv in json.loads(sys.argv[2]):
    del opened[:]
    rc = main(argv)
    results.append({"argv": argv, "rc": rc, "opened": bool(opened)})
print("RESULTS " + json.dumps(results))
"""


def test_no_command_but_eval_split_holdout2_opens_the_holdout(tmp_path):
    """Every eval command runs in one real process with an audit hook on `open`; only the sanctioned
    one opens the file, and it measures it (so the pinned sha256 is the committed file's)."""
    commands = [["eval", "--limit", "1"], ["eval", "--split", "all", "--limit", "1"],
                ["eval", "--split", "holdout", "--limit", "1"], ["list"], ["show", "INC-none"],
                ["eval", "--split", "holdout2", "--limit", "1", "--json"]]
    env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(tmp_path / "data")}
    result = subprocess.run([sys.executable, "-c", HOOK, HOLDOUT_FILE_NAME, json.dumps(commands)], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("RESULTS "))
    results = json.loads(line.removeprefix("RESULTS "))
    assert [(r["argv"][:3], r["opened"]) for r in results] == [(c[:3], c[:3] == ["eval", "--split", "holdout2"])
                                                               for c in commands]
    assert [r["rc"] for r in results] == [0, 0, 0, 0, 4, 0]  # holdout2 measured: its sha256 is the pinned one
