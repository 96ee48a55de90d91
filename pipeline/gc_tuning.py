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

The workbench's process also keeps what it opened out of the collector's way (`freeze_long_lived`):
its modules, the graph, the knowledge base and the embedding model are some 250,000 tracked
objects that live as long as the process, and Streamlit collects every generation after each
script run (`runner.postScriptGC`): a full pass over all of them, 100-500 ms of a click at load
5-12 on 2 cores, more than the page's own run (bench/browser.py, docs/BENCHMARKS.md). Frozen
(gc.freeze), they are skipped by every collection; what the runs allocate is still collected.
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


def freeze_long_lived() -> None:
    """Move every object alive now into the collector's permanent generation (gc.freeze): later
    collections, Streamlit's after every run among them, pass over only what was allocated since.
    Frozen objects are still freed when their last reference goes. No collection first: at the end
    of the workbench's start only ~30 of its ~210,000 objects were garbage (cycles, frozen with the
    rest until `release_frozen`), and a full pass there cost 0.2-0.45 s, paid again by every test
    that opens a workbench."""
    gc.freeze()


def release_frozen() -> None:
    """Give the frozen objects back to the collector (a runtime stopped: what it held may be garbage now)."""
    gc.unfreeze()
