"""The checkpoint store: one SqliteSaver per process whose serializer revives only our classes."""
from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from langgraph.checkpoint.serde import _msgpack
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

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
