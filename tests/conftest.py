"""Shared fixtures: a fresh engine on a temp data dir, one with a few incidents paused at approval,
and the workbench app on it. Plain helpers live in tests/support.py."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pipeline  # noqa: E402,F401  (sets LANGGRAPH_STRICT_MSGPACK before langgraph loads)
from pipeline.store import checkpoints  # noqa: E402
from tests.openai_stub import OpenAIStub  # noqa: E402
from tests.support import APP, FIXTURES, KEY, RECOMMENDATION, TIMEOUT, careful_analyst, make_settings  # noqa: E402

# tests never reach a real model endpoint or Splunk unless a test sets them itself
for _name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "INCIDENTIQ_MODEL", "SPLUNK_URL", "SPLUNK_TOKEN"):
    os.environ.pop(_name, None)
# one approval opens the gate unless a test asks for the two-person rule (tests/test_two_person.py),
# and no test tells a webhook anything unless it sets one (child processes inherit both)
os.environ["INCIDENTIQ_TWO_PERSON"] = "off"
os.environ.pop("INCIDENTIQ_NOTIFY_URLS", None)

_INDEX_CACHE: dict[str, Path] = {}


@pytest.fixture
def data_dir(tmp_path, tmp_path_factory) -> Path:
    """A temp data dir whose knowledge index is copied from one built once per session."""
    d = tmp_path / "data"
    if "index" not in _INDEX_CACHE:
        from pipeline.knowledge.embeddings import HashedNgramEmbedder
        from pipeline.knowledge.index import KnowledgeBase

        base = tmp_path_factory.mktemp("kb") / "knowledge-index"
        KnowledgeBase(index_dir=base, embedder=HashedNgramEmbedder()).sync()
        _INDEX_CACHE["index"] = base
    shutil.copytree(_INDEX_CACHE["index"], d / "knowledge-index")
    return d


@pytest.fixture
def engine(data_dir, monkeypatch):
    """A fresh engine (offline analyst) on a temp data dir."""
    from pipeline.engine import open_engine

    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    eng = open_engine(make_settings(data_dir))
    yield eng
    eng.records.close()
    checkpoints.close_all()


@pytest.fixture
def paused_engine(engine):
    """An engine with the incidents of tests/fixtures/small.jsonl paused at approval."""
    from pipeline.ingest.files import ingest_path

    ingest_path(engine, FIXTURES / "small.jsonl")
    return engine


@pytest.fixture
def app(paused_engine, monkeypatch):
    """The workbench app (AppTest from app.py) on the paused engine's data dir, first run done, poller off."""
    from streamlit.testing.v1 import AppTest

    from workbench import session

    monkeypatch.setenv("INCIDENTIQ_POLLER", "off")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    yield at
    session._runtime.clear()  # releases the cached runtime (stops a poller had one started)


@pytest.fixture
def stub():
    with OpenAIStub() as server:
        server.answers["RCAAnswer"] = careful_analyst
        server.answers["RecommendationAnswer"] = RECOMMENDATION
        server.answers["FixPlanAnswer"] = {"plan": ["Set maximumPoolSize in application.yml", "Load test"]}
        yield server


@pytest.fixture
def model_engine(data_dir, stub, monkeypatch):
    """An engine whose analyst is the chat model behind the loopback server."""
    from pipeline.engine import open_engine

    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    eng = open_engine(make_settings(data_dir, model="test-model", base_url=stub.base_url))
    yield eng
    eng.records.close()
    checkpoints.close_all()
