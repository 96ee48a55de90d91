"""The history timeline at hundreds of checkpoints (a Vega-Lite spec): labels that never overlap at
the initial zoom, order spacing by default, the newest checkpoints in view with zoom over x for
the rest, abandoned branches greyed (or collapsed), the live head marked, and a click on a point
reported by its checkpoint id."""
from datetime import datetime, timedelta, timezone

from workbench.incident_view import confidence_color
from workbench.history_view import _clicked_checkpoints
from workbench.timeline import ABANDONED, HEAD, INITIAL_POINTS, LABEL_PX, PICKED, WIDTH_PX, timeline_spec

WRITERS = ["intake", "retrieval", "rag", "rca", "recommend", "propose_fix"]


def _tree(n: int, *, replays: int) -> dict:
    """A run of `n` checkpoints on branch 0, then `replays` branches of 6 from earlier points; the
    last branch is live. Ids sort in time order, as LangGraph's do."""
    start = datetime(2026, 11, 28, 10, tzinfo=timezone.utc)
    nodes, edges = [], []

    def add(i: int, branch: int, parent: str | None, writer: str) -> str:
        cid = f"cp-{i:05d}"
        nodes.append({"checkpoint_id": cid, "parent_checkpoint_id": parent, "step": i, "source": "loop",
                      "created_at": (start + timedelta(milliseconds=3 * i)).isoformat(), "writes_by": [writer],
                      "branch": branch, "is_paused": writer == "propose_fix", "is_pending": False,
                      "human_action": None, "on_current_branch": False})
        if parent:
            edges.append([parent, cid])
        return cid

    parent, trunk = None, []
    for i in range(n):
        parent = add(i, 0, parent, WRITERS[i % len(WRITERS)])
        trunk.append(parent)
    line = list(trunk)
    k = n
    for b in range(1, replays + 1):
        parent = trunk[-(7 * b)]
        line = trunk[:trunk.index(parent) + 1]
        for j in range(6):
            parent = add(k, b, parent, WRITERS[j])
            line.append(parent)
            k += 1
    live = set(line)
    for node in nodes:
        node["on_current_branch"] = node["checkpoint_id"] in live
    return {"nodes": nodes, "edges": edges, "current": list(reversed(line)), "branches": replays + 1}


def _layer(spec: dict, name: str) -> dict:
    return next(layer for layer in spec["layer"] if layer.get("name") == name)


def _points(spec: dict) -> list[dict]:
    return _layer(spec, "checkpoints")["data"]["values"]


def _labels(spec):
    """(lane, below, x) of every drawn label: the label layers draw the points' non-empty labels,
    above or below the point."""
    assert {"labels above", "labels below"} <= {layer.get("name") for layer in spec["layer"]}
    return [(p["lane"], p["below"], p["x"]) for p in _points(spec) if p["label"]]


def test_no_two_labels_overlap_at_200_checkpoints_and_the_view_opens_on_the_newest():
    tree = _tree(170, replays=5)
    assert len(tree["nodes"]) == 200
    spec = timeline_spec(tree)
    x = spec["encoding"]["x"]
    assert x["title"] == "checkpoint order"  # order spacing by default
    low, high = x["scale"]["domain"]
    assert high - low == INITIAL_POINTS  # the newest 40 in view
    zoom = _layer(spec, "checkpoints")["params"][1]
    assert zoom["bind"] == "scales" and zoom["select"]["encodings"] == ["x"]  # the rest: scroll to zoom, drag
    gap = LABEL_PX * (INITIAL_POINTS - 1) / WIDTH_PX
    labels = _labels(spec)
    assert labels, "the initial view labels some points"
    for lane, below, at in labels:
        near = [x2 for lane2, below2, x2 in labels if (lane2, below2) == (lane, below) and x2 != at and abs(x2 - at) < gap]
        assert not near, (lane, below, at, near)
        assert low - gap <= at <= high + gap


def test_abandoned_branches_are_grey_the_live_head_has_its_own_marker_and_collapse_hides_them():
    tree = _tree(30, replays=2)
    spec = timeline_spec(tree)
    color = _layer(spec, "checkpoints")["encoding"]["color"]["scale"]
    assert dict(zip(color["domain"], color["range"]))["abandoned"] == ABANDONED
    abandoned = [p for p in _points(spec) if p["kind"] == "abandoned"]
    assert len(abandoned) == sum(1 for n in tree["nodes"] if not n["on_current_branch"])
    assert [p["checkpoint_id"] for p in _layer(spec, HEAD)["data"]["values"]] == [tree["current"][0]]
    # one lane says live, the head's (branch 0 keeps the live path's first steps, yet it was left)
    assert [lane for lane in spec["encoding"]["y"]["scale"]["domain"] if "(live)" in lane] == ["branch 2 (live)"]
    collapsed = timeline_spec(tree, collapse=True)
    assert "abandoned" not in {p["kind"] for p in _points(collapsed)}
    assert {p["checkpoint_id"] for p in _points(collapsed)} == {
        n["checkpoint_id"] for n in tree["nodes"] if n["on_current_branch"]}


def test_the_selected_checkpoint_is_ringed_and_a_click_reports_checkpoint_ids():
    tree = _tree(30, replays=2)
    picked = tree["nodes"][5]["checkpoint_id"]
    spec = timeline_spec(tree, selected=picked)
    assert [p["checkpoint_id"] for p in spec["datasets"]["selected"]] == [picked]
    assert _layer(spec, "selected")["data"] == {"name": "selected"}  # the ring draws that dataset
    unpicked = timeline_spec(tree)
    assert unpicked["datasets"]["selected"] == []
    # another pick changes the dataset alone: the browser updates the drawn chart, not a new one
    assert {k: v for k, v in unpicked.items() if k != "datasets"} == {k: v for k, v in spec.items() if k != "datasets"}
    select = _layer(spec, "checkpoints")["params"][0]
    assert select["name"] == PICKED and select["select"]["fields"] == ["checkpoint_id"]
    # what st.vega_lite_chart reports after a click and a shift-click, in the order clicked
    event = {"selection": {PICKED: [{"checkpoint_id": "cp-2"}, {"checkpoint_id": "cp-1"}]}}
    assert _clicked_checkpoints(event) == ["cp-2", "cp-1"]
    assert _clicked_checkpoints({"selection": {PICKED: {}}}) == []  # nothing picked yet
    assert _clicked_checkpoints(None) == []


def test_time_spacing_stays_available():
    spec = timeline_spec(_tree(12, replays=0), spacing="time")
    assert spec["encoding"]["x"]["title"] == "time (UTC)"
    assert spec["encoding"]["x"]["type"] == "temporal"
    assert datetime.fromisoformat(_points(spec)[0]["x"]).tzinfo is not None


def test_confidence_colours_run_from_red_to_blue_never_red_when_high():
    assert confidence_color(0.1) == "#d9534f"
    assert confidence_color(0.95) == "#2b7bb9"
    scale = [confidence_color(c / 20) for c in range(21)]
    order = ["#d9534f", "#f0883e", "#4caf50", "#2b7bb9"]
    assert [order.index(c) for c in scale] == sorted(order.index(c) for c in scale)  # monotone


def test_the_chart_says_how_each_checkpoint_was_made_in_a_reviewers_words():
    """Its legend and its labels: "run started", "a node ran", "edited", "forked", "start", never LangGraph's
    `input`, `loop`, `update` or `__start__`."""
    tree = _tree(12, replays=1)
    first, edited, forked = tree["nodes"][0], tree["nodes"][5], tree["nodes"][-1]
    first.update(source="input", writes_by=["__start__"])
    edited.update(source="update", writes_by=[])
    forked.update(source="fork", writes_by=[])
    spec = timeline_spec(tree)
    legend = _layer(spec, "checkpoints")["encoding"]["color"]["scale"]["domain"]
    said = set(legend) | {p["kind"] for p in _points(spec)} | {p["caption"].split(" · ")[1] for p in _points(spec)}
    assert {"run started", "a node ran", "edited", "forked", "start"} <= said, said
    assert not {"input", "loop", "update", "fork", "__start__"} & said, said
