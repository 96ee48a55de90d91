"""The outside test bed (tests/data/outside, bench/outside.py): what counts as a record read right,
where its data came from, and the sealed hold-out that only `bench/parsing.py --sealed` reads (an
edited sealed file is refused, not measured). The one test file allowed to name the unseal token."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from bench import outside
from bench.outside import BED, SEALED_DIR_NAME, SEALED_SHA256, SEALED_UNSEAL, SEEDED_PROJECTS, SealedBed
from tests.support import ROOT

ALLOWED = {"bench/outside.py", "bench/parsing.py", "tests/test_outside_bed.py"}
UTC = timezone.utc


def _modules(root: Path) -> list[str]:
    """The Filebeat modules of a part (other projects' material is all sealed, not by the seeded hash)."""
    return sorted(m.name for project in root.iterdir() if project.is_dir() and project.name in SEEDED_PROJECTS
                  for m in project.iterdir() if m.is_dir())


def _seen() -> set[str]:
    return {p.name.split("-", 1)[0] for p in outside.SEEN.iterdir() if p.is_dir()}


def test_the_sealed_modules_are_the_seeded_hash_of_their_names_about_a_third_of_the_unseen():
    open_modules, sealed = _modules(BED), _modules(BED / SEALED_DIR_NAME)
    unseen_open = [m for m in open_modules if m not in _seen()]
    assert all(not outside.sealed_by_seed(m) for m in unseen_open)
    assert sealed and all(outside.sealed_by_seed(m) and m not in _seen() for m in sealed)
    assert 0.2 <= len(sealed) / (len(sealed) + len(unseen_open)) <= 0.5


def test_the_sealed_part_is_pinned_so_a_change_to_it_is_caught():
    assert outside.seal_digest(BED / SEALED_DIR_NAME) == SEALED_SHA256


def test_no_other_module_names_the_unseal_token():
    skip = {".git", ".venv", "node_modules", "__pycache__", "data"}
    sources = [p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts)]
    named = sorted(str(p.relative_to(ROOT)) for p in sources if str(p.relative_to(ROOT)) not in ALLOWED
                   and ("SEALED_UNSEAL" in p.read_text(encoding="utf-8") or SEALED_UNSEAL in p.read_text(encoding="utf-8")))
    assert named == []


def test_the_sealed_part_is_refused_without_the_token_and_when_edited(tmp_path):
    with pytest.raises(SealedBed, match="read only by `bench/parsing.py --sealed`"):
        outside.report(sealed=True)
    with pytest.raises(SealedBed, match="read only by"):
        outside.report(sealed=True, token="let me look")
    copy = tmp_path / "bed"
    shutil.copytree(BED / SEALED_DIR_NAME, copy / SEALED_DIR_NAME)
    log = sorted((copy / SEALED_DIR_NAME).rglob("*.log"))[0]
    log.write_bytes(log.read_bytes().replace(b"1", b"2", 1))
    with pytest.raises(SealedBed, match="the sealed part was changed"):
        outside.report(sealed=True, token=SEALED_UNSEAL, root=copy)


HOOK = r"""
import sys
opened = []
sys.addaudithook(lambda event, args: event == "open" and "/outside/sealed/" in str(args[0]) and opened.append(args[0]))
sys.argv = ["bench/parsing.py"] + sys.argv[1:]
sys.path.insert(0, ".")
from bench import parsing
parsing.main(sys.argv[1:] + ["--json", "--loghub", "/nonexistent"])
print("OPENED", len(opened))
"""


def test_the_open_run_never_opens_a_sealed_file_and_the_sealed_run_prints_totals_only():
    run = subprocess.run([sys.executable, "-c", HOOK], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert run.stdout.rstrip().endswith("OPENED 0")
    report = json.loads(run.stdout.rsplit("OPENED", 1)[0])
    assert {m["part"] for m in report["outside"]["modules"]} == {"open", "seen"}
    sealed = subprocess.run([sys.executable, "bench/parsing.py", "--sealed", "--json"], cwd=ROOT,
                            capture_output=True, text=True, timeout=600)
    assert sealed.returncode == 0, sealed.stderr
    data = json.loads(sealed.stdout)
    assert data["part"] == "sealed" and "modules" not in data and data["total"]["records"] > 0


def test_every_bed_file_names_its_source_commit_and_is_listed_in_the_readme():
    readme = (BED / "README.md").read_text(encoding="utf-8")
    files = sorted(BED.rglob("*.expected.json"))
    assert len(files) >= 20
    for expected in files:
        data = json.loads(expected.read_text(encoding="utf-8"))
        log = expected.with_name(expected.name.removesuffix(".expected.json"))
        assert re.fullmatch(r"[0-9a-f]{40}", data["log"]["commit"]) and re.fullmatch(r"[0-9a-f]{40}", data["expected"]["commit"])
        project = expected.relative_to(BED).parts[expected.relative_to(BED).parts[0] == SEALED_DIR_NAME]
        if project in SEEDED_PROJECTS:
            assert data["log"]["path"].endswith("/test/" + log.name)
        else:  # another project's test data names its repository (sealed, or open: see the README)
            assert "/" in data["log"]["repo"] and data["log"]["path"] and data["expected"]["path"]
        assert f"| {expected.relative_to(BED).as_posix().removesuffix('.expected.json')} |" in readme
        starts = [0] + [i + 1 for i, b in enumerate(log.read_bytes()) if b == 10]
        # a file counts its lines from 0 (the earlier beds) or from 1 (session 47's), one way throughout
        # (a one-line log without a final newline has one start: a line counted from 1 is not looked up from 0)
        assert data["records"] and any(all(0 <= r["line"] - base < len(starts) and r["offset"] == starts[r["line"] - base]
                                           for r in data["records"]) for base in (0, 1))
    assert sum(p.stat().st_size for p in BED.rglob("*") if p.is_file()) < 5_000_000


def test_a_time_is_right_at_the_instant_to_the_millisecond_or_the_precision_written():
    at = datetime(2019, 5, 3, 9, 1, 9, 990000, tzinfo=UTC)
    assert outside.time_right(at, "2019-05-03T09:01:09.990Z")
    assert outside.time_right(at.astimezone(timezone(timedelta(hours=-2))), "2019-05-03T09:01:09.990Z")
    assert not outside.time_right(at + timedelta(hours=2), "2019-05-03T09:01:09.990Z")  # a zone read wrong
    assert not outside.time_right(at + timedelta(milliseconds=2), "2019-05-03T09:01:09.990Z")
    assert outside.time_right(at, "2019-05-03T09:01:09.000Z")  # the other parser dropped the fraction
    assert not outside.time_right(at, "2019-05-03T09:01:10.000Z")
    assert outside.time_right(at, "2019-05-03T09:01:09,990")  # zone-less: UTC, as Filebeat's tests run
    assert outside.time_right(at.replace(year=2026), "2019-05-03T09:01:09.990Z", year_written=False)
    assert not outside.time_right(at.replace(year=2026), "2019-05-03T09:01:09.990Z")
    assert not outside.time_right(None, "2019-05-03T09:01:09.990Z")


def test_a_message_is_right_when_the_expected_one_is_in_ours_or_ours_is_the_tail_of_a_raw_line():
    raw = "2019-05-03 09:01:09.99 Server      UTC adjustment: 0:00"
    assert outside.message_right("UTC adjustment: 0:00", raw, raw)  # the other parser kept the raw line
    assert outside.message_right(raw, raw, raw)
    assert not outside.message_right("0:00x", raw, raw)
    assert outside.message_right("Failed to start\n  at a.b(C.java:1)", "Failed  to start", "irrelevant")
    assert not outside.message_right("Failed", "Failed to start", "Failed to start")
    assert not outside.message_right("", "x", "x")
    # leading [tag] columns that one reader keeps in the message and the other takes as fields
    assert outside.message_right("/usr/sbin/mysqld starting", "[MY-010116] [Server] /usr/sbin/mysqld starting", "x")
    assert not outside.message_right("/usr/sbin/mysqld stopping", "[MY-010116] [Server] /usr/sbin/mysqld starting", "x")


def test_a_bed_is_measured_through_the_reader_record_by_record(tmp_path):
    module = tmp_path / "demo" / "app" / "log"
    module.mkdir(parents=True)
    lines = ["2021-04-19 01:58:20,588 ERROR [main] Store: disk full on /var",
             "2021-04-19 01:58:21,001 INFO  [main] Store: recovered"]
    log = module / "app.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    second = len(lines[0]) + 1
    records = [{"offset": 0, "line": 0, "time": "2021-04-19T01:58:20.588-02:00", "level": "ERROR",
                "message": "disk full on /var"},
               {"offset": second, "line": 1, "time": "2021-04-19T01:58:21.001-02:00", "level": "warning",
                "message": "recovered"},
               {"offset": 5, "line": 0, "time": "2021-04-19T01:58:20.588-02:00"}]  # no record starts there
    (module / "app.log.expected.json").write_text(json.dumps({"timezone": "-02:00", "records": records}))
    data = outside.report(root=tmp_path, seen=tmp_path / "none")
    [row] = data["modules"]
    assert row["module"] == "demo/app" and row["records"] == 3
    assert row["counted"] == {"time": 3, "level": 2, "message": 2}
    assert row["good"] == {"time": 2, "level": 1, "message": 2}  # INFO is not the expected WARN
    assert row["right"] == 1 and data["total"]["below"] == 1
    assert "demo/app" in outside.human(data) and "< 80%" in outside.human(data)


def test_severities_on_another_scale_are_not_counted_as_levels(tmp_path):
    # CEF writes a security event's severity 0-10 where a level would be; its `10` is not bunyan's
    # trace, so a bed that marks its `level_scale` counts time and message only
    module = tmp_path / "cef" / "app" / "log"
    module.mkdir(parents=True)
    line = "2021-04-19T01:58:20Z host CEF:0|security|threatmanager|1.0|100|worm stopped|10|src=10.0.0.1"
    (module / "app.log").write_text(line + "\n", encoding="utf-8")
    record = {"offset": 0, "line": 0, "time": "2021-04-19T01:58:20Z", "level": "10"}
    for scale, counted in ((None, 1), ("cef", 0)):
        expected = {"timezone": None, "records": [record]} | ({"level_scale": scale} if scale else {})
        (module / "app.log.expected.json").write_text(json.dumps(expected))
        [row] = outside.report(root=tmp_path, seen=tmp_path / "none")["modules"]
        assert row["counted"]["level"] == counted


def test_the_integrations_material_reads_no_worse_than_when_its_reader_fixes_landed():
    # session 43: 109 of its 128 records right (the tuned two thirds all, 78/78; the untouched third 31/50);
    # a change that loses records on layouts the reader was not written for shows here
    right = records = 0
    for module in sorted(p for p in (BED / "integrations").iterdir() if p.is_dir()):
        figures = outside.Figures(module=module.name, part="open")
        for log, expected in outside._fileset_logs(module):
            outside.measure_file(log, expected, figures)
        right, records = right + figures.right, records + figures.records
    assert records >= 128 and right >= 109
