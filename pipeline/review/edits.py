"""Reviewer edits of an incident's state: dotted editable fields, validated strictly by the state
schema before anything is written, so a refused edit leaves no checkpoint behind."""
from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from pipeline import storable
from pipeline.analyst import theirs
from pipeline.analyst.offline import OfflineAnalyst
from pipeline.errors import InvalidEdit, UsageError
from pipeline.knowledge.index import KnowledgeBase
from pipeline.state import EDITABLE_FIELDS, IncidentState

# an edit lands as the output of one of these nodes: `recommend` keeps the gate where it is,
# `rca` means "as if the analysis had said this" and redoes the recommendation from it
EDIT_AS_NODES = ("recommend", "rca")


def check_edit_fields(edits: dict[str, Any] | None) -> dict[str, Any]:
    """Edits must name editable fields; anything else is refused before any state is read."""
    if not edits:
        raise UsageError("no edits given: use FIELD=JSON with one of " + ", ".join(EDITABLE_FIELDS))
    for field, value in edits.items():
        if field not in EDITABLE_FIELDS:
            raise InvalidEdit(f"{_shown(field)} is not an editable field; editable: {', '.join(EDITABLE_FIELDS)}",
                              field=field)
        reason = storable.problem(value)
        if reason:
            raise InvalidEdit(f"{field}: {reason}", field=field)
    return edits


def _shown(field: str) -> str:
    """A field name as typed, or quoted when it holds what would break a one-line message."""
    if field.isprintable() and len(field) <= 60:
        return field
    shown = ascii(field)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def edited_values(state: IncidentState, edits: dict[str, Any], *, kb: KnowledgeBase | None = None,
                  reviewer: str | None = None) -> dict[str, Any]:
    """The top-level state values after applying dotted edits, validated strictly by the state schema.
    With the knowledge base, a category the edit changes comes with its own analysis (`category_set`); a root
    cause the edit writes is marked as the reviewer's (`theirs.written_note`), so the recommendation leads with it."""
    values = _edited(state, edits)
    values = category_set(state, values, edits, kb=kb, reviewer=reviewer or "") if kb is not None else values
    rca = values.get("rca")
    if "rca.root_cause" in edits and rca is not None and (state.rca is None or rca.root_cause != state.rca.root_cause):
        # their cause, marked so that what is derived from it (recommend, propose_fix) follows it (issue 36)
        values = {**values, "rca": theirs.with_written_note(rca, reviewer or "")}
    return values


def category_set(state: IncidentState, values: dict[str, Any], edits: dict[str, Any], *, kb: KnowledgeBase,
                 reviewer: str) -> dict[str, Any]:
    """A reviewer's new category with an analysis that agrees with it: the root cause says that reviewer
    set it, then what the events say and the new category's doc, which the analysis now rests on (its
    quotes, notes and confidence: OfflineAnalyst.set_by_reviewer), not the old category's paragraph;
    every other `rca.*` field the reviewer set stays as they set it. Written in their edit's checkpoint,
    so it stays theirs (the audit and the backtests read who did what), never the analyst's answer."""
    rca = values.get("rca")
    if "rca.category" not in edits or rca is None or state.rca is None or rca.category == state.rca.category:
        return values
    edited = state.model_copy(update=values)
    redone = OfflineAnalyst(kb).set_by_reviewer(edited, rca.category, reviewer)
    theirs = {f.partition(".")[2] for f in edits if f.startswith("rca.")}
    return {**values, "rca": redone.model_copy(update={name: getattr(rca, name) for name in theirs})}


def _edited(state: IncidentState, edits: dict[str, Any]) -> dict[str, Any]:
    check_edit_fields(edits)
    data = state.model_dump()
    for field, value in edits.items():
        top, _, sub = field.partition(".")
        if sub:
            if data.get(top) is None:
                raise InvalidEdit(f"{field}: there is no {top} to edit at this point of the run", field=field)
            data[top][sub] = value
        else:
            data[top] = value
    try:
        edited = IncidentState.model_validate(data, strict=True)
    except ValidationError as exc:
        errors = exc.errors()
        first = ".".join(str(p) for p in errors[0]["loc"]) if errors else None
        # at most a few, on one line: a huge wrong list would otherwise make a huge message
        message = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in errors[:3])
        message += f"; and {len(errors) - 3} more" if len(errors) > 3 else ""
        message = " ".join(message.split())
        raise InvalidEdit(f"invalid edit: {message}", field=first) from exc
    return {top: getattr(edited, top) for top in dict.fromkeys(f.partition(".")[0] for f in edits)}


