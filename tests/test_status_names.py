"""0.2 status names: `fix_proposed` (approved, its proposal recorded) and `approved` (approved, no code
fix eligible). Records of 0.1 are migrated; a 0.1 checkpoint (no proposal, no findings, outcome
`fixed`) still loads, is mapped, and can still be approved; the CLI accepts the old names as aliases."""
from __future__ import annotations

import sqlite3

import ormsgpack
from langgraph.checkpoint.serde.jsonplus import EXT_PYDANTIC_V2

from pipeline.engine.graph import thread_config
from pipeline.engine.runner import record_from_snapshot
from pipeline.review.service import ReviewService
from pipeline.state import IncidentState
from pipeline.store import checkpoint_values
from pipeline.store.records import Records
from pipeline.store.schema import MIGRATIONS
from tests.support import by_category, cli, state_of

NEW_RCA_FIELDS = ("findings", "quotes", "notes", "dropped_findings")


def test_records_of_0_1_are_migrated_to_the_new_names(tmp_path):
    path = tmp_path / "app.sqlite3"
    Records(path, migrations=MIGRATIONS[:1]).close()  # a data dir as 0.1 left it
    with sqlite3.connect(path) as conn:
        for n, status in enumerate(("fixed", "not_eligible", "rejected")):
            conn.execute("INSERT INTO incidents(incident_id, fingerprint, service, status, first_seen, last_seen,"
                         " created_at, updated_at, sla_deadline) VALUES (?,?,?,?,?,?,?,?,?)",
                         (f"INC-{n}", "fp", "svc", status, *["2026-11-28T10:00:00+00:00"] * 5))
    records = Records(path)
    assert [records.incident(f"INC-{n}")["status"] for n in range(3)] == ["fix_proposed", "approved", "rejected"]
    records.close()


def test_an_old_outcome_is_mapped_when_the_state_is_read():
    state = IncidentState.model_validate({
        "incident_id": "INC-1", "outcome": "fixed",
        "rca": {"category": "db_deadlock", "root_cause": "r", "confidence": 0.7, "evidence": ["x"]},
        "fix": {"plan": ["p"], "diff": None, "target_file": None, "idempotency_key": "INC-1:abc", "attempt": 1}})
    assert state.outcome == "fix_proposed" and state.rca.findings == [] and state.fix.hash == ""
    assert IncidentState.model_validate({"incident_id": "INC-2", "outcome": "not_eligible"}).outcome == "approved"


def _as_0_1(engine, incident_id: str, **channel_values) -> None:
    """Rewrite the thread's newest checkpoint into the shape 0.1 wrote: no proposal, no revision log,
    RCA without findings/quotes/notes, no propose_fix in the trace."""
    cfg = thread_config(incident_id)
    checkpoint_id = engine.graph.get_state(cfg).config["configurable"]["checkpoint_id"]
    conn = sqlite3.connect(engine.settings.data_dir / "checkpoints.sqlite")
    kind, blob = conn.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id=? AND checkpoint_id=?",
                              (incident_id, checkpoint_id)).fetchone()
    checkpoint = ormsgpack.unpackb(checkpoint_values.decompress(blob, kind), ext_hook=_Ext,
                                   option=ormsgpack.OPT_NON_STR_KEYS)
    values = checkpoint["channel_values"]
    # 0.1 wrote every value inline (type msgpack): bring the values stored once back into the row
    for channel, value_hash in checkpoint.pop("channel_refs", {}).items():
        value_kind, value = conn.execute("SELECT type, value FROM checkpoint_values WHERE thread_id=? AND hash=?",
                                         (incident_id, value_hash)).fetchone()
        values[channel] = ormsgpack.unpackb(checkpoint_values.decompress(value, value_kind), ext_hook=_Ext,
                                            option=ormsgpack.OPT_NON_STR_KEYS)
    checkpoint.pop("values_thread", None)
    for name in ("proposal", "revision_log"):
        values.pop(name, None)

    def model(ext):
        module, name, kwargs, *rest = ormsgpack.unpackb(ext.data, ext_hook=_Ext, option=ormsgpack.OPT_NON_STR_KEYS)
        return module, name, kwargs, rest

    def pack(module, name, kwargs, rest):
        return _Ext(EXT_PYDANTIC_V2, ormsgpack.packb((module, name, kwargs, *rest), default=_packed,
                                                     option=ormsgpack.OPT_NON_STR_KEYS))

    module, name, kwargs, rest = model(values["rca"])
    values["rca"] = pack(module, name, {k: v for k, v in kwargs.items() if k not in NEW_RCA_FIELDS}, rest)
    values["events"] = [e for e in values["events"] if model(e)[2].get("node") != "propose_fix"]
    values.update(channel_values)
    conn.execute("UPDATE checkpoints SET type='msgpack', checkpoint=? WHERE thread_id=? AND checkpoint_id=?",
                 (ormsgpack.packb(checkpoint, default=_packed, option=ormsgpack.OPT_NON_STR_KEYS),
                  incident_id, checkpoint_id))
    conn.commit()
    conn.close()


class _Ext:
    """An msgpack extension value kept as it is (ormsgpack.Ext does not expose its parts)."""

    def __init__(self, code: int, data: bytes):
        self.code, self.data = code, data


def _packed(value):
    if isinstance(value, _Ext):
        return ormsgpack.Ext(value.code, value.data)
    raise TypeError(type(value))


def test_a_thread_paused_by_0_1_loads_and_its_approval_still_records_a_fix(paused_engine):
    inc = by_category(paused_engine, "db_pool_exhausted")
    _as_0_1(paused_engine, inc)
    old = state_of(paused_engine, inc)
    assert old.proposal is None and old.rca.findings == [] and old.rca.category == "db_pool_exhausted"
    assert ReviewService(paused_engine).incident(inc)["status"] == "awaiting_approval"
    ReviewService(paused_engine).approve(inc, reviewer="ann")
    assert paused_engine.records.incident(inc)["status"] == "fix_proposed"
    fixes = paused_engine.records.fixes(inc)
    assert len(fixes) == 1 and fixes[0]["proposal"]["hash"]


def test_an_ended_0_1_thread_with_outcome_fixed_reads_as_fix_proposed(paused_engine):
    inc = by_category(paused_engine, "null_reference")
    ReviewService(paused_engine).approve(inc, reviewer="ann")
    _as_0_1(paused_engine, inc, outcome="fixed")
    paused_engine.records.update_incident(inc, status="fixed")  # as 0.1 wrote it, before the migration
    assert state_of(paused_engine, inc).outcome == "fix_proposed"
    record_from_snapshot(paused_engine, inc)
    assert paused_engine.records.incident(inc)["status"] == "fix_proposed"


def test_list_accepts_the_0_1_names_as_aliases(paused_engine, capsys):
    pool = by_category(paused_engine, "db_pool_exhausted")
    unknown = by_category(paused_engine, "unknown")
    service = ReviewService(paused_engine)
    service.approve(pool, reviewer="ann")
    service.approve(unknown, reviewer="ann")
    for old, new, inc in (("fixed", "fix_proposed", pool), ("not_eligible", "approved", unknown)):
        code, out, err = cli(capsys, "list", "--status", old, "--json")
        assert code == 0, err
        assert [r["incident_id"] for r in __import__("json").loads(out)] == [inc]
        assert cli(capsys, "list", "--status", new, "--json")[1] == out
    assert cli(capsys, "list", "--status", "mended")[0] == 2
