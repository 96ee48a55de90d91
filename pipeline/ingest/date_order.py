"""The order a source writes a date of numbers in, `06/12/26` or `06/12/2026`, learnt from its sample.

A slashed date of numbers alone does not say which is the day: `06/12/2026` is June 12 (MM/dd/yyyy,
the US order dateutil and `TIME_SHAPES` read first) or December 6 (dd/MM/yyyy, log4j2's
`US_MONTH_DAY_YEAR4_TIME`, whatever its name says); `06/12/26` is also yy/MM/dd. One line cannot
tell, but a source's lines together can: the order in which every date of the sample is a calendar
date, and, of those, the one whose years differ least (a log spans days, not years: `23/11/26`,
`31/10/26`, `17/08/26` are dd/MM/yy of one year, not yy/MM/dd of three). Where the sample cannot tell
(every date reads in two orders with as few years) there is no order, and each date is read as its
spelling reads it. The order is decided once per source (`SourceParser.detect`, `TimeRules.date_order`)
and a learnt layout's time column (`layout.py`); each reader of a date then rewrites the date in that
order as ISO 8601 (`in_order`) before it reads it: a JSON or logfmt value (`read_written_time`), a
known header's date (`line_formats.header_time`).
"""
from __future__ import annotations

import re
from datetime import date
from typing import Iterable, Iterator

# a slashed date of numbers and the clock after it (a blank or `T` between), anywhere in a sample line
_IN_LINE = re.compile(r"(?<![\d/.:])(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})[ T]\d{1,2}:\d\d")
# one that opens a value or a header column (an opening bracket or quote before it); or a date alone
# (its weekday may open it: `Fri 01/03/2024 10:00:00`, as Windows' `date /t` writes it)
_OPENING = re.compile(r"([\[\"(]?(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? )?)(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})(?=[ T]\d{1,2}:\d\d)")
# a slashed date after its weekday: the order whose date falls on that day is the one its writer meant
_WEEKDAY_DATE = re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? (\d{1,2})/(\d{1,2})/(\d{4})\b")
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
# the same date cut by dashes, its year of four digits (`02-07-2025 13:45:10`: `05-4-7` is no date)
_DASHED_IN_LINE = re.compile(r"(?<![\d/.:-])(\d{1,2})-(\d{1,2})-(\d{4})[ T]\d{1,2}:\d\d")
_DASHED_OPENING = re.compile(r"([\[\"(]?)(\d{1,2})-(\d{1,2})-(\d{4})(?=[ T]\d{1,2}:\d\d)")
_YEAR_FIRST = re.compile(r"(?<![\d.])((?:19|20)\d\d)[-/](\d\d)[-/](\d\d)(?![\d/])")
_MON = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_NAMED = re.compile(rf"(?<![\w])(?:(?P<d>\d{{1,2}})[/ -](?P<mon>{_MON})[/ -](?P<y>(?:19|20)\d\d)"
                    rf"|(?P<mon2>{_MON}) +(?P<d2>\d{{1,2}}),? (?P<y2>(?:19|20)\d\d))(?!\d)")
_MONTHS = {name.lower(): n for n, name in enumerate(_MON.split("|"), 1)}
_DATE_ALONE = re.compile(r"()(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})$")
# each order: the places of the year, the month and the day among the three numbers
ORDERS = {"ymd": (0, 1, 2), "mdy": (2, 0, 1), "dmy": (2, 1, 0)}
SAMPLE = 200  # sample lines looked at


def _year(number: str) -> int:
    return int(number) if len(number) == 4 else 2000 + int(number)


def decide(triples: list[tuple[str, str, str]], known: Iterable[date] = ()) -> str | None:
    """The order (`ymd`, `mdy` or `dmy`) of a source's dates, given as their three numbers as written;
    None where they do not tell (module doc). yy/MM/dd only where every year has two digits. Where
    two orders tell as well, the dates the source writes in a spelling that cannot be misread
    (`known`: `2025-07-02`, `02/Jul/2025`) decide: the order that puts its dates nearest them (a log
    spans days: `02-07-2025` among lines of 2025-07-02 is July 2)."""
    best: list[tuple[int, str]] = []
    days: dict[str, list[date]] = {}
    for name, (y, mo, d) in ORDERS.items():
        if name == "ymd" and any(len(t[2]) == 4 for t in triples):
            continue
        try:
            days[name] = [date(_year(t[y]), int(t[mo]), int(t[d])) for t in triples]
        except ValueError:  # not a calendar date in this order
            continue
        best.append((len({day.year for day in days[name]}), name))
    if not triples or not best:
        return None
    fewest = min(count for count, _ in best)
    winners = [name for count, name in best if count == fewest]
    anchors = sorted(set(known))
    if len(winners) > 1 and anchors:
        def distance(name: str) -> int:  # each date's days from the nearest date written plainly
            return sum(min(abs((day - anchor).days) for anchor in anchors) for day in days[name])
        nearest = min(distance(name) for name in winners)
        winners = [name for name in winners if distance(name) == nearest]
    return winners[0] if len(winners) == 1 else None


def sample_order(lines: Iterable[str], sep: str = "/") -> str | None:
    """The order of the dates of numbers cut by `sep` (`/`, or `-` with a four-digit year) a source's
    sample lines write (the first in each line), the sample's plainly written dates deciding a tie."""
    triples: list[tuple[str, str, str]] = []
    known: list[date] = []
    in_line = _IN_LINE if sep == "/" else _DASHED_IN_LINE
    for n, line in enumerate(lines):
        if n >= SAMPLE:
            break
        if sep in line:
            m = in_line.search(line, 0, 400)
            if m is not None:
                triples.append((m[1], m[2], m[3]))
        known.extend(_plain_dates(line[:400]))
        if sep == "/":
            known.extend(_weekday_dates(line[:400]))
    return decide(triples, known) if triples else None


def _weekday_dates(text: str) -> Iterator[date]:
    """A slashed date written after its weekday (`Fri 01/03/2024`) in the one order, month or day
    first, in which it falls on that weekday: a date as plain as a year-first one."""
    for m in _WEEKDAY_DATE.finditer(text):
        day_of_week = _WEEKDAYS.index(m[1].lower())
        fits = [day for first, second in ((m[2], m[3]), (m[3], m[2]))
                for day in _date_of(m[4], first, second) if day.weekday() == day_of_week]
        if len(fits) == 1:
            yield fits[0]


def _plain_dates(text: str) -> Iterator[date]:
    """The dates a line writes in a spelling that cannot be misread: the year first (`2025-07-02`,
    `2025/07/02`) or the month named (`02/Jul/2025`, `Jul 2 2025`, `2 Jul 2025`)."""
    for m in _YEAR_FIRST.finditer(text):
        yield from _date_of(m[1], m[2], m[3])
    for m in _NAMED.finditer(text):
        month = _MONTHS.get((m["mon"] or m["mon2"]).lower())
        if month is not None:
            yield from _date_of(m["y"] or m["y2"], str(month), m["d"] or m["d2"])


def _date_of(year: str, month: str, day: str) -> Iterator[date]:
    try:
        yield date(int(year), int(month), int(day))
    except ValueError:
        return


def in_order(text: str, order: str | None, *, alone: bool = False, dashed: bool = False) -> str:
    """`text` with the slashed date that opens it (before its clock; or, `alone`, the date that is the
    whole text) written as ISO 8601's `yyyy-MM-dd` in `order`; `text` itself without an order, without
    such a date, or where the date is none in that order. `dashed`: the date cut by dashes instead
    (`02-07-2025`), its year of four digits."""
    if order is None or ("/" not in text[:12] and not dashed):
        return text
    m = (_DASHED_OPENING if dashed else _DATE_ALONE if alone else _OPENING).match(text)
    if m is None:
        return text
    numbers = (m[2], m[3], m[4])
    y, mo, d = ORDERS[order]
    if order == "ymd" and len(numbers[2]) == 4:
        return text
    try:
        day = date(_year(numbers[y]), int(numbers[mo]), int(numbers[d]))
    except ValueError:
        return text
    return f"{m[1]}{day.isoformat()}{text[m.end():]}"
