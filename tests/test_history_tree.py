"""The checkpoint tree is read from metadata and pending writes, not from the states: it must say
what the history (which reads every state) says, through replays, forks, edits and decisions."""
from __future__ import annotations

from datetime import datetime, timedelta

from pipeline.review.service import ReviewService
from tests.support import BOTH_BACKENDS, by_category, pending

pytestmark = BOTH_BACKENDS

SHARED = ("checkpoint_id", "parent_checkpoint_id", "step", "source", "writes_by", "interrupt_id", "is_paused",
          "is_pending", "branch", "on_current_branch", "human_action")


def _at(history: list[dict], next_nodes: list[str]) -> str:
    return [h for h in history if h["next"] == next_nodes and h["on_current_branch"]][-1]["checkpoint_id"]


def _when(value) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


def _agree(service: ReviewService, inc: str) -> dict:
    tree = service.tree(inc)
    full = service.history(inc, limit=1000)
    assert [{k: n[k] for k in SHARED} for n in tree["nodes"]] == [{k: h[k] for k in SHARED} for h in full]
    # the tree reads the time from the checkpoint's uuid6 id, minted a moment before the saver's `ts`
    # (milliseconds apart on a loaded machine): the same checkpoint's time, within a second
    gaps = [abs(_when(n["created_at"]) - _when(h["created_at"])) for n, h in zip(tree["nodes"], full)]
    assert len(gaps) == len(full) and max(gaps, default=timedelta(0)) < timedelta(seconds=1)
    return tree


def test_the_tree_says_what_the_history_says_through_replays_forks_edits_and_decisions(paused_engine):
    service = ReviewService(paused_engine)
    inc = by_category(paused_engine, "db_pool_exhausted")
    _agree(service, inc)
    history = service.history(inc, limit=1000)
    service.replay(inc, checkpoint_id=_at(history, ["rca"]), reviewer="ann")
    service.fork(inc, checkpoint_id=_at(service.history(inc, limit=1000), ["recommend"]), reviewer="bob",
                 edits={"severity": "high"})
    service.edit(inc, reviewer="cy", edits={"recommendation.action": "Restart the pool"})
    service.revise(inc, reviewer="dee", feedback="smaller steps", expect_interrupt=pending(paused_engine, inc))
    service.approve(inc, reviewer="eve", expect_interrupt=pending(paused_engine, inc))
    tree = _agree(service, inc)
    assert tree["branches"] >= 3 and tree["total"] == len(tree["nodes"])
    assert {n["human_action"] for n in tree["nodes"]} >= {"replay", "fork", "edit", "approve"}
    newest = service.tree(inc, limit=5)
    assert newest["nodes"] == tree["nodes"][:5] and newest["total"] == tree["total"]
