"""What the workbench's Backtests page goes through: the backtests and their reports, and starting,
cancelling and resuming one.

A backtest the page starts is the CLI's own command, `python -m pipeline backtest`, in a child
process: the same claim, the same resume (a cancelled or killed run is `stopped`, and the same
command or `--resume ID` takes it over), and its work never holds the
workbench's process (the analysis is CPU-bound Python). Cancelling sends the worker SIGINT, which
the command answers as Ctrl-C: it stops at once (the incident in hand is not recorded, and is
redone on resume), releases the backtest and exits.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from pipeline.backtest import pairwise
from pipeline.backtest.candidate import check_candidate
from pipeline.backtest.report import report
from pipeline.backtest.run import STATUS_CHOICES
from pipeline.engine import Engine
from pipeline.errors import Conflict, UsageError
from pipeline.review.identity import Actor
from pipeline.store import backtests, judgments
from pipeline.store.owners import owner_alive

RUNS_DIR = "backtest-runs"  # under the data dir: each started worker's stderr, for its error


@dataclass
class Launch:
    """A worker the page started: its process, where its stderr goes, the arguments it was given, the
    backtests there were when it started, and the backtest it runs once it has claimed one."""
    process: subprocess.Popen
    log: Path
    what: str
    known: frozenset[str] = frozenset()
    backtest_id: str | None = None
    started: float = field(default_factory=time.monotonic)

    def failure(self) -> str | None:
        """The worker's error when it ended with one (not when it finished or was cancelled)."""
        code = self.process.poll()
        if code in (None, 0, 130):
            return None
        lines = [line for line in self.log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
        return lines[-1] if lines else f"the backtest process exited with code {code}"


class BacktestService:
    def __init__(self, engine: Engine):
        self.engine = engine
        self._launches: list[Launch] = []
        self._ended: dict[int, str | None] = {}  # pid -> its backtest, of the workers that ended
        self._lock = threading.Lock()

    def backtests(self, *, limit: int = 50) -> list[dict]:
        """Backtests newest first: id, candidate, status, done/total, started/finished, and whether a
        worker is on it now (`working`, `running`; a `stopped` one can be resumed)."""
        return backtests.backtests(self.engine.records, limit=limit)

    def report(self, backtest_id: str) -> dict:
        """The report of one backtest (see pipeline/backtest/report.py)."""
        return report(self.engine, backtest_id)

    def pairs(self, backtest_id: str) -> list[dict]:
        """The incidents of a backtest a reviewer can judge pairwise (pipeline/backtest/pairwise.py)."""
        return pairwise.pairs(self.engine, backtest_id)

    def shown_order(self) -> str:
        """Which answer to show as A (live or candidate), drawn at random."""
        return pairwise.shown_order()

    def judge(self, actor: Actor, **judgment) -> dict:
        """Record a pairwise judgment (backtest_id, incident_id, a_side, choice, reason, correction)."""
        return pairwise.judge(self.engine, actor, **judgment)

    def judgments(self, backtest_id: str) -> list[dict]:
        return judgments.of_backtest(self.engine.records, backtest_id)

    def pairwise_cases(self, backtest_id: str) -> str:
        """The judgments as labelled eval cases, JSONL (what `backtest --export ID` writes)."""
        return "".join(json.dumps(c) + "\n" for c in pairwise.cases(self.engine, backtest_id)["cases"])

    def start(self, *, model: str | None = None, docs: str | None = None, settings_file: str | None = None,
              status: str = "decided", since_days: float | None = None, limit: int | None = None) -> int:
        """Start a backtest in a worker process (the same command as an unfinished one resumes it);
        returns the worker's pid, which `launched` turns into its backtest once it has claimed one.
        A candidate that cannot run is refused here, before any process starts, and so is a second
        start of the same backtest while its worker is still loading (a second click)."""
        model, docs, settings_file = (v.strip() or None if isinstance(v, str) else v
                                      for v in (model, docs, settings_file))
        if status not in STATUS_CHOICES:
            raise UsageError(f"the scope must be one of {', '.join(STATUS_CHOICES)}")
        if limit is not None and limit <= 0:
            raise UsageError("at most how many incidents: give a positive number, or none for all")
        if since_days is not None and since_days <= 0:
            raise UsageError("opened in the last how many days: give a positive number, or none for all")
        check_candidate(self.engine, model=model, docs=Path(docs) if docs else None,
                        settings_file=Path(settings_file) if settings_file else None)
        args = ["--status", status]
        for flag, value in (("--model", model), ("--docs", docs), ("--settings", settings_file)):
            if value:
                args += [flag, value]
        if since_days is not None:
            args += ["--since", f"{since_days:g}d"]
        if limit is not None:
            args += ["--limit", str(int(limit))]
        what = " ".join(args)
        if any(p["what"] == what for p in self.pending()):
            raise Conflict("this backtest is starting already: its worker is loading the analyst, and its "
                           "progress shows once it has claimed the incidents")
        return self._spawn(args, what=what)

    def resume(self, backtest_id: str) -> None:
        """Continue a stopped backtest (cancelled, or its worker died) in a worker process."""
        row = backtests.backtest(self.engine.records, backtest_id)  # BacktestNotFound
        if row["status"] == "running":  # a live worker holds it
            raise Conflict(f"backtest {backtest_id} is being run by another process")
        if row["status"] != "stopped":
            raise Conflict(f"backtest {backtest_id} is {row['status']}: nothing to resume")
        self._spawn(["--resume", backtest_id], what=f"resume {backtest_id}", backtest_id=backtest_id)

    def cancel(self, backtest_id: str) -> bool:
        """Ask the worker of a backtest to stop (resumable); False when no worker on
        this machine runs it (finished, already stopped, or another machine's)."""
        owner = backtests.owner_of(self.engine.records, backtest_id)
        pid = _local_backtest_worker(owner)
        if pid is None:
            return False
        os.kill(pid, signal.SIGINT)
        return True

    def starting(self) -> int:
        """How many workers this process started are still running."""
        with self._lock:
            return sum(launch.process.poll() is None for launch in self._launches)

    def pending(self) -> list[dict]:
        """The workers this process started that are running but have not claimed a backtest yet (a
        fresh Python process loads the analyst first: seconds on a busy machine), oldest first:
        what each was asked (`what`) and for how many seconds it has been loading (`seconds`)."""
        with self._lock:
            running = [launch for launch in self._launches if launch.process.poll() is None]
        out = []
        for launch in running:
            if self._claimed(launch) is None:
                out.append({"what": launch.what, "seconds": time.monotonic() - launch.started})
        return out

    def launched(self, pid: int) -> str | None:
        """The backtest the worker `start` returned the pid of runs, once it has claimed one."""
        with self._lock:
            launch = next((launch for launch in self._launches if launch.process.pid == pid), None)
        return self._claimed(launch) if launch else self._ended.get(pid)

    def _claimed(self, launch: Launch) -> str | None:
        if launch.backtest_id is None:
            with self._lock:
                taken = {other.backtest_id for other in self._launches if other.backtest_id}
            new = [r["backtest_id"] for r in self.backtests() if r["backtest_id"] not in launch.known | taken]
            for backtest_id in new:
                # its backtest is the new one whose owner token names its pid (host:pid:…) …
                owner = backtests.owner_of(self.engine.records, backtest_id) or ""
                if owner.split(":")[1:2] == [str(launch.process.pid)]:
                    launch.backtest_id = backtest_id
                    break
            else:
                # … or, once it has ended (a finished backtest has no owner), the oldest new one
                if new and launch.process.poll() is not None:
                    launch.backtest_id = new[-1]
        return launch.backtest_id

    def failures(self) -> list[str]:
        """The errors of the workers this process started that ended with one, each said once."""
        with self._lock:
            ended = [launch for launch in self._launches if launch.process.poll() is not None]
        for launch in ended:  # which backtest each ran, for `launched`, before it is let go
            self._ended[launch.process.pid] = self._claimed(launch)
        with self._lock:
            self._launches = [launch for launch in self._launches if launch not in ended]
        return [f"backtest ({launch.what}): {why}" for launch in ended if (why := launch.failure())]

    def _spawn(self, args: list[str], *, what: str, backtest_id: str | None = None) -> int:
        known = frozenset(r["backtest_id"] for r in self.backtests())
        settings = self.engine.settings
        runs = Path(settings.data_dir) / RUNS_DIR
        runs.mkdir(parents=True, exist_ok=True)
        log = runs / f"{time.time_ns()}.log"
        # the workbench's own settings: the same data dir (and database) and source tree the live
        # analyst reads, the rest from the environment the workbench read them from
        env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(settings.data_dir), "PYTHONUNBUFFERED": "1"}
        if settings.repo_dir:
            env["INCIDENTIQ_REPO_DIR"] = str(settings.repo_dir)
        if settings.database_url:
            env["INCIDENTIQ_DATABASE_URL"] = settings.database_url
        with log.open("wb") as err:
            process = subprocess.Popen([sys.executable, "-m", "pipeline", "backtest", *args, "--json"],
                                       env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                       start_new_session=True)  # not stopped with the server's terminal
        # reaped when it ends, whether or not a page asks again (no zombie, no process object
        # collected while it runs)
        threading.Thread(target=process.wait, name=f"backtest-worker-{process.pid}", daemon=True).start()
        with self._lock:
            self._launches.append(Launch(process=process, log=log, what=what, known=known, backtest_id=backtest_id))
        return process.pid


def _local_backtest_worker(owner: str | None) -> int | None:
    """The pid of the live process on this machine named by a backtest's owner token, if it is a
    `pipeline backtest` command (a reused pid of another program is never signalled)."""
    if not owner or not owner_alive(owner):
        return None
    host, pid_text, *_ = owner.split(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return None
    try:
        argv = Path(f"/proc/{pid_text}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return None
    return int(pid_text) if b"backtest" in argv else None
