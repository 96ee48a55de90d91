"""Checkpoint rows whose values are not the state's (an edited checkpoints.sqlite) are refused where
they are read, with one line naming the incident, the checkpoint and the value: `history` and
`approve` used to end in tracebacks (`'str' object has no attribute 'id'`, "Before task with name
'approval'"), an approval left the incident 'analyzing', and an RCA of confidence 7 went on to a
recorded fix. The rest of the work goes on: other incidents are analysed, the poll does not fail."""
from __future__ import annotations

import pytest

from pipeline.engine.graph import thread_config
from pipeline.unattended.file_ingest import ingest_path
from pipeline.store import checkpoints
from tests.support import (HIKARI, cli, forge_checkpoint, forge_write, forged_model, paused_ids, write_jsonl)

FORGERIES = {
    "an RCA that is a string": dict(rca="bogus"),
    "similar docs that are strings": dict(similar_docs=["x"]),
    "an RCA of confidence 7 and no category": dict(rca=forged_model("RCA", {
        "category": "banana", "root_cause": "forged", "confidence": 7.0})),
    "a revision count that is a word": dict(revisions="two"),
}


def _head(engine, incident_id: str) -> str:
    return checkpoints.latest_checkpoint_id(engine.graph.checkpointer, incident_id)


def _refused_in_one_line(code: int, err: str, incident_id: str, checkpoint_id: str) -> None:
    assert code == 1, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert incident_id in err and checkpoint_id in err and "invalid" in err, err


@pytest.mark.parametrize("forgery", FORGERIES, ids=list(FORGERIES))
def test_history_and_approve_of_a_forged_checkpoint_say_so_in_one_line_and_change_nothing(
        paused_engine, capsys, forgery):
    incident_id = paused_ids(paused_engine)[0]
    head = _head(paused_engine, incident_id)
    forge_checkpoint(paused_engine.checkpoint_path, incident_id, head, **FORGERIES[forgery])

    for args in (("history", incident_id), ("approve", incident_id, "--as", "ann")):
        code, _, err = cli(capsys, *args)
        _refused_in_one_line(code, err, incident_id, head)
    row = paused_engine.records.incident(incident_id)
    assert row["status"] == "awaiting_approval" and row["claim_owner"] is None
    assert paused_engine.records.fixes(incident_id) == []
    assert _head(paused_engine, incident_id) == head  # no decision was written


def test_a_forged_interrupt_is_refused_by_name(paused_engine, capsys):
    incident_id = paused_ids(paused_engine)[0]
    head = _head(paused_engine, incident_id)
    assert forge_write(paused_engine.checkpoint_path, incident_id, head, "__interrupt__", "not an interrupt")
    code, _, err = cli(capsys, "approve", incident_id, "--as", "ann")
    _refused_in_one_line(code, err, incident_id, head)
    assert "__interrupt__" in err


def test_new_evidence_for_a_forged_incident_fails_it_alone_and_the_others_are_analysed(engine, tmp_path):
    ingest_path(engine, write_jsonl(tmp_path / "first.jsonl", HIKARI))
    forged = engine.records.incidents()[0]["incident_id"]
    head = _head(engine, forged)
    forge_checkpoint(engine.checkpoint_path, forged, head, rca=forged_model("RCA", {
        "category": "db_pool_exhausted", "root_cause": "forged", "confidence": 7.0}))
    later = [{**e, "_time": f"2026-11-28T10:03:0{i}Z"} for i, e in enumerate(HIKARI, start=1)]
    other = {**HIKARI[0], "service": "inventory-api", "message": "NullPointerException in StockService.reserve",
             "exception": "java.lang.NullPointerException"}
    ingest_path(engine, write_jsonl(tmp_path / "later.jsonl", [*later, other]))  # no exception: the batch went on

    row = engine.records.incident(forged)
    assert row["status"] == "failed" and head in row["last_error"] and "`rca`" in row["last_error"]
    assert engine.records.fixes(forged) == []
    others = [r for r in engine.records.incidents() if r["incident_id"] != forged]
    assert others and all(r["status"] == "awaiting_approval" for r in others)
    assert engine.graph.checkpointer.get_tuple(thread_config(others[0]["incident_id"])) is not None
