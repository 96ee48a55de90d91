"""Progress bars for long commands on a terminal (`ingest`, the knowledge index build).

Shown on stderr only when stderr is a terminal and the command was not asked for `--json`:
piped, redirected or scripted runs print exactly what they did before. tqdm draws them (it
estimates the rate and the time left).
"""
from __future__ import annotations

import sys
from pathlib import Path

INDEX_BAR = "{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]"


def progress_shown(stream=None) -> bool:
    """Whether a bar belongs on `stream` (stderr): a terminal, not a pipe or a file."""
    stream = stream if stream is not None else sys.stderr
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def progress_bar(*, total: float, unit: str, desc: str, stream=None, **options):
    """A tqdm bar on `stream` (stderr) with the rate in `unit`/s and the time left."""
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, file=stream if stream is not None else sys.stderr,
                dynamic_ncols=True, leave=True, unit_scale=not unit == "", **options)


def count_lines(path: Path) -> int:
    """Lines in a file or in a folder's log files, counted fast (the bar's total)."""
    from pipeline.ingest.events import iter_paths

    total = 0
    for file in iter_paths(Path(path)):
        try:
            with open(file, "rb") as f:
                last = b"\n"
                while chunk := f.read(1 << 20):
                    total += chunk.count(b"\n")
                    last = chunk[-1:]
                total += last != b"\n"
        except OSError:
            continue
    return total
