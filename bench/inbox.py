"""Benchmark: the inbox's reads at 10k, 100k and 1M incidents with real-size rows.

For each size, a fresh app.sqlite3 is seeded in one transaction (executemany; the counts' triggers
run per row as in production; PostgreSQL's rows by COPY, its counts taken once after them; the search indexes are built in bulk by migration 6 afterwards, as an
upgrade builds them) with incidents whose
summary is a real one (bench/fixtures/summary.json, from a demo run, stored as the store stores it) and one event each (unmerged
for one in fifty paused incidents, for the poller's query). Status mix: one in twenty awaiting, a
few moving, the rest decided. Then it times, median of --repeat runs, what one inbox
refresh reads for each view (one keyset page of 50 through ReviewService's store functions, its
rows' new / rare / frequent, plus building the table), the counts, the overdue count, one batch of each kind of the poller's due work
(pipeline/store/due.py; the poll reads the next only after working one) and, for reference, the
whole list in one query (Records.incidents_needing_work, the definition the batches are tested
against; nothing works through it since `ingest` reads the batches too); and,
as the floor in the same run, `SELECT rowid FROM floor WHERE k = $1 LIMIT 50` on an indexed table
of the same size. Prints each time, its ratio to the floor, the growth 100k -> 1M, and the query
plans at the largest size. Goals: every view <= 20 ms, counts <= 5 ms, poll <= 5 ms at 1M; growth
<= 1.5x.

    .venv/bin/python bench/inbox.py [--sizes 10000,100000,1000000] [--repeat 15]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401

from pipeline.clock import iso  # noqa: E402
from pipeline.state import CATEGORIES, CLOSED_STATUSES, SEVERITIES  # noqa: E402
from pipeline.incidents import recurrence  # noqa: E402
from pipeline.store import due, members, summaries  # noqa: E402
from pipeline.store.inbox import overdue_count, query_plans  # noqa: E402
from pipeline.store.records import Records  # noqa: E402
from pipeline.store.schema import MIGRATIONS  # noqa: E402
from pipeline.store.sql import placeholders  # noqa: E402
from pipeline.store.views import inbox_page, page_rows  # noqa: E402
from workbench.inbox_view import FILTERS, PAGE_SIZE, inbox_frame  # noqa: E402

# a store that has run for a while: most incidents decided, a backlog of one in twenty awaiting,
# and few moving (analyzing, in revision, failed are transient)
STATUS_MIX = ["awaiting_approval"] * 50 + ["in_revision", "failed", "analyzing"] + list(CLOSED_STATUSES) * 237
REAL = json.loads((ROOT / "bench" / "fixtures" / "summary.json").read_text())
SUMMARY = summaries.stored(REAL["summary"], postgres=False)  # as the store keeps it (compressed)
SERVICES = 400


def _name(k: int) -> str:
    out, k = "", k + 1
    while k:
        k, r = divmod(k - 1, 26)
        out = chr(97 + r) + out
    return out


# the schema before the search indexes of migration 6: the seed writes its rows there, and opening the
# store at the current schema builds the indexes in bulk, as an upgrade does (per-row triggers over
# 5.8 GB of rows took most of an hour); the triggers that keep them afterwards are production's
BEFORE_SEARCH = tuple(replace(m, optional=()) if m.optional else m for m in MIGRATIONS if m.version < 6)


def seed(records: Records, n: int) -> None:
    """n incidents and n events in one transaction, real-size summaries and titles (opened in
    order: search_rowid k + 1)."""
    start = datetime(2026, 11, 1, tzinfo=timezone.utc)
    now = records.clock.now()
    incidents, events = [], []
    for k in range(n):
        opened = iso(start + timedelta(seconds=k))
        status = STATUS_MIX[k % len(STATUS_MIX)]
        closed = opened if status in CLOSED_STATUSES else None
        incident_id = f"INC-20261101-{k:06x}"
        service = f"svc-{_name(k % SERVICES)}"
        incidents.append((incident_id, f"fp{k:x}", f"{REAL['title'][:90]} {_name(k)}", service, status,
                          SEVERITIES[k % 4], CATEGORIES[k % len(CATEGORIES)], (k % 100) / 100, 3, opened, opened,
                          opened, opened, closed, iso(now + timedelta(minutes=(k % 600) - 60)), SUMMARY, k + 1))
        # new evidence waits to be merged only into open incidents (one in fifty paused ones here)
        unmerged = status == "awaiting_approval" and k % 50 == 0
        events.append((f"ev-{k}", incident_id, opened, service, f"host-{k % 50}", "ERROR", "Failure",
                       "operation failed", "{}", "bench", str(k), int(not unmerged), opened))
    if records.postgres:
        _seed_postgres(records.path, incidents, events, n)
        return
    with records.transaction() as conn:
        conn.executemany(
            "INSERT INTO incidents(incident_id, fingerprint, title, service, status, severity, category, confidence,"
            " event_count, first_seen, last_seen, created_at, updated_at, closed_at, sla_deadline, summary,"
            f" search_rowid) VALUES ({placeholders(17)})", incidents)
        conn.executemany(
            "INSERT INTO events(event_id, incident_id, time, service, host, level, exception, message, body, source,"
            f" position, merged, stored_at) VALUES ({placeholders(13)})", events)
        conn.execute("CREATE TABLE floor (k INTEGER)")
        conn.executemany("INSERT INTO floor(k) VALUES ($1)", ((k % 1000,) for k in range(n)))
        conn.execute("CREATE INDEX floor_k ON floor(k)")


INCIDENT_COLUMNS = ("incident_id", "fingerprint", "title", "service", "status", "severity", "category", "confidence",
                    "event_count", "first_seen", "last_seen", "created_at", "updated_at", "closed_at", "sla_deadline",
                    "summary", "search_rowid")
EVENT_COLUMNS = ("event_id", "incident_id", "time", "service", "host", "level", "exception", "message", "body",
                 "source", "position", "merged", "stored_at")


def _seed_postgres(url: str, incidents: list, events: list, n: int) -> None:
    """seed's rows on PostgreSQL by COPY in one transaction, the indexes on incidents built after the
    rows and the count trigger off, the counts taken once after them (row by row, the trigger's
    update of one row per status and the trigram index took 40 s of 47 at 100k rows)."""
    import psycopg

    with psycopg.connect(url) as pg, pg.cursor() as cur:
        cur.execute("ALTER TABLE incidents DISABLE TRIGGER USER")
        cur.execute("SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()"
                    " AND tablename = 'incidents' AND indexname <> 'incidents_pkey'")
        indexes = cur.fetchall()
        for name, _ in indexes:
            cur.execute(f"DROP INDEX {name}")
        cur.execute("CREATE TABLE floor (k INTEGER)")
        for table, columns, rows in (("incidents", INCIDENT_COLUMNS, incidents), ("events", EVENT_COLUMNS, events),
                                     ("floor", ("k",), ((k % 1000,) for k in range(n)))):
            with cur.copy(f"COPY {table}({', '.join(columns)}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        for _, definition in indexes:
            cur.execute(definition)
        cur.execute("CREATE INDEX floor_k ON floor(k)")
        cur.execute("ALTER TABLE incidents ENABLE TRIGGER USER")
        cur.execute("DELETE FROM incident_counts")
        cur.execute("INSERT INTO incident_counts(status, n) SELECT status, count(*) FROM incidents GROUP BY status")


def median_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def measure(records: Records, repeat: int) -> tuple[dict[str, float], float, list]:
    now = records.clock.now()
    since = recurrence.window_start(now)

    def view(**kwargs):
        def read():
            rows = page_rows(inbox_page(records, limit=PAGE_SIZE, **kwargs))
            members.days_seen(records, [r["incident_id"] for r in rows], since=since)  # its rows' new / rare / frequent
            inbox_frame(rows, now)
        return read

    deep = None
    for _ in range(20):  # the cursor at page 21 of the awaiting view
        deep = inbox_page(records, statuses=FILTERS["awaiting"], after=deep, limit=PAGE_SIZE).next_cursor
    reads = {
        "awaiting, page 1": view(statuses=FILTERS["awaiting"]),
        "awaiting, page 21": view(statuses=FILTERS["awaiting"], after=deep),
        "failed, page 1": view(statuses=FILTERS["failed"]),
        "decided, page 1": view(statuses=FILTERS["decided"]),
        "all, page 1": view(),
        "by service, page 1": view(service="svc-abc"),
        "search 'svc-abc'": view(search="svc-abc"),
        "search 'deadlock'": view(search="deadlock"),
        "search 'vc-ab' (inside a word)": view(search="vc-ab"),
        "counts": records.status_counts,
        "overdue count": lambda: overdue_count(records, now),
        **{f"poll: a batch of {kind}": (lambda kind=kind: due.batch(records, kind, after=None))
           for kind in due.KINDS},
        "(every due incident, one query)": lambda: records.incidents_needing_work(merge_delay=0),
    }
    results = {name: median_ms(fn, repeat) for name, fn in reads.items()}
    floor = median_ms(lambda: records.query("SELECT rowid FROM floor WHERE k = $1 LIMIT 50", (7,)), repeat)
    plans = query_plans(records, lambda: [fn() for fn in reads.values()])
    return results, floor, plans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--plans", action="store_true", help="print the query plans at the largest size")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    table: dict[int, tuple[dict[str, float], float]] = {}
    plans = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            t = time.perf_counter()
            seeding = Records(Path(tmp) / "app.sqlite3", migrations=BEFORE_SEARCH)
            seed(seeding, n)
            seeding.close()
            records = Records(Path(tmp) / "app.sqlite3")  # migration 6: the search indexes, in bulk
            records.query("ANALYZE")
            size_mb = (Path(tmp) / "app.sqlite3").stat().st_size / 1e6
            print(f"seeded {n:,} incidents in {time.perf_counter() - t:.1f} s ({size_mb:,.0f} MB)", flush=True)
            results, floor, plans = measure(records, args.repeat)
            table[n] = (results, floor)
            records.close()
    names = list(table[sizes[0]][0])
    head = "".join(f"{n:>22,}" for n in sizes)
    print(f"\n{'read (ms, x floor)':<32}{head}" + ("   growth" if len(sizes) > 1 else ""))
    for name in [*names, "floor"]:
        cells = []
        for n in sizes:
            results, floor = table[n]
            ms = floor if name == "floor" else results[name]
            cells.append(f"{ms:10.2f} ms {ms / floor:7.1f}x")
        growth = ""
        if len(sizes) > 1:
            a = table[sizes[-2]][1] if name == "floor" else table[sizes[-2]][0][name]
            b = table[sizes[-1]][1] if name == "floor" else table[sizes[-1]][0][name]
            growth = f"   {b / a:5.2f}x"
        print(f"{name:<32}" + "".join(f"{c:>22}" for c in cells) + growth)
    if args.plans:
        for sql, plan in plans:
            print(f"plan: {plan}\n      for {sql[:140]}")


if __name__ == "__main__":
    main()
