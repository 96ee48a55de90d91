"""Shared fixtures: a fresh engine on a temp data dir, and one with a few incidents paused at approval."""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (sets LANGGRAPH_STRICT_MSGPACK before langgraph loads)
from pipeline.store import checkpoints  # noqa: E402
from pipeline.config import Settings  # noqa: E402

# tests never reach a real model endpoint or Splunk unless a test sets them itself
for _name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "INCIDENTIQ_MODEL", "SPLUNK_URL", "SPLUNK_TOKEN"):
    os.environ.pop(_name, None)

_INDEX_CACHE: dict[str, Path] = {}


def make_settings(data_dir: Path, **overrides) -> Settings:
    """Settings for a temp data dir, with the repo's sample source tree."""
    # evidence merges at once in tests unless a test asks for the poller's delay
    overrides.setdefault("merge_delay", 0.0)
    return Settings.from_env(data_dir=data_dir, repo_dir=ROOT / "samples" / "pos-backend", **overrides)


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


def paused_ids(engine) -> list[str]:
    return [r["incident_id"] for r in engine.records.incidents(status="awaiting_approval")]
