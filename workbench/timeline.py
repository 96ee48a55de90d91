"""The history timeline: every checkpoint of an incident, one lane per branch, readable at hundreds
of checkpoints.

Checkpoints are spaced one step apart by default (a run takes milliseconds: time spacing piles
them up; it stays an option). The live branch is drawn in colour by how each checkpoint was
made (input, loop, update, fork), abandoned branches in grey, the live head with its own
marker. Labels are thinned so that no two overlap at the initial zoom (the newest checkpoints);
the rest are in the hover text and appear as one zooms in with the range slider.
"""
from __future__ import annotations

from datetime import datetime

import plotly.graph_objects as go

SOURCE_COLORS = {"input": "#9e9e9e", "loop": "#4c78a8", "update": "#f58518", "fork": "#b279a2"}
ABANDONED = "#c8c8c8"
WIDTH_PX = 900  # the plot's width the label spacing is planned for (the narrowest layout, 1024 px)
LABEL_PX = 84  # about the width of a node name such as "propose_fix" at the label font size
INITIAL_POINTS = 40  # with more checkpoints, the view opens on the newest ones (the slider shows all)


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
    branch = f"branch {entry.get('branch', 0)}" + (" (live)" if entry.get("on_current_branch") else " (abandoned)")
    return (f"step {entry.get('step')} · {label_of(entry)} · {when} · {branch} · {entry['checkpoint_id'][-8:]}"
            + (f" · {' '.join(marks)}" if marks else ""))


def _x(entries: list[dict], spacing: str) -> dict[str, object]:
    if spacing == "order":
        ordered = sorted(entries, key=lambda e: e["checkpoint_id"])  # ids are time-ordered
        return {e["checkpoint_id"]: i for i, e in enumerate(ordered)}
    return {e["checkpoint_id"]: datetime.fromisoformat(str(e["created_at"])) for e in entries}


def _number(value) -> float:
    return value.timestamp() if isinstance(value, datetime) else float(value)


def visible_entries(tree: dict, *, collapse: bool) -> list[dict]:
    """The checkpoints drawn: all of them, or with `collapse` only the live branch's line."""
    entries = tree["nodes"]
    return [e for e in entries if e.get("on_current_branch")] if collapse else list(entries)


def initial_range(entries: list[dict], x: dict) -> tuple[float, float] | None:
    """The x range the chart opens on: everything, or the newest INITIAL_POINTS checkpoints."""
    if len(entries) <= INITIAL_POINTS:
        return None
    ordered = sorted(entries, key=lambda e: e["checkpoint_id"])
    first, last = ordered[-INITIAL_POINTS]["checkpoint_id"], ordered[-1]["checkpoint_id"]
    return _number(x[first]), _number(x[last])


def labelled(entries: list[dict], x: dict, lane: dict, head: str | None, window: tuple[float, float]) -> dict[str, str]:
    """checkpoint id → text position ("top center" or "bottom center") of the points that get a
    label: per lane and position, labels at least one label width apart at the initial zoom;
    the head, paused points and human actions are placed first."""
    span = max(window[1] - window[0], 1e-9)
    gap = LABEL_PX * span / WIDTH_PX  # one label's width in x units
    def rank(e):
        key = e["checkpoint_id"] == head or e.get("is_paused") or e.get("human_action")
        return (0 if key else 1, -_number(x[e["checkpoint_id"]]))

    placed: dict[tuple[int, str], list[float]] = {}
    out: dict[str, str] = {}
    for e in sorted(entries, key=rank):
        at = _number(x[e["checkpoint_id"]])
        if not window[0] - gap <= at <= window[1] + gap:
            continue  # off the initial view: its label would land on a visible one when zoomed out
        for position in ("top center", "bottom center"):
            taken = placed.setdefault((lane[e["checkpoint_id"]], position), [])
            if all(abs(at - other) >= gap for other in taken):
                taken.append(at)
                out[e["checkpoint_id"]] = position
                break
    return out


def timeline_figure(tree: dict, *, selected: str | None = None, spacing: str = "order",
                    collapse: bool = False) -> go.Figure:
    """The figure for `review.tree()`; `spacing` is "order" (one step apart) or "time" (real
    time); `collapse` hides the abandoned branches."""
    return with_selection(base_figure(tree, spacing=spacing, collapse=collapse).to_dict(), tree,
                          selected=selected, spacing=spacing, collapse=collapse)


def with_selection(base: dict, tree: dict, *, selected: str | None, spacing: str, collapse: bool) -> go.Figure:
    """The figure of `base` (a `base_figure(...).to_dict()`, already validated) with the selected
    checkpoint ringed: picking another checkpoint redraws the ring, not the whole chart."""
    entries = visible_entries(tree, collapse=collapse)
    x = _x(entries, spacing)
    spec = {"data": list(base.get("data") or []), "layout": base.get("layout") or {}}
    if selected and selected in x:
        lane = next(e.get("branch", 0) for e in entries if e["checkpoint_id"] == selected)
        spec["data"].append({"type": "scatter", "x": [x[selected]], "y": [lane], "mode": "markers",
                             "name": "selected", "hoverinfo": "skip",
                             "marker": {"symbol": "circle-open", "size": 28, "color": "#1f6feb", "line": {"width": 3}}})
    return go.Figure(spec, _validate=False)  # base was validated when it was built; the ring is fixed


def base_figure(tree: dict, *, spacing: str = "order", collapse: bool = False) -> go.Figure:
    """Every checkpoint of the tree drawn, without the selection (see `with_selection`)."""
    entries = visible_entries(tree, collapse=collapse)
    x = _x(entries, spacing)
    lane = {e["checkpoint_id"]: e.get("branch", 0) for e in entries}
    head = (tree.get("current") or [None])[0]
    window = initial_range(entries, x)
    full = (min((_number(v) for v in x.values()), default=0.0), max((_number(v) for v in x.values()), default=1.0))
    labels = labelled(entries, x, lane, head, window or full)
    live_ids = {n["checkpoint_id"] for n in tree["nodes"] if n.get("on_current_branch")}
    fig = go.Figure()
    for live in (False, True):
        edge_x, edge_y = [], []
        for parent, child in tree.get("edges", []):
            if parent in x and child in x and (child in live_ids) == live:
                edge_x += [x[parent], x[child], None]
                edge_y += [lane[parent], lane[child], None]
        fig.add_trace(go.Scatter(x=edge_x, y=edge_y, mode="lines", hoverinfo="skip", showlegend=False,
                                 line={"color": "#8a8a8a" if live else "#dddddd", "width": 2 if live else 1,
                                       "dash": None if live else "dot"}))
    abandoned = [e for e in entries if not e.get("on_current_branch")]
    if abandoned:
        _points(fig, abandoned, x, lane, labels, name="abandoned branch",
                marker={"size": 8, "color": ABANDONED, "line": {"width": 1, "color": "white"}}, opacity=0.6,
                textfont={"color": "#9a9a9a", "size": 10})
    for source, color in SOURCE_COLORS.items():
        group = [e for e in entries if e.get("on_current_branch") and (e.get("source") or "loop") == source]
        if group:
            _points(fig, group, x, lane, labels, name=source,
                    marker={"size": 11, "color": color, "line": {"width": 1, "color": "white"}},
                    textfont={"size": 11})
    _overlay(fig, [e for e in entries if e.get("is_paused")], x, lane, name="paused at approval",
             marker={"symbol": "diamond-open", "size": 18, "color": "#e45756", "line": {"width": 2}})
    _overlay(fig, [e for e in entries if e.get("human_action")], x, lane, name="human action",
             marker={"symbol": "star", "size": 9, "color": "#54a24b"}, yshift=-0.22)
    if head in x:
        _overlay(fig, [e for e in entries if e["checkpoint_id"] == head], x, lane, name="live head",
                 marker={"symbol": "star-diamond", "size": 22, "color": "#111111", "line": {"width": 1,
                                                                                           "color": "white"}})
    lanes = sorted(set(lane.values())) or [0]
    # one lane is live: the head's. A branch that a fork left keeps the live path's first steps, but
    # its own end is abandoned, so it is not labelled live too
    live_lane = lane[head] if head in x else max((lane[c] for c in x if c in live_ids), default=None)
    fig.update_yaxes(tickvals=lanes, ticktext=[f"branch {b}" + (" (live)" if b == live_lane else "") for b in lanes],
                     range=[max(lanes) + 0.7, min(lanes) - 0.7], title=None, zeroline=False, fixedrange=True)
    xaxis = {"title": "time (UTC)" if spacing == "time" else "checkpoint order", "showgrid": False,
             "rangeslider": {"visible": len(entries) > INITIAL_POINTS, "thickness": 0.08}}
    if window:
        xaxis["range"] = ([datetime.fromtimestamp(w, tz=next(iter(x.values())).tzinfo) for w in window]
                          if spacing == "time" else [window[0] - 0.5, window[1] + 0.5])
    fig.update_xaxes(**xaxis)
    fig.update_layout(height=190 + 60 * len(lanes) + (40 if len(entries) > INITIAL_POINTS else 0),
                      margin={"l": 10, "r": 10, "t": 40, "b": 10}, legend={"orientation": "h", "y": 1.18, "x": 0},
                      clickmode="event+select", dragmode="zoom")
    return fig


def _points(fig: go.Figure, group: list[dict], x: dict, lane: dict, labels: dict, *, name: str, marker: dict,
            textfont: dict, opacity: float = 1.0) -> None:
    fig.add_trace(go.Scatter(
        x=[x[e["checkpoint_id"]] for e in group], y=[lane[e["checkpoint_id"]] for e in group],
        mode="markers+text", name=name, opacity=opacity, marker=marker, textfont=textfont,
        text=[label_of(e) if e["checkpoint_id"] in labels else "" for e in group],
        textposition=[labels.get(e["checkpoint_id"], "top center") for e in group],
        customdata=[e["checkpoint_id"] for e in group],
        hovertext=[checkpoint_caption(e) for e in group], hoverinfo="text"))


def _overlay(fig: go.Figure, entries: list[dict], x: dict, lane: dict, *, name: str, marker: dict,
             yshift: float = 0.0) -> None:
    if not entries:
        return
    fig.add_trace(go.Scatter(x=[x[e["checkpoint_id"]] for e in entries],
                             y=[lane[e["checkpoint_id"]] + yshift for e in entries], mode="markers", name=name,
                             marker=marker, customdata=[e["checkpoint_id"] for e in entries],
                             hovertext=[checkpoint_caption(e) for e in entries], hoverinfo="text"))
