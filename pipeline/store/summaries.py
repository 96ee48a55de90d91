"""An incident's summary as the records store keeps it (what lists and `show` need without
opening the checkpoint: the RCA, recommendation, proposal, decision, similar docs).

On SQLite the JSON is zstd-compressed with the checkpoint store's shipped dictionary (its RCA and
recommendation quote the knowledge docs the dictionary holds): 5 KB of JSON became about 1 KB on
the bench's incidents. PostgreSQL keeps it as text (TOAST compresses values over 2 KB itself).
Summaries written as JSON text by earlier releases read as they are.
"""
from __future__ import annotations

import json
from typing import Any

import zstandard

from pipeline.errors import StorageError
from pipeline.store import stored_dictionary


def stored(summary: dict[str, Any], *, postgres: bool) -> str | bytes:
    text = json.dumps(summary, default=str)
    return text if postgres else stored_dictionary.compress(text.encode())


def parsed(value: str | bytes | None) -> dict[str, Any]:
    if not value:
        return {}
    if isinstance(value, bytes):
        try:
            value = stored_dictionary.decompress(value).decode()
        except zstandard.ZstdError as exc:
            raise StorageError(f"records store: a damaged incident summary ({exc})") from exc
    summary: dict[str, Any] = json.loads(value)
    return summary
