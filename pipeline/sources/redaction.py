"""Secrets out of whatever a log source reports: an endpoint that echoes our Authorization header
in its error body (or quotes the token in a message) must not put the token into the records
(poller status, metrics), stderr or the pages. Applied where errors and dead letters leave a source."""
from __future__ import annotations

import base64
from urllib.parse import quote

from pipeline import config
from pipeline.errors import SourceError
from pipeline.ingest.events import DeadLetter

MASK = "[redacted]"
MIN_SECRET_CHARS = 4  # shorter values would mask ordinary words; no real token is that short


def configured_secrets(*extra: str | None) -> list[str]:
    """Every configured secret's value (and the forms a server might echo it in), longest first."""
    values = {config.secret(s.name) for s in config.SETTINGS if s.secret} | set(extra)
    forms: set[str] = set()
    for value in values:
        if value and len(value) >= MIN_SECRET_CHARS:
            forms |= {value, quote(value, safe=""), base64.b64encode(value.encode()).decode()}
    return sorted(forms, key=len, reverse=True)


def redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, MASK)
    return text


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
