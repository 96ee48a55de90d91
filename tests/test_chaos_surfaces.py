"""Chaos on the surfaces added since the loop of tests/test_chaos.py (issue 25.4): one round each here,
the loop in bench/chaos.py. Real processes SIGKILLed during a prune, a migration, an outbox delivery,
a PostgreSQL session's ingest, and a disk that fills; then each scenario's invariants. A file of its
own so that two workers share the chaos suite (`--dist loadfile` gives each worker whole files)."""
from __future__ import annotations

import random
import sys
import warnings
from pathlib import Path

import pytest

from tests.support import ROOT, ChaosFigures

SEED = 20261128
# the PostgreSQL scenario runs on PostgreSQL only; the others are SQLite data dirs' scenarios
ON_POSTGRES = pytest.mark.parametrize("backend", ["postgres"], indirect=True)


def _bench_chaos():
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_chaos", ROOT / "bench" / "chaos.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_chaos"] = module  # registered first: its dataclasses resolve their module
    spec.loader.exec_module(module)
    return module


def _closed(engine) -> Path:
    """The paused engine's data dir, its stores closed (child processes take it from here)."""
    from pipeline.store import checkpoints

    engine.records.close()
    checkpoints.close_all()
    return Path(engine.settings.data_dir)


def _report(fig) -> None:
    warnings.warn(ChaosFigures(f"chaos: {fig.line()}"), stacklevel=2)
    assert fig.violations == [], fig.violations


def test_sigkill_during_prune_loses_nothing(paused_engine, tmp_path):
    # a backtest killed mid-run: tests/test_backtest.py; bench/chaos.py loops over it too
    _report(_bench_chaos().prune_scenario(tmp_path, 1, random.Random(SEED), paused=_closed(paused_engine)))


def test_sigkill_during_a_migration_leaves_the_old_or_the_new_schema_whole(tmp_path):
    chaos = _bench_chaos()
    _report(chaos.migration_scenario(tmp_path, 1, random.Random(SEED), incidents=3000))


def test_sigkill_during_an_outbox_delivery_delivers_every_notification(paused_engine, tmp_path):
    chaos = _bench_chaos()
    _report(chaos.outbox_scenario(tmp_path, 1, random.Random(SEED), paused=_closed(paused_engine)))


def test_a_full_disk_stops_ingest_clearly_and_a_decision_completes_or_changes_nothing(paused_engine, tmp_path):
    fig = _bench_chaos().disk_full_scenario(tmp_path, 1, random.Random(SEED), lines=1500, free_kb=512,
                                            paused=_closed(paused_engine))
    if fig.skipped:
        pytest.skip(fig.skipped)
    _report(fig)


@ON_POSTGRES
def test_a_postgres_session_killed_during_ingest_loses_and_doubles_nothing(database_url, tmp_path):
    fig = _bench_chaos().pg_session_scenario(tmp_path, 1, random.Random(SEED), lines=600)
    if fig.skipped:
        pytest.skip(fig.skipped)
    _report(fig)
