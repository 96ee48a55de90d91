"""How the records store writes SQL once for SQLite and PostgreSQL: explicit statements, no translation.

Every statement is text both databases parse as it is, with parameters as `$1`, `$2`, ... :
- PostgreSQL reads `$n` itself (the protocol's own parameters): `postgres.Connection` sends the
  text untouched through psycopg's RawCursor, so no client-side code looks inside it;
- SQLite reads `$1` as a named parameter ("1"); `sqlite.Connection` sends it as `?1`, SQLite's
  numbered parameter (the one rewrite of a statement's text, outside its literals), and binds the
  values by position, so the order they appear in does not matter either.
Both parse literals, comments and identifiers with their own parser: a `?`, `%`, `$1` or LIKE
inside a string literal is text. Where the dialects truly differ, the store writes each dialect's
statement out, chosen by `conn.dialect` (LIKE vs ILIKE, scalar min/max vs LEAST/GREATEST, the
types of the schema's DDL, the triggers and search indexes of migrations 5-7: see schema.py), and
`insert_rows` writes many rows as one statement on PostgreSQL (each column an array, unnested).

A statement assembled from parts (filters, IN lists) takes its placeholders from `Params`,
which numbers them as the values are added.
"""
from __future__ import annotations

from contextlib import AbstractContextManager
from functools import lru_cache
from typing import Any, Iterable, Iterator, Protocol, Sequence

from pipeline.store.stored_text import NUL, stored_text

SQLITE = "sqlite"
POSTGRES = "postgres"
DIALECTS = (SQLITE, POSTGRES)

# case-insensitive substring match (SQLite's LIKE ignores ASCII case; PostgreSQL's does not)
LIKE = {SQLITE: "LIKE", POSTGRES: "ILIKE"}
# the smaller / larger of two values (SQLite's scalar min/max; PostgreSQL's min/max are aggregates)
LEAST = {SQLITE: "min", POSTGRES: "LEAST"}
GREATEST = {SQLITE: "max", POSTGRES: "GREATEST"}


class Row(Protocol):
    """A result row of either database (sqlite3.Row, postgres.Row): by position or column name, `dict(row)`."""

    def __getitem__(self, key: int | str, /) -> Any: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __len__(self) -> int: ...
    def keys(self) -> list[str]: ...


class Cursor(Protocol):
    """What the store functions use of a cursor (sqlite3.Cursor, postgres.Cursor)."""

    @property
    def rowcount(self) -> int: ...
    def fetchone(self) -> Row | None: ...
    def fetchall(self) -> list[Row]: ...
    def __iter__(self) -> Iterator[Row]: ...


class Connection(Protocol):
    """The records store's connection on either database (sqlite.Connection, postgres.Connection)."""

    dialect: str

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Cursor: ...
    def executemany(self, sql: str, seq: Iterable[Sequence[Any]], /) -> Cursor: ...
    def begin(self, *, serial: bool = ..., pipelined: bool = ...) -> None: ...
    def serialize(self) -> None: ...
    def pipelined(self) -> AbstractContextManager[None]: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def schema_version(self) -> int: ...
    def set_schema_version(self, version: int, /) -> None: ...
    def set_trace_callback(self, callback: Any, /) -> None: ...
    def close(self) -> None: ...


class Params(list[object]):
    """The values of a statement being assembled; `p(value)` adds one and returns its placeholder.

        p = Params()
        sql = f"SELECT * FROM incidents WHERE status IN ({p.each(statuses)}) AND service = {p(service)}"
        conn.execute(sql, p)
    """

    def __call__(self, value: object) -> str:
        self.append(value)
        return f"${len(self)}"

    def each(self, values: Iterable[object]) -> str:
        """Placeholders for every value, comma-separated (an IN list, a row value)."""
        return ", ".join(self(v) for v in values)


@lru_cache(maxsize=256)
def placeholders(count: int, start: int = 1) -> str:
    """`$start, ..., $(start + count - 1)`: the placeholders of a fixed statement's values."""
    return ", ".join(f"${n}" for n in range(start, start + count))


def insert_rows(conn: Connection, table: str, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> None:
    """Insert `rows` (values in the order of `columns`: each (name, PostgreSQL type)) into `table`.
    SQLite: executemany, at C speed in the process. PostgreSQL: one statement whose columns are
    arrays, unnested (`INSERT ... SELECT * FROM unnest($1::text[], ...)`): executemany there runs
    the statement once a row, the server's work and the client's a row each, and a batch's context
    ids were the largest part of storing it."""
    if not rows:
        return
    names = ", ".join(name for name, _ in columns)
    if conn.dialect != POSTGRES:
        conn.executemany(f"INSERT INTO {table}({names}) VALUES ({placeholders(len(columns))})", rows)
        return
    arrays = ", ".join(f"${n}::{kind}[]" for n, (_, kind) in enumerate(columns, 1))
    values = [[stored_text(v) if v.__class__ is str and NUL in v else v for v in column] for column in zip(*rows)]
    conn.execute(f"INSERT INTO {table}({names}) SELECT * FROM unnest({arrays})", values)
