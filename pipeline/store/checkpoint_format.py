"""What both checkpoint savers (SQLite's, checkpoints.py, and PostgreSQL's, pg_checkpoints.py)
do alike: the strict serializer and its allowlist, the history's SQL over their tables, and the
floor under this process's checkpoint-id clock. Each saver imports it; neither imports the other.
"""
from __future__ import annotations

import threading
from typing import Any, TypeVar

from langgraph.checkpoint.base import CheckpointTuple
from langgraph.checkpoint.base import id as checkpoint_ids
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from pipeline.state import STATE_CLASSES
from pipeline.store.checkpoint_values import OwnAllowlistSerde


def allowlist() -> list[tuple[str, str]]:
    """(module, class) pairs the serializer may revive: our state classes and nothing else."""
    return [(cls.__module__, cls.__name__) for cls in STATE_CLASSES]


def serializer() -> JsonPlusSerializer:
    """Strict msgpack with our allowlist (never widened by LangGraph); no pickle, no JSON-module allowlist."""
    return OwnAllowlistSerde(pickle_fallback=False, allowed_msgpack_modules=allowlist())


def history_sql(*, newest: bool, postgres: bool) -> tuple[str, str]:
    """The history's two reads, written once for both savers' tables: a thread's checkpoints (id,
    parent, metadata; the newest N with `newest`) and the pending writes of a list of checkpoints
    (values only of interrupts). SqliteSaver names the writes table `writes` and its value `value`,
    PostgresSaver `checkpoint_writes` and `blob`; the id list is `IN (?, ...)` on SQLite (appended by the
    caller, in chunks) and `= ANY(%s)` on PostgreSQL."""
    p = "%s" if postgres else "?"
    columns = f"SELECT checkpoint_id, parent_checkpoint_id, metadata FROM checkpoints WHERE thread_id = {p}" \
              " AND checkpoint_ns = ''"
    if newest:
        checkpoints_sql = (f"SELECT * FROM ({columns} ORDER BY checkpoint_id DESC LIMIT {p}) AS newest"
                           " ORDER BY checkpoint_id")
    else:
        checkpoints_sql = f"{columns} ORDER BY checkpoint_id"
    table, value = ("checkpoint_writes", "blob") if postgres else ("writes", "value")
    writes_sql = ("SELECT checkpoint_id, task_id, task_path, channel,"
                  " CASE WHEN channel = '__interrupt__' THEN type END AS kind,"
                  f" CASE WHEN channel = '__interrupt__' THEN {value} END AS value"
                  f" FROM {table} WHERE thread_id = {p} AND checkpoint_ns = '' AND checkpoint_id"
                  + (" = ANY(%s)" if postgres else " IN "))
    return checkpoints_sql, writes_sql


def history_ids(rows: list[tuple[Any, ...]]) -> list[str]:
    """The checkpoints whose pending writes the history reads: those listed and their parents
    (what ran to make them)."""
    return sorted({cid for cid, _, _ in rows} | {pid for _, pid, _ in rows if pid})


_id_clock_lock = threading.Lock()
_Found = TypeVar("_Found", bound=CheckpointTuple | None)




def ids_after(found: _Found) -> _Found:
    """The checkpoint tuple read (or None), after moving this process's checkpoint-id clock past it.

    A thread's newest checkpoint is the one with the greatest id (both savers order by it), and
    LangGraph makes an id from the machine's clock (uuid6). A process whose clock is behind the
    one that wrote the head would write the next checkpoints with smaller ids: an approval's run
    ended, yet the thread's "newest" stayed the gate, so the incident read `analyzing` until a
    poll ran it again. Every run and state update starts by reading the checkpoint it continues
    through `get_tuple`, so the ids this process makes next sort after it, whatever its clock.
    LangGraph's uuid6 already keeps ids increasing within a process by this floor."""
    checkpoint_id = found.config["configurable"].get("checkpoint_id") if found is not None else None
    if checkpoint_id:
        try:
            made = checkpoint_ids.UUID(checkpoint_id)
        except ValueError:  # not an id LangGraph made (a forged row): nothing to order after
            return found
        if made.version == 6:
            with _id_clock_lock:
                if (checkpoint_ids._last_v6_timestamp or 0) < made.time:
                    checkpoint_ids._last_v6_timestamp = made.time  # type: ignore[assignment]  # typed None, holds an int
    return found
