"""Notifications go through a durable outbox to real webhooks on loopback: retried with backoff
when the target fails (500 twice, then 200), sent again with the same key after a SIGKILL between
send and ack (at-least-once), and the webhook URL's secret never reaches the records."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pipeline.clock import ManualClock
from pipeline.notifications import sender
from pipeline.unattended import escalation
from pipeline.review.service import ReviewService
from pipeline.store import outbox
from tests.support import BOTH_BACKENDS, FIXTURES, ROOT, by_category, child_env, cli

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
SECRET = "XOXB-secret-path-4242"


class Webhook:
    """A loopback incoming webhook: fails each key's first `fail_first` posts with 500, then 200."""

    def __init__(self, fail_first: int = 0):
        self.fail_first = fail_first
        self.requests: list[dict] = []
        self.on_request = None
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                key = self.headers.get("Idempotency-Key")
                hook.requests.append({"path": self.path, "key": key, "body": body})
                if hook.on_request:
                    hook.on_request()
                seen = sum(1 for r in hook.requests if r["key"] == key)
                self.send_response(500 if seen <= hook.fail_first else 200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/services/T0/B0/{SECRET}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook_engine(engine, monkeypatch):
    from pipeline.unattended.file_ingest import ingest_path

    hooks = []

    def make(fail_first=0, start=T0):
        hook = Webhook(fail_first)
        hooks.append(hook)
        monkeypatch.setenv("INCIDENTIQ_NOTIFY_URLS", hook.url)
        engine.records.clock = ManualClock(start)
        ingest_path(engine, FIXTURES / "small.jsonl")
        return engine, hook

    yield make
    for hook in hooks:
        hook.close()


def _store_bytes(engine) -> bytes:
    path = engine.records_path
    return b"".join(p.read_bytes() for p in (path, path.with_name(path.name + "-wal")) if p.exists())


def test_a_failing_webhook_is_retried_with_backoff_until_it_takes_each_notification_once(webhook_engine, capsys):
    engine, hook = webhook_engine(fail_first=2)
    engine.records.clock.advance(hours=24 * 4)
    done = escalation.run(engine)
    assert done.escalated
    rows = outbox.rows(engine.records)
    assert rows and {r["kind"] for r in rows} >= {"escalation"} and {r["status"] for r in rows} == {"pending"}

    assert sender.deliver_due(engine.records).failed == len(rows)  # 500
    assert sender.deliver_due(engine.records).failed == 0  # nothing due before the backoff
    engine.records.clock.advance(seconds=sender.backoff(1))
    assert sender.deliver_due(engine.records).failed == len(rows)  # 500 again
    engine.records.clock.advance(seconds=sender.backoff(2))
    assert sender.deliver_due(engine.records).sent == len(rows)  # 200
    assert sender.deliver_due(engine.records).sent == 0

    after = outbox.rows(engine.records)
    assert {r["status"] for r in after} == {"sent"} and {r["attempts"] for r in after} == {3}
    for row in after:
        posts = [r for r in hook.requests if r["key"] == row["idempotency_key"]]
        assert len(posts) == 3 and all(f"(ref {row['idempotency_key']})" in p["body"]["text"] for p in posts)
    assert all(r["target_host"] == f"127.0.0.1:{hook.server.server_port}" for r in after)
    assert SECRET.encode() not in _store_bytes(engine)
    code, out, _ = cli(capsys, "notifications", "--json")
    assert code == 0 and SECRET not in out and len(json.loads(out)) == len(after)


def test_a_decision_is_notified_from_the_transaction_that_audits_it(webhook_engine):
    engine, hook = webhook_engine()
    inc = by_category(engine, "db_pool_exhausted")
    ReviewService(engine).reject(inc, reviewer="ann", reason="not ours <!channel>")
    (row,) = [r for r in outbox.rows(engine.records, incident_id=inc) if r["kind"] == "decision"]
    assert "reject by ann" in row["payload"]["text"]
    assert sender.deliver_due(engine.records).sent >= 1
    assert [r["body"]["text"] for r in hook.requests if r["key"] == row["idempotency_key"]] == [row["payload"]["text"]]


def test_a_notification_names_the_incident_in_words_not_template_placeholders(webhook_engine):
    engine, hook = webhook_engine()
    inc = by_category(engine, "db_pool_exhausted")  # stored title: an example line's own words
    assert "HikariPool-1 - Connection" in engine.records.incident(inc)["title"]
    ReviewService(engine).reject(inc, reviewer="ann", reason="a duplicate")
    texts = [r["payload"]["text"] for r in outbox.rows(engine.records, incident_id=inc)]
    assert "decision" in {r["kind"] for r in outbox.rows(engine.records, incident_id=inc)}
    for text in texts:
        assert "HikariPool-1 - Connection is not available" in text, text
        assert "&lt;NUM&gt;" not in text and "<NUM>" not in text


def test_log_text_in_a_notification_is_inert(webhook_engine):
    from pipeline.notifications.messages import text_of

    text = text_of("critical", {"incident_id": "INC-1", "severity": "critical", "service": "pos",
                                "title": "boom <!channel> <https://evil|click>"}, {"due": "soon"})
    assert "<!channel>" not in text and "&lt;!channel&gt;" in text


DELIVER = r"""
import pipeline
from pipeline.composition import open_engine
from pipeline.notifications import sender
engine = open_engine(sync_knowledge=False)
sender.deliver_due(engine.records)
print("acked")
"""


@BOTH_BACKENDS
def test_a_sender_killed_between_send_and_ack_sends_again_with_the_same_key(webhook_engine):
    # the child sender reads the system clock: the rows must be due by it
    engine, hook = webhook_engine(start=datetime.now(timezone.utc) - timedelta(hours=1))
    inc = by_category(engine, "db_pool_exhausted")
    ReviewService(engine).reject(inc, reviewer="ann", reason="not ours")
    rows = outbox.rows(engine.records)
    assert len(rows) == 1
    env = {**child_env(engine.settings.data_dir), "INCIDENTIQ_NOTIFY_URLS": hook.url}
    child = subprocess.Popen([sys.executable, "-c", DELIVER], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    killed = threading.Event()

    def kill_sender():  # the post arrived; the sender dies before it can write the ack
        if not killed.is_set():
            os.kill(child.pid, signal.SIGKILL)
            child.wait(timeout=30)
            killed.set()

    hook.on_request = kill_sender
    out, _ = child.communicate(timeout=240)
    assert child.returncode == -signal.SIGKILL and "acked" not in out
    assert [r["status"] for r in outbox.rows(engine.records)] == ["sending"]  # taken, never acked

    hook.on_request = None
    report = sender.deliver_due(engine.records)  # the restarted sender: the dead one's row is due again
    assert report.sent == 1
    assert [r["key"] for r in hook.requests] == [rows[0]["idempotency_key"]] * 2  # at-least-once: one repeat
    assert {r["status"] for r in outbox.rows(engine.records)} == {"sent"}
    assert sender.deliver_due(engine.records).sent == 0


def test_prune_deletes_notifications_delivered_longer_ago_than_the_retention_and_keeps_the_rest(webhook_engine):
    from pipeline.unattended import retention

    engine, hook = webhook_engine()
    engine.records.clock.advance(hours=24 * 4)
    escalation.run(engine)
    delivered = {r["id"] for r in outbox.rows(engine.records)}
    assert delivered and sender.deliver_due(engine.records).sent == len(delivered)
    with engine.records.transaction() as conn:  # one that never got through
        outbox.enqueue(conn, rows=[{"key": "undelivered", "kind": "escalation", "target_id": "t",
                                    "target_host": "example.invalid", "payload": {"text": "x"}}],
                       now=engine.records.clock.now())
    engine.records.clock.advance(hours=24 * 29)
    retention.prune(engine, days=30)
    assert {r["id"] for r in outbox.rows(engine.records) if r["status"] == "sent"} == delivered  # 29 days: kept
    engine.records.clock.advance(hours=24 * 2)
    retention.prune(engine, days=30)
    assert [(r["idempotency_key"], r["status"]) for r in outbox.rows(engine.records)] == [("undelivered", "pending")]


# Slack's mrkdwn: emphasis, code and strike open after a start, space or punctuation and close before one
_SLACK_MARKUP = re.compile(r"(?:^|[\s\W])([*_~`])[^\s*_~`][^*_~`]*?\1(?=$|[\s\W])|<[!@#]|<https?:")
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def test_a_chat_message_shows_mrkdwn_and_direction_overrides_from_people_and_logs_as_written(webhook_engine):
    """A reviewer's name (people's text) carries every Slack markup, a line break and a right-to-left
    override, a title (log text) the same: the delivered message formats, mentions and links
    nothing, shows each override as `‹U+202E›`, and keeps identifiers such as DEPLOY_ENV as they are."""
    engine, hook = webhook_engine()
    inc = by_category(engine, "db_pool_exhausted")
    markup = "*bold* _it_ ~strike~ `code` ```block``` <https://evil.example|label> <!channel> <@U0123>"
    name = f"m\u202eallory {markup}\n> quoted DEPLOY_ENV is undefined \u200b"
    ReviewService(engine).reject(inc, reviewer=name, reason="not ours")
    (row,) = [r for r in outbox.rows(engine.records, incident_id=inc) if r["kind"] == "decision"]
    assert sender.deliver_due(engine.records).sent >= 1
    (text,) = [r["body"]["text"] for r in hook.requests if r["key"] == row["idempotency_key"]]
    assert not _SLACK_MARKUP.search(text), _SLACK_MARKUP.search(text)
    assert not _INVISIBLE.search(text) and "\n" not in text
    assert "\u2217bold\u2217 \u02cdit\u02cd \u223cstrike\u223c \u02cbcode\u02cb" in text  # the words, as written
    assert "DEPLOY_ENV" in text and "m\u2039U+202E\u203aallory" in text and "\u2039U+200B\u203a" in text
    assert "&lt;!channel&gt;" in text and "&lt;@U0123&gt;" in text

    from pipeline.notifications.messages import text_of
    title = text_of("critical", {"incident_id": "INC-1", "severity": "critical", "service": "pay_*svc*",
                                 "title": f"boom {markup} \u2066x\u2069"}, {"due": "soon"})
    assert not _SLACK_MARKUP.search(title) and not _INVISIBLE.search(title), title
