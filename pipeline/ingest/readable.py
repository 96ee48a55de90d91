"""A log line in words: a line that is a JSON object's text (one the reader could not take apart:
cut off by the shipper, or with no message key) is read as its message, else as its pairs
`key=value` without the time, level, service, host and trace the event already says
(`status=502 path=/api/points`, not `{"_time": ...}`). Titles, quoted evidence, patterns, hypotheses
and the leader's line all read a line through `readable_line`."""
from __future__ import annotations

import json
import re
from typing import Any

from pipeline.ingest.key_roles import infer


def readable_line(line: str, exception: str | None = None) -> str:
    """A line as a reviewer reads it: a JSON object's text by its words, any other line as it is."""
    record = record_text(line.strip())
    return record_words(record, exception) if record else line


def record_text(line: str) -> dict[str, Any] | None:
    """The scalar pairs of a line that is a JSON object's text, whole or cut off (a cut string value
    is kept as far as it goes, marked "…"); None for any other line."""
    if not line.startswith('{"'):
        return None
    decoder, out, i = json.JSONDecoder(), {}, 1
    while True:
        key = _JSON_KEY.match(line, i)
        if not key:
            break
        name, i = json.loads(key.group(1)), key.end()
        try:
            value, i = decoder.raw_decode(line, i)
        except ValueError:
            cut = _CUT_STRING.match(line, i)
            if cut:  # the line ends inside this value: what it says so far
                out[name] = json.loads(cut.group(1) + '"') + "…" if cut.group(1) != '"' else "…"
            break
        if not isinstance(value, (dict, list)):
            out[name] = value
        comma = _JSON_COMMA.match(line, i)
        if not comma:
            break
        i = comma.end()
    return out or None


_JSON_KEY = re.compile(r'\s*("(?:[^"\\]|\\.)*")\s*:\s*')
_JSON_COMMA = re.compile(r"\s*,")
_CUT_STRING = re.compile(r'("(?:[^"\\]|\\.)*?)\\?$')
_EVENT_ROLES = ("time", "level", "service", "host", "trace_id")


def record_words(record: dict[str, Any], exception: str | None = None) -> str:
    """A JSON record's words: its message (the key the reader's key roles name), else its other
    pairs as `key=value`, leaving out what the event already says (time, level, service, host, trace,
    exception)."""
    roles = infer(record, ("message", *_EVENT_ROLES), None)
    message = record.get(roles["message"]) if "message" in roles else None
    if isinstance(message, str) and message.strip():
        return _LONE_SURROGATE.sub("\ufffd", next((line for line in message.splitlines() if line.strip()), "").strip())
    said = set(roles.values())
    rest = [_LONE_SURROGATE.sub("\ufffd", f"{k}={v}") for k, v in record.items()
            if k not in said and v not in (None, "") and str(v) != (exception or "")]
    return " ".join(rest) or json.dumps(record)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # a JSON escape such as \ud800 decodes to one: no UTF-8 has it
