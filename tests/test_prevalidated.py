"""Models built and copied without validation (pipeline/prevalidated.py) are the models pydantic
builds and copies: equal, with the same fields set, private values, JSON, copies and pickles.
These tests fail when pydantic changes what an instance's slots hold, before a stored event does."""
from __future__ import annotations

import copy
import pickle
from datetime import datetime, timezone

import pytest
from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError

from pipeline.prevalidated import SLOTS, builder, copied, hold_shared
from pipeline.state import LogEvent

VALUES = dict(event_id="e1", time=datetime(2026, 11, 28, 10, 1, 2, tzinfo=timezone.utc), message="charge failed",
              service="pay", host=None, level="ERROR", exception="java.lang.IllegalStateException", stack=None,
              trace_id="t1", fields={"n": {"deep": [1, 2]}}, source="app.log", position="app.log@0")


class Plain(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    tags: list[str]


class WithPrivate(BaseModel):
    model_config = ConfigDict(extra="ignore", validate_assignment=True)
    name: str
    _cache: dict = PrivateAttr(default_factory=dict)
    _seen: int = PrivateAttr(default=0)


def _same(built: BaseModel, validated: BaseModel) -> None:
    assert type(built) is type(validated)
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set
    assert built.__pydantic_extra__ == validated.__pydantic_extra__
    assert built.__pydantic_private__ == validated.__pydantic_private__
    assert list(built.__dict__) == list(validated.__dict__)
    assert built.model_dump_json() == validated.model_dump_json()
    assert pickle.loads(pickle.dumps(built)) == validated
    assert copy.deepcopy(built) == validated and built.model_copy() == validated


def test_pydantic_instances_still_live_in_the_slots_written_by_hand():
    assert BaseModel.__slots__ == SLOTS
    event = LogEvent(**VALUES)
    assert {slot: type(getattr(event, slot)) for slot in SLOTS} == {
        "__dict__": dict, "__pydantic_fields_set__": set, "__pydantic_extra__": type(None),
        "__pydantic_private__": dict}


@pytest.mark.parametrize("cls, values", [
    (LogEvent, VALUES),
    (Plain, {"name": "a", "tags": ["x", "y"]}),
    (WithPrivate, {"name": "a"}),
])
def test_a_model_built_from_valid_values_is_the_one_validation_builds(cls, values):
    _same(builder(cls)(dict(values)), cls(**values))


def test_a_built_models_private_values_and_assignment_work_as_a_validated_ones():
    built, validated = builder(WithPrivate)({"name": "a"}), WithPrivate(name="a")
    built._cache["k"] = 1
    assert builder(WithPrivate)({"name": "b"})._cache == {}  # each instance its own default
    built._seen = validated._seen = 3
    assert built._seen == 3
    with pytest.raises(ValidationError):
        built.name = 5  # validate_assignment still holds
    built.name = "c"
    assert built.model_fields_set == {"name"}


def test_a_model_keeping_extra_values_is_refused():
    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")
        name: str

    with pytest.raises(TypeError, match="extra"):
        builder(Open)


def test_a_copy_with_new_values_is_model_copys_but_for_them():
    event = LogEvent(**VALUES)
    event._content_id = "c1"
    fields = {"n": {"deep": [1, 2]}}
    made = copied(event, {**event.__dict__, "fields": fields})
    _same(made, event.model_copy(update={"fields": fields}))
    assert made.fields is fields and made.__pydantic_private__ is not event.__pydantic_private__
    assert made.__pydantic_private__ == {"_content_id": "c1", "_content_line": None}


def test_a_model_holding_shared_sets_reads_and_copies_as_before():
    event, alike = LogEvent(**VALUES), LogEvent(**VALUES)
    shared_set, shared_private = frozenset(event.model_fields_set), dict(event.__pydantic_private__)
    for model in (event, alike):
        hold_shared(model, fields_set=shared_set, private=shared_private)
    assert event.model_fields_set is alike.model_fields_set
    assert event == alike == LogEvent(**VALUES)
    _same(copied(event, dict(event.__dict__)), LogEvent(**VALUES))
