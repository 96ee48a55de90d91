"""Pydantic models built and copied without validating their values again: the one place that
writes pydantic's instance slots by hand.

A pydantic v2 instance lives in four slots (`SLOTS`): its field values (`__dict__`), the names
of the fields set, the extra values and the private attributes. Reading a line spent about a
tenth of its time validating values the reader had just built with their exact types, and
`model_copy`'s generic copies cost the stored event cache as much again. `model_construct`
would be the public way in, but our models make it validate (pipeline/state.py), so that a
forged checkpoint is never revived unchecked. Only models without extra values ("forbid" or
"ignore") are built here. tests/test_prevalidated.py fails when pydantic changes what the
slots hold.
"""
from __future__ import annotations

from typing import Any, Callable, Collection, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

# the slots a pydantic v2 instance has, each written below (the test checks pydantic's are these)
SLOTS = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__", "__pydantic_private__")
_set = object.__setattr__
_IMMUTABLE = (type(None), bool, int, float, str, bytes, tuple, frozenset)


def builder(cls: type[M]) -> Callable[[dict[str, Any]], M]:
    """A function building `cls` as `cls(**values)` does, from a dict of all its fields' values each
    of the exact type validation gives it; the dict becomes the instance's (pass a fresh one)."""
    if cls.model_config.get("extra") == "allow":
        raise TypeError(f"{cls.__name__} keeps extra values: build it by validation")
    attrs = cls.__private_attributes__
    private = {name: attr.get_default() for name, attr in attrs.items()}
    # defaults one dict copy can share (LogEvent's: None); else each instance's made as pydantic makes them
    shared = all(attr.default_factory is None and type(value) in _IMMUTABLE for (name, attr), value
                 in zip(attrs.items(), private.values()))
    new = cls.__new__

    def build(values: dict[str, Any]) -> M:
        model = new(cls)
        _set(model, "__dict__", values)
        _set(model, "__pydantic_fields_set__", set(values))
        _set(model, "__pydantic_extra__", None)
        _set(model, "__pydantic_private__", None if not attrs else dict(private) if shared else {
            name: attr.get_default(call_default_factory=True) for name, attr in attrs.items()})
        return model

    return build


def copied(model: M, values: dict[str, Any]) -> M:
    """`model`'s copy as `model_copy()` makes it (which fields were set, its private values),
    holding `values` (a fresh dict of the same fields' values) instead of a shallow copy."""
    copy = model.__class__.__new__(model.__class__)
    _set(copy, "__dict__", values)
    _set(copy, "__pydantic_fields_set__", set(model.__pydantic_fields_set__))
    _set(copy, "__pydantic_extra__", None)
    private = model.__pydantic_private__
    _set(copy, "__pydantic_private__", dict(private) if private is not None else None)
    return copy


def hold_shared(model: BaseModel, *, fields_set: Collection[str], private: dict[str, Any] | None) -> None:
    """Makes `model` hold these objects as its fields set and private values, shared with other
    instances (equal to its own: the caller's promise); such a model is only read, and copied."""
    _set(model, "__pydantic_fields_set__", fields_set)
    _set(model, "__pydantic_private__", private)
