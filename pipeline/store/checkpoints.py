"""The checkpoint store: one SqliteSaver per process whose serializer revives only our classes."""
from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

from langgraph.checkpoint.serde import _msgpack
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from pipeline.errors import StorageError
from pipeline.state import STATE_CLASSES

BUSY_TIMEOUT_MS = 30_000

if not _msgpack.STRICT_MSGPACK_ENABLED:  # pragma: no cover - guards import order
    raise RuntimeError(
        "langgraph was imported before pipeline: LANGGRAPH_STRICT_MSGPACK is not in effect. "
        "Import pipeline (or set LANGGRAPH_STRICT_MSGPACK=true) before langgraph."
    )


def allowlist() -> list[tuple[str, str]]:
    """(module, class) pairs the serializer may revive: our state classes and nothing else."""
    return [(cls.__module__, cls.__name__) for cls in STATE_CLASSES]


def serializer() -> JsonPlusSerializer:
    """Strict msgpack with our allowlist; no pickle, no JSON-module allowlist."""
    return JsonPlusSerializer(pickle_fallback=False, allowed_msgpack_modules=allowlist())


_savers: dict[str, SqliteSaver] = {}
_savers_lock = threading.Lock()


def connect(path: Path | str) -> sqlite3.Connection:
    """A checkpoint connection with WAL and a busy timeout, shareable across threads."""
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000)
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def saver_for(path: Path | str) -> SqliteSaver:
    """The one shared SqliteSaver of this process for a checkpoint file."""
    key = str(Path(path).resolve()) if str(path) != ":memory:" else ":memory:"
    with _savers_lock:
        if key not in _savers:
            saver = SqliteSaver(connect(path), serde=serializer())
            saver.setup()
            _savers[key] = saver
        return _savers[key]


def close_all() -> None:
    """Close every saver opened by this process (tests, shutdown)."""
    with _savers_lock:
        for saver in _savers.values():
            saver.conn.close()
        _savers.clear()


def latest_checkpoint_id(saver: SqliteSaver, thread_id: str) -> str | None:
    """The newest checkpoint id of a thread, read without deserialising its state.

    SqliteSaver orders a thread's checkpoints by id (time-ordered ids); this module is the one
    place that relies on its table layout.
    """
    with saver.cursor(transaction=False) as cur:
        cur.execute("SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''"
                    " ORDER BY checkpoint_id DESC LIMIT 1", (thread_id,))
        row = cur.fetchone()
    return row[0] if row else None


def checkpoint_parents(saver: SqliteSaver, thread_id: str) -> list[tuple[str, str | None]]:
    """(checkpoint id, parent id) of every checkpoint of a thread, oldest first.

    Straight from the saver's table: listing through the saver would deserialise every checkpoint
    just to draw the history's lanes.
    """
    with saver.cursor(transaction=False) as cur:
        cur.execute("SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints"
                    " WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id", (thread_id,))
        return [(cid, pid) for cid, pid in cur.fetchall()]


# -- history without deserialising states ------------------------------------------------------
def checkpoint_rows(saver: SqliteSaver, thread_id: str) -> list[dict]:
    """Every checkpoint of a thread, oldest first: id, parent id and metadata (source, step), and
    whether the checkpoint has an interrupt among its pending writes (the approval gate paused
    there). The states stay serialised: the history's tree and lanes need none of them."""
    with saver.cursor(transaction=False) as cur:
        cur.execute(
            "SELECT c.checkpoint_id, c.parent_checkpoint_id, c.metadata,"
            " EXISTS (SELECT 1 FROM writes w WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = ''"
            "         AND w.checkpoint_id = c.checkpoint_id AND w.channel = '__interrupt__') AS paused"
            " FROM checkpoints c WHERE c.thread_id = ? AND c.checkpoint_ns = '' ORDER BY c.checkpoint_id",
            (thread_id,))
        rows = cur.fetchall()
    out = []
    for cid, pid, metadata, paused in rows:
        meta = _metadata(saver, metadata)
        out.append({"checkpoint_id": cid, "parent_checkpoint_id": pid, "source": meta.get("source"),
                    "step": meta.get("step"), "paused": bool(paused)})
    return out


def _metadata(saver: SqliteSaver, blob) -> dict:
    # SqliteSaver stores metadata as JSON text (bytes); a few hundred bytes, never the state
    if blob is None:
        return {}
    try:
        return json.loads(blob)
    except (TypeError, ValueError):
        return {}


# -- retention -----------------------------------------------------------------------------
def prune_thread(saver: SqliteSaver, thread_id: str, *, keep: set[str]) -> int:
    """Delete a thread's checkpoints (and their pending writes) except `keep`; returns how many
    went. One transaction under the saver's lock, so no run reads a half-pruned thread."""
    with saver.lock:
        conn = saver.conn
        ids = [r[0] for r in conn.execute("SELECT checkpoint_id FROM checkpoints WHERE thread_id = ?", (thread_id,))]
        gone = [(thread_id, cid) for cid in ids if cid not in keep]
        if not gone:
            return 0
        try:
            conn.executemany("DELETE FROM writes WHERE thread_id = ? AND checkpoint_id = ?", gone)
            conn.executemany("DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?", gone)
            conn.commit()
        except sqlite3.Error as exc:
            conn.rollback()
            raise StorageError(f"checkpoint store: cannot prune {thread_id}: {exc}") from exc
        return len(gone)


def shrink_file(saver: SqliteSaver, *, full: bool = True) -> None:
    """Give the pages pruning freed back to the file system (SQLite: incremental vacuum). The
    first time, with `full`, one VACUUM switches the file to incremental mode (it rewrites the
    whole file: the `prune` command does it, the poller never)."""
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
            raise StorageError(f"checkpoint store: cannot shrink the file: {exc}") from exc
