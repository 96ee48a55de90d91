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

The message is read by the same line reader a plain line is: the known formats and learnt layouts,
and, where none reads it, the plain-text reader's own finders of a written level (`error: …`,
`[WARN] …`, `WARNING:root:…`, a klog letter), never a keyword guess; one message teaches a layout only
where a clock writes its time (`SourceParser.learns_numbers`: a number opening a message may be its
prose). Which messages are tried at all is told by the cheap looks the reader uses for plain lines (a
record's opening, a leading level word, a first word holding a digit or bracket), not by a list of its
own; a reading counts only when it cut a header from the front and no word after it (`_words_kept`).
A reading that cut nothing (`error: disk full`, a level word kept in the text) gives only its level,
where the envelope has none, the message staying as written. A message no header opens (plain text,
one whose opening number or word is prose: `12:30 is when…`, `1710295801 is…`) stays as it is.
"""
from __future__ import annotations

import re
from typing import Callable

from pipeline.ingest.levels import leading_level
from pipeline.ingest.multiline import MAX_TIME_ALONE, looks_like_record_start, time_alone
from pipeline.ingest.parsed import ParsedRecord

# formats a record is an envelope in: its message may be a program's whole line
ENVELOPES = frozenset(("json", "logfmt"))
# a collector's `level` that names only the stream the line came on, not its severity
_STREAMS = frozenset(("stdout", "stderr"))
# inner pairs that hold the error an inner record reports (Go's `err=`, JSON loggers' `error`)
_ERROR_PAIRS = ("err", "error", "exception")
# a first word holding a digit (a time, a pid), a bracket, a pair's `=` or a JSON object's brace
_MARKED_FIRST_WORD = re.compile(r"\S{0,40}?[\d\[{<(=]")
# the inner record's own bookkeeping, not the program's
_NOT_PAIRS = frozenset(("dialect", "format", "time_raw"))


def _may_be_headed(message: str) -> bool:
    """A cheap look, the reader's own: whether a header may open `message`: a line the plain reader
    sees open a record (a time or a level word first: syslog's `Mar 13 02:10:01`, `WARN …`), a level
    word the plain-text reader reads (`error: …`), or a first word holding a digit, a bracket, a pair
    or an object. A message that fails it (prose) is not read further: it cannot lose a word."""
    head = message.lstrip()[:MAX_TIME_ALONE]
    return bool(_MARKED_FIRST_WORD.match(head)) or looks_like_record_start(head) or leading_level(head) is not None


def _read_header(inner: ParsedRecord) -> bool:
    """Whether the inner reading found a header (a time or a written level) and not a guess: a known
    format's or a layout's; of the plain-text reader, a level the line writes (`error: …`, `[WARN]`,
    a klog letter: `level` is set only when written, a keyword guess sets `level_name` alone)."""
    if not inner.message.strip():
        return False
    if inner.format == "text":
        return inner.level is not None
    return inner.time is not None or inner.level is not None


def _first_line(message: str) -> str:
    return " ".join(message.split("\n", 1)[0].split())


def _words_kept(message: str, inner: ParsedRecord) -> bool:
    """Whether the inner reading cut a header from the front of the message's first line and no word
    after it: its message is that line's tail, but for a trailing column the reader keeps apart (a
    console encoder's `{…}` fields, a `(logger)` footer). A time read from the middle of a line would
    cut the words around it (`Started GET "/" … at 2024-03-13 02:10:01 +0000`). A JSON or logfmt
    line's message is its message key's, its other keys kept as pairs."""
    if inner.format in ENVELOPES:
        return True
    first, text = _first_line(message), _first_line(inner.message)
    at = first.rfind(text) if text else -1
    rest = first[at + len(text):].strip() if at >= 0 else None
    if rest is not None and (not rest or rest[0] + rest[-1] in ("{}", "()")):
        return True
    # a stamp alone on the first line takes its message from the next (Oracle's alert log), whole
    below = [line for line in message.split("\n")[1:] if line.strip()]
    return bool(below) and time_alone(first) and _first_line(below[0]) == text


def _header_cut(message: str, inner: ParsedRecord) -> bool:
    """Whether the inner reading took a header off the message (its message is shorter than the first
    line, or is a JSON or logfmt line's message key): a level word that stays in the text is none."""
    return inner.format in ENVELOPES or _first_line(inner.message) != _first_line(message)


def _level_and_time(record: ParsedRecord, inner: ParsedRecord) -> ParsedRecord:
    """`record` with the level its message writes where the envelope writes none (or a stream only),
    and the time where it has none; its message, as written, untouched (`error: disk full`)."""
    taken = False
    if inner.level is not None and (record.level is None or str(record.level).lower() in _STREAMS):
        if record.level is not None:
            record.fields = {**record.fields, "stream": record.fields.get("stream", record.level)}
        record.level, record.level_name, taken = inner.level, inner.level_name, True
    if inner.time is not None and record.time is None:
        record.time, taken = inner.time, True
    if taken:
        record.fields = {**record.fields, "message_format": inner.format}
    return record


def headed(message: str, parse: Callable[[str], ParsedRecord]) -> bool:
    """Whether a known header opens `message` (read by `parse`)."""
    if not _may_be_headed(message):
        return False
    inner = parse(message)
    return _read_header(inner) and _words_kept(message, inner)


def read_message(record: ParsedRecord, parse: Callable[[str], ParsedRecord]) -> ParsedRecord:
    """`record` (an envelope) with its message read by `parse` when a known header opens it (module
    doc); the record as it is otherwise."""
    message = record.message
    if not message or record.format not in ENVELOPES or not _may_be_headed(message):
        return record
    inner = parse(message)
    if not _read_header(inner) or not _words_kept(message, inner):
        return record
    if not _header_cut(message, inner):
        return _level_and_time(record, inner)
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
