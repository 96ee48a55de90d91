"""Which database a store lives in: a SQLite file (the embedded default) or PostgreSQL
(INCIDENTIQ_DATABASE_URL=postgresql://...), and the errors either raises.

The store functions are written once for both (pipeline/store/sql.py: statements both parse,
per-dialect text where they differ); pipeline/store/sqlite.py and pipeline/store/postgres.py are
the two connections. psycopg is imported only when a URL asks for PostgreSQL.
"""
from __future__ import annotations

import sqlite3
from urllib.parse import urlsplit, urlunsplit

from pipeline.errors import MASK

SCHEMES = ("postgresql://", "postgres://")


def is_postgres(where: object) -> bool:
    return str(where).startswith(SCHEMES)


def shown(where: object) -> str:
    """`where` as it may appear in a message, a log or a page: a URL's password masked."""
    text = str(where)
    if not is_postgres(text):
        return text
    parts = urlsplit(text)
    if parts.password is None:
        return text
    netloc = f"{parts.username or ''}:{MASK}@{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def password_of(url: str | None) -> str | None:
    """The password in a database URL (a secret the redaction masks wherever it appears)."""
    return urlsplit(url).password if url and is_postgres(url) else None


def database_errors() -> tuple[type[BaseException], ...]:
    """The driver errors a store translates into StorageError (psycopg's only once it is loaded)."""
    import sys

    psycopg = sys.modules.get("psycopg")
    return (sqlite3.Error, psycopg.Error) if psycopg is not None else (sqlite3.Error,)


def redacted(exc: BaseException, where: str) -> str:
    """A driver error's text with the URL's password masked (a connection error may quote the URL)."""
    text = str(exc)
    password = password_of(where)
    if password:
        text = text.replace(where, shown(where)).replace(password, MASK)
    return text
