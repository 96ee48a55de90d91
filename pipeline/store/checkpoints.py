"""The checkpoint store: one SqliteSaver per process and file, whose serializer revives only our
classes, whose larger values are stored once per thread (checkpoint_values.py) and whose errors are
StorageError (CheckpointStore)."""
from __future__ import annotations

import json
import random
import sqlite3
import threading
import uuid
from datetime import datetime, timedelta, timezone
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Collection, Iterator, Mapping, Sequence, cast

from langchain_core.runnables import RunnableConfig

from langgraph.checkpoint.base import (WRITES_IDX_MAP, BaseCheckpointSaver, ChannelVersions, Checkpoint,
                                       CheckpointMetadata, CheckpointTuple, DeltaChannelHistory,
                                       get_checkpoint_metadata)
from langgraph.checkpoint.sqlite import SqliteSaver

from pipeline.errors import CheckpointStoreError
from pipeline.store import backend, checked_values, checkpoint_values
from pipeline.store.checkpoint_format import allowlist, history_ids, history_sql, ids_after
from pipeline.store.checkpoint_values import ValueCache, ValuesSerde
from pipeline.store.connection import LazyConnection

BUSY_TIMEOUT_MS = 30_000
# SqliteSaver's tables, created first so a new file gets them clustered on their keys: without a
# rowid, a row and its primary key are stored once (the key's index was a third of `writes`).
# The columns, keys and SqliteSaver's SQL are its own; files made before keep their rowid tables.
TABLES = """
CREATE TABLE IF NOT EXISTS checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL, parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, task_path TEXT NOT NULL DEFAULT '', idx INTEGER NOT NULL,
    channel TEXT NOT NULL, type TEXT, value BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)) WITHOUT ROWID;
"""

class CheckpointStore(LazyConnection, SqliteSaver):
    """SqliteSaver on one file, opened on first use, whose errors are our CheckpointStoreError (a StorageError).

    This is the checkpoint store's one boundary: sqlite3 errors (a lock held past the busy
    timeout, a damaged or foreign file) leave every public method as StorageError, so nothing
    above it catches sqlite3 or Exception. The file is opened lazily, so commands that read only
    the records store (`list`, `show`, `audit`) work while it is damaged; on open it must pass
    `PRAGMA integrity_check`.
    """

    def __init__(self, path: Path | str, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS):
        self.path = str(path)
        self.busy_timeout_ms = busy_timeout_ms
        self._lazy()
        self.lost_runs_checked = False  # see pipeline/engine/lost_runs.py: once per process and file
        # values larger than a few hundred bytes are stored once per thread (checkpoint_values.py)
        self.values = ValueCache()
        self.serde: ValuesSerde
        self._holding = threading.local()
        serde = ValuesSerde(fetch=self._fetch_value, cache=self.values, pickle_fallback=False,
                            allowed_msgpack_modules=allowlist())
        super().__init__(None, serde=serde)  # type: ignore[arg-type]  # `conn` opens lazily (LazyConnection)

    def _open(self) -> sqlite3.Connection:
        conn = None
        try:
            conn = connect(self.path, busy_timeout_ms=self.busy_timeout_ms)
            problems = [row[0] for row in conn.execute("PRAGMA integrity_check").fetchall()]
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            raise self.translated(exc) from exc
        if problems != ["ok"]:
            conn.close()
            raise self.damaged("; ".join(problems[:3]))
        return conn

    def damaged(self, detail: str) -> CheckpointStoreError:
        return CheckpointStoreError(
            f"the checkpoint store {self.path} is damaged ({detail}). Stop the poller and the web app, move the"
            f" file aside (mv {self.path} {self.path}.damaged) and run `python -m pipeline poll --once`: the records"
            " store keeps every event, so paused incidents are analysed again and decided ones keep their record")

    def translated(self, exc: sqlite3.Error) -> CheckpointStoreError:
        """Our error for a sqlite3 error of this file."""
        text = str(exc)
        if isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text):
            return CheckpointStoreError(f"the checkpoint store {self.path} is locked by another process"
                                f" (waited {self.busy_timeout_ms / 1000:g}s): {text}; it is tried again")
        if not isinstance(exc, sqlite3.OperationalError) and isinstance(exc, sqlite3.DatabaseError):
            return self.damaged(text)  # "file is not a database", "database disk image is malformed"
        return CheckpointStoreError(f"the checkpoint store {self.path}: {text}")

    def _closed(self) -> None:
        self.is_setup = False  # a new connection checks its file again

    # -- the public methods, translated (TRANSLATED lists them; a test checks it is complete)
    @contextmanager
    def cursor(self, transaction: bool = True) -> Iterator[sqlite3.Cursor]:
        try:
            with super().cursor(transaction) as cur:
                self._holding.lock = True  # this thread holds the saver's lock (see _fetch_value)
                try:
                    yield cur
                finally:
                    self._holding.lock = False
        except sqlite3.Error as exc:
            raise self.translated(exc) from exc

    def setup(self) -> None:
        if self.is_setup:
            return
        try:
            self.conn.executescript(TABLES)
            super().setup()
            self.conn.execute(checkpoint_values.SCHEMA)
        except sqlite3.OperationalError as exc:
            if "readonly database" not in str(exc):  # a read-only file of 0.2 still reads
                raise self.translated(exc) from exc
        except sqlite3.Error as exc:
            raise self.translated(exc) from exc

    def get_next_version(self, current: str | None, channel: None) -> str:
        """SqliteSaver's channel versions, shorter: 8 digits and 6 random hex digits instead of
        32 and 16 (every checkpoint row holds a version per channel, twice: a third of its bytes).
        They order as before and after the long ones (the number comes first and only grows: a
        new version is the highest one plus one), so threads written by 0.2 go on."""
        if current is None:
            number = 0
        elif isinstance(current, int):
            number = current
        else:
            number = int(current.split(".")[0])
        return f"{number + 1:08}.{random.getrandbits(24):06x}"

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> BaseCheckpointSaver[str]:
        # the compiled graph runs on this clone (its serializer's allowlist widened); its values
        # are read on its own connection, not by opening the original's
        clone = super().with_allowlist(extra_allowlist)
        if clone is not self and isinstance(clone.serde, ValuesSerde):
            clone.serde.fetch = cast(CheckpointStore, clone)._fetch_value  # a copy.copy of self
        return clone

    def _fetch_value(self, thread_id: str, value_hash: bytes) -> tuple[str, bytes]:
        # the serializer asks while SqliteSaver's reads hold the lock (the same thread, the same
        # connection); other callers (the history's interrupts, compaction) take it here
        try:
            if getattr(self._holding, "lock", False):
                return checkpoint_values.fetch_value(self.conn, thread_id, value_hash)
            with self.lock:
                return checkpoint_values.fetch_value(self.conn, thread_id, value_hash)
        except sqlite3.Error as exc:
            raise self.translated(exc) from exc

    def get(self, config: RunnableConfig) -> Checkpoint | None:
        try:
            return super().get(config)
        except sqlite3.Error as exc:
            raise self.translated(exc) from exc

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        try:
            return ids_after(checked_values.check(super().get_tuple(config)))
        except sqlite3.Error as exc:
            raise self.translated(exc) from exc

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        # a generator: the errors come while the caller iterates, and closing it releases the lock
        try:
            for found in super().list(config, filter=filter, before=before, limit=limit):
                yield checked_values.check(found)
        except sqlite3.Error as exc:
            raise self.translated(exc) from exc

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        # SqliteSaver.put, with the larger values stored once (checkpoint_values.py)
        configurable = config["configurable"]
        thread_id, checkpoint_ns = str(configurable["thread_id"]), configurable["checkpoint_ns"]
        kind, blob, rows = checkpoint_values.encode_checkpoint(self.serde, self.values, thread_id, checkpoint)
        serialized_metadata = json.dumps(get_checkpoint_metadata(config, metadata),
                                         ensure_ascii=False).encode("utf-8", "ignore")
        try:
            with self.cursor() as cur:
                if rows:
                    cur.executemany(checkpoint_values.INSERT, rows)
                cur.execute("INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id,"
                            " parent_checkpoint_id, type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (thread_id, checkpoint_ns, checkpoint["id"], configurable.get("checkpoint_id"),
                             kind, blob, serialized_metadata))
        except sqlite3.Error as exc:
            raise self.translated(exc) from exc
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns,
                                 "checkpoint_id": checkpoint["id"]}}

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        # SqliteSaver.put_writes, with the larger values stored once (checkpoint_values.py)
        configurable = config["configurable"]
        thread_id = str(configurable["thread_id"])
        verb = "REPLACE" if all(w[0] in WRITES_IDX_MAP for w in writes) else "IGNORE"
        rows, values = [], []
        for idx, (channel, value) in enumerate(writes):
            kind, blob, row = checkpoint_values.encode_write(self.serde, self.values, thread_id, value)
            if row is not None:
                values.append(row)
            rows.append((thread_id, str(configurable["checkpoint_ns"]), str(configurable["checkpoint_id"]), task_id,
                         task_path, WRITES_IDX_MAP.get(channel, idx), channel, kind, blob))
        try:
            with self.cursor() as cur:
                if values:
                    cur.executemany(checkpoint_values.INSERT, values)
                cur.executemany(f"INSERT OR {verb} INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id,"
                                " task_path, idx, channel, type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        except sqlite3.Error as exc:
            raise self.translated(exc) from exc

    def delete_thread(self, thread_id: str) -> None:
        try:
            super().delete_thread(thread_id)
            with self.cursor() as cur:
                cur.execute("DELETE FROM checkpoint_values WHERE thread_id = ?", (str(thread_id),))
        except sqlite3.Error as exc:
            raise self.translated(exc) from exc

    def get_delta_channel_history(self, *, config: RunnableConfig,
                                  channels: Sequence[str]) -> Mapping[str, DeltaChannelHistory]:
        try:
            return super().get_delta_channel_history(config=config, channels=channels)
        except sqlite3.Error as exc:
            raise self.translated(exc) from exc

    TRANSLATED = ("cursor", "setup", "get", "get_tuple", "list", "put", "put_writes", "delete_thread",
                  "get_delta_channel_history")
    # public methods that never touch the file: pure, or not implemented by SqliteSaver (they
    # raise NotImplementedError, a misuse), or async (SqliteSaver has no async support)
    UNTOUCHED = ("get_next_version", "with_allowlist", "from_conn_string", "delete_for_runs", "copy_thread",
                 "prune", "close")


_savers: dict[str, CheckpointStore] = {}
_savers_lock = threading.Lock()


def connect(path: Path | str, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """A checkpoint connection with WAL and a busy timeout, shareable across threads."""
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=busy_timeout_ms / 1000)
    conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def saver_for(path: Path | str) -> CheckpointStore:
    """The one shared checkpoint store of this process for a checkpoint file or a postgresql:// URL
    (opened on first use)."""
    if backend.is_postgres(path):
        key = str(path)
    else:
        key = str(Path(path).resolve()) if str(path) != ":memory:" else ":memory:"
    with _savers_lock:
        if key not in _savers:
            if backend.is_postgres(path):
                from pipeline.store.pg_checkpoints import PostgresCheckpointStore

                _savers[key] = PostgresCheckpointStore(key)  # type: ignore[assignment]  # the same public methods
            else:
                _savers[key] = CheckpointStore(path)
        return _savers[key]


def close_all() -> None:
    """Close every saver opened by this process (tests, shutdown)."""
    with _savers_lock:
        for saver in _savers.values():
            saver.close()
        _savers.clear()


def latest_checkpoint_id(saver: CheckpointStore, thread_id: str) -> str | None:
    """The newest checkpoint id of a thread, read without deserialising its state.

    SqliteSaver orders a thread's checkpoints by id (time-ordered ids); this module is the one
    place that relies on its table layout.
    """
    rows = _rows(saver, _NEWEST, (thread_id,))
    return rows[0][0] if rows else None


def read_once(saver: object) -> AbstractContextManager[None]:
    """Within it, this thread decodes each stored value of the saver once (ValuesSerde.read_once);
    a saver that stores values inline (PostgreSQL's) reads as always."""
    serde = getattr(saver, "serde", None)
    return serde.read_once() if isinstance(serde, ValuesSerde) else nullcontext()


def values_at(saver: CheckpointStore, thread_id: str, checkpoint_id: str) -> dict[str, Any] | None:
    """The channel values of one checkpoint of the thread, read and checked like every checkpoint
    (InvalidCheckpoint), without LangGraph's snapshot around them (its tasks, pending writes
    applied, next nodes); None when the checkpoint is not there."""
    found = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": "",
                                              "checkpoint_id": checkpoint_id}})
    return dict(found.checkpoint.get("channel_values") or {}) if found is not None else None


def checkpoint_parents(saver: CheckpointStore, thread_id: str) -> list[tuple[str, str | None]]:
    """(checkpoint id, parent id) of every checkpoint of a thread, oldest first.

    Straight from the saver's table: listing through the saver would deserialise every checkpoint
    just to draw the history's lanes.
    """
    rows = _rows(saver, _PARENTS, (thread_id,))
    return [(cid, pid) for cid, pid in rows]


# -- history without deserialising states ------------------------------------------------------
SPECIAL_CHANNELS = ("__interrupt__", "__resume__", "__error__", "__scheduled__")


def checkpoint_rows(saver: SqliteSaver, thread_id: str, *, newest: int | None = None) -> list[dict[str, Any]]:
    """The checkpoints of a thread, oldest first, read without deserialising a state: id, parent
    id, source and step (its metadata), the nodes whose writes are pending on it (`ran`: finished
    tasks, by node name; `parent_ran` the same of its parent: what ran to make it), whether an interrupt was raised there (`raised`, with its `interrupts`
    ids) and whether the interrupted task is still waiting (`paused`). With `newest`, only the
    newest that many (the ids and parents of all are `checkpoint_parents`)."""
    if getattr(saver, "postgres", False):
        rows, writes = saver.checkpoint_rows_raw(thread_id, newest=newest)  # type: ignore[attr-defined]
    else:
        rows, writes = _sqlite_checkpoint_rows(saver, thread_id, newest=newest)
    return _history_rows(saver, rows, writes)


def _sqlite_checkpoint_rows(saver: SqliteSaver, thread_id: str, *, newest: int | None) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    checkpoints_sql, writes_sql = history_sql(newest=bool(newest), postgres=False)
    with saver.cursor(transaction=False) as cur:  # holds the saver's lock
        cur.execute(checkpoints_sql, (thread_id, int(newest)) if newest else (thread_id,))
        rows = cur.fetchall()
        wanted = history_ids(rows)
        writes = []
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            cur.execute(f"{writes_sql}({','.join('?' * len(chunk))})", (thread_id, *chunk))
            writes += cur.fetchall()
    return rows, writes


def _history_rows(saver: BaseCheckpointSaver[str], rows: list[tuple[Any, ...]],
                  writes: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    shown = {cid for cid, _, _ in rows}
    tasks: dict[str, dict[str, dict[str, Any]]] = {}
    for cid, task_id, task_path, channel, kind, value in writes:
        task = tasks.setdefault(cid, {}).setdefault(task_id, {"node": _node_of(task_path), "result": False,
                                                              "raised": False, "interrupts": []})
        if channel == "__interrupt__":
            task["raised"] = True
            if cid in shown:
                task["interrupts"] += [getattr(i, "id", None) for i in saver.serde.loads_typed((kind, value)) or ()]
        elif channel not in SPECIAL_CHANNELS:
            task["result"] = True
    def ran(cid: str | None) -> list[str]:
        return sorted({t["node"] for t in tasks.get(cid or "", {}).values() if t["result"] and t["node"]})

    out = []
    for cid, pid, metadata in rows:
        meta = _metadata(metadata)
        pending = tasks.get(cid, {}).values()
        out.append({"checkpoint_id": cid, "parent_checkpoint_id": pid, "source": meta.get("source"),
                    "step": meta.get("step"), "ran": ran(cid), "parent_ran": ran(pid),
                    "raised": any(t["raised"] for t in pending),
                    "interrupts": [i for t in pending for i in t["interrupts"] if i],
                    "paused": any(t["raised"] and not t["result"] for t in pending)})
    return out


def _node_of(task_path: str | None) -> str | None:
    # task_path reads "~__pregel_pull, rca" for a node's task ("__start__" for the input's)
    return task_path.split(",")[-1].strip() or None if task_path else None


def created_at(checkpoint_id: str) -> str:
    """When a checkpoint was made, from its uuid6 id (to about 10 microseconds of its `ts`)."""
    value = uuid.UUID(checkpoint_id).int
    ticks = ((value >> 96) << 28) | (((value >> 80) & 0xFFFF) << 12) | ((value >> 64) & 0x0FFF)
    return (_GREGORIAN + timedelta(microseconds=ticks // 10)).isoformat()


_GREGORIAN = datetime(1582, 10, 15, tzinfo=timezone.utc)
def _metadata(blob: str | bytes | dict[str, Any] | None) -> dict[str, Any]:
    # SqliteSaver stores metadata as JSON text (bytes); a few hundred bytes, never the state
    if blob is None:
        return {}
    if isinstance(blob, dict):
        return blob  # PostgresSaver's jsonb column, read as a dict
    try:
        metadata: dict[str, Any] = json.loads(blob)
        return metadata
    except (TypeError, ValueError):
        return {}


# -- retention -----------------------------------------------------------------------------
def prune_thread(saver: SqliteSaver, thread_id: str, *, keep: set[str]) -> int:
    """Delete a thread's checkpoints (and their pending writes) except `keep`; returns how many
    went. One transaction under the saver's lock, so no run reads a half-pruned thread."""
    if getattr(saver, "postgres", False):
        pruned: int = saver.prune_thread_except(thread_id, keep=keep)  # type: ignore[attr-defined]
        return pruned
    with saver.lock:
        conn = saver.conn
        ids = [r[0] for r in conn.execute("SELECT checkpoint_id FROM checkpoints WHERE thread_id = ?", (thread_id,))]
        gone = [(thread_id, cid) for cid in ids if cid not in keep]
        if not gone:
            return 0
        try:
            conn.executemany("DELETE FROM writes WHERE thread_id = ? AND checkpoint_id = ?", gone)
            conn.executemany("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?", gone)
            _collect_values(saver, thread_id)
            conn.commit()
        except sqlite3.Error as exc:
            conn.rollback()
            raise CheckpointStoreError(f"checkpoint store: cannot prune {thread_id}: {exc}") from exc
        return len(gone)


def compact_checkpoint(saver: CheckpointStore, thread_id: str, checkpoint_id: str, *, cleared: dict[str, Any]) -> bool:
    """Rewrite a kept checkpoint with some channels set to the given values (retention empties the
    log window: the records store has those events); its id, parent and metadata stay. False
    when the checkpoint is not there."""
    if getattr(saver, "postgres", False):
        compacted: bool = saver.compact(thread_id, checkpoint_id, cleared=cleared)  # type: ignore[attr-defined]
        return compacted
    with saver.lock:
        row = saver.conn.execute("SELECT parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints"
                                 " WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?",
                                 (thread_id, checkpoint_id)).fetchone()
    if row is None:
        return False
    parent, kind, blob, metadata = row
    checkpoint = saver.serde.loads_typed((kind, blob))
    values = checkpoint.get("channel_values") or {}
    changed = {k: v for k, v in cleared.items() if k in values and values[k] != v}
    if not changed:
        return True
    checkpoint["channel_values"] = {**values, **changed}
    rows: list[tuple[Any, ...]] = []
    if isinstance(saver.serde, ValuesSerde):
        new_kind, new_blob, rows = checkpoint_values.encode_checkpoint(saver.serde, saver.values, thread_id, checkpoint)
    else:
        new_kind, new_blob = saver.serde.dumps_typed(checkpoint)
    with saver.lock:
        try:
            saver.conn.executemany(checkpoint_values.INSERT, rows)
            saver.conn.execute("UPDATE checkpoints SET type = ?, checkpoint = ? WHERE thread_id = ?"
                               " AND checkpoint_ns = '' AND checkpoint_id = ?",
                               (new_kind, new_blob, thread_id, checkpoint_id))
            _collect_values(saver, thread_id)
            saver.conn.commit()
        except sqlite3.Error as exc:
            saver.conn.rollback()
            raise CheckpointStoreError(f"checkpoint store: cannot compact {thread_id}: {exc}") from exc
    return True


def _collect_values(saver: SqliteSaver, thread_id: str) -> None:
    # the values only the removed checkpoints (or the compacted channels) referenced go too
    if isinstance(saver.serde, ValuesSerde):
        checkpoint_values.collect_garbage(saver.serde, saver.conn, thread_id)


def shrink_file(saver: SqliteSaver, *, full: bool = True) -> None:
    """Give the pages pruning freed back to the file system (SQLite: incremental vacuum). The
    first time, with `full`, one VACUUM switches the file to incremental mode (it rewrites the
    whole file: the `prune` command does it, the poller never)."""
    if getattr(saver, "postgres", False):
        return  # PostgreSQL's autovacuum reuses the space deleted rows leave
    with saver.lock:
        conn = saver.conn
        try:
            conn.commit()
            if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
                if not full:
                    return
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
                conn.execute("VACUUM")
            else:
                conn.execute("PRAGMA incremental_vacuum")
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error as exc:
            raise CheckpointStoreError(f"checkpoint store: cannot shrink the file: {exc}") from exc


def sample_thread(saver: SqliteSaver, *, rank: int) -> tuple[list[tuple[str, bytes]], list[tuple[str, bytes]]]:
    """The stored values (type, value) and checkpoints (type, checkpoint, oldest first) of the
    thread ranked `rank` by how few checkpoints it has (SQLite; what make_dictionary samples)."""
    with saver.lock:
        thread = saver.conn.execute("SELECT thread_id FROM checkpoints GROUP BY thread_id"
                                    " ORDER BY count(*), thread_id LIMIT 1 OFFSET ?", (rank,)).fetchone()[0]
        values = saver.conn.execute("SELECT type, value FROM checkpoint_values WHERE thread_id = ?",
                                    (thread,)).fetchall()
        rows = saver.conn.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id = ?"
                                  " ORDER BY checkpoint_id", (thread,)).fetchall()
    return [tuple(v) for v in values], [tuple(r) for r in rows]


def threads_with_checkpoints(saver: CheckpointStore, thread_ids: list[str]) -> set[str]:
    """Which of these threads have at least one checkpoint (one indexed lookup each)."""
    found: set[str] = set()
    for thread_id in thread_ids:
        if _rows(saver, _ANY, (thread_id,)):
            found.add(thread_id)
    return found


# queries on the saver's `checkpoints` table, which both savers lay out alike (thread_id,
# checkpoint_ns, checkpoint_id, parent_checkpoint_id; ids sort by time), each written for both
# savers' drivers: sqlite3's `?` and psycopg's `%s` (langgraph's PostgresSaver uses psycopg's style)
_NEWEST = {"sqlite": "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''"
                     " ORDER BY checkpoint_id DESC LIMIT 1",
           "postgres": "SELECT checkpoint_id FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = ''"
                       " ORDER BY checkpoint_id DESC LIMIT 1"}
_PARENTS = {"sqlite": "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints"
                      " WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id",
            "postgres": "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints"
                        " WHERE thread_id = %s AND checkpoint_ns = '' ORDER BY checkpoint_id"}
_ANY = {"sqlite": "SELECT 1 FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' LIMIT 1",
        "postgres": "SELECT 1 FROM checkpoints WHERE thread_id = %s AND checkpoint_ns = '' LIMIT 1"}


def _rows(saver: CheckpointStore, sql: dict[str, str], params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """One of the queries above, in the saver's own dialect."""
    if getattr(saver, "postgres", False):
        found: list[tuple[Any, ...]] = saver.rows(sql["postgres"], params)  # type: ignore[attr-defined]
        return found
    with saver.cursor(transaction=False) as cur:
        cur.execute(sql["sqlite"], params)
        return [tuple(r) for r in cur.fetchall()]
