"""The offline embedding's meaning half (pipeline/knowledge/meaning.py): WordLlama's weights from
its wheel, loaded with no network; docs ranked by meaning; a store built with other vectors kept
apart; the hashed n-grams when the model cannot load."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np

from pipeline.knowledge import meaning
from pipeline.knowledge.embeddings import HashedNgramEmbedder, embedder_from_setting
from pipeline.knowledge.index import KnowledgeBase


def test_the_model_loads_from_its_wheel_without_opening_a_socket():
    # a fresh process: the import and the load both run with every socket connection refused
    script = textwrap.dedent("""
        import logging, socket
        def refuse(*args, **kwargs):
            raise AssertionError(f"network used: {args[1:]}")
        socket.socket.connect = refuse
        socket.socket.connect_ex = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from pipeline.knowledge.embeddings import embedder_from_setting
        embedder = embedder_from_setting("offline")
        rows = embedder.embed_array(["Connection pool exhausted", "pool has no connection to give"])
        assert embedder.name.startswith("wordllama-l2_supercat-256"), embedder.name
        assert rows.shape == (2, 1024 + 256), rows.shape
        # wordllama's import calls logging.basicConfig: our root logger is left as it was
        assert logging.getLogger().handlers == [], logging.getLogger().handlers
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_similar_docs_for_a_reworded_timeout_are_timeout_docs():
    # no doc's signature wording: the n-grams alone put an API-contract doc second
    kb = KnowledgeBase(index_dir=None, embedder=embedder_from_setting("offline"))
    found = kb.search("POST /api/reports/generate returned 503: Service timeout after 30s", k=2)
    assert [kb.by_id[doc_id].category for doc_id, _ in found] == ["upstream_timeout", "upstream_timeout"]


def test_meaning_puts_paraphrases_nearer_than_other_failures():
    rows = meaning.embed_meaning(["Failed to acquire database connection - pool exhausted",
                                  "Could not acquire connection from pool after 30s",
                                  "ERROR SSL certificate expired"])
    assert rows is not None
    similarity = rows @ rows.T
    assert similarity[0, 1] > similarity[0, 2] + 0.2


def test_without_the_model_the_offline_embedding_is_the_hashed_ngrams(monkeypatch):
    monkeypatch.setattr(meaning, "_loaded", [None])  # as after a failed load
    embedder = embedder_from_setting("offline")
    texts = ["java.lang.NullPointerException at CartService.java:87", "ENOSPC"]
    assert embedder.name == HashedNgramEmbedder().name  # the same collection as the n-grams'
    assert np.array_equal(embedder.embed_array(texts), HashedNgramEmbedder().embed_array(texts))


def test_a_store_indexed_with_the_ngrams_is_reindexed_apart_for_the_meaning_vectors(tmp_path):
    index = tmp_path / "knowledge-index"
    old = KnowledgeBase(index_dir=index, embedder=HashedNgramEmbedder())
    old.sync()
    # the upgraded store: its own collection, every doc embedded again at the new width; queries go
    # through Chroma (no in-process cache), so a mixed collection would fail on the dimensions
    new = KnowledgeBase(index_dir=index, embedder=embedder_from_setting("offline"), vector_cache_max_docs=0)
    assert len(new.sync().embedded) == len(new.docs) == new.count()
    assert new.sync().embedded == []
    top, _ = new.search("Could not acquire connection from pool after 30s", k=1)[0]
    assert new.by_id[top].category == "db_pool_exhausted"
    # the old collection is untouched: going back re-embeds nothing
    back = KnowledgeBase(index_dir=index, embedder=HashedNgramEmbedder(), vector_cache_max_docs=0)
    assert back.sync().embedded == [] and back.search("ENOSPC no space left on device", k=1)


def _offline_rca(*messages: str):
    from datetime import datetime, timezone

    from pipeline.analyst.offline import OfflineAnalyst
    from pipeline.knowledge.retrieval import find_similar
    from pipeline.state import IncidentState, LogEvent

    kb = KnowledgeBase(index_dir=None, embedder=embedder_from_setting("offline"))
    events = [LogEvent(event_id=f"e{i}", time=datetime(2026, 12, 1, 10, 0, i, tzinfo=timezone.utc), message=m,
                       level="ERROR", service="orders") for i, m in enumerate(messages)]
    state = IncidentState(incident_id="INC-meaning", evidence=events, similar_docs=find_similar(kb, events))
    return OfflineAnalyst(kb).rca(state)


def test_an_error_meaning_a_docs_signature_is_named_below_the_code_fix_threshold():
    from datetime import datetime, timezone

    from pipeline.analyst.ideas import IDEA_CONFIDENCE
    from pipeline.analyst.meant import categories_meant
    from pipeline.config import Settings
    from pipeline.state import LogEvent

    # no doc's signature: its meaning is near `NullPointerException` (and, since session 46, the ideas
    # read `NullPointer` as a null read too: either way it is named, below the code-fix line)
    kb = KnowledgeBase(index_dir=None, embedder=embedder_from_setting("offline"))
    event = LogEvent(event_id="e0", time=datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc),
                     message="NullPointer in the handler", level="ERROR", service="orders")
    meant = categories_meant(kb, [event])
    assert "NullPointerException" in meant["null_reference"][0]
    rca = _offline_rca("NullPointer in the handler")
    assert rca.category == "null_reference"
    assert rca.confidence <= IDEA_CONFIDENCE < Settings().code_fix_min_confidence
    assert "null" in rca.notes[0].lower()  # the reviewer sees what it rests on


def test_meaning_names_nothing_for_lines_near_no_docs_signature():
    assert _offline_rca("user session ended by the client", "GET /health returned 200").category == "unknown"
    assert _offline_rca("row lock conflict: transaction aborted by the lock manager").category == "unknown"

