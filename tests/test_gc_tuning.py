"""The collector's pace our processes set (pipeline/gc_tuning.py): the youngest generation less
often, the older ones about as often per allocation as before, and a process's own choice kept."""
from __future__ import annotations

import gc
import subprocess
import sys
import weakref

import pytest

from pipeline.gc_tuning import YOUNGEST, freeze_long_lived, release_frozen, tune_garbage_collector
from tests.support import ROOT


# conftest's autouse fixture gives each test back the pace it found


def test_the_youngest_generation_is_collected_less_often_and_the_older_ones_at_their_old_pace():
    gc.set_threshold(700, 10, 10)
    tune_garbage_collector()
    # the middle generation every 10,000 allocations (it was every 700 x 10), a full collection
    # every 10 of those, as before
    assert gc.get_threshold() == (YOUNGEST, 1, 10)
    tune_garbage_collector()  # once per runtime; a second call (a new data dir) changes nothing
    assert gc.get_threshold() == (YOUNGEST, 1, 10)


@pytest.mark.parametrize("chosen", [(50_000, 5, 5), (0, 10, 10)])
def test_a_process_that_chose_its_own_pace_keeps_it(chosen):
    gc.set_threshold(*chosen)
    tune_garbage_collector()
    assert gc.get_threshold() == chosen


class _Node:
    pass


def test_what_lives_is_frozen_out_of_the_collections_and_what_comes_later_is_not():
    kept = _Node()
    kept.me = kept
    try:
        freeze_long_lived()
        assert gc.get_freeze_count() > 0 and not any(o is kept for o in gc.get_objects())
        later = _Node()
        later.me = later  # allocated after the freeze: still the collector's
        gone = weakref.ref(later)
        del later
        gc.collect()
        assert gone() is None
    finally:
        release_frozen()
    assert gc.get_freeze_count() == 0 and any(o is kept for o in gc.get_objects())


def test_the_command_line_process_runs_at_the_tuned_pace():
    # `python -m pipeline` is what the poller runs as; its collector is tuned before any command
    code = ("import gc, runpy, sys; sys.argv = ['pipeline', '--help'];\n"
            "try:\n    runpy.run_module('pipeline', run_name='__main__')\n"
            "except SystemExit:\n    print(gc.get_threshold()[0])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == str(YOUNGEST), out.stderr[-2000:]


def test_the_workbench_process_runs_at_the_tuned_pace(data_dir, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.support import APP, TIMEOUT
    from workbench import session

    gc.set_threshold(700, 10, 10)
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    monkeypatch.setenv("INCIDENTIQ_POLLER", "off")
    try:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
        assert not at.exception, [e.value for e in at.exception]
        assert gc.get_threshold() == (YOUNGEST, 1, 10)
        # the runtime's objects (modules, graph, knowledge base) are out of every collection's pass
        assert gc.get_freeze_count() > 10_000
    finally:
        session._runtime.clear()
    assert gc.get_freeze_count() == 0  # released with the runtime
