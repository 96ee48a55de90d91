"""Benchmark: incidents to the approval pause per second, against a bare graph of the same shape.

Runs N incidents (default 500) through the real pipeline with the offline analyzer (records,
log window, Chroma retrieval, RCA, recommendation, checkpoints) and, in the same run, N threads
through a bare LangGraph graph with the same nodes and edges as no-ops, on the same kind of
checkpoint store (the product's, which stores values once per thread: the same class, pragmas
and durability for both; the bare graph on LangGraph's stock SqliteSaver is timed too, to show
the store does not slow the baseline). A third run replays the product's own graph with its real
state: the pipeline run records each run's input and each node's output, and the same threads run
again on a fresh store with every node returning what it returned (the approval node is the real
one). Rounds interleave them (stock, bare, pipeline, replay, each round in a fresh temp dir) so all
see the same machine load; prints each round's figures and, over the rounds, min / median / max of
issue 22's goals: the graph and its checkpoints carrying the real state >= 0.9x the bare graph;
the product's own work per incident (pipeline minus replay) <= 0.5x the bare graph's per-incident
time; the whole pipeline >= 0.6x the bare graph. Plus the checkpoint bytes per paused incident
against the bare graph's per thread. With --split, one more pipeline run (not in the ratios)
times its parts: storing the events, each node, the record writes around the runs, and the graph
with its checkpoints. With --merges, only merges: each round's first runs, then --merge-lines more
events into every paused incident, each merge re-running the analysis; CPU per merge against per
first run, and the stored values the merges fetched and the events they marked merged (each once?).

Issue 37.4's baseline: a bare graph of the product's shape carrying the same 19 channels as the
product's state, each node returning the product's node's recorded output as plain values (JSON
dicts, no models), on the product's checkpoint store; the whole pipeline against it by CPU (this
process's, every thread) over the rounds, goal >= 0.8. With --hog, a second pass with one core
kept busy by a pinned busy loop.

    .venv/bin/python bench/pipeline.py [--incidents 500] [--rounds 5] [--split] [--hog] [--merges [--merge-lines 50]]
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import json
import operator
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, TypedDict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (strict msgpack before langgraph loads)
from langgraph.graph import END, START, StateGraph  # noqa: E402
from langgraph.types import interrupt  # noqa: E402

from pipeline.store import checkpoint_format, checkpoints  # noqa: E402
from pipeline.config import Settings  # noqa: E402
from pipeline.composition import open_engine  # noqa: E402
from pipeline.gc_tuning import tune_garbage_collector  # noqa: E402
from pipeline.unattended.file_ingest import ingest_path  # noqa: E402

KINDS = [
    ("java.sql.SQLTransientConnectionException", "HikariPool-1 - Connection is not available, request timed out after 30000ms."),
    ("org.postgresql.util.PSQLException", "ERROR: deadlock detected Detail: Process 4242 waits for ShareLock on transaction 1234"),
    ("AttributeError", "'NoneType' object has no attribute 'quantity'"),
    ("Error", "connect ECONNREFUSED 10.0.0.12:5432"),
    ("OSError", "[Errno 28] No space left on device"),
    ("javax.net.ssl.SSLHandshakeException", "PKIX path building failed: unable to find valid certification path"),
    ("AxiosError", "Request failed with status code 429"),
    ("", "flux capacitor reported an unexpected state"),
]


def write_events(path: Path, incidents: int, *, per: int = 3, after: int = 0) -> None:
    """`per` error lines for each of the incidents, the `after`th on (a later pass joins the same incidents)."""
    with path.open("w") as out:
        for k in range(incidents):
            exc, message = KINDS[k % len(KINDS)]
            for j in range(after, after + per):
                out.write(json.dumps({
                    "_time": f"2026-11-28T{(k // 60) % 24:02d}:{k % 60:02d}:{j % 60:02d}.{j:03d}Z",
                    "service": f"svc-{k}", "host": f"host-{k % 7}", "level": "ERROR",
                    "exception": exc or None, "message": f"{message} (job {1000 * k + j})"}) + "\n")


class Bare(TypedDict, total=False):
    incident_id: str
    errors: Annotated[list, operator.add]
    events: Annotated[list, operator.add]
    decision: dict


def _noop(state):
    return {"events": [1]}


def _approval(state):
    return {"decision": interrupt({"incident_id": state["incident_id"]})}


def bare_graph(saver):
    g = StateGraph(Bare)
    for name in ("intake", "retrieval", "rag", "rca", "recommend", "propose_fix", "revise", "code_fix"):
        g.add_node(name, _noop)
    g.add_node("approval", _approval)
    g.add_edge(START, "intake")
    g.add_edge("intake", "retrieval")
    g.add_edge("intake", "rag")
    g.add_edge(["retrieval", "rag"], "rca")
    g.add_edge("rca", "recommend")
    g.add_edge("recommend", "propose_fix")  # the product's graph (pipeline/engine/graph.py), step for step
    g.add_edge("propose_fix", "approval")
    g.add_conditional_edges("approval", lambda s: END, ["code_fix", "revise", END])
    g.add_edge("revise", "rca")
    g.add_edge("code_fix", END)
    return g.compile(checkpointer=saver)


def run_bare(work: Path, n: int, *, stock: bool = False) -> float:
    """The bare graph on the product's checkpoint store (the same class, pragmas and durability as
    the pipeline's) or, with `stock`, on LangGraph's own SqliteSaver with the same pragmas and
    serializer: the product's store must not make the baseline slower (the ratio's honesty)."""
    if stock:
        from langgraph.checkpoint.sqlite import SqliteSaver

        saver = SqliteSaver(checkpoints.connect(work / "stock.sqlite"), serde=checkpoint_format.serializer())
    else:
        saver = checkpoints.saver_for(work / "bare.sqlite")
    graph = bare_graph(saver)
    start, cpu = time.perf_counter(), time.process_time()
    for k in range(n):
        graph.invoke({"incident_id": f"INC-{k}"}, {"configurable": {"thread_id": f"INC-{k}"}})
    elapsed = time.perf_counter() - start
    CPU["stock" if stock else "bare"] = time.process_time() - cpu
    if stock:
        saver.conn.close()
    return elapsed


# the CPU seconds (this process, every thread: LangGraph's checkpoint writers too) of the last run of each kind
CPU: dict[str, float] = {}


def run_pipeline(work: Path, n: int, *, prepare=None) -> tuple[float, int]:
    """Seconds to ingest and analyse n incidents, and how many paused (its CPU seconds in
    CPU["pipeline"]); `prepare(engine)` runs before the clock starts (--split's timers)."""
    events = work / "events.jsonl"
    write_events(events, n)
    engine = open_engine(Settings.from_env(data_dir=work / "data", repo_dir=ROOT / "samples" / "pos-backend"))
    if prepare is not None:
        prepare(engine)
    start, cpu = time.perf_counter(), time.process_time()
    ingest_path(engine, events)
    elapsed, used = time.perf_counter() - start, time.process_time() - cpu
    paused = len(engine.records.incidents(status="awaiting_approval"))
    CPU["pipeline"] = used
    return elapsed, paused


def run_replayed(work: Path, n: int) -> tuple[float, float, int, float]:
    """The product's graph and its checkpoints carrying the product's real state, without the
    product's work: one real run records each run's input and each node's output, then the same
    graph (pipeline/engine/graph.py, edges and state schema unchanged) runs the same threads on a
    fresh checkpoint store of the product's kind, each node returning its recorded output (the
    approval node is the real one: it pauses at the same `interrupt()`). Returns the real run's
    seconds, the replay's seconds, how many replayed threads paused, and the seconds of the bare
    graph carrying the same state (`run_carrying`, on the recorded inputs and outputs)."""
    from pipeline.engine import graph as graph_module
    from pipeline.engine import nodes
    from pipeline.engine.graph import build_graph, thread_config

    inputs: dict[str, dict] = {}
    outputs: dict[tuple[str, str], list] = {}
    recorded = [name for name in graph_module.NODE_NAMES if name != "approval"]
    originals = {name: getattr(nodes, name) for name in recorded}

    def recording(name: str):
        original = originals[name]

        @functools.wraps(original)  # LangGraph reads a node's signature to pass it the runtime
        def wrapper(*args, **kwargs):
            update = original(*args, **kwargs)
            outputs.setdefault((args[0].incident_id, name), []).append(update)
            return update
        return wrapper

    def prepare(engine) -> None:
        invoke = engine.graph.invoke

        def recording_invoke(graph_input, config, **kwargs):
            if graph_input is not None:
                inputs[config["configurable"]["thread_id"]] = graph_input
            return invoke(graph_input, config, **kwargs)
        engine.graph.invoke = recording_invoke

    for name in recorded:
        setattr(nodes, name, recording(name))
    try:
        real_s, paused = run_pipeline(work, n, prepare=prepare)
    finally:
        for name, original in originals.items():
            setattr(nodes, name, original)
    if paused != n:
        raise SystemExit(f"error: in the recorded run {paused} of {n} incidents reached the approval pause")

    def replaying(name: str):
        def replay(state):
            return outputs[(state.incident_id, name)][0]
        return replay

    for name in recorded:
        setattr(nodes, name, replaying(name))
    try:
        graph = build_graph(checkpoints.saver_for(work / "replay.sqlite"))
    finally:
        for name, original in originals.items():
            setattr(nodes, name, original)
    deps = nodes.Deps(records=None, kb=None, analyst=None)  # type: ignore[arg-type]  # no node reads them
    start, cpu = time.perf_counter(), time.process_time()
    for thread_id, graph_input in inputs.items():
        graph.invoke(graph_input, thread_config(thread_id), context=deps)
    replay_s = time.perf_counter() - start
    CPU["replay"] = time.process_time() - cpu
    replayed = sum(1 for thread_id in inputs
                   if graph.get_state(thread_config(thread_id)).next == ("approval",))
    carrying_s = run_carrying(work, inputs, outputs)
    return real_s, replay_s, replayed, carrying_s


def plain(value):
    """A node's output or a run's input as plain values: models dumped to JSON-able dicts."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class Carrying(TypedDict, total=False):
    """The product's state's channels (pipeline/state.py IncidentState), each a plain value,
    with the same reducers where it has them."""
    incident_id: str
    fingerprint: str
    service: str
    title: str
    evidence: Annotated[list, operator.add]
    severity: str
    log_window: list
    similar_docs: list
    rca: dict | None
    recommendation: dict | None
    decision: dict | None
    revisions: int
    feedback: list
    fix: dict | None
    proposal: dict | None
    revision_log: list
    outcome: str | None
    errors: Annotated[list, operator.add]
    events: Annotated[list, operator.add]


def carrying_graph(saver, outputs: dict[tuple[str, str], dict]):
    """The product's graph's shape, each node returning the product's node's recorded output as
    plain values; the approval node pauses with a payload of the same fields as the product's."""
    def replaying(name: str):
        def node(state):
            return outputs[(state["incident_id"], name)]
        return node

    def approval(state):
        return {"decision": interrupt({k: state.get(k) for k in (
            "incident_id", "service", "severity", "rca", "recommendation", "similar_docs", "proposal", "feedback")})}

    g = StateGraph(Carrying)
    for name in ("intake", "retrieval", "rag", "rca", "recommend", "propose_fix", "revise", "code_fix"):
        g.add_node(name, replaying(name))
    g.add_node("approval", approval)
    g.add_edge(START, "intake")
    g.add_edge("intake", "retrieval")
    g.add_edge("intake", "rag")
    g.add_edge(["retrieval", "rag"], "rca")
    g.add_edge("rca", "recommend")
    g.add_edge("recommend", "propose_fix")
    g.add_edge("propose_fix", "approval")
    g.add_conditional_edges("approval", lambda s: END, ["code_fix", "revise", END])
    g.add_edge("revise", "rca")
    g.add_edge("code_fix", END)
    return g.compile(checkpointer=saver)


def run_carrying(work: Path, inputs: dict[str, dict], outputs: dict[tuple[str, str], list]) -> float:
    """Issue 37.4's baseline: a bare graph of the product's shape carrying the same channels and
    the same node outputs as plain values, on the product's checkpoint store. Seconds (its CPU in
    CPU["carrying"]); every thread must reach the pause."""
    plain_inputs = {t: plain(v) for t, v in inputs.items()}
    plain_outputs = {key: plain(updates[0]) for key, updates in outputs.items()}
    graph = carrying_graph(checkpoints.saver_for(work / "carrying.sqlite"), plain_outputs)
    paused = 0
    start, cpu = time.perf_counter(), time.process_time()
    for thread_id, graph_input in plain_inputs.items():
        # the product's store checks the values it reads against the product's state: this state's
        # plain values would not pass, so the pause is told by the run's output
        paused += "__interrupt__" in graph.invoke(graph_input, {"configurable": {"thread_id": thread_id}})
    elapsed = time.perf_counter() - start
    CPU["carrying"] = time.process_time() - cpu
    if paused != len(plain_inputs):
        raise SystemExit(f"error: {paused} of {len(plain_inputs)} carrying threads reached the pause")
    return elapsed


@contextlib.contextmanager
def merge_work_counted(engine):
    """While open: the stored checkpoint values fetched, by (thread, digest), and the events marked
    merged, by id (both Counters), through the engine's SQLite value store (PostgreSQL keeps values
    inline: nothing fetched) and the records' two ways of marking (tests/test_merge_cost.py reads them too)."""
    from pipeline.store.records import Records

    fetched: Counter[tuple[str, bytes]] = Counter()
    marked: Counter[str] = Counter()
    serde = getattr(engine.graph.checkpointer, "serde", None)
    fetch = getattr(serde, "fetch", None)
    update_incident, mark_merged = Records.update_incident, Records.mark_merged

    def counting_fetch(thread_id: str, value_hash: bytes):
        fetched[(thread_id, value_hash)] += 1
        return fetch(thread_id, value_hash)  # type: ignore[misc]

    def counting_update(self, incident_id, *, merged_event_ids=(), **values):
        ids = list(merged_event_ids)
        marked.update(ids)
        return update_incident(self, incident_id, merged_event_ids=ids, **values)

    def counting_mark(self, event_ids):
        ids = list(event_ids)
        marked.update(ids)
        return mark_merged(self, ids)

    if fetch is not None:
        serde.fetch = counting_fetch  # type: ignore[union-attr]
    Records.update_incident, Records.mark_merged = counting_update, counting_mark  # type: ignore[method-assign]
    try:
        yield fetched, marked
    finally:
        Records.update_incident, Records.mark_merged = update_incident, mark_merged  # type: ignore[method-assign]
        if fetch is not None:
            serde.fetch = fetch  # type: ignore[union-attr]


def run_merges(work: Path, n: int, per: int) -> dict[str, float]:
    """CPU seconds of n first runs, then of merging `per` more events into each paused incident
    with every merge re-running the analysis (INCIDENTIQ_REANALYSE_GROWTH=1; the product's default
    counts repeats instead), and what the merges read and wrote: stored checkpoint values fetched
    (and how many of them more than once), events marked merged (and how many more than once)."""
    engine = open_engine(Settings.from_env(data_dir=work / "data", repo_dir=ROOT / "samples" / "pos-backend",
                                           reanalyse_growth=1.0))
    write_events(work / "first.jsonl", n)
    cpu = time.process_time()
    ingest_path(engine, work / "first.jsonl")
    first = time.process_time() - cpu
    with merge_work_counted(engine) as (fetched, marked):
        write_events(work / "more.jsonl", n, per=per, after=10)
        cpu = time.process_time()
        ingest_path(engine, work / "more.jsonl")
        merges = time.process_time() - cpu
    paused = len(engine.records.incidents(status="awaiting_approval"))
    if paused != n:
        raise SystemExit(f"error: after the merges {paused} of {n} incidents are paused")
    return {"first": first, "merges": merges, "fetched": sum(fetched.values()),
            "fetched_again": sum(c - 1 for c in fetched.values()), "marked": sum(marked.values()),
            "marked_again": sum(c - 1 for c in marked.values())}


def print_merges(args) -> None:
    rows = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(run_merges(Path(tmp), args.incidents, args.merge_lines))
            checkpoints.close_all()
    n = args.incidents
    for r in rows:
        print(f"merges     : {n} paused incidents, {args.merge_lines} more events each, every merge re-running:"
              f" {r['merges'] / n * 1000:.1f} ms CPU per merge, first runs {r['first'] / n * 1000:.1f} ms"
              f" (merge / first run {r['merges'] / r['first']:.2f}); stored values fetched"
              f" {r['fetched'] / n:.1f} per merge ({r['fetched_again'] / n:.1f} again), events marked merged"
              f" {r['marked']:.0f} ({r['marked_again']:.0f} again)")
    print(f"             merge / first run by CPU over {len(rows)} rounds:"
          f" {spread([r['merges'] / r['first'] for r in rows])}")


# what --split times, by where it happens: the product's own work around and inside the run
RECORD_CALLS = ("claim_run", "events_of", "mark_merged", "incident_fields", "update_incident")
NODE_CALLS = ("intake", "retrieval", "rag", "rca", "recommend", "propose_fix", "approval")


def run_split(work: Path, n: int) -> tuple[dict[str, float], dict[str, float]]:
    """Seconds spent per part of one pipeline run, wall-clock and the CPU of the thread it ran on
    (timers around the parts; not in the ratios)."""
    from pipeline.engine import nodes
    from pipeline.incidents.batch import Incidents
    from pipeline.store.records import Records

    spent: dict[str, float] = {}
    used: dict[str, float] = {}
    node_spans: list[tuple[float, float]] = []  # retrieval and rag run at once: their spans overlap

    def timed(owner, name: str, label: str):
        original = getattr(owner, name)

        @functools.wraps(original)  # LangGraph reads a node's signature to pass it the runtime
        def wrapper(*args, **kwargs):
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                end = time.perf_counter()
                spent[label] = spent.get(label, 0.0) + end - start
                used[label] = used.get(label, 0.0) + time.thread_time() - cpu
                if label.startswith("node "):
                    node_spans.append((start, end))
        setattr(owner, name, wrapper)
        return original

    originals = [(nodes, name, timed(nodes, name, f"node {name}")) for name in NODE_CALLS]
    originals += [(Records, name, timed(Records, name, f"records {name}")) for name in RECORD_CALLS]
    # what ingest stores through since it groups batches into one transaction (file_ingest.ingest_file)
    originals += [(Incidents, "store_batches", timed(Incidents, "store_batches", "incidents store_batches"))]
    try:
        spent["total"], paused = run_pipeline(work, n, prepare=lambda engine: timed(engine.graph, "invoke",
                                                                                  "graph invoke"))
        spent["nodes, while any ran"] = _covered(node_spans)
        if paused != n:
            raise SystemExit(f"error: in the timed run {paused} of {n} incidents reached the approval pause")
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)
    return spent, used


def _covered(spans: list[tuple[float, float]]) -> float:
    """Seconds during which at least one of the spans was open (overlaps counted once)."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(spans):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def print_split(spent: dict[str, float], used: dict[str, float], n: int, bare_s: float) -> None:
    def ms(seconds: float) -> str:
        return f"{seconds / n * 1000:5.2f}"

    node_cpu = sum(v for k, v in used.items() if k.startswith("node "))
    records_s = sum(v for k, v in spent.items() if k.startswith("records "))
    records_cpu = sum(v for k, v in used.items() if k.startswith("records "))
    nodes_s = spent["nodes, while any ran"]  # wall time with retrieval and rag's overlap counted once
    invoke_s = spent.get("graph invoke", 0.0)
    own_s = spent["total"] - invoke_s + nodes_s  # everything but LangGraph and its checkpoints
    own_cpu = spent["total"] - invoke_s + node_cpu  # the same with the nodes' CPU: no waits for the GIL
    print(f"split      : ms per incident in one more run with timers ({ms(spent['total'])} ms in all);"
          " wall-clock / CPU of the part's thread (a node's wall time includes waiting for the GIL"
          " while LangGraph's threads write checkpoints)")
    for label in ["incidents store_batches"] + [f"records {c}" for c in RECORD_CALLS] + [f"node {c}" for c in NODE_CALLS]:
        print(f"             {ms(spent.get(label, 0.0))} / {ms(used.get(label, 0.0))}  {label}")
    print(f"             {ms(invoke_s - nodes_s)}          the graph and its checkpoints (invoke minus the time"
          " any node ran)")
    print(f"             {ms(own_s)} / {ms(own_cpu)}  the product's own work (records {ms(records_s).strip()} /"
          f" {ms(records_cpu).strip()}, nodes {ms(nodes_s).strip()} / {ms(node_cpu).strip()},"
          " the rest of ingest and the runner)")
    print(f"             the bare graph {ms(bare_s).strip()} ms per thread: with only the own work on top of it,"
          f" the ratio would be {bare_s / (bare_s + own_s):.2f} (wall) to {bare_s / (bare_s + own_cpu):.2f}"
          f" (CPU); >= 0.8 needs the own work within {bare_s / n * 1000 / 4:.2f} ms")


def print_goals(bare_runs: list[float], replay_runs: list[float], our_runs: list[float], n: int) -> None:
    """Issue 22's goals, each round's figures from the same minutes: the graph and its checkpoints
    carrying the real state against the bare graph (>= 0.9), the product's own work per incident
    (the pipeline's time minus the replay's) against the bare graph's per-incident time (<= 0.5),
    and the whole pipeline against the bare graph (>= 0.6)."""
    def verdict(values: list[float], goal: float, at_least: bool) -> str:
        met = all(v >= goal for v in values) if at_least else all(v <= goal for v in values)
        return "met in every round" if met else "BELOW the goal" if at_least else "ABOVE the goal"

    graph = [b / r for b, r in zip(bare_runs, replay_runs)]
    own = [(o - r) / b for b, r, o in zip(bare_runs, replay_runs, our_runs)]
    whole = [b / o for b, o in zip(bare_runs, our_runs)]
    replay_s = statistics.median(replay_runs)
    print(f"replayed   : the product's graph with its real state, nodes returning recorded outputs:"
          f" {replay_s:.2f} s = {n / replay_s:.1f} incidents/s (median)")
    print(f"goals      : graph + checkpoints with the real state / bare graph: {spread(graph)}"
          f" (goal >= 0.90: {verdict(graph, 0.9, True)})")
    print(f"             own work per incident / bare graph per incident: {spread(own)}"
          f" (goal <= 0.50: {verdict(own, 0.5, False)})")
    print(f"             whole pipeline / bare graph: {spread(whole)} (goal >= 0.60: {verdict(whole, 0.6, True)})")


def checkpoint_bytes(path: Path) -> int:
    """Bytes of a checkpoint file after a checkpoint of its WAL (what it would keep on disk)."""
    import sqlite3

    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path.stat().st_size


def hog():
    """A busy loop pinned to one core (core 0): a machine with other work on it (bench/browser.py's)."""
    import subprocess

    return subprocess.Popen([sys.executable, "-c", "import os\nos.sched_setaffinity(0, {0})\nwhile True: pass"])


def spread(values: list[float]) -> str:
    return f"min {min(values):.2f} / median {statistics.median(values):.2f} / max {max(values):.2f}"


def measure(args, label: str) -> int:
    """args.rounds interleaved rounds; prints each round and the figures over them."""
    bare_runs, stock_runs, our_runs, replay_runs, ratios, stock_ratios = [], [], [], [], [], []
    carrying_runs, cpu_ratios, state_ratios = [], [], []
    sizes = (0, 0)
    print(f"--- {label}", flush=True)
    for round_no in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            stock_runs.append(run_bare(work, args.incidents, stock=True))
            bare_runs.append(run_bare(work, args.incidents))
            ours_s, replay_s, paused, carrying_s = run_replayed(work, args.incidents)
            our_runs.append(ours_s)
            replay_runs.append(replay_s)
            carrying_runs.append(carrying_s)
            checkpoints.close_all()
            sizes = (checkpoint_bytes(work / "bare.sqlite"), checkpoint_bytes(work / "data" / "checkpoints.sqlite"))
        if paused != args.incidents:
            print(f"error: {paused} of {args.incidents} incidents reached the approval pause", file=sys.stderr)
            return 1
        ratios.append(bare_runs[-1] / ours_s)
        stock_ratios.append(stock_runs[-1] / ours_s)
        cpu_ratios.append(CPU["carrying"] / CPU["pipeline"])
        state_ratios.append(CPU["carrying"] / CPU["replay"])
        print(f"round {round_no + 1}: bare {bare_runs[-1]:.2f} s (on stock SqliteSaver {stock_runs[-1]:.2f} s),"
              f" replayed {replay_s:.2f} s, carrying the same state {carrying_s:.2f} s"
              f" (CPU {CPU['carrying']:.2f} s), pipeline {ours_s:.2f} s (CPU {CPU['pipeline']:.2f} s),"
              f" ratio by CPU {cpu_ratios[-1]:.2f}", flush=True)
    bare_s, ours_s = statistics.median(bare_runs), statistics.median(our_runs)
    bare_rate, ours_rate = args.incidents / bare_s, args.incidents / ours_s
    print(f"bare graph : {args.incidents} runs to the pause in {bare_s:.2f} s = {bare_rate:.1f} incidents/s (median)")
    stock_s = statistics.median(stock_runs)
    print(f"             on LangGraph's stock SqliteSaver: {stock_s:.2f} s = {args.incidents / stock_s:.1f} incidents/s"
          f" (median; the ratio is against the bare graph on the product's store)")
    print(f"pipeline   : {args.incidents} incidents (ingest + analysis) to the pause in {ours_s:.2f} s"
          f" = {ours_rate:.1f} incidents/s (median)")
    print(f"ratio      : {spread(ratios)} of the bare graph over {args.rounds} rounds (wall)")
    print(f"             {spread(stock_ratios)} of the bare graph on LangGraph's stock SqliteSaver (wall)")
    print_goals(bare_runs, replay_runs, our_runs, args.incidents)
    print(f"issue 37.4 : whole pipeline / bare graph carrying the same 19 channels and node outputs as plain"
          f" values, on the product's store, by CPU: {spread(cpu_ratios)} (goal >= 0.80:"
          f" {'met in every round' if min(cpu_ratios) >= 0.8 else 'BELOW the goal'});"
          f" by wall: {spread([c / o for c, o in zip(carrying_runs, our_runs)])}")
    print(f"             of which the product's graph with its pydantic state and recorded outputs (replayed) /"
          f" the same carrying baseline, by CPU: {spread(state_ratios)}: the rest is the product's own work"
          f" (ingest, the runner's record writes, the nodes' analysis)")
    bare_kb, ours_kb = sizes[0] / args.incidents / 1024, sizes[1] / args.incidents / 1024
    print(f"checkpoints: {ours_kb:.1f} KB per paused incident, bare {bare_kb:.1f} KB per thread"
          f" ({ours_kb / bare_kb:.1f}x)")
    if args.split:
        with tempfile.TemporaryDirectory() as tmp:
            spent, used = run_split(Path(tmp), args.incidents)
            checkpoints.close_all()
        print_split(spent, used, args.incidents, bare_s)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--incidents", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--split", action="store_true", help="one more run that times the pipeline's parts")
    parser.add_argument("--hog", action="store_true", help="a second pass with a CPU hog on one core; both printed")
    parser.add_argument("--merges", action="store_true",
                        help="only time merges into paused incidents against their first runs (issue 37)")
    parser.add_argument("--merge-lines", type=int, default=50, help="events merged into each incident (--merges)")
    args = parser.parse_args()
    # as the product's processes run (python -m pipeline, the workbench); the bare graph runs
    # in this process too, under the same setting
    tune_garbage_collector()
    if args.merges:
        print_merges(args)
        return 0
    status = measure(args, "quiet")
    if status or not args.hog:
        return status
    proc = hog()
    try:
        return measure(args, "one core hogged")
    finally:
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    raise SystemExit(main())
