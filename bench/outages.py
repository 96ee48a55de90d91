"""Benchmark: the outage test bed (issue 35.6) and the incidents real logs open.

Prints, per scenario of `tests/data/outages/open` (and `--sealed`: `tests/data/outages/sealed`, when
it is there), the incidents each cause opened, whether an incident merged two causes, whether the
leader is the cause-side line, and the healthy controls' incidents, read in the file's order and
with the failing service's lines read last; then the incidents each Loghub system's raw 2k log opens
(`--loghub`, default ../shared/data/loghub-2k; BGL's goal: 15 or fewer, measured when a BGL folder is
there). The measure is pipeline/unattended/outage_bed.py, the same as `python -m pipeline outages`.

    .venv/bin/python bench/outages.py [--sealed] [--loghub DIR] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BED = ROOT / "tests" / "data" / "outages"
LOGHUB = Path(os.environ.get("INCIDENTIQ_LOGHUB_DIR", ROOT.parent / "shared" / "data" / "loghub-2k"))


def main(argv: Sequence[str] | None = None) -> int:
    from pipeline.unattended.outage_bed import measure, text

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sealed", action="store_true", help="also the sealed scenarios (tests/data/outages/sealed)")
    ap.add_argument("--loghub", type=Path, default=LOGHUB)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    folders = [BED / "open"] + ([BED / "sealed"] if args.sealed else [])
    summary = measure(folders, loghub=args.loghub if args.loghub.is_dir() else None)
    print(json.dumps(summary, indent=1) if args.json else text(summary))
    return 0 if summary["goals_met"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
