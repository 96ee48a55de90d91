"""Text embeddings that work on a fresh machine with no network and no GPU.

The default is a hashed bag of n-grams: words, word bigrams, the parts of dotted and
camelCase identifiers (exception classes, error codes) and character trigrams, each hashed
with a stable hash into a fixed-size vector with a random sign, then L2-normalised. It
needs nothing but numpy, downloads nothing, and suits error text, whose meaning lives in
exact tokens (`SQLTransientConnectionException`, `40P01`, `ENOSPC`) more than in prose.
"""
from __future__ import annotations

import hashlib
import re
from typing import Protocol

import numpy as np

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*|\d+[A-Za-z]+[A-Za-z0-9]*|\d{3,5}")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOP = frozenset("the a an of to in on at for and or is was be by with from as this that it its at".split())


class Embedder(Protocol):
    name: str

    def embed(self, texts: list[str]) -> list[list[float]]: ...


def features(text: str) -> list[str]:
    """The tokens a hashed embedding is built from."""
    words = [w for w in _WORD.findall(text) if w.lower() not in _STOP]
    out: list[str] = []
    lowered = [w.lower() for w in words]
    out += lowered
    out += [f"{a}_{b}" for a, b in zip(lowered, lowered[1:])]
    for w in words:
        parts = _CAMEL.findall(w)
        if len(parts) > 1:
            out += [f"p:{p.lower()}" for p in parts]
        if len(w) > 3:
            padded = f"^{w.lower()}$"
            out += [f"c:{padded[i:i + 3]}" for i in range(len(padded) - 2)]
    return out


class HashedNgramEmbedder:
    """Deterministic offline embedding (see module docstring)."""

    def __init__(self, dim: int = 1024):
        self.dim = dim
        self.name = f"hashed-ngrams-{dim}"
        self._cache: dict[str, tuple[int, float]] = {}

    def _slot(self, token: str) -> tuple[int, float]:
        slot = self._cache.get(token)
        if slot is None:
            digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
            value = int.from_bytes(digest, "little")
            slot = (value % self.dim, 1.0 if (value >> 63) & 1 else -1.0)
            if len(self._cache) < 200_000:
                self._cache[token] = slot
        return slot

    def embed(self, texts: list[str]) -> list[list[float]]:
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in features(text):
                idx, sign = self._slot(token)
                # character trigrams are many; weigh them below whole tokens
                vectors[row, idx] += sign * (0.35 if token.startswith("c:") else 1.0)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return (vectors / norms).tolist()


def embedder_from_setting(setting: str, *, base_url: str | None = None) -> Embedder:
    """`offline` or `openai:MODEL` (INCIDENTIQ_EMBEDDINGS)."""
    if setting in ("", "offline"):
        return HashedNgramEmbedder()
    if setting.startswith("openai:"):
        from pipeline.knowledge.openai_embeddings import OpenAIEmbedder

        return OpenAIEmbedder(model=setting.split(":", 1)[1], base_url=base_url)
    from pipeline.errors import UsageError

    raise UsageError(f"INCIDENTIQ_EMBEDDINGS must be 'offline' or 'openai:MODEL', not {setting!r}")
