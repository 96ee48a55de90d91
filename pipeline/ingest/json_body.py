"""A JSON logger's record written as another layout's message (CONTRACT §1): an app that writes JSON
to syslog (`host app[12]: {"level":"error","msg":"…"}`), a time and a program before the object, or
up to three words that prefix it (stern's `pod container {…}`, a shipper's tag).

The object is read as a JSON line is (`structured.parse_json`: each key's role by its name, else by
its values), and only where it writes a level a scale knows (an event's payload or a request body
has none: it stays the text it is). Then the record takes the object's message, its level where the
header wrote none (a level guessed from the words is no level written), its service where the header
named none, its other keys as fields (the header's own winning a clash), its stack where the record
has none, and the words before the object as `fields.prefix`.
"""
from __future__ import annotations

import re

from pipeline.ingest.parsed import ParsedRecord, ParseOptions
from pipeline.ingest.structured import parse_json

MAX_JSON_BODY = 64_000  # a longer body is left as the text it is
_LEAD = re.compile(r"(?:[^\s{}\"]+ ){0,3}(?=\{)")  # up to three words before the object
_OWN = ("json", "logfmt")  # formats whose message is already a structured record's


def read_json_body(record: ParsedRecord, opts: ParseOptions) -> ParsedRecord:
    """`record` with its message's JSON logger record read into it (module doc), else as it was."""
    message = record.message
    if message[-1:] != "}" or record.format in _OWN or len(message) > MAX_JSON_BODY \
            or not (message[:1] == "{" or " {" in message[:200]):
        return record
    lead = _LEAD.match(message)
    if lead is None:
        return record
    try:
        body = parse_json(message[lead.end():], opts)
    except (ValueError, TypeError, RecursionError):
        return record
    if body is None or body.level is None or body.level_name is None:
        return record
    if record.level is None:
        record.level, record.level_name = body.level, body.level_name
    record.message = body.message or message
    record.service = record.service or body.service
    fields = {k: v for k, v in body.fields.items() if k != "dialect"}
    if lead.end():
        fields["prefix"] = message[:lead.end()].strip()
    record.fields = {**fields, **record.fields}
    if body.stack and not record.stack:
        record.stack = body.stack
    record.exception = record.exception if body.exception is None else body.exception
    record.trace_id = record.trace_id or body.trace_id
    return record
