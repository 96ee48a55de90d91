"""Raw log text → ParsedRecord: which format a source writes, and one record parsed with it.

Formats known (names as in `ParsedRecord.format`), each parser in its home:

- ``json`` and ``logfmt`` (`pipeline.ingest.structured`): one object a line, with the field names
  of CONTRACT §1 and of pino, zap, structlog, Serilog/CLEF, ECS, bunyan, GELF and Logstash; and
  ``key=value`` pairs.
- the text layouts, one row each in the table of `pipeline.ingest.line_formats` read by one generic
  parser: ``syslog5424``, ``syslog`` (RFC 3164 and its ISO-timestamp variant), ``apache`` and
  ``nginx`` error logs, ``log4j`` (the layouts log4j, logback and Python's logging print by default
  or by habit), ``glog`` and ``golog`` (Go's klog and standard log), ``bracket-time`` (Windows
  proxy tools), ``logcat`` (Android's threadtime).
- ``custom``: a regex with named groups time/level/message/service/host, given as `pattern`.
- ``learned``: a layout learnt from the source's first lines (`pipeline.ingest.layout`).
- ``text``: anything else that is text: the line is the message, the level a keyword guess.

Per source, `SourceParser.detect` samples the first lines and picks the format that parses
most of them; `parse` then tries that format first and falls back, line by line, to the others
and finally to ``text``. Only what is not text is refused (`decode_line`): NUL bytes, bytes that
are not UTF-8, or control characters that say binary; the refusal is an `InvalidEvent` with a
one-line reason, as `pipeline.events` turns into a dead letter.

Times are read by the rules of `pipeline.ingest.timestamps` (the source's `timezone` for times
without an offset, `year` for times without one); every time returned is aware, in UTC.

A record may be several lines (a multiline joiner's output): the first line is parsed, the
rest is kept as the record's `stack`, and an exception type found there fills `exception`.
"""
from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, tzinfo
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator

from pipeline.errors import InvalidEvent
from pipeline.ingest import key_roles
from pipeline.ingest.cri import parse_cri
from pipeline.ingest.cri import texts as cri_texts
from pipeline.ingest.csv_rows import CsvColumns, rows
from pipeline.ingest.directives import Columns, directive
from pipeline.ingest.documents import one_line_element, parse_document
from pipeline.ingest import date_order, envelope
from pipeline.ingest.layout_set import LayoutSet, learned_record, parse_learned
from pipeline.ingest.headed import HEADED_SHARE, body_not_stack, headed_share, message_below, opens_record, second_line

from pipeline.ingest.line_formats import text_formats
from pipeline.ingest.levels import normalize_level
from pipeline.ingest.companion_lines import label_counts
from pipeline.ingest.multiline import looks_timed, opens_with_stamp
from pipeline.ingest import named_blocks, prefixed
from pipeline.ingest.prefixed import Prefixes
from pipeline.ingest.parsed import ParsedRecord, ParseOptions, exception_in, split_first, text_record
from pipeline.ingest.structured import parse_json, parse_logfmt
from pipeline.ingest.timestamps import CLOCK, leading_time, parse_time, read_any_time


__all__ = ["FORMATS", "LEARN_LINES", "PARSERS", "ParseOptions", "ParsedRecord", "SourceParser", "check_text",
           "parse_learned",
           "decode_line", "exception_in", "parse_lines", "parse_record", "parse_time"]

SAMPLE_LINES = 50
LEARN_LINES = 200  # a layout is learnt from up to this many first lines
_CONTROL = re.compile(r"[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


# -- refusing what is not text -------------------------------------------------------------

def decode_line(raw: bytes, *, max_bytes: int | None = None) -> str:
    """Bytes of one line or record → text; InvalidEvent with a one-line reason if not text."""
    if max_bytes is not None and len(raw) > max_bytes:
        raise InvalidEvent(f"line of {len(raw)} bytes exceeds the limit of {max_bytes}")
    if b"\x00" in raw:
        raise InvalidEvent("contains NUL bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidEvent(f"invalid UTF-8 at byte {error.start}") from None
    check_text(text)
    return text.removeprefix("\ufeff")


def check_text(text: str) -> None:
    """InvalidEvent when a decoded line is binary rather than text (NULs, control bytes)."""
    if "\x00" in text:
        raise InvalidEvent("contains NUL bytes")
    if _CONTROL.search(text) is None:
        return  # the common case: no control character at all
    controls = len(_CONTROL.findall(text))
    if controls > max(2, len(text) // 20):
        raise InvalidEvent(f"binary data: {controls} control characters in {len(text)}")


def parse_custom(text: str, opts: ParseOptions) -> ParsedRecord | None:
    if opts.pattern is None:
        return None
    first, rest = split_first(text)
    m = opts.pattern.match(first)
    if not m:
        return None
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    time = None
    if "time" in groups:
        time = parse_time(groups["time"], opts)
        if time is None:
            time = read_any_time(groups["time"], tz=opts.timezone, year=opts.year, now=opts.now)
        if time is None:
            return None
    named = {"time", "level", "message", "service", "host"}
    # a `component` group names the service when there is no `service` group (as a learnt layout's does)
    return text_record("custom", groups.get("message", ""), rest, time=time, level=groups.get("level"),
                        service=groups.get("service") or groups.get("component"), host=groups.get("host"),
                        fields={k: v for k, v in groups.items() if k not in named})


def parse_text(text: str, opts: ParseOptions) -> ParsedRecord:
    """The last resort: the line is the message; the level is a keyword guess."""
    first, rest = split_first(text)
    record = text_record("text", first, rest)
    record.time = key_roles.time_in_pairs(text, opts)  # `SET timestamp=1493370459;`, `# Time: 2017-...`
    return record


# Order: most specific first; it breaks ties in detection and orders the line-by-line fallback.
PARSERS: dict[str, Callable[[str, ParseOptions], ParsedRecord | None]] = {
    "custom": parse_custom,
    "json": parse_json,
    "cri": parse_cri,  # before the text layouts: a CRI line's `stdout` is no syslog host
    **text_formats(),  # the table of text layouts (pipeline/ingest/line_formats.py)
    "logfmt": parse_logfmt,
}
FORMATS: tuple[str, ...] = tuple(PARSERS) + ("learned", "text")
# A known format that reads less than this share of a source's sample gives way to a learnt layout
# (`pipeline.ingest.layout`) that reads more.
FAST_PATH_SHARE = 0.9
# a block layout's header line, `# Key: value` (`# User@Host: ...`, `# Query_time: ...`)
_BLOCK_KEY = re.compile(r"^# ([A-Za-z][\w@.-]*):(?:\s|$)")
BLOCK_SHARE = 0.15  # the share of a sample's lines that are block header lines in a block layout
_FOOTER = re.compile(r" \(((?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*)\)$")
# a logger without a package (`Remoting`, Akka's; `main`): a name right before the message's ": "
_BARE_LOGGER = re.compile(r"^([A-Za-z_$][\w$]*(?:\[[^\]]*\])?): (?=\S)")


def _level_led(message: str) -> bool:
    """Whether a message's first three columns hold a level word or initial as a header writes one:
    first, decorated or upper-case (`| INFO  | comp | msg`, `comp.Handler <E> msg`): then the known
    format read only the start of a longer header."""
    for n, token in enumerate(message[:80].split()[:3]):
        bare = token.strip("[]()<>|:-")
        if bare.isalpha() and (n == 0 or token != bare or bare.isupper()) and normalize_level(bare) is not None:
            return True
    return False


def _levels_read(layout: Any, lines: list[str]) -> int:
    """How many of `lines` `layout` reads a level word from (its level column's value)."""
    from pipeline.ingest.layout import column_value_is_level

    group = layout.names["level"]
    return sum(1 for m in map(layout.match, lines) if m is not None and m.group(group)
               and column_value_is_level(m.group(group)))


def _clean(text: str) -> str:
    if "\x1b" in text:  # an ANSI escape opens with ESC
        text = _ANSI.sub("", text)
    return text.removeprefix("\ufeff")


class SourceParser:
    """Parses one source's records: detects its format from a sample, then parses each record.

    `format` fixes the format instead of detecting it. Records are str (decoded, see
    `decode_line`); a record may hold continuation lines (see the module doc).
    """

    def __init__(self, *, format: str | None = None, timezone: str | tzinfo | None = None,
                 year: int | None = None, pattern: str | re.Pattern[str] | None = None,
                 now: datetime | None = None):
        if format is not None and format not in FORMATS:
            raise ValueError(f"unknown log format {format!r}; known: {', '.join(FORMATS)}")
        self.options = ParseOptions.make(timezone_name=timezone, year=year, pattern=pattern, now=now)
        self.format = format
        self.layout: Any = None  # a learnt layout (`pipeline.ingest.layout.Layout`) when format is "learned"
        self.share = 0.0  # the share of the detection sample the chosen format read
        self.footer = False  # whether the source's lines end with a `(logger)` column
        self.logger_column = False  # whether (nearly) every line names its logger before the message
        self.sample_size = 0
        self.columns: Columns | None = None  # the columns a W3C `#Fields:` directive named (format "w3c")
        self.block_key: str | None = None  # the `# Key:` line that opens each record of a block layout
        self.named_blocks = False  # records as numbered blocks of `Key: value` lines (pipeline/ingest/named_blocks.py)
        self.csv: CsvColumns | None = None  # a CSV source's columns (format "csv")
        # the learnt layouts each line is tried with (pipeline/ingest/layout_set.py): the file's own
        # (`layout`, first), the others its sample showed and those its later lines taught
        self.set = LayoutSet()
        # every record opens with a header this source's layouts or formats read: a line without one
        # continues the record before it (`starts_record`)
        self.headed = False
        # a file of several containers' prefixed lines (`api-1  | ...`, `[pod/p/c] ...`): each
        # container's lines read by their own parser (pipeline/ingest/prefixed.py)
        self.prefixes: Prefixes | None = None
        # ... mixed with another writer's own lines (fewer than prefixed.SHARE carry a prefix): those lines'
        # parser, detected from them alone
        self.rest: SourceParser | None = None
        # a CRI source's containers' own text (`<time> stdout F <text>`): read by a parser detected
        # from those texts, as a file of that text alone would be
        self.inner: SourceParser | None = None
        # a JSON or logfmt source's messages, each a program's whole line with its own header (a
        # collector's envelope): read by a parser detected from the sample's messages (ingest/envelope.py)
        self.envelope: SourceParser | None = None
        self.reads_envelopes = True  # False for the parser of messages itself: one envelope deep
        # whether a line no layout or format reads teaches the set a layout from an epoch number alone (a
        # file's line); an envelope's message only from a time written with a clock (`hh:mm`): one
        # program's line among many, a number opening it may be its prose (a count, `1710295801 is…`)
        self.learns_numbers = True
        self.label_counts: dict[str, list[int]] = {}  # its level slot's words (ingest/companion_lines.py)

    def detect(self, sample: Iterable[str], *, limit: int = SAMPLE_LINES) -> str:
        """Pick the format that parses most of the first `limit` non-blank records; remember it."""
        lines, more = [], []
        for line in sample:
            if line.strip():
                (lines if len(lines) < limit else more).append(_clean(line))
                if len(lines) + len(more) >= max(limit, LEARN_LINES):
                    break
        order = date_order.sample_order(lines + more)
        dashed = date_order.sample_order(lines + more, "-")
        self.label_counts = label_counts(lines + more)  # which slot words open records (companion lines)
        if order != self.options.date_order or dashed != self.options.dash_order:
            # the order of the sample's slashed dates (`23/11/26`: day first), for every date it reads;
            # and of its dashed ones (`02-07-2025`), each apart: a writer may use both in two orders
            self.options = replace(self.options, date_order=order, dash_order=dashed)
        if self._learn_columns(lines):
            return "w3c"
        if named_blocks.learn(lines):
            self.format, self.named_blocks, self.headed = "text", True, True
            self.share, self.sample_size = 1.0, len(lines)
            return self.format
        if prefixed.share(lines) >= prefixed.SHARE:
            self.format, self.share, self.sample_size = "prefixed", prefixed.share(lines), len(lines)
            self.prefixes = Prefixes(lines + more, self._container_parser)
            return self.format
        if prefixed.mixed(lines):
            self.format, self.share, self.sample_size = "prefixed", prefixed.share(lines), len(lines)
            self.prefixes = Prefixes(lines + more, self._container_parser)
            self.rest = self._container_parser([line for line in lines + more if prefixed.split(line) is None])
            return self.format
        counts = {name: 0 for name in PARSERS}
        # indented lines continue records: they say nothing of the header (as a learnt layout's share)
        heads = [line for line in lines if not line[:1].isspace()] or lines
        timed: dict[str, set[str]] = {name: set() for name in PARSERS}  # the lines each reads with a time
        levelled = {name: 0 for name in PARSERS}  # the lines each reads a written level from
        level_led = {name: 0 for name in PARSERS}  # its lines without one whose message opens with a level word
        for line in heads:
            for name, parser in PARSERS.items():
                try:
                    record = parser(line, self.options)
                except (ValueError, OverflowError):
                    continue  # a line no parser can read says nothing about the file's format
                if record is not None:
                    counts[name] += 1
                    if record.time is not None:
                        timed[name].add(line)
                    levelled[name] += record.level is not None
                    level_led[name] += record.level is None and _level_led(record.message)
        best = max(PARSERS, key=lambda name: counts[name])  # first in PARSERS wins a tie
        if best == "json" and counts["cri"] >= counts["json"]:
            best = "cri"  # Docker's json-file lines: a container runtime's envelope, read as CRI's
        self.format = best if counts[best] > 0 else "text"
        self.share = counts[best] / len(heads) if heads else 0.0
        self.sample_size = len(lines)
        if lines and self.share < FAST_PATH_SHARE and self.format not in ("json", "logfmt", "custom"):
            # no known format reads (nearly) every line: CSV rows, or this source's own layout
            columns = CsvColumns.learn(lines + more, self.options)
            if columns is not None:
                table = rows(lines + more)
                read = sum(columns.parse(row, self.options) is not None for row in table)
                if read / len(table) > self.share:
                    self.format, self.csv, self.share = "csv", columns, read / len(table)
        # a known format that reads no level from the lines it reads may have read only the first
        # columns of a longer header (Go's `2026/05/03 12:30:01 ` before `| INFO | comp | msg`)
        if self.format in envelope.ENVELOPES and self.reads_envelopes:
            self.envelope = self._message_parser(heads + more)
        if self.format == "cri":
            # the runtime's envelope is fixed: what a level or header there is is in its containers' text
            self.inner = self._container_parser(cri_texts(lines + more))
        levelless = self.format in PARSERS and self.format != "cri" and levelled[self.format] < 0.5 * counts[self.format] \
            and level_led[self.format] >= 0.5 * counts[self.format]
        if lines and (self.share < FAST_PATH_SHARE or levelless) and self.format not in ("json", "logfmt", "custom", "csv"):
            from pipeline.ingest.layout import MIN_SHARE
            from pipeline.ingest.layout_set import learn_set

            layouts = learn_set(lines + more)
            # a layout read from its header lines alone (under MIN_SHARE) only where no known format
            # reads any; over a known format that reads no level, one that reads as much and a level
            # from (nearly) every line that format reads
            levels = levelless and bool(layouts) and "level" in layouts[0].names and layouts[0].share >= self.share \
                and _levels_read(layouts[0], heads) >= 0.9 * self.share * len(heads)
            if levels or layouts and self.share < FAST_PATH_SHARE and layouts[0].share > self.share \
                    and (layouts[0].share >= MIN_SHARE or not self.share):
                self.format, self.layout, self.share = "learned", layouts[0], layouts[0].share
                self.set = LayoutSet(layouts)
        if self.format == "text":
            self._learn_blocks(lines + more)
        self.headed = headed_share(self, lines, timed.get(self.format, set())) >= HEADED_SHARE or (
            # a learnt header that opens the sample heads the lines below it however many they are
            # (`layout.learn`: one Erlang/OTP report and its body)
            self.format == "learned" and self.set.read(next((h for h in heads if h.strip()), "")) is not None)
        if not self.headed and self.format == "text" and not self.set.layouts and self.block_key is None:
            # no one layout reads the sample (its records write their dates in several spellings), yet
            # they open with a dated time: a line without one continues the record before it
            dated = sum(1 for line in heads if looks_timed(line) or leading_time(" ".join(line[:64].split())) is not None)

            self.headed = dated >= 2 and dated >= HEADED_SHARE * len(heads)
        self._learn_footer(lines)
        self._learn_logger_column(lines)
        return self.format

    def _learn_blocks(self, lines: list[str]) -> None:
        """Whether the source writes its records as blocks of `# Key: value` lines and a body (MySQL's
        slow log): then the key its blocks hold most often (the first such in the sample, on a tie)
        opens each record, and every other line continues the record before it."""
        keys = [m.group(1) for m in map(_BLOCK_KEY.match, lines) if m is not None]
        if not keys or len(keys) < BLOCK_SHARE * len(lines):  # an empty sample (a new, empty file) has none
            return
        counts: dict[str, int] = {}
        for key in keys:
            counts[key] = counts.get(key, 0) + 1
        key = max(counts, key=lambda k: counts[k])  # the first of the most frequent
        if counts[key] >= 2:
            self.block_key = key

    def _learn_columns(self, lines: list[str]) -> bool:
        """Whether the sample names its columns in a W3C `#Fields:` directive (then the source is
        read by them: format "w3c", pipeline/ingest/directives.py)."""
        fields = next((d[1] for d in map(directive, lines) if d is not None and d[0] == "Fields"), None)
        columns = Columns.of(fields) if fields is not None else None
        if columns is None:
            return False
        data = [line for line in lines if directive(line) is None]
        read = sum(columns.parse(line, self.options) is not None for line in data)
        opened = next((d[1] for d in map(directive, lines) if d is not None and d[0] == "Date"), None)
        columns = columns.dated(opened) if opened is not None else columns
        self.format, self.columns = "w3c", columns
        self.share, self.sample_size = (read / len(data) if data else 1.0), len(data)
        return True

    def consume_directive(self, text: str) -> bool:
        """Whether `text` is a directive line of this source (a W3C `#Fields:`, `#Date:`...): it is
        taken as configuration (a `#Fields:` names the columns of the lines after it), not a record.
        A source without W3C columns takes only `#Fields:` lines so; its other lines starting with
        `#` stay records."""
        found = directive(text) if text[:1] == "#" else None
        if found is None or "\n" in text.strip():
            return False
        name, value = found
        if name == "Fields":
            columns = Columns.of(value)
            if columns is None:
                return False
            if self.columns is not None and self.columns.opened:
                columns = columns.dated(self.columns.opened)  # its `#Date:` came first
            self.format, self.columns = "w3c", columns
            return True
        if name == "Date" and self.columns is not None:
            self.columns = self.columns.dated(value)  # the day the next lines' clock-only `time` is on
        return self.columns is not None

    def _learn_footer(self, lines: list[str]) -> None:
        """A `(dotted.logger)` that (nearly) every line ends with is a header field written last
        (log4j's `%m (%c)`, as Kafka prints): it is cut from the message and kept as the logger."""
        ends = sum(1 for line in lines if _FOOTER.search(line.split("\n", 1)[0]))
        self.footer = bool(lines) and ends >= FAST_PATH_SHARE * len(lines)

    def _learn_logger_column(self, lines: list[str]) -> None:
        """Whether the source's header has a logger column: (nearly) every line the chosen format
        reads names a logger. Then a line whose logger has no package (`INFO Remoting: Starting
        remoting`, where the format knows a logger by its dots) still has one: the name before its ": "."""
        if self.format != "log4j" or not lines:
            return  # the one known format that tells a logger by its dots (others' loggers are their own columns)
        named = 0
        for line in lines:
            try:
                record = PARSERS[self.format](line, self.options)
            except (ValueError, OverflowError):
                record = None
            named += record is not None and bool(record.fields.get("logger"))
        self.logger_column = named >= FAST_PATH_SHARE * len(lines)

    def use_layout(self, layout: Any) -> None:
        """Read this source with `layout` (one learnt before, or shown and kept per source)."""
        self.format, self.layout = "learned", layout
        self.set = LayoutSet([layout])
        self.headed = True

    def opens_record(self, line: str) -> bool:
        """Whether a line opens a record of this headed source (`pipeline.ingest.headed`)."""
        if looks_timed(line):  # most lines: a timestamp first
            return True
        return opens_record(self, line, _clean(line), parsers=PARSERS, order=_order, learning=FAST_PATH_SHARE >= 0)

    def _container_parser(self, lines: list[str]) -> "SourceParser":
        """A parser for one container's lines of a prefixed file, detected from them."""
        parser = SourceParser()
        parser.options = self.options
        parser.detect(lines)
        return parser

    def _message_parser(self, lines: list[str]) -> "SourceParser | None":
        """A parser for the messages of an envelope source's records, detected from the sample's; None
        when none of those opens with a header (the source's programs write none: each record is read
        as before, at no cost)."""
        own = PARSERS[self.format or ""]
        messages = []
        for line in lines:
            try:
                record = own(line, self.options)
            except (ValueError, OverflowError):
                continue
            if record is not None and record.message.strip():
                messages.append(record.message)
        parser = SourceParser()
        parser.options, parser.reads_envelopes, parser.learns_numbers = self.options, False, False
        parser.detect(messages)
        headed = any(envelope.headed(message, parser.parse) for message in messages)
        return parser if headed else None

    def parse(self, text: str) -> ParsedRecord:
        """One record → ParsedRecord; InvalidEvent only when the text is binary."""
        if self.prefixes is not None:
            check_text(text)
            record = self.prefixes.parse(_clean(text))
            if record is not None:
                return record
            if self.rest is not None:  # a mixed file's line of the other writer's
                return self.rest.parse(text)
        if self.named_blocks:
            check_text(text)
            block = named_blocks.block_record(_clean(text), self.options)
            if block is not None:
                return block
        record = self._parse(text)
        if self.envelope is not None:
            record = envelope.read_message(record, self.envelope.parse)
        if record.stack:
            message_below(record)
        if record.stack and self.headed:
            second_line(record)  # java.util.logging: `LEVEL: message` on the header's next line
            body_not_stack(record)  # an INFO record's SQL is its body, not a stack trace
        if self.block_key is not None and record.stack and record.format == "text":
            # a block's lines after its first are its body (a slow query's statement), not a trace
            record.message, record.stack = f"{record.message}\n{record.stack}", None
        if self.footer and record.format not in ("json", "logfmt"):
            m = _FOOTER.search(record.message)
            if m:
                record.message = record.message[:m.start()].rstrip()
                record.fields.setdefault("logger", m.group(1))
                record.service = record.service or m.group(1)
        if self.logger_column and record.format == self.format and not record.fields.get("logger"):
            m = _BARE_LOGGER.match(record.message)
            if m:
                record.message = record.message[m.end():]
                record.fields["logger"] = m.group(1)
                record.service = record.service or m.group(1)
        return record

    def _parse(self, text: str) -> ParsedRecord:
        check_text(text)
        text = _clean(text)
        if text[:1] in " \t" and opens_with_stamp(text.lstrip(" \t")):
            text = text.lstrip(" \t")  # a header after a tab (multiline: such a line opens a record)


        if text[:1] in ("<", "-") and ("\n" in text or one_line_element(text)):  # an XML element (multiline.py) or a YAML document
            record = parse_document(text, self.options)
            if record is not None:
                return record
        if self.columns is not None:
            record = self.columns.parse(text, self.options)
            if record is not None:
                return record
        if self.csv is not None:
            record = self.csv.parse(text, self.options)
            if record is not None:
                return record
        layout = self.layout if self.format == "learned" else None
        own = PARSERS.get(self.format or "")
        if self.inner is not None:
            record = parse_cri(text, self.options, inner_parse=self.inner.parse)
            if record is not None:
                return record
        if own is not None:  # the source's own known format first: layouts learnt later must not shadow it
            record = own(text, self.options)
            if record is not None:
                return record
        if self.set.layouts:
            first, rest = split_first(text)
            # the layout that fits, its last one first; the next when a looser one cannot read its time
            record = next((r for r in map(lambda found: self._learned(found, rest), self.set.fitting(first))
                           if r is not None), None)
            if record is None and layout is not None:  # its level column holding another word
                record = self._learned((layout, layout.match(first)), rest)
            if record is not None:
                return record
        for name in _others(self.format):
            record = PARSERS[name](text, self.options)
            if record is not None:
                return record
        first, rest = split_first(text)  # a line no layout or format reads: its own layout (off: the baseline)
        learns = FAST_PATH_SHARE >= 0 and (self.learns_numbers or CLOCK.search(first, 0, 64) is not None)
        learnt = self.set.learn_line(first) if learns else None
        record = self._learned(self.set.fit(learnt, first) if learnt is not None else None, rest)


        if record is None and layout is not None:
            record = self._learned((layout, layout.match_loose(first)), rest)
        return record or parse_text(text, self.options)

    def _learned(self, found: tuple[Any, Any] | None, rest: str | None) -> ParsedRecord | None:
        try:
            return None if found is None or found[1] is None else learned_record(*found, rest, self.options)
        except (ValueError, OverflowError):
            return None


@lru_cache(maxsize=None)
def _others(format: str | None) -> tuple[str, ...]:  # the known formats but the source's own
    return tuple(name for name in PARSERS if name != format)


@lru_cache(maxsize=None)
def _order(format: str | None) -> tuple[str, ...]:
    """The formats a record is tried in: the source's first, then the others in PARSERS' order."""
    return (format, *(name for name in PARSERS if name != format)) if format in PARSERS else tuple(PARSERS)


def parse_record(text: str, **options: Any) -> ParsedRecord:
    """One record on its own (format detected from it alone); options as for SourceParser."""
    parser = SourceParser(**options)
    if parser.format is None:
        parser.detect([text], limit=1)
    return parser.parse(text)


def parse_lines(lines: Iterable[str], *, sample: int = SAMPLE_LINES, **options: Any) -> Iterator[ParsedRecord]:
    """Every record of a source, the format detected from its first `sample` records."""
    parser = SourceParser(**options)
    buffered: list[str] = []
    iterator = iter(lines)
    for line in iterator:
        buffered.append(line)
        if len(buffered) >= sample:
            break
    if parser.format is None:
        parser.detect(buffered, limit=sample)
    for line in buffered:
        if line.strip():
            yield parser.parse(line)
    for line in iterator:
        if line.strip():
            yield parser.parse(line)
