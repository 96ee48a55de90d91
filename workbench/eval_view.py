"""The latest evaluation figures for the knowledge page, read from the report `eval` writes."""
from __future__ import annotations

import plotly.graph_objects as go

HEADLINES = (("accuracy", "accuracy"), ("accuracy_at_3", "accuracy@3"), ("unknown_recall", "unknown recall"),
             ("unknown_precision", "unknown precision"), ("calibration_gap", "calibration gap"),
             ("key_facts", "key facts named"))
NO_REPORT = "No evaluation run yet in this data dir — run `python -m pipeline eval`."


def split_title(name: str, figures: dict) -> str:
    """`holdout · hold-out 2026-11 (contaminated)`: the split's name and what it is."""
    title = figures.get("title")
    return f"{name} · {title}" if title and title != name else name


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
