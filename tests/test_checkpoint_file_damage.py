"""A locked, damaged or deleted checkpoints.sqlite is a clear StorageError, a retried
poll, or a re-run from the stored events; never a traceback, a crashed poller or a lost review."""
from __future__ import annotations

import inspect
import sqlite3
import subprocess
import sys

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.sqlite import SqliteSaver

from pipeline.composition import open_engine
from pipeline.engine.graph import build_graph
from pipeline.engine.lost_runs import LOST_DECIDED
from pipeline.engine.runner import run_pending
from pipeline.errors import StorageError
from pipeline.operations.metrics import poller_status
from pipeline.unattended.poller import Poller
from pipeline.review.service import ReviewService
from pipeline.sources.file import FileSource
from pipeline.store import checkpoints
from tests.support import FIXTURES, by_category, cli, make_settings, paused_ids, pending


def damage(path, how: str) -> None:
    if path.exists():  # fold the WAL into the file first, as the last process to close it does
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
    if how == "truncated":
        size = path.stat().st_size
        with open(path, "r+b") as f:
            f.truncate(size // 2)
    else:
        path.write_bytes(b"\x8f\x00garbage, not a database\xff" * 4000)


def config(thread="t", checkpoint_id=None) -> dict:
    c = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
    if checkpoint_id:
        c["configurable"]["checkpoint_id"] = checkpoint_id
    return c


# every public method of CheckpointStore, called on a foreign file
CALLS = {
    "cursor": lambda s: s.cursor().__enter__(),
    "setup": lambda s: s.setup(),
    "get": lambda s: s.get(config()),
    "get_tuple": lambda s: s.get_tuple(config()),
    "list": lambda s: list(s.list(config())),
    "put": lambda s: s.put(config(), empty_checkpoint(), {}, {}),
    "put_writes": lambda s: s.put_writes(config(checkpoint_id="c1"), [("a", 1)], "task"),
    "delete_thread": lambda s: s.delete_thread("t"),
    "get_delta_channel_history": lambda s: s.get_delta_channel_history(config=config(checkpoint_id="c1"),
                                                                      channels=["a"]),
}


def test_the_translation_covers_every_public_method_of_the_saver():
    public = {name for name, member in inspect.getmembers(SqliteSaver)
              if not name.startswith("_") and callable(member)
              and not (inspect.iscoroutinefunction(member) or inspect.isasyncgenfunction(member))}
    store = checkpoints.CheckpointStore
    assert public - {"close"} <= set(store.TRANSLATED) | set(store.UNTOUCHED), "a new saver method is untranslated"
    assert set(store.TRANSLATED) == set(CALLS)
    assert all(name in store.__dict__ for name in store.TRANSLATED)


@pytest.mark.parametrize("method", sorted(CALLS))
def test_every_translated_method_raises_our_error_on_a_foreign_file(tmp_path, method):
    path = tmp_path / "checkpoints.sqlite"
    damage(path, "garbage")
    saver = checkpoints.CheckpointStore(path)
    with pytest.raises(StorageError, match=r"checkpoints.sqlite is damaged \(file is not a database\).*move the file"):
        CALLS[method](saver)


@pytest.mark.parametrize("how", ["truncated", "garbage"])
def test_record_commands_work_with_a_damaged_checkpoint_file_and_run_commands_say_what_to_do(
        paused_engine, capsys, how):
    inc = by_category(paused_engine, "db_pool_exhausted")
    checkpoints.close_all()
    path = paused_engine.checkpoint_path
    damage(path, how)
    for args in (["list"], ["show", inc], ["deadletters"], ["audit"]):
        code, out, err = cli(capsys, *args)
        assert code == 0 and not err, (args, err)
    assert inc in cli(capsys, "list")[1]
    code, _, err = cli(capsys, "approve", inc, "--reviewer", "ann")
    assert code == 1 and err.count("\n") == 1
    assert f"the checkpoint store {path} is damaged" in err and "move the file aside" in err


def test_a_locked_checkpoint_store_fails_the_poll_and_the_next_poll_runs_what_it_stored(engine, tmp_path):
    path = engine.checkpoint_path
    engine.graph.checkpointer.setup()  # the file exists, in WAL mode, as after any earlier run
    engine.graph = build_graph(checkpoints.CheckpointStore(path, busy_timeout_ms=300))
    log = tmp_path / "app.jsonl"
    log.write_bytes((FIXTURES / "small.jsonl").read_bytes())
    poller = Poller(engine, FileSource(log, max_bytes=engine.settings.max_event_bytes), interval=0.01)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys\n"
         f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
         "c.execute('BEGIN EXCLUSIVE'); c.execute('CREATE TABLE held(x)')\n"
         "print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(StorageError, match="is locked by another process"):
            poller.poll_once()
        (status,) = poller_status(engine.records)
        assert status["state"] == "error" and "locked" in status["last_error"]
        # the events are in the records store; no incident was failed or charged an attempt
        assert engine.records.event_count() == 10
        assert {r["status"] for r in engine.records.incidents()} == {"analyzing"}
        assert {r["attempts"] for r in engine.records.incidents()} == {0}
    finally:
        holder.communicate("", timeout=30)
    poller.poll_once()
    poller.close()
    assert len(paused_ids(engine)) == 4


def test_a_deleted_checkpoint_file_reruns_undecided_incidents_and_keeps_decided_ones(paused_engine, data_dir, capsys):
    review = ReviewService(paused_engine)
    approved = by_category(paused_engine, "db_pool_exhausted")
    rejected = by_category(paused_engine, "null_reference")
    review.approve(approved, reviewer="ann", expect_interrupt=pending(paused_engine, approved))
    review.reject(rejected, reviewer="ann", reason="known maintenance", expect_interrupt=pending(paused_engine, rejected))
    decided = {i: paused_engine.records.incident(i) for i in (approved, rejected)}
    waiting = {i: pending(paused_engine, i) for i in paused_ids(paused_engine)}
    assert len(waiting) == 2
    paused_engine.records.close()
    checkpoints.close_all()
    for suffix in ("", "-wal", "-shm"):
        (data_dir / f"checkpoints.sqlite{suffix}").unlink(missing_ok=True)

    engine = open_engine(make_settings(data_dir), sync_knowledge=False)
    run_pending(engine)
    # undecided: analysed again from the stored events, back in the inbox at a new interrupt
    assert sorted(paused_ids(engine)) == sorted(waiting)
    for inc, old_interrupt in waiting.items():
        assert pending(engine, inc) != old_interrupt and engine.records.incident(inc)["last_error"] is None
    one = next(iter(waiting))
    ReviewService(engine).approve(one, reviewer="bob", expect_interrupt=pending(engine, one))
    # decided: status, decision and audit kept, the reason shown, never re-opened
    for inc, before in decided.items():
        row = engine.records.incident(inc)
        assert row["status"] == before["status"] and row["summary"]["decision"] == before["summary"]["decision"]
        assert row["last_error"] == LOST_DECIDED
    assert engine.records.incidents_needing_work() == []
    assert [a["action"] for a in engine.records.audit()] == ["approve", "reject", "approve"]
    assert f"Last error: {LOST_DECIDED}" in cli(capsys, "show", rejected)[1]
    engine.records.close()
