"""The model path: a real pipeline against a real HTTP server on loopback speaking the OpenAI
chat-completions protocol (tests/openai_stub.py), with tool-call and json_schema answers,
injected 500s, timeouts, invalid answers, and a key that must never be stored or logged."""
from __future__ import annotations

import json
import logging
import socket
from pathlib import Path

import httpx
import openai
import pytest
from langchain_core.exceptions import ModelRefusalError, OutputParserException
from openai.types.chat import ChatCompletion
from pydantic import ValidationError

from pipeline.store import checkpoints
from pipeline.engine import runner
from pipeline.unattended.file_ingest import ingest_path
from pipeline.composition import open_engine
from pipeline.errors import AnalystError, RuntimeFailure
from pipeline.analyst.model import MODEL_ERRORS, ModelAnalyst, RCAAnswer, analyst_error
from tests.openai_stub import Reply
from tests.support import HIKARI, KEY, RECOMMENDATION, cli_here, ingest_one, make_settings, state_of, write_jsonl

def test_configured_model_is_the_analyst(model_engine):
    assert isinstance(model_engine.analyst, ModelAnalyst)
    assert model_engine.analyst.name == "model:test-model"


def test_model_rca_pauses_at_approval_with_json_schema_answer(model_engine, stub, tmp_path):
    inc = ingest_one(model_engine, tmp_path)
    row = model_engine.records.incident(inc)
    assert row["status"] == "awaiting_approval"
    rca = state_of(model_engine, inc).rca
    assert (rca.category, rca.analyst, rca.confidence) == ("db_pool_exhausted", "model:test-model", 0.8)
    retrieved = {d.doc_id for d in state_of(model_engine, inc).similar_docs}
    assert rca.doc_ids and set(rca.doc_ids) <= retrieved  # the invented doc id was dropped
    requests = stub.chat_requests()
    # the fix plan is asked for before the gate: the reviewer approves a proposal they saw
    assert [r.schema_name for r in requests] == ["RCAAnswer", "RecommendationAnswer", "FixPlanAnswer"]
    assert {r.mode for r in requests} == {"json_schema"}
    assert requests[0].headers["authorization"] == f"Bearer {KEY}"  # the key was read at call time
    assert state_of(model_engine, inc).recommendation.action == RECOMMENDATION["action"]


def test_tool_call_answers_work_too(model_engine, stub, tmp_path):
    model_engine.analyst.method = "function_calling"
    inc = ingest_one(model_engine, tmp_path)
    assert model_engine.records.incident(inc)["status"] == "awaiting_approval"
    assert state_of(model_engine, inc).rca.category == "db_pool_exhausted"
    assert {r.mode for r in stub.chat_requests()} == {"tools"}


def test_unknown_answer_keeps_low_confidence_and_no_doc(model_engine, stub, tmp_path):
    stub.answers["RCAAnswer"] = {"category": "unknown", "root_cause": "Not enough evidence.", "confidence": 0.9,
                                 "evidence": [], "doc_ids": ["java-hikari-pool-exhausted"], "findings": []}
    inc = ingest_one(model_engine, tmp_path)
    rca = state_of(model_engine, inc).rca
    assert (rca.category, rca.confidence, rca.doc_ids) == ("unknown", 0.3, [])
    assert model_engine.records.incident(inc)["status"] == "awaiting_approval"


def show_json(data_dir: Path, incident_id: str) -> dict:
    """`show --json` without the model's settings, through the CLI's entry point in this process: what
    is read is the stored incident, not anything of a process."""
    with pytest.MonkeyPatch.context() as patch:
        for name in ("OPENAI_API_KEY", "INCIDENTIQ_MODEL", "OPENAI_BASE_URL"):
            patch.delenv(name, raising=False)
        out = cli_here(data_dir, "show", incident_id, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


OFFLINE_500 = "offline (model unavailable: model endpoint answered HTTP 500 after 2 retries)"


@pytest.mark.timeout(120)
def test_http_500_is_analysed_offline_visibly_and_the_model_answers_again_once_healthy(model_engine, stub,
                                                                                        tmp_path, data_dir):
    stub.queue(*[Reply(status=500)] * 3)  # the RCA call and its two bounded retries
    inc = ingest_one(model_engine, tmp_path)
    # then the recommendation and, before the gate, the fix plan, answered by the model
    assert len(stub.chat_requests()) == 5
    shown = show_json(data_dir, inc)
    assert shown["status"] == "awaiting_approval" and shown["pending"]["interrupt_id"]
    assert shown["rca"]["analyst"] == OFFLINE_500 and shown["last_error"] is None
    assert shown["rca"]["category"] == "db_pool_exhausted"  # the offline analyst's own answer

    ingest_path(model_engine, write_jsonl(tmp_path / "more.jsonl", [{**e, "service": "till-api"} for e in HIKARI]))
    other = next(r["incident_id"] for r in model_engine.records.incidents() if r["service"] == "till-api")
    assert state_of(model_engine, other).rca.analyst == "model:test-model"


@pytest.mark.timeout(60)  # the guard; the fallback at all proves the 0.3 s bound cut the 1.5 s reply
def test_timeout_falls_back_within_the_bound(model_engine, stub, tmp_path):
    model_engine.analyst.timeout = 0.3
    model_engine.analyst.max_retries = 1
    stub.standing = Reply(delay=1.5)
    inc = ingest_one(model_engine, tmp_path)
    row = model_engine.records.incident(inc)
    assert row["status"] == "awaiting_approval"
    assert state_of(model_engine, inc).rca.analyst == "offline (model unavailable: model request timed out after 0.3s (1 retries))"


def test_unreachable_endpoint_falls_back_to_the_offline_analyst(model_engine, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model_engine.analyst.base_url = f"http://127.0.0.1:{port}/v1"  # nothing listens there now
    model_engine.analyst.max_retries = 0
    inc = ingest_one(model_engine, tmp_path)
    assert model_engine.records.incident(inc)["status"] == "awaiting_approval"
    assert state_of(model_engine, inc).rca.analyst == "offline (model unavailable: could not connect to the model endpoint (0 retries))"


INVALID = {
    "not_a_category": (Reply(answer={"category": "approve", "root_cause": "x", "confidence": 0.9,
                                     "evidence": [], "doc_ids": [], "findings": []}), "category"),
    "confidence_out_of_range": (Reply(answer={"category": "db_pool_exhausted", "root_cause": "x", "confidence": 7,
                                              "evidence": [], "doc_ids": [], "findings": []}), "confidence"),
    "malformed_json": (Reply(content='{"category": "db_pool_exh'), "could not be parsed"),
    "refusal": (Reply(refusal="I can't help with that."), "refused"),
    "no_choices": (Reply(body={"id": "x", "object": "chat.completion", "created": 1, "model": "m", "choices": []}),
                   "malformed response"),
    "no_answer": (Reply(body={"id": "x", "object": "chat.completion", "created": 1, "model": "m",
                              "choices": [{"index": 0, "finish_reason": "stop",
                                           "message": {"role": "assistant", "content": None}}]}),
                  "could not be parsed"),
    "not_an_object": (Reply(body=[1, 2]), "model"),
}


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
@pytest.mark.parametrize("case", list(INVALID))
def test_invalid_answer_is_analysed_offline_and_says_why(model_engine, stub, tmp_path, case, method):
    reply, fragment = INVALID[case]
    model_engine.analyst.method = method
    stub.queue(reply)
    inc = ingest_one(model_engine, tmp_path)
    assert model_engine.records.incident(inc)["status"] == "awaiting_approval"
    label = state_of(model_engine, inc).rca.analyst
    assert label.startswith("offline (model unavailable: ") and fragment in label
    assert len(label) < 300
    # an invalid answer is not retried by the client; then the recommendation and the fix plan
    assert len(stub.chat_requests()) == 3


def test_failing_model_does_not_stop_other_incidents(model_engine, stub, tmp_path):
    events = HIKARI + [{"_time": "2026-11-28T10:05:00Z", "service": "disk-writer", "level": "ERROR",
                        "message": "write /var/spool/receipts/r1.pdf: no space left on device"}]
    stub.queue(Reply(status=500), Reply(status=500), Reply(status=500))
    ingest_path(model_engine, write_jsonl(tmp_path / "events.jsonl", events))
    incidents = model_engine.records.incidents()
    assert [r["status"] for r in incidents] == ["awaiting_approval"] * 2
    assert sorted(state_of(model_engine, r["incident_id"]).rca.analyst for r in incidents) == [
        "model:test-model", OFFLINE_500]


def test_error_mapping_covers_the_sdk_failures():
    request = httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions")
    try:
        RCAAnswer.model_validate({"category": "approve"})
    except ValidationError as exc:
        validation = exc
    cases = {
        openai.APITimeoutError(request=request): "timed out after 30s (2 retries)",
        openai.InternalServerError("boom", response=httpx.Response(500, request=request), body=None):
            "HTTP 500 after 2 retries",
        openai.APIStatusError("boom", response=httpx.Response(503, request=request), body=None): "HTTP 503",
        openai.AuthenticationError(f"bad key {KEY}", response=httpx.Response(401, request=request), body=None):
            "HTTP 401 (check OPENAI_API_KEY)",
        openai.APIConnectionError(request=request): "could not connect",
        validation: "failed validation: category: not an allowed value",
        OutputParserException("bad"): "could not be parsed",
        json.JSONDecodeError("bad", "{", 0): "could not be parsed",
        ModelRefusalError("no"): "refused",
        httpx.ReadTimeout("slow", request=request): "transport error",
        openai.LengthFinishReasonError(completion=ChatCompletion.model_construct(usage=None)): "model call failed",
        IndexError("list index out of range"): "malformed response (IndexError)",
        AttributeError("'NoneType' object has no attribute 'get'"): "malformed response",
        TypeError("'NoneType' object is not iterable"): "malformed response",
    }
    for exc, fragment in cases.items():
        assert isinstance(exc, MODEL_ERRORS), exc  # caught at the boundary
        error = analyst_error(exc, timeout=30, retries=2)
        assert isinstance(error, AnalystError) and isinstance(error, RuntimeFailure)
        assert fragment in error.message, (exc, error.message)
        assert KEY not in error.message and "boom" not in error.message


def test_missing_key_without_base_url_is_an_analyst_error(model_engine, monkeypatch):
    analyst = ModelAnalyst(kb=model_engine.kb, model="test-model", base_url=None)
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(AnalystError, match="OPENAI_API_KEY is not set"):
        analyst._chat()


def test_local_endpoint_without_key_uses_a_placeholder(model_engine, stub, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    inc = ingest_one(model_engine, tmp_path)
    assert model_engine.records.incident(inc)["status"] == "awaiting_approval"
    assert stub.chat_requests()[0].headers["authorization"] == "Bearer not-needed"


def test_revision_feedback_reaches_the_prompt_as_reviewer_data(model_engine, stub, tmp_path):
    inc = ingest_one(model_engine, tmp_path)
    state = state_of(model_engine, inc)
    rec = model_engine.analyst.recommend(state, feedback="Do not restart the database during trading hours")
    assert (rec.revision, rec.feedback) == (1, "Do not restart the database during trading hours")
    prompt = stub.chat_requests()[-1].text()
    feedback_block = prompt.split("<reviewer_feedback>", 1)[1].split("</reviewer_feedback>", 1)[0]
    assert "Do not restart the database during trading hours" in feedback_block


def test_fix_plan_comes_from_the_model(model_engine, stub, tmp_path):
    inc = ingest_one(model_engine, tmp_path)
    plan = model_engine.analyst.fix_plan(state_of(model_engine, inc))
    assert plan == ["Set maximumPoolSize in application.yml", "Load test"]
    assert stub.chat_requests()[-1].schema_name == "FixPlanAnswer"


def _stored_bytes(data_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(data_dir.rglob("*")) if p.is_file())


@pytest.mark.timeout(120)
def test_api_key_never_reaches_checkpoints_records_or_logs(data_dir, stub, tmp_path, monkeypatch, caplog, capfd):
    caplog.set_level(logging.DEBUG)  # openai and httpx log requests at DEBUG
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    engine = open_engine(make_settings(data_dir, model="test-model", base_url=stub.base_url,
                                       embeddings="openai:test-embedding"))
    try:
        stub.queue(Reply(status=500), Reply(status=500), Reply(status=500))  # a failure path too
        inc = ingest_one(engine, tmp_path)
        assert engine.records.incident(inc)["status"] == "failed"  # the embeddings' 500s fail the retrieval
        runner.advance(engine, inc)
        assert engine.records.incident(inc)["status"] == "awaiting_approval"
    finally:
        engine.records.close()
        checkpoints.close_all()
    assert all(r.headers["authorization"] == f"Bearer {KEY}" for r in stub.requests)  # the key was in use
    assert any(r.path.endswith("/embeddings") for r in stub.requests)
    stored = _stored_bytes(data_dir)
    assert b"checkpoints" in b"".join(p.name.encode() for p in data_dir.iterdir()) and len(stored) > 10_000
    assert KEY.encode() not in stored
    assert "KEYCANARY" not in caplog.text
    out, err = capfd.readouterr()
    assert "KEYCANARY" not in out + err
    assert any("chat/completions" in r.getMessage() for r in caplog.records)  # logging was on


def test_reviewer_revise_and_approve_on_the_model_path(model_engine, stub, tmp_path):
    from pipeline.review.service import ReviewService

    inc = ingest_one(model_engine, tmp_path)
    review = ReviewService(model_engine)
    stub.answers["RecommendationAnswer"] = {**RECOMMENDATION, "action": "Revised: raise the pool size off-peak."}
    pending = model_engine.records.incident(inc)["pending_interrupt_id"]
    review.revise(inc, reviewer="ann", feedback="Not during trading hours", expect_interrupt=pending)
    row = model_engine.records.incident(inc)
    assert row["status"] == "awaiting_approval" and row["revisions"] == 1
    rec = state_of(model_engine, inc).recommendation
    assert (rec.action, rec.revision, rec.feedback) == ("Revised: raise the pool size off-peak.", 1,
                                                        "Not during trading hours")
    rec_request = next(r for r in reversed(stub.chat_requests()) if r.schema_name == "RecommendationAnswer")
    assert "Not during trading hours" in rec_request.text()
    review.approve(inc, reviewer="ann", expect_interrupt=row["pending_interrupt_id"])
    assert model_engine.records.incident(inc)["status"] == "fix_proposed"
    fix = model_engine.records.fixes(inc)[0]["proposal"]
    assert fix["plan"][1:3] == ["Set maximumPoolSize in application.yml", "Load test"]  # the model's plan
    assert stub.chat_requests()[-1].schema_name == "FixPlanAnswer"


def test_model_failure_during_a_revision_is_revised_offline_and_audited(model_engine, stub, tmp_path):
    from pipeline.review.service import ReviewService

    inc = ingest_one(model_engine, tmp_path)
    stub.standing = Reply(status=500)
    ReviewService(model_engine).revise(inc, reviewer="ann", feedback="Smaller change please")
    row = model_engine.records.incident(inc)
    assert (row["status"], row["revisions"], row["last_error"]) == ("awaiting_approval", 1, None)
    rec = state_of(model_engine, inc).recommendation
    assert (rec.revision, rec.feedback) == (1, "Smaller change please")  # the offline analyst's revision
    audit = model_engine.records.audit(inc)
    assert [(a["action"], a["reviewer"]) for a in audit] == [("revise", "ann")]


def test_a_model_cause_resting_on_another_technologys_doc_is_by_analogy(model_engine, stub, tmp_path):
    from pipeline.analyst import technology
    from tests.support import offered

    def java_doc_analyst(request):
        # a model that rests an sshd reset on the Java doc it was offered
        _, docs = offered(request)
        doc_id, category = next((d, c) for d, c in docs if d.startswith("java-"))
        return {"category": category, "root_cause": "The database refused the connection.", "confidence": 0.9,
                "evidence": ["Connection reset by peer"], "doc_ids": [doc_id], "findings": []}

    stub.answers["RCAAnswer"] = java_doc_analyst
    events = [{"_time": f"2026-11-28T10:00:0{i}Z", "service": "sshd", "host": "combo", "level": "ERROR",
               "message": "fatal: Write failed: Connection reset by peer [preauth]"} for i in range(1, 4)]
    state = state_of(model_engine, ingest_one(model_engine, tmp_path, events))
    rca = state.rca
    assert rca.doc_ids and rca.doc_ids[0].startswith("java-")
    assert rca.root_cause.startswith("By analogy: the evidence shows linux") and not rca.supported
    assert rca.confidence <= 0.45 and state.proposal is None
    assert "linux" in technology.shown_by(state.evidence)
