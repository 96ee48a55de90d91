"""Logs written as CSV rows (PostgreSQL's csvlog, exports of tables): one record a row, a quoted
value spanning lines included.

A source is CSV when its sample's rows (lines joined while a quote is open) that write a comma, all
but a tenth, read as CSV rows of one width of at least six columns, one column of which holds a time
in each, and those rows are at least half the sample (a line without a comma, a session's banner or
a value printed over lines without quotes, is no row: one with a time of its own opens a record read
as text, any other continues the row before it, `reading._starts_record`, and is that record's
continuation lines).
The columns' roles are told by their values over the sample: the first column whose values are
times is the time, the first whose values are level words (`LOG`, `ERROR`, `FATAL`) the level,
and the first after those whose values are mostly text with spaces, varying from row to row, the
message (prose: a column of comma-glued labels, `Chat,Instant Messaging`, is none; without
one, the row's text after its time); every other non-empty value is kept as
`fields.column_<n>` (n from 1). A row of another width whose time column holds a time is a record
of its own too, its text after the time the message. A row's message keeps its lines (a
statement's SQL is the message, not a stack trace).
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable

from pipeline.ingest.levels import normalize_level
from pipeline.ingest.parsed import ParsedRecord, ParseOptions, text_record
from pipeline.ingest.timestamps import at, dateutil_time, micro, parse_time, read_any_time

MIN_COLUMNS = 6
_SHORT_DATE = re.compile(r"\d{1,2}/\d{1,2}/\d{2}")  # `01/13/21`
_LIST = re.compile(r"[^\W\d_],[^\W\d_]")  # words glued by a comma: a list of labels, not prose
SHARE = 0.9


def rows(lines: Iterable[str]) -> list[str]:
    """Lines joined into rows while a double quote is open (CSV's quoted newlines)."""
    out: list[str] = []
    pending: list[str] = []
    open_quote = False
    for line in lines:
        pending.append(line)
        open_quote ^= line.count('"') % 2 == 1
        if not open_quote:
            out.append("\n".join(pending))
            pending = []
    return out


def split(row: str) -> list[str] | None:
    """A row's values, or None when the text is not one CSV row."""
    if "," not in row:
        return None
    try:
        parsed = list(csv.reader(row.splitlines(True) if "\n" in row else [row], strict=True))
    except csv.Error:
        return None
    return parsed[0] if len(parsed) == 1 else None


def _time(value: str, opts: ParseOptions):
    if not value or not value[:1].isdigit() or (value.isdigit() and len(value) < 9):
        return None  # a small number (an id, a count) is no epoch
    return parse_time(value, opts) or read_any_time(value, tz=opts.timezone, year=opts.year, now=opts.now)


_NAME = re.compile(r"[A-Za-z_][\w .()/#-]{0,40}")


def _header(first: list[str], opts: ParseOptions) -> bool:
    """Whether a row names its table's columns: every value a short name, none a time or a number."""
    return all(_NAME.fullmatch(v.strip()) and _time(v, opts) is None for v in first) and len(set(first)) == len(first)


@dataclass(frozen=True)
class CsvColumns:
    """A CSV source's width and which columns hold its time, level and message; with a header row,
    its column names (`names`) and the column of dates a column of clocks is read with (`date`)."""

    width: int
    time: int
    level: int | None
    message: int | None
    names: tuple[str, ...] | None = None
    date: int | None = None
    order: str | None = None  # the strptime spelling of an unnamed date column (`_date_order`)

    @staticmethod
    def learn(lines: list[str], opts: ParseOptions) -> CsvColumns | None:
        """The sample's columns (module doc), or None when the sample is not CSV."""
        from pipeline.ingest.key_roles import _CLOCK_ONLY, _DATE_ONLY, _candidates

        # a line without a comma (a session's banner, a value printed over lines without quotes) is no
        # row of the table: the rows that write one are, and they are most of the sample
        written = [row for row in rows(lines) if "," in row]
        table = [values for values in map(split, written) if values is not None]
        if len(table) < 2 or len(table) < SHARE * len(written) or 2 * len(table) < len(rows(lines)):
            return None
        width = max(set(map(len, table)), key=[len(v) for v in table].count)
        names = tuple(v.strip() for v in table[0]) if len(table[0]) == width and _header(table[0], opts) else None
        table = [values for values in table[1 if names else 0:] if len(values) == width]
        if width < MIN_COLUMNS or len(table) < 2:
            return None

        def column(test, start: int = 0) -> int | None:
            return next((c for c in range(start, width)
                         if sum(bool(test(values[c])) for values in table) >= SHARE * len(table)), None)

        def named(role: str, test) -> int | None:  # a column whose header names the role and whose values fit
            return next((c for c in range(width) if names and any(r == role for r, _ in _candidates(names[c]))
                         and sum(bool(test(values[c])) for values in table) >= SHARE * len(table)), None)

        time = column(lambda v: _time(v, opts))
        date = None

        def levelled(after: int) -> tuple[int | None, int]:  # the level column from `after` on, and where the message may start
            level = column(lambda v: v.isalpha() and normalize_level(v) is not None, after)
            return level, max(after, level + 1 if level is not None else 0)
        if time is None and names:
            # a clock and a date in two named columns (`Date,Time`, as exports write them)
            time = named("time", lambda v: _CLOCK_ONLY.fullmatch(v.strip()))
            date = named("time", lambda v: _DATE_ONLY.fullmatch(v.strip()) or _SHORT_DATE.fullmatch(v.strip()))
            if time is None or date is None:
                return None
            level, after = levelled(max(time, date) + 1)
            return CsvColumns(width, time, level, CsvColumns._message(table, width, after), names, date)
        if time is None:
            # no header: a column of dates followed by one of clocks (`04/19/20,13:11:13`), told by their values
            date = next((c for c in range(width - 1) if _date_order([values[c] for values in table]) is not None
                         and sum(bool(_CLOCK_ONLY.fullmatch(values[c + 1].strip())) for values in table)
                         >= SHARE * len(table)), None)
            if date is None:
                return None
            order = _date_order([values[date] for values in table])
            level, after = levelled(date + 2)
            return CsvColumns(width, date + 1, level, CsvColumns._message(table, width, after), None, date, order)
        level = column(lambda v: v.isalpha() and normalize_level(v) is not None)
        after = max(time, level if level is not None else -1) + 1
        return CsvColumns(width, time, level, CsvColumns._message(table, width, after), names)

    @staticmethod
    def _message(table: list[list[str]], width: int, after: int) -> int | None:
        """The message column: text with spaces that varies from row to row (a constant is a label,
        not a message) and reads as prose (its commas, if any, followed by a blank: `a,b,c` is a list)."""
        return next((c for c in range(after, width)
                     if sum(" " in values[c] for values in table) >= 0.5 * len(table)
                     and len({values[c] for values in table}) >= max(2, 0.3 * len(table))
                     and sum(bool(_LIST.search(values[c])) for values in table) < 0.5 * len(table)), None)

    def parse(self, text: str, opts: ParseOptions) -> ParsedRecord | None:
        """One row → a record; None when it is not a row of this width with a time."""
        values, rest = split(text), None
        if values is None and "\n" in text:  # a row and the lines that continue it (no comma, no time of their own)
            head, *more = rows(text.split("\n"))
            values, rest, text = split(head), "\n".join(more) or None, head
        if values is None or len(values) <= self.time or (self.names and tuple(v.strip() for v in values) == self.names):
            return None  # (the header row is read as the text it is)
        if self.date is not None:
            if len(values) != self.width and (self.order is None or len(values) <= self.time):
                return None
            written = f"{values[self.date].strip()} {values[self.time].strip()}"
            if self.order is not None:
                time = _dated(values[self.date].strip(), values[self.time].strip(), self.order, opts)
            else:
                time = read_any_time(written, tz=opts.timezone) or dateutil_time(written, opts.timezone)
        else:
            time = _time(values[self.time], opts)
        if time is None:
            return None
        if len(values) != self.width:
            # a row of another width (a value with a comma left unquoted, a column more or less): its
            # time is still the row's own; the rest of the row, as written, is its message
            return text_record("csv", _after(text, values[self.time]), rest, time=time)
        taken = {self.time, self.level, self.message, self.date}
        fields = {(self.names[n] if self.names else f"column_{n + 1}"): v
                  for n, v in enumerate(values) if n not in taken and v != ""}
        message = values[self.message] if self.message is not None else _after(text, values[self.time])
        record = text_record("csv", message.split("\n", 1)[0], rest,
                             level=values[self.level] if self.level is not None and values[self.level] else None,
                             time=time, fields=fields)
        record.message = message.strip()  # the whole value: its lines are the message's, not a trace
        return record


# the spellings of a date column without a header, month first before day first (as dateutil reads
# an ambiguous date) and the year's place last: the first that reads (nearly) every value is the column's
_DATE_ORDERS = ("%m/%d/%y", "%d/%m/%y", "%y/%m/%d", "%m/%d/%Y", "%d/%m/%Y", "%Y/%m/%d", "%Y-%m-%d",
                "%d.%m.%Y", "%d.%m.%y", "%m-%d-%Y", "%d-%m-%Y", "%m-%d-%y", "%d-%m-%y")
_DATE_LIKE = re.compile(r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}")
_CLOCK = re.compile(r"(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?")


def _date_order(values: list[str]) -> str | None:
    """The strptime spelling (`_DATE_ORDERS`) every one of `values` but a tenth is a date in; None if none."""
    values = [v.strip() for v in values]
    if sum(bool(_DATE_LIKE.fullmatch(v)) for v in values) < SHARE * len(values):
        return None
    for order in _DATE_ORDERS:
        read = 0
        for v in values:
            try:
                datetime.strptime(v, order)
                read += 1
            except ValueError:
                pass
        if read >= SHARE * len(values):
            return order
    return None


def _dated(day: str, clock: str, order: str, opts: ParseOptions):
    """A date in `order` and a clock (`13:11:13`, `9:05:01.123`) → UTC, in the source's zone; None if not."""
    m = _CLOCK.fullmatch(clock)
    try:
        if m is None:
            return None
        d = datetime.strptime(day, order)
        return at(d.year, d.month, d.day, (int(m[1]), int(m[2]), int(m[3] or 0), micro(m[4])), opts.timezone)
    except ValueError:
        return None


def _after(row: str, time: str) -> str:
    """The row's text after its time value, as written (the message of a row with no message column)."""
    at = row.find(time)
    if at < 0:
        return row.strip()
    rest = row[at + len(time):]
    rest = rest[1:] if rest[:1] == '"' else rest  # the time's closing quote
    return rest[1:].strip() if rest[:1] == "," else rest.strip()
