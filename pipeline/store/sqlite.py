"""The records store on SQLite: a sqlite3 connection with the interface the store functions use on
either database (pipeline/store/sql.py): `$n` parameters bound by their number, a writer
transaction (BEGIN IMMEDIATE: SQLite's single writer), and the schema version in `PRAGMA user_version`.

A statement's `$n` (outside string literals and quoted names) is sent as `?n`, SQLite's numbered
parameter, so its values bind by position: `$n` was a named parameter ("n"), bound from a dict
built for every statement and row, and binding by name cost twice the lookup of a batch's ids.
Values that do not number the statement's parameters exactly (more or fewer, or a dict) are
bound by name to the statement as written, as before."""
from __future__ import annotations

import contextlib
import re
import sqlite3
from functools import lru_cache
from typing import Any, Callable, Iterable, Sequence

from pipeline.store.sql import SQLITE
from pipeline.store.stored_text import stored_params, stored_rows

# a string literal or a quoted name (skipped whole: SQLite reads what is inside as text), or a `$n`
_PARTS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\$(\d+)")


@lru_cache(maxsize=1024)
def numbered(sql: str) -> tuple[str, int]:
    """The statement with each `$n` written `?n`, and the largest n (0: none)."""
    largest = 0

    def number(m: re.Match[str]) -> str:
        nonlocal largest
        if m.group(1) is None:
            return m.group(0)
        largest = max(largest, int(m.group(1)))
        return "?" + m.group(1)

    return _PARTS.sub(number, sql), largest


def _by_name(params: Sequence[Any]) -> dict[str, Any]:
    return {str(n): v for n, v in enumerate(params, 1)}


def _numbers_exactly(count: int, params: Sequence[Any] | dict[str, Any]) -> bool:
    return isinstance(params, (tuple, list)) and len(params) == count


_SEQUENCES = {tuple, list}


class Connection:
    dialect = SQLITE

    def __init__(self, conn: sqlite3.Connection):
        self.raw = conn

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        text, count = numbered(sql)
        params = stored_params(params)  # the same text as PostgreSQL keeps (store/stored_text.py)
        if _numbers_exactly(count, params):
            return self.raw.execute(text, params)
        return self.raw.execute(sql, params if isinstance(params, dict) else _by_name(params))

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        text, count = numbered(sql)
        rows = stored_rows(seq if isinstance(seq, list) else list(seq))
        # every row a tuple or list of `count` values (asked of all rows at once, at C speed)
        if set(map(type, rows)) <= _SEQUENCES and set(map(len, rows)) <= {count}:
            return self.raw.executemany(text, rows)
        return self.raw.executemany(sql, (p if isinstance(p, dict) else _by_name(p) for p in rows))

    def begin(self, *, serial: bool = True, pipelined: bool = False) -> None:
        """The writer transaction: one at a time per file, across threads and processes. SQLite
        has one writer whatever `serial` says (postgres.Connection.begin), so it holds it from BEGIN;
        `pipelined` saves round trips SQLite does not make."""
        self.raw.execute("BEGIN IMMEDIATE")

    def serialize(self) -> None:
        """Nothing to take: BEGIN IMMEDIATE made this transaction the file's one writer."""

    def pipelined(self) -> contextlib.AbstractContextManager[None]:
        """Nothing to gather: SQLite's statements run in this process, no round trips (postgres.py)."""
        return contextlib.nullcontext()

    def commit(self) -> None:
        self.raw.execute("COMMIT")

    def rollback(self) -> None:
        self.raw.execute("ROLLBACK")

    def schema_version(self) -> int:
        return int(self.raw.execute("PRAGMA user_version").fetchone()[0])

    def set_schema_version(self, version: int) -> None:
        # user_version lives in the database header and commits with the transaction
        self.raw.execute(f"PRAGMA user_version = {int(version)}")

    def has_extension(self, name: str) -> bool:
        """Whether this SQLite build was compiled with an extension (fts5)."""
        options = {row[0] for row in self.raw.execute("PRAGMA compile_options")}
        return f"ENABLE_{name.upper()}" in options

    def set_trace_callback(self, callback: Callable[[str], object] | None) -> None:
        self.raw.set_trace_callback(callback)

    def close(self) -> None:
        self.raw.close()
