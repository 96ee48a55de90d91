"""Measure: what the opening rule opens on real logs and on healthy controls (issue 35.3).

For each shared Loghub system (X/X_2k.log) and for the labelled set's healthy controls
(knowledge/eval/outside-*.jsonl cases marked `healthy`, the sealed split left out), the raw lines
are ingested into a fresh data dir (stored and correlated, no analysis run) and this prints, per
system: lines, the events that open incidents, how many of those carry an inferred level (the line
had none), and the incidents opened. A line with a written INFO level never opens one: the count
of opening events whose level was written INFO is printed too and must be 0.

    .venv/bin/python bench/opening.py [DIR] [--json]

DIR defaults to ../shared/data/loghub-2k beside the repo (or $INCIDENTIQ_LOGHUB_DIR).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.composition import open_engine  # noqa: E402
from pipeline.config import Settings  # noqa: E402
from pipeline.store import checkpoints  # noqa: E402
from pipeline.unattended.file_ingest import ingest_file  # noqa: E402

DEFAULT_DIR = Path(os.environ.get("INCIDENTIQ_LOGHUB_DIR", ROOT.parent / "shared" / "data" / "loghub-2k"))


def measure(log: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        engine = open_engine(Settings.from_env(data_dir=Path(tmp)), sync_knowledge=False)
        try:
            ingest_file(engine, log)
            rule = engine.incidents.opening
            events = engine.records.all_events()
            opening = [e for e in events if rule.opens(e)]
            return {"lines": len(log.read_bytes().splitlines()), "events": len(events), "opening": len(opening),
                    "inferred": sum(bool(e.fields.get("level_inferred")) for e in opening),
                    "written_info_opening": sum(e.level == "INFO" and not e.fields.get("level_inferred")
                                                for e in opening),
                    "incidents": len(engine.records.incidents())}
        finally:
            engine.records.close()
            checkpoints.close_all()


def healthy_controls(folder: Path) -> list[tuple[str, list[dict]]]:
    cases = []
    for path in sorted(folder.glob("outside-*.jsonl")):
        if "sealed" in path.name:
            continue  # the sealed hold-out is never read here
        for row in path.read_text().splitlines():
            case = json.loads(row)
            if case.get("healthy") is True and "sealed" not in str(case.get("split")):
                cases.append((case["id"], case["events"]))
    return cases


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows: dict[str, dict] = {}
    for system in sorted(p for p in args.dir.iterdir() if p.is_dir()):
        for log in sorted(system.glob("*_2k.log")):
            rows[system.name] = measure(log)
    with tempfile.TemporaryDirectory() as tmp:
        for case_id, events in healthy_controls(ROOT / "knowledge" / "eval"):
            log = Path(tmp) / f"{case_id}.jsonl"
            log.write_text("".join(json.dumps(e) + "\n" for e in events))
            rows[f"healthy:{case_id}"] = measure(log)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'system':<22}{'lines':>7}{'opening':>9}{'inferred':>10}{'INFO':>6}{'incidents':>11}")
    for name, r in rows.items():
        print(f"{name:<22}{r['lines']:>7}{r['opening']:>9}{r['inferred']:>10}{r['written_info_opening']:>6}"
              f"{r['incidents']:>11}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
