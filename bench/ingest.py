"""Benchmark: ingest against Drain3's `TemplateMiner` alone and a read + split floor (issue 22 goal 1).

A corpus of real layouts is written once: each shared Loghub system's raw `X_2k.log` repeated
(each repetition's clock times shifted, so the repeats are later lines, not copies) to its share
of `--lines`, plus a JSONL file of events made from the systems' labelled lines (service =
component, level = the line's level or `error`, message = content). Then, in 3 interleaved
rounds, each stage runs in a fresh process over the same files:

- floor: read every line and split it on white space;
- drain3: Drain3's `TemplateMiner` (its default settings, no persistence) fed every line;
- masks / miner: the product's `mask()` and its `TemplateMiner.add` on every line (where the
  miner's time goes; the product stage runs them only on lines that open incidents);
- product: `ingest_file` on every file into a fresh data dir: the code path of
  `python -m pipeline ingest` and the poller (Tailer → the store's `store_batch`), without
  running the pipeline on the incidents it opens.

- windows (issue 22.2; not in the default stages): after ingesting every file as `product`
  does, `--windows` log windows (+-3 minutes around incident events spread over the store, the
  event's service and host, limit 60) served by `Records.log_window`, against a same-run
  baseline: main's log window before context blocks (a schema-9 store holding every event as a
  row, its whole JSON as body, read by that version's query and `model_validate_json`). A first
  pass warms the block cache; then 3 interleaved passes of each; CPU per window, best pass.

Prints, per stage, lines/s by CPU and by wall (min/median/max over the rounds), peak RSS, and
for the product the ratio to Drain3 (per round, same run), the data dir size against the log
size, and whether every line became an event or a dead letter. Goal: product ≥ 0.5× Drain3.

    .venv/bin/python bench/ingest.py [--lines 1000000] [--rounds 3] [--stages floor,drain3,product]
        [--profile product] [--json] [--windows 300]

`--stages windows --rounds 1` gives the window figure alone (its ingest is not timed).

`--profile STAGE` runs that stage once under cProfile and prints its top functions.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_DIR = Path(os.environ.get("INCIDENTIQ_LOGHUB_DIR", ROOT.parent / "shared" / "data" / "loghub-2k"))
STAGES = ("floor", "drain3", "masks", "miner", "product", "windows")
JSON_SHARE = 0.1
GOAL = 0.5
WINDOWS = 300  # --windows


def ingest_one(engine, path: Path):
    """The one place the bench names the product's ingest function (it may move packages)."""
    from pipeline.unattended.file_ingest import ingest_file

    return ingest_file(engine, path)


# -- the corpus ----------------------------------------------------------------------------------

_CLOCK = re.compile(r"(?<!\d)(\d{2}):(\d{2}):(\d{2})(?!\d)")
_COMPACT = re.compile(r"^(\d{6}) (\d{2})(\d{2})(\d{2}) ")  # HDFS: yymmdd HHMMSS


def _shift(line: str, seconds: int) -> str:
    """The line with its first clock time moved on by `seconds` (within the day)."""
    def moved(h: str, m: str, s: str) -> str:
        t = (int(h) * 3600 + int(m) * 60 + int(s) + seconds) % 86400
        return f"{t // 3600:02d}", f"{t // 60 % 60:02d}", f"{t % 60:02d}"

    match = _CLOCK.search(line)
    if match:
        h, m, s = moved(*match.groups())
        return f"{line[:match.start()]}{h}:{m}:{s}{line[match.end():]}"
    match = _COMPACT.match(line)
    if match:
        h, m, s = moved(*match.groups()[1:])
        return f"{match.group(1)} {h}{m}{s} {line[match.end():]}"
    return line


def write_corpus(loghub: Path, out: Path, lines: int) -> dict:
    """Write the corpus files under `out`; returns {"files": [...], "lines": n, "bytes": n}."""
    systems = sorted(p for p in loghub.iterdir() if p.is_dir() and list(p.glob("*.log")))
    if not systems:
        raise SystemExit(f"no Loghub system folders under {loghub}")
    json_lines = int(lines * JSON_SHARE)
    per_system = (lines - json_lines) // len(systems)
    files, total = [], 0
    for system in systems:
        raw = next(iter(sorted(system.glob("*.log")))).read_text(encoding="utf-8").splitlines()
        path = out / f"{system.name}.log"
        with open(path, "w", encoding="utf-8") as f:
            for i in range(per_system):
                k, j = divmod(i, len(raw))
                f.write((_shift(raw[j], 3 * 3600 * k) if k else raw[j]) + "\n")
        files.append(str(path))
        total += per_system
    rows = []
    for system in systems:
        with open(next(iter(sorted(system.glob("*_structured.csv")))), encoding="utf-8", newline="") as f:
            rows += [(system.name, r) for r in csv.DictReader(f)]
    path = out / "events.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i in range(json_lines):
            name, row = rows[i % len(rows)]
            level = (row.get("Level") or "error").strip() or "error"
            seconds = i  # one event a second, from a fixed start
            f.write(json.dumps({"_time": f"2026-11-{1 + seconds // 86400 % 28:02d}T{seconds // 3600 % 24:02d}:"
                                         f"{seconds // 60 % 60:02d}:{seconds % 60:02d}Z",
                                "service": row.get("Component") or name, "level": level,
                                "message": row["Content"]}) + "\n")
    files.append(str(path))
    total += json_lines
    return {"files": files, "lines": total, "bytes": sum(Path(p).stat().st_size for p in files)}


# -- the stages (each run in its own process) ----------------------------------------------------

def _lines(files: Sequence[str]):
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                yield line.rstrip("\n")


def stage_floor(files: Sequence[str], work: Path) -> dict:
    n = tokens = 0
    for line in _lines(files):
        tokens += len(line.split())
        n += 1
    return {"lines": n}


def stage_drain3(files: Sequence[str], work: Path) -> dict:
    from drain3 import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig

    miner = TemplateMiner(config=TemplateMinerConfig())
    n = 0
    for line in _lines(files):
        miner.add_log_message(line)
        n += 1
    return {"lines": n, "templates": len(miner.drain.clusters)}


def stage_masks(files: Sequence[str], work: Path) -> dict:
    from pipeline.incidents.fingerprints.masks import mask

    n = 0
    for line in _lines(files):
        mask(line)
        n += 1
    return {"lines": n}


def stage_miner(files: Sequence[str], work: Path) -> dict:
    from pipeline.incidents.fingerprints.miner import TemplateMiner

    miner = TemplateMiner(None)
    n = 0
    for line in _lines(files):
        miner.add(line)
        n += 1
    return {"lines": n, "templates": len(miner.templates())}


def stage_product(files: Sequence[str], work: Path) -> dict:
    from pipeline.config import Settings
    from pipeline.composition import open_engine

    data = work / "data"
    engine = open_engine(Settings.from_env(data_dir=data), sync_knowledge=False)
    events = rejected = new = 0
    for path in files:
        counts = ingest_one(engine, Path(path))
        events += counts.events
        rejected += counts.rejected
        new += len(counts.incidents_new) if isinstance(counts.incidents_new, (set, list)) else counts.incidents_new
    engine.records.close()  # as at the end of `ingest`: SQLite folds its write-ahead log into the file
    size = sum(p.stat().st_size for p in data.rglob("*") if p.is_file())
    return {"lines": events + rejected, "events": events, "rejected": rejected, "incidents": new,
            "data_bytes": size}


WINDOW_HALF_MINUTES = 3
WINDOW_LIMIT = 60
WINDOW_PASSES = 5


def _main_window(base, *, service: str, hosts: Sequence[str], start, end, limit: int) -> list:
    """Records.log_window as main had it before context blocks (940b79d^), over a schema-9 store."""
    from pipeline.clock import iso
    from pipeline.state import LogEvent
    from pipeline.store.sql import Params

    hosts = sorted(h for h in hosts if h)
    p = Params([iso(start), iso(end)])
    sql = f"SELECT event_id, time, body FROM events WHERE service = {p(service)} AND time BETWEEN $1 AND $2"
    if hosts:
        sql += (" UNION SELECT event_id, time, body FROM events"
                f" WHERE host IN ({p.each(hosts)}) AND time BETWEEN $1 AND $2")
    sql += f" ORDER BY time LIMIT {p(limit)}"
    return [LogEvent.model_validate_json(r["body"]) for r in base.query(sql, p)]


def stage_windows(files: Sequence[str], work: Path) -> dict:
    from datetime import timedelta

    from pipeline.clock import iso, parse_iso
    from pipeline.composition import open_engine
    from pipeline.config import Settings
    from pipeline.store.records import Records
    from pipeline.store.schema import MIGRATIONS

    engine = open_engine(Settings.from_env(data_dir=work / "data"), sync_knowledge=False)
    for path in files:
        ingest_one(engine, Path(path))
    records = engine.records
    events = records.all_events()
    base = Records(work / "main.sqlite3", migrations=MIGRATIONS[:9])  # main's layout: every event a row
    with base.transaction() as conn:
        conn.executemany("INSERT INTO events(event_id, incident_id, time, service, host, level, exception, message,"
                         " body, source, position, stored_at) VALUES ($1, NULL, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                         [(e.event_id, iso(e.time), e.service, e.host, e.level, e.exception, e.message,
                           e.model_dump_json(), e.source, e.position, "2026-01-01T00:00:00.000000+00:00") for e in events])
    rows = records.query("SELECT time, service, host FROM events WHERE incident_id IS NOT NULL ORDER BY time, event_id")
    step = max(1, len(rows) / WINDOWS)
    picked = [rows[int(i * step)] for i in range(min(WINDOWS, len(rows)))]
    half = timedelta(minutes=WINDOW_HALF_MINUTES)
    windows = [dict(service=r["service"], hosts=[r["host"]] if r["host"] else [],
                    start=parse_iso(r["time"]) - half, end=parse_iso(r["time"]) + half, limit=WINDOW_LIMIT)
               for r in picked]
    blocks = lambda w: records.log_window(**w)  # noqa: E731
    main = lambda w: _main_window(base, **w)  # noqa: E731

    def cpu(serve, these) -> float:
        t0 = time.process_time()
        for w in these:
            serve(w)
        return (time.process_time() - t0) / max(1, len(these))

    # the first pass: nothing decoded or built yet (main: its first reads of the file too)
    first = {"main": cpu(main, windows), "blocks": cpu(blocks, windows)}
    # main's SQL orders events of one time as it meets them, so the same events may come in
    # another order within a second (or, at the limit, others of the limit's second)
    got = [(blocks(w), main(w)) for w in windows]
    same = sum([e.event_id for e in a] == [e.event_id for e in b] for a, b in got)
    same_times = sum([iso(e.time) for e in a] == [iso(e.time) for e in b] for a, b in got)
    same_sets = sum({e.event_id for e in a} == {e.event_id for e in b} for a, b in got)
    returned = sum(len(a) for a, _ in got)
    passes: dict[str, list[float]] = {"blocks": [], "main": []}
    for _ in range(WINDOW_PASSES):  # the same windows again: what the caches hold is warm
        passes["blocks"].append(cpu(blocks, windows))
        passes["main"].append(cpu(main, windows))
    # windows not served before, each 20-60 s later than one that was: nearby incidents' windows
    shifted = {"blocks": 0.0, "main": 0.0}
    for k in range(1, WINDOW_PASSES + 1):
        later = [{**w, "start": w["start"] + timedelta(seconds=20 * k), "end": w["end"] + timedelta(seconds=20 * k)}
                 for w in windows]
        shifted["blocks"] += cpu(blocks, later) / WINDOW_PASSES
        shifted["main"] += cpu(main, later) / WINDOW_PASSES
    base.close()
    engine.records.close()
    return {"lines": len(events), "windows": len(windows), "same_as_main": same, "same_sets": same_sets,
            "same_times": same_times, "events_per_window": returned / max(1, len(windows)),
            "blocks_ms": [t * 1000 for t in passes["blocks"]], "main_ms": [t * 1000 for t in passes["main"]],
            "first_ms": {k: v * 1000 for k, v in first.items()}, "shifted_ms": {k: v * 1000 for k, v in shifted.items()}}

STAGE_FN = {"floor": stage_floor, "drain3": stage_drain3, "masks": stage_masks, "miner": stage_miner,
            "product": stage_product, "windows": stage_windows}


def run_stage_here(name: str, files: Sequence[str], work: Path, profile: bool = False) -> dict:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    if profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        out = prof.runcall(STAGE_FN[name], files, work)
        stats = pstats.Stats(prof, stream=sys.stderr)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(40)
    else:
        out = STAGE_FN[name](files, work)
    out["cpu"] = time.process_time() - cpu0
    out["wall"] = time.perf_counter() - wall0
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def run_stage(name: str, corpus: dict, scratch: Path, profile: bool = False) -> dict:
    with tempfile.TemporaryDirectory(dir=scratch) as work:
        cmd = [sys.executable, __file__, "--stage", name, "--work", work, "--windows", str(WINDOWS),
               "--files", *corpus["files"]]
        if profile:
            cmd.append("--profile-here")
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, check=True, text=True)
        return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the report ----------------------------------------------------------------------------------

def _mmm(values: Sequence[float]) -> tuple[float, float, float]:
    return min(values), statistics.median(values), max(values)


def report(corpus: dict, results: dict[str, list[dict]]) -> dict:
    n = corpus["lines"]
    out = {"lines": n, "log_bytes": corpus["bytes"], "stages": {}}
    for name, runs in results.items():
        if name == "windows":
            out["windows"] = _windows_row(runs)
            continue
        row = {"cpu_lines_s": _mmm([n / r["cpu"] for r in runs]),
               "wall_lines_s": _mmm([n / r["wall"] for r in runs]),
               "rss_mb": max(r["rss_mb"] for r in runs)}
        if name == "product":
            row["complete"] = all(r["lines"] == n for r in runs)
            row["events"], row["rejected"] = runs[-1]["events"], runs[-1]["rejected"]
            row["incidents"] = runs[-1]["incidents"]
            row["disk_ratio"] = runs[-1]["data_bytes"] / corpus["bytes"]
        if name != "drain3" and "drain3" in results:
            row["vs_drain3_cpu"] = _mmm([d["cpu"] / r["cpu"] for r, d in zip(runs, results["drain3"])])
            row["vs_drain3_wall"] = _mmm([d["wall"] / r["wall"] for r, d in zip(runs, results["drain3"])])
        out["stages"][name] = row
    if "product" in out["stages"] and "vs_drain3_cpu" in out["stages"]["product"]:
        p = out["stages"]["product"]
        out["goal_met"] = p["vs_drain3_cpu"][1] >= GOAL and p["vs_drain3_wall"][1] >= GOAL and p["complete"]
    return out


def _windows_row(runs: list[dict]) -> dict:
    last = runs[-1]
    row = {k: last[k] for k in ("windows", "same_as_main", "same_sets", "same_times", "events_per_window")}
    row["blocks_ms"], row["main_ms"] = min(last["blocks_ms"]), min(last["main_ms"])
    row["ratios"] = [min(r["blocks_ms"]) / min(r["main_ms"]) for r in runs]
    row["first"] = [(r["first_ms"]["blocks"], r["first_ms"]["main"]) for r in runs]
    row["shifted"] = [(r["shifted_ms"]["blocks"], r["shifted_ms"]["main"]) for r in runs]
    return row


def text(summary: dict) -> str:
    f3 = lambda t: "/".join(f"{v:,.0f}" for v in t)  # noqa: E731
    r3 = lambda t: "/".join(f"{v:.2f}" for v in t)  # noqa: E731
    lines = [f"{summary['lines']:,} lines, {summary['log_bytes'] / 1e6:.1f} MB of log; min/median/max over rounds"]
    if summary["stages"]:
        lines.append(f"{'stage':<9}{'CPU lines/s':>32}{'wall lines/s':>32}{'RSS MB':>8}{'x Drain3 CPU':>18}{'x Drain3 wall':>18}")
    for name, row in summary["stages"].items():
        lines.append(f"{name:<9}{f3(row['cpu_lines_s']):>32}{f3(row['wall_lines_s']):>32}{row['rss_mb']:>8.0f}"
                     f"{r3(row.get('vs_drain3_cpu', (1, 1, 1))):>18}{r3(row.get('vs_drain3_wall', (1, 1, 1))):>18}")
    p = summary["stages"].get("product")
    if p:
        lines.append(f"product: {p['events']:,} events + {p['rejected']:,} dead letters"
                     f" ({'every line' if p['complete'] else 'LINES MISSING'}), {p['incidents']:,} incidents;"
                     f" data dir {p['disk_ratio']:.2f}x the log")
    w = summary.get("windows")
    if w:
        pair = lambda t: ", ".join(f"{a:.3f}/{b:.3f} ms = {a / b:.2f}" for a, b in t)  # noqa: E731
        lines += [f"windows: {w['windows']} of +-{WINDOW_HALF_MINUTES} min (limit {WINDOW_LIMIT}), {w['events_per_window']:.1f}"
                  f" events each; as main's: same times in order {w['same_times']}, same events {w['same_sets']},"
                  f" same order {w['same_as_main']} (main orders a second's events as SQLite meets them)",
                  "  CPU per window, log_window / main's (schema-9 rows) = ratio, goal <= 1:",
                  f"  warm (the same windows again, best of {WINDOW_PASSES}): {w['blocks_ms']:.3f}/{w['main_ms']:.3f} ms,"
                  f" ratio per round {', '.join(f'{r:.2f}' for r in w['ratios'])}",
                  f"  first pass (nothing cached): {pair(w['first'])}",
                  f"  new windows (20-60 s after served ones, mean of {WINDOW_PASSES}): {pair(w['shifted'])}"]
    if "goal_met" in summary:
        lines.append(f"goal: product >= {GOAL}x Drain3 (median, CPU and wall): {'met' if summary['goal_met'] else 'NOT met'}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    global WINDOWS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--stages", default="floor,drain3,masks,miner,product")
    ap.add_argument("--loghub", type=Path, default=DEFAULT_DIR)
    ap.add_argument("--profile", choices=STAGES, help="run this stage once under cProfile instead")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--windows", type=int, default=WINDOWS, help="log windows the windows stage serves")
    ap.add_argument("--stage", choices=STAGES, help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--files", nargs="*", help=argparse.SUPPRESS)
    ap.add_argument("--profile-here", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    WINDOWS = args.windows
    if args.stage:  # a worker process
        print(json.dumps(run_stage_here(args.stage, args.files, args.work, profile=args.profile_here)))
        return 0
    stages = [s for s in args.stages.split(",") if s]
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        corpus = write_corpus(args.loghub, scratch, args.lines)
        if args.profile:
            run_stage(args.profile, corpus, scratch, profile=True)
            return 0
        results: dict[str, list[dict]] = {s: [] for s in stages}
        for _ in range(args.rounds):
            for s in stages:
                results[s].append(run_stage(s, corpus, scratch))
        summary = report(corpus, results)
    print(json.dumps(summary, indent=1) if args.json else text(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
