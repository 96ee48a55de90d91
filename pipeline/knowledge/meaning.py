"""Meaning similarity from a real embedding model that runs offline (issue 36.1).

WordLlama (`wordllama` on PyPI, MIT) is a static token-embedding model: the Llama-2 tokenizer's
tokens looked up in a 256-d table and average-pooled. Its wheel carries the weights
(`wordllama/weights/l2_supercat_256.safetensors`, 16 MB) and the tokenizer's config, and it is
loaded here with downloads disabled, so nothing is fetched at run time: a missing file is a load
failure, and the caller keeps the hashed n-grams (pipeline/knowledge/embeddings.py).

The model is loaded once per process, lazily and under a lock: the first text that needs it
pays for the load (0.1 s warm, about 1.3 s cold; about 55 MB), the others share it. Importing
`wordllama` calls `logging.basicConfig(level=INFO)` on the root logger; the root logger's handlers
and level are put back after the import, so our own logging is not changed by it.
"""
from __future__ import annotations

import logging
import os
import re
import threading
from pathlib import Path
from typing import Any

import numpy as np

MODEL_CONFIG = "l2_supercat"
MODEL_DIM = 256
MODEL_NAME = f"wordllama-{MODEL_CONFIG}-{MODEL_DIM}"
_MAX_CHARS = 1_000  # per text: a doc's title, signatures and cause; a line's head. Longer adds tokens, not meaning

_lock = threading.Lock()
_loaded: list[Any] = []  # [model] once loaded, [None] once it failed (not retried in this process)
_log = logging.getLogger(__name__)


def load_model() -> Any | None:
    """The WordLlama model of this process, or None when it cannot be loaded offline."""
    if _loaded:
        return _loaded[0]
    with _lock:
        if not _loaded:
            _loaded.append(_load())
        return _loaded[0]


def _load() -> Any | None:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    # the tokenizer's thread pool costs more than it saves on a burst's few short lines (measured:
    # 3 lines 1.97 ms wall / 0.44 ms process CPU with it, 0.94 / 0.25 without); a user's own
    # setting of TOKENIZERS_PARALLELISM is kept
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        import wordllama
        from wordllama import WordLlama

        # the files inside the wheel, never a download (a missing file raises FileNotFoundError).
        # Its own lookup of the wheel's tokenizer is under `wordllama/tokenizer/`, but the wheel has
        # it under `tokenizers/`, which is where it looks inside a cache dir: the package's folder
        # as the cache dir finds both files (`weights/`, `tokenizers/`) in the wheel
        return WordLlama.load(config=MODEL_CONFIG, dim=MODEL_DIM, disable_download=True,
                              cache_dir=Path(wordllama.__file__).parent)
    except Exception as exc:  # ImportError, FileNotFoundError, a corrupt file: the fallback is the answer
        _log.warning("the embedding model %s could not be loaded offline (%s); hashed n-grams are used",
                     MODEL_NAME, exc)
        return None
    finally:
        for handler in list(root.handlers):
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)


def available() -> bool:
    return load_model() is not None


# ids and long numbers (hex ids, request ids, counts, times, ports): a text's meaning without them
# (each alternative starts at a hex digit or a digit: the leading test skips every other position
# at once, twice as fast as the bare alternation, with the same matches)
ID_SHAPES = re.compile(r"(?=[\da-f])(?:0x[0-9a-f]+|\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b|\d{4,})", re.I)


def masked(text: str) -> str:
    """The text with its ids and long numbers as `#` (ID_SHAPES)."""
    return ID_SHAPES.sub("#", text)


def embed_meaning(texts: list[str]) -> np.ndarray | None:
    """Rows L2-normalised (float32, 256 wide) for the texts, or None without the model.
    An empty text (or one of no known token) is a zero row."""
    model = load_model()
    if model is None:
        return None
    keys = [t[:_MAX_CHARS] for t in texts]
    with _cache_lock:  # one embedding at a time: each is well under a millisecond a text
        if len(_vectors) + len(keys) > _CACHED_TEXTS:
            _vectors.clear()  # a bound, not an LRU: the docs and a burst's lines come back at once
        missing = sorted({k for k in keys if k not in _vectors})
        if missing:
            # small batches: a batch is padded to its longest text, (batch × tokens × 256) float32s
            rows = np.asarray(model.embed(missing, norm=False, batch_size=16), dtype=np.float32)
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            rows = np.nan_to_num(rows / np.where(norms == 0, 1.0, norms))
            _vectors.update(zip(missing, rows))
        if not keys:
            return np.zeros((0, MODEL_DIM), dtype=np.float32)
        return np.stack([_vectors[k] for k in keys]).astype(np.float32, copy=False)


# texts' vectors, shared by every knowledge base of the process: the docs (embedded again for each
# engine opened: every round of bench/pipeline.py, every test) and a burst's repeated lines
_CACHED_TEXTS = 4_096  # 4 MB at 256 float32s a text
_vectors: dict[str, np.ndarray] = {}
_cache_lock = threading.Lock()


MEANING_SHARE = 0.3  # of the cosine: the rest is the hashed n-grams' (exact tokens: class names, codes)


class MeaningEmbedder:
    """The offline embedding: the hashed n-grams (weight 0.7) and WordLlama's meaning (0.3) side by
    side in one vector, so its cosine is 0.7 × the n-grams' + 0.3 × the model's. Error text keeps its
    exact tokens (`40P01`, `SQLTransientConnectionException`) and gains their meaning (`pool
    exhausted` near `could not acquire a connection`).

    Without the model (not installed, a file missing) it is the hashed n-grams alone, under their
    own name: the name is the vector space (one Chroma collection per name, pipeline/knowledge/
    index.py), so a store indexed by one never mixes with the other's vectors or dimensions.
    """

    local = True  # computed in this process: no network

    def __init__(self, hashed: Any):
        # the hashed n-gram half (pipeline/knowledge/embeddings.py builds it and passes it in: this
        # module imports nothing of it, so the two never import each other)
        self.hashed = hashed

    @property
    def name(self) -> str:
        # `-masked`: the meaning of a text's shape (ids as `#`), a vector space of its own
        return f"{MODEL_NAME}-masked+hashed-{self.hashed.dim}" if available() else self.hashed.name

    def embed(self, texts: list[str]) -> list[list[float]]:
        return self.embed_array(texts).tolist()

    def embed_array(self, texts: list[str]) -> np.ndarray:
        hashed = self.hashed.embed_array(texts)
        # ids and long numbers mean nothing: the meaning of a text's shape, so a burst's queries and
        # a recurring error's (the same words, other ids) are embedded once (embed_meaning's cache);
        # the n-gram half keeps the exact tokens
        meaning = embed_meaning([masked(text) for text in texts])
        if meaning is None:
            return hashed
        # both halves are unit rows (or zero): the whole is a unit row unless one half is zero
        # (written into one array and normed by one einsum: a query is one row, numpy's per-call
        # overhead is most of the cost)
        width = hashed.shape[1]
        rows = np.empty((hashed.shape[0], width + meaning.shape[1]), dtype=np.float32)
        np.multiply(hashed, np.float32((1 - MEANING_SHARE) ** 0.5), out=rows[:, :width])
        np.multiply(meaning, np.float32(MEANING_SHARE ** 0.5), out=rows[:, width:])
        norms = np.sqrt(np.einsum("ij,ij->i", rows, rows))[:, None]
        norms[norms == 0] = 1.0
        return rows / norms
