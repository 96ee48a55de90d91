"""The Splunk source against a loopback server speaking Splunk's export endpoint."""
from __future__ import annotations

import json
import threading
import time
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from pipeline.errors import SourceError, UsageError
from pipeline.ingest.events import DeadLetter
from pipeline.operations.metrics import poller_status
from pipeline.unattended.poller import Poller
from pipeline.sources import SourceAuthError
from pipeline.sources.splunk import SplunkSource

TOKEN = "tok-3f9a-very-secret"
T0 = 1_800_000_000  # 2027-01-15T08:00:00Z, the fake "now" of the source's clock


class FakeSplunk:
    """Splunk's /services/search/(v2/)jobs/export: bearer token, time window, JSON lines."""

    def __init__(self, *, v2: bool = True):
        self.token = TOKEN
        self.v2 = v2
        self.events: list[dict] = []  # {"t": epoch, "visible": bool, "result": {...}}
        self.faults: list[str] = []  # applied to the next requests, one each: 500, slow, malformed
        self.requests: list[tuple[str, dict]] = []
        self.served = 0  # results sent, over every request
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode()).items()}
                fake.requests.append((self.path, form))
                if self.path == "/services/search/v2/jobs/export" and not fake.v2:
                    return self._reply(404, [{"messages": [{"type": "ERROR", "text": "Not Found"}]}])
                if self.headers.get("Authorization") != f"Bearer {fake.token}":
                    return self._reply(401, [{"messages": [{"type": "WARN", "text": "call not properly authenticated"}]}])
                fault = fake.faults.pop(0) if fake.faults else None
                if fault == "500":
                    return self._reply(500, [{"messages": [{"type": "ERROR", "text": "Search process crashed"}]}])
                if fault == "slow":
                    time.sleep(1.5)
                lo, hi = float(form["earliest_time"]), float(form["latest_time"])
                # index_earliest/index_latest narrow to what was indexed in the window (`_indextime`)
                ilo, ihi = float(form.get("index_earliest", "-inf")), float(form.get("index_latest", "inf"))
                lines = [{"preview": False, "offset": i, "result": e["result"]}
                         for i, e in enumerate(e for e in fake.events if e["visible"] and lo <= e["t"] < hi
                                               and ilo <= float(e["result"]["_indextime"]) < ihi)]
                fake.served += len(lines)
                if fault == "malformed":
                    lines.insert(min(1, len(lines)), "{this is not json")
                self._reply(200, lines)

            def _reply(self, status, lines):
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                for item in lines:
                    self.wfile.write(((item if isinstance(item, str) else json.dumps(item)) + "\n").encode())

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def add(self, t: float, message: str, *, raw_json: bool = True, visible: bool = True, n: int = 0,
            indexed: float | None = None) -> dict:
        """An event as Splunk returns it: every value a string, plus its bookkeeping fields; Splunk
        indexed it at `indexed` (default a second after its own time)."""
        stamp = datetime.fromtimestamp(t, tz=timezone.utc).isoformat(timespec="milliseconds")
        body = {"time": stamp, "service": "checkout-api", "level": "ERROR", "message": message,
                "exception": "java.net.SocketTimeoutException"}
        result = {"_bkt": "main~42~7D1F", "_cd": f"42:{1000 + len(self.events)}", "_indextime": str(int(indexed if indexed is not None else t + 1)),
                  "_serial": str(n), "_si": ["idx-1", "main"], "_sourcetype": "checkout:json", "_time": stamp,
                  "host": "co-1", "index": "main", "linecount": "1", "source": "/var/log/checkout/app.log",
                  "sourcetype": "checkout:json", "splunk_server": "idx-1"}
        if raw_json:
            result["_raw"] = json.dumps(body)
            result.update({"level": "ERROR", "service": "checkout-api", "message": message})  # KV_MODE=json
        else:
            result["_raw"] = f"{stamp} ERROR [main] {message}"
            result.update({"log_level": "ERROR", "exception": "java.net.SocketTimeoutException"})
        event = {"t": t, "visible": visible, "result": result}
        self.events.append(event)
        return event

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class Clock:
    def __init__(self):
        self.now = float(T0)

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def splunk():
    fake = FakeSplunk()
    yield fake
    fake.close()


@pytest.fixture
def token(monkeypatch):
    monkeypatch.setenv("SPLUNK_TOKEN", TOKEN)
    return TOKEN


def source_for(fake: FakeSplunk, clock: Clock, **kw) -> SplunkSource:
    return SplunkSource(url=fake.url, query="index=main log_level=ERROR", overlap=300, lookback=900,
                        timeout=0.5, clock=clock, **kw)


def by_event_time(fake: FakeSplunk, clock: Clock, **kw) -> SplunkSource:
    """SPLUNK_WINDOW_BY=event: windows of `_time`, each re-reading 300 s of the one before."""
    return source_for(fake, clock, window_by="event", **kw)


def test_results_are_read_with_the_bearer_token_and_mapped_onto_the_event_schema(splunk, token):
    splunk.add(T0 - 100, "Read timed out calling payments after 30000ms")
    splunk.add(T0 - 90, "Read timed out calling payments after 30001ms", raw_json=False)
    batch = source_for(splunk, Clock()).read(None)
    path, form = splunk.requests[-1]
    assert path == "/services/search/v2/jobs/export"
    # by index time (the default): what Splunk indexed from the lookback up to 10 s ago, among event
    # times a day either side of it (what narrows the buckets Splunk searches)
    assert form == {"search": "search index=main log_level=ERROR", "output_mode": "json",
                    "index_earliest": str(T0 - 10 - 900), "index_latest": str(T0 - 10),
                    "earliest_time": str(T0 - 10 - 900 - 86400), "latest_time": str(T0 - 10 + 86400)}
    json_raw, text_raw = batch.items
    assert (json_raw.service, json_raw.host, json_raw.level) == ("checkout-api", "co-1", "ERROR")
    assert json_raw.exception == "java.net.SocketTimeoutException"
    assert json_raw.message == "Read timed out calling payments after 30000ms"
    assert json_raw.time == datetime.fromtimestamp(T0 - 100, tz=timezone.utc)
    assert json_raw.fields == {"source": "/var/log/checkout/app.log"}  # no Splunk bookkeeping
    assert text_raw.service == "checkout:json" and text_raw.level == "ERROR"  # sourcetype, log_level
    assert text_raw.message.endswith("after 30001ms") and text_raw.exception == "java.net.SocketTimeoutException"
    assert json.loads(batch.cursor) == {"latest": T0 - 10, "by": "index"}
    assert batch.lag_seconds == 10  # what was indexed in the last 10 s waits for the next window
    by_event_time(splunk, Clock()).read(None)
    assert splunk.requests[-1][1] == {"search": "search index=main log_level=ERROR", "output_mode": "json",
                                      "earliest_time": str(T0 - 900), "latest_time": str(T0)}


def test_an_event_has_the_same_id_whichever_search_returns_it(splunk, token):
    event = splunk.add(T0 - 100, "Read timed out calling payments after 30000ms")
    first = source_for(splunk, Clock()).read(None).items[0]
    event["result"].update({"_serial": "17", "splunk_server": "idx-2", "_si": ["idx-2", "main"]})
    again = source_for(splunk, Clock()).read(None).items[0]
    assert first.event_id == again.event_id


def test_by_index_time_an_event_indexed_late_is_read_once_and_no_window_is_read_twice(engine, splunk, token):
    """A busy source is not re-read every poll (by event time the overlap re-reads 300 s
    of results a poll: 600,000 at 2,000 lines/s); an event whose own time is an hour old when Splunk
    indexes it (a forwarder that was down) is read by the window it was indexed in."""
    clock = Clock()
    for k in range(20):
        splunk.add(T0 - 200 + k, f"Read timed out calling payments after {30000 + k}ms")
    poller = Poller(engine, source_for(splunk, clock), interval=0.05)
    assert poller.poll_once().counts.events == 20
    late = splunk.add(T0 - 3600, "Read timed out calling payments after 30999ms", indexed=T0 + 5)
    for k in range(10):
        splunk.add(T0 + k, f"Read timed out calling payments after {31000 + k}ms")
    for _ in range(4):
        clock.now += 3
        poller.poll_once()
    windows = [(int(f["index_earliest"]), int(f["index_latest"])) for _, f in splunk.requests]
    assert all(a[1] == b[0] for a, b in zip(windows, windows[1:])), windows  # end to end, no overlap
    assert windows[-1][1] == T0 + 12 - 10
    assert splunk.served == 20 + 1  # each result sent once, when indexed before the window's end (T0 + 2)
    clock.now += 30
    poller.poll_once()
    assert splunk.served == 31 and engine.records.event_count() == 31
    stored = [e.message for i in engine.records.incidents() for e in engine.records.events_of(i["incident_id"])]
    assert late["result"]["message"] in stored  # an hour old when indexed, read all the same


def test_a_cursor_of_event_time_is_read_on_by_index_time_from_its_overlap_once(splunk, token):
    """An upgrade (or SPLUNK_WINDOW_BY changed): the stored cursor is an event time; the first window
    by index time starts the overlap before it (event ids make the re-read free), the next at its end."""
    clock = Clock()
    src = source_for(splunk, clock)
    first = src.read(json.dumps({"latest": T0 - 60}))
    assert splunk.requests[-1][1]["index_earliest"] == str(T0 - 60 - 300)
    assert json.loads(first.cursor) == {"latest": T0 - 10, "by": "index"}
    clock.now += 5
    src.read(first.cursor)
    assert (splunk.requests[-1][1]["index_earliest"], splunk.requests[-1][1]["index_latest"]) == (
        str(T0 - 10), str(T0 - 5))
    with pytest.raises(UsageError, match="SPLUNK_WINDOW_BY"):
        source_for(splunk, clock, window_by="ingest")


def test_by_event_time_a_late_indexed_event_is_caught_by_the_next_overlapping_window(engine, splunk, token):
    clock = Clock()
    splunk.add(T0 - 100, "Read timed out calling payments after 30000ms")
    late = splunk.add(T0 - 50, "Read timed out calling payments after 30002ms", visible=False)
    poller = Poller(engine, by_event_time(splunk, clock), interval=0.05)
    assert poller.poll_once().counts.events == 1
    late["visible"] = True  # indexed after the first window was read
    clock.now += 60
    second = poller.poll_once()
    assert second.counts.events == 1  # the late one; the overlap's re-read is deduplicated
    assert splunk.requests[-1][1]["earliest_time"] == str(T0 - 300)
    assert engine.records.event_count() == 2
    assert [r["event_count"] for r in engine.records.incidents()] == [2]


def test_a_refused_token_is_an_auth_error_in_the_status_and_polling_goes_on(engine, splunk, token, monkeypatch):
    splunk.add(T0 - 100, "Read timed out calling payments after 30000ms")
    monkeypatch.setenv("SPLUNK_TOKEN", "expired-token")
    poller = Poller(engine, source_for(splunk, Clock()), interval=0.05)
    with pytest.raises(SourceAuthError, match="HTTP 401"):
        poller.poll_once()
    status = poller_status(engine.records)[0]
    assert status["state"] == "error" and "HTTP 401" in status["last_error"] and status["last_error_at"]
    monkeypatch.setenv("SPLUNK_TOKEN", TOKEN)  # read at call time: no restart needed
    assert poller.poll_once().counts.events == 1
    status = poller_status(engine.records)[0]
    assert status["state"] == "running" and status["consecutive_errors"] == 0 and status["errors"] == 1
    poller.close()
    for name in ("app.sqlite3", "app.sqlite3-wal"):
        stored = engine.settings.data_dir / name
        assert not stored.exists() or b"tok-3f9a" not in stored.read_bytes()  # the token is never stored


def test_a_missing_token_is_an_auth_error_without_a_request(splunk, monkeypatch):
    monkeypatch.delenv("SPLUNK_TOKEN", raising=False)
    with pytest.raises(SourceAuthError, match="SPLUNK_TOKEN is not set"):
        source_for(splunk, Clock()).read(None)
    assert splunk.requests == []


def test_server_errors_and_timeouts_move_nothing_and_the_next_poll_reads_the_window(engine, splunk, token):
    splunk.add(T0 - 100, "Read timed out calling payments after 30000ms")
    splunk.faults = ["500", "slow"]
    poller = Poller(engine, source_for(splunk, Clock()), interval=0.05)
    with pytest.raises(SourceError, match="HTTP 500.*Search process crashed"):
        poller.poll_once()
    with pytest.raises(SourceError, match="did not answer within 0.5s"):
        poller.poll_once()
    assert engine.records.cursor(poller.cursor_key) is None
    assert poller.poll_once().counts.events == 1
    assert poller_status(engine.records)[0]["errors"] == 2


def test_a_malformed_line_is_a_dead_letter_and_the_other_results_are_stored(engine, splunk, token):
    splunk.add(T0 - 100, "Read timed out calling payments after 30000ms")
    splunk.add(T0 - 90, "Read timed out calling payments after 30001ms")
    splunk.faults = ["malformed"]
    report = Poller(engine, source_for(splunk, Clock()), interval=0.05).poll_once()
    assert (report.counts.events, report.counts.rejected) == (2, 1)
    (dead,) = engine.records.dead_letters()
    assert dead["source"] == "splunk" and dead["raw"] == "{this is not json" and "invalid JSON" in dead["reason"]


def test_a_result_without_a_time_is_a_dead_letter_at_its_splunk_address(splunk, token):
    event = splunk.add(T0 - 100, "Read timed out calling payments after 30000ms")
    del event["result"]["_time"]
    event["result"]["_raw"] = "no timestamp here"
    (dead,) = source_for(splunk, Clock()).read(None).items
    assert isinstance(dead, DeadLetter) and dead.position == "splunk:main~42~7D1F:42:1000"
    assert "_time" in dead.reason


def test_an_older_splunk_without_the_v2_path_is_asked_on_the_v1_path(token):
    fake = FakeSplunk(v2=False)
    try:
        fake.add(T0 - 100, "Read timed out calling payments after 30000ms")
        src = source_for(fake, Clock())
        assert len(src.read(None).items) == 1
        assert len(src.read(None).items) == 1
        assert [p for p, _ in fake.requests] == ["/services/search/v2/jobs/export",
                                                 "/services/search/jobs/export", "/services/search/jobs/export"]
    finally:
        fake.close()


def test_catching_up_after_downtime_reads_in_slices(splunk, token):
    clock = Clock()
    src = by_event_time(splunk, clock, max_window=600)
    clock.now += 3 * 3600  # three hours after the last window ended at T0
    batch = src.read(json.dumps({"latest": T0}))
    assert splunk.requests[-1][1]["earliest_time"] == str(T0 - 300)
    assert batch.more and json.loads(batch.cursor)["latest"] == T0 - 300 + 600
    assert batch.lag_seconds == pytest.approx(3 * 3600 - 300)


def test_the_background_poller_survives_errors_and_records_them(engine, splunk, token):
    splunk.add(T0 - 100, "Read timed out calling payments after 30000ms")
    splunk.faults = ["500", "500", "malformed"]
    poller = Poller(engine, source_for(splunk, Clock()), interval=0.02, max_backoff=0.1)
    poller.start()
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not engine.records.incidents(status="awaiting_approval"):
            time.sleep(0.05)
    finally:
        assert poller.stop(timeout=20)
    status = poller_status(engine.records)[0]
    assert engine.records.incidents(status="awaiting_approval")
    assert status["errors"] == 2 and status["dead_letters"] == 1 and status["state"] == "stopped"
    assert "HTTP 500" in status["last_error"]


def test_a_large_window_is_handed_over_in_bounded_batches_and_its_cursor_moves_with_the_last(engine, splunk, token):
    """At most batch_lines results a read, the rest from memory (one export); each batch
    has a cursor of its own still at the window's start, so a batch that was not stored is read again."""
    for k in range(5):
        splunk.add(T0 - 50 + k, f"Read timed out calling payments after {30000 + k}ms")
    source = by_event_time(splunk, Clock(), batch_lines=2)
    first = source.read(None)
    assert (len(first.items), first.more, first.lines_behind) == (2, True, 3)
    assert json.loads(first.cursor)["latest"] == T0 - 900 + 300  # re-read from the window's start
    second = source.read(first.cursor)
    assert (len(second.items), second.more, second.lines_behind, len(splunk.requests)) == (2, True, 1, 1)
    # the second batch was not stored (the poller read again from the first's cursor): the window is
    # exported again from its start (event ids make the re-read first batch free), nothing skipped
    again = source.read(first.cursor)
    assert [e.event_id for e in again.items] == [e.event_id for e in first.items] and len(splunk.requests) == 2
    second_again = source.read(again.cursor)
    assert [e.event_id for e in second_again.items] == [e.event_id for e in second.items]
    last = source.read(second_again.cursor)
    assert (len(last.items), last.more, last.lines_behind) == (1, False, 0)
    assert json.loads(last.cursor) == {"latest": T0}
    # through the poller: every result stored once, the cursor at the window's end, nothing behind
    poller = Poller(engine, by_event_time(splunk, Clock(), batch_lines=2), interval=0.05)
    report = poller.poll_once()
    assert (report.counts.events, report.lines_behind, report.more) == (5, 0, False)
    assert json.loads(engine.records.cursor("source:splunk")) == {"latest": T0}
    assert poller_status(engine.records)[0]["lines_behind"] == 0
