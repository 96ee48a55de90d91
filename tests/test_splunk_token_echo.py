"""A Splunk endpoint that echoes our Authorization header in its error body never
gets the token into the data dir, stderr, the poller status or the health light."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pipeline.errors import MASK, SourceError
from pipeline.unattended.poller import Poller
from pipeline.services import OperationsService
from pipeline.sources.splunk import SplunkSource

TOKEN = "tok-echoed-4c1d-9f7e-secret"
ROOT = Path(__file__).resolve().parent.parent


class EchoingSplunk:
    """Answers every export with 401 (or 500, or a result line) quoting the request's headers."""

    def __init__(self, mode: str):
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                auth = self.headers.get("Authorization", "")
                if mode == "result":
                    body = json.dumps({"preview": False, "result": {"_raw": "{not json " + auth, "_cd": "1:1"}})
                    body += "\n" + json.dumps({"weird": auth}) + "\n"
                    status = 200
                else:
                    status = 401 if mode == "401" else 500
                    body = (f"Unauthorized: you sent '{auth}' (b64 {base64.b64encode(auth[7:].encode()).decode()})"
                            if mode != "json" else
                            json.dumps({"messages": [{"type": "ERROR", "text": f"bad header {auth}"}]}))
                self.send_response(status)
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()


def leaks(text: str | bytes) -> bool:
    data = text.encode() if isinstance(text, str) else text
    return any(form.encode() in data for form in (TOKEN, base64.b64encode(TOKEN.encode()).decode(), TOKEN[4:20]))


def every_byte(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


@pytest.mark.parametrize("mode", ["401", "500", "json", "result"])
def test_an_echoed_token_stays_out_of_records_status_and_errors(engine, mode, monkeypatch):
    monkeypatch.setenv("SPLUNK_TOKEN", TOKEN)
    fake = EchoingSplunk(mode)
    try:
        source = SplunkSource(url=fake.url, query="search index=main", timeout=5)
        poller = Poller(engine, source, interval=0.05)
        for _ in range(2):
            try:
                poller.poll_once()
            except SourceError as exc:
                assert not leaks(exc.message) and MASK in exc.message
        poller.close()
        status = OperationsService(engine).poller_status()
        assert status and not leaks(json.dumps(status, default=str))
        if mode == "result":
            assert engine.records.dead_letters() and not leaks(json.dumps(engine.records.dead_letters()))
        engine.records.close()
        assert not leaks(every_byte(Path(engine.settings.data_dir)))
    finally:
        fake.server.shutdown()
        fake.server.server_close()


def test_the_poll_command_never_prints_the_token(data_dir):
    fake = EchoingSplunk("401")
    try:
        env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(data_dir), "INCIDENTIQ_SOURCE": "splunk",
               "SPLUNK_URL": fake.url, "SPLUNK_TOKEN": TOKEN}
        result = subprocess.run([sys.executable, "-m", "pipeline", "poll", "--once"], cwd=ROOT, env=env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 1 and "HTTP 401" in result.stderr
        assert not leaks(result.stderr) and not leaks(result.stdout)
        assert not leaks(every_byte(data_dir))
    finally:
        fake.server.shutdown()
        fake.server.server_close()
