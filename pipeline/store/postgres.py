"""The records store on PostgreSQL: a psycopg connection with the interface the store functions
use on either database (pipeline/store/sql.py), so there is one set of them (records.py,
operations.py, ...) and one schema (schema.py). Nothing here reads or changes a statement's text:
- statements are sent as they are written, through psycopg's RawCursor: their `$n` parameters
  are the server's own (no client-side placeholder parsing, so a `%` or `?` in a literal is text);
- `begin()` (SQLite's BEGIN IMMEDIATE: the single writer correlation and claims rely on) is BEGIN
  and a transaction-level advisory lock on one fixed key per store, so writers serialise exactly
  as on SQLite, across processes and machines; readers never wait (MVCC). A stored batch begins
  without it (`begin(serial=False)`): it writes its own source's rows (context, dead letters)
  beside other writers and takes the lock (`serialize()`) for what all sources share, to its commit;
- `pipelined()` sends writes whose answers nobody reads in one round trip (psycopg's pipeline mode);
  a whole transaction may be pipelined (`begin(pipelined=True)`: a stored batch): BEGIN goes with
  its first statement, its writes go with its next read, and its last writes with the COMMIT, so
  it waits on the server only where it reads what it needs;
- the schema version is a one-row schema_version table (SQLite keeps it in `PRAGMA user_version`).

A tenant (a data dir's worth of records) is a schema: put `?options=-csearch_path%3Dname` in the URL.

Connections drop (a server restart, a failover, an administrator's pg_terminate_backend): a
statement that finds its connection gone opens a new one (a few tries over RECONNECT_SECONDS, for a
server coming back up) and is sent again when nothing of it can have been applied (a BEGIN, a
read outside a transaction); otherwise it fails (inside a transaction the server rolled it back)
and the store's next statement reconnects. Every session names its process in application_name
(`iiq:<pid>:<process tag>:<role>`), so the poller lease can tell a live holder from a dead one.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import time
from typing import Any, Callable, Iterable, Iterator, Sequence, SupportsIndex, TypeVar

import psycopg
from psycopg.rows import tuple_row

from pipeline.store.owners import process_owner
from pipeline.store.sql import POSTGRES
from pipeline.store.sql import Row as AnyRow  # what the store reads of a row on either database
from pipeline.store.stored_text import stored_params, stored_rows

# advisory lock keys (two int4s: ours, and the tenant's schema, so tenants in one database, and
# tests in schemas of their own, do not wait for each other): the records store's writer lock
# ("IIQR", per transaction) and the working poller's lock ("IIQP", per session)
WRITER_LOCK_KEY = 0x49495152
POLLER_LOCK_KEY = 0x49495150
TENANT = "hashtext(current_schema())"
WRITER_LOCK = f"SELECT pg_advisory_xact_lock($1, {TENANT})"  # held to the transaction's end

RECONNECT_SECONDS = 10.0  # how long a lost connection is tried again (a restarting server)
# statements that change nothing: sent again on a new connection when the old one dropped under them
_READS = ("SELECT", "WITH", "SHOW")

T = TypeVar("T")


class Row(tuple[Any, ...]):
    """A result row read by position or by column name, and `dict(row)`, like sqlite3.Row."""

    __slots__ = ()
    names: tuple[str, ...] = ()

    def __getitem__(self, key: SupportsIndex | slice | str) -> Any:  # a column name too, as sqlite3.Row
        if isinstance(key, str):
            return tuple.__getitem__(self, self.names.index(key))
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self.names)


def _row_factory(cursor: psycopg.Cursor[Any]) -> Callable[[Sequence[Any]], Any]:
    if cursor.description is None:
        return tuple_row(cursor)
    names = tuple(c.name for c in cursor.description)
    cls = type("Row", (Row,), {"__slots__": (), "names": names})
    return lambda values: cls(values)


def first_value(row: AnyRow | tuple[Any, ...] | None) -> Any:
    """The first column of the one row a statement always returns (a count, to_regclass, a lock's answer)."""
    assert row is not None
    return row[0]


class Cursor:
    """What the store functions use of a cursor: fetchone, fetchall, rowcount, iteration."""

    def __init__(self, cur: psycopg.Cursor[AnyRow] | None, *, rowcount: int = -1):
        self._cur = cur
        self.rowcount = cur.rowcount if cur is not None else rowcount

    def _rows(self) -> bool:
        """Whether the statement may have rows to read: it returned some, or its answer has not
        come yet (pipelined: psycopg's fetch waits for it)."""
        return self._cur is not None and (self._cur.description is not None or self._cur.pgresult is None)

    def fetchone(self) -> AnyRow | None:
        return self._cur.fetchone() if self._cur is not None and self._rows() else None

    def fetchall(self) -> list[AnyRow]:
        return self._cur.fetchall() if self._cur is not None and self._rows() else []

    def __iter__(self) -> Iterator[AnyRow]:
        return iter(self.fetchall())


class Connection:
    """A psycopg connection (autocommit, like our sqlite3 connections), reopened when the server
    dropped it (see the module docstring)."""

    dialect = POSTGRES

    def __init__(self, url: str):
        self.url = url
        self._pg = self._open()
        self._in_transaction = False
        self._serial = False  # this transaction holds the writer lock (begin, serialize)
        # a pipelined transaction (begin(pipelined=True)): its BEGIN waits for its first statement,
        # and the pipeline it runs in is closed by its commit or rollback
        self._pending_begin = False
        self._pipe: contextlib.ExitStack | None = None
        self._trace: Callable[[str, Sequence[Any]], object] | None = None

    def _open(self, retry_for: float = 0.0) -> psycopg.Connection[AnyRow]:
        return open_session(self.url, "records", row_factory=_row_factory, cursor_factory=psycopg.RawCursor,
                            retry_for=retry_for)

    def _run(self, send: Callable[[], T], *, resendable: bool) -> T:
        """`send()` on the session, reopened first if the server closed it; sent once more on a
        new session when it failed because the session dropped and nothing of it can have applied."""
        if self._pg.closed:
            self._reconnect()
        try:
            return send()
        except psycopg.OperationalError:
            if not self._pg.closed or self._in_transaction or not resendable:
                raise  # a write may have been applied, or a transaction's earlier statements are gone
        self._reconnect()
        return send()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        values = tuple(stored_params(params)) or None  # its text holds no NUL (store/stored_text.py)
        if self._trace is not None:
            self._trace(sql, values or ())
        if self._pending_begin:
            return self._run(lambda: self._first(sql, values), resendable=True)
        reads = sql.lstrip()[:6].upper().startswith(_READS)
        return self._run(lambda: Cursor(self._pg.execute(sql, values)), resendable=reads)

    def _first(self, sql: str, values: tuple[Any, ...] | None) -> Cursor:
        """A pipelined transaction's BEGIN and first statement, in one round trip; sent again on a
        new session when the old one had dropped (nothing of a transaction that never reached
        its commit applies)."""
        self._pipe = contextlib.ExitStack()
        try:
            pipeline = self._pipe.enter_context(self._pg.pipeline())
            self._pg.execute("BEGIN")
            cur = self._pg.execute(sql, values)
            pipeline.sync()
        except BaseException:
            self._close_pipe(quietly=True)
            if not self._pg.closed:  # the statement failed, not the session: the transaction is begun
                self._pending_begin, self._in_transaction = False, True
            raise
        self._pending_begin, self._in_transaction = False, True
        return Cursor(cur)

    def _flush_begin(self) -> None:
        """A pipelined transaction's BEGIN, alone (what comes first is no plain statement)."""
        self._pending_begin = False
        self._run(lambda: self._pg.execute("BEGIN"), resendable=True)
        self._in_transaction = True
        self._pipe = contextlib.ExitStack()
        self._pipe.enter_context(self._pg.pipeline())

    def _close_pipe(self, *, quietly: bool = False) -> None:
        """Leave the transaction's pipeline, its answers read (an error among them raised, unless
        `quietly`: the transaction is failing already)."""
        pipe, self._pipe = self._pipe, None
        if pipe is None:
            return
        try:
            pipe.close()
        except psycopg.Error:
            if not quietly:
                raise

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> Cursor:
        if self._pending_begin:
            self._flush_begin()
        if self._pg.closed:
            self._reconnect()
        with self._pg.cursor() as cur:
            cur.executemany(sql, [tuple(p) for p in stored_rows(list(seq))])
            return Cursor(None, rowcount=cur.rowcount)

    def begin(self, *, serial: bool = True, pipelined: bool = False) -> None:
        """The writer transaction: BEGIN, then the store's advisory lock (SQLite's BEGIN IMMEDIATE).
        With `serial=False` the lock waits for `serialize()`: what comes before it runs beside
        other writers (rows no other writer touches: a leased source's lines), what comes after
        it, to the commit, one writer at a time. `pipelined` (with `serial=False`): the whole
        transaction in pipeline mode (the module docstring); a statement's rowcount is then unknown."""
        if pipelined and not serial:
            self._pending_begin, self._serial = True, False
            return

        def send() -> None:
            self._pg.execute("BEGIN")
            if serial:
                try:
                    self._pg.execute(WRITER_LOCK, (WRITER_LOCK_KEY,))
                except psycopg.Error:
                    if not self._pg.closed:
                        self._pg.execute("ROLLBACK")
                    raise
            self._in_transaction = True
            self._serial = serial

        self._run(send, resendable=True)

    def serialize(self) -> None:
        """Take the store's writer lock in this transaction (held to its end), if not yet held."""
        if self._pending_begin:
            self._flush_begin()
        if not self._serial:
            self._run(lambda: self._pg.execute(WRITER_LOCK, (WRITER_LOCK_KEY,)),
                      resendable=False)
            self._serial = True

    @contextlib.contextmanager
    def pipelined(self) -> Iterator[None]:
        """Statements sent without waiting for each one's answer (psycopg's pipeline mode): writes
        nobody reads go in one round trip, answered at the end; reading a statement's rows waits
        for the answers sent so far. Inside a pipelined transaction they are already."""
        if self._pipe is not None or self._pending_begin:
            yield
            return
        with self._pg.pipeline():
            yield

    def commit(self) -> None:
        if self._pending_begin:  # a pipelined transaction that sent nothing
            self._pending_begin = False
            return
        if self._pg.closed:
            self._reconnect()  # raises: the server rolled the transaction back
        self._in_transaction = False
        if self._pipe is None:
            self._pg.execute("COMMIT")
            return
        try:
            self._pg.execute("COMMIT")  # with the writes not yet answered: one round trip
            self._close_pipe()
        except psycopg.Error:
            # a write failed (the pipeline skipped the COMMIT after it): the transaction ends here
            self._close_pipe(quietly=True)
            if not self._pg.closed:
                self._pg.execute("ROLLBACK")
            raise

    def rollback(self) -> None:
        self._in_transaction = False
        if self._pending_begin:
            self._pending_begin = False
            return
        self._close_pipe(quietly=True)
        if not self._pg.closed:  # else the server ended the session and its transaction with it
            self._pg.execute("ROLLBACK")

    def _reconnect(self) -> None:
        self._pipe = None  # the old session's pipeline goes with it
        if self._in_transaction:
            self._in_transaction = False
            raise psycopg.OperationalError("the connection to the database was lost inside a transaction"
                                           " (the server rolled it back)")
        self._pg.close()
        self._pg = self._open(retry_for=RECONNECT_SECONDS)

    def scalar(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """One value of a read (PostgreSQL's own statements: pg_locks, pg_stat_activity), reconnecting
        as execute does."""
        if self._pending_begin:
            self._flush_begin()
        return self._run(lambda: first_value(self._pg.execute(sql, tuple(params) or None).fetchone()), resendable=True)

    def schema_version(self) -> int:
        def read() -> int:
            if first_value(self._pg.execute("SELECT to_regclass('schema_version')").fetchone()) is None:
                return 0
            row = self._pg.execute("SELECT version FROM schema_version").fetchone()
            return int(row[0]) if row else 0

        return self._run(read, resendable=True)

    def set_schema_version(self, version: int) -> None:
        # called inside the migration's writer transaction, so two processes never race here
        self._pg.execute("CREATE TABLE IF NOT EXISTS schema_version (id INTEGER PRIMARY KEY CHECK (id = 1),"
                         " version INTEGER NOT NULL)")
        self._pg.execute("INSERT INTO schema_version(id, version) VALUES (1, $1)"
                         " ON CONFLICT (id) DO UPDATE SET version = excluded.version", (version,))

    def set_trace_callback(self, callback: Callable[[str, Sequence[Any]], object] | None) -> None:
        """Like SQLite's statement trace, with each statement's parameters (its text keeps its `$n`):
        the tests' query plan checks."""
        self._trace = callback

    def close(self) -> None:
        self._pg.close()


def connect(url: str) -> Connection:
    return Connection(url)


def process_tag(owner: str | None = None) -> str:
    """A short name of the process behind an owner token (host, pid, start time; ours by default)."""
    process = ":".join((owner or process_owner()).split(":")[:3])
    return hashlib.sha1(process.encode()).hexdigest()[:12]


def application_name(role: str) -> str:
    """What this process's sessions are called on the server (pg_stat_activity.application_name)."""
    return f"iiq:{os.getpid()}:{process_tag()}:{role}"[:63]


def open_session(url: str, role: str, *, retry_for: float = 0.0, **kwargs: Any) -> psycopg.Connection[Any]:
    """A new autocommit connection named for this process and `role`; with `retry_for`, connection
    failures are tried again (0.1 s, doubling, up to that many seconds: a server coming back up)."""
    deadline = time.monotonic() + retry_for
    pause = 0.1
    while True:
        try:
            return psycopg.connect(url, autocommit=True, application_name=application_name(role), **kwargs)
        except psycopg.OperationalError:
            if time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 2.0)


class SessionLock:
    """The poller's lock: a session-level advisory lock held on a connection of its own. When the
    holder's process dies its session ends and the server frees the lock, so a standby takes over;
    when the server drops the session (a restart), the lock went with it and is taken again."""

    def __init__(self, url: str):
        self.url = url
        self._pg: psycopg.Connection[Any] | None = None

    def held(self) -> bool:
        """Whether our session still holds the lock (one round trip; never reconnects)."""
        if self._pg is None:
            return False
        try:
            self._pg.execute("SELECT 1")
            return True
        except psycopg.OperationalError:
            self.drop()  # the session ended: the lock went with it
            return False

    def try_hold(self) -> bool:
        """Take the lock, or check it is still ours (False while another session holds it)."""
        if self.held():
            return True
        pg = open_session(self.url, "poller-lock")
        got = first_value(pg.execute(f"SELECT pg_try_advisory_lock(%s, {TENANT})", (POLLER_LOCK_KEY,)).fetchone())
        if not got:
            pg.close()
            return False
        self._pg = pg
        return True

    def drop(self) -> None:
        """Give the lock up now: unlocked on the session, then the session closed. Closing alone
        frees it only once the server's backend has ended, a moment later, so a standby polling at
        once after a clean stop could still find it held (CI saw it, under load)."""
        if self._pg is not None:
            try:
                self._pg.execute("SELECT pg_advisory_unlock_all()")
            except psycopg.Error:
                pass  # the session is gone already, and the lock with it
            self._pg.close()
            self._pg = None


def poller_lock_held(conn: Connection) -> bool:
    """Whether some session (of any process, on any machine) holds the poller's lock."""
    return bool(conn.scalar("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                            f" AND classid = $1::int4::oid AND objid = ({TENANT})::int4::oid AND objsubid = 2",
                            (POLLER_LOCK_KEY,)))


def sessions_of(conn: Connection, owner: str) -> int:
    """How many sessions the process behind an owner token has on the server (0: it is gone, or
    the server dropped them and it has not come back yet)."""
    return int(conn.scalar("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $1",
                           (f"iiq:%:{process_tag(owner)}:%",)))
