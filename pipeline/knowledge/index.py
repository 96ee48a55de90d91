"""The knowledge base: curated error docs in `knowledge/docs`, indexed in a persistent Chroma
collection under the data dir. Only docs whose text changed are re-embedded."""
from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import yaml

from pipeline.knowledge.embeddings import Embedder
from pipeline.errors import StorageError, UsageError
from pipeline.state import CATEGORIES, SEVERITIES, ErrorDoc

DEFAULT_DOCS_DIR = Path(__file__).resolve().parents[2] / "knowledge" / "docs"
VECTOR_CACHE_MAX_DOCS = 5_000  # above this, queries go through Chroma's index
MATCH_CACHE_CHARS = 4_000  # texts up to this long have a doc's matched signatures kept (Doc._matched)
MATCH_CACHE_TEXTS = 64  # per doc: an analysis holds at most 50 events (state.EVIDENCE_HEAD + EVIDENCE_TAIL)
_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n?(.*)\Z", re.S)


@dataclass(frozen=True)
class Doc:
    """One curated error doc as written in knowledge/docs."""

    doc_id: str
    title: str
    category: str
    severity: str
    signatures: tuple[str, ...]
    root_cause: str
    remediation: tuple[str, ...]
    fix_hints: tuple[dict, ...]
    systems: tuple[str, ...]
    body: str
    path: str
    patterns: tuple[re.Pattern | None, ...] = field(repr=False, default=())  # None: a literal
    # matched_signatures' answers for event-sized texts, this doc's own: a reloaded doc is a new
    # Doc with an empty one (the analysis asks again about the same events, rca and the nodes after it)
    _matched: dict[str, tuple[str, ...]] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def text(self) -> str:
        """What gets embedded."""
        return "\n".join([self.title, " ".join(self.signatures), self.root_cause, self.body])

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]

    def matched_signatures(self, evidence_text: str, *, lowered: str | None = None) -> list[str]:
        """Signatures of this doc found in the evidence (case-insensitive).

        Literal signatures are substring tests on the lowered text (pass `lowered` when checking
        many docs against one text); only `re:` signatures run a regex.
        """
        if lowered is None and len(evidence_text) <= MATCH_CACHE_CHARS:
            found = self._matched.get(evidence_text)
            if found is None:
                if len(self._matched) >= MATCH_CACHE_TEXTS:
                    self._matched.clear()  # a bound, not an LRU: one analysis asks about a few texts
                found = self._matched[evidence_text] = tuple(self._find(evidence_text, evidence_text.lower()))
            return list(found)
        return self._find(evidence_text, evidence_text.lower() if lowered is None else lowered)

    def _find(self, evidence_text: str, lowered: str) -> list[str]:
        found = []
        for sig, pat in zip(self.signatures, self.patterns):
            if pat is None:
                if sig.lower() in lowered:
                    found.append(sig)
            elif pat.search(evidence_text):
                found.append(sig)
        return found

    def as_error_doc(self, *, score: float = 0.0, matched: list[str] | None = None) -> ErrorDoc:
        # the state keeps what the analyst saw (cause, remediation, fix hints, matched signatures);
        # the full doc (body, signatures) stays in the knowledge base, so every checkpoint does
        # not re-serialise it. Hint values become text: YAML may have read `value: 50` as a number.
        hints = [{str(k): str(v) for k, v in hint.items()} for hint in self.fix_hints if isinstance(hint, dict)]
        return ErrorDoc(doc_id=self.doc_id, title=self.title, category=self.category, severity=self.severity,
                        score=round(score, 4), matched_signatures=matched or [],
                        root_cause=self.root_cause, remediation=list(self.remediation), fix_hints=hints)


# libyaml's parser (PyYAML's wheels carry it): the 108 shipped docs' front matter in about 30 ms
# instead of 130 with the pure-Python one, on every engine open; the same safe constructors
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _pattern(signature: str) -> re.Pattern | None:
    return re.compile(signature[3:], re.I) if signature.startswith("re:") else None


SAID_CHARS = 80
# a regex's syntax, said as the words it stands for: flags and anchors dropped, any run of characters
# (a class, \d+, .*) as "…", a group's alternatives as "a/b", escapes as the character
_REGEX_SYNTAX = ((re.compile(r"\(\?[a-zA-Z]+\)|\(\?[:=!]|\\[bBAZ]|[\^$]"), ""),
                 (re.compile(r"(?:\[(?:\\.|[^\]])*\]|\\[dDwWsS]|\.)(?:[+*?]|\{\d*,?\d*\})?\??"), "…"),
                 (re.compile(r"\{\d*,?\d*\}|(?<!\\)[?*+]"), ""),
                 (re.compile(r"(?<!\\)\|"), "/"),
                 (re.compile(r"(?<!\\)[()]"), ""),
                 (re.compile(r"\\(.)"), r"\1"),
                 (re.compile(r"…(?:\s*…)+"), "…"))


def signature_words(signature: str, text: str = "") -> str:
    """A doc's signature as a reviewer reads it: a literal one as written; a regex (`re:`) by the words it
    matched in `text` (the evidence it was found in: "could not connect to server: Connection refused"),
    else by its literal words with `…` where it takes any characters ("dial tcp …: connect: connection
    refused"); never the pattern's syntax."""
    pattern = _pattern(signature)
    if pattern is None:
        return signature
    found = pattern.search(text or "")
    if found is not None and found.group(0).strip():
        said = " ".join(found.group(0).split())
        return said if len(said) <= SAID_CHARS else said[:SAID_CHARS - 1].rstrip() + "…"
    said = signature[3:]
    for syntax, words in _REGEX_SYNTAX:
        said = syntax.sub(words, said)
    return " ".join(said.split()) or "a pattern of the doc"


def parse_doc(path: Path) -> Doc:
    """Parse one markdown doc with YAML front matter; a clear UsageError when malformed."""
    text = path.read_text(encoding="utf-8")
    match = _FRONT_MATTER.match(text)
    if not match:
        raise UsageError(f"{path}: missing YAML front matter")
    try:
        meta = yaml.load(match.group(1), Loader=_YAML_LOADER) or {}
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: invalid front matter: {exc}") from exc
    missing = [k for k in ("id", "title", "category", "signatures", "root_cause") if not meta.get(k)]
    if missing:
        raise UsageError(f"{path}: missing {', '.join(missing)}")
    if meta["category"] not in CATEGORIES or meta["category"] == "unknown":
        raise UsageError(f"{path}: unknown category {meta['category']!r}")
    severity = meta.get("severity", "medium")
    if severity not in SEVERITIES:
        raise UsageError(f"{path}: unknown severity {severity!r}")
    for key in ("signatures", "remediation", "systems"):
        _require_text_items(path, key, meta.get(key))
    signatures = tuple(str(s) for s in meta["signatures"])
    try:
        patterns = tuple(_pattern(s) for s in signatures)
    except re.error as exc:
        raise UsageError(f"{path}: bad signature regex: {exc}") from exc
    return Doc(doc_id=str(meta["id"]), title=str(meta["title"]), category=meta["category"], severity=severity,
               signatures=signatures, root_cause=" ".join(str(meta["root_cause"]).split()),
               remediation=tuple(str(s) for s in meta.get("remediation") or ()),
               fix_hints=tuple(meta.get("fix_hints") or ()), systems=tuple(meta.get("systems") or ()),
               body=match.group(2).strip(), path=str(path), patterns=patterns)


def _require_text_items(path: Path, key: str, items) -> None:
    # "- Check the pool: raise its size" is a mapping to YAML (an unquoted ": "), and would reach
    # the reviewer as "{'Check the pool': 'raise its size'}"
    if items is None:
        return
    if not isinstance(items, list):
        raise UsageError(f"{path}: {key} must be a list of texts")
    for number, item in enumerate(items, 1):
        if isinstance(item, (dict, list)):
            raise UsageError(f"{path}: {key} item {number} is not a text (YAML read {type(item).__name__}:"
                             " an unquoted ': ' or '- ' inside it); put the item in quotes")


def load_docs(docs_dir: Path = DEFAULT_DOCS_DIR) -> list[Doc]:
    """Every doc under docs_dir, sorted by id; duplicate ids are an error."""
    docs = [parse_doc(p) for p in sorted(Path(docs_dir).rglob("*.md")) if p.name.lower() != "readme.md"]
    seen: dict[str, str] = {}
    for doc in docs:
        if doc.doc_id in seen:
            raise UsageError(f"duplicate doc id {doc.doc_id!r} in {doc.path} and {seen[doc.doc_id]}")
        seen[doc.doc_id] = doc.path
    return sorted(docs, key=lambda d: d.doc_id)


@dataclass
class SyncReport:
    embedded: list[str]
    removed: list[str]
    unchanged: int


class KnowledgeBase:
    """Docs plus their Chroma index. `search` returns docs with similarity scores in [0, 1]."""

    def __init__(self, *, index_dir: Path | str | None, embedder: Embedder, docs_dir: Path = DEFAULT_DOCS_DIR,
                 vector_cache_max_docs: int = VECTOR_CACHE_MAX_DOCS):
        self.embedder = embedder
        self.docs_dir = Path(docs_dir)
        self.index_dir = index_dir
        self.vector_cache_max_docs = vector_cache_max_docs
        self.generation = 0  # bumped when the docs are re-read, so caches keyed on it go stale
        self.docs = load_docs(self.docs_dir)
        self.by_id = {d.doc_id: d for d in self.docs}
        self._open_collection = None
        self._lock = threading.Lock()
        # one sync at a time: the workbench builds the index in the background (workbench/runtime.py),
        # and a Re-index clicked meanwhile waits for it, then finds nothing left to embed
        self._sync_lock = threading.Lock()

    @property
    def _collection(self):
        # Chroma is imported and opened on first use: reading the docs (their signatures, fix hints)
        # needs none of it, and importing it costs about a second
        with self._lock:
            if self._open_collection is None:
                self._open_collection = self._connect()
            return self._open_collection

    def _connect(self):
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
        try:
            if self.index_dir is None:
                self._client = chromadb.EphemeralClient(settings=chroma_settings)
            else:
                Path(self.index_dir).mkdir(parents=True, exist_ok=True)
                self._client = chromadb.PersistentClient(path=str(self.index_dir), settings=chroma_settings)
            # one collection per embedder: switching embeddings re-indexes into a fresh space
            name = "error_docs_" + re.sub(r"[^a-zA-Z0-9_-]", "_", self.embedder.name)[:50]
            return self._client.get_or_create_collection(
                name=name, embedding_function=None, metadata={"hnsw:space": "cosine"})
        except Exception as exc:  # chromadb raises many types; this is its one boundary
            raise StorageError(f"knowledge index: {exc}") from exc

    def reload(self) -> None:
        """Re-read the docs from disk (a malformed doc is a UsageError and changes nothing)."""
        docs = load_docs(self.docs_dir)
        # swapped whole: a run reading the old lists meanwhile keeps a consistent view
        self.docs, self.by_id = docs, {d.doc_id: d for d in docs}
        self.generation += 1

    def sync(self, progress: Callable[[float, str], None] | None = None, *, reload: bool = False) -> SyncReport:
        """Embed new or changed docs, drop removed ones; an unchanged corpus embeds nothing.
        With `reload`, the docs are re-read from disk first (docs edited while the app runs)."""
        with self._sync_lock:
            return self._sync(progress, reload=reload)

    def _sync(self, progress: Callable[[float, str], None] | None, *, reload: bool) -> SyncReport:
        if reload:
            self.reload()
        try:
            existing = self._collection.get(include=["metadatas"])
        except Exception as exc:
            raise StorageError(f"knowledge index: {exc}") from exc
        indexed = {i: (m or {}).get("hash") for i, m in zip(existing["ids"], existing["metadatas"])}
        changed = [d for d in self.docs if indexed.get(d.doc_id) != d.content_hash]
        removed = [i for i in indexed if i not in self.by_id]
        batch = 16
        # a local embedder's rows for every doc, when this sync embeds them all (a fresh index): the
        # search's in-memory vectors are these rows (_vectors), kept instead of embedded again
        generation, docs = self.generation, self.docs
        embed_array = getattr(self.embedder, "embed_array", None) if self.searches_without_index else None
        every: list | None = [] if embed_array is not None and len(changed) == len(docs) else None
        try:
            if removed:
                self._collection.delete(ids=removed)
            for start in range(0, len(changed), batch):
                chunk = changed[start:start + batch]
                rows = embed_array([d.text for d in chunk]) if embed_array is not None and every is not None else None
                if every is not None:
                    every.append(rows)
                self._collection.upsert(
                    ids=[d.doc_id for d in chunk],
                    embeddings=rows.tolist() if rows is not None else self.embedder.embed([d.text for d in chunk]),
                    documents=[d.text for d in chunk],
                    metadatas=[{"hash": d.content_hash, "category": d.category, "title": d.title} for d in chunk],
                )
                if progress:
                    progress(min(1.0, (start + len(chunk)) / len(changed)), chunk[-1].doc_id)
        except Exception as exc:
            raise StorageError(f"knowledge index: {exc}") from exc
        if changed or removed:
            self._vector_cache = None  # the collection changed under the cached vectors
        if every and [d.doc_id for d in changed] == [d.doc_id for d in docs]:
            import numpy as np

            self._vector_cache = (generation, _unit_rows([d.doc_id for d in docs], np.concatenate(every)))
        if progress and not changed:
            progress(1.0, "up to date")
        return SyncReport(embedded=[d.doc_id for d in changed], removed=removed,
                          unchanged=len(self.docs) - len(changed))

    def search(self, text: str, *, k: int = 5) -> list[tuple[str, float]]:
        """(doc_id, similarity) of the k nearest docs, best first."""
        if not text.strip() or not self.docs:
            return []
        vectors = self._vectors()
        if vectors is not None:
            return self._search_in_memory(vectors, text, k)
        try:
            result = self._collection.query(query_embeddings=self.embedder.embed([text]),
                                            n_results=min(k, len(self.docs)), include=["distances"])
        except Exception as exc:
            raise StorageError(f"knowledge index: {exc}") from exc
        ids, distances = result["ids"][0], result["distances"][0]
        return [(i, max(0.0, 1.0 - float(d))) for i, d in zip(ids, distances) if i in self.by_id]

    # -- the in-process vector cache ------------------------------------------------------
    # Chroma stays the persisted index; for a small collection an exact cosine search over its
    # vectors in numpy gives Chroma's answer (tests/test_knowledge_index.py compares them) in a
    # tenth of a millisecond instead of a query through Chroma's client.
    #
    # An embedder computed in this process (the offline one: `local`) gives the docs' vectors faster
    # than Chroma's client gives them back, and the same to the bit (Chroma keeps the float32 rows it
    # was given): they are computed from the docs, so a search needs neither Chroma's import nor a
    # synced index. A fresh workbench's first incident is analysed while the index is still built
    # (workbench/runtime.py); a remote embedder's vectors are read back from the index.
    @property
    def searches_without_index(self) -> bool:
        """Whether `search` is answered without Chroma (a local embedder, a small corpus)."""
        return bool(getattr(self.embedder, "local", False)) and 0 < len(self.docs) <= self.vector_cache_max_docs

    def _vectors(self) -> "tuple[list[str], object] | None":
        generation = self.generation  # before the docs: a reload swaps the docs, then bumps it
        cache = getattr(self, "_vector_cache", None)
        if cache is not None and cache[0] == generation:
            return cache[1]
        import numpy as np

        if self.searches_without_index:
            docs = self.docs
            embed_array = getattr(self.embedder, "embed_array", None)
            rows = embed_array([d.text for d in docs]) if embed_array else self.embedder.embed([d.text for d in docs])
            vectors = _unit_rows([d.doc_id for d in docs], rows)
            self._vector_cache = (generation, vectors)
            return vectors
        try:
            stored = self._collection.get(include=["embeddings"])
        except Exception as exc:  # chromadb raises many types; this is its one boundary
            raise StorageError(f"knowledge index: {exc}") from exc
        ids = list(stored["ids"])
        vectors = None
        if ids and len(ids) <= self.vector_cache_max_docs:
            matrix = np.asarray(stored["embeddings"], dtype=np.float64)
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            vectors = (ids, matrix / np.where(norms == 0, 1.0, norms))
        self._vector_cache = (generation, vectors)
        return vectors

    def _search_in_memory(self, vectors, text: str, k: int) -> list[tuple[str, float]]:
        import numpy as np

        ids, matrix = vectors
        embed_array = getattr(self.embedder, "embed_array", None)  # the offline embedder's, no list round trip
        query = (embed_array([text])[0] if embed_array else np.asarray(self.embedder.embed([text])[0])).astype(np.float64)
        norm = np.linalg.norm(query)
        similarity = matrix @ (query / norm) if norm else np.zeros(len(ids))
        best = np.argsort(-similarity, kind="stable")[:min(k, len(self.docs))]
        return [(ids[i], max(0.0, float(similarity[i]))) for i in best if ids[i] in self.by_id]

    def count(self) -> int:
        return self._collection.count()

    def describe(self) -> list[dict]:
        """Docs for the knowledge page."""
        return [{"doc_id": d.doc_id, "title": d.title, "category": d.category, "severity": d.severity,
                 "signatures": list(d.signatures), "systems": list(d.systems)} for d in self.docs]


def _unit_rows(ids: list[str], rows) -> "tuple[list[str], object]":
    """The in-memory search's vectors: the rows through float32, as Chroma keeps them (the vectors it
    would give back), as float64 unit rows."""
    import numpy as np

    matrix = np.asarray(rows, dtype=np.float32).astype(np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return ids, matrix / np.where(norms == 0, 1.0, norms)


def stats_json(kb: KnowledgeBase) -> str:
    return json.dumps({"docs": len(kb.docs), "indexed": kb.count()})
