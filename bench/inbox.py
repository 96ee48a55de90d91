"""Benchmark: the inbox page's data reads with 10,000 incidents in the records store.

Builds a temp app.sqlite3 with N incidents (default 10,000) through Records.store_batch and
update_incident (mixed statuses, severities and SLA deadlines, some overdue), then times what
the inbox fragment reads on every refresh: the per-status counts, the overdue count and one
page (50 rows + 1) of the awaiting filter through the review service's query, plus the table
built from it. The baseline, in the same run, is the same list unpaged (every awaiting incident
and its table), which is what a page without limit/offset would read. Prints the query plans
(the inbox query must use the incidents_inbox index) and medians in milliseconds.

    .venv/bin/python bench/inbox.py [--incidents 10000] [--repeat 30]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401

from pipeline.clock import iso  # noqa: E402
from pipeline.store.records import Records  # noqa: E402
from pipeline.state import CATEGORIES, SEVERITIES, LogEvent  # noqa: E402
from pipeline.store.inbox import overdue_count, query_plans  # noqa: E402
from workbench.inbox_view import FILTERS, PAGE_SIZE, inbox_frame  # noqa: E402

STATUS_MIX = ["awaiting_approval"] * 8 + ["in_revision", "failed", "analyzing"] + \
             ["fix_proposed", "rejected", "approved", "expired"] * 2


def _name(k: int) -> str:
    # letters, not digits: the fingerprint masks numbers, and every incident must be its own
    out = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        out = chr(97 + r) + out
    return out


def seed(records: Records, n: int) -> None:
    start = datetime(2026, 11, 28, tzinfo=timezone.utc)
    events = [LogEvent(event_id=f"bench-{k}", time=start + timedelta(seconds=k), level="ERROR",
                       service=f"svc-{_name(k % 400)}", exception=f"com.example.{_name(k).capitalize()}Failure",
                       message=f"operation {_name(k)} failed") for k in range(n)]
    for i in range(0, n, 1000):
        records.store_batch(events[i:i + 1000], cursor=None, reopen_minutes=30)
    now = datetime.now(timezone.utc)
    for k, row in enumerate(records.incidents()):
        records.update_incident(
            row["incident_id"], status=STATUS_MIX[k % len(STATUS_MIX)], severity=SEVERITIES[k % 4],
            category=CATEGORIES[k % len(CATEGORIES)], confidence=(k % 100) / 100,
            sla_deadline=iso(now + timedelta(minutes=(k % 600) - 60)))  # one in ten overdue


def median_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--incidents", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        records = Records(Path(tmp) / "app.sqlite3")
        t = time.perf_counter()
        seed(records, args.incidents)
        print(f"seeded {len(records.incidents())} incidents in {time.perf_counter() - t:.1f}s")
        # what ReviewService.inbox / .counts run (they are one call each on the records store)
        def inbox(**kwargs):
            return records.incidents(order="inbox", **kwargs)

        counts = records.status_counts
        now = datetime.now(timezone.utc)

        def refresh(statuses=FILTERS["awaiting"], search=None, offset=0):
            counts()
            overdue_count(records, now)
            rows = inbox(status=list(statuses) or None, search=search, limit=PAGE_SIZE + 1, offset=offset)
            inbox_frame(rows[:PAGE_SIZE], now)

        def unpaged():
            counts()
            overdue_count(records, now)
            inbox_frame(inbox(status=list(FILTERS["awaiting"]), limit=None), now)

        for sql, plan in query_plans(records, refresh) + query_plans(records, lambda: refresh(FILTERS["decided"]))[2:]:
            print(f"plan: {plan}\n      for {sql[:110]}")
        results = {
            "inbox refresh, awaiting, page 1": median_ms(refresh, args.repeat),
            "inbox refresh, awaiting, page 20": median_ms(lambda: refresh(offset=19 * PAGE_SIZE), args.repeat),
            "inbox refresh, decided, page 1": median_ms(lambda: refresh(FILTERS["decided"]), args.repeat),
            "inbox refresh, all, page 1": median_ms(lambda: refresh(()), args.repeat),
            "inbox refresh, search 'svc-abc'": median_ms(lambda: refresh((), search="svc-abc"), args.repeat),
        }
        baseline = median_ms(unpaged, max(5, args.repeat // 3))
        for name, ms in results.items():
            print(f"{name:<36} {ms:8.2f} ms")
        print(f"{'baseline: every awaiting row, unpaged':<36} {baseline:8.2f} ms")
        print(f"ratio baseline / paged page 1: {baseline / results['inbox refresh, awaiting, page 1']:.1f}x")


if __name__ == "__main__":
    main()
