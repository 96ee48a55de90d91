"""Benchmark: what storing one error costs as the open incidents grow (issue 37: flat from 1k up).

Each size stores that many errors, each its own incident, in batches of 2,000 into a fresh records
store: one service's errors 350 s apart and one error every `--apart` seconds (7: about 43 incidents
active within a five-minute burst window, the old store `bench/chaos.py` builds for the migration
scenario). Prints, per size, the CPU seconds an error took, the incidents an error's window was
compared with and the times parsed in the outage rules (both per error), and each against the
smallest size, and the open incidents a batch read from the store (`loaded/batch`: rows of the joiner's
lookups by name). Goal: flat (<= 1.5x) from the smallest size up. Before the candidates were kept in
order of their last error's time, every error was compared with every open incident its batch read;
before the lookups were bounded by the batch's time (session 52), a batch read every open incident
holding a name its errors name, whatever its time.

    .venv/bin/python bench/joining.py [--sizes 300,3000,30000] [--apart 7]

Run it from another checkout's tree (`python OTHER/bench/joining.py`, the file copied there) for a
before/after in one session: it imports the `pipeline` beside it (comparisons print as n/a where the
joiner does not count them).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (strict msgpack before langgraph loads)

T0 = datetime(2026, 11, 28, 12, 0, tzinfo=timezone.utc)


def measure(n: int, apart: float) -> dict[str, float | None]:
    """Store n errors of n incidents; CPU s, window comparisons and times parsed, per error."""
    from pipeline.clock import parse_iso
    from pipeline.incidents import batch, joining, outage
    from pipeline.incidents.batch import Incidents
    from pipeline.state import LogEvent
    from pipeline.store import outage_rows
    from pipeline.store.records import Records

    joiners: list = []
    parsed = [0]
    loaded = [0]
    holding = outage_rows.open_incidents_holding

    def counted_holding(*args, **kwargs):
        found = holding(*args, **kwargs)
        loaded[0] += len(found)
        return found

    class Counted(joining.Joiner):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            joiners.append(self)

    def counted_parse(text):
        parsed[0] += 1
        return parse_iso(text)

    saved = batch.Joiner, joining.parse_iso, outage.parse_iso
    batch.Joiner, joining.parse_iso, outage.parse_iso = Counted, counted_parse, counted_parse
    outage_rows.open_incidents_holding = counted_holding
    events = [LogEvent(event_id=f"e{k}", time=T0 + timedelta(seconds=apart * k), level="ERROR", service=f"svc-{k % 50}",
                       exception=f"com.example.Failure{k}", message=f"operation {k} failed on shard {k}")
              for k in range(n)]
    try:
        with tempfile.TemporaryDirectory(prefix="joining-") as tmp:
            records = Records(Path(tmp) / "app.sqlite3")
            try:
                cpu = time.process_time()
                for start in range(0, n, 2000):
                    Incidents(records, burst_minutes=5.0).store_batch(events[start:start + 2000], cursor=None)
                cpu = time.process_time() - cpu
                incidents = records.query("SELECT count(*) AS n FROM incidents")[0]["n"]
            finally:
                records.close()
    finally:
        batch.Joiner, joining.parse_iso, outage.parse_iso = saved
        outage_rows.open_incidents_holding = holding
    counts = [getattr(getattr(j, "candidates", None), "compared", None) for j in joiners]
    compared = sum(counts) / n if counts and None not in counts else None
    return {"cpu_ms": 1000 * cpu / n, "compared": compared, "parsed": parsed[0] / n, "incidents": incidents,
            "loaded": loaded[0] / max(1, len(joiners))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="300,3000")
    ap.add_argument("--apart", type=float, default=7.0, help="seconds between two errors")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = {n: measure(n, args.apart) for n in sizes}
    base = rows[sizes[0]]

    def show(value: float | None, of: float | None) -> str:
        if value is None:
            return "n/a"
        return f"{value:.2f} ({value / of:.2f}x)" if of else f"{value:.2f}"

    print(f"{'incidents':>9}  {'CPU ms/error':>16}  {'compared/error':>16}  {'parsed/error':>16}"
          f"  {'loaded/batch':>18}")
    for n, row in rows.items():
        print(f"{n:>9}  {show(row['cpu_ms'], base['cpu_ms']):>16}  {show(row['compared'], base['compared']):>16}"
              f"  {show(row['parsed'], base['parsed']):>16}  {show(row['loaded'], base['loaded']):>18}")
    top = rows[sizes[-1]]
    flat = top["cpu_ms"] is not None and base["cpu_ms"] and top["cpu_ms"] / base["cpu_ms"] <= 1.5
    print(f"goal (CPU per error at {sizes[-1]} <= 1.5x at {sizes[0]}): {'met' if flat else 'not met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
