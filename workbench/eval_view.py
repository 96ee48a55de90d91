"""The latest evaluation figures for the knowledge page, read from the report `eval` writes."""
from __future__ import annotations

import json
from pathlib import Path

import plotly.graph_objects as go

from pipeline.analyst.evaluation import REPORT_NAME, SPLIT_TITLES

HEADLINES = (("accuracy", "accuracy"), ("accuracy_at_3", "accuracy@3"), ("unknown_recall", "unknown recall"),
             ("unknown_precision", "unknown precision"), ("calibration_gap", "calibration gap"))
NO_REPORT = "No evaluation run yet in this data dir — run `python -m pipeline eval`."


def latest_eval(data_dir: Path) -> tuple[Path, dict] | None:
    """This data dir's eval report, or None when `eval` has not run here (or left no readable report)."""
    # only the data dir: the repository carries no figures, so the page never shows another machine's run
    path = Path(data_dir) / REPORT_NAME
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return (path, report) if isinstance(report, dict) else None


def split_title(name: str) -> str:
    """`holdout · hold-out 2026-11 (contaminated)`: the split's name and what it is."""
    return f"{name} · {SPLIT_TITLES[name]}" if name in SPLIT_TITLES else name


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
