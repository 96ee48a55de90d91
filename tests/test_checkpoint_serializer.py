"""The checkpoint serializer revives exactly our state classes, and nothing else."""
from __future__ import annotations

import sqlite3
from datetime import date, datetime, timedelta, timezone

import ormsgpack
import pytest
from langgraph.checkpoint.serde.jsonplus import EXT_CONSTRUCTOR_SINGLE_ARG, EXT_PYDANTIC_V2

from pipeline.store import checkpoint_format, checkpoint_values
from pipeline.engine.graph import thread_config
from pipeline.state import (
    RCA, ApprovalDecision, ErrorDoc, Finding, FixProposal, IncidentState, LogEvent, NodeEvent, Quote, Recommendation,
    Revision, Span, STATE_CLASSES,
)
from tests.support import paused_ids

T = datetime(2026, 11, 28, 10, 0, tzinfo=timezone.utc)
EVENT = LogEvent(event_id="e1", time=T, message="boom", service="svc", fields={"k": [1, 2]})
SAMPLES = [
    EVENT,
    ErrorDoc(doc_id="d", title="t", category="db_deadlock", score=0.5, fix_hints=[{"applies_to": "*.py"}]),
    RCA(category="db_deadlock", root_cause="r", confidence=0.7, evidence=["x"]),
    Recommendation(action="a", steps=["s"]),
    ApprovalDecision(action="approve", reviewer="ann", decided_at=T),
    FixProposal(plan=["p"], diff="--- a\n+++ b\n", idempotency_key="k"),
    NodeEvent(node="rca", detail="x"),
    Span(event_id="e1", field="message", start=0, end=4),
    Finding(kind="column", value="gift_card_id", event_ids=["e1"], spans=[Span(event_id="e1", start=8, end=20)]),
    Quote(event_id="e1", text="boom", spans=[[0, 4]], count=3),
    Revision(revision=1, feedback="check the pool", reviewer="ann",
             rca=RCA(category="db_deadlock", root_cause="r", confidence=0.7)),
    IncidentState(incident_id="INC-1", evidence=[EVENT], rca=RCA(category="unknown", root_cause="r", confidence=0.1)),
]


def test_every_state_class_is_covered_by_a_sample():
    assert {type(s) for s in SAMPLES} == set(STATE_CLASSES)


@pytest.mark.parametrize("obj", SAMPLES, ids=lambda o: type(o).__name__)
def test_state_classes_round_trip_as_their_own_type(obj):
    serde = checkpoint_format.serializer()
    revived = serde.loads_typed(serde.dumps_typed(obj))
    assert type(revived) is type(obj)
    assert revived == obj


def _langgraphs_bytes(obj) -> tuple[str, bytes]:
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    return JsonPlusSerializer(pickle_fallback=False).dumps_typed(obj)


@pytest.mark.parametrize("obj", SAMPLES + [
    [EVENT, EVENT.model_copy(update={"time": T.astimezone(timezone(timedelta(hours=-5)))})],
    {"when": T.replace(tzinfo=None), "fields": {"nested": [T, {"deeper": T}]}, "set": {1, 2}, "none": None},
    (NodeEvent(node="intake"), datetime(2026, 1, 1), date(2026, 1, 1), timedelta(seconds=3)),
], ids=lambda o: type(o).__name__)
def test_values_are_written_as_langgraph_writes_them_byte_for_byte(obj):
    """Our serializer finds our classes and datetimes first (store/state_encoding.py): what it
    stores must be the bytes LangGraph's own serializer writes, so old and new rows read alike."""
    assert checkpoint_format.serializer().dumps_typed(obj) == _langgraphs_bytes(obj)


def test_a_paused_incidents_checkpoint_is_written_as_langgraph_writes_it(paused_engine):
    saver = paused_engine.graph.checkpointer
    found = saver.get_tuple(thread_config(paused_ids(paused_engine)[0]))
    values = found.checkpoint["channel_values"]
    assert {"evidence", "log_window", "similar_docs", "rca", "events"} <= set(values)
    for channel, value in values.items():
        assert saver.serde.dumps_typed(value) == _langgraphs_bytes(value), channel
    for _task, channel, value in found.pending_writes:
        assert saver.serde.dumps_typed(value) == _langgraphs_bytes(value), channel


def test_a_subclass_of_a_state_class_is_left_to_langgraph():
    class Sub(NodeEvent):
        pass

    sub = Sub(node="rca")
    assert checkpoint_format.serializer().dumps_typed(sub) == _langgraphs_bytes(sub)


def test_what_langgraph_cannot_write_fails_as_it_does():
    with pytest.raises(TypeError):
        checkpoint_format.serializer().dumps_typed({"x": object()})
    with pytest.raises(TypeError):
        _langgraphs_bytes({"x": object()})


def test_an_unlisted_pydantic_class_is_not_revived():
    from pydantic import BaseModel

    class Intruder(BaseModel):
        x: int = 1

    serde = checkpoint_format.serializer()
    revived = serde.loads_typed(serde.dumps_typed({"v": Intruder()}))
    assert not isinstance(revived["v"], Intruder)


def _forged_ext(module: str, name: str, arg) -> ormsgpack.Ext:
    return ormsgpack.Ext(EXT_CONSTRUCTOR_SINGLE_ARG, ormsgpack.packb((module, name, arg)))


def _forged(module: str, name: str, arg) -> bytes:
    return ormsgpack.packb(_forged_ext(module, name, arg))


def test_a_forged_value_naming_os_system_is_not_executed(tmp_path):
    marker = tmp_path / "pwned"
    serde = checkpoint_format.serializer()
    revived = serde.loads_typed(("msgpack", _forged("os", "system", f"touch {marker}")))
    assert not marker.exists()
    assert revived == f"touch {marker}"  # returned as inert data, never called


def _unpacked(blob: bytes) -> dict:
    return ormsgpack.unpackb(blob, ext_hook=lambda code, data: ormsgpack.Ext(code, data),
                             option=ormsgpack.OPT_NON_STR_KEYS)


def test_a_forged_checkpoint_row_is_neither_executed_nor_revived(paused_engine, tmp_path):
    marker = tmp_path / "pwned"
    incident_id = paused_ids(paused_engine)[0]
    cfg = thread_config(incident_id)
    checkpoint_id = paused_engine.graph.get_state(cfg).config["configurable"]["checkpoint_id"]
    path = paused_engine.settings.data_dir / "checkpoints.sqlite"
    conn = sqlite3.connect(path)
    kind, blob = conn.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id=? AND checkpoint_id=?",
                              (incident_id, checkpoint_id)).fetchone()
    assert kind == checkpoint_values.PACKED_VALUES_TYPE  # its larger values stored once, compressed
    checkpoint = _unpacked(checkpoint_values.decompress(blob, kind))
    checkpoint["channel_values"]["title"] = _forged_ext("os", "system", f"touch {marker}")
    checkpoint["channel_values"]["severity"] = ormsgpack.Ext(EXT_PYDANTIC_V2, ormsgpack.packb(
        ("subprocess", "Popen", {"args": ["touch", str(marker)]}, "model_validate_json")))
    conn.execute("UPDATE checkpoints SET checkpoint=? WHERE thread_id=? AND checkpoint_id=?",
                 (checkpoint_values.compress(ormsgpack.packb(checkpoint, option=ormsgpack.OPT_NON_STR_KEYS)),
                  incident_id, checkpoint_id))
    # and a stored value (the RCA) forged in the values table
    rca_hash = checkpoint["channel_refs"]["rca"]
    conn.execute("UPDATE checkpoint_values SET type='msgpack~1', value=? WHERE thread_id=? AND hash=?",
                 (checkpoint_values.compress(_forged("os", "system", f"touch {marker}")), incident_id, rca_hash))
    conn.commit()
    conn.close()
    try:
        values = paused_engine.graph.get_state(cfg).values
    except Exception:  # noqa: BLE001 - refusing the forged row outright is also safe
        values = {}
    assert not marker.exists()
    assert values.get("title") in (None, f"touch {marker}")
    assert values.get("rca") in (None, f"touch {marker}")
    assert not any(type(v).__module__ in ("os", "subprocess") for v in dict(values).values())


IMPORT_ORDER_PROBE = """
import json, sys, tempfile, pathlib
import langgraph.graph, langgraph.checkpoint.serde.jsonplus  # langgraph first, before pipeline
from pydantic import BaseModel
from pipeline.composition import open_engine
from pipeline.store import checkpoint_format
from tests.support import make_settings

eng = open_engine(make_settings(pathlib.Path(tempfile.mkdtemp())), sync_knowledge=False)
saver = eng.graph.checkpointer
serde = saver.serde
class Intruder(BaseModel):
    x: int = 1

revived = serde.loads_typed(serde.dumps_typed({"m": Intruder()}))
print(json.dumps({"same_saver": saver is eng.graph.checkpointer and type(saver).__name__,
                  "allowlist": sorted(map(list, serde._allowed_msgpack_modules)),
                  "ours": sorted(map(list, checkpoint_format.allowlist())),
                  "intruder_revived": isinstance(revived["m"], Intruder)}))
"""


@pytest.mark.parametrize("strict_env", [None, "true", "false"])
def test_importing_langgraph_first_still_gives_the_strict_serializer(strict_env, tmp_path):
    """The graph's saver revives exactly our state classes whichever module a process imports
    first and whatever LANGGRAPH_STRICT_MSGPACK says (langgraph reads it once, at its import)."""
    import json
    import os
    import subprocess
    import sys

    from tests.support import ROOT

    env = {k: v for k, v in os.environ.items() if k != "LANGGRAPH_STRICT_MSGPACK"}
    if strict_env is not None:
        env["LANGGRAPH_STRICT_MSGPACK"] = strict_env
    env["INCIDENTIQ_DATA_DIR"] = str(tmp_path / "data")
    out = subprocess.run([sys.executable, "-c", IMPORT_ORDER_PROBE], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    probe = json.loads(out.stdout.strip().splitlines()[-1])
    assert probe["same_saver"] == "CheckpointStore"
    assert probe["allowlist"] == probe["ours"]
    assert probe["intruder_revived"] is False
