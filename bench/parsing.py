"""Benchmark: how lines are read, measured on logs written by others (issues 21 and 34).

- The outside test bed (tests/data/outside, see its README.md; the measure is bench/outside.py):
  other projects' fixtures the team has not tuned on, per module the records whose time, level and
  message are what that project's own parser expects, with the team's ten Filebeat modules beside
  them as `seen`. `--sealed` measures the sealed hold-out instead and prints its totals only.
- Filebeat fixtures (tests/data/filebeat, from elastic/beats; see its NOTICE.md): per module, the
  lines whose time, level and message are what Filebeat's own pipeline expects. The baseline,
  measured in the same run, is the known-format list alone (layout learning off): the ratio says
  what learning each file's layout adds. Goal: >= 95% of the lines, over every module.
- Loghub systems (../shared/data/loghub-2k or $INCIDENTIQ_LOGHUB_DIR, ground truth in the
  structured CSVs): messages equal to Content (no header text left), events with header text
  left in their message, the service where the CSV has a Component, own line's time (goal >= 99%).

    .venv/bin/python bench/parsing.py [--fixtures DIR] [--loghub DIR] [--json]
    .venv/bin/python bench/parsing.py --sealed [--json]

The measure itself lives in pipeline/ingest/parsing_check.py, shared with `python -m pipeline parsing`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import outside  # noqa: E402
from pipeline.ingest import formats  # noqa: E402
from pipeline.ingest.parsing_check import fixtures_report, human, loghub_report  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixtures", type=Path, default=ROOT / "tests" / "data" / "filebeat")
    ap.add_argument("--loghub", type=Path,
                    default=Path(os.environ.get("INCIDENTIQ_LOGHUB_DIR", ROOT.parent / "shared" / "data" / "loghub-2k")))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--sealed", action="store_true", help="the outside bed's sealed hold-out, totals only")
    args = ap.parse_args(argv)
    if args.sealed:
        sealed = outside.report(sealed=True, token=outside.SEALED_UNSEAL)
        sealed.pop("modules")  # a run leaks no per-module hint of what the hold-out holds
        print(json.dumps(sealed, indent=2) if args.json else outside.human(sealed))
        return 0
    report: dict = {"outside": outside.report(), "fixtures": fixtures_report(args.fixtures)}
    saved = formats.FAST_PATH_SHARE
    formats.FAST_PATH_SHARE = -1.0  # the baseline: the known formats alone, nothing learnt
    try:
        baseline = fixtures_report(args.fixtures)
    finally:
        formats.FAST_PATH_SHARE = saved
    report["baseline"] = {"share": baseline["share"], "right": baseline["right"], "lines": baseline["lines"]}
    if args.loghub.is_dir():
        report["loghub"] = loghub_report(args.loghub)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(outside.human(report["outside"]))
        print(human(report))
        fx, base = report["fixtures"], report["baseline"]
        ratio = fx["share"] / base["share"] if base["share"] else float("inf")
        print(f"baseline (known formats only): {base['right']}/{base['lines']} ({base['share']:.1%}); "
              f"with learnt layouts x{ratio:.2f}; goal >= 95%: {'met' if fx['share'] >= 0.95 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
