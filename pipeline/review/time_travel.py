"""Time travel: the incident's checkpoint history and tree, comparisons between any two
checkpoints, the plan of a re-run before it runs, and the re-runs: a replay from a past checkpoint
(a re-run, or a new branch) and a fork with edited values. Each re-run runs under a claim."""
from __future__ import annotations

from typing import Any

from langgraph.types import Overwrite, StateSnapshot
from pydantic import ValidationError

from pipeline.engine import changes
from pipeline.engine.changes import values_at
from pipeline.engine.graph import thread_config
from pipeline.errors import InvalidEdit, UsageError
from pipeline.review import history
from pipeline.review.claims import Claims
from pipeline.review.edits import check_edit_fields, edited_values
from pipeline.review.history import state_json
from pipeline.review.identity import Actor
from pipeline.state import IncidentState, LogEvent, merge_evidence
from pipeline.store import checkpoints


class TimeTravel(Claims):
    """The incident's checkpoints as a history and a tree, what a re-run from one would do, and
    the re-runs themselves."""

    def history(self, incident_id: str, *, limit: int = 50, before: str | None = None) -> list[dict[str, Any]]:
        """Checkpoints newest first with field-level changes, lanes and the current branch; paged."""
        self.records.incident(incident_id)
        line = history.lineage(self.engine, incident_id)
        if before is not None and before not in line.parent:
            history.snapshot_at(self.engine, incident_id, before, line)  # raises CheckpointNotFound
        snaps = history.snapshots(self.engine, incident_id, limit=limit, before=before)
        made_by = history.human_actions(self.records.audit(incident_id), line)
        return history.entries(self.engine, incident_id, snaps, line, made_by)

    def checkpoint(self, incident_id: str, checkpoint_id: str, *, with_plan: bool = False) -> dict[str, Any]:
        """One checkpoint: its history entry, the full state there and its changes; `with_plan`
        adds what a replay from it would do (`rerun_plan`), read in the same pass."""
        self.records.incident(incident_id)
        line = history.lineage(self.engine, incident_id)
        snap = history.snapshot_at(self.engine, incident_id, checkpoint_id, line)
        made_by = history.human_actions(self.records.audit_checkpoints(incident_id), line)
        item = history.entries(self.engine, incident_id, [snap], line, made_by)[0]
        parent_id = item["parent_checkpoint_id"]
        parent = history.snapshot_at(self.engine, incident_id, parent_id, line) if parent_id in line.parent else None
        out = {"checkpoint": item, "state": state_json(snap.values), "changes": item["changes"],
               "runs": history.node_runs(snap, parent, item["writes_by"]),
               "input": state_json(parent.values) if parent is not None else None}
        if with_plan:
            out["plan"] = history.rerun_plan(self.engine, incident_id, snap, line)
        return out

    def compare(self, incident_id: str, from_checkpoint: str, to_checkpoint: str) -> dict[str, Any]:
        """The field-level changes from one checkpoint of the incident to another (any two, on any
        branch: what a fork changed against the branch it left, what a replay changed since)."""
        self.records.incident(incident_id)
        line = history.lineage(self.engine, incident_id)
        first = history.snapshot_at(self.engine, incident_id, from_checkpoint, line)
        second = history.snapshot_at(self.engine, incident_id, to_checkpoint, line)
        return {"from": from_checkpoint, "to": to_checkpoint, "changes": history.compare(first, second)}

    def tree(self, incident_id: str, *, limit: int | None = None) -> dict[str, Any]:
        """The checkpoints (the newest `limit`, or all) with their parent edges, the current branch,
        the number of branches and `total`; read from checkpoint metadata, no state deserialised
        (a checkpoint's changes and state: `checkpoint()`)."""
        self.records.incident(incident_id)
        line = history.lineage(self.engine, incident_id)
        shown = checkpoints.checkpoint_rows(history.our_store(self.engine), incident_id, newest=limit)
        made_by = history.human_actions(self.records.audit_checkpoints(incident_id), line)
        nodes = history.tree_entries(self.engine, incident_id, shown, line, made_by)[::-1]  # newest first
        edges = [[n["parent_checkpoint_id"], n["checkpoint_id"]] for n in nodes if n["parent_checkpoint_id"]]
        return {"nodes": nodes, "edges": edges, "current": [c for c in reversed(line.order) if c in line.current],
                "branches": line.branches, "total": len(line.order)}

    def rerun_plan(self, incident_id: str, checkpoint_id: str, *, edits: dict[str, Any] | None = None,
                   with_current_evidence: bool = False) -> dict[str, Any]:
        """What a replay (or, with `edits`, a fork) from the checkpoint would do, before it does it:
        the nodes that run again, whether it may run, whether it continues the current branch
        (`kind` rerun) or starts a new one (`branch`), which evidence the analysis will rest on
        against what the incident has now (`evidence`, `newer_evidence`), and plain `warnings`."""
        self.records.incident(incident_id)
        if edits:
            check_edit_fields(edits)
        line = history.lineage(self.engine, incident_id)
        snap = history.snapshot_at(self.engine, incident_id, checkpoint_id, line)
        return history.rerun_plan(self.engine, incident_id, snap, line, edits=edits,
                                  with_current_evidence=with_current_evidence)

    def edit_effect(self, edits: dict[str, Any]) -> dict[str, Any]:
        """What an edit of a paused incident does (Edit & approve, the State tab): the node it lands
        as, the nodes that re-run from it and a sentence saying so; the rule forks follow
        (`rerun_plan(..., edits=)` says the same for a past checkpoint)."""
        check_edit_fields(edits)
        return history.edit_effect(edits, history.Flow.of(self.engine))

    def replay(self, incident_id: str, *, checkpoint_id: str, actor: Actor | None = None,
               reviewer: str | None = None, with_current_evidence: bool = False) -> dict[str, Any]:
        """Re-run from a past checkpoint (from the newest one: a re-run on the current branch; from an
        older one: a new branch); the gate fires again (no old answer reused). With
        `with_current_evidence`, the incident's stored events are merged in first (as the runner
        merges new evidence, as intake's output), so the whole analysis re-runs on them."""
        with self._acting(incident_id, "replay", actor, reviewer) as who:
            return self._replay(incident_id, checkpoint_id=checkpoint_id, reviewer=who,
                                with_current_evidence=with_current_evidence)

    def _replay(self, incident_id: str, *, checkpoint_id: str, reviewer: Actor,
                with_current_evidence: bool = False) -> dict[str, Any]:
        target, plan = self._replayable(incident_id, checkpoint_id, with_current_evidence=with_current_evidence)
        claim = self._claim_any(incident_id)
        try:
            before = self.graph.get_state(thread_config(incident_id))
            try:  # the run's input checkpoint holds no analysis yet
                self._keep_rule(incident_id, IncidentState.model_validate(target.values or {}))
            except ValidationError:
                self._keep_rule(incident_id)
            note = (f"{plan['label']}: re-ran {', '.join(plan['nodes'])}"
                    + ("; with the current evidence" if with_current_evidence else "")
                    + "".join(f" [{w}]" for w in plan["warnings"]))
            # on the current evidence every stored event is in the run: none is left "arrived since"
            analysed: dict[str, Any] = {}
            with self._audited_on_failure(claim, action="replay", reviewer=reviewer, before=before, note=note):
                start = target.config
                moved = set(plan["evidence"]["moved_ids"])
                # the incident's stored events now (read once): a split's events belong to another
                # incident and are not among them; all of them are in the run, so all are analysed
                current = self.records.events_of(incident_id) if with_current_evidence else []
                if with_current_evidence:
                    analysed = {"merged_event_ids": [e.event_id for e in current], "analysed": True}
                if moved:  # a split took some of the checkpoint's events away: past the reducer, as a split does
                    start = self.graph.update_state(target.config, {"evidence": _without(target, moved, current)},
                                                    as_node="intake")
                elif with_current_evidence:
                    start = self.graph.update_state(target.config, {"evidence": current}, as_node="intake")
                self.graph.invoke(None, start, context=self.engine.deps)
            self._require_paused(incident_id)
            claim.finish(action="replay", reviewer=reviewer, before=before, closed_at=None, note=note, **analysed)
        finally:
            claim.close()
        return self.incident(incident_id)

    def fork(self, incident_id: str, *, checkpoint_id: str, actor: Actor | None = None, reviewer: str | None = None,
             edits: dict[str, Any]) -> dict[str, Any]:
        """Branch from a past checkpoint with edited values and run the branch to the gate."""
        with self._acting(incident_id, "fork", actor, reviewer) as who:
            return self._fork(incident_id, checkpoint_id=checkpoint_id, reviewer=who, edits=edits)

    def _fork(self, incident_id: str, *, checkpoint_id: str, reviewer: Actor, edits: dict[str, Any]) -> dict[str, Any]:
        """Branch from a past checkpoint with edited values and run the branch to the gate.

        The audit's before/after hold the edited fields as they were at that checkpoint and as
        edited, plus what else differs between the old and the new head.
        """
        check_edit_fields(edits)
        target, plan = self._replayable(incident_id, checkpoint_id, edits=edits)
        try:
            state = IncidentState.model_validate(target.values or {})
        except ValidationError:
            raise InvalidEdit(f"checkpoint {checkpoint_id} holds no state yet to edit (it is the run's input);"
                              " fork from a later checkpoint", field=next(iter(edits))) from None
        # refused here: nothing is written for an invalid fork; a new category comes with its own analysis
        values = edited_values(state, edits, kb=self.engine.kb, reviewer=reviewer.id)
        # an edit of the analysis re-runs what depends on it (recommend, propose_fix): see fork_as_node
        as_node, _ = history.fork_as_node(edits, history.Flow.of(self.engine), tuple(target.next))
        claim = self._claim_any(incident_id)
        try:
            before = self.graph.get_state(thread_config(incident_id))
            self._keep_rule(incident_id, state)
            edited = state.model_copy(update=values)
            audit: dict[str, Any] = dict(before_values=values_at(state, edits), after_values=values_at(edited, edits),
                         note=f"forked from checkpoint {checkpoint_id}: re-ran {', '.join(plan['nodes'])}"
                              + "".join(f" [{w}]" for w in plan["warnings"]))
            with self._audited_on_failure(claim, action="fork", reviewer=reviewer, before=before, **audit):
                change_cfg, change_id = changes.change_config(target.config, action="fork", reviewer=reviewer.id,
                                                              fields=edits)
                moved = set(plan["evidence"]["moved_ids"])
                if moved:  # the edited analysis stands; the evidence loses what a split took away
                    values = {**values, "evidence": _without(target, moved)}
                fork_cfg = self.graph.update_state(change_cfg, values, as_node=as_node)
                self.graph.invoke(None, fork_cfg, context=self.engine.deps)
            self._require_paused(incident_id)
            audit["after_values"] = {**audit["after_values"], "change_id": change_id, "edited": list(edits)}
            claim.finish(action="fork", reviewer=reviewer, before=before, closed_at=None, **audit)
        finally:
            claim.close()
        return self.incident(incident_id)

    def _replayable(self, incident_id: str, checkpoint_id: str, *, edits: dict[str, Any] | None = None,
                    with_current_evidence: bool = False) -> tuple[StateSnapshot, dict[str, Any]]:
        self.records.incident(incident_id)
        line = history.lineage(self.engine, incident_id)
        target = history.snapshot_at(self.engine, incident_id, checkpoint_id, line)
        plan = history.rerun_plan(self.engine, incident_id, target, line, edits=edits,
                                  with_current_evidence=with_current_evidence)
        if not plan["allowed"]:
            hint = f" (e.g. checkpoint {plan['suggested_checkpoint']})" if plan["suggested_checkpoint"] else ""
            raise UsageError(f"cannot re-run from {checkpoint_id}: {plan['reason']}{hint}")
        return target, plan


def _without(target: StateSnapshot, moved: set[str], current: list[LogEvent] | None = None) -> Overwrite:
    """The checkpoint's evidence without the events that now belong to another incident (and with
    the incident's `current` events), as the state's sample, replacing what the reducer would merge."""
    kept = [e for e in (target.values or {}).get("evidence") or [] if e.event_id not in moved]
    return Overwrite(merge_evidence([], kept + list(current or [])))
