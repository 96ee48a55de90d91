"""The history timeline: every checkpoint of an incident, one lane per branch, readable at hundreds
of checkpoints.

Checkpoints are spaced one step apart by default (a run takes milliseconds: time spacing piles
them up; it stays an option). The live branch is drawn in colour by how each checkpoint was
made (input, loop, update, fork: a fork's first checkpoint; its lane says "fork" and a dashed line of
its colour joins it to the checkpoint it left), abandoned branches in grey, the live head with its own
marker. Labels are thinned so that no two overlap at the initial zoom (the newest checkpoints);
the rest are in the hover text and appear as one zooms in (scroll over the chart; drag pans).

Drawn with Vega-Lite (`st.vega_lite_chart`, a spec dict): Plotly's bundle, loaded on every page
load, made opening the timeline cost about 3x a hello page on its own (docs/BENCHMARKS.md). A
click on a point selects it (the spec's "picked" selection, by checkpoint id); a shift-click
adds a second.
"""
from __future__ import annotations

from datetime import datetime

from workbench.audit_words import ACTION_WORDS, step_words


# how LangGraph says a checkpoint was made (its `source`), in a reviewer's words: the chart's legend and
# a point no node wrote say these, never `input`, `loop` or `update`
SOURCE_WORDS = {"input": "run started", "loop": "a node ran", "update": "edited", "fork": "forked"}
RERUN = "re-run by a person"  # a replay's own checkpoint (the current evidence merged in): not an edit
# new events merged into a paused analysis by the run that stores them (the poller's), as intake's
# output: nobody edited anything, and no node ran for the time since the checkpoint before it
EVIDENCE_ADDED = "evidence added by the poller"
FORK_COLOR = "#b279a2"
SOURCE_COLORS = {SOURCE_WORDS["input"]: "#9e9e9e", SOURCE_WORDS["loop"]: "#4c78a8", SOURCE_WORDS["update"]: "#f58518",
                 SOURCE_WORDS["fork"]: FORK_COLOR, RERUN: "#72b7b2", EVIDENCE_ADDED: "#54a24b"}
# the legend says what the colours mean; how a fork is drawn (its first checkpoint "forked", on a lane
# named "branch N · fork", joined to the checkpoint it came from by a dashed line of its colour) is the
# caption under the chart: in the legend's title it was cut to "How each checkpoint was m…" at 1440 px
LEGEND_TITLE = "How each checkpoint was made"
FORK_NOTE = ("A fork starts at \u201cforked\u201d on a lane of its own, joined by a dashed line to the checkpoint "
             "it was forked from.")
LEGEND_TITLE_PX = 260  # the title's room: Vega-Lite's default (180 px) cut even the short title at its font
ABANDONED = "#c8c8c8"
WIDTH_PX = 900  # the plot's width the label spacing is planned for (the narrowest layout, 1024 px)
LABEL_PX = 120  # about the width of the longest label, "log window+doc search", at the label font size
INITIAL_POINTS = 40  # with more checkpoints, the view opens on the newest ones (zoom out for all)


def evidence_added(entry: dict) -> bool:
    """Whether the checkpoint is new evidence merged in by the poller's run: an update written as
    intake's output that no person's action made (a person's replay, split or merge is in the audit)."""
    return entry.get("source") == "update" and not entry.get("human_action") and entry.get("writes_by") == ["intake"]


def label_of(entry: dict) -> str:
    """What a point says: the step(s) that wrote it in a reviewer's words ("root cause analysis", never
    `rca`), else how it was made."""
    if evidence_added(entry):
        return "evidence added"
    if entry.get("writes_by"):
        return "+".join(step_words(w) for w in entry["writes_by"])
    return SOURCE_WORDS.get(entry.get("source") or "", entry.get("source") or "?")


def kind_of(entry: dict) -> str:
    """A live checkpoint's colour in the legend's words: how it was made; a fork's first checkpoint (the
    person's changed analysis the branch starts from, an `update` LangGraph writes) is "forked", not
    "edited" as an edit of the paused run is (issue 38.6: a fork looked like the main line)."""
    if entry.get("human_action") == "fork" and entry.get("source") == "update":
        return SOURCE_WORDS["fork"]
    if entry.get("human_action") == "replay" and entry.get("source") == "update":
        return RERUN  # a replay with the current evidence writes it: a person re-ran, nobody edited
    if evidence_added(entry):
        return EVIDENCE_ADDED
    return SOURCE_WORDS.get(entry.get("source") or "loop", entry.get("source") or "?")


def checkpoint_numbers(tree: dict) -> dict[str, int]:
    """Each checkpoint's number, 1 for the incident's first, in the order they were written (ids are
    time-ordered): the chart's x ("checkpoint order") and the pickers' "#N" are this one number.
    The tree holds the newest of `total`: the numbers count the older ones too, so they stay put as
    older checkpoints are loaded."""
    nodes = sorted(tree.get("nodes") or [], key=lambda e: e["checkpoint_id"])
    first = max(0, int(tree.get("total") or len(nodes)) - len(nodes)) + 1
    return {e["checkpoint_id"]: first + i for i, e in enumerate(nodes)}


def checkpoint_name(entry: dict) -> str:
    """A checkpoint as the chart and the pickers number it, with its step: "#5 root cause analysis"."""
    number = entry.get("number")
    return f"#{number} {label_of(entry)}" if number is not None else label_of(entry)


def checkpoint_caption(entry: dict, number: int | None = None) -> str:
    """One line naming a checkpoint for pickers and the chart's hover: its number (as on the chart's
    axis), writer, time, branch and markers; not its id."""
    marks = []
    if entry.get("is_pending"):
        marks.append("waiting for approval")
    elif entry.get("is_paused"):
        marks.append("paused")
    if entry.get("human_action"):
        action = entry["human_action"]  # the audit's action code ("approve_partial"): said in its words
        marks.append(f"a person {ACTION_WORDS.get(action, action.replace('_', ' '))}")
    when = str(entry.get("created_at") or "")[11:19]
    branch = f"branch {entry.get('branch', 0)}" + (" (live)" if entry.get("on_current_branch") else " (abandoned)")
    number = number if number is not None else entry.get("number")
    name = f"#{number}" if number is not None else f"step {entry.get('step')}"
    # no hex id (walkthrough s57): the number, step and time name it; its id is beside its link, to copy
    # each mark its own part: "waiting for approval by a human: asked for changes" read as waiting for the
    # changes (walkthrough s58)
    return " · ".join([name, label_of(entry), when, branch, *marks])


def _x(entries: list[dict], spacing: str, numbers: dict[str, int]) -> dict[str, object]:
    if spacing == "order":
        return {e["checkpoint_id"]: numbers[e["checkpoint_id"]] for e in entries}
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


PICKED = "picked"  # the spec's point selection: what `st.vega_lite_chart(on_select=...)` reports
SELECTED = "selected"  # the ring's layer and its dataset: the checkpoint picked
RING = {"type": "point", "shape": "circle", "filled": False, "size": 780, "strokeWidth": 3, "color": "#1f6feb",
        "clip": True}
HEAD, PAUSED, HUMAN = "live head", "paused at approval", "human action"
STAR = "M0,-1L0.24,-0.33L0.95,-0.31L0.38,0.12L0.59,0.81L0,0.4L-0.59,0.81L-0.38,0.12L-0.95,-0.31L-0.24,-0.33Z"


def timeline_spec(tree: dict, *, selected: str | None = None, spacing: str = "order",
                  collapse: bool = False) -> dict:
    """The Vega-Lite spec for `review.tree()`; `spacing` is "order" (one step apart) or "time"
    (real time); `collapse` hides the abandoned branches."""
    return with_selection(base_spec(tree, spacing=spacing, collapse=collapse), selected)


def with_selection(base: dict, selected: str | None) -> dict:
    """`base` (a `base_spec(...)`) with the selected checkpoint ringed. The ring's point is the named
    dataset SELECTED, not part of the spec: picking another checkpoint changes only that dataset, and
    the browser updates the drawn chart in place instead of building it again from a new spec."""
    point = next((p for p in _layer(base, "checkpoints")["data"]["values"] if p["checkpoint_id"] == selected), None)
    return {**base, "datasets": {SELECTED: [point] if point else []}}


def _layer(spec: dict, name: str) -> dict:
    return next(layer for layer in spec["layer"] if layer.get("name") == name)


def base_spec(tree: dict, *, spacing: str = "order", collapse: bool = False) -> dict:
    """Every checkpoint of the tree drawn, without the selection (see `with_selection`)."""
    entries = visible_entries(tree, collapse=collapse)
    numbers = checkpoint_numbers(tree)
    x = _x(entries, spacing, numbers)
    lane = {e["checkpoint_id"]: e.get("branch", 0) for e in entries}
    head = (tree.get("current") or [None])[0]
    window = initial_range(entries, x)
    full = (min((_number(v) for v in x.values()), default=0.0), max((_number(v) for v in x.values()), default=1.0))
    labels = labelled(entries, x, lane, head, window or full)
    live_ids = {n["checkpoint_id"] for n in tree["nodes"] if n.get("on_current_branch")}
    # one lane is live: the head's. A branch that a fork left keeps the live path's first steps, but
    # its own end is abandoned, so it is not labelled live too
    live_lane = lane[head] if head in x else max((lane[c] for c in x if c in live_ids), default=None)
    lanes = sorted(set(lane.values())) or [0]
    # a fork's lane says so: its branch starts at a person's changed analysis (issue 38.6)
    forks = {lane[e["checkpoint_id"]] for e in entries if e.get("human_action") == "fork"} - {0}
    names = {b: f"branch {b}" + (" · fork" if b in forks else "") + (" (live)" if b == live_lane else "")
             for b in lanes}

    def at(cid: str):
        value = x[cid]
        return value.isoformat() if isinstance(value, datetime) else value

    points = [{"checkpoint_id": e["checkpoint_id"], "x": at(e["checkpoint_id"]), "lane": names[lane[e["checkpoint_id"]]],
               "kind": kind_of(e) if e["checkpoint_id"] in live_ids else "abandoned",
               "label": label_of(e) if e["checkpoint_id"] in labels else "",
               "below": labels.get(e["checkpoint_id"]) == "bottom center",
               "caption": checkpoint_caption(e, numbers.get(e["checkpoint_id"]))}
              for e in entries]
    by_id = {p["checkpoint_id"]: p for p in points}
    edges = [{"x": at(parent), "x2": at(child), "lane": names[lane[parent]], "lane2": names[lane[child]],
              "live": child in live_ids, "fork": lane[parent] != lane[child] and lane[child] in forks}
             for parent, child in tree.get("edges", []) if parent in x and child in x]
    time = spacing == "time"
    lo, hi = window or full
    pad = (hi - lo) * 0.02 + 0.001 if time else 0.5  # the end points whole, not cut in half by the frame
    domain = [(lo - pad) * 1000, (hi + pad) * 1000] if time else [lo - pad, hi + pad]  # time: epoch ms
    x_enc: dict = {"field": "x", "type": "temporal" if time else "quantitative",
                   "title": "time (UTC)" if time else "checkpoint order",
                   "scale": {"domain": domain, **({"type": "utc"} if time else {})},
                   "axis": {"grid": False, **({"format": "%H:%M:%S.%L"} if time else {"tickMinStep": 1, "format": "d"})}}
    y_enc = {"field": "lane", "type": "nominal", "title": None,
             "scale": {"domain": [names[b] for b in lanes], "padding": 0.6}}
    colors = {**SOURCE_COLORS, "abandoned": ABANDONED}
    abandoned = "datum.kind === 'abandoned'"
    layers: list[dict] = [
        {"name": "edges", "data": {"values": edges},
         "mark": {"type": "rule", "strokeCap": "round", "clip": True},
         "encoding": {"x2": {"field": "x2"}, "y2": {"field": "lane2"}, "tooltip": None,
                      # where a fork leaves its parent's lane: the fork's colour, dashed
                      "color": {"condition": [{"test": "datum.fork", "value": FORK_COLOR},
                                              {"test": "datum.live", "value": "#8a8a8a"}], "value": "#dddddd"},
                      "strokeWidth": {"condition": {"test": "datum.live", "value": 2}, "value": 1},
                      "strokeDash": {"condition": [{"test": "datum.fork", "value": [5, 3]},
                                                   {"test": "datum.live", "value": [1, 0]}], "value": [2, 3]}}},
        {"name": "checkpoints", "data": {"values": points},
         "params": [{"name": PICKED, "select": {"type": "point", "fields": ["checkpoint_id"], "on": "click"}},
                    {"name": "zoom", "select": {"type": "interval", "encodings": ["x"]}, "bind": "scales"}],
         "mark": {"type": "point", "filled": True, "stroke": "white", "strokeWidth": 1, "cursor": "pointer",
                  "clip": True},
         "encoding": {"color": {"field": "kind", "type": "nominal", "title": LEGEND_TITLE,
                                "scale": {"domain": list(colors), "range": list(colors.values())},
                                "legend": {"orient": "top", "direction": "horizontal",
                                           "titleLimit": LEGEND_TITLE_PX}},
                      "size": {"condition": {"test": abandoned, "value": 64}, "value": 121},
                      "opacity": {"condition": {"test": abandoned, "value": 0.6}, "value": 1}}},
    ]
    for below in (False, True):
        layers.append({"name": "labels " + ("below" if below else "above"), "data": {"values": points},
                       "transform": [{"filter": f"datum.label !== '' && {'' if below else '!'}datum.below"}],
                       "mark": {"type": "text", "dy": 15 if below else -14, "fontSize": 11, "clip": True},
                       "encoding": {"text": {"field": "label"},
                                    "color": {"condition": {"test": abandoned, "value": "#9a9a9a"},
                                              "value": "#333333"}}})
    overlays = [(PAUSED, [e for e in entries if e.get("is_paused")],
                 {"shape": "diamond", "filled": False, "size": 300, "strokeWidth": 2, "color": "#e45756"}),
                (HUMAN, [e for e in entries if e.get("human_action")],
                 {"shape": STAR, "filled": True, "size": 90, "color": "#54a24b", "yOffset": -9}),
                (HEAD, [e for e in entries if e["checkpoint_id"] == head],
                 {"shape": "diamond", "filled": True, "size": 380, "color": "#111111", "stroke": "white",
                  "strokeWidth": 1})]
    for name, group, mark in overlays:
        if group:
            layers.append({"name": name, "data": {"values": [by_id[e["checkpoint_id"]] for e in group]},
                           "mark": {"type": "point", "cursor": "pointer", "clip": True, **mark}})
    layers.append({"name": SELECTED, "data": {"name": SELECTED}, "mark": RING})  # its point: with_selection
    # fit-x: the width follows the page, the height is the lanes' (with "fit" the legend and the axis
    # would be taken out of it, and one lane would be squeezed to nothing)
    return {"height": 50 * len(lanes) + 30, "autosize": {"type": "fit-x", "contains": "padding"}, "layer": layers,
            "encoding": {"x": x_enc, "y": y_enc, "tooltip": {"field": "caption", "type": "nominal"}},
            "usermeta": {"embedOptions": {"renderer": "svg"}},  # points are elements (the browser test clicks one)
            "config": {"legend": {"labelFontSize": 11}}}
