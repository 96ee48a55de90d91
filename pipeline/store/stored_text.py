"""Text as the records store keeps it, on either database: the one sanitiser of the store's sink.

PostgreSQL's text cannot hold NUL (U+0000): psycopg refuses the statement ("PostgreSQL text fields
cannot contain NUL (0x00) bytes"), so one JSON line whose `message`, `service`, `host` or
`exception` held the escape `\\u0000` failed its whole batch, on every rerun, and the file poller
never got past it (issue 39.1). A raw NUL byte is refused as binary before this (a dead letter);
the JSON escape decodes to text that is fine everywhere but there.

Every text a statement carries is written with each NUL shown as `␀` (U+2400, SYMBOL FOR NULL):
by both connections (`sqlite.Connection`, `postgres.Connection`), so both stores keep the same
text, whoever the caller (events, titles, dead letters, layouts, people's text). Values put in
JSON first (event bodies, the miner's tokens) keep theirs as JSON's `\\u0000`, which any text
holds. Other control characters are valid text in both databases and are kept: what a terminal
or a page must not show is their sanitisers' business, where the text is shown.
"""
from __future__ import annotations

from typing import Any, Sequence

NUL = "\x00"
SHOWN_NUL = "\u2400"  # ␀: visibly what was there


def stored_text(text: str) -> str:
    """`text` as the store keeps it (each NUL shown as ␀)."""
    return text.replace(NUL, SHOWN_NUL) if NUL in text else text


def _holds_nul(value: Any) -> bool:
    return value.__class__ is str and NUL in value


def stored_params(params: Any) -> Any:
    """A statement's parameters (a sequence, or a dict of named ones) with their texts as stored;
    the very object when none holds a NUL (the common case, asked at C speed per value)."""
    if isinstance(params, dict):
        if not any(map(_holds_nul, params.values())):
            return params
        return {k: stored_text(v) if _holds_nul(v) else v for k, v in params.items()}
    if not any(map(_holds_nul, params)):
        return params
    return tuple(stored_text(v) if _holds_nul(v) else v for v in params)


def stored_rows(rows: Sequence[Any]) -> list[Any]:
    """`executemany`'s rows, each as `stored_params` leaves it."""
    return [stored_params(row) for row in rows]
