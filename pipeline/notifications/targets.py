"""Webhook targets from INCIDENTIQ_NOTIFY_URLS. A Slack or Teams incoming-webhook URL carries its
secret in the path, so outside this module a target is its id (a hash of the URL) and its host."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from pipeline.config import secret
from pipeline.errors import UsageError


@dataclass(frozen=True)
class Target:
    id: str
    host: str
    url: str = field(repr=False)  # never printed: a dataclass repr would otherwise show the secret

    def __str__(self) -> str:
        return self.host


def targets(text: str | None = None) -> list[Target]:
    """The configured targets (INCIDENTIQ_NOTIFY_URLS, read now), or those in `text`."""
    value = secret("INCIDENTIQ_NOTIFY_URLS") if text is None else text
    out: list[Target] = []
    for url in (u.strip() for u in (value or "").split(",") if u.strip()):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            # the URL is a secret: name its position and scheme only
            raise UsageError(f"INCIDENTIQ_NOTIFY_URLS: entry {len(out) + 1} is not an http(s) URL")
        host = parts.hostname + (f":{parts.port}" if parts.port else "")
        out.append(Target(id=hashlib.sha256(url.encode()).hexdigest()[:16], host=host, url=url))
    return out
