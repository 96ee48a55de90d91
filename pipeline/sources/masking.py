"""Secrets out of whatever a log source reports, applied where errors and dead letters leave a
source (the masking itself, shared with the engine, is pipeline/redaction.py)."""
from __future__ import annotations

from pipeline.errors import SourceError
from pipeline.ingest.events import DeadLetter
from pipeline.redaction import MASK, MIN_SECRET_CHARS, configured_secrets, redact

__all__ = ["MASK", "MIN_SECRET_CHARS", "configured_secrets", "redact", "redacted_error", "redacted_item"]


def redacted_error(error: SourceError, secrets: list[str]) -> SourceError:
    """The same error, of the same class, with every secret masked in its message."""
    clean = redact(error.message, secrets)
    if clean == error.message:
        return error
    return type(error)(clean)


def redacted_item(item, secrets: list[str]):
    if isinstance(item, DeadLetter) and secrets:
        return DeadLetter(item.source, item.position, redact(item.reason, secrets), redact(item.raw, secrets))
    return item
