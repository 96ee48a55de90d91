"""Benchmark: related incidents at scale (goal: <= 50 ms per call).

Seeds a records store with N decided incidents (default 1,000,000; rows written straight into the
incidents table in one transaction at the schema before search, as bench/inbox.py seeds, then the
store opened at the latest schema, which builds search and the deadline counts in bulk) over N/100
fingerprints, one of them shared by one incident in 200 (5,000 at 1M), and an evidence index (Chroma) of V
incident vectors (default 20,000; embedding and HNSW-building a million 1,024-dim vectors does not
fit this 2-core machine's time: the query is an HNSW search, whose cost grows with log V). Times,
in the same run: one page of the same fingerprint (10 rows, each with its decision) for the big
fingerprint and a small one, the nearest 5 by evidence, and, as the baseline, the same fingerprint
page read without its index (`NOT INDEXED`: the scan an index avoids). Prints the medians and
the ratio scan / indexed.

    .venv/bin/python bench/related.py [--incidents 1000000] [--vectors 20000]
"""
from __future__ import annotations

import argparse
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
from pipeline.config import Settings  # noqa: E402
from pipeline.knowledge.embeddings import HashedNgramEmbedder  # noqa: E402
from pipeline.review.related import RelatedIncidents  # noqa: E402
from pipeline.store import summaries  # noqa: E402
from pipeline.store.records import Records  # noqa: E402
from pipeline.store.schema import MIGRATIONS  # noqa: E402

# bench/inbox.py's way to a large store: rows written at the schema before search (its FTS part
# left out), then the store opened at the latest, whose migrations build the search tables and
# the deadline counts in bulk. Seeded at the latest schema, every row fired the search triggers
# (100,000 rows took 585 s; 1M did not fit the machine).
BEFORE_SEARCH = tuple(replace(m, optional=()) if m.optional else m for m in MIGRATIONS if m.version < 6)

BIG = "fp-big"
WORDS = ["HikariPool-1 connection is not available", "deadlock detected on transaction", "No space left on device",
         "connect ECONNREFUSED 10.0.0.12:5432", "status code 429 rate limited", "NoneType has no attribute quantity",
         "PKIX path building failed", "OutOfMemoryError Java heap space"]


def seed(records: Records, n: int) -> None:
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    blobs = [summaries.stored({"decision": {"action": a, "reviewer": "ann", "note": "noise" if a == "reject" else None,
                                            "decided_at": iso(start)},
                               "fix": {"hash": "ab" * 32, "target_file": "app/pool.yaml"} if a == "approve" else None},
                              postgres=False) for a in ("approve", "reject")]

    def rows():
        for k in range(n):
            t = iso(start + timedelta(seconds=k))
            fp = BIG if k % 200 == 0 else f"fp-{k % (n // 100 or 1)}"
            status, blob = ("fix_proposed", blobs[0]) if k % 3 else ("rejected", blobs[1])
            yield (f"INC-{k:08d}", fp, f"incident {k}", f"svc-{k % 50}", status, "medium", "db_pool_exhausted",
                   0.9, 3, t, t, t, t, t, t, blob, k + 1)

    with records.transaction() as conn:
        conn.executemany("INSERT INTO incidents(incident_id, fingerprint, title, service, status, severity, category,"
                         " confidence, event_count, first_seen, last_seen, created_at, updated_at, closed_at,"
                         " sla_deadline, summary, search_rowid)"
                         " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17)", rows())


def timed(fn, repeat: int = 30) -> float:
    fn()  # warm
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--incidents", type=int, default=1_000_000)
    parser.add_argument("--vectors", type=int, default=20_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        t = time.perf_counter()
        seeding = Records(data / "app.sqlite3", migrations=BEFORE_SEARCH)
        seed(seeding, args.incidents)
        seeding.close()
        records = Records(data / "app.sqlite3")  # the later migrations, in bulk
        records.query("ANALYZE")
        seed_s = time.perf_counter() - t
        settings = Settings.from_env(data_dir=data)
        rel = RelatedIncidents(records=records, settings=settings, embedder=HashedNgramEmbedder())
        t = time.perf_counter()
        # the evidence index: V incidents' texts (the seeded rows have no events; texts are made here)
        ids = [f"INC-{k:08d}" for k in range(min(args.vectors, args.incidents))]
        for s in range(0, len(ids), 1000):
            rel.index.add([(i, f"{WORDS[int(i[4:]) % len(WORDS)]} at host-{int(i[4:]) % 97} job {i}")
                           for i in ids[s:s + 1000]])
        index_s = time.perf_counter() - t
        query = WORDS[0] + " at host-3 job INC-x"
        newest = f"INC-{args.incidents - 1:08d}"
        big_page = timed(lambda: rel.related("INC-00000000", limit=10, nearest=0))
        small_page = timed(lambda: rel.related(newest, limit=10, nearest=0))
        next_page = rel.related("INC-00000000", limit=10, nearest=0)["same_fingerprint"]["next"]
        deep_page = timed(lambda: rel.related("INC-00000000", limit=10, before=next_page, nearest=0))
        nearest = timed(lambda: rel.index.nearest(query, k=5, exclude=""))
        scan = timed(lambda: records.query(
            "SELECT incident_id FROM incidents NOT INDEXED WHERE fingerprint = $1 AND incident_id <> $2"
            " ORDER BY created_at DESC, incident_id DESC LIMIT 11", (BIG, "INC-00000000")), repeat=5)
        indexed = timed(lambda: records.query(
            "SELECT incident_id FROM incidents WHERE fingerprint = $1 AND incident_id <> $2"
            " ORDER BY created_at DESC, incident_id DESC LIMIT 11", (BIG, "INC-00000000")))
        records.close()
    print(f"seeded {args.incidents:,} incidents in {seed_s:.1f} s; {len(ids):,} evidence vectors in {index_s:.1f} s")
    print(f"same fingerprint, page of 10 with decisions ({args.incidents // 200:,}-incident fingerprint): {big_page:.2f} ms")
    print(f"same fingerprint, its second page: {deep_page:.2f} ms; a 100-incident fingerprint: {small_page:.2f} ms")
    print(f"nearest 5 by evidence over {len(ids):,} vectors (Chroma HNSW): {nearest:.2f} ms")
    print(f"fingerprint read: indexed {indexed:.3f} ms vs scan {scan:.1f} ms (ratio scan/indexed {scan / indexed:.0f}x)")
    worst = max(big_page, deep_page, small_page) + nearest
    print(f"related incidents, both lists: {worst:.2f} ms (goal <= 50 ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
