"""Run a backtest: each selected incident's analysis redone by the candidate from a copy of its
checkpoint before `rca`, outside the graph (see the package's docstring), its result one row."""
from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Callable, cast

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from pipeline.backtest.candidate import Candidate
from pipeline.backtest.human import analysis_points, human_outcome
from pipeline.engine import Engine, nodes
from pipeline.errors import UsageError
from pipeline.state import CLOSED_STATUSES, IncidentState
from pipeline.store import backtests, checkpoints
from pipeline.store.owners import process_owner

STATUS_CHOICES = {"decided": CLOSED_STATUSES, "paused": ("awaiting_approval",),
                  "all": (*CLOSED_STATUSES, "awaiting_approval")}


@dataclass
class BacktestRun:
    backtest_id: str
    candidate: str
    resumed: bool
    total: int
    analysed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    already_done: int = 0

    def as_json(self) -> dict:
        return {"backtest_id": self.backtest_id, "candidate": self.candidate, "resumed": self.resumed,
                "total": self.total, "analysed": len(self.analysed), "skipped": len(self.skipped),
                "already_done": self.already_done}


def selection_key(candidate: Candidate, *, statuses: tuple[str, ...], since: datetime | None,
                  limit: int | None, selection: list[str]) -> str:
    """What makes two invocations 'the same command': the candidate and the incidents it selects."""
    text = json.dumps([candidate.description, sorted(statuses), limit, selection])
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def run_backtest(engine: Engine, candidate: Candidate, *, status: str = "decided", since: datetime | None = None,
                 limit: int | None = None, resume: str | None = None,
                 progress: Callable[[str], None] | None = None) -> BacktestRun:
    """Start a backtest, or resume one: `resume` by id, or else the unfinished one of the same
    candidate and selection whose worker is gone. Results already recorded are not redone."""
    if status not in STATUS_CHOICES:
        raise UsageError(f"--status must be one of {', '.join(STATUS_CHOICES)}")
    if limit is not None and limit <= 0:
        raise UsageError("--limit must be a positive number of incidents")
    owner = process_owner()
    records = engine.records
    if resume is not None:
        row = backtests.claim_unfinished(records, candidate_key="", owner=owner, backtest_id=resume)
        if row is None:
            found = backtests.backtest(records, resume)
            raise UsageError(f"backtest {resume} is {found['status']}" + (
                "" if found["status"] != "running" else ": another process is running it"))
    else:
        selection = backtests.select_incidents(records, statuses=STATUS_CHOICES[status], since=since, limit=limit)
        key = selection_key(candidate, statuses=STATUS_CHOICES[status], since=since, limit=limit, selection=selection)
        row = backtests.claim_unfinished(records, candidate_key=key, owner=owner)
        if row is None:
            row = {"backtest_id": f"bt-{uuid.uuid4().hex[:12]}", "selection": selection,
                   "candidate": candidate.description, "new": True}
            backtests.create(records, backtest_id=row["backtest_id"], candidate=candidate.description,
                             candidate_key=key, selection=selection, owner=owner)
    backtest_id = row["backtest_id"]
    done = backtests.done_ids(records, backtest_id)
    run = BacktestRun(backtest_id=backtest_id, candidate=row["candidate"], resumed=not row.get("new"),
                      total=len(row["selection"]), already_done=len(done))
    try:
        for incident_id in row["selection"]:
            if incident_id in done:
                continue
            result = analyse(engine, candidate, incident_id)
            if backtests.add_result(records, backtest_id, result):
                (run.skipped if result["skipped"] else run.analysed).append(incident_id)
            if progress:
                progress(incident_id)
    except BaseException:
        backtests.release(records, backtest_id, owner)  # resumable by the same command or --resume
        raise
    backtests.finish(records, backtest_id, owner)
    return run


def analyse(engine: Engine, candidate: Candidate, incident_id: str) -> dict:
    """One incident's result row: the live analysis, the candidate's, and the humans' decision."""
    records = engine.records
    row = records.incident(incident_id)
    store = cast(checkpoints.CheckpointStore, engine.graph.checkpointer)  # ours, as the composition root compiles it
    points = analysis_points(checkpoints.checkpoint_rows(store, incident_id))
    # without a start (a compacted run) the branch cannot place the audit's steps: all of them count
    human = human_outcome(row, records.audit(incident_id), points if points.start else None)
    result = {"incident_id": incident_id, "outcome": human["outcome"], "human_decision": human["decision"],
              "human_edit": human["edits"], "human_category": human["category"], "skipped": None}
    start, gate = points.start, points.live
    if start is None:
        result["skipped"] = ("no checkpoint before rca is kept (retention compacted the incident)"
                             if row.get("pruned_at") else "the run has no checkpoint before rca")
        result.update(old_category=row.get("category"), old_confidence=row.get("confidence"))
        return result
    result["checkpoint_id"] = start
    state = state_at(engine, incident_id, start)
    if gate is not None:
        old = state_at(engine, incident_id, gate)
        result.update(old_category=old.rca.category if old.rca else None,
                      old_confidence=old.rca.confidence if old.rca else None,
                      old_root_cause=old.rca.root_cause if old.rca else None,
                      old_proposal_hash=old.proposal.hash if old.proposal else None,
                      old_fix=fix_said(old, engine.settings.code_fix_min_confidence, engine.kb))
    new = analyse_state(state, candidate)
    result.update(new_category=new.rca.category if new.rca else None,
                  new_confidence=new.rca.confidence if new.rca else None,
                  new_root_cause=new.rca.root_cause if new.rca else None,
                  new_proposal_hash=new.proposal.hash if new.proposal else None,
                  new_fix=fix_said(new, candidate.deps.code_fix_min_confidence, candidate.deps.kb))
    return result


def fix_said(state: IncidentState, threshold: float, kb) -> dict:
    """What an analysis' fix proposal says, for a reviewer comparing two (the pairwise review): its
    plan, the file its diff changes and how many lines, the confidence against the code-fix
    threshold, and why there is none."""
    proposal = state.proposal
    diff = (proposal.diff if proposal else None) or ""
    changed = sum(1 for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---")))
    return {"plan": list(proposal.plan) if proposal else [], "target_file": proposal.target_file if proposal else None,
            "diff_lines": changed, "confidence": state.rca.confidence if state.rca else None, "threshold": threshold,
            "why_not": None if proposal else (nodes.not_eligible_reason(state, threshold, kb) or None)}


def analyse_state(state: IncidentState, candidate: Candidate) -> IncidentState:
    """rca → recommend → propose_fix (after rag, for other docs) on a copy, with the candidate's deps."""
    runtime = Runtime(context=candidate.deps)
    steps = ((nodes.rag,) if candidate.rerun_rag else ()) + (nodes.rca, nodes.recommend, nodes.propose_fix)
    for step in steps:
        update = step(state, runtime)
        update.pop("events", None)  # the node trace is the live run's; a copy keeps none
        state = state.model_copy(update=update)
    return state


def state_at(engine: Engine, incident_id: str, checkpoint_id: str) -> IncidentState:
    """A copy of the incident's state at one of its checkpoints."""
    config: RunnableConfig = {"configurable": {"thread_id": incident_id, "checkpoint_ns": "",
                                               "checkpoint_id": checkpoint_id}}
    return IncidentState.model_validate(engine.graph.get_state(config).values)
