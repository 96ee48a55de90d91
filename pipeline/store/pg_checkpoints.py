"""The checkpoint store on PostgreSQL (INCIDENTIQ_DATABASE_URL): PostgresSaver from
langgraph-checkpoint-postgres with our strict serializer, opened on first use, its tables set up
at open (under an advisory lock, so two processes opening one database set them up once), and
its psycopg errors leaving every public method as CheckpointStoreError, as on SQLite."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

import psycopg
from langgraph.checkpoint.postgres import PostgresSaver
from psycopg.rows import dict_row

from pipeline.errors import CheckpointStoreError
from pipeline.store import backend
from pipeline.store.checkpoints import serializer

SETUP_LOCK_KEY = 0x49495143  # pg_advisory_lock key around saver.setup() ("IIQC")


class PostgresCheckpointStore(PostgresSaver):
    """PostgresSaver on one database (and schema), opened lazily, whose errors are CheckpointStoreError."""

    postgres = True

    def __init__(self, url: str):
        self.url = url
        self.path = backend.shown(url)  # what messages name
        self._conn: psycopg.Connection | None = None
        self._open_lock = threading.Lock()
        self.lost_runs_checked = False  # see pipeline/engine/lost_runs.py: once per process and database
        super().__init__(None, serde=serializer())  # type: ignore[arg-type]  - `conn` opens lazily

    @property
    def conn(self) -> psycopg.Connection:
        if self._conn is None:
            with self._open_lock:
                if self._conn is None:
                    self._conn = self._open()
        return self._conn

    @conn.setter
    def conn(self, value) -> None:
        self._conn = value

    @property
    def opened(self) -> bool:
        return self._conn is not None

    def _open(self) -> psycopg.Connection:
        try:
            conn = psycopg.connect(self.url, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        except psycopg.Error as exc:
            raise self.translated(exc) from None
        try:
            conn.execute("SELECT pg_advisory_lock(%s)", (SETUP_LOCK_KEY,))
            try:
                # PostgresSaver.setup, on this connection: its own would take the saver's lock,
                # which the caller of `conn` may hold already
                with conn.cursor() as cur:
                    cur.execute(self.MIGRATIONS[0])
                    row = cur.execute("SELECT v FROM checkpoint_migrations ORDER BY v DESC LIMIT 1").fetchone()
                    for v in range((row["v"] if row else -1) + 1, len(self.MIGRATIONS)):
                        cur.execute(self.MIGRATIONS[v])
                        cur.execute("INSERT INTO checkpoint_migrations (v) VALUES (%s)", (v,))
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK_KEY,))
        except psycopg.Error as exc:
            conn.close()
            raise self.translated(exc) from exc
        return conn

    def translated(self, exc: psycopg.Error) -> CheckpointStoreError:
        text = backend.redacted(exc, self.url)
        if isinstance(exc, psycopg.OperationalError):
            return CheckpointStoreError(f"the checkpoint store {self.path} cannot be reached: {text}; it is tried again")
        return CheckpointStoreError(f"the checkpoint store {self.path}: {text}")

    def close(self) -> None:
        with self._open_lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        """Rows of a query on the saver's tables (`%s` placeholders), as tuples."""
        try:
            with self._cursor() as cur:
                cur.execute(sql, params)
                return [tuple(r.values()) for r in cur.fetchall()]
        except psycopg.Error as exc:
            raise self.translated(exc) from exc

    # -- the public methods, translated (as CheckpointStore.TRANSLATED)
    @contextmanager
    def _cursor(self, *, pipeline: bool = False) -> Iterator:
        try:
            with super()._cursor(pipeline=pipeline) as cur:
                yield cur
        except psycopg.Error as exc:
            raise self.translated(exc) from exc

    def setup(self) -> None:
        self.conn  # noqa: B018 - opening sets the tables up

    def get(self, config):
        try:
            return super().get(config)
        except psycopg.Error as exc:
            raise self.translated(exc) from exc

    def get_tuple(self, config):
        try:
            return super().get_tuple(config)
        except psycopg.Error as exc:
            raise self.translated(exc) from exc

    def list(self, config, *, filter=None, before=None, limit=None):
        try:
            yield from super().list(config, filter=filter, before=before, limit=limit)
        except psycopg.Error as exc:
            raise self.translated(exc) from exc

    def put(self, config, checkpoint, metadata, new_versions):
        try:
            return super().put(config, checkpoint, metadata, new_versions)
        except psycopg.Error as exc:
            raise self.translated(exc) from exc

    def put_writes(self, config, writes, task_id, task_path=""):
        try:
            return super().put_writes(config, writes, task_id, task_path)
        except psycopg.Error as exc:
            raise self.translated(exc) from exc

    def delete_thread(self, thread_id):
        try:
            return super().delete_thread(thread_id)
        except psycopg.Error as exc:
            raise self.translated(exc) from exc

    def prune(self, thread_ids, *, strategy: str = "keep_latest"):
        try:
            return super().prune(thread_ids, strategy=strategy)
        except psycopg.Error as exc:
            raise self.translated(exc) from exc

    def get_delta_channel_history(self, *, config, channels):
        try:
            return super().get_delta_channel_history(config=config, channels=channels)
        except psycopg.Error as exc:
            raise self.translated(exc) from exc
