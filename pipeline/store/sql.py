"""How the records store writes SQL once for SQLite and PostgreSQL: explicit statements, no translation.

Every statement is text both databases parse as it is, with parameters as `$1`, `$2`, ... :
- PostgreSQL reads `$n` itself (the protocol's own parameters): `postgres.Connection` sends the
  text untouched through psycopg's RawCursor, so no client-side code looks inside it;
- SQLite reads `$1` as a named parameter ("1"), and `sqlite.Connection` binds the values by those
  names (sqlite3's own named binding), so the order they appear in does not matter.
Both parse literals, comments and identifiers with their own parser: a `?`, `%`, `$1` or LIKE
inside a string literal is text. Where the dialects truly differ, the store writes each dialect's
statement out, chosen by `conn.dialect` (LIKE vs ILIKE, scalar min/max vs LEAST/GREATEST, the
types of the schema's DDL, the triggers and search indexes of migrations 5-7: see schema.py).

A statement assembled from parts (filters, IN lists) takes its placeholders from `Params`,
which numbers them as the values are added.
"""
from __future__ import annotations

from typing import Iterable

SQLITE = "sqlite"
POSTGRES = "postgres"
DIALECTS = (SQLITE, POSTGRES)

# case-insensitive substring match (SQLite's LIKE ignores ASCII case; PostgreSQL's does not)
LIKE = {SQLITE: "LIKE", POSTGRES: "ILIKE"}
# the smaller / larger of two values (SQLite's scalar min/max; PostgreSQL's min/max are aggregates)
LEAST = {SQLITE: "min", POSTGRES: "LEAST"}
GREATEST = {SQLITE: "max", POSTGRES: "GREATEST"}


class Params(list):
    """The values of a statement being assembled; `p(value)` adds one and returns its placeholder.

        p = Params()
        sql = f"SELECT * FROM incidents WHERE status IN ({p.each(statuses)}) AND service = {p(service)}"
        conn.execute(sql, p)
    """

    def __call__(self, value: object) -> str:
        self.append(value)
        return f"${len(self)}"

    def each(self, values: Iterable) -> str:
        """Placeholders for every value, comma-separated (an IN list, a row value)."""
        return ", ".join(self(v) for v in values)


def placeholders(count: int, start: int = 1) -> str:
    """`$start, ..., $(start + count - 1)`: the placeholders of a fixed statement's values."""
    return ", ".join(f"${n}" for n in range(start, start + count))
