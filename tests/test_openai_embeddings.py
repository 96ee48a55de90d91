"""Embeddings by configuration: `openai:MODEL` embeds through an OpenAI-compatible endpoint (the
loopback server of tests/openai_stub.py) into its own collection, so switching re-indexes."""
from __future__ import annotations

import gc
import warnings

import pytest

from pipeline.store import checkpoints
from pipeline.unattended.file_ingest import ingest_path
from pipeline.knowledge.embeddings import embedder_from_setting
from pipeline.knowledge.meaning import MeaningEmbedder
from pipeline.composition import open_engine
from pipeline.errors import AnalystError, RuntimeFailure, StorageError, UsageError
from pipeline.knowledge.index import KnowledgeBase
from pipeline.knowledge.openai_embeddings import OpenAIEmbedder
from tests.openai_stub import EMBEDDING_DIM, OpenAIStub, Reply, fake_embedding
from tests.support import HIKARI, KEY, make_settings, write_jsonl


@pytest.fixture
def stub(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with OpenAIStub() as server:
        yield server


def embedding_requests(stub) -> list:
    return [r for r in stub.requests if r.path.endswith("/embeddings")]


def test_setting_selects_the_embedder():
    assert isinstance(embedder_from_setting("offline"), MeaningEmbedder)
    chosen = embedder_from_setting("openai:text-embedding-3-small", base_url="http://127.0.0.1:1/v1")
    assert isinstance(chosen, OpenAIEmbedder) and chosen.name == "openai-text-embedding-3-small"
    with pytest.raises(UsageError):
        embedder_from_setting("openai:")
    with pytest.raises(UsageError):
        embedder_from_setting("word2vec")


def test_embeds_plain_strings_through_the_endpoint(stub):
    vectors = OpenAIEmbedder(model="test-embedding", base_url=stub.base_url).embed(["ENOSPC", "40P01 deadlock"])
    assert [len(v) for v in vectors] == [EMBEDDING_DIM, EMBEDDING_DIM]
    assert vectors[0] == pytest.approx(fake_embedding("ENOSPC"), abs=1e-6)
    request = embedding_requests(stub)[0]
    assert request.body["input"] == ["ENOSPC", "40P01 deadlock"]  # text, not tiktoken ids
    assert request.body["model"] == "test-embedding"
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_each_call_closes_its_connection_to_the_endpoint(stub):
    # an embedder lives as long as the process (the workbench's knowledge base): a socket per call
    # left open until the collector finds it piles up, and the collector reports each one
    embedder = OpenAIEmbedder(model="test-embedding", base_url=stub.base_url)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        for text in ("ENOSPC", "40P01 deadlock", "HikariPool-1"):
            embedder.embed([text])
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_switching_embeddings_reindexes_into_a_fresh_collection(data_dir, stub):
    index = data_dir / "knowledge-index"
    offline = KnowledgeBase(index_dir=index, embedder=embedder_from_setting("offline"))
    assert offline.sync().embedded == []  # the copied offline index is current

    first = KnowledgeBase(index_dir=index, embedder=OpenAIEmbedder(model="test-embedding", base_url=stub.base_url))
    report = first.sync()
    assert len(report.embedded) == len(first.docs) and first.count() == len(first.docs)
    assert embedding_requests(stub)

    again = KnowledgeBase(index_dir=index, embedder=OpenAIEmbedder(model="test-embedding", base_url=stub.base_url))
    sent = len(embedding_requests(stub))
    assert again.sync().embedded == [] and len(embedding_requests(stub)) == sent  # unchanged: nothing re-embedded

    other = KnowledgeBase(index_dir=index, embedder=OpenAIEmbedder(model="other-embedding", base_url=stub.base_url))
    assert len(other.sync().embedded) == len(other.docs)
    assert offline.sync().embedded == [] and offline.count() == len(offline.docs)  # the offline index is untouched


def test_search_ranks_by_the_endpoint_vectors(data_dir, stub):
    kb = KnowledgeBase(index_dir=data_dir / "knowledge-index",
                       embedder=OpenAIEmbedder(model="test-embedding", base_url=stub.base_url))
    kb.sync()
    doc = kb.docs[0]
    hits = kb.search(doc.text, k=3)  # the stub embeds equal texts equally
    assert hits[0][0] == doc.doc_id and hits[0][1] == pytest.approx(1.0, abs=1e-4)


def test_endpoint_failure_is_a_runtime_failure_without_the_key(data_dir, stub):
    stub.standing = Reply(status=500)
    embedder = OpenAIEmbedder(model="test-embedding", base_url=stub.base_url, max_retries=0)
    with pytest.raises(AnalystError) as direct:
        embedder.embed(["x"])
    assert direct.value.message == "embeddings (test-embedding): model endpoint answered HTTP 500 after 0 retries"
    with pytest.raises(StorageError) as indexed:
        KnowledgeBase(index_dir=data_dir / "knowledge-index", embedder=embedder).sync()
    assert isinstance(indexed.value, RuntimeFailure) and "HTTP 500" in indexed.value.message
    assert KEY not in indexed.value.message


@pytest.mark.parametrize("body", [{"object": "list", "data": None}, [1, 2],
                                  {"object": "list", "data": [{"object": "embedding", "index": 0, "embedding": None}]}])
def test_malformed_embeddings_response_is_an_analyst_error(stub, body):
    stub.standing = Reply(body=body)
    with pytest.raises(AnalystError, match="malformed response|could not be parsed|empty or ragged"):
        OpenAIEmbedder(model="test-embedding", base_url=stub.base_url, max_retries=0).embed(["x"])


def test_pipeline_runs_on_endpoint_embeddings(data_dir, stub, tmp_path, monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    engine = open_engine(make_settings(data_dir, embeddings="openai:test-embedding", base_url=stub.base_url))
    try:
        assert engine.kb.embedder.name == "openai-test-embedding"
        ingest_path(engine, write_jsonl(tmp_path / "events.jsonl", HIKARI))
        (row,) = engine.records.incidents()
        assert row["status"] == "awaiting_approval" and row["category"] == "db_pool_exhausted"
    finally:
        engine.records.close()
        checkpoints.close_all()
