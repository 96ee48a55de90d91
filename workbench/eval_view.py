"""The latest evaluation figures for the knowledge page, read from the file the eval run writes."""
from __future__ import annotations

import json
from pathlib import Path

import plotly.graph_objects as go

# `python -m pipeline eval` writes <data dir>/eval-latest.json; a full offline run of the committed
# set also writes knowledge/eval/latest.json, which ships with the repository
COMMITTED = Path(__file__).resolve().parent.parent / "knowledge" / "eval" / "latest.json"
HEADLINES = (("accuracy", "accuracy"), ("accuracy_at_3", "accuracy@3"), ("unknown_recall", "unknown recall"),
             ("unknown_precision", "unknown precision"), ("calibration_gap", "calibration gap"))


def latest_eval(data_dir: Path) -> tuple[Path, dict] | None:
    """The newest readable eval report: this data dir's, else the committed one."""
    candidates = [p for p in (Path(data_dir) / "eval-latest.json", COMMITTED) if p.is_file()]
    candidates.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for path in candidates:
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        if isinstance(report, dict):
            return path, report
    return None


def confusion_figure(confusion: dict[str, dict[str, int]]) -> go.Figure:
    """Expected category (rows) against the category the analyst named (columns)."""
    expected = sorted(confusion)
    named = sorted({c for row in confusion.values() for c in row} | set(expected))
    z = [[confusion[e].get(n, 0) for n in named] for e in expected]
    fig = go.Figure(go.Heatmap(z=z, x=named, y=expected, colorscale="Blues", hovertemplate=
                               "expected %{y}<br>named %{x}<br>%{z} cases<extra></extra>"))
    fig.update_layout(height=max(300, 22 * len(expected) + 140), margin={"l": 10, "r": 10, "t": 10, "b": 10},
                      xaxis={"title": "named by the analyst", "tickangle": -45},
                      yaxis={"title": "expected", "autorange": "reversed"})
    return fig
