"""The poller reads a backlog in bounded batches, analyses each batch's incidents before
reading the next, and says how far behind it is (poll --once --json, the Operations page); a short
burst through bench/backlog.py (a real child process appending, or a loopback Splunk) loses nothing
and drains."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pipeline.operations.metrics import poller_status
from pipeline.unattended.poller import Poller
from pipeline.sources.file import FileSource
from tests.support import ROOT, cli_json


def error_line(k: int) -> str:
    return json.dumps({"_time": f"2026-11-28T10:05:{k:02d}Z", "service": f"svc-{k}", "host": "h-1", "level": "ERROR",
                       "message": f"connect ECONNREFUSED 10.0.0.{k}:5432", "exception": "Error"}) + "\n"


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "logs" / "app.jsonl"
    path.parent.mkdir()
    path.write_text("".join(error_line(k) for k in range(5)))
    return path


def test_poll_once_json_reports_the_lines_and_bytes_left_behind_the_bounded_read(engine, log, capsys, monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_SOURCE", f"file:{log}")
    monkeypatch.setenv("INCIDENTIQ_POLL_BATCH_LINES", "2")
    monkeypatch.setenv("INCIDENTIQ_POLL_MAX_LINES", "2")
    monkeypatch.setenv("INCIDENTIQ_SETTLE_SECONDS", "0")  # each read decided as read: the bounded read alone
    first = cli_json(capsys, "poll", "--once")
    rest = len("".join(error_line(k) for k in range(2, 5)).encode())
    assert (first["events"], first["more"], first["lines_behind"], first["bytes_behind"]) == (2, True, 3, rest)
    assert first["lag_seconds"] >= 0.0
    # the first batch's incidents were analysed in the poll that read them
    assert first["incidents_new"] == first["runs_started"] == 2
    with log.open("a") as f:
        f.write('{"_time": "2026-11-28T10:06:00Z", "level": "ERROR", "message": "half a li')  # no newline yet
    monkeypatch.setenv("INCIDENTIQ_POLL_MAX_LINES", "10")
    second = cli_json(capsys, "poll", "--once")
    assert (second["events"], second["more"], second["lines_behind"]) == (3, False, 0)
    assert second["bytes_behind"] == len(b'{"_time": "2026-11-28T10:06:00Z", "level": "ERROR", "message": "half a li')
    stats = poller_status(engine.records)[0]
    assert (stats["lines_behind"], stats["bytes_behind"]) == (0, second["bytes_behind"])


class Recording:
    """The file source, noting at each read how many incidents were already awaiting approval."""

    def __init__(self, engine, path):
        self.inner = FileSource(path, max_bytes=engine.settings.max_event_bytes, batch_lines=2)
        self.name = self.inner.name
        self.engine = engine
        self.awaiting_at_reads: list[int] = []

    def read(self, cursor):
        self.awaiting_at_reads.append(self.engine.records.status_counts().get("awaiting_approval", 0))
        return self.inner.read(cursor)


def test_a_batchs_incidents_are_analysed_before_the_next_batch_is_read(engine, log):
    # each read decided as read (INCIDENTIQ_SETTLE_SECONDS=0; with the settle window, once the burst settled)
    engine.settings = engine.settings.model_copy(update={"settle_seconds": 0})
    source = Recording(engine, log)
    report = Poller(engine, source, interval=0.05).poll_once()
    assert (report.counts.events, report.runs_started, report.lines_behind) == (5, 5, 0)
    assert source.awaiting_at_reads == [0, 2, 4]  # not [0, 0, 0]: runs did not wait for the reading


def test_the_operations_page_shows_the_lines_behind_and_the_oldest_unread(app, paused_engine, log):
    paused_engine.settings = paused_engine.settings.model_copy(update={"poll_max_lines": 2})
    Poller(paused_engine, FileSource(log, max_bytes=1_000_000, batch_lines=2), interval=0.05).poll_once()
    app.switch_page("app_pages/operations.py").run()
    assert not app.exception, [e.value for e in app.exception]
    pollers = next(d.value for d in app.dataframe if "lines behind" in d.value.columns)
    row = pollers[pollers["source"] == f"file:{log.resolve()}"].iloc[0]
    assert row["lines behind"] == 3
    assert row["oldest unread (s)"] >= 0.0


@pytest.mark.parametrize("source", ["file", "splunk"])
def test_a_short_burst_through_the_real_poller_loses_nothing_and_drains(source, tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "backlog.py"), "--source", source, "--rate", "300",
                           "--seconds", "3", "--new-per-second", "5", "--interval", "0.5", "--drain-timeout", "60",
                           "--json"], capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert result["lines_delivered"] == 900
    assert result["nothing_lost"] and result["lines_in"] == 900
    assert result["lines_behind_at_end"] == 0 and result["drain_seconds"] is not None
    assert result["incidents_failed"] == 0 and result["incidents_measured"] == result["incidents"] > 0


def test_a_backlog_is_stored_in_batches_that_grow_while_more_is_ready(engine, tmp_path):
    # issue 37.2: a burst of 2,000 lines/s was stored 100 lines a transaction; while the source says
    # more is ready each batch doubles (to 4x the source's, INCIDENTIQ_POLL_BATCH_LINES), and a poll that finds
    # the source caught up starts again from the configured size
    # (each read stored as read, INCIDENTIQ_SETTLE_SECONDS=0: the settle window would hold an unpaused log's
    # reads together up to its span, test_settling.py)
    engine.settings = engine.settings.model_copy(update={"poll_max_lines": 10_000, "settle_seconds": 0})
    path = tmp_path / "app.jsonl"
    info = '{{"_time": "2026-11-28T10:{m:02d}:{s:02d}Z", "service": "svc", "level": "INFO", "message": "ok {n}"}}\n'

    def append(start: int, count: int) -> None:
        with path.open("a") as out:
            out.writelines(info.format(m=n // 60 % 60, s=n % 60, n=n) for n in range(start, start + count))
    append(0, 700)
    sizes: list[int] = []
    store = engine.incidents.store_batch

    def noted(items, **kwargs):
        items = list(items)
        sizes.append(len(items))
        return store(items, **kwargs)
    engine.incidents.store_batch = noted
    poller = Poller(engine, FileSource(path, max_bytes=engine.settings.max_event_bytes, batch_lines=10), interval=0.05)
    try:
        assert poller.poll_once().counts.events == 700
        assert sizes == [10, 20, *[40] * 16, 30]
        sizes.clear()
        append(700, 25)
        assert poller.poll_once().counts.events == 25
        assert sizes == [10, 15]
    finally:
        poller.close()
