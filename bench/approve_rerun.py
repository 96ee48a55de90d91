"""Benchmark: the server's part of approve (issue 38.4), the decision panel's callback and the page's
rerun it triggers, without a browser, this tree against an older one alternated.

Seeds a data dir as bench/browser.py does (`--real` incidents paused at approval by the offline
analyst, synthetic records up to `--incidents`), then runs, for each tree in turn (this one, and
`--before DIR`: an export of an older commit, `git archive COMMIT | tar -x -C DIR`), `--rounds`
processes, each on its own copy of the data dir: the workbench's app.py under Streamlit's AppTest,
a reviewer named, each of `--clicks` paused incidents opened and its Approve clicked. The first
click of a process is a warm-up (imports, the offline analyst) and is not counted. One script cache
per process, as a server's Runtime has (AppTest compiles every run's script anew otherwise).

Per click: `wall` is the script thread's time from the rerun's start (the callback runs first) to
its end, `cpu` that thread's CPU time (less sensitive to the machine's load than wall), `approve`
the review service's approve call inside it (wall). Medians over all counted clicks.

    .venv/bin/python bench/approve_rerun.py [--before DIR] [--rounds 5] [--clicks 4] [--seed DIR]

What it found (7 Dec, session 57, load 4-10 from other work): the decision itself (review.approve:
the claim, the checkpoint read, LangGraph's resume through approval and code_fix with "sync"
durability, the record and the audit) was about a quarter of the click; the rest was the page's
rerun, mostly the parts a decision does not change: the analysis's findings and similar docs and
the Evidence tab, whose small tables each cost ~5 ms in pandas (`plain` mapping every text column,
`str.count` per column) before Streamlit's own conversion.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# the child: one process, one tree, one copy of the seeded data dir
CHILD = r'''
import gc, json, os, shutil, sys, tempfile, time
root, seed, clicks = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.chdir(root)
sys.path.insert(0, root)
data = os.path.join(tempfile.mkdtemp(prefix="approve-rerun-"), "data")
shutil.copytree(seed, data)
os.environ.update(INCIDENTIQ_DATA_DIR=data, INCIDENTIQ_POLLER="off", INCIDENTIQ_TWO_PERSON="off",
                  INCIDENTIQ_REPO_DIR=os.path.join(root, "samples", "pos-backend"))
from streamlit.runtime.scriptrunner import script_cache, script_runner
from streamlit.testing.v1 import AppTest, app_test, local_script_runner
shared = script_cache.ScriptCache()
app_test.ScriptCache = local_script_runner.ScriptCache = lambda: shared
from pipeline.review.service import ReviewService
inner, runs = [], []
approve = ReviewService.approve
def timed_approve(self, *a, **k):
    t = time.perf_counter()
    try:
        return approve(self, *a, **k)
    finally:
        inner.append((time.perf_counter() - t) * 1000)
ReviewService.approve = timed_approve
run_script = script_runner.ScriptRunner._run_script
def timed_run(self, rerun_data):
    t, c = time.perf_counter(), time.thread_time()
    try:
        return run_script(self, rerun_data)
    finally:
        runs.append(((time.perf_counter() - t) * 1000, (time.thread_time() - c) * 1000))
script_runner.ScriptRunner._run_script = timed_run
at = AppTest.from_file(os.path.join(root, "app.py"), default_timeout=120).run()
at.sidebar.text_input(key="app_reviewer_name").input("alice").run()
paused = open(os.path.join(seed, "paused.txt")).read().split()
out = []
for k, incident in enumerate(paused[:clicks + 1]):
    at.switch_page("app_pages/incident.py")
    at.query_params["incident"] = incident
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    button = next(b for b in at.button if (b.key or "").endswith("_approve") and b.label == "Approve")
    gc.collect()
    runs.clear()
    button.click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Approval recorded" in s.value for s in at.success), [s.value for s in at.success]
    if k:
        out.append({"wall": sum(r[0] for r in runs), "cpu": sum(r[1] for r in runs), "approve": inner[-1]})
print(json.dumps(out))
shutil.rmtree(os.path.dirname(data), ignore_errors=True)
'''


def seed(data_dir: Path, *, incidents: int, real: int) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    os.environ["INCIDENTIQ_TWO_PERSON"] = "off"
    import browser  # bench/browser.py: the same seeding as the browser bench

    data_dir.mkdir(parents=True, exist_ok=True)
    (data_dir / "paused.txt").write_text("\n".join(browser.seed(data_dir, incidents=incidents, real=real)))


def one_process(tree: Path, data_dir: Path, clicks: int) -> list[dict]:
    done = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(data_dir), str(clicks)], cwd=tree,
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{tree}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, help="an older tree (git archive) measured alternately")
    parser.add_argument("--rounds", type=int, default=5, help="processes per tree")
    parser.add_argument("--clicks", type=int, default=4, help="timed approvals per process (after one warm-up)")
    parser.add_argument("--incidents", type=int, default=2000)
    parser.add_argument("--seed", type=Path, help="a data dir seeded before (kept); default: seeded now")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="approve-rerun-seed-"))
    try:
        data_dir = args.seed
        if data_dir is None or not (data_dir / "paused.txt").exists():
            data_dir = data_dir or tmp / "seed"
            seed(data_dir, incidents=args.incidents, real=args.clicks + 1)
        trees = {"this tree": ROOT, **({"before": args.before.resolve()} if args.before else {})}
        got: dict[str, list[dict]] = {name: [] for name in trees}
        for r in range(args.rounds):
            for name, tree in trees.items():  # alternated: a change of the machine's load falls on both
                clicks = one_process(tree, data_dir, args.clicks)
                got[name] += clicks
                print(f"round {r + 1} {name:9} load {os.getloadavg()[0]:5.2f} wall "
                      + " ".join(f"{c['wall']:.0f}" for c in clicks), flush=True)
        print(f"\n{'tree':10} {'clicks':>6} {'wall p50':>9} {'cpu p50':>8} {'approve p50':>12}  (ms)")
        for name, clicks in got.items():
            p50 = {k: statistics.median(c[k] for c in clicks) for k in ("wall", "cpu", "approve")}
            print(f"{name:10} {len(clicks):6} {p50['wall']:9.1f} {p50['cpu']:8.1f} {p50['approve']:12.1f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
