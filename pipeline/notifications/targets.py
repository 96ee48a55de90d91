"""Webhook targets from INCIDENTIQ_NOTIFY_URLS. A Slack or Teams incoming-webhook URL carries its
secret in the path, so outside this module a target is its id (a hash of the URL) and its host."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from pipeline.config import notify_urls, secret


@dataclass(frozen=True)
class Target:
    id: str
    host: str
    url: str = field(repr=False)  # never printed: a dataclass repr would otherwise show the secret

    def __str__(self) -> str:
        return self.host


def targets(text: str | None = None) -> list[Target]:
    """The configured targets (INCIDENTIQ_NOTIFY_URLS, read now), or those in `text`."""
    out: list[Target] = []
    for url in notify_urls(secret("INCIDENTIQ_NOTIFY_URLS") if text is None else text):
        parts = urlsplit(url)
        host = f"{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        out.append(Target(id=hashlib.sha256(url.encode()).hexdigest()[:16], host=host, url=url))
    return out
