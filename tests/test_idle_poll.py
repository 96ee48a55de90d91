"""Bounded idle work (issue 37.5): an idle poll reads through indexes, and reads as much at 20k
incidents as at 1k (the announce index holds only what can still be announced: decided critical
incidents never announced are in the store, and were what it used to read). 20k, not the 100k of
bench/idle_poll.py, which measures the milliseconds: a read that grew with the store would read 20
times as much here, and seeding 100k took most of a minute of the suite per store."""
from __future__ import annotations

import contextlib
import re
import shutil

import pytest

from bench.idle_poll import seeded_engine  # the benchmark's store (bench/idle_poll.py)
from pipeline.sources.file import FileSource
from pipeline.unattended.poller import Poller
from tests.support import BOTH_BACKENDS, make_settings


def idle_poll(engine, log, watch) -> None:
    """Two polls of a source with nothing new, the second inside `watch()` (a context manager):
    the first poll of a process checks every run once (lost_runs.py)."""
    poller = Poller(engine, FileSource(log, max_bytes=engine.settings.max_event_bytes), interval=0.05)
    try:
        poller.poll_once()
        with watch():
            poller.poll_once()
    finally:
        poller.close()


@contextlib.contextmanager
def traced(engine, statements: list):
    """The statements the records store runs meanwhile, with their parameters."""
    conn = engine.records.conn
    conn.set_trace_callback(lambda sql, params=(): statements.append((sql, tuple(params))))
    try:
        yield
    finally:
        conn.set_trace_callback(None)


@contextlib.contextmanager
def vm_steps(engine, counted: list):
    """SQLite's virtual machine steps meanwhile, in tens: what the statements read and wrote."""
    raw = engine.records.conn.raw

    def step() -> int:
        counted[0] += 1
        return 0

    raw.set_progress_handler(step, 10)
    try:
        yield
    finally:
        raw.set_progress_handler(None, 0)


# a table read whole: SQLite's plain SCAN of a table (not of a subquery's rows, not an index), PostgreSQL's Seq Scan
FULL_SCAN = re.compile(r"^SCAN (?P<table>\w+)$|Seq Scan on (?P<pg_table>\w+)")


BIG = 20_000


@pytest.fixture(scope="module")
def seeded_sqlite(tmp_path_factory):
    """A SQLite data dir seeded with BIG incidents once per module, its stores closed: two tests read
    the idle poll at BIG on SQLite, each on a copy of its own (seeding takes most of their time)."""
    from pipeline.store import checkpoints

    base = tmp_path_factory.mktemp("seeded") / "data"
    engine = seeded_engine(make_settings(base), BIG)
    engine.records.close()
    checkpoints.close_all()
    return base


@pytest.fixture
def seeded(data_dir, database_url, request):
    """An engine on a store of `n` incidents (the data dir's, or the test's PostgreSQL schema)."""
    engines = []

    def make(n: int, where=None):
        settings = make_settings(where or data_dir)
        if where is not None:
            shutil.copytree(data_dir / "knowledge-index", where / "knowledge-index")
        if n == BIG and database_url is None:  # a copy of the module's store, opened as seeded_engine opens it
            from pipeline.composition import open_engine

            shutil.copytree(request.getfixturevalue("seeded_sqlite"), settings.data_dir, dirs_exist_ok=True)
            engine = open_engine(settings)
            engine.graph.checkpointer.lost_runs_checked = True  # seeded_engine's: no checkpoints by construction
            assert engine.records.query("SELECT count(*) AS n FROM incidents")[0]["n"] == BIG
            engines.append(engine)
        else:
            engines.append(seeded_engine(settings, n))
        return engines[-1]

    yield make
    for engine in engines:
        engine.records.close()


@BOTH_BACKENDS
@pytest.mark.timeout(900)
def test_the_idle_poll_reads_only_through_indexes_at_20k_incidents(seeded, tmp_path):
    engine = seeded(BIG)
    log = tmp_path / "quiet.log"
    log.write_text("")
    statements: list[tuple[str, tuple]] = []
    idle_poll(engine, log, lambda: traced(engine, statements))
    reads = [(sql, params) for sql, params in statements if sql.lstrip().upper().startswith("SELECT")]
    # PostgreSQL's planner reads a table of a few rows (the lease, an empty outbox) whole, as it should:
    # there the tables holding the seeded incidents and their events are asked about
    tables = ({"incidents", "events"} if engine.records.postgres else
              {r[0] for r in engine.records.query("SELECT name FROM sqlite_master WHERE type = 'table'")})
    assert any("announced_at IS NULL" in sql for sql, _ in reads)  # escalation asked, through its index
    for sql, params in reads:
        if engine.records.postgres:
            plan = [next(iter(dict(r).values())) for r in engine.records.conn.execute("EXPLAIN " + sql, params).fetchall()]
        else:
            plan = [r["detail"] for r in engine.records.query("EXPLAIN QUERY PLAN " + sql, params)]
        scanned = {m["table"] or m["pg_table"] for m in map(FULL_SCAN.search, plan) if m}
        assert not scanned & tables, (sql, plan)


@pytest.mark.timeout(900)
def test_the_idle_poll_reads_as_much_at_20k_incidents_as_at_1k(seeded, tmp_path):
    """SQLite's virtual machine steps of one idle poll: the same work, whatever the store holds."""
    log = tmp_path / "quiet.log"
    log.write_text("")
    steps = {}
    for n, where in ((1_000, tmp_path / "small"), (BIG, None)):
        engine = seeded(n, where)
        counted = [0]
        idle_poll(engine, log, lambda: vm_steps(engine, counted))
        steps[n] = counted[0]
    assert steps[BIG] <= 1.5 * steps[1_000], steps
