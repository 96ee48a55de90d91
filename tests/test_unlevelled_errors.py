"""Issue 35.3: a line with no level that reads as an error opens an incident, its level marked as
inferred; healthy unlevelled lines and lines whose written level is INFO open nothing.

Container output carries no level: a crash-looping worker prints one line per start, and a
routing daemon says `Peer down` among ordinary chatter. Neither names an error keyword; each
says that something broke (a setting undefined, a peer down)."""
from __future__ import annotations

import pytest

from pipeline.ingest.levels import infer_level
from pipeline.unattended.file_ingest import ingest_file

# ordinary unlevelled chatter: requests, starts, planned shutdowns and scaling, counts, clean exits
HEALTHY = ["GET /api/items/{n} 200 12ms", "worker {n} started", "connected to db at 10.0.0.5:5432",
           "cache warmed: {n} entries", "Shutting down idle connection {n}", "scaled down to 3 replicas",
           "processed batch {n} in 45ms", "child {n} exited with code 0", "download of part {n} complete",
           "no new messages in queue orders-{n}", "session opened for user app{n}", "CPU usage down 5% since {n}"]


def cri(n: int, text: str) -> str:
    return f"2026-12-01T10:{n // 3600 % 60:02d}:{n // 60 % 60:02d}.{n % 60:06d}000Z stdout F {text}\n"


@pytest.mark.parametrize("line", [
    "Environment variable DEPLOY_ENV is undefined",
    "Peer down",
    "BGP neighbor 10.0.0.2 is down",
    "worker exited with code 137",
    "logrotate: ALERT exited abnormally with [1]",
    "/etc/app/config.yaml: no such file or directory",
    "upstream payments-api not reachable",
    "certificate for api.example.com expired",
    "Transport endpoint is not connected",
    "node pool-3 is dead",
    "returned non-zero exit status 2",
])
def test_an_unlevelled_line_that_says_something_broke_reads_as_an_error(line):
    assert infer_level(line) == "ERROR"


@pytest.mark.parametrize("line", [h.format(n=7) for h in HEALTHY] + ["dead letter queue size 3", "up and down"])
def test_an_unlevelled_healthy_line_reads_as_no_error(line):
    assert infer_level(line) not in ("ERROR", "FATAL")


def test_a_crash_looping_worker_whose_only_line_is_an_undefined_setting_opens_one_incident(engine, tmp_path):
    log = tmp_path / "worker.log"
    log.write_text("".join(cri(n * 30, "Environment variable DEPLOY_ENV is undefined") for n in range(6)))
    counts = ingest_file(engine, log)
    assert counts.events == 6 and len(counts.incidents_new) == 1
    (incident,) = engine.records.incidents()
    events = engine.records.events_of(incident["incident_id"])
    assert len(events) == 6
    assert all(e.level == "ERROR" and e.fields.get("level_inferred") is True for e in events)


def test_peer_down_among_100k_unlevelled_healthy_lines_opens_one_incident_and_the_rest_none(engine, tmp_path):
    log = tmp_path / "router.log"
    lines = [cri(n, HEALTHY[n % len(HEALTHY)].format(n=n)) for n in range(100_000)]
    lines.insert(61_234, cri(61_234, "Peer down"))
    log.write_text("".join(lines))
    counts = ingest_file(engine, log)
    assert counts.events == 100_001 and len(counts.incidents_new) == 1
    (incident,) = engine.records.incidents()
    (event,) = engine.records.events_of(incident["incident_id"])
    assert event.message == "Peer down" and event.fields.get("level_inferred") is True


def test_a_line_whose_written_level_is_info_opens_nothing_whatever_it_says(engine, tmp_path):
    log = tmp_path / "app.log"
    log.write_text("2026-12-01 10:00:00 INFO Peer down\n"
                   "2026-12-01 10:00:01 INFO Environment variable DEPLOY_ENV is undefined\n"
                   "2026-12-01 10:00:02 INFO Partition rdd_2_1 not found, computing it\n")
    counts = ingest_file(engine, log)
    assert counts.events == 3 and not counts.incidents_new and engine.records.incidents() == []
