"""The checkpoint store on PostgreSQL (INCIDENTIQ_DATABASE_URL): PostgresSaver from
langgraph-checkpoint-postgres with our strict serializer, opened on first use, its tables set up
at open (under an advisory lock, so two processes opening one database set them up once), and
its psycopg errors leaving every public method as CheckpointStoreError, as on SQLite.

A connection the server dropped (a restart, pg_terminate_backend) is replaced: a method that
failed on it is run once more on a new connection (tried for postgres.RECONNECT_SECONDS). That is
safe because every method of the saver is a read or an idempotent upsert (checkpoints, blobs and
writes are keyed by thread, checkpoint and task), and our prune/compact are one transaction each;
a history listing that already yielded rows is not restarted (its caller sees the error)."""
from __future__ import annotations

import time
from contextlib import contextmanager
from functools import partial
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

import psycopg
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple,
                                       DeltaChannelHistory)
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row

from pipeline.errors import CheckpointStoreError
from pipeline.store import backend, checked_values, checkpoint_format, postgres
from pipeline.store.checkpoint_format import serializer
from pipeline.store.connection import LazyConnection

T = TypeVar("T")

SETUP_LOCK_KEY = 0x49495143  # advisory lock key around saver.setup() ("IIQC"), with the schema's


def plain_index(migration: str) -> str:
    """A saver migration with its indexes built plainly: CREATE INDEX CONCURRENTLY waits for every
    transaction of the whole database (other tenants' too) older than it, which stalled a new
    schema's first open for as long as anyone's transaction ran; a plain build locks only that
    (new, or still small) table's writes for the moment it takes, under our setup lock."""
    return migration.replace("CREATE INDEX CONCURRENTLY", "CREATE INDEX")


class PostgresCheckpointStore(LazyConnection, PostgresSaver):
    """PostgresSaver on one database (and schema), opened lazily, whose errors are CheckpointStoreError."""

    postgres = True

    def __init__(self, url: str):
        self.url = url
        self.path = backend.shown(url)  # what messages name
        self._lazy()
        self.lost_runs_checked = False  # see pipeline/engine/lost_runs.py: once per process and database
        super().__init__(None, serde=serializer())  # type: ignore[arg-type]  # `conn` opens lazily (LazyConnection)

    def _open(self, *, retry_for: float = 0.0) -> psycopg.Connection[dict[str, Any]]:
        try:
            conn = postgres.open_session(self.url, "checkpoints", retry_for=retry_for, prepare_threshold=0,
                                         row_factory=dict_row)
        except psycopg.Error as exc:
            raise self.translated(exc) from None
        try:
            self._take_setup_lock(conn)
            try:
                # PostgresSaver.setup, on this connection: its own would take the saver's lock,
                # which the caller of `conn` may hold already
                with conn.cursor() as cur:
                    cur.execute(self.MIGRATIONS[0])
                    row = cur.execute("SELECT v FROM checkpoint_migrations ORDER BY v DESC LIMIT 1").fetchone()
                    for v in range((row["v"] if row else -1) + 1, len(self.MIGRATIONS)):
                        cur.execute(plain_index(self.MIGRATIONS[v]))
                        cur.execute("INSERT INTO checkpoint_migrations (v) VALUES (%s)", (v,))
            finally:
                conn.execute(f"SELECT pg_advisory_unlock(%s, {postgres.TENANT})", (SETUP_LOCK_KEY,))
        except psycopg.Error as exc:
            conn.close()
            raise self.translated(exc) from exc
        return conn

    @staticmethod
    def _take_setup_lock(conn: psycopg.Connection[dict[str, Any]]) -> None:
        """The setup lock of this schema, by trying: a session blocked in pg_advisory_lock is a
        running statement, whose snapshot the holder's CREATE INDEX CONCURRENTLY waits out, and
        three openers at once deadlocked so (the server aborted one)."""
        pause = 0.01

        def took() -> bool:
            row = conn.execute(f"SELECT pg_try_advisory_lock(%s, {postgres.TENANT})", (SETUP_LOCK_KEY,)).fetchone()
            assert row is not None  # a SELECT of one value
            return bool(row["pg_try_advisory_lock"])

        while not took():
            time.sleep(pause)
            pause = min(pause * 2, 0.2)

    def translated(self, exc: psycopg.Error) -> CheckpointStoreError:
        text = backend.redacted(exc, self.url)
        if isinstance(exc, psycopg.OperationalError):
            return CheckpointStoreError(f"the checkpoint store {self.path} cannot be reached: {text}; it is tried again")
        return CheckpointStoreError(f"the checkpoint store {self.path}: {text}")

    def _lost(self) -> bool:
        """Whether the last failure was the connection going away (psycopg closes it then)."""
        return self._conn is not None and self._conn.closed

    def _again(self, call: Callable[[], T]) -> T:
        """`call()`; if the server dropped the connection, once more on a new one."""
        try:
            return call()
        except (psycopg.Error, CheckpointStoreError) as exc:
            if not self._lost():
                if isinstance(exc, psycopg.Error):
                    raise self.translated(exc) from exc
                raise
        self._reopen()
        try:
            return call()
        except psycopg.Error as exc:
            raise self.translated(exc) from exc

    def _reopen(self) -> None:
        with self._open_lock:
            if self._conn is not None and self._conn.closed:
                self._conn = self._open(retry_for=postgres.RECONNECT_SECONDS)

    def rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Rows of a query on the saver's tables (`%s` placeholders), as tuples."""
        def read() -> list[tuple[Any, ...]]:
            with self._cursor() as cur:
                cur.execute(sql, params)
                return [tuple(r.values()) for r in cur.fetchall()]

        return self._again(read)

    # -- what pipeline/store/checkpoints.py reads and rewrites (history, retention), on our tables
    def checkpoint_rows_raw(self, thread_id: str, *, newest: int | None) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """(checkpoint id, parent id, metadata) oldest first, and (checkpoint id, task id, task
        path, channel, type, value) of their pending writes and their parents' (values only of
        interrupts), as checkpoints.checkpoint_rows reads them on SQLite."""
        checkpoints_sql, writes_sql = checkpoint_format.history_sql(newest=bool(newest), postgres=True)
        rows = self.rows(checkpoints_sql, (thread_id, int(newest)) if newest else (thread_id,))
        wanted = checkpoint_format.history_ids(rows)
        writes = self.rows(writes_sql, (thread_id, wanted)) if wanted else []
        return rows, writes

    def prune_thread_except(self, thread_id: str, *, keep: set[str]) -> int:
        """Delete a thread's checkpoints, their writes and the blobs no kept checkpoint refers to,
        except `keep`, in one transaction; returns how many checkpoints went."""
        def prune() -> int:
            with self._cursor() as cur, cur.connection.transaction():
                cur.execute("SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s", (thread_id,))
                gone = [r["checkpoint_id"] for r in cur.fetchall() if r["checkpoint_id"] not in keep]
                if not gone:
                    return 0
                cur.execute("DELETE FROM checkpoint_writes WHERE thread_id = %s AND checkpoint_id = ANY(%s)",
                            (thread_id, gone))
                cur.execute("DELETE FROM checkpoints WHERE thread_id = %s AND checkpoint_id = ANY(%s)",
                            (thread_id, gone))
                cur.execute("DELETE FROM checkpoint_blobs b WHERE b.thread_id = %s AND NOT EXISTS"
                            " (SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id"
                            " AND c.checkpoint_ns = b.checkpoint_ns"
                            " AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)", (thread_id,))
                return len(gone)

        try:
            return self._again(prune)
        except CheckpointStoreError as exc:
            raise CheckpointStoreError(f"checkpoint store: cannot prune {thread_id}: {exc.message}") from exc

    def compact(self, thread_id: str, checkpoint_id: str, *, cleared: dict[str, Any]) -> bool:
        """checkpoints.compact_checkpoint here: the channel values live in checkpoint_blobs, one
        row per channel version (a kept checkpoint's versions are rewritten with the cleared value;
        other kept checkpoints sharing that version were cleared alike)."""
        rows = self.rows("SELECT checkpoint FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = ''"
                         " AND checkpoint_id = %s", (thread_id, checkpoint_id))
        if not rows:
            return False
        versions = (rows[0][0] or {}).get("channel_versions") or {}
        def rewrite() -> None:
            with self._cursor() as cur, cur.connection.transaction():
                for channel, value in cleared.items():
                    if channel not in versions:
                        continue
                    kind, blob = self.serde.dumps_typed(value)
                    cur.execute("UPDATE checkpoint_blobs SET type = %s, blob = %s WHERE thread_id = %s"
                                " AND checkpoint_ns = '' AND channel = %s AND version = %s",
                                (kind, blob, thread_id, channel, str(versions[channel])))

        try:
            self._again(rewrite)
        except CheckpointStoreError as exc:
            raise CheckpointStoreError(f"checkpoint store: cannot compact {thread_id}: {exc.message}") from exc
        return True

    # -- the public methods, translated (as CheckpointStore.TRANSLATED)
    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator[psycopg.Cursor[dict[str, Any]]]:
        try:
            with super()._cursor(pipeline=pipeline) as cur:
                yield cur
        except psycopg.Error as exc:
            raise self.translated(exc) from exc

    def setup(self) -> None:
        self.conn  # noqa: B018 - opening sets the tables up

    def get(self, config: RunnableConfig) -> Checkpoint | None:
        return self._again(partial(super().get, config))

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return checkpoint_format.ids_after(checked_values.check(self._again(partial(super().get_tuple, config))))

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        yielded = False
        try:
            for item in super().list(config, filter=filter, before=before, limit=limit):
                yielded = True
                yield checked_values.check(item)
            return
        except (psycopg.Error, CheckpointStoreError) as exc:
            if yielded or not self._lost():
                if isinstance(exc, psycopg.Error):
                    raise self.translated(exc) from exc
                raise
        self._reopen()
        try:
            for item in super().list(config, filter=filter, before=before, limit=limit):
                yield checked_values.check(item)
        except psycopg.Error as exc:
            raise self.translated(exc) from exc

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        return self._again(partial(super().put, config, checkpoint, metadata, new_versions))

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        return self._again(partial(super().put_writes, config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        return self._again(partial(super().delete_thread, thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        return self._again(partial(super().prune, thread_ids, strategy=strategy))

    def get_delta_channel_history(self, *, config: RunnableConfig,
                                  channels: Sequence[str]) -> Mapping[str, DeltaChannelHistory]:
        return self._again(partial(super().get_delta_channel_history, config=config, channels=channels))
