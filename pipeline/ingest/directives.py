"""Directive lines: lines that say how the lines after them are laid out instead of being records.

The W3C extended log format (IIS, Exchange, many proxies and CDNs) opens a file, and each restart
of its writer, with `#Software:`, `#Version:`, `#Date:` and `#Fields: date time c-ip cs-method …`
lines. `#Fields:` names the columns of every line after it, space-separated, `-` for an empty
value. Such a line configures the source's columns (`Columns`); it is not an event. A record is
read by its columns' names: `date` and `time` (W3C writes UTC) or a single `date-time`/`datetime`
column are its time, and a `time` column alone (IIS's FTP log, `#Fields: time c-ip ...`) is a clock
on the day the last `#Date:` directive gives (the next day when the clock is earlier than the
directive's: the writer crossed midnight without a new header); the other columns' roles are told by their names and values as a JSON
logger's keys are (`pipeline.ingest.key_roles`); each value is kept under its name in `fields`;
the message is the line after the time columns.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pipeline.ingest import key_roles
from pipeline.ingest.parsed import ParsedRecord, ParseOptions, text_record
from pipeline.ingest.timestamps import UTC_RULES, parse_time

_DIRECTIVE = re.compile(r"^#(?P<name>[A-Za-z][\w-]*):\s?(?P<value>.*)$")
_W3C_DIRECTIVES = frozenset({"Software", "Version", "Date", "Fields", "Remark", "Start-Date", "End-Date"})
# Zeek's (Bro's) ASCII writer: `#separator \x09`, then `#fields<TAB>ts<TAB>uid…` and the other header
# lines, the name and its value cut by the separator; its rows are tab-separated, `-` unset, `(empty)` empty
_ZEEK_DIRECTIVE = re.compile(r"^#(?P<name>separator|set_separator|empty_field|unset_field|path|open|fields|types|close)"
                             r"[\t ](?P<value>.*)$")
_EMPTY = frozenset(("-", "(empty)"))
_CLOCK = re.compile(r"\d{1,2}:\d{2}:\d{2}(?:\.\d+)?")
_TIME_COLUMNS = (("date", "time"), ("date-time",), ("datetime",), ("ts",))


def directive(line: str) -> tuple[str, str] | None:
    """(name, value) of a W3C or Zeek directive line (Zeek's `#fields` as `Fields`), or None when
    the line is not one."""
    if not line.startswith("#"):
        return None
    m = _DIRECTIVE.match(line.rstrip())
    if m is None or m["name"] not in _W3C_DIRECTIVES:
        zeek = _ZEEK_DIRECTIVE.match(line.rstrip("\r\n"))
        if zeek is None:
            return None
        return ("Fields" if zeek["name"] == "fields" else f"zeek-{zeek['name']}"), zeek["value"]
    return m["name"], m["value"]


@dataclass(frozen=True)
class Columns:
    """The columns a `#Fields:` directive names."""

    names: tuple[str, ...]
    opened: str | None = None  # the last `#Date:` directive's value: the day a clock-only `time` column is on
    separator: str = " "  # W3C's; Zeek's rows are tab-separated

    def dated(self, value: str) -> Columns:
        """These columns on the day a `#Date:` directive's `value` gives."""
        return replace(self, opened=value.strip() or None)

    @staticmethod
    def of(value: str) -> Columns | None:
        names = tuple(value.split())
        return Columns(names, separator="\t" if "\t" in value else " ") if names else None

    def time_columns(self) -> tuple[str, ...]:
        lowered = tuple(n.lower() for n in self.names)
        return next((group for group in _TIME_COLUMNS if all(g in lowered for g in group)), ())

    def parse(self, text: str, opts: ParseOptions) -> ParsedRecord | None:
        """One line of these columns → a record, None when its values do not fill them."""
        first, _, rest = text.partition("\n")
        values = first.rstrip("\r").split(self.separator)
        if len(values) != len(self.names) or not first.strip():
            return None
        row = {name: (None if value in _EMPTY else value) for name, value in zip(self.names, values)}

        lowered = {name.lower(): name for name in self.names}
        columns = self.time_columns()
        stamp = " ".join(row[lowered[c]] or "" for c in columns)
        time = parse_time(stamp, UTC_RULES) if stamp.strip() else None
        if not columns and "time" in lowered:
            columns = ("time",)
            time = self._on_opened_day(row[lowered["time"]])
        if stamp.strip() and time is None:
            return None  # a line whose time columns hold no time is not one of these lines
        taken = {lowered[c] for c in columns}
        message = " ".join(v for n, v in zip(self.names, values) if n not in taken)
        others = {n: v for n, v in row.items() if n not in taken and v is not None}
        roles = key_roles.infer(others, ("level", "service", "host", "trace_id"), opts.key_roles)
        record = text_record("w3c", message, rest or None, time=time, level=others.get(roles.get("level", "")),
                             scheme=key_roles.level_scheme(roles.get("level", "")),
                             service=others.get(roles.get("service", "")), host=others.get(roles.get("host", "")),
                             fields=dict(others))
        record.trace_id = others.get(roles.get("trace_id", ""))
        return record

    def _on_opened_day(self, clock: str | None) -> datetime | None:
        """A `time` column's clock on the day of the `#Date:` directive (None without one)."""
        opened = parse_time(self.opened, UTC_RULES) if self.opened and clock else None
        if opened is None or not _CLOCK.fullmatch(clock or ""):
            return None
        time = parse_time(f"{opened.date().isoformat()} {clock}", UTC_RULES)
        if time is not None and time < opened.replace(microsecond=0) - timedelta(seconds=1):
            time += timedelta(days=1)  # written after midnight under the same header
        return time
