"""The demo source replays a sample at compressed time and never replays what it delivered."""
from __future__ import annotations

import json

import pytest

from pipeline.errors import SourceError
from pipeline.composition import open_source
from pipeline.sources.demo import DEFAULT_SAMPLE, DemoSource
from tests.support import make_settings

MAX = 262_144


@pytest.fixture
def sample(tmp_path):
    """Six events over an hour of sample time: a burst at 10:00, then one every ten minutes or more."""
    minutes = [0, 0, 0, 10, 30, 60]
    path = tmp_path / "day.jsonl"
    path.write_text("".join(json.dumps({"_time": f"2026-11-28T{10 + m // 60:02d}:{m % 60:02d}:00Z",
                                        "service": "checkout-api", "level": "ERROR",
                                        "message": f"timeout calling payments after {i}ms"}) + "\n"
                            for i, m in enumerate(minutes)))
    return path


class Clock:
    def __init__(self):
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_the_first_burst_arrives_at_once_and_the_rest_at_the_compressed_pace(sample):
    clock = Clock()
    demo = DemoSource(sample, speed=600, max_bytes=MAX, clock=clock)  # 10 sample minutes per second
    first = demo.read(None)
    assert len(first.items) == 3
    clock.now += 0.5
    assert demo.read(first.cursor).items == []
    clock.now += 0.5
    second = demo.read(first.cursor)
    assert len(second.items) == 1
    clock.now += 5  # 10:30 was due 3 s ago, 11:00 is due now
    third = demo.read(second.cursor)
    assert len(third.items) == 2 and third.lag_seconds == pytest.approx(3.0)


def test_a_restart_goes_on_from_the_cursor_without_replaying_or_dumping_the_rest(sample):
    clock = Clock()
    first = DemoSource(sample, speed=600, max_bytes=MAX, clock=clock).read(None)
    clock.now += 3600  # the app was down for an hour of wall time
    restarted = DemoSource(sample, speed=600, max_bytes=MAX, clock=clock)
    again = restarted.read(first.cursor)
    assert again.items == []  # the clock resumes at the last delivered event: 10:00
    clock.now += 1
    nxt = restarted.read(first.cursor)
    assert [e.time.minute for e in nxt.items] == [10]


def test_the_replay_ends_quietly_when_the_sample_is_done(sample):
    clock = Clock()
    demo = DemoSource(sample, speed=600, max_bytes=MAX, clock=clock)
    cursor = demo.read(None).cursor
    clock.now += 60
    done = demo.read(cursor)
    assert len(done.items) == 3
    clock.now += 60
    assert demo.read(done.cursor).items == [] and demo.read(done.cursor).cursor is None


def test_the_demo_spec_uses_the_bundled_sample_and_speed(tmp_path, monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_DEMO_SPEED", "1200")
    demo = open_source("demo", make_settings(tmp_path))
    assert isinstance(demo, DemoSource) and demo.speed == 1200 and demo.path == DEFAULT_SAMPLE


def test_a_missing_sample_is_reported_as_a_source_error(tmp_path):
    with pytest.raises(SourceError, match="demo sample not found"):
        DemoSource(tmp_path / "nope.jsonl", speed=600, max_bytes=MAX).read(None)


def test_a_quiet_lead_in_arrives_with_the_first_errors_at_once(tmp_path):
    path = tmp_path / "day.jsonl"
    rows = [("08:00", "INFO", "store sync started"), ("09:30", "INFO", "cache warmed"),
            ("10:00", "ERROR", "timeout calling payments after 30000ms"), ("11:00", "ERROR", "timeout calling payments after 30001ms")]
    path.write_text("".join(json.dumps({"_time": f"2026-11-28T{t}:00Z", "service": "checkout-api", "level": lvl,
                                        "message": msg}) + "\n" for t, lvl, msg in rows))
    first = DemoSource(path, speed=600, max_bytes=MAX, clock=Clock()).read(None)
    assert [e.level for e in first.items] == ["INFO", "INFO", "ERROR"]


def test_the_bundled_sample_shows_a_first_incident_on_the_first_poll(engine):
    from pipeline.unattended.poller import Poller

    report = Poller(engine, DemoSource(speed=600, max_bytes=MAX), interval=0.1).poll_once()
    assert report.counts.incidents_new and report.runs_started >= 1
    assert engine.records.incidents(status="awaiting_approval")
