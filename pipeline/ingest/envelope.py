"""A structured envelope's message read as the line its program wrote (CONTRACT §1).

Collectors (Kubernetes, Docker, journald, Vector, fluent-bit) wrap each line a program writes in a
record of their own, JSON or logfmt: their time, a stream or level, the service or pod, and the
program's line under `message` (`log`, `MESSAGE`, `msg`). That line keeps its own header: a time,
a level, a pid or thread, a logger, then the text, which may itself be logfmt or JSON. When the
message opens with a header a reader knows (a known format, or a layout learnt from the other
messages of the source: `SourceParser.envelope`, detected from the sample's messages as a file of
them alone would be; a source none of whose sample's messages a header opens has none), it is read:

- the message becomes the inner text; an inner `err`/`error`/`exception` pair's text follows it
  (`deliver failed: dial tcp …: connection refused`, as Go wraps an error), the pair kept too;
- the inner level is the record's when the envelope writes none, or only a stream (`stdout`);
- the envelope's time stays the record's; the inner one is kept as `fields.message_time`
  (it is the record's only when the envelope has none);
- the envelope's service stays; an inner logger or tag is `fields.logger` (a class name is no
  name a caller gives the service), the service only when the envelope names none;
- the inner pairs (logfmt, JSON, a header's pid and thread) become fields, the envelope's own
  winning a clash; the format that read the message is `fields.message_format`.

A message no known header opens (plain text, a text read only by a keyword guess) stays as it is.
"""
from __future__ import annotations

import re
from typing import Callable

from pipeline.ingest.parsed import ParsedRecord

# formats a record is an envelope in: its message may be a program's whole line
ENVELOPES = frozenset(("json", "logfmt"))
# a collector's `level` that names only the stream the line came on, not its severity
_STREAMS = frozenset(("stdout", "stderr"))
# inner pairs that hold the error an inner record reports (Go's `err=`, JSON loggers' `error`)
_ERROR_PAIRS = ("err", "error", "exception")
# what a cheap look says may open a header: a first word holding a digit (a time, a pid), a bracket, a
# pair's `=` or a JSON object's brace, or a level word; a message opening with none is not tried
_MAYBE_HEADED = re.compile(r"\S{0,40}?[\d\[{<(=]|(?i:debug|info|notice|warn|warning|error|err|crit|critical|fatal|"
                           r"severe|trace|panic|alert|emerg)\b")
# the inner record's own bookkeeping, not the program's
_NOT_PAIRS = frozenset(("dialect", "format", "time_raw"))


def _read_header(inner: ParsedRecord) -> bool:
    """Whether the inner reading found a header (a time or a written level) and not a guess."""
    if inner.format == "text" or not inner.message.strip():
        return False
    return inner.time is not None or inner.level is not None


def headed(message: str, parse: Callable[[str], ParsedRecord]) -> bool:
    """Whether a known header opens `message` (read by `parse`)."""
    return bool(_MAYBE_HEADED.match(message.lstrip())) and _read_header(parse(message))


def read_message(record: ParsedRecord, parse: Callable[[str], ParsedRecord]) -> ParsedRecord:
    """`record` (an envelope) with its message read by `parse` when a known header opens it (module
    doc); the record as it is otherwise."""
    message = record.message
    if not message or record.format not in ENVELOPES or not _MAYBE_HEADED.match(message.lstrip()):
        return record
    inner = parse(message)
    if not _read_header(inner):
        return record
    fields = dict(record.fields)
    for key, value in inner.fields.items():
        if key not in _NOT_PAIRS:
            fields.setdefault(key, value)
    fields["message_format"] = inner.format
    text = inner.message.strip()
    error = next((v for v in map(inner.fields.get, _ERROR_PAIRS) if isinstance(v, str) and v.strip()), None)
    if error is not None and error.strip() not in text:
        text = f"{text}: {error.strip()}"
    record.message = text
    if record.level is None or str(record.level).lower() in _STREAMS:
        if record.level is not None:
            fields.setdefault("stream", record.level)
        record.level, record.level_name = inner.level, inner.level_name
    if inner.time is not None:
        if record.time is None:
            record.time = inner.time
        else:
            fields["message_time"] = inner.time.isoformat()
    if inner.service:
        if record.service:
            fields.setdefault("logger", inner.service)
        else:
            record.service = inner.service
    record.host = record.host or inner.host
    record.exception = record.exception or inner.exception
    record.stack = record.stack or inner.stack
    record.trace_id = record.trace_id or inner.trace_id
    record.fields = fields
    return record
