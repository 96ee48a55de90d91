"""A log file's bytes → events and dead letters (CONTRACT §1).

Each line is decoded (only what is not text is refused: NUL bytes, invalid UTF-8, binary, or a
line over the size limit, each a dead letter with its position and reason); continuation lines
join the record they belong to (`multiline`); each record is parsed in the format its file
writes (`formats`: detected from the file's first lines, or fixed by INCIDENTIQ_LOG_FORMAT) and
becomes a LogEvent whose id is its position (`identity`). A record that no format knows is still
an event: its text is the message and its level a keyword guess.

A record without a time takes the time of the record before it in the file, also across reads (or,
for the first one read, the file's first time or modification time), and says so in `fields["time_inferred"]`; a time it held
that could not be read is kept as `fields["time_raw"]`.

The last record of a read is held back while its file may still be growing (its continuation
lines may not be written yet): `read_records` then resumes at that record's first line, and
releases it once the read is `final` (ingest) or the file has been quiet for `settle` seconds.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Union

from pipeline import storable
from pipeline.errors import InvalidEvent, SourceError
from pipeline.ingest import event_ids
from pipeline.ingest.code_location import code_location
from pipeline.ingest.cri import StreamJoiner
from pipeline.ingest.prefixed import PrefixJoiner
from pipeline.ingest.events import MAX_YEAR, MIN_YEAR, DeadLetter, _excerpt
from pipeline.ingest.formats import FORMATS, PARSERS, ParsedRecord, SourceParser, decode_line
from pipeline.ingest.key_roles import time_in_pairs
from pipeline.ingest.levels import LEVELS
from pipeline.ingest.multiline import MultilineJoiner, Record, looks_like_record_start
from pipeline.ingest.named_blocks import OPENER
from pipeline.prevalidated import builder
from pipeline.ingest.source_name import service_of_source
from pipeline.state import LogEvent

Item = Union[LogEvent, DeadLetter]
_CHUNK = 64 * 1024
SAMPLE_BYTES = 64 * 1024


@dataclass(frozen=True)
class Parsing:
    """How a source's records are read: INCIDENTIQ_LOG_FORMAT, _LOG_PATTERN and _SOURCE_TZ."""

    format: str | None = None  # None (`auto`): detected per file from its first lines
    pattern: str | None = None
    timezone: str | None = None
    # called with (source, file identity, parser, its first record's line) when a file's format is
    # chosen or its layout learnt (again when the file is replaced): composition.parsing_for keeps
    # its description in the records store (ingest/source_layout.py)
    on_learn: Callable[[str, str, SourceParser, str | None], None] | None = field(default=None, compare=False)

    def __post_init__(self):
        if self.format is not None and self.format not in FORMATS:
            raise ValueError(f"unknown log format {self.format!r}")

    def parser(self, sample: list[str] | None = None) -> SourceParser:
        """A parser for one source; its format detected from `sample` unless fixed."""
        if self.format == "learned":
            from pipeline.ingest.delimited import learn

            parser = SourceParser(timezone=self.timezone, pattern=self.pattern)
            layout = learn(sample or [])
            if layout is None:
                parser.format = "text"
            else:
                parser.use_layout(layout)
                parser.share, parser.sample_size = layout.share, layout.sample_size
            return parser
        parser = SourceParser(format=self.format, timezone=self.timezone, pattern=self.pattern)
        if parser.format is None:
            if self.pattern is not None:
                parser.format = "custom"  # a user's pattern says what the lines are
                lines = [s for s in (sample or []) if s.strip() and not s[:1].isspace()][:200]
                read = 0
                for line in lines:
                    try:
                        read += PARSERS["custom"](line, parser.options) is not None
                    except (ValueError, OverflowError):
                        pass
                parser.share, parser.sample_size = (read / len(lines) if lines else 0.0), len(lines)
            else:
                parser.detect(sample or [])
        return parser


def event_from_record(parsed: ParsedRecord, *, text: str, source: str, position: str, event_id: str,
                      fallback_time: tuple[datetime, str] | None = None) -> LogEvent:
    """A parsed record → LogEvent (InvalidEvent when it cannot be stored as text)."""
    fields = dict(parsed.fields)
    fields["format"] = parsed.format
    if parsed.level is not None and parsed.level_name is None:
        fields["level_raw"] = parsed.level  # kept for the reviewer, as events.normalize does
    elif parsed.level is None and parsed.level_name is not None:
        fields["level_inferred"] = True
    time = parsed.time
    if time is not None and not MIN_YEAR <= time.year <= MAX_YEAR:
        fields.setdefault("time_raw", time.isoformat())  # clock or parser garbage: read as no time
        time = None
    if time is None:
        time, why = fallback_time or (datetime.now(timezone.utc), "read time")
        fields["time_inferred"] = why
    # the first line (or the whole text) only when the parser found no message
    message = parsed.message.strip() or text.split("\n", 1)[0].strip() or text.strip()
    service, host = parsed.service, parsed.host
    # a source location (`foo.go:42`) says where in the code a line was written, never who wrote it
    if service is not None and ":" in service and (location := code_location(service)) is not None:
        fields.setdefault("caller", location)
        service = None
    if host is not None and ":" in host and (location := code_location(host)) is not None:
        fields.setdefault("caller", location)
        host = None
    values: dict[str, Any] = dict(event_id=event_id, time=time, message=message, service=service or service_of_source(source),
                                  host=host, level=parsed.level_name, exception=parsed.exception,
                                  stack=parsed.stack, trace_id=parsed.trace_id, fields=fields,
                                  source=source, position=position)
    if _as_validated(values):
        event = _construct(values)
    else:
        try:
            event = LogEvent(**values)
        except ValueError as exc:
            raise InvalidEvent(f"cannot be stored: {str(exc).splitlines()[0][:120]}") from None
    # nothing reaches the store that its serialisers cannot take (see pipeline/storable.py)
    problem = storable.problem([event.fields, event.message, event.stack, event.exception, event.service, event.host,
                                event.trace_id], max_depth=storable.MAX_DEPTH + 1)
    if problem:
        raise InvalidEvent(problem)
    return event


_TEXT_OR_NONE = (str, type(None))
_LEVELS = frozenset(LEVELS)


def _as_validated(values: dict) -> bool:
    """Whether LogEvent's validation would take these values as they are (each of the exact type
    its field declares: a str, a datetime, a dict, a level's name, or None where allowed) and
    change none of them but `fields`, which it copies (a fresh dict here). Anything else is
    validated as before, and refused as before."""
    return (values["event_id"].__class__ is str and values["time"].__class__ is datetime
            and values["message"].__class__ is str and values["service"].__class__ is str
            and values["fields"].__class__ is dict and values["source"].__class__ is str
            and values["position"].__class__ is str
            and (values["level"] is None or (values["level"].__class__ is str and values["level"] in _LEVELS))
            and values["host"].__class__ in _TEXT_OR_NONE and values["exception"].__class__ in _TEXT_OR_NONE
            and values["stack"].__class__ in _TEXT_OR_NONE and values["trace_id"].__class__ in _TEXT_OR_NONE)


# the LogEvent that `LogEvent(**values)` builds, for values `_as_validated` passed, without
# validating them again: one per line read, and validation was about a tenth of reading one
# (tests/test_events.py compares the two)
_construct = builder(LogEvent)


@dataclass
class FileRead:
    """What one read of a file delivered and where the next read resumes."""

    items: list[Item] = field(default_factory=list)
    offset: int = 0
    capped: bool = False


class LogFile:
    """One log file: its identity, its parser (format detected once) and reads from an offset."""

    def __init__(self, path: Path, *, max_bytes: int, parsing: Parsing | None = None):
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.parsing = parsing or Parsing()
        self._parser: SourceParser | None = None
        self._parser_key: str | None = None
        self._first_time: tuple[datetime, str] | None = None  # the first time a line of the file writes
        self.resume = 0  # where the last scan says the next read starts
        self._time_at: tuple[str, int, Any] | None = None  # (file, offset, the previous record's time there): `_went_on`

    def identity(self) -> str:
        """The file's identity (see pipeline/ingest/event_ids.py)."""
        try:
            with open(self.path, "rb") as f:
                head = f.read(event_ids.HEAD_BYTES)
        except OSError as error:
            raise SourceError(f"cannot read {self.path}: {error.strerror}") from None
        return event_ids.file_identity(head.split(b"\n", 1)[0].removesuffix(b"\r"))

    def parser(self, file_identity: str) -> SourceParser:
        # detected once per file identity: a truncated log may be a new format
        if self._parser is None or self._parser_key != file_identity:
            sample = self._sample()
            self._parser = self.parsing.parser(sample)
            self._parser_key = file_identity
            self._first_time = _first_time(self._parser, sample)
            if self.parsing.on_learn is not None:
                first = next((s for s in sample if s.strip() and not s[:1].isspace()), None)
                self.parsing.on_learn(f"file:{self.path.resolve()}", file_identity, self._parser, first)
        return self._parser

    def _sample(self) -> list[str]:
        try:
            with open(self.path, "rb") as f:
                data = f.read(SAMPLE_BYTES)
        except OSError:
            return []
        lines = data.decode("utf-8", errors="replace").splitlines()
        return lines[:-1] if len(data) == SAMPLE_BYTES else lines  # the last may be cut short

    def read(self, start: int, *, final: bool, settled: bool, budget: int) -> FileRead:
        """Records from byte `start`, at most `budget` items; see the module doc for held-back ones."""
        out = FileRead(offset=start)
        scan = self.scan(start, final=final, settled=settled)
        for item, after in scan:
            out.items.append(item)
            if after is None:
                continue  # no read may stop right after this record (see `_cut_points`)
            out.offset = after
            if len(out.items) >= budget:
                out.capped = True
                scan.close()
                return out
        out.offset = self.resume
        return out

    def scan(self, start: int, *, final: bool, settled: bool) -> Iterator[tuple[Item, int | None]]:
        """(item, offset to resume after it) for each record from byte `start`; once exhausted,
        `resume` is where the next read starts (a held-back record's first line, or the end). The
        offset is None where a read must not stop (CRI streams: a record whose lines reach past
        the next one's first line)."""
        file_id = self.identity()
        parser = self.parser(file_id)
        starts = _starts_record(parser)
        joiner = record_joiner(parser, starts)
        source = str(self.path)
        state: dict = {"last_time": self._time_at[2] if self._time_at and self._time_at[:2] == (file_id, start) else None,
                       "file": file_id}
        self.resume = start
        try:
            file = open(self.path, "rb")
        except OSError as error:
            raise SourceError(f"cannot read {self.path}: {error.strerror}") from None
        with file:
            file.seek(start)
            offset = start
            partial = False
            while True:
                line_start = offset
                head = file.readline(self.max_bytes + 1)
                size, last = len(head), head
                while last and not last.endswith(b"\n") and size > self.max_bytes:
                    last = file.readline(_CHUNK)
                    size += len(last)
                if size == 0:
                    break
                terminated = last.endswith(b"\n")
                if not terminated and not final:
                    partial = True  # still being written: read it whole next time
                    break
                offset = line_start + size
                content_size = size - 1 if terminated else size
                if content_size > self.max_bytes:
                    reason = f"line of {content_size} bytes exceeds the limit of {self.max_bytes}"
                    dead = DeadLetter(source, f"{source}@{line_start}", reason, _excerpt(head, total=content_size))
                else:
                    content = head[:content_size].removesuffix(b"\r")
                    try:
                        text = decode_line(content)
                    except InvalidEvent as error:
                        dead = DeadLetter(source, f"{source}@{line_start}", error.reason, _excerpt(content))
                    else:
                        records = joiner.feed((line_start, content), text)
                        if records:
                            held = joiner.pending_position
                            end = line_start if held is None else min(held[0], line_start)
                            for record, after in (_cut_points(records, end) if len(records) > 1 else
                                                  ((records[0], end if records[0].last_position[0] < end else None),)):
                                if record.text[:1] != "#" or not parser.consume_directive(record.text):
                                    yield self._went_on(self._event(record, parser, file_id, source, state), after, state)
                        continue
                # a refused line ends the record before it: what follows is not its continuation
                for record, after in _cut_points(joiner.flush(), line_start):
                    if not parser.consume_directive(record.text):
                        yield self._went_on(self._event(record, parser, file_id, source, state), after, state)
                joiner = record_joiner(parser, starts)
                yield self._went_on(dead, offset, state)
            pending = joiner.pending_position
            if pending is not None and joiner.pending_can_grow and (partial or not (final or settled)):
                self.resume = pending[0]  # the held-back record is read again, whole, next time
                self._time_at = (file_id, self.resume, state["last_time"])
                return
            for record, after in _cut_points(joiner.flush(), offset):
                if not parser.consume_directive(record.text):
                    yield self._event(record, parser, file_id, source, state), after
            self.resume = offset
            self._time_at = (file_id, offset, state["last_time"])

    def _went_on(self, item: Item, after: int | None, state: dict) -> tuple[Item, int | None]:
        """`item` and `after`, the time a line without one takes where a read stops after it kept (the previous
        record's): the next read from there goes on with it, so where a live read cut the log changes no line's time."""
        if after is not None:
            self._time_at = (state["file"], after, state["last_time"])
        return item, after

    def _event(self, record: Record, parser: SourceParser, file_id: str, source: str, state: dict) -> Item:
        offset, first_line = record.position
        position = f"{source}@{offset}"
        try:
            parsed = parser.parse(record.text)
            event = event_from_record(parsed, text=record.text, source=source, position=position,
                                      event_id=event_ids.file_event_id(file_id, offset, first_line),
                                      fallback_time=state["last_time"] or self._first_time or self._mtime())
        except InvalidEvent as error:
            return DeadLetter(source, position, error.reason, _excerpt(record.text.encode("utf-8", "replace")))
        except (ValueError, OverflowError) as error:
            # a parser's bug on one hostile record must not stop the file: it is that record's dead letter
            reason = f"unreadable record: {type(error).__name__}: {str(error).splitlines()[0][:120] if str(error) else ''}"
            return DeadLetter(source, position, reason, _excerpt(record.text.encode("utf-8", "replace")))
        if "time_inferred" not in event.fields:
            state["last_time"] = (event.time, "previous record")
        if parsed.format == "json":
            # only a store that holds events of older versions asks for it: it costs a second parse
            event._content_line = record.text
        return event

    def _mtime(self) -> tuple[datetime, str] | None:
        try:
            return datetime.fromtimestamp(self.path.stat().st_mtime, tz=timezone.utc), "file modified"
        except OSError:
            return None


def _first_time(parser: SourceParser, sample: list[str]) -> tuple[datetime, str] | None:
    """The first time the file's first lines write: what a record before any timed one takes (the
    file's modification time only when no line has a time)."""
    for line in sample[:200]:
        if not line.strip() or line[:1].isspace():
            continue
        try:
            time = parser.parse(line).time
        except (InvalidEvent, ValueError, OverflowError):
            continue
        if time is not None and MIN_YEAR <= time.year <= MAX_YEAR:
            return time, "first timed line"
    return None


def _cut_points(records: list[Record], end: int) -> Iterator[tuple[Record, int | None]]:
    """Each record with where a read that stops right after it resumes: the next record's first
    line (`end` after the last), so that no line of a record given out is read again and none of a
    record not given out is skipped; None when no offset does both (interleaved streams' records)."""
    reach = -1
    for n, record in enumerate(records):
        following = records[n + 1].position[0] if n + 1 < len(records) else end
        reach = max(reach, record.last_position[0])
        yield record, (following if reach < following else None)


def record_joiner(parser: SourceParser, starts: Callable[[str], bool]) -> MultilineJoiner | StreamJoiner:
    """What joins a source's lines into records: CRI lines by stream (ingest/cri.py), others as one."""
    if parser.format == "cri":
        return StreamJoiner()
    if parser.prefixes is not None:  # several containers' prefixed lines: joined per container
        rest = None if parser.rest is None else record_joiner(parser.rest, _starts_record(parser.rest))
        # a mixed file's other lines joined as their own file's would be (CRI's own streams aside: line by line)
        return PrefixJoiner(parser.prefixes, rest=rest if isinstance(rest, MultilineJoiner) else None)
    return MultilineJoiner(starts_record=starts, headed=parser.block_key is not None or parser.headed or parser.csv is not None,
                           quoted=parser.csv is not None, labels=parser.label_counts)


def _starts_record(parser: SourceParser):
    """A line opens a record when the source's own format parses it (or the default guess says so)."""
    if parser.named_blocks:  # numbered blocks of `Key: value` lines: a block's numbered line opens each
        return lambda line: OPENER.match(line) is not None
    if parser.block_key is not None:  # records of keyed blocks: the block's first key opens each
        opening = f"# {parser.block_key}:"
        return lambda line: line.startswith(opening)
    if parser.columns is not None:  # the columns the last `#Fields:` read so far named
        return lambda line: (looks_like_record_start(line) or line[:1] == "#"
                             or (parser.columns is not None and parser.columns.parse(line, parser.options) is not None))
    if parser.csv is not None:
        # a CSV source's rows open records, and so does a line with a time of its own (a session's
        # banner); any other line continues the row before it (a value printed over lines unquoted)
        options = parser.options
        return lambda line: "," in line or looks_like_record_start(line) or time_in_pairs(line, options) is not None
    if parser.headed and parser.columns is None and parser.csv is None:  # a line without a header continues
        return parser.opens_record
    if parser.format == "learned" and parser.layout is not None:
        layout = parser.layout
        return lambda line: looks_like_record_start(line) or layout.match(line) is not None
    own = PARSERS.get(parser.format or "")
    if own is None:
        return looks_like_record_start
    options = parser.options
    return lambda line: looks_like_record_start(line) or own(line, options) is not None
