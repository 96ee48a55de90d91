"""The records store on SQLite: a sqlite3 connection with the interface the store functions use on
either database (pipeline/store/sql.py): `$n` parameters bound by name, a writer transaction
(BEGIN IMMEDIATE: SQLite's single writer), and the schema version in `PRAGMA user_version`."""
from __future__ import annotations

import sqlite3
from typing import Any, Callable, Iterable, Sequence

from pipeline.store.sql import SQLITE


def _bound(params: Sequence[Any] | dict[str, Any]) -> dict[str, Any]:
    # `$1` is SQLite's named parameter "1": bind by name, whatever order the text uses them in
    return params if isinstance(params, dict) else {str(n): v for n, v in enumerate(params, 1)}


class Connection:
    dialect = SQLITE

    def __init__(self, conn: sqlite3.Connection):
        self.raw = conn

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        return self.raw.execute(sql, _bound(params))

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        return self.raw.executemany(sql, (_bound(p) for p in seq))

    def begin(self) -> None:
        """The writer transaction: one at a time per file, across threads and processes."""
        self.raw.execute("BEGIN IMMEDIATE")

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
