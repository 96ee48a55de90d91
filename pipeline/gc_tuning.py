"""The garbage collector's pace for our long-running processes (the poller, the workbench, the CLI).

A run allocates many short-lived objects (LangGraph's tasks, futures and configs per step, the
state's models), and CPython's default collects the youngest generation every 700 net
allocations: at 200 bench incidents that was 1.0-1.7 ms of collection per incident, out of about
11 (measured with gc.callbacks, bench/pipeline.py). Collecting it every 10,000 brings that to
0.3-0.9 ms with the same peak memory in those runs. The older generations count collections of
the one below, so the middle one's threshold is scaled down with it: it still runs about as often
per allocation as before (every 10,000 instead of 7,000), and a full collection about every
100,000 instead of 70,000, so cyclic garbage that outlives the youngest generation is collected at
nearly the old pace. Entry points call this once; a library user's process is left as it is.
"""
from __future__ import annotations

import gc

YOUNGEST = 10_000  # objects: CPython's default is 700


def tune_garbage_collector() -> None:
    """Collect the youngest generation every YOUNGEST net allocations, the middle one about as
    often per allocation as before, unless the process already asked for a slower pace (or turned
    the thresholds off with 0)."""
    youngest, middle, oldest = gc.get_threshold()
    if 0 < youngest < YOUNGEST:
        gc.set_threshold(YOUNGEST, max(1, round(middle * youngest / YOUNGEST)), oldest)
