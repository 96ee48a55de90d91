"""A checkpoint's values checked against the state, where both savers read a checkpoint.

Checkpoints are ours, but a row of the file or database can be edited (or damaged in a way that
still decodes): a value of the wrong type then reached the history, the decisions and the nodes'
inputs as tracebacks (`'str' object has no attribute 'id'`, LangGraph's "Before task with name
'approval'"), and one the model refused was revived unvalidated (an RCA of confidence 7 went on
to a fix proposal). Every channel value and pending write of a checkpoint read is checked here
against its field of IncidentState (the exact type: a dict where an RCA belongs is refused too,
so no reader finds one), and interrupts must be LangGraph's. The first that does not fit is
InvalidCheckpoint, naming the incident, the checkpoint and the field. Values are already our
objects, so the check is a type walk, not a second parse.
"""
from __future__ import annotations

import functools
from typing import Annotated, Any, TypeVar

from langgraph.checkpoint.base import CheckpointTuple
from langgraph.types import Interrupt, Overwrite
from pydantic import TypeAdapter, ValidationError

from pipeline.errors import InvalidCheckpoint
from pipeline.state import IncidentState, status_named

INTERRUPT = "__interrupt__"
_Found = TypeVar("_Found", bound=CheckpointTuple | None)


@functools.lru_cache(maxsize=None)
def _adapter(name: str) -> TypeAdapter[Any]:
    info = IncidentState.model_fields[name]
    return TypeAdapter(Annotated[(info.annotation, *info.metadata)]  # type: ignore[arg-type]  # every field is annotated
                       if info.metadata else info.annotation)


def _fits(name: str, value: Any) -> str | None:
    """Why a channel's value does not fit its field (None when it does)."""
    if name == "outcome" and isinstance(value, str):
        value = status_named(value)  # the state's own before-validator: 0.1 threads ended "fixed"
    try:
        valid = _adapter(name).validate_python(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return f"{where + ': ' if where else ''}{first['msg']}"[:240]
    if valid != value:  # coerced: a dict or a string where our object belongs
        held = str(IncidentState.model_fields[name].annotation).replace("pipeline.state.", "")
        return f"a {type(value).__name__} where the state holds {held}"
    return None


def check(found: _Found, *, incident_id: str | None = None) -> _Found:
    """The checkpoint tuple (or None) as read, once every value of it fits; else InvalidCheckpoint."""
    if found is None:
        return found
    configurable = found.config["configurable"]
    thread = incident_id or str(configurable.get("thread_id"))
    checkpoint_id = configurable.get("checkpoint_id")
    for name, value in (found.checkpoint.get("channel_values") or {}).items():
        if name in IncidentState.model_fields:
            reason = _fits(name, value)
            if reason:
                raise InvalidCheckpoint(thread, checkpoint_id, name, reason)
    for _task, channel, value in found.pending_writes or ():
        if isinstance(value, Overwrite):  # a value written past the reducer (a split's evidence)
            value = value.value
        if channel in IncidentState.model_fields:
            reason = _fits(channel, value)
            if reason:
                raise InvalidCheckpoint(thread, checkpoint_id, f"{channel} (a pending write)", reason)
        elif channel == INTERRUPT:
            items = value if isinstance(value, (list, tuple)) else [value]
            if not all(isinstance(i, Interrupt) and isinstance(i.id, str) for i in items):
                raise InvalidCheckpoint(thread, checkpoint_id, INTERRUPT, "not an interrupt LangGraph wrote")
    return found
