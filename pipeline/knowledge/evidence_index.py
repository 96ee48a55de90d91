"""Incidents' evidence as vectors, for "the nearest past incidents by evidence": a persistent
Chroma collection under the data dir (one per embedder, like the docs' index), HNSW-indexed, so a
query costs the same however many incidents it holds. Local to each process's data dir."""
from __future__ import annotations

import json
import re
import threading
from pathlib import Path

from pipeline.errors import StorageError
from pipeline.knowledge.embeddings import Embedder


class EvidenceIndex:
    def __init__(self, *, index_dir: Path, embedder: Embedder):
        self.index_dir = Path(index_dir)
        self.embedder = embedder
        self._collection = None
        self._lock = threading.Lock()

    @property
    def collection(self):
        with self._lock:
            if self._collection is None:
                import chromadb
                from chromadb.config import Settings as ChromaSettings

                try:
                    self.index_dir.mkdir(parents=True, exist_ok=True)
                    client = chromadb.PersistentClient(path=str(self.index_dir),
                                                       settings=ChromaSettings(anonymized_telemetry=False))
                    name = "incident_evidence_" + re.sub(r"[^a-zA-Z0-9_-]", "_", self.embedder.name)[:50]
                    self._collection = client.get_or_create_collection(name=name, embedding_function=None,
                                                                       metadata={"hnsw:space": "cosine"})
                except Exception as exc:  # chromadb raises many types; this is its one boundary
                    raise StorageError(f"evidence index: {exc}") from exc
            return self._collection

    @property
    def _cursor_path(self) -> Path:
        return self.index_dir / f"cursor-{re.sub(r'[^a-zA-Z0-9_-]', '_', self.embedder.name)}.json"

    def cursor(self) -> tuple[str, str] | None:
        """(created_at, incident id) of the newest incident indexed."""
        try:
            value = json.loads(self._cursor_path.read_text())
        except (FileNotFoundError, ValueError):
            return None
        return tuple(value) if value else None

    def set_cursor(self, value: tuple[str, str]) -> None:
        self.index_dir.mkdir(parents=True, exist_ok=True)
        tmp = self._cursor_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(list(value)))
        tmp.replace(self._cursor_path)

    def add(self, items: list[tuple[str, str]]) -> None:
        """Index (incident id, evidence text) pairs (again: the vector is replaced)."""
        items = [(i, t) for i, t in items if t.strip()]
        if not items:
            return
        try:
            self.collection.upsert(ids=[i for i, _ in items], embeddings=self.embedder.embed([t for _, t in items]))
        except Exception as exc:  # chromadb's boundary
            raise StorageError(f"evidence index: {exc}") from exc

    def nearest(self, text: str, *, k: int, exclude: str) -> list[tuple[str, float]]:
        """The k incidents whose evidence is nearest to `text`: (id, similarity in [0, 1])."""
        if not text.strip() or self.collection.count() == 0:
            return []
        try:
            found = self.collection.query(query_embeddings=self.embedder.embed([text]), n_results=k + 1)
        except Exception as exc:  # chromadb's boundary
            raise StorageError(f"evidence index: {exc}") from exc
        pairs = zip(found["ids"][0], found["distances"][0])
        return [(i, round(max(0.0, 1.0 - d), 3)) for i, d in pairs if i != exclude][:k]
