"""The sealed splits are sealed: the fresh hold-out (`holdout2`, knowledge/eval/holdout-2026-12.jsonl)
and the outside test bed's sealed half (`outside-sealed`, knowledge/eval/outside-sealed-2026-12.jsonl).
Only `python -m pipeline eval --split <that split>` reads a sealed file, and an edited file is
refused, so its figures stay a measurement of an analyzer nobody tuned on it. The one test file
allowed to name the files and the unseal token is this one."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.errors import UsageError
from pipeline.evaluation import (EVAL_DIR, HOLDOUT_FILE_NAME, HOLDOUT_UNSEAL, OUTSIDE_SEALED_FILE_NAME, SEALED_SPLITS,
                                 load_cases)
from tests.support import ROOT

ALLOWED = {"pipeline/evaluation.py", "pipeline/cli/eval.py", "tests/test_holdout_seal.py"}
NAMES = ("holdout-2026-12", "outside-sealed-2026-12", "HOLDOUT_FILE_NAME", "HOLDOUT_UNSEAL", "HOLDOUT_SHA256",
         "OUTSIDE_SEALED_FILE_NAME", "OUTSIDE_SEALED_SHA256", "unseal=")
SEALED_FILES = {split: name for split, (name, _) in SEALED_SPLITS.items()}
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
    assert len(unsealing) == 2 and 'args.split in SEALED_SPLITS' in unsealing[1]


def test_the_committed_set_is_one_file_per_split_with_the_holdouts_sealed():
    assert sorted(p.name for p in EVAL_DIR.glob("*.jsonl")) == sorted(
        ["holdout-2026-11.jsonl", HOLDOUT_FILE_NAME, "outside-2026-12.jsonl", OUTSIDE_SEALED_FILE_NAME,
         "outside2-2026-12.jsonl", "outside3-2026-12.jsonl", "outside4-2026-12.jsonl",
         "outside4-held-2026-12.jsonl", "outside5-2026-12.jsonl", "outside5-held-2026-12.jsonl",
         "outside6-2026-12.jsonl", "outside6-held-2026-12.jsonl", "outside7-2026-12.jsonl",
         "outside8-2026-12.jsonl", "outside9-2026-12.jsonl", "outside10-2026-12.jsonl", "outside11-2026-12.jsonl", "outside12-2026-12.jsonl", "outside13-2026-12.jsonl", "tune.jsonl"])
    everything = load_cases(EVAL_DIR, split="all")
    assert {c.split for c in everything} == {"tune", "holdout", "outside", "outside2", "outside3", "outside4",
                                               "outside4-held", "outside5", "outside5-held", "outside6",
                                               "outside6-held", "outside7", "outside8", "outside9", "outside10", "outside11", "outside12", "outside13"}
    assert len(everything) == 61 + 62 + 60 + 74 + 43 + 35 + 17 + 33 + 17 + 45 + 37 + 44 + 48 + 48 + 48 + 66 + 73 + 45
    assert len({c.case_id for c in everything}) == len(everything)
    for split in SEALED_SPLITS:
        with pytest.raises(UsageError, match=f"sealed: only `python -m pipeline eval --split {split}` reads it"):
            load_cases(EVAL_DIR, split=split)
        with pytest.raises(UsageError, match="sealed"):
            load_cases(EVAL_DIR, split=split, unseal="let me look")


def test_the_outside_bed_records_its_sources_and_key_facts():
    """Every open case names where its strings come from (a repository file or a URL, with a licence)
    and its key facts are strings its events contain; so does the sealed half, read here only as
    bytes for the same check, never as cases."""
    rows = [json.loads(line) for name in ("outside-2026-12.jsonl", OUTSIDE_SEALED_FILE_NAME, "outside2-2026-12.jsonl",
                                                "outside4-2026-12.jsonl", "outside4-held-2026-12.jsonl",
                                                "outside5-2026-12.jsonl", "outside5-held-2026-12.jsonl",
                                                "outside6-2026-12.jsonl", "outside6-held-2026-12.jsonl", "outside7-2026-12.jsonl",
                                                "outside8-2026-12.jsonl", "outside9-2026-12.jsonl", "outside10-2026-12.jsonl", "outside11-2026-12.jsonl", "outside12-2026-12.jsonl")
            for line in (EVAL_DIR / name).read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 60
    for row in rows:
        assert row["source"] and all(("repo" in s and "path" in s or "url" in s) and s["licence"] for s in row["source"])
        text = " ".join(str(v) for event in row["events"] for v in event.values()).casefold()
        assert all(fact.casefold() in text for fact in row.get("facts") or ()), row["id"]
        assert row.get("healthy") is None or (row["healthy"] is True and row["expected"] == "unknown")


@pytest.fixture
def tampered(tmp_path) -> Path:
    """An eval dir whose sealed files are not the pinned ones (and not even JSON)."""
    d = tmp_path / "eval"
    d.mkdir()
    (d / "tune.jsonl").write_text(json.dumps(TUNE_CASE) + "\n")
    for name in SEALED_FILES.values():
        (d / name).write_text("this is not the hold-out\n")
    return d


def test_a_sealed_file_is_skipped_unread(tampered):
    # were it parsed, its garbage line would be refused as "not an eval case"
    assert [c.case_id for c in load_cases(tampered, split="all")] == ["t-1"]
    assert [c.case_id for c in load_cases(tampered)] == ["t-1"]


@pytest.mark.parametrize("split", sorted(SEALED_FILES))
def test_an_edited_holdout_is_refused_even_unsealed(tampered, split):
    with pytest.raises(UsageError, match=f"{SEALED_FILES[split]}: the sealed hold-out was changed"):
        load_cases(tampered, split=split, unseal=HOLDOUT_UNSEAL)


def test_unsealing_one_split_opens_only_its_own_file(tampered):
    (tampered / OUTSIDE_SEALED_FILE_NAME).unlink()  # the other one is garbage: read, it would be refused
    with pytest.raises(UsageError, match="no outside-sealed cases"):
        load_cases(tampered, split="outside-sealed", unseal=HOLDOUT_UNSEAL)


HOOK = r"""
import json, sys
names = json.loads(sys.argv[1])
opened = set()
sys.addaudithook(lambda event, args: event == "open" and opened.update(n for n in names if str(args[0]).endswith(n)))
from pipeline.cli import main
results = []
for argv in json.loads(sys.argv[2]):
    opened.clear()
    rc = main(argv)
    results.append({"argv": argv, "rc": rc, "opened": sorted(opened)})
print("RESULTS " + json.dumps(results))
"""


def test_no_command_but_eval_split_sealed_opens_a_sealed_file(tmp_path):
    """Every eval command runs in one real process with an audit hook on `open`; only the sanctioned
    one opens a sealed file, only its own, and it measures it (so the pinned sha256 is the committed file's)."""
    commands = [["eval", "--limit", "1"], ["eval", "--split", "all", "--limit", "1"],
                ["eval", "--split", "holdout", "--limit", "1"], ["eval", "--split", "outside", "--limit", "1"],
                ["list"], ["show", "INC-none"],
                ["eval", "--split", "holdout2", "--limit", "1", "--json"],
                ["eval", "--split", "outside-sealed", "--limit", "1", "--json"]]
    env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(tmp_path / "data")}
    names = sorted(SEALED_FILES.values())
    result = subprocess.run([sys.executable, "-c", HOOK, json.dumps(names), json.dumps(commands)], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stdout.splitlines() if line.startswith("RESULTS "))
    results = json.loads(line.removeprefix("RESULTS "))
    expected = [[SEALED_FILES[c[2]]] if c[:2] == ["eval", "--split"] and c[2] in SEALED_FILES else [] for c in commands]
    assert [r["opened"] for r in results] == expected
    assert [r["rc"] for r in results] == [0, 0, 0, 0, 0, 4, 0, 0]  # both measured: their sha256 are the pinned ones
