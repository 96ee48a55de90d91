"""The history timeline at hundreds of checkpoints: labels that never overlap at the initial zoom,
order spacing by default, the newest checkpoints in view with a slider for the rest, abandoned
branches greyed (or collapsed) and the live head marked."""
from datetime import datetime, timedelta, timezone

from workbench.incident_view import confidence_color
from workbench.timeline import ABANDONED, INITIAL_POINTS, LABEL_PX, WIDTH_PX, timeline_figure

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


def _labels(fig):
    """(lane, text position, x) of every drawn label."""
    out = []
    for trace in fig.data:
        if trace.mode != "markers+text":
            continue
        positions = trace.textposition if isinstance(trace.textposition, (list, tuple)) else [trace.textposition] * len(trace.x)
        out += [(y, pos, x) for x, y, text, pos in zip(trace.x, trace.y, trace.text, positions) if text]
    return out


def test_no_two_labels_overlap_at_200_checkpoints_and_the_view_opens_on_the_newest():
    tree = _tree(170, replays=5)
    assert len(tree["nodes"]) == 200
    fig = timeline_figure(tree)
    assert fig.layout.xaxis.title.text == "checkpoint order"  # order spacing by default
    low, high = fig.layout.xaxis.range
    assert high - low == INITIAL_POINTS  # the newest 40 in view
    assert fig.layout.xaxis.rangeslider.visible  # the rest one drag away
    gap = LABEL_PX * (INITIAL_POINTS - 1) / WIDTH_PX
    labels = _labels(fig)
    assert labels, "the initial view labels some points"
    for lane, pos, x in labels:
        near = [x2 for lane2, pos2, x2 in labels if (lane2, pos2) == (lane, pos) and x2 != x and abs(x2 - x) < gap]
        assert not near, (lane, pos, x, near)
        assert low - gap <= x <= high + gap


def test_abandoned_branches_are_grey_the_live_head_has_its_own_marker_and_collapse_hides_them():
    tree = _tree(30, replays=2)
    fig = timeline_figure(tree)
    abandoned = next(t for t in fig.data if t.name == "abandoned branch")
    assert abandoned.marker.color == ABANDONED
    assert len(abandoned.x) == sum(1 for n in tree["nodes"] if not n["on_current_branch"])
    head = next(t for t in fig.data if t.name == "live head")
    assert list(head.customdata) == [tree["current"][0]]
    # one lane says live, the head's (branch 0 keeps the live path's first steps, yet it was left)
    assert [t for t in fig.layout.yaxis.ticktext if "(live)" in t] == ["branch 2 (live)"]
    collapsed = timeline_figure(tree, collapse=True)
    assert "abandoned branch" not in [t.name for t in collapsed.data]
    drawn = {c for t in collapsed.data if t.customdata is not None for c in t.customdata}
    assert drawn == {n["checkpoint_id"] for n in tree["nodes"] if n["on_current_branch"]}


def test_time_spacing_stays_available():
    fig = timeline_figure(_tree(12, replays=0), spacing="time")
    assert fig.layout.xaxis.title.text == "time (UTC)"
    assert isinstance(next(t for t in fig.data if t.name == "loop").x[0], datetime)


def test_confidence_colours_run_from_red_to_blue_never_red_when_high():
    assert confidence_color(0.1) == "#d9534f"
    assert confidence_color(0.95) == "#2b7bb9"
    scale = [confidence_color(c / 20) for c in range(21)]
    order = ["#d9534f", "#f0883e", "#4caf50", "#2b7bb9"]
    assert [order.index(c) for c in scale] == sorted(order.index(c) for c in scale)  # monotone
