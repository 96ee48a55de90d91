"""Issue 39.3: a folder source whose sub-folders vanish while it is listed (Kubernetes pod folders,
pruned day folders) is read without them, by `ingest` and by the poller; a folder too large to be
a log folder (`file:/`) is refused naming it; a poller that crashes says why.

The folders are real and really removed during the scan: the scan's own call (os.scandir) removes
a folder when it comes to list it, after listing its parent, so the walk meets it gone (no sleeps)."""
from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path

import pytest

from pipeline.errors import SourceError
from pipeline.ingest import events
from pipeline.ingest.events import iter_paths
from pipeline.operations.metrics import poller_status
from pipeline.unattended.poller import Poller
from pipeline.sources.file import FileSource
from tests.support import BOTH_BACKENDS, cli_json

LINE = {"_time": "2026-11-28T10:00:00Z", "level": "ERROR", "service": "{pod}",
        "message": "HikariPool-1 - Connection is not available, request timed out after 30000ms."}


def pods(root: Path, *names: str) -> Path:
    for name in names:
        folder = root / name / "app"
        folder.mkdir(parents=True)
        (folder / "0.log").write_text(json.dumps({**LINE, "service": name}) + "\n")
    return root


@pytest.fixture
def vanishing(monkeypatch):
    """`vanishing(folder, ...)`: each folder is removed (really, with its files) at the moment the
    scan comes to list it, after its parent was listed with it: a pod folder deleted mid-scan."""
    real = os.scandir
    doomed: set[str] = set()
    removed: list[str] = []

    def scandir(path="."):
        if not isinstance(path, int) and os.fspath(path) in doomed:  # (an int: shutil.rmtree's own walk)
            doomed.discard(os.fspath(path))
            shutil.rmtree(path)
            removed.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)

    def vanish(*folders: Path) -> list[str]:
        doomed.update(os.fspath(f) for f in folders)
        return removed

    return vanish


def test_sub_folders_removed_while_the_folder_is_listed_are_left_out(tmp_path, vanishing):
    root = pods(tmp_path / "pods", "pod-a", "pod-b", "pod-c")
    removed = vanishing(root / "pod-b")
    found = [p.relative_to(root).as_posix() for p in iter_paths(root)]
    assert removed == ["pod-b"] and found == ["pod-a/app/0.log", "pod-c/app/0.log"]


@BOTH_BACKENDS
def test_ingest_and_the_poller_read_a_folder_whose_pods_vanish_during_the_scan(
        data_dir, engine, tmp_path, capsys, monkeypatch, vanishing):
    root = pods(tmp_path / "pods", "pod-a", "pod-b", "pod-c")
    vanishing(root / "pod-b")
    assert cli_json(capsys, "ingest", str(root))["events"] == 2
    (root / "pod-b").mkdir()
    pods(root / "pod-b", "pod-d")  # a new pod, whose folder is gone again by the poll
    poller = Poller(engine, FileSource(root, max_bytes=engine.settings.max_event_bytes), interval=0.05)
    vanishing(root / "pod-b" / "pod-d")
    try:
        report = poller.poll_once()
    finally:
        poller.close()
    assert report.error is None
    assert poller_status(engine.records)[0]["state"] == "stopped"


def test_a_folder_too_large_to_be_a_log_folder_is_refused_naming_it(tmp_path, monkeypatch):
    root = pods(tmp_path / "pods", "pod-a", "pod-b")
    monkeypatch.setattr(events, "MAX_FOLDER_ENTRIES", 5)  # pods/, 2 pods, 2 app/, 2 files: 6
    with pytest.raises(SourceError, match=f"{root} holds more than 5 files and folders"):
        iter_paths(root)


def test_file_slash_is_refused_and_proc_is_listed_or_refused_never_a_traceback():
    with pytest.raises(SourceError, match="holds more than"):
        iter_paths(Path("/"))
    try:
        iter_paths(Path("/proc"))  # processes come and go while it is walked
    except SourceError as refused:
        assert "holds more than" in refused.message


class BrokenSource:
    """A source with a bug: its read raises what is not our error (and asks the loop to stop, so
    the supervisor does not restart it)."""

    name = "broken"

    def __init__(self, stop):
        self.stop = stop

    def read(self, cursor):
        self.stop.set()
        raise ZeroDivisionError("a bug in a source")


def test_a_crashed_poller_says_why_on_stderr_and_in_its_status(engine, capsys):
    stop = threading.Event()
    poller = Poller(engine, BrokenSource(stop), interval=0.01)
    poller.run_supervised(stop)
    err = capsys.readouterr().err
    assert "poller crashed (ZeroDivisionError: a bug in a source)" in err and "Traceback" in err
    (status,) = poller_status(engine.records)
    assert status["state"] == "error" and "ZeroDivisionError: a bug in a source" in status["last_error"]
