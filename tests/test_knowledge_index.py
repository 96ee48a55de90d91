"""The knowledge index: persistent, offline, and re-embeds only what changed."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from pipeline.knowledge.embeddings import HashedNgramEmbedder
from pipeline.errors import UsageError
from pipeline.knowledge.index import DEFAULT_DOCS_DIR, KnowledgeBase, load_docs
from pipeline.state import CATEGORIES


class CountingEmbedder(HashedNgramEmbedder):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def embed(self, texts):
        self.calls += len(texts)
        return super().embed(texts)


@pytest.fixture
def docs_copy(tmp_path):
    target = tmp_path / "docs"
    shutil.copytree(DEFAULT_DOCS_DIR, target)
    return target


def test_every_category_has_a_doc():
    covered = {d.category for d in load_docs()}
    assert covered == set(CATEGORIES) - {"unknown"}


def test_unchanged_corpus_embeds_nothing_on_restart(tmp_path, docs_copy):
    first = KnowledgeBase(index_dir=tmp_path / "idx", embedder=CountingEmbedder(), docs_dir=docs_copy)
    assert len(first.sync().embedded) == len(first.docs)
    restarted = KnowledgeBase(index_dir=tmp_path / "idx", embedder=CountingEmbedder(), docs_dir=docs_copy)
    report = restarted.sync()
    assert report.embedded == [] and restarted.embedder.calls == 0
    assert restarted.count() == len(restarted.docs)


def test_only_the_changed_doc_is_re_embedded_and_removed_docs_leave(tmp_path, docs_copy):
    KnowledgeBase(index_dir=tmp_path / "idx", embedder=CountingEmbedder(), docs_dir=docs_copy).sync()
    paths = sorted(docs_copy.rglob("*.md"))
    changed, removed = paths[0], paths[1]
    changed.write_text(changed.read_text() + "\nA new note for on-call.\n")
    removed_id = removed.stem
    removed.unlink()
    kb = KnowledgeBase(index_dir=tmp_path / "idx", embedder=CountingEmbedder(), docs_dir=docs_copy)
    report = kb.sync()
    assert report.embedded == [changed.stem] and kb.embedder.calls == 1
    assert report.removed == [removed_id]
    assert kb.count() == len(kb.docs)


def test_search_finds_the_doc_whose_words_the_error_uses(tmp_path):
    kb = KnowledgeBase(index_dir=tmp_path / "idx", embedder=HashedNgramEmbedder())
    kb.sync()
    hits = kb.search("HikariPool-1 - Connection is not available, request timed out after 30000ms", k=3)
    assert hits and kb.by_id[hits[0][0]].category == "db_pool_exhausted"
    assert all(0.0 <= score <= 1.0 for _, score in hits)


def test_the_offline_search_needs_no_built_index(tmp_path):
    # a fresh workbench analyses its first incident while the index is still being built
    kb = KnowledgeBase(index_dir=tmp_path / "idx", embedder=HashedNgramEmbedder())
    hits = kb.search("HikariPool-1 - Connection is not available, request timed out after 30000ms", k=3)
    assert hits and kb.by_id[hits[0][0]].category == "db_pool_exhausted"
    assert kb._open_collection is None  # Chroma was neither imported for it nor opened
    kb.sync()
    assert kb.search("HikariPool-1 - Connection is not available, request timed out after 30000ms", k=3) == hits


def test_embeddings_are_deterministic_across_instances():
    a = HashedNgramEmbedder().embed(["java.lang.NullPointerException at CartService.java:87"])
    b = HashedNgramEmbedder().embed(["java.lang.NullPointerException at CartService.java:87"])
    assert a == b and abs(sum(x * x for x in a[0]) - 1.0) < 1e-5


def test_the_fast_embedding_is_the_per_token_definition_to_the_bit():
    # embed/embed_array group the tokens by word and add them with np.add.at; the vectors must be
    # exactly what adding every token of features() in order gives (the indexed vectors and every
    # query's must not drift, or scores would change)
    from pipeline.knowledge.embeddings import features

    def by_definition(embedder, texts):
        vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in features(text):
                idx, sign = embedder._slot(token)
                vectors[row, idx] += sign * (0.35 if token.startswith("c:") else 1.0)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return vectors / norms

    embedder = HashedNgramEmbedder()
    texts = [d.text for d in load_docs()] + [
        "java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available (job 4242)",
        "ERROR: deadlock detected SQLSTATE 40P01", "OOMKilled ENOSPC", "the of a", ""]
    expected = by_definition(embedder, texts)
    assert np.array_equal(HashedNgramEmbedder().embed_array(texts), expected)
    assert np.array_equal(np.asarray(HashedNgramEmbedder().embed(texts), dtype=np.float32), expected)
    again = HashedNgramEmbedder()  # a second pass hits the per-word cache
    again.embed_array(texts)
    assert np.array_equal(again.embed_array(texts), expected)


def test_a_malformed_doc_is_a_clear_error(tmp_path):
    (tmp_path / "bad.md").write_text("---\nid: bad\ntitle: x\ncategory: not_a_category\nsignatures: [a]\nroot_cause: r\n---\nbody")
    with pytest.raises(UsageError, match="unknown category"):
        load_docs(tmp_path)


def test_a_remediation_step_yaml_reads_as_a_mapping_is_refused_by_name(tmp_path):
    # an unquoted ": " inside a list item makes it a mapping; it would reach the reviewer as a dict
    (tmp_path / "steps.md").write_text("---\nid: steps\ntitle: x\ncategory: disk_full\nsignatures: [a]\n"
                                       "root_cause: r\nremediation:\n  - Free space\n"
                                       "  - Check the volume: grow it\n---\nbody")
    with pytest.raises(UsageError, match=r"steps.md: remediation item 2 is not a text.*quotes"):
        load_docs(tmp_path)


def test_every_shipped_docs_steps_and_signatures_are_texts_under_either_yaml_parser():
    # libyaml (what parses them where PyYAML has it) and PyYAML's own parser read the docs alike,
    # so a doc that loads here loads on a machine without libyaml
    import yaml

    from pipeline.knowledge import index

    with_libyaml = load_docs()
    for doc in with_libyaml:
        assert all(not s.startswith("{") for s in (*doc.remediation, *doc.signatures)), doc.doc_id
    pure = index._YAML_LOADER
    try:
        index._YAML_LOADER = yaml.SafeLoader
        assert load_docs() == with_libyaml
    finally:
        index._YAML_LOADER = pure


def test_re_index_with_reload_reads_a_doc_edited_while_running(tmp_path, docs_copy):
    from pipeline.knowledge.retrieval import signature_matches

    kb = KnowledgeBase(index_dir=tmp_path / "idx", embedder=CountingEmbedder(), docs_dir=docs_copy)
    kb.sync()
    text = "FluxCapacitorOverloadError: flux capacitor at 1.21 gigawatts"
    assert signature_matches(kb, text) == ()
    path = next(p for p in sorted(docs_copy.rglob("*.md")) if "resource_exhaustion" in p.parts)
    path.write_text(path.read_text().replace("signatures:\n", "signatures:\n  - FluxCapacitorOverloadError\n", 1))
    kb.embedder.calls = 0
    report = kb.sync(reload=True)
    assert report.embedded == [path.stem] and kb.embedder.calls == 1
    assert [doc.doc_id for doc, _, _ in signature_matches(kb, text)] == [path.stem]


def test_signature_matching_follows_doc_support_for_every_doc():
    # signature_matches precomputes each signature's lowered text, required literal and weight;
    # it must find exactly what doc_support finds doc by doc, with the same weights
    import json

    from pipeline.knowledge.retrieval import doc_support, signature_matches

    kb = KnowledgeBase(index_dir=None, embedder=HashedNgramEmbedder())
    texts = [s for d in kb.docs for s in d.signatures]
    for path in sorted((DEFAULT_DOCS_DIR.parent / "eval").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            events = [json.dumps(e) for e in json.loads(line)["events"]]
            texts += ["\n".join(events), *events]  # long texts and short ones (the trigram test)
    matched = 0
    for text in texts:
        expected = []
        for doc in kb.docs:
            support, found = doc_support(doc, text, text.lower())
            if found:
                expected.append((doc, support, tuple(found)))
        assert signature_matches(kb, text) == tuple(expected), text[:200]
        matched += bool(expected)
    # not vacuous: many texts match (the outside beds' lines are in libraries' own words, most no doc's)
    assert matched > len(texts) // 3


def test_a_bursts_long_text_is_tested_by_its_shapes_and_finds_what_doc_support_finds():
    # issue 37.1/37.4: a merge's evidence repeats one error with other numbers (50 events): longer
    # than the trigram test's limit as text, one line as shapes (digits as `0`), so the docs whose
    # required texts are absent are skipped; it finds exactly what doc_support finds doc by doc
    from pipeline.knowledge.retrieval import TRIGRAM_TEST_CHARS, _shape_trigrams, doc_support, signature_matches

    kb = KnowledgeBase(index_dir=None, embedder=HashedNgramEmbedder())
    matched = 0
    for doc in kb.docs:
        said = " ".join(s[3:] if s.startswith("re:") else s for s in doc.signatures)
        text = "\n".join(f"{said} (job {981_231 + 7 * i}, SQLSTATE 40P01, port {5432 + i})" for i in range(50))
        assert len(text) > TRIGRAM_TEST_CHARS and _shape_trigrams(text.lower()) is not None
        expected = tuple((d, support, tuple(found)) for d in kb.docs
                         for support, found in [doc_support(d, text, text.lower())] if found)
        assert signature_matches(kb, text) == expected, doc.doc_id
        matched += any(d.doc_id == doc.doc_id for d, _, _ in expected)
    assert matched > len(kb.docs) // 2  # not vacuous: most docs' own words match them


def test_the_in_memory_vector_search_gives_chromas_answers(tmp_path):
    cached = KnowledgeBase(index_dir=tmp_path / "idx", embedder=HashedNgramEmbedder())
    cached.sync()
    chroma = KnowledgeBase(index_dir=tmp_path / "idx", embedder=HashedNgramEmbedder(),
                           vector_cache_max_docs=0)  # this one asks Chroma's index
    queries = [doc.signatures[0] for doc in cached.docs] + [doc.title for doc in cached.docs]
    for text in queries:
        ours, theirs = cached.search(text, k=8), chroma.search(text, k=8)
        assert [i for i, _ in ours] == [i for i, _ in theirs] or _tied(ours, theirs), text
        assert [round(s, 4) for _, s in ours] == pytest.approx([round(s, 4) for _, s in theirs], abs=2e-4), text
    assert chroma._vector_cache[1] is None and cached._vector_cache[1] is not None



class ArrayCountingEmbedder(HashedNgramEmbedder):
    def __init__(self):
        super().__init__()
        self.texts = 0

    def embed_array(self, texts):
        self.texts += len(texts)
        return super().embed_array(texts)


def test_a_fresh_index_searches_with_the_vectors_its_sync_embedded_not_the_docs_again(tmp_path):
    kb = KnowledgeBase(index_dir=tmp_path / "idx", embedder=ArrayCountingEmbedder())
    kb.sync()
    assert kb.embedder.texts == len(kb.docs)
    hits = kb.search("HikariPool-1 - Connection is not available, request timed out after 30000ms", k=3)
    assert kb.embedder.texts == len(kb.docs) + 1  # the query alone
    ids, kept = kb._vector_cache[1]
    kb._vector_cache = None  # the vectors a search builds from the docs: the same, to the bit
    assert kb.search("HikariPool-1 - Connection is not available, request timed out after 30000ms", k=3) == hits
    assert kb._vector_cache[1][0] == ids and np.array_equal(kb._vector_cache[1][1], kept)


def _tied(ours, theirs) -> bool:
    # equal scores may come in either order; anything else must agree
    return all(a == b or abs(sa - sb) < 1e-4 for (a, sa), (b, sb) in zip(ours, theirs))


@pytest.mark.parametrize("signature, texts", [
    ("re:Lock wait timeout|lock timeout exceeded", ("lock wait timeout", "lock timeout exceeded")),
    ("re:(token|credentials) (has |have )?(expired|been revoked)", ("token", "credentials")),
    ("re:(is )?(not set|missing)", ("not set", "missing")),  # an optional group requires nothing
    ("re:\\[(?P<code>invalid_client|invalid_grant)\\]", ("invalid_client", "invalid_grant")),
    ("re:(?=x)(ab|cd)", None),  # alternatives of fewer than three characters are no test
    ("re:foo|(ab)?", None),  # an alternative that requires nothing
])
def test_a_signature_of_alternatives_requires_one_of_their_texts(signature, texts):
    # the doc test (signature_matches) skips such a signature when none of them is in the evidence
    from pipeline.knowledge.retrieval import _required_alternatives

    assert _required_alternatives(signature) == texts
