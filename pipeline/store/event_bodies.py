"""An event as the store keeps it: the columns of its row (or of its context block's keys) and a
body of what they do not hold, so no value is written twice (issue 22.2: a row's body was the
whole event again, its JSON longer than the log line).

The body holds the time as written only when its offset is not UTC's (the column holds it in UTC),
and stack, trace id and fields only when the event has them. Rows stored before hold the whole
event as body and read the same way (the body's values win).
"""
from __future__ import annotations

import json
from typing import Any

from pipeline.state import LogEvent

EVENT_COLUMNS = "event_id, time, message, service, host, level, exception, source, position, body"
COLUMNS = ("event_id", "message", "service", "host", "level", "exception", "source", "position")
# json.dumps(value, ensure_ascii=False, separators=(",", ":")) with its encoder made once
_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def body_of(event: LogEvent) -> str:
    """The body stored with an event's columns."""
    return _compact(extras_of(event))


def extras_of(event: LogEvent) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if event.time.utcoffset():
        body["time"] = event.time.isoformat()
    if event.stack is not None:
        body["stack"] = event.stack
    if event.trace_id is not None:
        body["trace_id"] = event.trace_id
    if event.fields:
        body["fields"] = event.fields
    return body


def event_of(row: Any) -> LogEvent:
    """The event of a row read with EVENT_COLUMNS (`time` in UTC, the stored text)."""
    values = {k: row[k] for k in COLUMNS}
    values["time"] = row["time"]
    values.update(json.loads(row["body"]))
    return LogEvent.model_validate(values)
