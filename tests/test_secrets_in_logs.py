"""Issue 39, item 8: secrets quoted in log lines are masked before anything keeps or sends them.

A seeded run: a log whose lines quote a secret of every well-known shape and the configured
SPLUNK_TOKEN (in the message, the host, the stack, an extra JSON field and a line that is
rejected), ingested, analysed to the approval gate, decided, and notified to a local webhook.
Afterwards no secret is in any file of the data dir (raw bytes, WAL included), in what the
stores read back (the zstd context blocks decompressed, the checkpointed state, the dead letters,
the outbox) or in what the webhook received; the reviewer sees `‹redacted›` and the count.
"""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pipeline.errors import MASK
from pipeline.notifications import sender
from pipeline.unattended.file_ingest import ingest_path
from pipeline.redaction import scrub
from pipeline.review.service import ReviewService
from pipeline.store import outbox
from tests.support import stored_bodies, write_jsonl

TOKEN = "splunk-hec-7d1e4c2a-99b0-4f3e-CANARY"  # the configured secret, quoted with no key before it
SECRETS = {  # shape: (the text a log line quotes, the secret in it)
    "authorization header": ("request headers: Authorization: Basic YWxpY2U6aHVudGVyMg==", "YWxpY2U6aHVudGVyMg=="),
    "bearer token": ("upstream 401 for Bearer tok_8f3Kq9xZ2mP7vL1nR4sT6wY", "tok_8f3Kq9xZ2mP7vL1nR4sT6wY"),
    "aws access key": ("using key AKIAZ3K9Q2LMX7WPB4RT for s3", "AKIAZ3K9Q2LMX7WPB4RT"),
    "aws secret key": ("aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzSECRETKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzSECRETKEY"),
    "password in url": ("cannot connect to postgresql://ledger:Pa55w0rdInUrl@db.internal:5432/ledger", "Pa55w0rdInUrl"),
    "password=": ("login failed user=bob password=hunter2-Secret!", "hunter2-Secret!"),
    "github token": ("clone with ghp_R2d2C3poBb8Yoda0Luke1Leia2Han3Solo4Ch", "ghp_R2d2C3poBb8Yoda0Luke1Leia2Han3Solo4Ch"),
    "json web token": ("session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNlY3JldA expired",
                       "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXNlY3JldA"),
    "private key": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx8GpPRIVATEBODY\n-----END RSA PRIVATE KEY-----",
                    "MIIEowIBAAKCAQEAx8GpPRIVATEBODY"),
    "configured token": (f"forwarder rejected {TOKEN} as unknown", TOKEN),
    "json field": ("", "fieldpass-XYZ123"),
}
KNOWN = [secret for _, secret in SECRETS.values()]


class Webhook:
    """A loopback incoming webhook that takes every post."""

    def __init__(self):
        self.bodies: list[str] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                hook.bodies.append(self.rfile.read(int(self.headers["Content-Length"])).decode())
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook():
    hook = Webhook()
    yield hook
    hook.close()


def _lines() -> list[dict]:
    """One ERROR line per shape (each its own incident: its own service), the secret in the message;
    the private key in a stack, the configured token in a host, a password in an extra JSON field."""
    lines = []
    for i, (shape, (text, _)) in enumerate(SECRETS.items()):
        line = {"_time": f"2026-11-28T10:{i:02d}:00Z", "service": f"svc-{i}", "host": "web-1", "level": "ERROR",
                "message": f"request failed: {text}", "exception": "java.lang.IllegalStateException"}
        if shape == "private key":
            line["message"], line["stack"] = "key load failed", f"java.lang.IllegalStateException\n{text}"
        if shape == "json field":
            line["message"], line["password"] = "login failed for bob", "fieldpass-XYZ123"
        lines.append(line)
    lines.append({**lines[0], "_time": "2026-11-28T11:00:00Z", "host": f"edge-{TOKEN}"})
    return lines


def _leaks(text: str) -> list[str]:
    return [s for s in KNOWN if s in text]


def test_a_seeded_run_leaves_no_secret_in_the_data_dir_the_dead_letters_or_chat(engine, webhook, tmp_path,
                                                                                 monkeypatch):
    monkeypatch.setenv("SPLUNK_TOKEN", TOKEN)
    monkeypatch.setenv("INCIDENTIQ_NOTIFY_URLS", webhook.url)
    log = write_jsonl(tmp_path / "secrets.jsonl", _lines())
    with open(log, "ab") as out:  # a line that is rejected (not UTF-8), quoting two secrets
        out.write(f'Authorization: Bearer {SECRETS["bearer token"][1]} {TOKEN} '.encode() + b"\xff\n")
    counts = ingest_path(engine, log)
    assert counts.rejected == 1 and counts.redacted >= len(KNOWN) + 2
    review = ReviewService(engine)
    incidents = [r["incident_id"] for r in engine.records.incidents()]
    assert len(incidents) >= len(SECRETS) - 1
    for incident in incidents:  # a decision is notified with the incident's title
        if engine.records.incident(incident)["status"] == "awaiting_approval":
            review.reject(incident, reviewer="ann", reason="checked")
    assert sender.deliver_due(engine.records).sent >= len(incidents)

    chat = "\n".join(webhook.bodies)
    assert len(webhook.bodies) >= len(incidents) and _leaks(chat) == []
    read_back = json.dumps({
        "events": stored_bodies(engine.settings.data_dir),  # context blocks decompressed by the store
        "dead": engine.records.dead_letters(),
        "outbox": outbox.rows(engine.records),
        "incidents": [review.incident(i) for i in incidents],  # the checkpointed state, evidence included
        "audit": review.audit(),
    }, default=str)
    assert _leaks(read_back) == []
    files = [p for p in Path(engine.settings.data_dir).rglob("*") if p.is_file()]
    assert files
    assert {str(p): _leaks(p.read_bytes().decode("latin-1")) for p in files
            if _leaks(p.read_bytes().decode("latin-1"))} == {}
    # the reviewer sees the mask where each secret was, in the evidence the analysis rests on
    evidence = json.dumps([review.incident(i)["evidence"] for i in incidents], ensure_ascii=False)
    assert evidence.count(MASK) >= len(KNOWN) - 1


@pytest.mark.parametrize("shape", sorted(SECRETS))
def test_each_shape_is_masked_and_counted(shape, monkeypatch):
    monkeypatch.setenv("SPLUNK_TOKEN", TOKEN)
    text, secret = SECRETS[shape]
    if not text:
        pytest.skip("an extra JSON field's secret is masked by its key (the seeded run)")
    clean, found = scrub(f"at 10:00 {text} (retry 3)")
    assert secret not in clean and MASK in clean and found >= 1
    assert clean.startswith("at 10:00 ") and clean.endswith(" (retry 3)")


@pytest.mark.parametrize("line", [
    "GET /health 200 in 3ms", "password authentication failed for user \"ledger\"",
    "HikariPool-1 - Connection is not available, request timed out after 30000ms.",
    "see https://docs.example.com/errors#E42 for details", "token bucket refilled: 40 permits",
])
def test_ordinary_lines_are_left_alone(line):
    assert scrub(line, []) == (line, 0)


def test_a_secret_in_a_part_lines_repeat_is_masked_on_every_line_whatever_was_seen_clean_before(monkeypatch):
    """An event's parts but its message (service, host, its fields) are looked at once while
    remembered clean (redaction._clean): a part holding a secret is never remembered, a clean one
    does not hide a secret in another part or in the message, and forgetting them all changes nothing."""
    from datetime import datetime, timezone

    from pipeline import redaction
    from pipeline.state import LogEvent

    def event(n: int, **kw) -> LogEvent:
        values = dict(event_id=f"e{n}", time=datetime(2026, 11, 28, tzinfo=timezone.utc), service="checkout",
                      host="shop-1", message=f"request {n} served", fields={"thread": "main", "logger": "c.s.Api"})
        values.update(kw)
        return LogEvent(**values)

    monkeypatch.setattr(redaction, "_CLEAN_MAX", 3)  # forgotten every few parts
    seen_clean = [redaction.scrubbed(event(n), [])[1] for n in range(5)]
    assert seen_clean == [0] * 5
    leaky = {"thread": "main", "logger": "c.s.Api", "url": "postgres://app:hunter22@db:5432/shop"}
    for n in range(3):  # the same part on line after line: masked each time
        clean, found = redaction.scrubbed(event(10 + n, fields=leaky), [])
        assert found == 1 and "hunter22" not in json.dumps(clean.fields)
    clean, found = redaction.scrubbed(event(20, message="login with password=hunter22 failed"), [])
    assert found == 1 and "hunter22" not in clean.message  # its other parts were seen clean
    clean, found = redaction.scrubbed(event(21, host="token=abcd1234efgh"), [])
    assert found == 1 and "abcd1234efgh" not in str(clean.host)
    # a configured secret anywhere, in a part remembered clean or not
    clean, found = redaction.scrubbed(event(22, service="checkout-s3cr3tvalue"), ["s3cr3tvalue"])
    assert found == 1 and "s3cr3tvalue" not in clean.service
