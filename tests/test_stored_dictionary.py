"""Checkpoint rows, stored values and incident summaries are compressed with the shipped zstd
dictionary, read back exactly, and rows of earlier releases still read."""
from __future__ import annotations

import json
import shutil
import sqlite3

import pytest

from pipeline.engine.graph import thread_config
from pipeline.engine.runner import summary_of
from pipeline.errors import CheckpointStoreError
from pipeline.store import checkpoint_values, stored_dictionary
from tests.support import paused_ids, state_of


def test_a_new_file_is_written_compressed_and_reads_back_what_the_run_wrote(paused_engine):
    incident_id = paused_ids(paused_engine)[0]
    conn = sqlite3.connect(paused_engine.checkpoint_path)
    kinds = {k for (k,) in conn.execute("SELECT DISTINCT type FROM checkpoints")}
    value_kinds = {k for (k,) in conn.execute("SELECT DISTINCT type FROM checkpoint_values")}
    tables = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall())
    conn.close()
    assert kinds == {checkpoint_values.PACKED_VALUES_TYPE}
    assert value_kinds and all(k.endswith(checkpoint_values.PACKED) for k in value_kinds)
    # SqliteSaver's tables clustered on their keys: no second copy of every key in an index
    assert "WITHOUT ROWID" in tables["writes"] and "WITHOUT ROWID" in tables["checkpoints"]
    state = state_of(paused_engine, incident_id)
    assert state.rca is not None and state.similar_docs and state.log_window
    history = list(paused_engine.graph.get_state_history(thread_config(incident_id)))
    assert len(history) >= 7 and history[0].interrupts  # every step reads, the gate's interrupt too


def test_an_incident_summary_is_stored_compressed_and_a_json_one_of_0_3_still_reads(paused_engine):
    incident_id = paused_ids(paused_engine)[0]
    expected = json.loads(json.dumps(summary_of(state_of(paused_engine, incident_id)), default=str))
    assert paused_engine.records.incident(incident_id)["summary"] == expected
    conn = sqlite3.connect(paused_engine.records_path)
    stored, = conn.execute("SELECT summary FROM incidents WHERE incident_id = ?", (incident_id,)).fetchone()
    assert isinstance(stored, bytes) and len(stored) < len(json.dumps(expected)) / 2
    conn.execute("UPDATE incidents SET summary = ? WHERE incident_id = ?", (json.dumps(expected), incident_id))
    conn.commit()
    conn.close()
    assert paused_engine.records.incident(incident_id)["summary"] == expected
    rows = {r["incident_id"]: r for r in paused_engine.records.incidents()}
    assert rows[incident_id]["summary"] == expected


def test_a_changed_dictionary_file_is_refused_by_name(tmp_path, monkeypatch):
    assert stored_dictionary.decompress(stored_dictionary.compress(b"checkpoint")) == b"checkpoint"
    changed = tmp_path / stored_dictionary.PATH.name
    shutil.copy(stored_dictionary.PATH, changed)
    import zstandard

    content = zstandard.ZstdDecompressor().decompress(changed.read_bytes())
    changed.write_bytes(zstandard.ZstdCompressor().compress(content + b"one more doc"))
    monkeypatch.setattr(stored_dictionary, "PATH", changed)
    stored_dictionary.dictionary.cache_clear()
    try:
        with pytest.raises(CheckpointStoreError, match="not the one this release shipped"):
            stored_dictionary.dictionary()
    finally:
        monkeypatch.undo()
        stored_dictionary.dictionary.cache_clear()
    assert stored_dictionary.dictionary()  # the shipped one again
