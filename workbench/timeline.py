"""The history timeline: every checkpoint of an incident on a time axis, one lane per branch.

Points are colored by how the checkpoint was made (input, loop, update, fork) and labelled with
the node that wrote it; paused points and points a human action created get their own markers.
"""
from __future__ import annotations

from datetime import datetime

import plotly.graph_objects as go

SOURCE_COLORS = {"input": "#9e9e9e", "loop": "#4c78a8", "update": "#f58518", "fork": "#b279a2"}


def label_of(entry: dict) -> str:
    """What a point says: the node(s) that wrote it, else how it was made."""
    if entry.get("writes_by"):
        return "+".join(entry["writes_by"])
    return entry.get("source") or "?"


def checkpoint_caption(entry: dict) -> str:
    """One line naming a checkpoint for pickers: step, writer, time, branch and markers."""
    marks = []
    if entry.get("is_pending"):
        marks.append("waiting for approval")
    elif entry.get("is_paused"):
        marks.append("paused")
    if entry.get("human_action"):
        marks.append(f"by a human: {entry['human_action']}")
    when = str(entry.get("created_at") or "")[11:19]
    branch = f"branch {entry.get('branch', 0)}" + (" (current)" if entry.get("on_current_branch") else "")
    return (f"step {entry.get('step')} · {label_of(entry)} · {when} · {branch} · {entry['checkpoint_id'][-8:]}"
            + (f" · {' '.join(marks)}" if marks else ""))


def _x(entries: list[dict], spacing: str) -> dict[str, object]:
    if spacing == "order":
        ordered = sorted(entries, key=lambda e: e["checkpoint_id"])  # ids are time-ordered
        return {e["checkpoint_id"]: i for i, e in enumerate(ordered)}
    return {e["checkpoint_id"]: datetime.fromisoformat(str(e["created_at"])) for e in entries}


def timeline_figure(tree: dict, *, selected: str | None = None, spacing: str = "time") -> go.Figure:
    """The figure for `review.tree()`; `spacing` is "time" (real time) or "order" (one step apart)."""
    entries = tree["nodes"]
    x = _x(entries, spacing)
    lane = {e["checkpoint_id"]: e.get("branch", 0) for e in entries}
    fig = go.Figure()
    edge_x, edge_y = [], []
    for parent, child in tree.get("edges", []):
        if parent in x and child in x:
            edge_x += [x[parent], x[child], None]
            edge_y += [lane[parent], lane[child], None]
    fig.add_trace(go.Scatter(x=edge_x, y=edge_y, mode="lines", line={"color": "#cccccc", "width": 1.5},
                             hoverinfo="skip", showlegend=False))
    for source, color in SOURCE_COLORS.items():
        group = [e for e in entries if (e.get("source") or "loop") == source]
        if not group:
            continue
        fig.add_trace(go.Scatter(
            x=[x[e["checkpoint_id"]] for e in group], y=[lane[e["checkpoint_id"]] for e in group],
            mode="markers+text", name=source, text=[label_of(e) for e in group], textposition="top center",
            marker={"size": 11, "color": color, "line": {"width": 1, "color": "white"}},
            customdata=[e["checkpoint_id"] for e in group],
            hovertext=[checkpoint_caption(e) for e in group], hoverinfo="text"))
    _overlay(fig, [e for e in entries if e.get("is_paused")], x, lane, name="paused at approval",
             marker={"symbol": "diamond-open", "size": 20, "color": "#e45756", "line": {"width": 2}})
    _overlay(fig, [e for e in entries if e.get("human_action")], x, lane, name="human action",
             marker={"symbol": "star", "size": 9, "color": "#54a24b"}, yshift=-0.22)
    if selected and selected in x:
        fig.add_trace(go.Scatter(x=[x[selected]], y=[lane[selected]], mode="markers", name="selected",
                                 marker={"symbol": "circle-open", "size": 26, "color": "#000000",
                                         "line": {"width": 2}}, hoverinfo="skip"))
    lanes = sorted(set(lane.values())) or [0]
    head = max((e["checkpoint_id"] for e in entries), default=None)  # ids are time-ordered
    current = lane.get(head)
    fig.update_yaxes(tickvals=lanes, ticktext=[f"branch {b}" + (" (current)" if b == current else "") for b in lanes],
                     range=[max(lanes) + 0.6, min(lanes) - 0.6], title=None, zeroline=False)
    fig.update_xaxes(title="time (UTC)" if spacing == "time" else "checkpoint order", showgrid=False)
    fig.update_layout(height=170 + 70 * len(lanes), margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      legend={"orientation": "h", "y": 1.12, "x": 0}, clickmode="event+select")
    return fig


def _overlay(fig: go.Figure, entries: list[dict], x: dict, lane: dict, *, name: str, marker: dict,
             yshift: float = 0.0) -> None:
    if not entries:
        return
    fig.add_trace(go.Scatter(x=[x[e["checkpoint_id"]] for e in entries],
                             y=[lane[e["checkpoint_id"]] + yshift for e in entries], mode="markers", name=name,
                             marker=marker, customdata=[e["checkpoint_id"] for e in entries],
                             hovertext=[checkpoint_caption(e) for e in entries], hoverinfo="text"))
