"""Webhooks are told off the poller's thread, each POST within a wall-clock
deadline, and what they are told is inert in Slack's and Teams' markup.

The chaos case runs real loopback servers: a tarpit that answers one byte at a time (its reads
never time out) and a webhook that answers 500. Lines appended to the polled file reach the
approval gate as fast as in the same run without webhooks, while the deliveries fail and retry.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from pipeline.notifications import sender
from pipeline.notifications.messages import flavour_of, text_of
from pipeline.notifications.targets import targets
from pipeline.unattended.delivery import DeliveryWorker
from pipeline.unattended.poller import Poller
from pipeline.review.service import ReviewService
from pipeline.sources.file import FileSource
from pipeline.store import outbox
from tests.support import FIXTURES, by_category


class Tarpit:
    """Accepts, reads the request, then answers `HTTP/1.1 200 OK...` one byte every `pace` s."""

    def __init__(self, pace: float = 0.2, for_seconds: float = 120.0):
        self.pace, self.for_seconds = pace, for_seconds
        self.connections = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hooks/tarpit"
        self._closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self._closed.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._drip, args=(conn,), daemon=True).start()

    def _drip(self, conn):
        with conn:
            conn.settimeout(5)
            try:
                conn.recv(65536)
                end = time.monotonic() + self.for_seconds
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 100000:
                    if self._closed.is_set() or time.monotonic() > end:
                        return
                    conn.sendall(bytes([byte]))
                    time.sleep(self.pace)
            except OSError:
                return

    def close(self):
        self._closed.set()
        self.sock.close()


class Failing:
    """A webhook that answers every POST with 500."""

    def __init__(self):
        self.posts: list[str] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                hook.posts.append(self.headers.get("Idempotency-Key"))
                self.send_response(500)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/failing"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def _lines(suffix: str) -> str:
    """small.jsonl's records with every service and host renamed: new fingerprints on other machines, so new
    incidents (the same services' copies on the same hosts at the same times are one outage, as read whole)."""
    out = []
    for line in (FIXTURES / "small.jsonl").read_text().splitlines():
        record = json.loads(line)
        record["service"] = f"{record['service']}{suffix}"
        record["host"] = f"{record['host']}{suffix}"
        out.append(json.dumps(record))
    return "\n".join(out) + "\n"


def _awaiting(engine, suffix: str) -> int:
    rows = engine.records.incidents(status="awaiting_approval")
    return sum(1 for r in rows if r["service"].endswith(suffix))


def _seconds_to_gate(engine, log, suffix: str, expected: int, limit: float = 90.0) -> float:
    started = time.monotonic()
    with log.open("a") as f:
        f.write(_lines(suffix))
    while _awaiting(engine, suffix) < expected:
        assert time.monotonic() - started < limit, f"{suffix}: not at the gate after {limit:g} s"
        time.sleep(0.02)
    return time.monotonic() - started


def test_a_tarpit_and_a_failing_webhook_do_not_slow_the_poll_while_deliveries_retry(engine, tmp_path, monkeypatch):
    tarpit, failing = Tarpit(), Failing()
    log = tmp_path / "app.jsonl"
    log.write_text("")
    monkeypatch.delenv("INCIDENTIQ_NOTIFY_URLS", raising=False)
    worker = DeliveryWorker(engine.records, deadline=1.5, timeout=5.0, idle_seconds=0.1, first_backoff=0.2)
    poller = Poller(engine, FileSource(log, max_bytes=engine.settings.max_event_bytes), interval=0.05,
                    deliveries=worker)
    poller.start()
    try:
        n = 4  # small.jsonl opens four incidents
        without = [_seconds_to_gate(engine, log, f"-a{i}", n) for i in range(2)]
        monkeypatch.setenv("INCIDENTIQ_NOTIFY_URLS", f"{tarpit.url},{failing.url}")
        # a decision to tell both webhooks about, before any line of the measured run
        ReviewService(engine).reject(by_category(engine, "db_pool_exhausted"), reviewer="ann", reason="dup")
        with_hooks = [_seconds_to_gate(engine, log, f"-b{i}", n) for i in range(2)]
        # every row tried at least once: the new critical incidents' announcements queue behind the
        # decision's retries, and each try at the tarpit holds the worker for its whole deadline
        deadline = time.monotonic() + 90
        while True:
            rows = outbox.rows(engine.records)
            untried = [r for r in rows if r["status"] != "dropped" and r["attempts"] < 1]
            if time.monotonic() > deadline or not untried and (
                    tarpit.connections >= 2 and len(failing.posts) >= 3):
                break
            time.sleep(0.05)
    finally:
        assert poller.stop(timeout=30)
        tarpit.close()
        failing.close()
    baseline = max(without)
    print(f"poll→awaiting without webhooks {[round(s, 2) for s in without]} s, "
          f"with a tarpit and a 500 {[round(s, 2) for s in with_hooks]} s; "
          f"tarpit connections {tarpit.connections}, 500 posts {len(failing.posts)}")
    # the same work, the same speed: within 3x of the run without webhooks (plus scheduling slack),
    # where a poll waiting on the tarpit would take its whole drip (minutes)
    assert max(with_hooks) <= 3 * baseline + 1.5, (without, with_hooks)
    assert tarpit.connections >= 2 and len(failing.posts) >= 3  # retried, with a short backoff here
    errors = {r["target_host"]: r["last_error"] for r in rows if r["last_error"]}
    assert any("no answer within 1.5 s" in e for e in errors.values()), errors
    assert any("HTTP 500" in e for e in errors.values()), errors
    assert not any(r["status"] == "sent" for r in rows)
    assert all(r["attempts"] >= 1 for r in rows if r["status"] != "dropped")


def test_a_post_to_a_tarpit_ends_at_its_deadline_not_at_its_last_byte(engine, monkeypatch):
    tarpit = Tarpit(pace=0.2)
    monkeypatch.setenv("INCIDENTIQ_NOTIFY_URLS", tarpit.url)
    try:
        row = {"payload": {"text": "hi"}, "idempotency_key": "k1"}
        (target,) = targets()
        started = time.monotonic()
        error = sender._post(target, row, timeout=5.0, deadline=1.0)
        took = time.monotonic() - started
    finally:
        tarpit.close()
    # every read gets its byte well within 5 s, so only the deadline can end it
    assert error and "no answer within 1 s" in error and target.url not in error
    assert took < 3.0, took


def test_log_text_cannot_ping_or_link_in_slack_or_teams():
    incident = {"incident_id": "INC-1", "severity": "critical", "service": "pos <!channel>",
                "title": "boom <!here> <https://evil.example|click> [login](https://evil.example) *bold* a&b"}
    slack = text_of("critical", incident, {"due": "soon"}, "slack")
    for markup in ("<!channel>", "<!here>", "<https://evil.example|click>"):
        assert markup not in slack
    assert "&lt;!channel&gt;" in slack and "a&amp;b" in slack and "<" not in slack and ">" not in slack
    teams = text_of("escalation", incident, {"due": "soon", "assignee": "[x](https://evil.example)"}, "teams")
    assert "[login](https://evil.example)" not in teams and "\\[login\\]\\(https://evil.example\\)" in teams
    assert "\\[x\\]\\(https://evil.example\\)" in teams and "\\*bold\\*" in teams
    assert "<" not in teams and ">" not in teams
    assert flavour_of("acme.webhook.office.com") == "teams" and flavour_of("hooks.slack.com") == "slack"


def test_each_target_gets_the_escaping_of_its_own_markup():
    from pipeline.notifications.messages import rows_for

    slack, teams = targets("https://hooks.slack.com/services/T/B/S,https://acme.webhook.office.com/webhookb2/x")
    rows = rows_for("critical", incident={"incident_id": "INC-1", "severity": "critical", "service": "pos",
                                          "title": "see [here](https://evil.example)"},
                    event_key="e1", facts={"due": "soon"}, targets=[slack, teams])
    by_host = {r["target_host"]: r["payload"]["text"] for r in rows}
    assert "[here](https://evil.example)" in by_host["hooks.slack.com"]  # Slack shows it as text
    assert "\\[here\\]\\(https://evil.example\\)" in by_host["acme.webhook.office.com"]
