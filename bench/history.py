"""Benchmark: the incident page's history reads on a thread with 1,000 checkpoints.

Builds a real thread: one incident of tests/fixtures/small.jsonl run to the gate, then replayed
from its gate and from its rca checkpoint (through ReviewService, as a reviewer would) until the
thread holds --checkpoints checkpoints on many branches. Then times, median of --repeat runs:
ReviewService.tree (the newest 100, as the page asks, and all), history (one page of 50),
checkpoint (the selected one's state and changes), rerun_plan, incident, and an interaction on the
incident page in AppTest, History tab open: picking a checkpoint and the page's rerun, over
--rounds rounds (min/median/max of the rounds' medians), two ways: back and forth between two
checkpoints (what was seen is cached per checkpoint) and a checkpoint not picked before each time.
AppTest reruns the whole page; in a browser a pick reruns only the history fragment. The baseline,
in the same run, is one graph.get_state of the thread, and the same page interaction on an incident
of a few checkpoints (what AppTest and Streamlit cost whatever the history); "before" is the tree
as it was built until now (every checkpoint's state deserialised and diffed: the full history).
The goal (issue 12): the interaction at 1,000 checkpoints within 100 ms.

    .venv/bin/python bench/history.py [--checkpoints 1000] [--repeat 7] [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401

from pipeline.config import Settings  # noqa: E402
from pipeline.composition import open_engine  # noqa: E402
from pipeline.engine.graph import thread_config  # noqa: E402
from pipeline.unattended.file_ingest import ingest_path  # noqa: E402
from pipeline.review.service import ReviewService  # noqa: E402
from pipeline.store import checkpoints  # noqa: E402


def median_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def build(data_dir: Path, target: int) -> tuple[ReviewService, str]:
    engine = open_engine(Settings.from_env(data_dir=data_dir, repo_dir=ROOT / "samples" / "pos-backend",
                                           merge_delay=0.0))
    ingest_path(engine, ROOT / "tests" / "fixtures" / "small.jsonl")
    service = ReviewService(engine)
    incident = engine.records.incidents(status="awaiting_approval")[0]["incident_id"]
    rows = checkpoints.checkpoint_rows(engine.graph.checkpointer, incident)
    gate = next(r["checkpoint_id"] for r in rows if r["raised"])
    rca = next(r["checkpoint_id"] for r in rows if r["step"] == 2)  # before rca: re-runs rca, recommend
    k = 0
    while len(rows) < target:
        service.replay(incident, checkpoint_id=gate if k % 2 else rca, reviewer=f"r{k % 5}")
        k += 1
        if k % 25 == 0:
            rows = checkpoints.checkpoint_rows(engine.graph.checkpointer, incident)
    return service, incident


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        t = time.perf_counter()
        service, incident = build(data_dir, args.checkpoints)
        total = service.tree(incident, limit=1)["total"]
        print(f"built {incident}: {total} checkpoints, {service.tree(incident)['branches']} branches"
              f" in {time.perf_counter() - t:.1f} s")
        graph, cfg = service.graph, thread_config(incident)
        head = service.tree(incident, limit=1)["nodes"][0]["checkpoint_id"]
        older = service.tree(incident, limit=100)["nodes"][-1]["checkpoint_id"]
        baseline = median_ms(lambda: graph.get_state(cfg), args.repeat)
        reads = {
            "tree, newest 100 (the page)": lambda: service.tree(incident, limit=100),
            "tree, all": lambda: service.tree(incident),
            "history, one page of 50": lambda: service.history(incident, limit=50),
            "checkpoint (selected: head)": lambda: service.checkpoint(incident, head),
            "checkpoint (selected: older)": lambda: service.checkpoint(incident, older),
            "rerun_plan (older)": lambda: service.rerun_plan(incident, older),
            "incident document": lambda: service.incident(incident),
        }
        results = {name: median_ms(fn, args.repeat) for name, fn in reads.items()}
        before = median_ms(lambda: service.history(incident, limit=None), max(1, args.repeat // 3))
        small = next(r["incident_id"] for r in service.records.incidents(status="awaiting_approval")
                     if r["incident_id"] != incident)
        small_rows = service.tree(small)["nodes"]
        print(f"{'read':<34}{'ms':>10}{'x get_state':>14}")
        for name, ms in results.items():
            print(f"{name:<34}{ms:10.1f}{ms / baseline:14.1f}")
        print(f"{'baseline: one get_state':<34}{baseline:10.2f}{1.0:14.1f}")
        print(f"{'before: full history (every state)':<34}{before:10.1f}{before / baseline:14.1f}")
        visible = [n["checkpoint_id"] for n in service.tree(incident, limit=100)["nodes"]]
        rounds = {"1,000 checkpoints, back and forth": [], "1,000 checkpoints, a new pick each time": [],
                  f"floor: {len(small_rows)} checkpoints, back and forth": []}
        at_big, at_small = _page(data_dir, incident), _page(data_dir, small)
        fresh = iter(visible[1:])
        for _ in range(args.rounds):  # interleaved, so the load of the machine hits all three alike
            names = iter(rounds)
            rounds[next(names)].append(_picks_ms(at_big, incident, [older, head] * args.repeat))
            rounds[next(names)].append(_picks_ms(at_big, incident, [next(fresh) for _ in range(args.repeat)]))
            rounds[next(names)].append(_picks_ms(at_small, small, [small_rows[-1]["checkpoint_id"],
                                                                  small_rows[0]["checkpoint_id"]] * args.repeat))
        floor = statistics.median(rounds[f"floor: {len(small_rows)} checkpoints, back and forth"])
        print(f"\nincident page, pick a checkpoint + rerun (AppTest), {args.rounds} rounds of {args.repeat}+ picks")
        print(f"{'':<44}{'min':>8}{'median':>8}{'max':>8}{'x floor':>9}")
        for name, values in rounds.items():
            mid = statistics.median(values)
            print(f"{name:<44}{min(values):8.1f}{mid:8.1f}{max(values):8.1f}{mid / floor:9.2f}")
        print("goal: <= 100 ms at 1,000 checkpoints")
        checkpoints.close_all()


def _page(data_dir: Path, incident: str):
    """The incident page in AppTest with the History tab open, as a reviewer has it."""
    from streamlit.testing.v1 import AppTest

    os.environ.update(INCIDENTIQ_DATA_DIR=str(data_dir), INCIDENTIQ_POLLER="off",
                      INCIDENTIQ_REPO_DIR=str(ROOT / "samples" / "pos-backend"))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page("app_pages/incident.py")
    at.query_params["incident"] = incident
    at.run()
    at.session_state[f"incident_tab_{incident}"] = "History & time travel"  # only the open tab computes
    at.run()
    if at.exception:
        raise SystemExit(f"the incident page failed: {[e.value for e in at.exception]}")
    return at


def _picks_ms(at, incident: str, picks: list[str]) -> float:
    """A reviewer's interaction: pick each checkpoint in turn, the page reruns; the median (ms)."""
    key = f"incident_history_pick_{incident}"
    times = []
    for target in picks:
        t = time.perf_counter()
        at.selectbox(key=key).set_value(target).run()
        times.append((time.perf_counter() - t) * 1000)
        if at.exception:
            raise SystemExit(f"the incident page failed: {[e.value for e in at.exception]}")
        if at.selectbox(key=key).value != target:
            raise SystemExit(f"the page did not select {target}")
    return statistics.median(times)


if __name__ == "__main__":
    main()
