"""Whatever the model does, incidents reach reviewers. An answer no retrieved doc
supports is kept, flagged and capped; a failing endpoint is answered offline, labelled, and after
N failures a breaker stops calling it for a cool-down; secrets never reach `last_error`."""
from __future__ import annotations

import json

from pipeline.clock import ManualClock
from pipeline.composition import open_engine
from pipeline.engine.nodes import fix_eligible
from pipeline.unattended.file_ingest import ingest_path
from pipeline.review.service import ReviewService
from pipeline.store import checkpoints
from tests.openai_stub import Reply
from tests.support import (HIKARI, KEY, cli, cli_json, ingest_one, make_settings, open_incident, pending, state_of,
                           write_jsonl)

UNSUPPORTED = {"category": "disk_full", "root_cause": "The disk is full.", "confidence": 0.95,
               "evidence": ["pool stats"], "doc_ids": ["java-hikari-pool-exhausted"], "findings": []}


def test_an_unsupported_category_is_kept_flagged_capped_and_paused_for_review(model_engine, stub, tmp_path, capsys):
    stub.answers["RCAAnswer"] = UNSUPPORTED
    inc = ingest_one(model_engine, tmp_path)
    assert model_engine.records.incident(inc)["status"] == "awaiting_approval"
    rca = state_of(model_engine, inc).rca
    assert (rca.category, rca.supported, rca.confidence, rca.doc_ids) == ("disk_full", False, 0.3, [])
    assert rca.warning.startswith("Unsupported: the model named disk_full, which no retrieved doc supports")
    assert not fix_eligible(state_of(model_engine, inc), 0.0)  # whatever the threshold
    shown = cli_json(capsys, "show", inc)
    assert shown["rca"]["supported"] is False and shown["rca"]["warning"] == rca.warning
    assert f"Warning: {rca.warning}" in cli(capsys, "show", inc)[1]
    ReviewService(model_engine).approve(inc, reviewer="ann", expect_interrupt=pending(model_engine, inc))
    assert model_engine.records.incident(inc)["status"] == "approved"
    assert model_engine.records.fixes(inc) == []


def test_the_incident_page_shows_the_warning_and_the_analyst(model_engine, stub, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.support import APP, TIMEOUT
    from workbench import session

    stub.answers["RCAAnswer"] = UNSUPPORTED
    inc = ingest_one(model_engine, tmp_path)
    monkeypatch.setenv("INCIDENTIQ_POLLER", "off")
    try:
        at = open_incident(AppTest.from_file(APP, default_timeout=TIMEOUT).run(), inc)
        texts = [t.value for t in at.text]
        assert any(t.startswith("⚠ Unsupported: the model named disk_full") for t in texts), texts
        assert "Analyst: model:test-model" in texts
    finally:
        session._runtime.clear()


def incident_of(engine, tmp_path, service: str) -> str:
    ingest_path(engine, write_jsonl(tmp_path / f"{service}.jsonl", [{**e, "service": service} for e in HIKARI]))
    return next(r["incident_id"] for r in engine.records.incidents() if r["service"] == service)


def test_after_n_failures_the_breaker_skips_the_model_until_the_cool_down_ends(data_dir, stub, tmp_path,
                                                                                monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    clock = ManualClock()
    engine = open_engine(make_settings(data_dir, model="test-model", base_url=stub.base_url,
                                       model_breaker_failures=3, model_breaker_seconds=60), clock=clock)
    try:
        engine.analyst.max_retries = 0  # one request per call, so requests count calls
        stub.standing = Reply(status=500)
        first = incident_of(engine, tmp_path, "till-a")  # rca and recommend fail: 2 failures
        second = incident_of(engine, tmp_path, "till-b")  # rca fails: 3, the breaker opens
        assert len(stub.chat_requests()) == 3
        third = incident_of(engine, tmp_path, "till-c")
        assert len(stub.chat_requests()) == 3  # skipped: the endpoint was not called
        assert state_of(engine, first).rca.analyst == "offline (model unavailable: model endpoint answered HTTP 500 after 0 retries)"
        skipped = state_of(engine, third).rca.analyst
        assert skipped.startswith("offline (model unavailable: skipped for 60s after 3 failed calls; last: ")
        assert {engine.records.incident(i)["status"] for i in (first, second, third)} == {"awaiting_approval"}

        stub.standing = Reply()  # healthy again, but the cool-down is not over
        clock.advance(seconds=59)
        incident_of(engine, tmp_path, "till-d")
        assert len(stub.chat_requests()) == 3
        clock.advance(seconds=2)
        fifth = incident_of(engine, tmp_path, "till-e")
        assert len(stub.chat_requests()) == 6  # tried again: rca, recommend and the fix plan (before the gate) from the model
        assert state_of(engine, fifth).rca.analyst == "model:test-model"
    finally:
        engine.records.close()
        checkpoints.close_all()


def test_an_endpoint_echoing_the_key_in_a_401_puts_it_nowhere_in_the_data_dir(model_engine, stub, tmp_path,
                                                                               data_dir):
    model_engine.analyst.max_retries = 0
    stub.standing = Reply(status=401, echo_auth=True)
    inc = ingest_one(model_engine, tmp_path)
    assert KEY in json.dumps([r.headers for r in stub.chat_requests()])  # the key was sent and echoed
    assert "HTTP 401" in state_of(model_engine, inc).rca.analyst
    model_engine.records.close()
    checkpoints.close_all()
    stored = b"".join(p.read_bytes() for p in data_dir.rglob("*") if p.is_file())
    assert KEY.encode() not in stored
