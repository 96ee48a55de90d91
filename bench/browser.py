"""Benchmark: what a reviewer waits for in a real browser, on a data dir with 10,000 incidents.

Seeds a temp data dir: a dozen real incidents run to the approval gate by the offline analyst
(ingested, so they have checkpoints, findings and fix proposals), plus synthetic records
through the store's own batch functions (as bench/inbox.py does: running 10,000 real analyses
would take hours) up to `--incidents`. Starts `streamlit run app.py` on it (poller off) and a
hello-world Streamlit page as the baseline, drives headless Chromium through Playwright, warms
both, and times click → result over `--repeat` repetitions:

- baseline: load the hello-world page until its text shows (the cost of any Streamlit page),
- open incident: load /incident?incident=ID until the analysis and decision panel are drawn,
- open timeline: click the "History & time travel" tab until the checkpoint picker shows,
- pick a checkpoint: choose an older checkpoint in the picker until its changes show (the history
  view is a fragment: only it reruns),
- approve: click "Approve" until "Approval recorded" shows (one incident each).

Prints p50 and p90 in milliseconds. Goal: p50 ≤ 1 s for each.

    /work/main/.venv/bin/python bench/browser.py [--incidents 10000] [--repeat 10]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401

from pipeline.clock import iso  # noqa: E402
from pipeline.config import Settings  # noqa: E402
from pipeline.composition import open_engine  # noqa: E402
from pipeline.operations.file_ingest import ingest_path  # noqa: E402
from pipeline.state import CATEGORIES, SEVERITIES, LogEvent  # noqa: E402
from pipeline.store import checkpoints  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]
CLOSED = ["fix_proposed", "rejected", "approved", "expired", "in_revision", "analyzing"]
HELLO = 'import streamlit as st\nst.title("Hello")\nst.write("baseline page")\n'


def _name(k: int) -> str:
    out, k = "", k + 1  # letters: the fingerprint masks digits, every incident must be its own
    while k:
        k, r = divmod(k - 1, 26)
        out = chr(97 + r) + out
    return out


def seed(data_dir: Path, *, incidents: int, real: int) -> list[str]:
    """`real` incidents paused at approval (real runs) and synthetic records up to `incidents`."""
    engine = open_engine(Settings.from_env(data_dir=data_dir, repo_dir=ROOT / "samples" / "pos-backend",
                                           merge_delay=0.0))
    log = data_dir / "real.jsonl"
    log.write_text("".join(json.dumps({
        "_time": f"2026-11-28T10:{k:02d}:0{i}Z", "service": f"checkout-{_name(k)}", "host": f"co-{i}",
        "level": "ERROR", "exception": "java.sql.SQLTransientConnectionException",
        "message": f"HikariPool-1 - Connection is not available, request timed out after 3000{i}ms."}) + "\n"
        for k in range(real) for i in range(1, 4)))
    ingest_path(engine, log)
    paused = [r["incident_id"] for r in engine.records.incidents(status="awaiting_approval")]
    start = datetime(2026, 11, 20, tzinfo=timezone.utc)
    n = incidents - len(paused)
    events = [LogEvent(event_id=f"bench-{k}", time=start + timedelta(seconds=k), level="ERROR",
                       service=f"svc-{_name(k % 400)}", exception=f"com.example.{_name(k).capitalize()}Failure",
                       message=f"operation {_name(k)} failed") for k in range(n)]
    for i in range(0, n, 1000):
        engine.incidents.store_batch(events[i:i + 1000], cursor=None)
    now = datetime.now(timezone.utc)
    for k, row in enumerate(r for r in engine.records.incidents(limit=None) if r["incident_id"] not in paused):
        engine.records.update_incident(
            row["incident_id"], status=CLOSED[k % len(CLOSED)], severity=SEVERITIES[k % 4],
            category=CATEGORIES[k % len(CATEGORIES)], confidence=(k % 100) / 100,
            sla_deadline=iso(now + timedelta(minutes=(k % 600) - 60)))
    total = len(engine.records.incidents(limit=None))
    engine.records.close()
    checkpoints.close_all()
    print(f"seeded {total} incidents ({len(paused)} real, paused at approval)")
    return paused


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(script: str, data_dir: Path, log: Path) -> tuple[subprocess.Popen, str]:
    port = _port()
    env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(data_dir), "INCIDENTIQ_POLLER": "off",
           "INCIDENTIQ_REPO_DIR": str(ROOT / "samples" / "pos-backend"), "INCIDENTIQ_TWO_PERSON": "off"}
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true",
                             "--server.port", str(port), "--server.address", "127.0.0.1",
                             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
                            cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return proc, base
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"streamlit did not start: {log.read_text()[-2000:]}") from None
            time.sleep(0.3)


def settle(page, timeout: float = 60) -> None:
    """Until Streamlit finished the run (no running indicator, no skeleton)."""
    deadline = time.monotonic() + timeout
    page.wait_for_timeout(300)  # the running indicator shows only after a moment
    while time.monotonic() < deadline:
        if (page.locator('[data-testid="stStatusWidget"]').count() == 0
                and page.locator('[data-testid="stSkeleton"]').count() == 0):
            return
        page.wait_for_timeout(50)
    raise RuntimeError("the app did not finish its run")


def pick(page, expect) -> None:
    """Choose an rca checkpoint in the picker, until its changes are drawn."""
    box = page.get_by_label("Checkpoint", exact=True).first
    box.click()
    box.fill("· rca ·")
    option = page.get_by_role("option").filter(has_text="· rca ·").first
    short = re.search(r"· ([0-9a-f]{8})(?: · |$)", option.inner_text()).group(1)
    option.click()
    expect(page.get_by_text(f"Changes of checkpoint {short} against its parent")).to_be_visible(timeout=60_000)


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--incidents", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    from playwright.sync_api import expect, sync_playwright

    tmp = Path(tempfile.mkdtemp(prefix="iiq-bench-browser-"))
    procs = []
    try:
        t = time.perf_counter()
        paused = seed(tmp / "data", incidents=args.incidents, real=args.repeat + 2)
        print(f"seed took {time.perf_counter() - t:.1f}s")
        (tmp / "hello.py").write_text(HELLO)
        app, app_url = serve("app.py", tmp / "data", tmp / "app.log")
        hello, hello_url = serve(str(tmp / "hello.py"), tmp / "data", tmp / "hello.log")
        procs += [app, hello]
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1440, "height": 1000})

            def load_hello():
                page.goto(hello_url)
                expect(page.get_by_text("baseline page")).to_be_visible(timeout=60_000)

            def load_incident(incident_id: str):
                page.goto(f"{app_url}/incident?incident={incident_id}")
                expect(page.get_by_role("heading", name=incident_id)).to_be_visible(timeout=60_000)
                expect(page.get_by_text("Evidence it rests on").first).to_be_visible(timeout=60_000)

            load_hello()  # warm: the browser's cache of Streamlit's bundle, both servers' first runs
            page.goto(app_url)
            settle(page)
            load_incident(paused[-1])
            settle(page)
            results: dict[str, list[float]] = {"baseline: hello-world page load": [], "open incident": [],
                                               "open timeline": [], "pick a checkpoint": [], "approve": []}
            for _ in range(args.repeat):
                results["baseline: hello-world page load"].append(timed(load_hello))
            for k in range(args.repeat):
                incident = paused[k]
                results["open incident"].append(timed(lambda: load_incident(incident)))
                settle(page)
                tab = page.get_by_role("tab", name="History & time travel")
                results["open timeline"].append(timed(lambda: (tab.click(), expect(
                    page.get_by_label("Checkpoint", exact=True).first).to_be_visible(timeout=60_000))))
                settle(page)
                results["pick a checkpoint"].append(timed(lambda: pick(page, expect)))
                settle(page)
                page.get_by_role("tab", name="Evidence").click()
                settle(page)
                name = page.get_by_label("Your name", exact=True)
                name.fill("bench")
                name.press("Enter")
                settle(page)
                approve = page.locator('button[data-testid^="stBaseButton"]').filter(has_text="Approve")
                expect(approve).to_have_count(1, timeout=30_000)  # the render before the name is gone
                expect(approve).to_be_enabled(timeout=30_000)
                results["approve"].append(timed(lambda: (approve.click(), expect(
                    page.get_by_text("Approval recorded for bench").first).to_be_visible(timeout=60_000))))
                settle(page)
            browser.close()
        print(f"{'click → result (ms)':<34} {'p50':>8} {'p90':>8}   (n={args.repeat}, goal p50 ≤ 1000)")
        for name, samples in results.items():
            p50, p90 = stats(samples)
            print(f"{name:<34} {p50:8.0f} {p90:8.0f}")
    finally:
        for proc in procs:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
