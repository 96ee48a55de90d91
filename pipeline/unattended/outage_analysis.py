"""The outage bed's end-to-end analysis score (`python -m pipeline outages --analyse`): the curated
eval (`python -m pipeline eval`) hands the analyst a few chosen events; here each scenario's whole log
is read through the product, and the incident the bed picks for each cause (the one holding most of
its lines: outage_bed.py) is run through the product's graph with the offline analyst as the poller
runs a new incident (engine/runner.py's `advance_run`, up to the approval interrupt). Its category
is scored against the cause's label (a labels file: {"<folder>/<scenario>": {"<cause>":
{"category": ...}}}, categories of docs/CONTRACT.md §3):

- top-1: the analysis names the label's category;
- named wrong: it names another category, not `unknown` (an `unknown` says nothing, a wrong one misleads);
- named wrong at or above the code-fix threshold (CODE_FIX_MIN_CONFIDENCE): wrong and confident
  enough to be routed to a code fix;
- healthy controls: incidents whose analysis names a category (not `unknown`) at or above that threshold.

Only the file's order is analysed (the reordered pass scores grouping alone, as before); the grouping
figures are `measure`'s own, unchanged.
"""
from __future__ import annotations

import json
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any, Iterable

from pipeline.errors import UsageError
from pipeline.unattended import outage_bed

LABELS = Path(__file__).resolve().parents[2] / "tests" / "data" / "outages" / "categories.json"


def load_labels(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """The labels file: `{"<folder name>/<scenario name>": {"<cause name>": {"category": ...}}}`."""
    try:
        labels = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"labels {path}: {exc}") from exc
    if not isinstance(labels, dict):
        raise UsageError(f"labels {path}: not an object of scenarios")
    return labels


def analysed_run(labels: dict[str, Any], shared: dict[str, Any], folder: Path, scenario: outage_bed.Scenario
                 ) -> dict[str, Any]:
    """`outage_bed.run` in the file's order, and beside its score (`analysis`) each labelled cause's
    incident analysed: expected, predicted, confidence, title; of a healthy control, every incident's."""
    from pipeline.analyst.offline import OfflineAnalyst
    from pipeline.engine import runner

    if "kb" not in shared:  # one knowledge base for every scenario's data dir: its docs embedded once
        from pipeline.config import Settings
        from pipeline.knowledge.embeddings import embedder_from_setting
        from pipeline.knowledge.index import KnowledgeBase

        settings = Settings.from_env(database_url=None)
        shared["kb"] = KnowledgeBase(index_dir=None, embedder=embedder_from_setting(settings.embeddings,
                                                                                    base_url=settings.base_url))
    key = f"{folder.name}/{scenario.name}"
    with outage_bed.ingested(scenario, order="file", analyst_for=lambda _settings, kb: OfflineAnalyst(kb),
                             kb=shared["kb"]) as fed:
        scored = outage_bed._score(scenario, fed.incident_of, fed.leaders)
        engine = fed.engine
        threshold = engine.settings.code_fix_min_confidence
        wanted = ({c["incident"] for c in scored["causes"] if c["incident"]} if not scenario.healthy
                  else set(fed.leaders))
        analyses = {}
        for incident in sorted(wanted):
            runner.advance_run(engine, incident)
            analyses[incident] = engine.records.incident_fields(incident, "category", "confidence", "title", "status")
    rows = []
    for cause in scored["causes"]:
        label = (labels.get(key) or {}).get(cause["cause"])
        if label is None:
            continue
        got = analyses.get(cause["incident"] or "", {})
        rows.append({"scenario": key, "cause": cause["cause"], "expected": label["category"],
                     "predicted": got.get("category"), "confidence": got.get("confidence"),
                     "title": got.get("title"), "status": got.get("status")})
    healthy = [{"scenario": key, **a} for a in analyses.values()] if scenario.healthy else []
    scored["analysis"] = {"causes": rows, "healthy": healthy, "threshold": threshold}
    return scored


def figures(rows: list[dict[str, Any]], healthy: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    """The analysis figures of some causes and healthy controls' incidents (see the module docstring)."""
    def wrong(r: dict[str, Any]) -> bool:
        return r["predicted"] not in (r["expected"], "unknown", None)

    right = sum(r["predicted"] == r["expected"] for r in rows)
    return {"causes": len(rows), "top1_right": right, "top1": right / len(rows) if rows else None,
            "named_wrong": sum(wrong(r) for r in rows),
            "named_wrong_confident": sum(wrong(r) and (r["confidence"] or 0) >= threshold for r in rows),
            "no_analysis": sum(r["predicted"] is None for r in rows),
            "healthy_incidents": len(healthy),
            "healthy_named_confident": sum(h["category"] not in ("unknown", None) and (h["confidence"] or 0) >= threshold
                                           for h in healthy)}


def measure(folders: Iterable[Path], *, labels: Path = LABELS, loghub: Path | None = None) -> dict[str, Any]:
    """`outage_bed.measure` (its grouping figures unchanged) with each labelled cause's analysis scored:
    `analysis` holds the figures overall and per folder, every cause's row and the commonest confusions."""
    folders = [Path(f) for f in folders]
    summary = outage_bed.measure(folders, loghub=loghub, file_run=partial(analysed_run, load_labels(labels), {}))
    file_rows = summary["scenarios"]["file"]
    threshold = file_rows[0]["analysis"]["threshold"] if file_rows else 0.5
    rows = [c for r in file_rows for c in r["analysis"]["causes"]]
    healthy = [h for r in file_rows for h in r["analysis"]["healthy"]]
    per_folder = {f.name: figures([r for r in rows if r["scenario"].split("/")[0] == f.name],
                                  [h for h in healthy if h["scenario"].split("/")[0] == f.name], threshold)
                  for f in folders}
    confusions = Counter((r["expected"], r["predicted"]) for r in rows if r["predicted"] != r["expected"])
    example: dict[tuple[str, str | None], str | None] = {}
    for r in rows:
        example.setdefault((r["expected"], r["predicted"]), r["title"])
    summary["analysis"] = {
        "threshold": threshold, "labels": str(labels), "overall": figures(rows, healthy, threshold),
        "folders": per_folder, "causes": rows,
        "confusions": [{"expected": e, "predicted": p, "count": n, "example": example[(e, p)]}
                       for (e, p), n in confusions.most_common()]}
    return summary


def text(summary: dict[str, Any]) -> str:
    """outage_bed's report, then the analysis figures and the commonest confusions."""
    a = summary["analysis"]
    lines = [outage_bed.text(summary), f"analysis (file order, offline analyst; code-fix threshold {a['threshold']}):"]
    for name, f in [*a["folders"].items(), ("overall", a["overall"])]:
        top1 = f"{f['top1']:.0%}" if f["top1"] is not None else "-"
        lines.append(f"  {name:<14} causes {f['causes']:>3}  top-1 {f['top1_right']:>3} ({top1:>4})"
                     f"  named wrong {f['named_wrong']:>3} ({f['named_wrong_confident']} at/above threshold)"
                     f"  no analysis {f['no_analysis']}  healthy: {f['healthy_named_confident']} of"
                     f" {f['healthy_incidents']} incidents named at/above threshold")
    for c in a["confusions"][:10]:
        lines.append(f"  {c['count']:>3} × {c['expected']} → {c['predicted']}  e.g. {c['example']}")
    return "\n".join(lines)
