"""OpenAI-compatible embeddings for teams with an endpoint (INCIDENTIQ_EMBEDDINGS=openai:MODEL).

The embedder's name carries the model, and the knowledge base keeps one Chroma collection per
embedder name, so switching models (or back to `offline`) indexes into a fresh collection
instead of mixing vector spaces. Like the chat model, the client is built per call with the key
read at that moment; errors become `AnalystError` here (the knowledge base reports them as a
storage failure of its index).
"""
from __future__ import annotations

import httpx
from langchain_openai import OpenAIEmbeddings

from pipeline.errors import AnalystError, UsageError
from pipeline.openai_endpoint import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, MODEL_ERRORS, analyst_error, api_key


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible `/embeddings` endpoint."""

    def __init__(self, *, model: str, base_url: str | None, timeout: float = DEFAULT_TIMEOUT,
                 max_retries: int = DEFAULT_MAX_RETRIES):
        if not model:
            raise UsageError("INCIDENTIQ_EMBEDDINGS=openai:MODEL needs a model name")
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self.name = f"openai-{model}"

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, in order."""
        if not texts:
            return []
        key = api_key(self.base_url)
        # plain strings, not tiktoken token ids: tiktoken would download its vocabulary, and
        # OpenAI-compatible servers expect text
        # our own HTTP client, closed after the call: without one, each OpenAIEmbeddings makes an
        # openai client of its own that nothing closes, its keep-alive socket left to the collector
        with httpx.Client(timeout=self.timeout) as http_client:
            client = OpenAIEmbeddings(model=self.model, base_url=self.base_url, api_key=key,
                                      check_embedding_ctx_length=False, timeout=self.timeout,
                                      max_retries=self.max_retries, http_client=http_client)
            try:
                vectors = client.embed_documents(texts)
            except MODEL_ERRORS as exc:  # the same boundary as the chat model's
                raise AnalystError(f"embeddings ({self.model}): "
                                   f"{analyst_error(exc, timeout=self.timeout, retries=self.max_retries).message}") from exc
        if len(vectors) != len(texts):
            raise AnalystError(f"embeddings ({self.model}): {len(vectors)} vectors for {len(texts)} texts")
        if not all(isinstance(v, list) and v for v in vectors) or len({len(v) for v in vectors}) != 1:
            raise AnalystError(f"embeddings ({self.model}): the endpoint sent empty or ragged vectors")
        return vectors
