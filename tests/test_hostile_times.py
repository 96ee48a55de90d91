"""A time that UTC cannot hold (year 1 at +14:00, year 9999 at -14:00, an
offset of +25:00) is an unreadable time (CONTRACT §1), never the end of a file or of the poller."""
from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from pipeline.operations.metrics import poller_status
from pipeline.unattended.poller import Poller
from pipeline.sources.file import FileSource
from pipeline.unattended.file_ingest import ingest_path
from tests.support import STORED_IDS, stored_bodies

HOSTILE = ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "2026-11-28T10:00:00+25:00",
           "0001-01-01T00:00:00.5-00:01")


def json_line(when: str, n: int) -> str:
    return json.dumps({"_time": when, "level": "ERROR", "service": f"svc{n}", "host": "h1",
                       "message": f"KeyError: 'order_{n}' in handler"})


def logfmt_line(when: str, n: int) -> str:
    return f'time={when} level=error service=svc{n} msg="KeyError: order_{n} in handler"'


def text_line(when: str, n: int) -> str:
    return f"{when.replace('T', ' ')} ERROR [main] com.shop.Handler{n}: KeyError order_{n} in handler"


def syslog_line(when: str, n: int) -> str:
    return f"<11>{when} host1 svc{n}[42]: KeyError order_{n} in handler"


def syslog5424_line(when: str, n: int) -> str:
    return f"<11>1 {when} host1 svc{n} 42 - - KeyError order_{n} in handler"


LAYOUTS = {"json": json_line, "logfmt": logfmt_line, "log4j": text_line, "syslog": syslog_line,
           "syslog5424": syslog5424_line}


def hostile_file(path: Path, layout: str) -> list[str]:
    make = LAYOUTS[layout]
    lines = [make("2026-11-28T10:00:00Z", 0)]
    for n, when in enumerate(HOSTILE, 1):
        lines.append(make(when, n))
        lines.append(make(f"2026-11-28T10:00:0{n}Z", 10 + n))
    path.write_text("\n".join(lines) + "\n")
    return lines


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_file_with_hostile_times_stores_every_line_and_a_rerun_adds_nothing(tmp_path, engine, layout):
    # in the test's process, through what `python -m pipeline ingest` runs (the command itself runs in
    # tests/test_ingest_cli.py and the durability tests)
    source = tmp_path / f"hostile.{layout}"
    lines = hostile_file(source, layout)
    counts = ingest_path(engine, source).as_json()
    assert counts["events"] + counts["rejected"] == len(lines), counts  # every line accounted for
    bodies = stored_bodies(engine.settings.data_dir)
    assert len(bodies) == counts["events"]
    hostile = [b for b in bodies if b["fields"].get("time_inferred")]
    # each hostile time is read as no time: inferred from the line before, what it said kept
    assert len(hostile) + counts["rejected"] == len(HOSTILE), (hostile, counts)
    for body in hostile:
        assert body["fields"]["time_raw"], body
        assert 1970 <= int(body["time"][:4]) <= 2999
    assert all(b["fields"].get("format") == layout for b in bodies), {b["fields"].get("format") for b in bodies}
    assert ingest_path(engine, source).as_json() == {"events": 0, "rejected": 0, "incidents_new": 0,
                                                      "incidents_updated": 0}


def test_the_poller_keeps_polling_past_hostile_times_and_stores_lines_appended_later(engine, tmp_path):
    log = tmp_path / "app.jsonl"
    lines = hostile_file(log, "json")
    poller = Poller(engine, FileSource(log, max_bytes=engine.settings.max_event_bytes), interval=0.05)
    poller.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and _count_events(engine) < len(lines):
            time.sleep(0.05)
        assert _count_events(engine) == len(lines)
        with log.open("a") as f:
            f.write(json_line("2026-11-28T10:01:00Z", 99) + "\n")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and _count_events(engine) < len(lines) + 1:
            time.sleep(0.05)
        assert _count_events(engine) == len(lines) + 1
        assert poller.alive
        assert poller_status(engine.records)[0]["pollers"][0]["state"] in ("running", "standby")
    finally:
        assert poller.stop(timeout=30)


def _count_events(engine) -> int:
    with sqlite3.connect(engine.settings.data_dir / "app.sqlite3") as conn:
        return conn.execute(f"SELECT count(*) FROM {STORED_IDS}").fetchone()[0] + conn.execute(
            "SELECT count(*) FROM dead_letters").fetchone()[0]
