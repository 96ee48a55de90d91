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
    @property
    def name(self) -> str:
        """The vector space: one Chroma collection per name."""
        ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...


def features(text: str) -> list[str]:
    """The tokens a hashed embedding is built from."""
    words = [w for w in _WORD.findall(text) if w.lower() not in _STOP]
    out: list[str] = []
    lowered = [w.lower() for w in words]
    out += lowered
    out += [f"{a}_{b}" for a, b in zip(lowered, lowered[1:])]
    for w in words:
        out += _word_tokens(w)
    return out


def _word_tokens(w: str) -> list[str]:
    """A word's camel-case parts (when it has several) and its character trigrams (when longer than 3)."""
    tokens = []
    parts = _CAMEL.findall(w)
    if len(parts) > 1:
        tokens += [f"p:{p.lower()}" for p in parts]
    if len(w) > 3:
        padded = f"^{w.lower()}$"
        tokens += [f"c:{padded[i:i + 3]}" for i in range(len(padded) - 2)]
    return tokens


class HashedNgramEmbedder:
    """Deterministic offline embedding (see module docstring)."""

    local = True  # computed in this process: no network, no cost per call beyond the CPU

    def __init__(self, dim: int = 1024):
        self.dim = dim
        self.name = f"hashed-ngrams-{dim}"
        self._cache: dict[str, tuple[int, float]] = {}
        self._words: dict[str, tuple[list[int], list[float]]] = {}

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
        return self.embed_array(texts).tolist()

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """`embed` as a float32 array (rows L2-normalised), without the round trip through lists:
        the query of every incident's retrieval is embedded here."""
        vectors = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            idxs, weights = self._contributions(text)
            if idxs:
                # np.add.at adds in token order in float32, as a loop of `+=` over features(text)
                # would, so the vector is the same to the bit (tests/test_knowledge_index.py)
                np.add.at(vectors[row], np.array(idxs, dtype=np.intp), np.array(weights, dtype=np.float32))
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return vectors / norms

    def _contributions(self, text: str) -> tuple[list[int], list[float]]:
        """(slot, signed weight) of every token of features(text), in its order; a word's parts
        and character trigrams are worked out once per word (they are most of the tokens)."""
        words = [w for w in _WORD.findall(text) if w.lower() not in _STOP]
        lowered = [w.lower() for w in words]
        idxs: list[int] = []
        weights: list[float] = []
        for token in lowered + [f"{a}_{b}" for a, b in zip(lowered, lowered[1:])]:
            idx, sign = self._slot(token)
            idxs.append(idx)
            weights.append(sign)
        for w in words:
            word = self._words.get(w)
            if word is None:
                word = self._word_contributions(w)
            idxs += word[0]
            weights += word[1]
        return idxs, weights

    def _word_contributions(self, w: str) -> tuple[list[int], list[float]]:
        tokens = _word_tokens(w)
        slots = [self._slot(token) for token in tokens]
        # character trigrams are many; weigh them below whole tokens
        word = ([idx for idx, _ in slots],
                [sign * (0.35 if token.startswith("c:") else 1.0) for token, (_, sign) in zip(tokens, slots)])
        if len(self._words) < 100_000:
            self._words[w] = word
        return word


def embedder_from_setting(setting: str, *, base_url: str | None = None) -> Embedder:
    """`offline` or `openai:MODEL` (INCIDENTIQ_EMBEDDINGS). Offline is the hashed n-grams with
    WordLlama's meaning beside them (pipeline/knowledge/meaning.py), or the n-grams alone when
    the model cannot be loaded."""
    if setting in ("", "offline"):
        from pipeline.knowledge.meaning import MeaningEmbedder

        return MeaningEmbedder(HashedNgramEmbedder())
    if setting.startswith("openai:"):
        from pipeline.knowledge.openai_embeddings import OpenAIEmbedder

        return OpenAIEmbedder(model=setting.split(":", 1)[1], base_url=base_url)
    from pipeline.errors import UsageError

    raise UsageError(f"INCIDENTIQ_EMBEDDINGS must be 'offline' or 'openai:MODEL', not {setting!r}")
