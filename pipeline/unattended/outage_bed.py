"""The outage test bed (issue 35.6): scenarios of one or more failures written as application logs,
each beside the causes it holds (tests/data/outages/README.md), read through the product's own
ingest into a fresh SQLite data dir, and scored:

- incidents per cause: how many incidents hold the cause's error lines (1 is right);
- purity: incidents holding lines of two causes (0 is right);
- leader: whether the incident holding most of a cause's lines (of a tie, the one holding the
  earliest of them) has the cause's leader line as its leader;
- healthy controls: incidents opened on a scenario without causes (0 is right).

Each scenario is read twice: in the file's order, and with each service's lines together, the
services in the reverse order of their first line (as when the callers' logs are read before the
failing service's), so that a leader cannot be right only by being read first. `--loghub DIR`
adds the incidents each Loghub system's raw log opens (BGL's goal: 15 or fewer).
"""
from __future__ import annotations

import json
import statistics
import tempfile
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from pipeline.errors import InvalidEvent, UsageError
from pipeline.store import outage_rows

GOALS = {"incidents_per_cause": 1.3, "merged": 0, "leader": 0.8, "healthy": 0, "bgl": 15}
ORDERS = ("file", "services reversed")


@dataclass(frozen=True)
class Scenario:
    name: str
    log: Path
    healthy: bool
    causes: list[dict[str, Any]]  # {"name", "lines": [1-based line numbers], "leader": line}


def scenarios(folder: Path) -> list[Scenario]:
    """The scenarios of a bed folder: each `<name>.json` beside the log it names."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UsageError(f"no such folder: {folder}")
    found = []
    for spec_path in sorted(folder.glob("*.json")):
        spec = json.loads(spec_path.read_text(encoding="utf-8"))
        log = folder / spec["log"]
        causes = spec.get("causes", [])
        if bool(spec.get("healthy")) == bool(causes):
            raise UsageError(f"{spec_path}: a scenario is healthy (no causes) or has causes, not both or neither")
        found.append(Scenario(spec_path.stem, log, bool(spec.get("healthy")), causes))
    if not found:
        raise UsageError(f"no scenarios (*.json) in {folder}")
    return found


def _reordered(lines: list[str]) -> list[int]:
    """Line indexes with each service's records together, services in reverse order of first line:
    the service of each record as the product reads it (a JSON field, a container prefix, a syslog
    tag...), a record's continuation lines kept with it."""
    from pipeline.config import Settings
    from pipeline.ingest import prefixed
    from pipeline.ingest.reading import Parsing, _starts_record, record_joiner

    parser = Parsing(timezone=Settings.from_env(database_url=None).source_tz).parser(lines[:400])
    if parser.prefixes is not None:  # containers' prefixed lines: each line's container (ingest/prefixed.py)
        by: dict[str, list[int]] = {}
        for index, text in enumerate(lines):
            parts = prefixed.split(text)
            by.setdefault(parts[1] if parts else "", []).append(index)
        return [i for service in reversed(list(by)) for i in by[service]]
    joiner = record_joiner(parser, _starts_record(parser))
    records = [r for i, text in enumerate(lines) for r in joiner.feed(i, text + "\n")] + joiner.flush()
    order: dict[str, list[int]] = {}
    for record in sorted(records, key=lambda r: r.position):
        try:
            service = parser.parse(record.text).service or ""
        except (ValueError, OverflowError, InvalidEvent):
            service = ""
        last = record.last_position if isinstance(record.last_position, int) else record.position
        order.setdefault(service, []).extend(range(record.position, last + 1))
    ordered = list(dict.fromkeys(i for service in reversed(list(order)) for i in order[service]))
    seen = set(ordered)
    return ordered + [i for i in range(len(lines)) if i not in seen]


@dataclass(frozen=True)
class Ingested:
    """A scenario read into a fresh data dir: its engine (open while the `ingested` block runs), the
    incident holding each of its 1-based lines, and each incident's leader (its line, the leader row)."""
    engine: Any
    incident_of: dict[int | None, str]
    leaders: dict[str, tuple[int | None, dict[str, Any] | None]]


@contextmanager
def ingested(scenario: Scenario, *, order: str = "file", analyst_for: Any = None,
             kb: Any = None, batch_lines: int | None = None) -> Iterator[Ingested]:
    """Ingest one scenario in `order` into a fresh data dir, as `ingest` reads a file (`batch_lines`: as
    the poller reads a live tail delivering that many lines at a time, live_read.py); the engine is
    closed when the block ends. `analyst_for` and `kb` are open_engine's (pipeline/composition.py)."""
    from pipeline.composition import open_engine
    from pipeline.config import Settings
    from pipeline.unattended.file_ingest import ingest_file

    raw = scenario.log.read_text(encoding="utf-8").splitlines()
    fed = list(range(len(raw))) if order == "file" else _reordered(raw)
    with tempfile.TemporaryDirectory(prefix="outages-") as tmp:
        # fed under a neutral name: a service the layout leaves unnamed is named by the file's name
        # (ingest/source_name.py), and a scenario's name says its cause
        (Path(tmp) / "logs").mkdir()
        path = Path(tmp) / "logs" / f"log{scenario.log.suffix}"
        offsets: dict[int, int] = {}  # byte offset in the fed file -> 1-based line of the scenario
        position = 0
        with open(path, "wb") as out:
            for index in fed:
                data = (raw[index] + "\n").encode("utf-8")
                offsets[position] = index + 1
                out.write(data)
                position += len(data)
        engine = open_engine(Settings.from_env(data_dir=Path(tmp) / "data", database_url=None), sync_knowledge=False,
                             analyst_for=analyst_for, kb=kb)
        try:
            if batch_lines is None:
                ingest_file(engine, path)
            else:
                from pipeline.unattended.live_read import read_live

                read_live(engine, path, batch_lines=batch_lines)
            held = outage_rows.incident_events(engine.records)
            line_of = {row["event_id"]: _line(offsets, row["position"]) for row in held}
            incident_of = {line_of[row["event_id"]]: row["incident_id"] for row in held}
            # a leader that opened nothing (a WARN stating the cause) is found by where it was read
            leaders = {i: (line_of.get(lead["event_id"]) or _line(offsets, lead.get("position")) if lead else None, lead)
                       for i, lead in outage_rows.every_leader(engine.records).items()}
            yield Ingested(engine, incident_of, leaders)
        finally:
            engine.records.close()


def run(scenario: Scenario, *, order: str = "file", batch_lines: int | None = None) -> dict[str, Any]:
    """Ingest one scenario in `order` into a fresh data dir; its incidents and how they score."""
    with ingested(scenario, order=order, batch_lines=batch_lines, **_offline(batch_lines)) as fed:
        return _score(scenario, fed.incident_of, fed.leaders)


def _offline(batch_lines: int | None) -> dict[str, Any]:
    """A live read starts each new incident's run, with the offline analyst (nothing is asked of a model)
    and one knowledge base for every scenario's data dir (its docs embedded once)."""
    if batch_lines is None:
        return {}
    if "kb" not in _SHARED:
        from pipeline.config import Settings
        from pipeline.knowledge.embeddings import embedder_from_setting
        from pipeline.knowledge.index import KnowledgeBase

        settings = Settings.from_env(database_url=None)
        _SHARED["kb"] = KnowledgeBase(index_dir=None, embedder=embedder_from_setting(settings.embeddings,
                                                                                     base_url=settings.base_url))
    from pipeline.analyst.offline import OfflineAnalyst

    return {"analyst_for": lambda _settings, kb: OfflineAnalyst(kb), "kb": _SHARED["kb"]}


_SHARED: dict[str, Any] = {}


def _line(offsets: dict[int, int], position: Any) -> int | None:
    """The scenario's 1-based line of a stored position (`source@offset`), None when unknown."""
    tail = str(position or "").rsplit("@", 1)[-1]
    return offsets.get(int(tail)) if tail.isdigit() else None


def _score(scenario: Scenario, incident_of: dict[int | None, str],
           leaders: dict[str, tuple[int | None, dict[str, Any] | None]]) -> dict[str, Any]:
    owner: dict[str, set[str]] = {}  # incident -> the causes whose lines it holds
    causes = []
    for cause in scenario.causes:
        held = [incident_of[line] for line in cause["lines"] if line in incident_of]
        for incident in held:
            owner.setdefault(incident, set()).add(cause["name"])
        # the incident holding most of its lines; of a tie, the one holding the earliest (a Counter keeps
        # first-seen order: max over a set picked by string hash order, so the score changed from run to run)
        counts = Counter(held)
        main = max(counts, key=counts.__getitem__) if held else None
        leader_line = leaders.get(main, (None, None))[0] if main else None
        causes.append({"cause": cause["name"], "incident": main, "incidents": len(set(held)), "lines": len(cause["lines"]),
                       "unheld": len(cause["lines"]) - len(held), "leader_line": leader_line,
                       "leader_expected": cause["leader"], "leader_right": leader_line == cause["leader"],
                       "leader_reason": (leaders.get(main, (None, None))[1] or {}).get("reason") if main else None})
    return {"scenario": scenario.name, "healthy": scenario.healthy, "incidents": len(leaders), "causes": causes,
            "merged": sorted(i for i, names in owner.items() if len(names) > 1)}


def loghub_counts(folder: Path, *, batch_lines: int | None = None) -> dict[str, int]:
    """Incidents each Loghub system's raw log (`<system>/*.log`) opens in a fresh data dir (`batch_lines`: read as a
    live tail delivering that many lines at a time, its incidents not run, live_read.py)."""
    from pipeline.composition import open_engine
    from pipeline.config import Settings
    from pipeline.unattended.file_ingest import ingest_file
    from pipeline.unattended.live_read import read_live

    counts = {}
    for system in sorted(p for p in Path(folder).iterdir() if p.is_dir() and list(p.glob("*.log"))):
        with tempfile.TemporaryDirectory(prefix="outages-") as tmp:
            engine = open_engine(Settings.from_env(data_dir=Path(tmp), database_url=None), sync_knowledge=False)
            try:
                log = sorted(system.glob("*.log"))[0]
                if batch_lines is None:
                    ingest_file(engine, log)
                else:
                    read_live(engine, log, batch_lines=batch_lines, runs=False)
                counts[system.name] = len(outage_rows.every_leader(engine.records))
            finally:
                engine.records.close()
    return counts


def measure(folders: Iterable[Path], *, loghub: Path | None = None,
            file_run: Callable[[Path, Scenario], dict[str, Any]] | None = None,
            batch_lines: int | None = None) -> dict[str, Any]:
    """Every scenario of the folders in both orders, the totals against the goals, and (`loghub`)
    each Loghub system's incident count. `file_run(folder, scenario)` reads a scenario in the file's
    order instead of `run` (outage_analysis.py: `run`'s score and the analyses beside it). `batch_lines`:
    each scenario read as a live tail delivering that many lines at a time (live_read.py)."""
    beds = [(Path(folder), s) for folder in folders for s in scenarios(folder)]
    results = {order: [file_run(folder, s) if file_run and order == "file" else run(s, order=order, batch_lines=batch_lines)
                       for folder, s in beds] for order in ORDERS}
    summary: dict[str, Any] = {"scenarios": results, "goals": GOALS, "orders": {}, "batch_lines": batch_lines}
    if batch_lines is not None:
        from pipeline.config import Settings

        summary["settle_seconds"] = Settings.from_env(database_url=None).settle_seconds
    for order, rows in results.items():
        single = [c["incidents"] for r in rows if len(r["causes"]) == 1 for c in r["causes"]]
        every = [c for r in rows for c in r["causes"]]
        summary["orders"][order] = {
            "incidents_per_single_cause": statistics.fmean(single) if single else None,
            "merged": sum(len(r["merged"]) for r in rows),
            "leader": sum(c["leader_right"] for c in every) / len(every) if every else None,
            "healthy_incidents": sum(r["incidents"] for r in rows if r["healthy"]),
            "causes": len(every), "single_cause_outages": len(single)}
    if loghub is not None:
        summary["loghub"] = loghub_counts(loghub, batch_lines=batch_lines)
    summary["goals_met"] = all(_met(o) for o in summary["orders"].values()) and (
        "BGL" not in summary.get("loghub", {}) or summary["loghub"]["BGL"] <= GOALS["bgl"])
    return summary


def _met(o: dict[str, Any]) -> bool:
    return ((o["incidents_per_single_cause"] or 0) <= GOALS["incidents_per_cause"] and o["merged"] == 0
            and (o["leader"] or 0) >= GOALS["leader"] and o["healthy_incidents"] == 0)


def text(summary: dict[str, Any]) -> str:
    """The report `python -m pipeline outages` and bench/outages.py print."""
    lines = []
    if summary.get("batch_lines"):
        lines.append(f"each scenario read as a live tail, {summary['batch_lines']} lines a batch (settle window"
                     f" {summary.get('settle_seconds', 0):g} s)")
    for order, rows in summary["scenarios"].items():
        lines.append(f"read in {order} order:")
        lines.append(f"  {'scenario':<30}{'cause':<8}{'lines':>6}{'incidents':>10}{'leader':>8}")
        for r in rows:
            if r["healthy"]:
                lines.append(f"  {r['scenario']:<30}{'healthy':<8}{'':>6}{r['incidents']:>10}{'':>8}")
            for c in r["causes"]:
                leader = "right" if c["leader_right"] else f"{c['leader_line']}≠{c['leader_expected']}"
                lines.append(f"  {r['scenario']:<30}{c['cause'][:7]:<8}{c['lines']:>6}{c['incidents']:>10}{leader:>8}")
            if r["merged"]:
                lines.append(f"  {'':<30}merged causes in {len(r['merged'])} incident(s)")
        o = summary["orders"][order]
        per = o["incidents_per_single_cause"]
        lines.append(f"  incidents per single-cause outage {per:.2f} (goal <= {GOALS['incidents_per_cause']});"
                     f" incidents merging two causes {o['merged']} (goal 0); leader right"
                     f" {o['leader']:.0%} of {o['causes']} causes (goal >= {GOALS['leader']:.0%});"
                     f" healthy controls' incidents {o['healthy_incidents']} (goal 0)")
    if "loghub" in summary:
        counts = ", ".join(f"{k} {v}" for k, v in summary["loghub"].items())
        lines.append(f"Loghub incidents per system: {counts}"
                     + ("" if "BGL" in summary["loghub"] else " (no BGL folder: its goal, <= 15, not measured)"))
    lines.append(f"goals: {'met' if summary['goals_met'] else 'NOT met'}")
    return "\n".join(lines)
