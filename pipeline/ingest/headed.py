"""Records that span lines, by the layout (issue 34.4): in a `headed` source every record opens with
the header its format or learnt layouts read, and a line without one continues the record before it.

- `headed_share(parser, lines)`: the share of a sample's records (as the default guess joins them: a
  Go panic's dump or a Java trace is one record) whose first line the source's own format reads
  with a time; `formats.SourceParser` calls the source headed from HEADED_SHARE on.
- `opens_record(parser, line)`: whether a line opens a record of a headed source (CONTRACT §1).
- `second_line(record)`: java.util.logging's records (Tomcat <= 7) write the header without a level
  and `LEVEL: message` on their second line: the level and message are taken from there.
- `body_not_stack(record)`: an INFO or DEBUG record's continuation lines without a stack trace in
  them (a statement's tab-indented SQL) are its message's body, not a stack (they open nothing).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Mapping, Protocol

from pipeline.ingest.directives import directive
from pipeline.ingest.levels import normalize_level, prefixed_level
from pipeline.ingest.line_formats import text_formats
from pipeline.ingest.multiline import MultilineJoiner, looks_timed
from pipeline.ingest.parsed import _BRACKET_LEVEL, ParsedRecord, split_first
from pipeline.ingest.timestamps import leading_time



class SourceParser(Protocol):
    """What this module reads of `formats.SourceParser` (typed here: formats imports this module)."""

    format: str | None
    options: Any
    set: Any

HEADED_FORMATS = frozenset(("learned", *text_formats()))
HEADED_SHARE = 0.3
# the second line of a java.util.logging record: `SEVERE: message` under the header
_JUL_LEVEL = re.compile(r"^(SEVERE|WARNING|INFO|CONFIG|FINE|FINER|FINEST|ERROR|WARN|DEBUG|TRACE|FATAL): (.*)")
# a line of an aligned `Key:   value` listing (a record's block of properties: the key, a colon, the
# value padded to a column), whatever its value; a header never pads after a word's colon
# (PostgreSQL's prefix-less `LOG:  msg`, `DETAIL:  ...` are levels and labels of their own records)
# a level word and a logger with its event id, alone on a line (.NET's SimpleConsoleFormatter)
_LEVEL_LOGGER = re.compile(r"^([A-Za-z]{3,8}): ([A-Za-z_][\w.`+<>-]*)\[(\d+)\]$")
_ALIGNED_KEY = re.compile(
r"^([A-Za-z][\w .-]{0,40}):[ \t]{2,}\S")
_LEVEL_LABELS = frozenset(("LOG", "STATEMENT", "DETAIL", "HINT", "CONTEXT", "QUERY", "LOCATION"))
# a CEF or LEEF event's header, `CEF:0|Vendor|Product|…` / `LEEF:2.0|Vendor|…`, opening the line
_EVENT_FORMAT = re.compile(r"(?:CEF:\d{1,2}|LEEF:\d(?:\.\d)?)\|[^|]*\|[^|]*\|")
_EARLY_CLOCK = re.compile(r"(?<!\d)\d{1,2}:\d{2}:\d{2}(?!\d)")
# a line of a stack trace (Java, Python, Go) among a record's continuation lines
_TRACE = re.compile(r"^\s*(?:at \S|File \"|goroutine \d|Traceback \(|Caused by: |\.\.\. \d+ more)", re.M)


def headed_share(parser: SourceParser, lines: list[str], timed: set[str]) -> float:
    """The share of the sample's records whose first line the source's format reads with a time
    (`timed`: the lines its known format did, as detection found)."""
    if parser.format not in HEADED_FORMATS or not lines:
        return 0.0
    records = [r.text.split("\n", 1)[0] for r in MultilineJoiner().join(enumerate(lines))]
    if parser.format == "learned":
        read = sum(1 for first in records if parser.set.read(first) is not None)
    else:
        read = sum(1 for first in records if first in timed)
    return read / len(records) if records else 0.0


def opens_record(parser: SourceParser, line: str, first: str, *, parsers: Mapping[str, Callable[..., ParsedRecord | None]],
                 order: Callable[[str | None], Iterable[str]], learning: bool) -> bool:
    """Whether `line` (`first`: it cleaned of ANSI escapes) opens a record of a headed source: its own
    format or layouts read it, another format reads it with a time, it teaches the layout set one
    (`LayoutSet.learn_line`), it writes a time of day among its first 48 characters, or it is a JSON
    object, a W3C directive, a Go `panic:` or the JVM's `Exception in thread "…"`; any other line
    continues the record before it. `parsers`, `order` and `learning` are the source parser's own
    (pipeline/ingest/formats.py passes them in: this module imports nothing of it)."""
    if looks_timed(line) or (line[:1] == "{" and line.rstrip()[-1:] == "}") or line.startswith(
            ("panic: ", "Exception in thread ")):
        return True  # JSON, a Go panic, the JVM's report of an uncaught exception: records of their own
    if line[:1] in "CL" and _EVENT_FORMAT.match(first) is not None:
        return True  # ArcSight's CEF and IBM's LEEF write one event a line by their own header (`CEF:0|…`)
    if line[:1] == "#" and directive(line) is not None:
        return True  # a W3C directive's shape: a line of its own (`consume_directive`)
    key = _ALIGNED_KEY.match(first)
    if key is not None and normalize_level(key[1]) is None and key[1].upper() not in _LEVEL_LABELS:
        return False  # `Start:      2024/02/16 06:05:19.548`: a property of the block the record prints
    if first[:1] == "[" and _BRACKET_LEVEL.match(first) is not None:
        return True  # a bracketed level word opens a record (CoreDNS's `[INFO] ...` between timed lines)
    if ":" in first[:240] and not first[:1].isspace() and prefixed_level(first) is not None:
        return True  # a level in capitals after a header's columns (`user=[unknown],db=x LOG:  msg`) opens one
    if parser.set.layouts and parser.set.read(first) is not None:
        return True
    for name in order(parser.format):
        try:
            record = parsers[name](first, parser.options)
        except (ValueError, OverflowError):
            continue
        # the source's own format's lines open records; another format's only with a time of theirs
        if record is not None and (name == parser.format or record.time is not None or "time_raw" in record.fields):
            return True
    if learning and parser.set.learn_line(first) is not None:  # (off: the bench's baseline)
        return True
    # a time of day early in the line, or a dated time that opens it in any spelling (the basic
    # ISO 8601 `20200101T181100`): a record of its own, even in a layout nothing here reads
    return _EARLY_CLOCK.search(first, 0, 48) is not None or leading_time(first) is not None


def second_line(record: ParsedRecord) -> None:
    """A header without a level whose next line is `LEVEL: message` takes both from that line."""
    if record.level is not None or not record.stack or record.format in ("json", "logfmt", "cri"):
        return
    second = _JUL_LEVEL.match(record.stack)
    if second is None:
        return
    source, rest = record.message, split_first(record.stack)[1]
    record.level, record.level_name = second.group(1), normalize_level(second.group(1))
    record.message, record.stack = second.group(2).strip(), rest
    record.fields["source"] = source
    record.service = record.service or (source.split()[0] if source else None)


def message_below(record: ParsedRecord) -> None:
    """A first line that is a header alone takes its message from the record's next line: a header
    with no message after it (Oracle's alert log: a stamp on a line of its own; a rule of punctuation
    after the stamp, Erlang/OTP's `=ERROR REPORT==== 12-Mar-2019::10:00:00 ===`), or a level and a
    logger with its event id (.NET's console formatter: `info: Microsoft.Hosting.Lifetime[14]`, the
    message on the next line, padded)."""
    if not record.stack or record.format in ("json", "logfmt", "csv", "w3c"):
        return  # a structured record's other lines are its values, not a message below a header
    if not any(c.isalnum() for c in record.message):
        pass  # a header's rest of punctuation alone (Erlang/OTP's closing `===`) is no message
    elif record.message.strip():
        named = _LEVEL_LOGGER.match(record.message)
        if named is None or normalize_level(named.group(1)) is None:
            return
        record.level, record.level_name = named.group(1), normalize_level(named.group(1))
        record.service = record.service or named.group(2)
        record.fields["logger"], record.fields["event_id"] = named.group(2), named.group(3)
    message, rest = split_first(record.stack.strip("\n"))
    record.message, record.stack = message.strip(), rest


def body_not_stack(record: ParsedRecord) -> None:
    """An INFO/DEBUG record's continuation lines that hold no stack trace join its message."""
    if (record.stack and record.level is not None and record.level_name in ("DEBUG", "INFO")
            and record.exception is None and _TRACE.search(record.stack) is None):
        record.message, record.stack = f"{record.message}\n{record.stack}", None
