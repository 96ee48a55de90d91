"""`splunk`: Splunk's REST export endpoint, polled in consecutive windows of index time.

By index time (`SPLUNK_WINDOW_BY=index`, the default) each read asks for what Splunk indexed in
`[previous window end, now - SPLUNK_INDEX_DELAY_SECONDS)` (`index_earliest`/`index_latest`), with
the event times searched widened by SPLUNK_LATE_EVENT_SECONDS either side (Splunk picks its
buckets by event time): an event that arrives late is read by the window it was indexed in, and no
window is read twice, however fast the source. By event time (`event`) each read asks for
`[previous window end - overlap, now)` of `_time`: events indexed late are caught by the next read
as long as they show up within the overlap, which is re-read every poll. Event ids by Splunk
address (`_bkt`/`_cd`, pipeline/ingest/event_ids.py) make any re-read ones free. A plain-text
`_raw` is parsed like a file's line (pipeline/ingest/formats.py), and
results of one host and source that continue the one before them (a stack trace indexed one line
per event) join it, within a window. The token is read at call time through
`config.secret` and only ever put in the Authorization header. httpx errors are translated into
SourceError here and nowhere else.
"""
from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Callable

import httpx

from pipeline import config
from pipeline.config import Settings
from pipeline.errors import InvalidEvent, SourceError, UsageError
from pipeline.ingest import event_ids
from pipeline.ingest.events import DeadLetter, normalize
from pipeline.ingest.formats import LEARN_LINES, SourceParser
from pipeline.ingest.timestamps import parse_time
from pipeline.ingest.multiline import MultilineJoiner
from pipeline.sources import Batch, Item, SourceAuthError, masking

WINDOW_BY = ("index", "event")  # SPLUNK_WINDOW_BY: which time a window spans
BATCH_LINES = 100  # results handed to the poller at a time (INCIDENTIQ_POLL_BATCH_LINES)
EXPORT_PATHS = ("/services/search/v2/jobs/export", "/services/search/jobs/export")
SOURCE = "splunk"
EXCERPT_CHARS = 2_000
# Splunk's own bookkeeping fields: some change from one search to the next (_serial,
# splunk_server), and none belong to the event, so they never reach its content id.
_SPLUNK_FIELDS = {"linecount", "punct", "splunk_server", "splunk_server_group", "index", "timestartpos",
                  "timeendpos", "eventtype", "tag", "tag::eventtype"}
_TIME_KEYS = ("_time", "time", "timestamp", "@timestamp")
_SERVICE_KEYS = ("service", "app", "sourcetype")
_MESSAGE_KEYS = ("message", "msg")


class SplunkSource:
    """Polls a Splunk search through /services/search(/v2)/jobs/export."""

    name = SOURCE

    def __init__(self, *, url: str, query: str, overlap: float = 300.0, lookback: float = 900.0,
                 max_window: float = 3600.0, timeout: float = 30.0, verify: bool | str = True,
                 token: Callable[[], str | None] | None = None, clock: Callable[[], float] = time.time,
                 batch_lines: int = BATCH_LINES, window_by: str = "index", index_delay: float = 10.0,
                 late_events: float = 86400.0):
        if not url:
            raise UsageError("SPLUNK_URL is not set (e.g. https://splunk.example.com:8089)")
        if window_by not in WINDOW_BY:
            raise UsageError(f"SPLUNK_WINDOW_BY must be one of {', '.join(WINDOW_BY)}, got {window_by!r}")
        self.window_by = window_by
        self.index_delay = index_delay if window_by == "index" else 0.0
        self.late_events = late_events
        # what each window reads again of the one before: by index time nothing (a window ends
        # index_delay before now, when what was indexed in it is searchable); by event time the overlap
        self.reread = overlap if window_by == "event" else 0.0
        self.url = url.rstrip("/")
        query = query.strip()
        self.query = query if query.startswith(("search ", "|")) else f"search {query}"
        self.overlap = overlap
        self.lookback = lookback
        # a window must reach past what it re-reads, or catching up would never move forward
        self.max_window = max(max_window, 2 * self.reread, 60.0)
        self.timeout = timeout
        self.verify = verify
        self._token = token or (lambda: config.secret("SPLUNK_TOKEN"))
        self.clock = clock
        self._paths = list(EXPORT_PATHS)
        self.batch_lines = max(1, int(batch_lines))
        # a window's results beyond the batch handed out last: (that batch's cursor, the window's own
        # cursor, its end, the results left, the batch's number, whether more windows wait after it)
        self._pending: tuple[str, str, float, list[Item], int, bool] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> "SplunkSource":
        """The source configured by SPLUNK_URL, SPLUNK_QUERY and SPLUNK_OVERLAP_SECONDS."""
        return cls(url=settings.splunk_url or "", query=settings.splunk_query,
                   overlap=float(config.number("SPLUNK_OVERLAP_SECONDS")),
                   lookback=float(config.number("SPLUNK_LOOKBACK_SECONDS")),
                   verify=_verify_setting(config.raw("SPLUNK_VERIFY_TLS")), batch_lines=settings.poll_batch_lines,
                   window_by=config.choice("SPLUNK_WINDOW_BY"),
                   index_delay=float(config.number("SPLUNK_INDEX_DELAY_SECONDS")),
                   late_events=float(config.number("SPLUNK_LATE_EVENT_SECONDS")))

    def read(self, cursor: str | None) -> Batch:
        """Results of the next window, from the last window's end (less the overlap, by event time)
        up to now (less the index delay, by index time), at most `batch_lines` at a time. A window's
        further results are handed out by the next reads from memory, each batch with a cursor of its
        own that still points at the window's start (a crash re-reads the window; event ids keep that
        free of duplicates), the window's end with its last. A read from any other cursor than the
        last batch's (that batch was not stored) exports again. `lines_behind` counts the window's
        results not handed out yet; results Splunk holds after the window are not counted (the export
        API does not say), their age is `lag_seconds`."""
        now = self.clock()
        pending, self._pending = self._pending, None
        if pending is not None and pending[0] == cursor:
            _, window_cursor, end_at, left, part, more = pending
            return self._hand_out(window_cursor, left, now=now, end_at=end_at, more=more,
                                  restart=_load(cursor)[0], part=part + 1)
        previous_end, previous_by = _load(cursor)
        newest = now - self.index_delay
        if previous_end is None:
            start = int(newest - self.lookback)
        else:
            # a cursor of the other time (SPLUNK_WINDOW_BY changed, or written before index windows:
            # those are event times) starts the overlap earlier, once: event ids make the re-read free
            start = int(previous_end - (self.reread if previous_by == self.window_by else max(self.overlap, self.reread)))
        end = int(newest)
        more = False
        if end - start > self.max_window:
            end, more = int(start + self.max_window), True  # catching up after downtime: in slices
        if end <= start:
            # polled again within the second: nothing new to ask for; what waits is what the last window left
            return Batch(lag_seconds=max(0.0, now - (previous_end if previous_end is not None else now)),
                         lines_behind=0)
        secrets = masking.configured_secrets(self._token())
        try:
            items = [masking.redacted_item(item, secrets) for item in self._export(start, end)]
        except SourceError as exc:
            raise masking.redacted_error(exc, secrets) from None
        return self._hand_out(self._cursor(end), items, now=now, end_at=end, more=more,
                              restart=start + self.reread, part=1)

    def _cursor(self, latest: float, **more) -> str:
        """A cursor: the window's end, and which time it is when it is index time (a cursor without
        "by" is event time, as every cursor was before index windows)."""
        return json.dumps({"latest": latest, **({"by": "index"} if self.window_by == "index" else {}), **more})

    def _hand_out(self, window_cursor: str, items: list[Item], *, now: float, end_at: float, more: bool,
                  restart: float | None, part: int) -> Batch:
        """The next batch of a window's results; the window's cursor with its last batch."""
        if len(items) <= self.batch_lines:
            return Batch(items=items, cursor=window_cursor, more=more, lag_seconds=max(0.0, now - end_at),
                         lines_behind=None if more else 0)
        head, rest = items[:self.batch_lines], items[self.batch_lines:]
        # still the window's start (re-read whole after a crash), and a new value so the poller stores it
        cursor = self._cursor(restart if restart is not None else end_at, part=part)
        self._pending = (cursor, window_cursor, end_at, rest, part, more)
        return Batch(items=head, cursor=cursor, more=True, lines_behind=len(rest),
                     lag_seconds=max(0.0, now - (restart if restart is not None else end_at)))

    def _export(self, earliest: int, latest: int) -> list[Item]:
        token = self._token()
        if not token:
            raise SourceAuthError("SPLUNK_TOKEN is not set")
        if self.window_by == "index":
            # the window in index time; the event times around it, so Splunk searches only the buckets
            # that can hold them (an index-time bound alone does not narrow the buckets searched)
            form = {"search": self.query, "output_mode": "json", "index_earliest": str(earliest),
                    "index_latest": str(latest), "earliest_time": str(int(earliest - self.late_events)),
                    "latest_time": str(int(latest + self.late_events))}
        else:
            form = {"search": self.query, "output_mode": "json",
                    "earliest_time": str(earliest), "latest_time": str(latest)}
        timeout = httpx.Timeout(self.timeout, connect=min(self.timeout, 10.0))
        try:
            with httpx.Client(timeout=timeout, verify=self.verify) as client:
                while True:
                    path = self._paths[0]
                    with client.stream("POST", self.url + path, data=form,
                                       headers={"Authorization": f"Bearer {token}"}) as response:
                        if response.status_code == 404 and len(self._paths) > 1:
                            self._paths.pop(0)  # an older Splunk: the v1 export path
                            continue
                        _check(response, self.url + path)
                        return self._results(response.iter_lines())
        except httpx.TimeoutException as exc:
            raise SourceError(f"Splunk did not answer within {self.timeout:g}s ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise SourceError(f"Splunk request failed: {type(exc).__name__}: {exc}") from None

    def _results(self, lines) -> list[Item]:
        items: list[Item] = []
        results: list[tuple[dict, str]] = []
        for line in lines:
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, RecursionError) as exc:
                items.append(_dead(line, f"invalid JSON: {exc}"))
                continue
            if not isinstance(obj, dict):
                items.append(_dead(line, "not a JSON object"))
            elif "result" in obj:
                if obj.get("preview") is True:
                    continue  # partial results of a running search; the final rows follow
                if isinstance(obj["result"], dict):
                    results.append((obj["result"], line))
                else:
                    items.append(_dead(line, "result is not a JSON object"))
            elif isinstance(obj.get("messages"), list):
                errors = [m.get("text", "") for m in obj["messages"] if isinstance(m, dict)
                          and m.get("type") in ("ERROR", "FATAL")]
                if errors:
                    # a failed or partial search (a peer down): do not move past this window
                    raise SourceError(f"Splunk search error: {'; '.join(errors)[:300]}")
            else:
                items.append(_dead(line, "not a Splunk result line (no 'result')"))
        return items + _events(results)


def event_object(result: dict) -> dict:
    """A Splunk result (all values strings) → a log object for `events.normalize`.

    A `_raw` holding JSON is the event itself, with `_time`, `host`, `sourcetype` and `source`
    filling what it lacks; otherwise `_raw` is the message and the extracted fields come along.
    """
    meta = {k: _single(v) for k, v in result.items()
            if k in ("_time", "_raw") or not (k.startswith("_") or k.startswith("date_") or k in _SPLUNK_FIELDS)}
    raw = meta.get("_raw")
    parsed = _json_object(raw) if isinstance(raw, str) else None
    if parsed is None:
        if any(meta.get(k) for k in _MESSAGE_KEYS):
            meta.pop("_raw", None)  # the extracted message is the cleaner text
        return meta
    obj = dict(parsed)
    if not any(obj.get(k) is not None for k in _TIME_KEYS) and "_time" in meta:
        obj["_time"] = meta["_time"]
    if not any(obj.get(k) for k in _SERVICE_KEYS) and meta.get("sourcetype"):
        obj["sourcetype"] = meta["sourcetype"]
    for key in ("host", "source"):
        if obj.get(key) is None and meta.get(key) is not None:
            obj[key] = meta[key]
    return obj


def _events(results: list[tuple[dict, str]]) -> list[Item]:
    """Results → items, oldest first; continuation results join the result they continue."""
    def order(pair):
        result = pair[0]
        offset = str(result.get("_cd", "")).rpartition(":")[2]
        moment = parse_time(result.get("_time"))
        return (moment.timestamp() if moment else 0.0, int(offset) if offset.isdigit() else 0)

    items: list[Item] = []
    joiners: dict[tuple, MultilineJoiner] = {}
    seen: dict[tuple, int] = {}
    # per sourcetype, the format (or the layout learnt) of its first results' `_raw`, as for a file
    samples: dict[str, list[str]] = {}
    for result, _ in results:
        raw = result.get("_raw")
        kind = samples.setdefault(str(result.get("sourcetype", "")), [])
        if isinstance(raw, str) and raw.strip() and len(kind) < LEARN_LINES:
            kind.append(raw.split("\n", 1)[0])
    parsers: dict[str, SourceParser] = {}
    for kind, sample in samples.items():
        parsers[kind] = SourceParser()
        parsers[kind].detect(sample)
    for result, line in sorted(results, key=order):
        raw = result.get("_raw")
        parser = parsers[str(result.get("sourcetype", ""))]
        if not isinstance(raw, str) or not raw.strip():
            items.append(_result_item(result, line, seen, parser))
            continue
        key = (str(result.get("host", "")), str(result.get("source", "")))
        joiner = joiners.setdefault(key, MultilineJoiner())
        for record in joiner.feed((result, line), raw):
            items.append(_joined_item(record, seen, parsers[str(record.position[0].get("sourcetype", ""))]))
    for joiner in joiners.values():
        for record in joiner.flush():
            items.append(_joined_item(record, seen, parsers[str(record.position[0].get("sourcetype", ""))]))
    return items


def _joined_item(record, seen: dict, parser: SourceParser) -> Item:
    result, line = record.position
    if record.lines > 1:
        result = {**result, "_raw": record.text}
    return _result_item(result, line, seen, parser)


def _result_item(result: dict, line: str, seen: dict, parser: SourceParser) -> Item:
    position = _position(result, line)
    raw = result.get("_raw") if isinstance(result.get("_raw"), str) else ""
    key = (raw, str(result.get("_time", "")), str(result.get("_indextime", "")), str(result.get("host", "")),
           str(result.get("source", "")))
    seen[key] = seen.get(key, 0) + 1
    event_id = event_ids.splunk_event_id(
        bucket=result.get("_bkt"), address=result.get("_cd"), raw=key[0], time=key[1], indextime=key[2],
        host=key[3], source=key[4], occurrence=seen[key])
    try:
        event = normalize(event_object(result), source=SOURCE, position=position)
        if raw and _json_object(raw) is None:
            event = _with_text_parsed(event, raw, parser)
    except InvalidEvent as exc:
        return DeadLetter(SOURCE, position, exc.reason, line[:EXCERPT_CHARS])
    content = event.event_id
    event = event.model_copy(update={"event_id": event_id})
    event._content_id = content
    return event


def _with_text_parsed(event, raw: str, parser: SourceParser):
    """A plain-text `_raw` read like a file's line: its level, exception and stack trace."""
    parsed = parser.parse(raw)
    update: dict = {}
    if parsed.format != "text" and parsed.message:
        update["message"] = parsed.message
    if event.level is None and parsed.level_name is not None:
        update["level"] = parsed.level_name
    if event.exception is None and parsed.exception:
        update["exception"] = parsed.exception
    if event.stack is None and parsed.stack:
        update["stack"] = parsed.stack
        update.setdefault("message", parsed.message or raw.split("\n", 1)[0])
    return event.model_copy(update=update) if update else event



def _position(result: dict, line: str) -> str:
    """Where the event lives in Splunk (bucket and address), stable across searches."""
    if result.get("_cd"):
        return f"splunk:{result.get('_bkt', '')}:{result['_cd']}"
    return f"splunk:{hashlib.sha1(line.encode('utf-8')).hexdigest()[:16]}"


def _dead(line: str, reason: str) -> DeadLetter:
    return DeadLetter(SOURCE, f"splunk:{hashlib.sha1(line.encode('utf-8')).hexdigest()[:16]}",
                      reason, line[:EXCERPT_CHARS])


def _single(value):
    # A multivalue field arrives as a list of strings; its first value names the event.
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return value[0]
    return value


def _json_object(text: str) -> dict | None:
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _check(response: httpx.Response, url: str) -> None:
    """Turn an error status into our errors, with Splunk's own message when it sent one."""
    status = response.status_code
    if status < 400:
        return
    response.read()
    detail = _message(response.text)
    if status in (401, 403):
        raise SourceAuthError(f"Splunk refused the token (HTTP {status}) at {url}: check SPLUNK_TOKEN"
                              + (f" ({detail})" if detail else ""))
    if status >= 500:
        raise SourceError(f"Splunk server error (HTTP {status})" + (f": {detail}" if detail else ""))
    raise SourceError(f"Splunk refused the search (HTTP {status})" + (f": {detail}" if detail else ""))


def _message(body: str) -> str:
    try:
        messages = json.loads(body).get("messages") or []
        return "; ".join(str(m.get("text", "")) for m in messages if isinstance(m, dict))[:300]
    except (ValueError, AttributeError):
        return body.strip().splitlines()[0][:300] if body.strip() else ""


def _load(cursor: str | None) -> tuple[float | None, str]:
    """A cursor's window end and its time (`index` or `event`)."""
    if not cursor:
        return None, ""
    try:
        saved = json.loads(cursor)
        return float(saved["latest"]), "index" if saved.get("by") == "index" else "event"
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise SourceError(f"unreadable Splunk cursor ({exc})") from exc


def _verify_setting(text: str) -> bool | str:
    """SPLUNK_VERIFY_TLS: true, false, or a CA bundle path (httpx's `verify`)."""
    lowered = text.strip().lower()
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    if not Path(text).is_file():
        from pipeline.errors import UsageError

        raise UsageError(f"SPLUNK_VERIFY_TLS must be true, false or a CA bundle file, got {text!r}")
    return text
