"""A log read in small cuts opens the incidents it opens read whole (CONTRACT §2, incidents/neighbours.py): with no
settle window (INCIDENTIQ_SETTLE_SECONDS=0, each read decided as read, as a dense log that never pauses is), the
errors earlier batches stored around a batch are read back as its own earlier errors were, so an error is tied to an
open incident by its process, its writer or its wording whether or not the read cut between them; nothing is written
twice for it."""
from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.unattended.live_read import read_live
from tests.support import BOTH_BACKENDS

# an sshd's refused logins (addresses from RFC 5737): each session's `Received disconnect … Auth fail` is the process's
# conclusion of the `Failed password` it wrote in the same second, and an authentication failure follows the reverse
# mapping its own process wrote
SESSIONS = """\
Dec 10 07:51:09 gate sshd[4323]: Did not receive identification string from 203.0.113.9
Dec 10 07:51:12 gate sshd[4324]: Invalid user support from 203.0.113.9
Dec 10 07:51:15 gate sshd[4324]: Failed password for invalid user support from 203.0.113.9 port 56539 ssh2
Dec 10 07:51:15 gate sshd[4324]: error: Received disconnect from 203.0.113.9: 3: com.example.ssh.AuthException: Auth fail [preauth]
Dec 10 07:51:18 gate sshd[4326]: Invalid user uucp from 203.0.113.9
Dec 10 07:51:20 gate sshd[4326]: Failed password for invalid user uucp from 203.0.113.9 port 59266 ssh2
Dec 10 07:51:20 gate sshd[4326]: error: Received disconnect from 203.0.113.9: 3: com.example.ssh.AuthException: Auth fail [preauth]
"""
MAPPING = """\
Dec 10 06:55:46 gate sshd[200]: reverse mapping checking getaddrinfo for host.example [198.51.100.7] failed - POSSIBLE BREAK-IN ATTEMPT!
Dec 10 06:55:46 gate sshd[200]: pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=198.51.100.7
Dec 10 06:56:10 gate sshd[203]: Connection closed by 198.51.100.8 [preauth]
Dec 10 06:57:31 gate sshd[227]: pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=198.51.100.20  user=root
Dec 10 06:57:33 gate sshd[227]: Connection closed by 198.51.100.20 [preauth]
"""
# what each opens read whole: the title's start and the events, patterns and services of each incident
WHOLE = {
    "sessions": [("Failed password for invalid user support", 4, 2, 1), ("Invalid user support", 2, 1, 1)],
    "mapping": [("reverse mapping checking getaddrinfo", 3, 3, 1)],
}


# a pool's WARN, read in a batch before the errors it causes (nginx timing out on its socket 30 s later): it leads
POOL = [
    ("05:12:17", "info", "php-fpm", "GET /healthz 200 0.8ms"),
    ("05:12:30", "warn", "php-fpm", "[pool www] server reached pm.max_children setting (8), consider raising it"),
    ("05:12:40", "info", "php-fpm", "GET /healthz 200 0.9ms"),
    ("05:13:00", "error", "nginx", "upstream timed out (110: Connection timed out) while reading response header from"
     ' upstream, client: 192.0.2.10, server: shop.example, request: "GET /cart HTTP/1.1",'
     ' upstream: "fastcgi://unix:/run/php/php-fpm.sock:"'),
    ("05:13:01", "error", "nginx", "upstream timed out (110: Connection timed out) while reading response header from"
     ' upstream, client: 192.0.2.11, server: shop.example, request: "GET /checkout HTTP/1.1",'
     ' upstream: "fastcgi://unix:/run/php/php-fpm.sock:"'),
]


@pytest.fixture
def no_window(monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_SETTLE_SECONDS", "0")


def _opened(engine) -> list[tuple[str, int, int, int]]:
    rows = engine.records.query("SELECT title, event_count, pattern_count, service_count FROM incidents")
    return sorted((r["title"], r["event_count"], r["pattern_count"], r["service_count"]) for r in rows)


def _matches(opened: list[tuple[str, int, int, int]], expected: list[tuple[str, int, int, int]]) -> bool:
    return len(opened) == len(expected) and all(
        title.startswith(want[0]) and (events, patterns, services) == want[1:]
        for (title, events, patterns, services), want in zip(opened, expected))


def _log(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "logs" / "auth.log"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("name,text", [("sessions", SESSIONS), ("mapping", MAPPING)])
def test_read_whole_each_log_opens_what_the_cut_reads_are_held_to(no_window, engine, tmp_path, name, text):
    from pipeline.unattended.file_ingest import ingest_file

    ingest_file(engine, _log(tmp_path, text))
    assert _matches(_opened(engine), WHOLE[name]), _opened(engine)


@BOTH_BACKENDS
@pytest.mark.parametrize("batch_lines", [1, 3])
@pytest.mark.parametrize("name,text", [("sessions", SESSIONS), ("mapping", MAPPING)])
def test_a_log_read_in_small_cuts_opens_the_incidents_it_opens_whole(no_window, engine, tmp_path, batch_lines, name,
                                                                      text):
    read_live(engine, _log(tmp_path, text), batch_lines=batch_lines, runs=False)
    assert _matches(_opened(engine), WHOLE[name]), _opened(engine)


@BOTH_BACKENDS
def test_reading_the_neighbours_back_stores_nothing_twice_and_a_reread_adds_nothing(no_window, engine, tmp_path):
    path = _log(tmp_path, SESSIONS)
    read_live(engine, path, batch_lines=2, runs=False)
    before = _opened(engine)
    read_live(engine, path, batch_lines=2, runs=False)  # from the stored cursor: nothing new
    assert _opened(engine) == before
    (row,) = engine.records.query("SELECT count(*) AS n, count(DISTINCT event_id) AS d FROM events"
                                  " WHERE incident_id IS NOT NULL")
    assert row["n"] == row["d"] == sum(events for _, events, _, _ in before) == 6


@BOTH_BACKENDS
@pytest.mark.parametrize("batch_lines", [None, 1, 2])
def test_a_warning_read_in_a_batch_before_the_errors_still_leads_them(no_window, engine, tmp_path, batch_lines):
    import json

    from pipeline.store import outage_rows
    from pipeline.unattended.file_ingest import ingest_file

    path = tmp_path / "logs" / "app.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps({"time": f"2026-10-14T{at}.000+00:00", "level": level, "service": service,
                                        "host": "web-1", "message": message}) + "\n"
                            for at, level, service, message in POOL), encoding="utf-8")
    if batch_lines is None:
        ingest_file(engine, path)
    else:
        read_live(engine, path, batch_lines=batch_lines, runs=False)
    (leader,) = outage_rows.every_leader(engine.records).values()
    assert leader is not None and leader["service"] == "php-fpm" and "pm.max_children" in leader["message"]
