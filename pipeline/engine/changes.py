"""Every human change to a run's state is audited, even when the reviewer's process dies between
writing the change (`update_state`) and writing its audit entry.

The change's checkpoint carries who made it and why, in its metadata (LangGraph merges the
config's `metadata` into the checkpoint's). The audit entry written after it names the same
change id. An actor that takes over a dead process's claim walks back from the thread's head
and audits every change checkpoint whose id no audit entry names.
"""
from __future__ import annotations

import uuid
from typing import Any, Iterable

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot

from pipeline.engine import Engine
from pipeline.engine.graph import thread_config
from pipeline.state import IncidentState

CHANGE = "incidentiq_change"
ACTION, REVIEWER, FIELDS = "incidentiq_action", "incidentiq_reviewer", "incidentiq_fields"
MAX_WALK = 40  # checkpoints back from the head: a dead change is at most a re-run behind it


def change_config(config: RunnableConfig, *, action: str, reviewer: str,
                  fields: Iterable[str]) -> tuple[RunnableConfig, str]:
    """`config` for an update_state that records a person's change, and that change's id."""
    change_id = uuid.uuid4().hex
    # plain strings: LangGraph keeps only scalar values of a config's metadata
    metadata = {**config.get("metadata", {}), CHANGE: change_id, ACTION: action, REVIEWER: reviewer,
                FIELDS: ",".join(sorted(fields))}
    return {**config, "metadata": metadata}, change_id


def audit_orphaned_changes(engine: Engine, incident_id: str) -> int:
    """Audit the changes a dead process wrote but did not audit; returns how many."""
    audited = {row["after"].get("change_id") for row in engine.records.audit(incident_id)}
    snaps: list[StateSnapshot] = []
    snap: StateSnapshot | None = engine.graph.get_state(thread_config(incident_id))
    while snap is not None and snap.values and len(snaps) < MAX_WALK:
        snaps.append(snap)
        snap = engine.graph.get_state(snap.parent_config) if snap.parent_config else None
    found = 0
    for i, snap in enumerate(snaps):
        meta: dict[str, Any] = dict(snap.metadata or {})  # our change keys are not CheckpointMetadata's
        if not meta.get(CHANGE) or meta[CHANGE] in audited:
            continue
        parent = snaps[i + 1] if i + 1 < len(snaps) else None
        fields = [f for f in str(meta.get(FIELDS) or "").split(",") if f]
        before = values_at(IncidentState.model_validate(parent.values) if parent else None, fields)
        after = values_at(IncidentState.model_validate(snap.values), fields)
        engine.records.add_audit(
            incident_id=incident_id, reviewer=str(meta.get(REVIEWER) or "unknown"), action=str(meta.get(ACTION)),
            checkpoint_before=_id(parent), checkpoint_after=_id(snap),
            before=before, after={**after, "change_id": meta[CHANGE]},
            note="recorded from the change's checkpoint: the reviewer's process died before auditing it")
        audited.add(meta[CHANGE])
        found += 1
    return found


def values_at(state: IncidentState | None, fields: Iterable[str]) -> dict[str, Any]:
    """The JSON values of dotted fields in a state (None where absent), for the audit log."""
    data = state.model_dump(mode="json") if state else {}
    out = {}
    for field in fields:
        value: Any = data
        for part in field.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        out[field] = value
    return out


def _id(snap: StateSnapshot | None) -> str | None:
    return snap.config["configurable"].get("checkpoint_id") if snap is not None else None
