"""The garbage collector's pace for our long-running processes (the poller, the workbench, the CLI).

A run allocates many short-lived objects (LangGraph's tasks, futures and configs per step, the
state's models), and CPython's default collects the youngest generation every 700 net
allocations: at 200 bench incidents that was 1.2-1.7 ms of collection per incident, out of about
11 (measured with gc.callbacks, bench/pipeline.py). A youngest generation of 10,000 objects costs
a few MB at most and brings it to 0.3-0.4 ms, with the same peak memory in that run; the older
generations keep their defaults, so cyclic garbage that survives is still collected as before.
Entry points call this once; a library user's process is left as it is.
"""
from __future__ import annotations

import gc

YOUNGEST = 10_000  # objects: CPython's default is 700


def tune_garbage_collector() -> None:
    """Collect the youngest generation every YOUNGEST net allocations, unless the process already
    asked for a slower pace (or turned the collector's thresholds off with 0)."""
    youngest, middle, oldest = gc.get_threshold()
    if 0 < youngest < YOUNGEST:
        gc.set_threshold(YOUNGEST, middle, oldest)
