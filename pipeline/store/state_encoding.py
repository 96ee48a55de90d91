"""The state's values in LangGraph's msgpack, byte for byte, without its search for a type.

LangGraph's serializer hands every object msgpack cannot write to `_msgpack_default`, which tries
its kinds one after another (a pydantic model first; a datetime only after a dozen `hasattr` and
`isinstance` probes that fail by raising) and writes each model's dump with a second call of its
own. Our checkpoints are almost all our state classes and the datetimes in them: about 60 such
objects an incident, each paying that walk. Here those two kinds are written first, by exact
class, into the same ext records LangGraph writes (a pydantic v2 model: its module, class name,
`model_dump()` and "model_validate_json"; a datetime: "datetime", "datetime", its isoformat and
"fromisoformat"); everything else goes on to LangGraph's own function. The bytes are the same
(tests/test_checkpoint_serializer.py compares them with LangGraph's on whole states), so what is
stored and how it reads back do not change.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

import ormsgpack
from langgraph.checkpoint.serde import jsonplus

from pipeline.state import STATE_CLASSES

# LangGraph's ext codes and packing options (langgraph/checkpoint/serde/jsonplus.py)
EXT_METHOD_SINGLE_ARG = jsonplus.EXT_METHOD_SINGLE_ARG
EXT_PYDANTIC_V2 = jsonplus.EXT_PYDANTIC_V2
OPTION = jsonplus._option

_MODELS = {cls: (cls.__module__, cls.__name__) for cls in STATE_CLASSES}


def _default(obj: Any) -> Any:
    cls = obj.__class__
    names = _MODELS.get(cls)
    if names is not None:
        return ormsgpack.Ext(EXT_PYDANTIC_V2, ormsgpack.packb(
            (names[0], names[1], obj.model_dump(), "model_validate_json"), default=_default, option=OPTION))
    if cls is datetime:
        return ormsgpack.Ext(EXT_METHOD_SINGLE_ARG, ormsgpack.packb(
            ("datetime", "datetime", obj.isoformat(), "fromisoformat"), option=OPTION))
    return jsonplus._msgpack_default(obj)


def packed(obj: Any) -> bytes:
    """`obj` as LangGraph's serializer packs it (its "msgpack" type)."""
    return ormsgpack.packb(obj, default=_default, option=OPTION)
