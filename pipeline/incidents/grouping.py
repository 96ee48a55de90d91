"""How well the template miner groups log lines, measured on labelled logs (Loghub's structured CSVs).

GA (grouping accuracy, as in the Loghub benchmark): a line counts as right when the set of lines
in its predicted group equals the set of lines sharing its ground-truth EventId. The miner is
the one fingerprints use (`fingerprints.miner.TemplateMiner`, one configuration for every log); the
baseline is the masking fingerprints used before it (`correlation.template`).

A system folder holds `X_2k.log_structured.csv` (LineId, ..., Level?, Content, EventId,
EventTemplate) and usually the raw `X_2k.log`. GA is measured twice: on the CSV's `Content`
(messages only) and on the messages our reader takes out of the raw lines (`read_raw`, raw-line
GA), for the miner and for Drain3 with the Loghub benchmark's settings, in the same run.
"""
from __future__ import annotations

import collections
import csv
import functools
import statistics
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Hashable, Iterable, Sequence

from pipeline.errors import UsageError
from pipeline.incidents.correlation import template as masked_template
from pipeline.ingest.formats import SourceParser, exception_in
from pipeline.ingest.multiline import MultilineJoiner
from pipeline.ingest.levels import infer_level, normalize_level
from pipeline.incidents.opening import OpeningRule
from pipeline.incidents.fingerprints.miner import TemplateMiner
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


def mine(messages: Sequence[str], **options: Any) -> list[str]:
    """Group ids from a fresh miner (TemplateMiner options: sim_th, depth, masker);
    ids are resolved after all lines, as clusters join."""
    miner = TemplateMiner(None, **options)
    ids = [miner.add(m).template_id for m in messages]
    return [miner.group_of(i) for i in ids]


# Drain's settings per system as the Loghub benchmark runs it (logpai/logparser,
# logparser/Drain/benchmark.py, Apache-2.0): masks (regexes replaced by <*>), similarity
# threshold and depth, each tuned on the system it is scored on. The comparison the issue names.
DRAIN_BENCHMARK: dict[str, tuple[tuple[str, ...], float, int]] = {
    "HDFS": ((r"blk_-?\d+", r"(\d+\.){3}\d+(:\d+)?"), 0.5, 4),
    "Hadoop": ((r"(\d+\.){3}\d+",), 0.5, 4),
    "Spark": ((r"(\d+\.){3}\d+", r"\b[KGTM]?B\b", r"([\w-]+\.){2,}[\w-]+"), 0.5, 4),
    "Zookeeper": ((r"(/|)(\d+\.){3}\d+(:\d+)?",), 0.5, 4),
    "BGL": ((r"core\.\d+",), 0.5, 4),
    "HPC": ((r"=\d+",), 0.5, 4),
    "Thunderbird": ((r"(\d+\.){3}\d+",), 0.5, 4),
    "Windows": ((r"0x.*?\s",), 0.7, 5),
    "Linux": ((r"(\d+\.){3}\d+", r"\d{2}:\d{2}:\d{2}"), 0.39, 6),
    "Android": ((r"(/[\w-]+)+", r"([\w-]+\.){2,}[\w-]+",
                 r"\b(\-?\+?\d+)\b|\b0[Xx][a-fA-F\d]+\b|\b[a-fA-F\d]{4,}\b"), 0.2, 6),
    "HealthApp": ((), 0.2, 4),
    "Apache": ((r"(\d+\.){3}\d+",), 0.5, 4),
    "Proxifier": ((r"<\d+\ssec", r"([\w-]+\.)+[\w-]+(:\d+)?", r"\d{2}:\d{2}(:\d{2})*", r"[KGTM]B"), 0.6, 3),
    "OpenSSH": ((r"(\d+\.){3}\d+", r"([\w-]+\.){2,}[\w-]+"), 0.6, 5),
    "OpenStack": ((r"((\d+\.){3}\d+,?)+", r"/.+?\s", r"\d+"), 0.5, 5),
    "Mac": ((r"([\w-]+\.){2,}[\w-]+",), 0.7, 6),
}


def drain3_benchmark(name: str, messages: Sequence[str]) -> list[int] | None:
    """Drain3 with the Loghub benchmark's settings for the system `name` (None: it has none)."""
    bench = DRAIN_BENCHMARK.get(name)
    return None if bench is None else drain3(messages, masks=bench[0], sim_th=bench[1], depth=bench[2])


def drain3(messages: Sequence[str], *, masks: Sequence[str] = (), sim_th: float = 0.4, depth: int = 4) -> list[int]:
    """Group ids from Drain3's own TemplateMiner (defaults: its defaults, no masks)."""
    from drain3 import TemplateMiner as Drain3Miner
    from drain3.masking import MaskingInstruction
    from drain3.template_miner_config import TemplateMinerConfig

    config = TemplateMinerConfig()
    config.drain_sim_th, config.drain_depth = sim_th, depth
    config.masking_instructions = [MaskingInstruction(m, "*") for m in masks]
    miner = Drain3Miner(config=config)
    return [miner.add_log_message(m)["cluster_id"] for m in messages]


# Leave-one-system-out: the choices a configuration makes (threshold, depth, which masks) are
# picked on the other systems and scored on the one left out, so no system's score comes from
# settings tuned on it. Candidates: the shipped configuration, other thresholds and depths, and
# the shipped masks less one kind.
_DROPPABLE = ("<STR>", "<URL>", "<TS>", "<UUID>", "<EMAIL>", "<HOST>", "<IP>", "<PATH>", "<DUR>", "<SIZE>",
              "<HEX>", "<NUM>")


def candidate_configs() -> dict[str, dict[str, Any]]:
    from functools import partial

    from pipeline.incidents.fingerprints.masks import mask_reference
    from pipeline.incidents.fingerprints.miner import DEPTH, SIM_TH

    configs: dict[str, dict[str, Any]] = {"shipped": {}}
    for sim_th in (0.5, 0.6, 0.7, 0.8, 0.9):
        for depth in (4, 5, 6):
            if (sim_th, depth) != (SIM_TH, DEPTH):
                configs[f"sim {sim_th} depth {depth}"] = {"sim_th": sim_th, "depth": depth}
    for placeholder in _DROPPABLE:
        configs[f"no {placeholder}"] = {"masker": partial(mask_reference, without=frozenset({placeholder}))}
    return configs


def leave_one_out(logs: Sequence["LabelledLog"]) -> dict[str, dict[str, Any]]:
    """Per system: the configuration the other systems pick (best mean GA on them; the shipped
    one wins ties) and its GA on the system left out."""
    configs = candidate_configs()
    scores = {name: {log.name: grouping_accuracy(mine(log.contents, **options), log.event_ids) for log in logs}
              for name, options in configs.items()}
    out = {}
    for log in logs:
        others = {name: statistics.fmean(v for k, v in by_system.items() if k != log.name)
                  for name, by_system in scores.items()}
        best = max(configs, key=lambda name: (round(others[name], 6), name == "shipped"))
        out[log.name] = {"config": best, "ga": scores[best][log.name], "others": others[best]}
    return out


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

    @functools.cached_property
    def raw_messages(self) -> list[str] | None:
        """The raw log's messages as our reader takes them out (None: no raw log, or its records
        do not pair one to one with the labelled lines)."""
        raw = self.raw_log
        if raw is None:
            return None
        messages, _ = read_raw(raw)
        return messages if len(messages) == len(self.rows) else None

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


def read_raw(path: Path) -> tuple[list[str], collections.Counter[str]]:
    """A raw log through our reader (format detection, records joined across lines): each
    record's message, and how many records each format read."""
    lines = path.read_bytes().decode("utf-8", errors="replace").splitlines()
    parser = SourceParser()
    parser.detect(lines)
    messages: list[str] = []
    formats: collections.Counter[str] = collections.Counter()
    for record in MultilineJoiner().join(enumerate(lines)):
        parsed = parser.parse(record.text)
        formats[parsed.format] += 1
        messages.append(parsed.message)
    return messages, formats


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


def measure(dirs: Iterable[Path], *, with_baseline: bool = True, with_drain3: bool = True,
            loo: bool = False, raw: bool = True) -> dict[str, Any]:
    """GA per system and the summary the `grouping` command prints: the miner, the masks alone
    (baseline), Drain3 with its own defaults (one configuration, like the miner) and with the
    Loghub benchmark's per-system settings, each on the messages and (`raw`) on what our reader
    takes out of the raw lines, and (`loo`) the miner's leave-one-system-out GA."""
    results: list[dict[str, Any]] = []
    logs = [load(system) for system in systems(dirs)]
    for log in logs:
        row: dict[str, Any] = {"system": log.name, "lines": len(log.rows), "templates": len(set(log.event_ids)),
                               "miner": grouping_accuracy(mine(log.contents), log.event_ids)}
        if with_baseline:
            row["baseline"] = grouping_accuracy(baseline(log.contents), log.event_ids)
        if with_drain3:
            row["drain3"] = grouping_accuracy(drain3(log.contents), log.event_ids)
            row["drain3_benchmark"] = _ga_or_none(drain3_benchmark(log.name, log.contents), log.event_ids)
        if raw:
            messages = log.raw_messages
            row["raw_miner"] = None if messages is None else grouping_accuracy(mine(messages), log.event_ids)
            if with_drain3:
                row["raw_drain3_benchmark"] = None if messages is None else _ga_or_none(
                    drain3_benchmark(log.name, messages), log.event_ids)
        results.append(row)
    if loo:
        picked = leave_one_out(logs)
        for row in results:
            row["loo"], row["loo_config"] = picked[row["system"]]["ga"], picked[row["system"]]["config"]
    mean = statistics.fmean(r["miner"] for r in results)
    summary: dict[str, Any] = {"systems": results, "mean_miner": mean, "min_miner": min(r["miner"] for r in results),
                               "goal": {"mean": GOAL_MEAN, "min": GOAL_MIN}}
    for key in ("baseline", "drain3", "drain3_benchmark", "loo", "raw_miner", "raw_drain3_benchmark"):
        values = [r[key] for r in results if r.get(key) is not None]
        if values:
            summary[f"mean_{key}"] = statistics.fmean(values)
    # the bar: at or above Drain3 with its benchmark settings on every system
    summary["below_drain3_benchmark"] = sorted(
        r["system"] for r in results
        if r.get("drain3_benchmark") is not None and r.get("loo", r["miner"]) < r["drain3_benchmark"])
    summary["below_drain3_benchmark_raw"] = sorted(
        r["system"] for r in results
        if None not in (r.get("raw_miner"), r.get("raw_drain3_benchmark")) and r["raw_miner"] < r["raw_drain3_benchmark"])
    summary["goal_met"] = mean >= GOAL_MEAN and summary["min_miner"] >= GOAL_MIN
    return summary


def _ga_or_none(predicted: Sequence[Hashable] | None, truth: Sequence[Hashable]) -> float | None:
    return None if predicted is None else grouping_accuracy(predicted, truth)
