"""Checkpoint values stored once: a thread's larger values (similar docs, log window, RCA) are
written once and referenced by every checkpoint and write that holds them; a past checkpoint still
reads the values it saw; prune drops only values nothing kept references; rows written inline
(by the previous release, or LangGraph's own SqliteSaver) still read and their runs go on."""
from __future__ import annotations

import sqlite3
from langgraph.checkpoint.sqlite import SqliteSaver

from pipeline.composition import open_engine
from pipeline.engine.graph import build_graph, thread_config
from pipeline.unattended.file_ingest import ingest_path
from pipeline.unattended.retention import prune
from pipeline.review.service import ReviewService
from pipeline.state import IncidentState
from pipeline.store import checkpoint_format, checkpoint_values, checkpoints
from tests.support import HIKARI, make_settings, paused_ids, pending, state_of, write_jsonl


def _db(engine) -> sqlite3.Connection:
    return sqlite3.connect(engine.checkpoint_path)


def _refs(engine, conn, incident_id: str) -> list[dict]:
    serde = engine.graph.checkpointer.serde
    rows = conn.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND type = ?"
                        " ORDER BY checkpoint_id", (incident_id, checkpoint_values.PACKED_VALUES_TYPE)).fetchall()
    return [serde.stored_checkpoint(kind, blob).get("channel_refs") or {} for kind, blob in rows]


def test_a_paused_incident_stores_its_similar_docs_once_and_every_checkpoint_references_them(paused_engine):
    incident_id = paused_ids(paused_engine)[0]
    conn = _db(paused_engine)
    refs = _refs(paused_engine, conn, incident_id)
    docs = {r["similar_docs"] for r in refs if "similar_docs" in r}
    assert len(refs) >= 5 and len(docs) == 1  # the same digest from the rag step to the gate
    assert sum(1 for r in refs if "similar_docs" in r) >= 3
    stored = conn.execute("SELECT count(*) FROM checkpoint_values WHERE thread_id = ? AND hash = ?",
                          (incident_id, docs.pop())).fetchone()[0]
    assert stored == 1
    # the digests name what the checkpoint holds: the state reads back whole
    state = state_of(paused_engine, incident_id)
    assert state.similar_docs and state.similar_docs[0].root_cause and state.rca is not None


def test_a_past_checkpoint_reads_the_evidence_it_saw_after_new_evidence_re_ran_the_analysis(engine, tmp_path):
    ingest_path(engine, write_jsonl(tmp_path / "first.jsonl", HIKARI))
    incident_id = engine.records.incidents()[0]["incident_id"]
    first = engine.graph.get_state(thread_config(incident_id))
    seen = [e.event_id for e in IncidentState.model_validate(first.values).evidence]
    later = [{**e, "_time": f"2026-11-28T10:03:0{i}Z"} for i, e in enumerate(HIKARI, start=1)]
    ingest_path(engine, write_jsonl(tmp_path / "later.jsonl", later))
    now = IncidentState.model_validate(engine.graph.get_state(thread_config(incident_id)).values)
    assert len(now.evidence) > len(seen)  # the merge re-ran with more evidence
    past = engine.graph.get_state(first.config)
    assert [e.event_id for e in IncidentState.model_validate(past.values).evidence] == seen
    assert past.values["similar_docs"] == first.values["similar_docs"]


def test_prune_keeps_the_values_of_kept_checkpoints_and_drops_the_rest(paused_engine):
    engine = paused_engine
    approved, rejected, *paused = paused_ids(engine)
    service = ReviewService(engine)
    service.approve(approved, reviewer="ann", expect_interrupt=pending(engine, approved))
    service.reject(rejected, reviewer="bob", reason="noise")
    conn = _db(engine)
    before = conn.execute("SELECT count(*) FROM checkpoint_values WHERE thread_id = ?", (approved,)).fetchone()[0]
    paused_before = conn.execute("SELECT count(*) FROM checkpoint_values WHERE thread_id = ?",
                                 (paused[0],)).fetchone()[0]
    conn.close()
    assert prune(engine, days=0).incidents
    conn = _db(engine)
    serde = engine.graph.checkpointer.serde
    for incident_id in (approved, rejected):
        stored = {h for (h,) in conn.execute("SELECT hash FROM checkpoint_values WHERE thread_id = ?", (incident_id,))}
        referenced = checkpoint_values.referenced(serde, conn, incident_id)
        assert referenced <= stored and stored <= referenced  # nothing dangling, nothing orphaned
        for snap in engine.graph.get_state_history(thread_config(incident_id)):
            IncidentState.model_validate(snap.values)  # every kept checkpoint reads whole
    after = conn.execute("SELECT count(*) FROM checkpoint_values WHERE thread_id = ?", (approved,)).fetchone()[0]
    assert after < before
    assert conn.execute("SELECT count(*) FROM checkpoint_values WHERE thread_id = ?",
                        (paused[0],)).fetchone()[0] == paused_before  # a paused incident is never touched


def test_an_incident_paused_by_the_stock_saver_reads_and_its_approval_goes_on(data_dir, tmp_path, monkeypatch):
    # the previous release wrote whole states inline, as LangGraph's SqliteSaver does
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    engine = open_engine(make_settings(data_dir))
    stock = SqliteSaver(checkpoints.connect(engine.checkpoint_path), serde=checkpoint_format.serializer())
    engine.graph = build_graph(stock)
    ingest_path(engine, write_jsonl(tmp_path / "events.jsonl", HIKARI))
    incident_id = engine.records.incidents()[0]["incident_id"]
    stock.conn.close()
    engine.records.close()
    checkpoints.close_all()

    engine = open_engine(make_settings(data_dir))
    conn = sqlite3.connect(engine.checkpoint_path)
    assert {t for (t,) in conn.execute("SELECT DISTINCT type FROM checkpoints")} == {"msgpack"}
    conn.close()
    state = state_of(engine, incident_id)
    assert state.rca is not None and state.similar_docs
    ReviewService(engine).approve(incident_id, reviewer="ann", expect_interrupt=pending(engine, incident_id))
    assert engine.records.incident(incident_id)["status"] in ("fix_proposed", "approved")
    history = list(engine.graph.get_state_history(thread_config(incident_id)))
    kinds = {t for (t,) in sqlite3.connect(engine.checkpoint_path).execute("SELECT DISTINCT type FROM checkpoints")}
    assert kinds == {"msgpack", checkpoint_values.PACKED_VALUES_TYPE}  # old rows as they were, new ones stored once
    states = [IncidentState.model_validate(s.values) for s in history if s.values.get("incident_id")]
    assert len(states) >= 7 and all(s.incident_id == incident_id for s in states)
    assert sum(1 for s in states if s.rca is not None and s.similar_docs) >= 4  # old steps and new ones
    engine.records.close()
    checkpoints.close_all()


def test_a_value_missing_from_the_store_is_a_clear_checkpoint_store_error(paused_engine):
    from pipeline.errors import CheckpointStoreError

    incident_id = paused_ids(paused_engine)[0]
    conn = _db(paused_engine)
    conn.execute("DELETE FROM checkpoint_values WHERE thread_id = ?", (incident_id,))
    conn.commit()
    conn.close()
    try:
        paused_engine.graph.get_state(thread_config(incident_id))
    except CheckpointStoreError as exc:
        assert "lacks a value" in str(exc) and incident_id in str(exc)
    else:
        raise AssertionError("a checkpoint whose values are gone read as if whole")



def test_short_channel_versions_order_after_the_long_ones_of_the_previous_release(tmp_path):
    saver = checkpoints.CheckpointStore(tmp_path / "c.sqlite")
    stock = SqliteSaver(checkpoints.connect(tmp_path / "s.sqlite"), serde=checkpoint_format.serializer())
    old = stock.get_next_version(stock.get_next_version(None, None), None)  # 0.2's: 32 digits, then 16
    new = saver.get_next_version(old, None)
    assert new.startswith("00000003.") and len(new) == 15
    assert max([old, new]) == new and max([new, saver.get_next_version(new, None)]) != new
    stock.conn.close()


def test_the_runs_input_evidence_is_the_channels_value_and_any_other_input_is_merged_as_before():
    """The evidence channel holds the very list the run's input wrote when that list is already the
    sample (so the store serializes it once); any other list is deduplicated, ordered and bounded."""
    from datetime import datetime, timedelta, timezone

    from pipeline.state import EVIDENCE_HEAD, EVIDENCE_TAIL, LogEvent, merge_evidence

    start = datetime(2026, 11, 28, tzinfo=timezone.utc)
    events = [LogEvent(event_id=f"e{i}", time=start + timedelta(seconds=i), message="m") for i in range(60)]
    sample = merge_evidence([], events[:3])
    assert merge_evidence([], sample) is sample
    shuffled = [events[2], events[0], events[1], events[0]]
    assert [e.event_id for e in merge_evidence([], shuffled)] == ["e0", "e1", "e2"]
    bounded = merge_evidence([], events)
    assert len(bounded) == EVIDENCE_HEAD + EVIDENCE_TAIL and bounded[0].event_id == "e0" and bounded[-1].event_id == "e59"
    assert merge_evidence([], bounded) is bounded
    merged = merge_evidence(sample, [events[3]])
    assert merged is not sample and [e.event_id for e in merged] == ["e0", "e1", "e2", "e3"]
