"""Benchmark: what `mask()` costs per line, this tree's masks against a git revision's, in one run.

The 16,000 Loghub-2k lines of the shared systems (each CSV's `Content`, and the raw lines as a
source read as plain text would hand them over) go through `mask()` (its cache emptied first)
and through the uncached masking, for the masks.py of REV and of this tree, in alternating rounds;
the least CPU time of the rounds counts (other processes on the machine only add to it). Prints
microseconds per line, the ratio (goal: not above 1.00) and how many masked texts differ.

    .venv/bin/python bench/masks.py [--base REV] [--rounds N] [DIR]
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pipeline.incidents.fingerprints import masks as current  # noqa: E402
from pipeline.incidents.grouping import load, systems  # noqa: E402

DEFAULT_DIR = Path(os.environ.get("INCIDENTIQ_LOGHUB_DIR", ROOT.parent / "shared" / "data" / "loghub-2k"))
MASKS = "pipeline/incidents/fingerprints/masks.py"


def masks_at(rev: str) -> ModuleType:
    """masks.py as it was at `rev`, imported as a module of its own."""
    source = subprocess.run(["git", "show", f"{rev}:{MASKS}"], cwd=ROOT, check=True, capture_output=True).stdout
    with tempfile.NamedTemporaryFile("wb", suffix=".py", delete=False) as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("masks_base", f.name)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    os.unlink(f.name)
    return module


def cpu_per_line(module: ModuleType, lines: Sequence[str], *, cached: bool) -> float:
    fn: Callable[[str], str] = module.mask if cached else (
        lambda m: module._mask.__wrapped__(m[:module.TEMPLATE_CHARS]))
    module._mask.cache_clear()
    start = time.process_time()
    for line in lines:
        fn(line)
    return (time.process_time() - start) / len(lines) * 1e6


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", nargs="?", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--base", default="dfff20d", help="the git revision whose masks.py is the baseline (dfff20d: before issue 34.5)")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)

    base = masks_at(args.base)
    logs = [load(system) for system in systems([args.dir])]
    sets = {"contents": [m for log in logs for m in log.contents],
            "raw lines": [line for log in logs if log.raw_log
                          for line in log.raw_log.read_text(encoding="utf-8", errors="replace").splitlines()]}
    worst = 0.0
    for name, lines in sets.items():
        for cached in (True, False):
            before, after = [], []
            for _ in range(args.rounds):
                before.append(cpu_per_line(base, lines, cached=cached))
                after.append(cpu_per_line(current, lines, cached=cached))
            ratio = min(after) / min(before)
            worst = max(worst, ratio)
            print(f"{name:<10} {'mask()' if cached else 'uncached':<9} {len(lines):>6} lines: {args.base} "
                  f"{min(before):6.2f} us/line, this tree {min(after):6.2f} us/line, ratio {ratio:.2f}")
        changed = sum(base.mask(m) != current.mask(m) for m in lines)
        print(f"{name:<10} masked text differs on {changed} of {len(lines)}")
    print(f"worst ratio {worst:.2f} (goal: not above 1.00): {'met' if worst <= 1.0 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
