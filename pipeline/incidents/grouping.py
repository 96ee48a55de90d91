"""How well the template miner groups log lines, measured on labelled logs (Loghub's structured CSVs).

GA (grouping accuracy, as in the Loghub benchmark): a line counts as right when the set of lines
in its predicted group equals the set of lines sharing its ground-truth EventId. The miner is
the one fingerprints use (`templates.TemplateMiner`, one configuration for every log); the
baseline is the masking fingerprints used before it (`correlation.template`).

A system folder holds `X_2k.log_structured.csv` (LineId, ..., Level?, Content, EventId,
EventTemplate) and usually the raw `X_2k.log`.
"""
from __future__ import annotations

import collections
import csv
import statistics
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Hashable, Iterable, Sequence

from pipeline.errors import UsageError
from pipeline.incidents.correlation import template as masked_template
from pipeline.ingest.formats import exception_in
from pipeline.ingest.levels import infer_level, normalize_level
from pipeline.incidents.opening import OpeningRule
from pipeline.ingest.templates import TemplateMiner
from pipeline.state import LogEvent

GOAL_MEAN, GOAL_MIN = 0.90, 0.70


def grouping_accuracy(predicted: Sequence[Hashable], truth: Sequence[Hashable]) -> float:
    """Share of lines whose predicted group holds exactly the lines of their true group."""
    if len(predicted) != len(truth):
        raise ValueError(f"{len(predicted)} predictions for {len(truth)} lines")
    if not truth:
        return 1.0
    by_pred: dict[Hashable, set[int]] = collections.defaultdict(set)
    by_true: dict[Hashable, set[int]] = collections.defaultdict(set)
    for i, (p, t) in enumerate(zip(predicted, truth)):
        by_pred[p].add(i)
        by_true[t].add(i)
    right = sum(len(lines) for lines in by_true.values() if by_pred[predicted[next(iter(lines))]] == lines)
    return right / len(truth)


def mine(messages: Sequence[str]) -> list[str]:
    """Group ids from a fresh miner; ids are resolved after all lines, as clusters join."""
    miner = TemplateMiner(None)
    ids = [miner.add(m).template_id for m in messages]
    return [miner.group_of(i) for i in ids]


def baseline(messages: Sequence[str]) -> list[str]:
    """Groups by the masked text, as fingerprints were made before the miner."""
    return [masked_template(m) for m in messages]


@dataclass(frozen=True)
class LabelledLog:
    """One system's labelled lines."""

    name: str
    folder: Path
    rows: list[dict[str, Any]]

    @property
    def contents(self) -> list[str]:
        return [r["Content"] for r in self.rows]

    @property
    def event_ids(self) -> list[str]:
        return [r["EventId"] for r in self.rows]

    @property
    def raw_log(self) -> Path | None:
        return next(iter(sorted(self.folder.glob("*.log"))), None)

    def error_templates(self, rule: OpeningRule) -> set[str]:
        """EventIds of the lines the opening rule opens incidents for, by the CSV's Level (or, for
        a log without levels, the keyword guess a line without a level gets)."""
        found = set()
        for row in self.rows:
            level = normalize_level(row.get("Level")) if row.get("Level") else None
            if level is None:
                level = infer_level(row["Content"])
            event = LogEvent(event_id="-", time=datetime(2000, 1, 1, tzinfo=timezone.utc), message=row["Content"], level=level,
                             exception=exception_in(row["Content"]))
            if rule.opens(event):
                found.add(row["EventId"])
        return found


def systems(dirs: Iterable[Path]) -> list[Path]:
    """System folders: the given folders that hold a structured CSV, or their subfolders that do."""
    found: list[Path] = []
    for d in map(Path, dirs):
        if not d.is_dir():
            raise UsageError(f"no such folder: {d}")
        if list(d.glob("*_structured.csv")):
            found.append(d)
        else:
            found.extend(sorted(p for p in d.iterdir() if p.is_dir() and list(p.glob("*_structured.csv"))))
    if not found:
        raise UsageError(f"no Loghub structured CSV (*_structured.csv) under {', '.join(map(str, dirs))}")
    return found


def load(system: Path) -> LabelledLog:
    csv_path = next(iter(sorted(system.glob("*_structured.csv"))))
    with open(csv_path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    if rows and not {"Content", "EventId"} <= set(rows[0]):
        raise UsageError(f"{csv_path}: needs the columns Content and EventId")
    return LabelledLog(name=system.name, folder=system, rows=rows)


def measure(dirs: Iterable[Path], *, with_baseline: bool = True) -> dict[str, Any]:
    """GA per system and the summary the `grouping` command prints."""
    results: list[dict[str, Any]] = []
    for system in systems(dirs):
        log = load(system)
        row = {"system": log.name, "lines": len(log.rows), "templates": len(set(log.event_ids)),
               "miner": grouping_accuracy(mine(log.contents), log.event_ids)}
        if with_baseline:
            row["baseline"] = grouping_accuracy(baseline(log.contents), log.event_ids)
        results.append(row)
    mean = statistics.fmean(r["miner"] for r in results)
    summary: dict[str, Any] = {"systems": results, "mean_miner": mean, "min_miner": min(r["miner"] for r in results),
               "goal": {"mean": GOAL_MEAN, "min": GOAL_MIN}}
    if with_baseline:
        summary["mean_baseline"] = statistics.fmean(r["baseline"] for r in results)
    summary["goal_met"] = mean >= GOAL_MEAN and summary["min_miner"] >= GOAL_MIN
    return summary
