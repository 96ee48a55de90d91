"""An incident's checkpoint history as a reviewer reads it: entries with field-level changes,
branch lanes and the current branch, the checkpoint tree, and what a replay would re-run.

SqliteSaver's history generator holds the saver's lock until it is exhausted, so every listing
here is turned into a list at once and nothing keeps a generator across calls.
"""
from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot
from pydantic_core import to_jsonable_python

from pipeline.engine import Engine
from pipeline.errors import CheckpointNotFound
from pipeline.state import counted
from pipeline.store import checkpoints, regrouping, retention
from pipeline.engine.graph import NODE_NAMES, IncidentGraph, thread_config

GATE = "approval"
TRACE_FIELD = "events"


def checkpoint_config(incident_id: str, checkpoint_id: str) -> RunnableConfig:
    """The config addressing one past checkpoint (replay and fork start there, nothing else)."""
    return {"configurable": {"thread_id": incident_id, "checkpoint_ns": "", "checkpoint_id": checkpoint_id}}


def checkpoint_id_of(snap: StateSnapshot | None) -> str | None:
    if snap is None or not snap.config:
        return None
    return snap.config["configurable"].get("checkpoint_id")


def parent_id_of(snap: StateSnapshot) -> str | None:
    return snap.parent_config["configurable"]["checkpoint_id"] if snap.parent_config else None


# -- state as JSON and its field-level diff ------------------------------------------------
def state_json(values: dict[str, Any]) -> dict[str, Any]:
    """Checkpoint values (our Pydantic objects) as plain JSON data."""
    return {k: to_jsonable_python(v) for k, v in (values or {}).items()}


def _summarise(field: str, value: Any) -> Any:
    # evidence and log windows run to dozens of events: a diff shows how many, not each one
    if value is None:
        return None
    if field in ("evidence", "log_window"):
        return len(value)
    if field == "similar_docs":
        return [f"{d['doc_id']} ({d['score']:.2f})" for d in value]
    return value


def flatten(state: dict[str, Any]) -> dict[str, Any]:
    """Dotted field → value, nested dicts expanded, big lists summarised, the trace left out."""
    out: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else k, v)
        else:
            out[prefix] = value

    for key, value in state.items():
        if key == TRACE_FIELD:
            continue
        walk(key, _summarise(key, value))
    return out


def diff(before: dict[str, Any], after: dict[str, Any]) -> list[dict[str, Any]]:
    """Field-level changes between two states given as JSON (see `state_json`)."""
    b, a = flatten(before), flatten(after)
    fields = list(a) + [k for k in b if k not in a]
    return [{"field": f, "before": b.get(f), "after": a.get(f)} for f in fields if b.get(f) != a.get(f)]


def trace_added(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The node trace lines a checkpoint added to its parent's."""
    old, new = before.get(TRACE_FIELD) or [], after.get(TRACE_FIELD) or []
    added = new[len(old):] if new[:len(old)] == old else new
    return [f"{e['node']}: {e['detail']}" if e.get("detail") else e["node"] for e in added]


# -- the graph's shape: what runs after a checkpoint --------------------------------------
@dataclass(frozen=True)
class Flow:
    """Where each node leads, read from the compiled graph."""

    static: dict[str, tuple[str, ...]]
    after_gate: frozenset[str]

    @classmethod
    def of(cls, engine: Engine) -> "Flow":
        return _flow_of(engine.graph)

    @classmethod
    def from_graph(cls, graph: IncidentGraph) -> "Flow":
        static: dict[str, list[str]] = defaultdict(list)
        conditional: dict[str, list[str]] = defaultdict(list)
        for edge in graph.get_graph().edges:
            (conditional if edge.conditional else static)[edge.source].append(edge.target)
        def reach(start: list[str]) -> set[str]:
            seen, todo = set(), list(start)
            while todo:  # up to the gate, not through it
                node = todo.pop()
                if node in seen or node == GATE:
                    continue
                seen.add(node)
                todo += static.get(node, []) + conditional.get(node, [])
            return seen

        # past the gate: what only its answer leads to (a revision re-enters rca, which also runs
        # before the gate, so rca is not "past" it)
        after = reach(conditional[GATE]) - reach(static.get("__start__", []))
        return cls(static={k: tuple(sorted(v)) for k, v in static.items()}, after_gate=frozenset(after))

    def writers_of(self, next_nodes: tuple[str, ...]) -> list[str]:
        """Nodes whose output leads exactly to `next_nodes` (the as_node that keeps a run on course)."""
        want = tuple(sorted(next_nodes))
        return [n for n in NODE_NAMES if self.static.get(n) == want]

    def rerun(self, next_nodes: tuple[str, ...]) -> list[str]:
        """Nodes that run from `next_nodes` on until the gate stops the run (gate included)."""
        order, seen, frontier = [], set(), [n for n in next_nodes]
        while frontier:
            node = frontier.pop(0)
            if node in seen or node == "__end__":
                continue
            seen.add(node)
            if node != "__start__":
                order.append(node)
            if node != GATE:
                frontier += list(self.static.get(node, ()))
        return order


@functools.lru_cache(maxsize=8)
def _flow_of(graph: IncidentGraph) -> Flow:
    return Flow.from_graph(graph)


# -- lineage: ids and parents only, cheap enough for every call ----------------------------
@dataclass
class Lineage:
    parent: dict[str, str | None]
    order: list[str]  # oldest first (checkpoint ids are time-ordered)
    lane: dict[str, int]
    current: set[str]

    @property
    def head(self) -> str | None:
        return self.order[-1] if self.order else None

    @property
    def branches(self) -> int:
        return max(self.lane.values(), default=-1) + 1

    def ancestors(self, checkpoint_id: str | None) -> list[str]:
        """The checkpoint and its ancestors that are still stored (retention may have removed some)."""
        chain: list[str] = []
        node = checkpoint_id
        while node is not None and node in self.parent:
            chain.append(node)
            node = self.parent.get(node)
        return chain


def our_store(engine: Engine) -> checkpoints.CheckpointStore:
    """The graph's checkpointer: one of our checkpoint stores (either backend), as the composition root compiles it."""
    return cast(checkpoints.CheckpointStore, engine.graph.checkpointer)


def lineage(engine: Engine, incident_id: str) -> Lineage:
    """Checkpoint ids and parents of the thread, lanes for branches, and the current branch."""
    return lineage_of(checkpoints.checkpoint_parents(our_store(engine), incident_id))


def lineage_of(rows: list[tuple[str, str | None]]) -> Lineage:
    """The lineage of (checkpoint id, parent id) pairs, oldest first."""
    parent = {cid: pid for cid, pid in rows}
    lane: dict[str, int] = {}
    has_child: set[str] = set()
    lanes = 0
    for cid, pid in rows:
        if pid is None or pid not in lane:
            lane[cid] = 0 if lanes == 0 else lanes
            lanes = max(lanes, lane[cid] + 1)
        elif pid in has_child:  # the parent already continued elsewhere: this starts a branch
            lane[cid] = lanes
            lanes += 1
        else:
            lane[cid] = lane[pid]
        if pid is not None:
            has_child.add(pid)
    order = [cid for cid, _ in rows]
    current: set[str] = set()
    node = order[-1] if order else None
    while node is not None:
        current.add(node)
        node = parent.get(node)
    return Lineage(parent=parent, order=order, lane=lane, current=current)


# -- history entries -----------------------------------------------------------------------
def human_actions(audit_rows: list[dict[str, Any]], line: Lineage) -> dict[str, str]:
    """checkpoint id → the human action that created it, from the audit log's before/after ids."""
    made_by: dict[str, str] = {}
    for row in audit_rows:
        node, floor = row.get("checkpoint_after"), row.get("checkpoint_before")
        if floor is None:  # nothing to walk back to: only the checkpoint the action ended on
            if node is not None:
                made_by.setdefault(node, row["action"])
            continue
        while node is not None and node > floor and node not in made_by:
            made_by[node] = row["action"]
            node = line.parent.get(node)
    return made_by


def writes_by(snap: StateSnapshot, parent: StateSnapshot | None, flow: Flow) -> list[str]:
    source = (snap.metadata or {}).get("source")
    if source == "loop" and parent is not None:
        ran = [t.name for t in parent.tasks if t.result is not None]
        return ran or list(parent.next)
    if source == "update":
        return flow.writers_of(snap.next)[:1]
    return []  # input, or a fork: the copy a replay starts from


def entry(snap: StateSnapshot, parent: StateSnapshot | None, *, line: Lineage, flow: Flow,
          made_by: dict[str, str]) -> dict[str, Any]:
    """One history entry (see review_api: history)."""
    cid = checkpoint_id_of(snap)
    raised = [t for t in snap.tasks if t.interrupts]
    before, after = state_json(parent.values if parent else {}), state_json(snap.values)
    paused = any(t.result is None for t in raised)
    return {
        "checkpoint_id": cid,
        "parent_checkpoint_id": parent_id_of(snap),
        "step": (snap.metadata or {}).get("step"),
        "source": (snap.metadata or {}).get("source"),
        "next": list(snap.next),
        "created_at": snap.created_at,
        "writes_by": writes_by(snap, parent, flow),
        "interrupt_id": raised[0].interrupts[0].id if raised else None,
        "is_paused": paused,
        "is_pending": paused and cid == line.head,
        "branch": line.lane.get(cid or "", 0),
        "on_current_branch": cid in line.current,
        "human_action": made_by.get(cid or ""),
        "changes": diff(before, after),
        "trace": trace_added(before, after),
    }


def node_runs(snap: StateSnapshot, parent: StateSnapshot | None, writes: list[str]) -> list[dict[str, Any]]:
    """What each node that wrote `snap` did, as LangGraph Studio shows a step: its input (the state at
    the parent checkpoint, the same for every node of the step), its output (the update it returned,
    read from the parent's task) and its run time (from the parent checkpoint to this one: the node's
    work plus the checkpoint write; nodes of one step share it)."""
    if parent is None or not writes:
        return []
    seconds = None
    if snap.created_at and parent.created_at:
        seconds = max(0.0, (datetime.fromisoformat(snap.created_at)
                            - datetime.fromisoformat(parent.created_at)).total_seconds())
    results = {t.name: t.result for t in parent.tasks}
    return [{"node": node, "seconds": seconds, "input_checkpoint_id": checkpoint_id_of(parent),
             "output": state_json(results[node]) if isinstance(results.get(node), dict) else None}  # type: ignore[arg-type]  # a dict, checked
            for node in writes]


def compare(first: StateSnapshot, second: StateSnapshot) -> list[dict[str, Any]]:
    """Field-level changes from one checkpoint to another (any two, on any branches)."""
    return diff(state_json(first.values), state_json(second.values))


def snapshots(engine: Engine, incident_id: str, *, limit: int | None, before: str | None) -> list[StateSnapshot]:
    """History snapshots newest first, as a list (the generator is exhausted here, never kept)."""
    before_cfg = checkpoint_config(incident_id, before) if before else None
    return list(engine.graph.get_state_history(thread_config(incident_id), limit=limit, before=before_cfg))


def snapshot_at(engine: Engine, incident_id: str, checkpoint_id: str, line: Lineage | None = None) -> StateSnapshot:
    """The snapshot of one checkpoint of the incident, or CheckpointNotFound."""
    line = line or lineage(engine, incident_id)
    if checkpoint_id not in line.parent:
        raise CheckpointNotFound(incident_id, checkpoint_id, pruned_at=retention.pruned_at(engine.records, incident_id))
    return engine.graph.get_state(checkpoint_config(incident_id, checkpoint_id))


def entries(engine: Engine, incident_id: str, snaps: list[StateSnapshot], line: Lineage,
            made_by: dict[str, str]) -> list[dict[str, Any]]:
    """History entries for snapshots, each diffed against its parent's values."""
    flow = Flow.of(engine)
    by_id = {checkpoint_id_of(s): s for s in snaps}
    out = []
    for snap in snaps:
        pid = parent_id_of(snap)
        parent = None
        if pid is not None and pid in line.parent:  # else retention removed it: nothing to diff against
            parent = by_id.get(pid)
            if parent is None:  # the parent is on another page or branch
                parent = by_id[pid] = engine.graph.get_state(checkpoint_config(incident_id, pid))
        out.append(entry(snap, parent, line=line, flow=flow, made_by=made_by))
    return out


def tree_entries(engine: Engine, incident_id: str, rows: list[dict[str, Any]], line: Lineage,
                 made_by: dict[str, str]) -> list[dict[str, Any]]:
    """History entries for the tree (in the order of `rows`), from checkpoint metadata and pending writes:
    no state is deserialised (an `update` checkpoint, made by a person, is read to name the node
    it wrote as). Field changes and the trace are in `checkpoint()` for the one selected."""
    flow = Flow.of(engine)
    order = ("__start__", *NODE_NAMES)  # the graph's order, as the snapshot lists tasks
    out = []
    for r in rows:
        cid, pid, source = r["checkpoint_id"], r["parent_checkpoint_id"], r["source"]
        if source == "loop" and pid in line.parent:
            writes = sorted(r["parent_ran"], key=lambda n: order.index(n) if n in order else len(order))
        elif source == "update":
            writes = flow.writers_of(tuple(engine.graph.get_state(checkpoint_config(incident_id, cid)).next))[:1]
        else:
            writes = []
        out.append({
            "checkpoint_id": cid, "parent_checkpoint_id": pid, "step": r["step"], "source": source,
            "created_at": checkpoints.created_at(cid), "writes_by": writes,
            "interrupt_id": r["interrupts"][0] if r["interrupts"] else None,
            "is_paused": r["paused"], "is_pending": r["paused"] and cid == line.head,
            "branch": line.lane.get(cid or "", 0), "on_current_branch": cid in line.current,
            "human_action": made_by.get(cid or ""),
        })
    return out


UPSTREAM_EDITS = {"rca": "rca", "severity": "rca", "recommendation": "recommend"}


def fork_as_node(edits: dict[str, Any] | None, flow: Flow, next_nodes: tuple[str, ...]) -> tuple[str | None, str]:
    """The node a fork's edited values land as, and why: an edit of the analysis (rca.*, severity)
    lands as `rca`, so recommend and propose_fix re-run from it; an edit of the recommendation lands as
    `recommend`, so the proposal is derived again. Without edits, the writer that keeps the run on course."""
    owners = {UPSTREAM_EDITS.get(f.partition(".")[0]) for f in (edits or {})} - {None}
    writers = flow.writers_of(next_nodes)
    if not owners or not next_nodes or set(next_nodes) - {"propose_fix", GATE, "recommend"}:
        # an early checkpoint: the edited values are overwritten by the nodes that run from there
        return (writers[0] if writers else None), "as_is"
    if "recommend" in owners and "rca" in owners:
        return "recommend", "keeps_recommendation"
    return ("rca" if "rca" in owners else "recommend"), "reruns_dependents"


EDIT_EFFECT_WORDS = {
    "reruns_dependents": "lands as {as_node}'s output, so {nodes} re-run from it",
    "keeps_recommendation": "sets the analysis and the recommendation: it lands as recommend's output, so recommend "
                            "does not re-run (the recommendation stays as edited) and {nodes} re-run from it",
    "as_is": "lands before the nodes that write those fields: {nodes} run again and may overwrite it",
}


def edit_effect(edits: dict[str, Any], flow: Flow, next_nodes: tuple[str, ...] = (GATE,)) -> dict[str, Any]:
    """What an edit made where the run stands at `next_nodes` (the gate, for a paused incident) does:
    the node it lands as, the rule's `effect` (see fork_as_node), the nodes that then re-run up
    to the gate, and a sentence saying so. The one rule of Edit & approve, the State tab and a fork."""
    as_node, effect = fork_as_node(edits, flow, next_nodes)
    start = next_nodes if effect == "as_is" or as_node is None else flow.static.get(as_node, next_nodes)
    nodes = [n for n in flow.rerun(start) if n != GATE]
    named = " and ".join(nodes) if len(nodes) <= 2 else ", ".join(nodes[:-1]) + " and " + nodes[-1]
    return {"as_node": as_node, "effect": effect, "reruns": nodes,
            "text": f"The edit of {', '.join(edits)} " + EDIT_EFFECT_WORDS[effect].format(
                as_node=as_node, nodes=named or "no node")}


def evidence_basis(engine: Engine, incident_id: str, snap: StateSnapshot) -> dict[str, Any]:
    """Which evidence a branch from `snap` is analysed on, against what the incident has now."""
    events = (snap.values or {}).get("evidence") or []
    newest = max((e.time for e in events), default=None)
    row = engine.records.incident(incident_id)
    now_newest = row.get("last_seen")
    later = [e for e in engine.records.events_of(incident_id)
             if newest is None or e.time > newest] if events or row["event_count"] else []
    moved = regrouping.moved_elsewhere(engine.records, incident_id, (e.event_id for e in events))
    return {
        "at_checkpoint": {"events": len(events), "newest_event_at": newest.isoformat() if newest else None},
        "now": {"events": row["event_count"], "newest_event_at": now_newest},
        "newer_evidence": bool(later),
        "newer_events": len(later),
        # events of the checkpoint a split (or merge) has since given to another incident: a branch
        # from it is analysed without them (review/time_travel.py)
        "moved_out": len(moved),
        "moved_to": sorted(set(moved.values())),
        "moved_ids": sorted(moved),
    }


def rerun_plan(engine: Engine, incident_id: str, snap: StateSnapshot, line: Lineage, *,
               edits: dict[str, Any] | None = None, with_current_evidence: bool = False) -> dict[str, Any]:
    """What a replay or fork from `snap` would run again, on which evidence, and whether it may."""
    flow = Flow.of(engine)
    nxt = tuple(snap.next)
    start = nxt
    fork_effect = None
    basis = evidence_basis(engine, incident_id, snap)
    if (with_current_evidence or (basis["moved_out"] and not edits)) and nxt:
        start = flow.static.get("intake", ())  # the evidence as it is now lands as intake's output
    elif edits:
        as_node, fork_effect = fork_as_node(edits, flow, nxt)
        if as_node is not None and fork_effect != "as_is":
            start = flow.static.get(as_node, nxt)
    nodes = flow.rerun(start)
    includes_code_fix = "code_fix" in nodes
    past_gate = sorted(set(nxt) & flow.after_gate)
    cid = checkpoint_id_of(snap)
    rerun = cid == line.head
    plan: dict[str, Any] = {
        "checkpoint_id": cid,
        "nodes": nodes,
        "includes_code_fix": includes_code_fix,
        "pauses_at_approval": GATE in nodes,
        "allowed": bool(nxt) and not past_gate,
        "reason": None,
        "suggested_checkpoint": None,
        # from the newest checkpoint the run continues on its branch; from an older one it branches
        "kind": "rerun" if rerun else "branch",
        "label": "re-run on the current branch" if rerun else f"new branch from checkpoint {cid}",
        "evidence": basis,
        "with_current_evidence": bool(with_current_evidence),
        "fork_effect": fork_effect,
        "warnings": [],
    }
    if not nxt:
        plan["reason"] = "the run had ended at this checkpoint: there is nothing to run again"
    elif past_gate:
        plan["reason"] = (f"this checkpoint is past the approval gate: running {', '.join(past_gate)} again would "
                          "reuse the old decision without a new approval; replay from the gate instead")
    else:
        plan["reason"] = ("re-runs " + ", ".join(nodes) + "; the approval gate fires again, so code_fix cannot run "
                          "without a new approval")
    if basis["moved_out"]:
        plan["warnings"].append(
            f"{basis['moved_out']} of this checkpoint's {counted(basis['at_checkpoint']['events'], 'event')} now belong to "
            f"{', '.join(basis['moved_to'])} (split or merged since): the branch "
            + ("leaves them out of its evidence" if edits else "is analysed again without them"))
    if basis["newer_evidence"] and not with_current_evidence:
        plan["warnings"].append(
            f"this checkpoint's analysis rests on {counted(basis['at_checkpoint']['events'], 'event')} up to "
            f"{basis['at_checkpoint']['newest_event_at']}; the incident has {counted(basis['newer_events'], 'newer event')} "
            f"({basis['now']['events']} in all): the branch will not see them unless replayed with the current evidence")
    if fork_effect == "keeps_recommendation":
        plan["warnings"].append("the edit sets both the analysis and the recommendation: recommend does not re-run, "
                                "so the recommendation stays as edited; the fix proposal is derived again")
    elif fork_effect == "as_is" and edits:
        plan["warnings"].append("the edited values land before the nodes that write them: "
                                + ", ".join(nodes) + " run again and may overwrite them")
    if not plan["allowed"]:
        for ancestor in line.ancestors(cid)[1:]:
            cand = engine.graph.get_state(checkpoint_config(incident_id, ancestor))
            if tuple(cand.next) == (GATE,):
                plan["suggested_checkpoint"] = ancestor
                break
    return plan
