"""Secrets out of text we store or show: an endpoint (a log source, the model) that echoes our
Authorization header in its error body, or quotes the token in a message, must not put the token
into the records (`last_error`, poller status, metrics), stderr or the pages. Below every package,
so the sources and the engine share it."""
from __future__ import annotations

import base64
from urllib.parse import quote, urlsplit

from pipeline import config
from pipeline.errors import MASK

__all__ = ["MASK", "MIN_SECRET_CHARS", "configured_secrets", "redact"]
MIN_SECRET_CHARS = 4  # shorter values would mask ordinary words; no real token is that short


def configured_secrets(*extra: str | None) -> list[str]:
    """Every configured secret's value (and the forms a server might echo it in), longest first."""
    values = {config.secret(s.name) for s in config.SETTINGS if s.secret} | set(extra)
    values.add(_database_password())
    forms: set[str] = set()
    for value in values:
        if value and len(value) >= MIN_SECRET_CHARS:
            forms |= {value, quote(value, safe=""), base64.b64encode(value.encode()).decode()}
    return sorted(forms, key=len, reverse=True)


def redact(text: str, secrets: list[str] | None = None) -> str:
    """`text` with every secret masked (default: the configured secrets, read now)."""
    for secret in configured_secrets() if secrets is None else secrets:
        text = text.replace(secret, MASK)
    return text


def _database_password() -> str | None:
    """The password in INCIDENTIQ_DATABASE_URL (the URL is a setting, its password a secret)."""
    url = config.raw("INCIDENTIQ_DATABASE_URL")
    return urlsplit(url).password if url else None
