"""Times as logs write them → aware datetimes in UTC: the one set of rules every reader and source uses.

- **Epoch numbers** (a JSON number or a string of digits) are seconds, milliseconds, microseconds or
  nanoseconds, told apart by magnitude: below 1e11 seconds, below 1e14 milliseconds, below 1e17
  microseconds, else nanoseconds (1e11 s would be the year 5138; 1e11 ms is 1973). A logger that
  says its unit (pino: ms; zap, GELF: s) passes `epoch_unit` instead.
- **ISO 8601 strings**: `T` or a space between date and time, `.` or `,` fractions (beyond
  microseconds cut), an offset (`Z`, `+hh`, `+hhmm`, `+hh:mm`, after a space or not) or none; and
  whatever else Python's ISO reader takes (basic form `20240102T030405`, week dates, a date alone
  as its midnight). An offset of 24 hours or more is no offset: the time is unreadable.
- **Header spellings** (`TIME_SHAPES`): the ones text layouts write (slashed, dotted and compact
  dates, two-digit years, syslog's `MMM dd HH:mm:ss`, ctime, the common log format's
  `dd/MMM/yyyy:HH:mm:ss +zone`, Tomcat's `Dec 30, 2020 11:30:40 AM`, a dashed day-month with the
  year and seconds optional (`09-Jan 19:54`, `31-Jul-2020 16:40:38.505`), HealthApp's unpadded
  `20171223-22:16:0:119`, AM/PM clocks, zone abbreviations such as `CEST`); a spelling none
  of them knows is read by python-dateutil when it holds a clock (`read_any_time`). A time inside
  a field's value, auditd's `msg=audit(1485893834.891:123):`, is read by `embedded_time`. The
  shapes are built from shared parts (the zone `_ZONE`: Z, `+05:30`, `+0530`, `-07` right after the
  clock, an offset with its name before or after it, seconds and their fraction in an offset, UTC/GMT
  and the abbreviations that name one offset, the ambiguous ones (`CST`, `IST`) read as no zone; the
  clock `_HMS`; month names), so a
  part learnt once serves every date order; a learnt layout may read slashed dates day first
  (`DAY_FIRST_SHAPE`, decided from its sample).
- **Fields that name a time** (a JSON or logfmt key): `read_written_time`, the above in that order,
  and a time of day alone (log4j2's ABSOLUTE, Go's Kitchen) dated the day the source is read.
- **Zones**: a time without an offset is read in the source's zone (`TimeRules.timezone`,
  INCIDENTIQ_SOURCE_TZ; UTC unless the source names one, and always UTC for Splunk results and
  JSON events, whose `_time` Splunk writes with its offset).
- **Years**: a time without a year (syslog, glog, logcat) takes `TimeRules.year`, or the current
  one, moved back a year when that would put it more than a day in the future (a December line
  read in January); a leap day (`Feb 29`) the latest leap year's that is not in the future.
- **Range**: a time UTC cannot hold (year 1 at +14:00) is unreadable; one outside the years
  `MIN_YEAR`-`MAX_YEAR` is read, and each reader treats it as no time (CONTRACT §1).

Readers return None for a value that is not a time; the helpers that build a time from its parts
raise ValueError for "not a date" and its subclass OutOfRange for "a date UTC cannot hold".
"""
from __future__ import annotations

import calendar
import re
import warnings
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo

from typing import Any
from zoneinfo import ZoneInfo

from pipeline.ingest.date_order import in_order

# Times outside these years are clock or parser garbage, and arithmetic on them (log windows,
# SLA deadlines) overflows datetime.
MIN_YEAR, MAX_YEAR = 1970, 2999

MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
# Zone abbreviations a header may carry (dateutil knows only UTC/GMT/local ones without a table): the
# well-known ones that name one offset wherever they are written (CONTRACT §1).
ZONE_ABBREVIATIONS = {"UTC": 0, "GMT": 0, "UT": 0, "Z": 0, "WET": 0, "WEST": 1, "CET": 1, "CEST": 2, "MET": 1,
                      "MEST": 2, "EET": 2, "EEST": 3, "MSK": 3, "WAT": 1, "CAT": 2, "EAT": 3, "SAST": 2, "PKT": 5,
                      "HKT": 8, "SGT": 8, "AWST": 8, "JST": 9, "KST": 9, "ACST": 9.5, "ACDT": 10.5, "AEST": 10,
                      "AEDT": 11, "NZST": 12, "NZDT": 13, "NST": -3.5, "NDT": -2.5, "EST": -5, "EDT": -4,
                      "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7, "AKST": -9, "AKDT": -8, "HST": -10}
# Abbreviations that name several zones (IST: India +05:30, Ireland +01:00, Israel +02:00; CST: US Central
# -06:00, China +08:00, Cuba -05:00; BST: British +01:00, Bangladesh +06:00; AST: Atlantic -04:00,
# Arabia +03:00; GST, SST, ADT, CDT's Cuba...): read as a zone written, but not guessed: the time is read in
# the source's zone, as one without a zone is; an offset written beside the name (`CST -0600`) is read.
AMBIGUOUS_ZONES = frozenset({"IST", "CST", "BST", "AST", "GST", "SST", "ECT"})
_EPOCH_DIVISOR = {"s": 1, "ms": 1e3, "us": 1e6, "ns": 1e9}


class OutOfRange(ValueError):
    """A date that UTC cannot hold, or an offset of 24 hours or more: a time, but not a readable one."""


@dataclass(frozen=True)
class TimeRules:
    """How one source's times are read: its zone for times without an offset, the year for times
    without one (None: the current year, see the module doc) and, for tests, the moment it is now."""

    timezone: tzinfo = timezone.utc
    year: int | None = None
    now: datetime | None = None
    # the order the source writes a slashed date of numbers in (`dmy`, `mdy`, `ymd`), learnt from its
    # sample (pipeline/ingest/date_order.py); None: each date as its spelling reads it
    date_order: str | None = None
    # the same for a date of numbers cut by dashes with a four-digit year (`02-07-2025`)
    dash_order: str | None = None


UTC_RULES = TimeRules()


def zone_named(name: str | tzinfo | None) -> tzinfo:
    """An IANA zone name (or `UTC`/`Z`, or a tzinfo) → tzinfo; None is UTC."""
    if isinstance(name, str):
        return timezone.utc if name.upper() in ("UTC", "Z") else ZoneInfo(name)
    return timezone.utc if name is None else name


def offset_zone(text: str | None) -> timezone | None:
    """A written offset (`+01:00`, `-0530`, `+01`, with seconds and their fraction: `+01:49:03`,
    `+020030.099000`) or zone abbreviation (`CEST`; an ambiguous one, `CST`, is None) → timezone, the
    offset where both are written (`EST -0500`, `+0200 CEST`); None when the text is neither;
    ValueError for an offset of 24 hours or more."""
    if not text:
        return None
    if " " in text:  # an offset and a name, either first: the offset says it
        text = next((part for part in text.split() if part[0] in "+-"), text.split()[0])
    if text in ZONE_ABBREVIATIONS:
        return timezone(timedelta(hours=ZONE_ABBREVIATIONS[text]))
    if text[0] in "+-":
        whole, _, fraction = text[1:].partition(".")
        digits = whole.replace(":", "")
        if len(digits) == 3:  # minutes (Db2's `+060`): no writer spells hours and a minute digit
            digits = f"{int(digits) // 60:02d}{int(digits) % 60:02d}"
        hours, minutes, seconds = int(digits[:2]), int(digits[2:4] or 0), int(digits[4:6] or 0)
        if hours >= 24:
            raise OutOfRange("offset out of range")
        if minutes >= 60 or seconds >= 60:
            raise ValueError("not an offset")
        return timezone((1 if text[0] == "+" else -1) * timedelta(hours=hours, minutes=minutes, seconds=seconds,
                                                                  microseconds=micro(fraction)))
    return None


def in_utc(moment: datetime, zone: tzinfo = timezone.utc) -> datetime:
    """`moment` in UTC (a naive one read in `zone`); OutOfRange when UTC cannot hold it."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=zone)
    try:
        return moment.astimezone(timezone.utc)
    except OverflowError:
        # 0001-01-01T00:00+14:00 or 9999-12-31T23:59-14:00: a date outside datetime's range in UTC
        raise OutOfRange(f"time out of range: {moment.isoformat()}") from None


def at(year: int, month: int, day: int, hms: tuple[int, int, int, int], zone: tzinfo) -> datetime:
    """A wall-clock time in `zone` → UTC; ValueError when it is not a date, OutOfRange when UTC
    cannot hold it. (Built aware at once: `datetime.replace` costs as much as the rest of a line's time.)"""
    moment = datetime(year, month, day, *hms, tzinfo=zone)
    try:
        return moment.astimezone(timezone.utc)
    except OverflowError:
        raise OutOfRange(f"time out of range: {moment.isoformat()}") from None


def micro(fraction: str | None) -> int:
    """A fraction of a second as written (`5`, `123`, `123456789`) → microseconds."""
    return int((fraction or "0")[:6].ljust(6, "0"))


def with_year(month: int, day: int, hms: tuple[int, int, int, int], rules: TimeRules = UTC_RULES,
              zone: tzinfo | None = None) -> datetime:
    """A time written without a year → UTC, in the year the rules give (module doc); ValueError
    when it is not a date, OutOfRange when UTC cannot hold it. `zone` is one the text wrote, else
    the source's."""
    zone = zone or rules.timezone
    if rules.year is not None:
        return at(rules.year, month, day, hms, zone)
    now = rules.now or datetime.now(timezone.utc)
    year = now.year
    if (month, day) == (2, 29):  # a leap day: the latest leap year's, not an error in a common year
        while not calendar.isleap(year) or at(year, month, day, hms, zone) > now + timedelta(days=1):
            year -= 1
        return at(year, month, day, hms, zone)
    moment = at(year, month, day, hms, zone)
    if moment > now + timedelta(days=1):
        moment = at(year - 1, month, day, hms, zone)
    return moment


def with_today(hms: tuple[int, int, int, int], rules: TimeRules = UTC_RULES) -> datetime:
    """A time of day written without a date → UTC, on the day the source is read (in its zone), the
    day before when that would put it more than a minute in the future (a line from before midnight)."""
    now = rules.now or datetime.now(timezone.utc)
    day = now.astimezone(rules.timezone)
    moment = at(day.year, day.month, day.day, hms, rules.timezone)
    if moment > now + timedelta(minutes=1):
        moment -= timedelta(days=1)
    return moment


_TOO_LARGE = {"s": 1e11, "ms": 1e14, "us": 1e17}  # an epoch this large in that unit is past the year 5000


def from_epoch(number: float | int, unit: str | None = None) -> datetime | None:
    """An epoch number → UTC; its unit by magnitude unless given (module doc). None when out of range."""
    if unit is None or abs(number) >= _TOO_LARGE.get(unit, 1e300):
        # by magnitude; a unit a dialect assumes gives way to it when the number is too large for that
        # unit (zap's `ts` in epoch nanoseconds or milliseconds, its encoder configured so)
        unit = ("ns" if abs(number) >= 1e17 else "us" if abs(number) >= 1e14
                else "ms" if abs(number) >= 1e11 else "s")
    try:
        if isinstance(number, int) and unit != "s":  # whole digits: exact, where a float keeps ~16 of 19
            whole, part = divmod(number, int(_EPOCH_DIVISOR[unit]))
            return datetime.fromtimestamp(whole, tz=timezone.utc) + timedelta(
                microseconds=part * 1_000_000 // int(_EPOCH_DIVISOR[unit]))
        return datetime.fromtimestamp(number / _EPOCH_DIVISOR[unit], tz=timezone.utc)
    except (ValueError, OverflowError, OSError):
        return None


_NUMBER = re.compile(r"[+-]?\d+(?:\.\d*)?")
# (RFC 3339 lets the `T` and the `Z` be written in lower case: `2024-04-02t10:11:13.5z`)
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?"
                  r"\s?([Zz]|[+-]\d{2}(?::?\d{2}(?::?\d{2}(?:\.\d{1,6})?)?)?)?$")


def parse_time(value: Any, rules: TimeRules | None = None, *, epoch_unit: str | None = None) -> datetime | None:
    """An epoch number or an ISO 8601 string (module doc) → aware UTC datetime; None when not a time."""
    if isinstance(value, bool) or value is None:
        return None  # bool is an int to Python, but `true` is never meant as 1970-01-01T00:00:01
    if isinstance(value, str):
        text = value.strip()
        if _NUMBER.fullmatch(text):
            return from_epoch(_number(text), epoch_unit)  # Splunk and logfmt write epochs as text
        return _iso(text, (rules or UTC_RULES).timezone)
    if isinstance(value, (int, float)):
        return from_epoch(value, epoch_unit)
    return None


def _number(text: str) -> int | float:
    """An epoch written as text: whole digits as an int (read exactly), else a float."""
    return int(text) if text.lstrip("+-").isdigit() else float(text)


def _iso(text: str, zone: tzinfo) -> datetime | None:
    m = _ISO.match(text)
    try:
        if m is None:  # the rarer ISO spellings (basic form, week dates...)
            return in_utc(datetime.fromisoformat(text), zone)
        y, mo, d, h, mi, s, frac, off = m.groups()
        # an offset of 24 h or more (+25:00) is no offset at all: OutOfRange
        written = (timezone.utc if off in ("Z", "z") else offset_zone(off)) if off else None
        return at(int(y), int(mo), int(d), (int(h), int(mi), int(s or 0), micro(frac)), written or zone)
    except ValueError:
        return None


# -- the spellings of text headers -------------------------------------------------------------

_MON = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*"
_DOW = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?"
# a zone: Z, an offset with minutes (+05:30, +0530), one of hours alone written right after the clock
# (log4j2's ISO8601_OFFSET_DATE_TIME_HH: `,781-07`) or after a blank as a column of its own (PostgreSQL's
# `%m` in a zone without a name: `09:53:43.862 -03 [pid]`), UTC/GMT or an abbreviation; an offset may be
# followed by its zone's name (Go's Time.String: `+0000 UTC`)
# (`+0000 UTC`); a name may be followed by its offset (`EST -0500`, any name: the offset is read); an
# offset may write seconds and their fraction (`+01:49:03`, `+020030.099000`, as Python's %z does)
_ZONE_NAMES = "|".join(sorted((z for z in (*ZONE_ABBREVIATIONS, *AMBIGUOUS_ZONES) if z != "Z"), key=len, reverse=True))
_OFFSET = r"[+-]\d{2}(?::\d{2}(?::\d{2}(?:\.\d{1,6})?)?|\d{2}(?:\d{2}(?:\.\d{1,6})?)?)"
_NOT_A_ZONE = r"(?!(?:INFO|WARN|ERROR|ERR|DEBUG|TRACE|FATAL|CRIT|ALERT|EMERG|NOTE)\b)"  # a level before a number
# (and IBM Db2's offset in minutes after its microseconds, db2diag.log's `2024-03-01-10.00.00.123456+060`)
_ZONE = (rf"(?P<tz>Z|(?:{_NOT_A_ZONE}[A-Z]{{2,5}} )?{_OFFSET}(?: (?:{_ZONE_NAMES})\b)?|(?<=[.,]\d{{6}})[+-]\d{{3}}(?![\d:])"
         rf"|(?<=\d)[+-]\d{{2}}(?![\d:])|(?<=\d\s)[+-]\d{{2}}(?=\s|$)"
         rf"|(?:{_ZONE_NAMES})\b|[A-Z]{{3,4}}T)")
# the zone's region in brackets after its offset, as Java's ZonedDateTime prints it
# (`2024-03-01T10:00:00.123-05:00[America/New_York]`, `…Z[UTC]`): the offset says the instant
# (an IANA `Area/City` name, or UTC/GMT: `Z[main]` is a thread glued to its time, no region)
_REGION = r"(?:\[(?:[A-Z][A-Za-z_+-]*/[A-Za-z_+-]+(?:/[A-Za-z_+-]+)?|UTC|GMT|UT)\]?)?"
_HMS = r"(?P<h>\d{1,2}):(?P<mi>\d{2}):(?P<s>\d{2})(?:[.,:](?P<f>\d{1,9}))?(?: (?P<ampm>[AaPp][Mm]))?"


@dataclass(frozen=True)
class TimeShape:
    name: str
    regex: str  # spaces in it match any run of blanks
    score: int  # precision: time of day 4, fraction 1, year 1, zone 1 (ties broken by position)


TIME_SHAPES: tuple[TimeShape, ...] = (
    # the hour may be space-padded after a blank (MariaDB's and SSSD's `2021-07-06  7:29:32`); the clock
    # may be dashed after the date's blank or `T` (`2018-06-09 01-02-03`, both separators dashes); an underscore
    # may join the date to its clock, as a shell's `date +%F_%T` writes it (`2018-06-09_01:02:03`)
    TimeShape("iso8601", rf"(?P<y>\d{{4}})-(?P<mo>\d{{2}})-(?P<d>\d{{2}})(?:T| |-(?=\d\d[.:])|_(?=\d\d:))"
                         rf"(?P<h>\d{{2}}|(?<=\s)\d(?=:))(?:[:.]|(?<=[\sT]\d\d)-(?=\d\d-\d\d(?![\d:])))(?P<mi>\d{{2}})"
                         rf"(?:[:.]|(?<=-\d\d)-)(?P<s>\d{{2}})(?:[.,:](?P<f>\d{{1,9}}))?"
                         rf"(?: (?P<ampm>[AaPp][Mm])(?!\w))?(?: ?{_ZONE}{_REGION})?", 7),
    # ISO 8601's ordinal date, the day of the year (`2012-025T10:22:40,672`)
    TimeShape("iso-ordinal", rf"(?P<y>\d{{4}})-(?P<yd>[0-3]\d{{2}})(?:T| )(?P<h>\d{{2}}):(?P<mi>\d{{2}}):(?P<s>\d{{2}})"
                             rf"(?:[.,](?P<f>\d{{1,9}}))?(?: ?{_ZONE})?", 7),
    TimeShape("slashed", rf"(?P<y>\d{{4}})/(?P<mo>\d{{1,2}})/(?P<d>\d{{1,2}})[ T:-]{_HMS}(?: ?{_ZONE})?", 7),
    # the date's fields joined by colons, as EXIF's `DateTimeOriginal` writes it (`2023:04:28 00:00:01`) and
    # Sophos UTM its header (`2023:04:28-00:00:01`, a dash before the clock)
    TimeShape("colon-dated", rf"(?P<y>\d{{4}}):(?P<mo>[01]\d):(?P<d>[0-3]\d)[ T-]{_HMS}(?: ?{_ZONE})?", 7),
    TimeShape("dotted", rf"(?P<y>\d{{4}})\.(?P<mo>\d{{2}})\.(?P<d>\d{{2}})[ T-]{_HMS}(?: ?{_ZONE})?", 7),
    # a dotted date of numbers is day first, as the countries that write it do (`01.03.2024`, `1.3.24`)
    TimeShape("day-dotted", rf"(?P<d>\d{{1,2}})\.(?P<mo>\d{{1,2}})\.(?:(?P<y>\d{{4}})|(?P<yy>\d{{2}}))[ T-]{_HMS}(?: ?{_ZONE})?", 7),
    # the CJK date, its fields marked by 年 (year), 月 (month) and 日 (day): `2024年03月01日 08:00:00`
    TimeShape("cjk", rf"(?P<y>\d{{4}})年(?P<mo>\d{{1,2}})月(?P<d>\d{{1,2}})日 ?{_HMS}(?: ?{_ZONE})?", 7),
    # HealthApp: 20171223-22:16:0:119, every field unpadded, milliseconds after a colon
    TimeShape("dash-colons", r"(?P<y>\d{4})(?P<mo>\d{2})(?P<d>\d{2})-(?P<h>\d{1,2}):(?P<mi>\d{1,2}):(?P<s>\d{1,2})"
                             r":(?P<ms>\d{1,3})", 7),
    TimeShape("compact", rf"(?P<y>\d{{4}})(?P<mo>\d{{2}})(?P<d>\d{{2}})[-T ]?(?P<h>\d{{2}}):?(?P<mi>\d{{2}}):?"
                         rf"(?P<s>\d{{2}})(?:[.,:](?P<f>\d{{1,9}})|(?<=\d{{14}})(?P<ms>\d{{3}}))?(?: ?{_ZONE})?", 7),
    # MySQL 5.x, InnoDB: `161209 14:18:50` or `161209  4:18:50` (yymmdd, the hour space-padded) and compact clocks
    TimeShape("yy-compact", r"(?P<yy>\d{2})(?P<mo>[01]\d)(?P<d>[0-3]\d) (?:(?P<h>\d{2})(?P<mi>\d{2})(?P<s>\d{2})"
                            r"|(?P<h2>\d{1,2}):(?P<mi2>\d{2}):(?P<s2>\d{2}))", 5),
    TimeShape("yy-slashed", rf"(?P<yy>\d{{2}})/(?P<mo>\d{{2}})/(?P<d>\d{{2}}) {_HMS}", 5),
    TimeShape("clf", rf"(?P<d>\d{{1,2}})/(?P<mon>{_MON})/(?P<y>\d{{4}}):{_HMS}(?: ?{_ZONE})?", 7),
    # date(1)'s default and Go's UnixDate/RubyDate: the zone between the clock and the year
    # (`Mon Jan  2 15:04:05 MST 2006`, `Mon Jan 02 15:04:05 -0700 2006`)
    TimeShape("ctime-zoned", rf"(?:{_DOW} )?(?P<mon>{_MON}) (?P<d>\d{{1,2}}) {_HMS} {_ZONE} (?P<y>\d{{4}})", 8),
    TimeShape("ctime", rf"(?:{_DOW} )?(?P<mon>{_MON}) (?P<d>\d{{1,2}}) {_HMS} (?P<y>\d{{4}})(?: ?{_ZONE})?", 7),
    # JavaScript's Date.toString() (Node's and browsers' consoles): the year before the clock, the offset
    # written after `GMT` (`Thu Nov 24 2016 12:00:00 GMT+0100 (Central European Standard Time)`; the zone's
    # name in brackets is part of a value's time, a column of its own in a line's header)
    TimeShape("js-date", rf"(?:{_DOW} )?(?P<mon>{_MON}) (?P<d>\d{{1,2}}) (?P<y>\d{{4}}) {_HMS} (?:GMT|UTC)(?P<tz>[+-]\d{{4}})(?: \([A-Z][A-Za-z .-]*\)?)?", 8),
    # Tomcat <= 7 (java.util.logging's SimpleFormatter), Elasticsearch's CATALINA_DATESTAMP: Dec 30, 2020 11:30:40 AM;
    # Kibana's display format, what a log copied out of Discover writes: `Mar 1, 2024 @ 10:00:00.123`
    TimeShape("month-day-comma-year", rf"(?:{_DOW} )?(?P<mon>{_MON}) (?P<d>\d{{1,2}}), (?P<y>\d{{4}}) (?:@ )?{_HMS}(?: ?{_ZONE})?", 7),
    # Bacula's `09-Jan 19:54`, Tomcat 8+'s `31-Jul-2020 16:40:38.505`, Erlang/OTP's `12-Mar-2019::10:00:00`
    # (a double colon between date and time): a dashed day-month, the year and
    # the seconds optional; RFC 850 (Go's RFC850: `Monday, 02-Jan-06 15:04:05 MST`) with its weekday and
    # two-digit year
    TimeShape("day-mon-dashed", rf"(?:{_DOW} )?(?P<d>\d{{1,2}})-(?P<mon>{_MON})(?:-(?P<y>\d{{4}})|-(?P<yy>\d{{2}}))?(?:[ :]|::)(?P<h>\d{{1,2}}):(?P<mi>\d{{2}})"
                                rf"(?::(?P<s>\d{{2}})(?:[.,](?P<f>\d{{1,9}}))?)?(?: ?{_ZONE})?", 5),
    # RFC 822/1123 and log4j2's DATE: `06 Dec 2026 01:02:03,456`, `02 Jan 06 15:04 -0700` (a two-digit
    # year, no seconds)
    TimeShape("day-month", rf"(?:{_DOW} )?(?P<d>\d{{1,2}}) (?P<mon>{_MON})(?: (?P<y>\d{{4}})| (?P<yy>\d{{2}}))? "
                           rf"(?:{_HMS}|(?P<h2>\d{{1,2}}):(?P<mi2>\d{{2}})(?P<s2>))(?: ?{_ZONE})?", 5),
    # the year first, then the month's name (Cisco NX-OS, vendor syslog stamps): `2022 Oct 19 11:34:01`
    TimeShape("year-month-day", rf"(?P<y>\d{{4}}) (?P<mon>{_MON}) (?P<d>\d{{1,2}}) {_HMS}(?: ?{_ZONE})?", 7),
    TimeShape("syslog", rf"(?:{_DOW} )?(?P<mon>{_MON}) (?P<d>\d{{1,2}})(?: (?P<y>\d{{4}}))? {_HMS}(?: ?{_ZONE})?", 4),
    TimeShape("month-day", rf"(?P<mo>\d{{2}})-(?P<d>\d{{2}}) {_HMS}", 4),
    # glog/klog's header without its level letter: `1206 01:02:03.456789` (MMdd, no year)
    TimeShape("mmdd", rf"(?P<mo>[01]\d)(?P<d>[0-3]\d) {_HMS}", 4),
    # Snort's and Suricata's fast alerts: `05/30-19:09:10.917356` (no year), `10/05/2017-23:24:22.589000`;
    # US exports' `4/19/2020 1:11:13 PM` (month first, as dateutil reads it; day first where the month cannot be);
    # NetScaler's `27/06/2026:22:38:17` (the clock joined to the year by a colon, as the common log format does)
    # WebSphere's `[3/15/19 11:37:16:123 UTC]` (a two-digit year, month first)
    TimeShape("month-day-slashed", rf"(?P<mo>\d{{1,2}})/(?P<d>\d{{1,2}})(?:/(?P<y>\d{{4}})|/(?P<yy>\d{{2}}))?(?:[- T]|(?<=\d{{4}}):){_HMS}(?: ?{_ZONE})?", 5),

    TimeShape("month-day-dotted", rf"(?P<mo>\d{{1,2}})\.(?P<d>\d{{1,2}}) {_HMS}", 4),
    # epoch seconds (with a fraction or not, to whatever digits a writer prints: telegraf's and Go's
    # parsers take more than nine), milliseconds, microseconds, nanoseconds: 2000-01 to 2033-05
    TimeShape("epoch", r"(?P<epoch>(?:1[0-9]{9}|9[5-9][0-9]{7})(?:\.\d{1,18})?|1[0-9]{12}|9[5-9][0-9]{10}"
                       r"|1[0-9]{15}|9[5-9][0-9]{13}|1[0-9]{18}|9[5-9][0-9]{16})", 5),
    # a Windows FILETIME (LDAP's and Active Directory's `lastLogon`, `pwdLastSet`: 100-ns ticks since
    # 1601-01-01 UTC) as eighteen digits, 2000-01 to 2033-05: no epoch unit writes these numbers in
    # those years (nanoseconds of 1974-1976), so they are no other time
    TimeShape("filetime", r"(?P<filetime>1(?:2[6-9]|3[0-6])[0-9]{15})", 5),
    # a TAI64N label, as daemontools' multilog, runit's svlogd and s6-log write it: `@` and 24 hex digits
    # (the `@` left out once the label is cut from its line, as logstash's date filter reads it too),
    # the TAI64 second (2^62 + 10 + the Unix second, libtai's tai_unix) and the nanosecond
    TimeShape("tai64n", r"@?(?P<tai>40000000[0-9a-fA-F]{8})(?P<tain>[0-9a-fA-F]{8})", 7),
)
# A time of day alone (logback's default `%d{HH:mm:ss.SSS}`, Elixir's Logger `08:00:05.123 [error]`):
# a header's last resort, tried only when no shape above and no dateutil spelling leads the line
# (never by `read_any_time`); its date is the day the source is read (`with_today`).
# Seconds or an AM/PM make it a clock (Go's Kitchen `3:04PM`, `1:02:03 AM`); `10:30` alone is not one.
CLOCK_SHAPE = TimeShape("clock", r"(?=\d{1,2}:\d{2}(?::\d{2}|\s?[AaPp][Mm]))(?P<h>\d{1,2}):(?P<mi>\d{2})"
                                 r"(?::(?P<s>\d{2})(?:[.,](?P<f>\d{1,9}))?)?(?: ?(?P<ampm>[AaPp][Mm]))?(?P<clock>)", 3)
# The slashed date with its day first (log4j2's US_MONTH_DAY_YEAR4_TIME is `dd/MM/yyyy`, whatever its
# name says): never tried line by line (`month-day-slashed` reads such a line, day first only where
# the month cannot be); a learnt layout takes it when its sample's lines say the day comes first.
DAY_FIRST_SHAPE = TimeShape("day-month-slashed", next(s.regex for s in TIME_SHAPES if s.name == "month-day-slashed")
                            .replace("(?P<mo>", "(?P<D>").replace("(?P<d>", "(?P<mo>").replace("(?P<D>", "(?P<d>"), 5)
TIME_SHAPES_BY_NAME = {s.name: s for s in (*TIME_SHAPES, CLOCK_SHAPE, DAY_FIRST_SHAPE)}


def spaced(regex: str) -> str:
    """A shape's regex with its spaces matching any run of blanks (" ?": none or some)."""
    return regex.replace(" ?", r"\s*").replace(" ", r"\s+")


SHAPE_RE = {s.name: re.compile(spaced(s.regex) + r"$") for s in (*TIME_SHAPES, CLOCK_SHAPE, DAY_FIRST_SHAPE)}


_FILETIME_UNIX = 116_444_736_000_000_000  # the FILETIME of the Unix epoch (1601 to 1970 in 100-ns ticks)
_TAI64_UNIX = 2**62 + 10  # the TAI64 label of the Unix epoch's second (libtai's tai_unix)


def time_from_groups(
g: dict[str, Any], *, tz: Any = timezone.utc, year: int | None = None,
                     now: datetime | None = None) -> datetime | None:
    """The groups of a TIME_SHAPES match → an aware UTC datetime (None when not a real date)."""
    try:
        if g.get("epoch"):
            return from_epoch(_number(g["epoch"]))
        if g.get("filetime"):
            ticks = int(g["filetime"]) - _FILETIME_UNIX
            return datetime.fromtimestamp(ticks // 10_000_000, tz=timezone.utc).replace(microsecond=ticks % 10_000_000 // 10)
        if g.get("tai"):
            second = datetime.fromtimestamp(int(g["tai"], 16) - _TAI64_UNIX, tz=timezone.utc)
            return second.replace(microsecond=int(g["tain"], 16) // 1000)
        if g.get("h2"):  # the shape's second spelling of the clock (yy-compact's `14:18:50`, day-month's `15:04`)
            g = {**g, "h": g["h2"], "mi": g["mi2"], "s": g["s2"] or 0}
        if g.get("clock") is not None:
            hour = int(g["h"])
            if g.get("ampm"):
                hour = hour % 12 + (12 if g["ampm"].lower() == "pm" else 0)
            return with_today((hour, int(g["mi"]), int(g["s"] or 0), micro(g.get("f"))), TimeRules(tz, year, now))
        if g.get("yd"):  # an ordinal date: the year's day
            day = date(int(g["y"]), 1, 1) + timedelta(days=int(g["yd"]) - 1)
            if day.year != int(g["y"]):
                return None
            g = {**g, "mo": str(day.month), "d": str(day.day)}
        month = int(g["mo"]) if g.get("mo") else MONTHS.get((g.get("mon") or "")[:3].lower())
        if month is None:
            return None
        if month > 12 and g.get("mo") and int(g["d"]) <= 12:  # a day-first date in a month-first spelling
            g, month = {**g, "d": g["mo"]}, int(g["d"])
        hour = int(g["h"])
        if g.get("ampm"):
            hour = hour % 12 + (12 if g["ampm"].lower() == "pm" else 0)
        fraction = int(g["ms"]) * 1000 if g.get("ms") else micro(g.get("f"))  # HealthApp's unpadded ms: 11 is .011
        hms = (hour, int(g["mi"]), int(g["s"] or 0), fraction)
        zone = offset_zone(g.get("tz")) or tz
        if g.get("y") or g.get("yy"):
            written = int(g["y"]) if g.get("y") else 2000 + int(g["yy"])
            return in_utc(datetime(written, month, int(g["d"]), *hms), zone)
        return with_year(month, int(g["d"]), hms, TimeRules(tz, year, now), zone)
    except (ValueError, OverflowError, OSError, TypeError):
        return None


def read_shape(shape: str | None, text: str, *, tz: Any = timezone.utc, year: int | None = None,
               now: datetime | None = None) -> datetime | None:
    """`text` read in the spelling `shape` names (else by dateutil); None when it is not a time."""
    if shape in SHAPE_RE:
        m = SHAPE_RE[shape].match(text.strip())
        if m:
            return time_from_groups(m.groupdict(), tz=tz, year=year, now=now)
    return dateutil_time(text, tz)


def read_any_time(text: str, *, tz: Any = timezone.utc, year: int | None = None,
                  now: datetime | None = None) -> datetime | None:
    """A timestamp in any spelling TIME_SHAPES knows, else as python-dateutil reads it; None if neither."""
    text = text.strip().strip("[]()")
    for shape in TIME_SHAPES:
        m = SHAPE_RE[shape.name].match(text)
        if m:
            moment = time_from_groups(m.groupdict(), tz=tz, year=year, now=now)
            if moment is not None:
                return moment
            # digits that spell no date in this order may in the next (`03/19/26` is no yy/MM/dd,
            # but it is MM/dd/yy)
    return dateutil_time(text, tz)


# The spellings that write a year, as prefixes: a time that opens a text (a relayed line's own stamp
# after a syslog header), followed by a blank, a bracket or the end.
_DATED_PREFIXES = tuple(re.compile(r"\[?" + spaced(s.regex) + r"(?=[\s\]]|$)") for s in TIME_SHAPES
                        if "(?P<y>" in s.regex)


def leading_time(text: str, *, tz: Any = timezone.utc) -> datetime | None:
    """The time with its year that opens `text` (optionally in `[...]`), in any header spelling; else None."""
    if not text[:1].isdigit() and not text[:1].isalpha() and text[:1] != "[":
        return None
    for regex in _DATED_PREFIXES:
        m = regex.match(text)
        if m is not None:
            return time_from_groups(m.groupdict(), tz=tz)
    return None




def finer_opening_time(text: str, header: datetime, *, tz: Any = timezone.utc) -> datetime | None:
    """The time that opens `text` (a relayed line's body) in any spelling, even without a year or a
    date, when it is the header's own second written finer (a fraction: `01:02:03.456` after a relay's
    `Dec  6 01:02:03`; or digits alone, epoch milliseconds to nanoseconds, `20261206010203456`); else
    None. What the body's stamp lacks (year, date) is the header's."""
    return _opening_near(text, header, tz=tz, finer=True)


def agreeing_opening_time(text: str, header: datetime, *, tz: Any = timezone.utc) -> datetime | None:
    """The time that opens `text` read in the order of its date's fields that puts it within the
    header's second (a relay's `Dec  6 01:02:03` before `06/12/2026 01:02:03.456`: day first, as the
    header's month and day say, where a slashed date alone cannot tell); else None."""
    return _opening_near(text, header, tz=tz, finer=False)


_NEAR_SHAPES = (*TIME_SHAPES, CLOCK_SHAPE, DAY_FIRST_SHAPE)


def _same_second(moment: datetime, header: datetime) -> bool:
    """Whether `moment` falls within `header`'s second, the header's year (a guess where it writes
    none) aside."""
    try:
        return abs(moment - header.replace(year=moment.year)) < timedelta(seconds=1)
    except ValueError:  # a leap day in a year without one
        return False


def _opening_near(text: str, header: datetime, *, tz: Any, finer: bool) -> datetime | None:
    """The first reading of `text`'s opening words (up to four), in every spelling that matches them,
    that falls within `header`'s second (and, with `finer`, writes a fraction of it)."""
    if not (text[:1].isdigit() or text[:3].lower() in MONTHS):
        return None
    words = text.split(None, 4)[:4]
    for n in range(len(words), 0, -1):
        candidate = " ".join(words[:n])
        if finer and "." not in candidate and "," not in candidate and not (
                # or digits alone, long enough to write a fraction: epoch milliseconds and finer, log4j2's COMPACT
                len(candidate) >= 13 and candidate.isdigit()):
            continue
        matched = False
        for shape in _NEAR_SHAPES:
            m = SHAPE_RE[shape.name].match(candidate)
            if m is None:
                continue
            matched = True
            moment = time_from_groups(m.groupdict(), tz=tz, year=header.year, now=header + timedelta(minutes=1))
            if moment is not None and (moment.microsecond or not finer) and _same_second(moment, header):
                return moment
        if matched:  # the words a time is spelt in; fewer of them are no better reading
            break
    return None


_MONOTONIC = re.compile(r" m=[+-]\d+(?:\.\d+)?$")


def read_written_time(value: Any, rules: TimeRules | None = None, *, epoch_unit: str | None = None,
                      clock_alone: bool = True) -> datetime | None:
    """A value a logger wrote under a key that names a time (a JSON field, a logfmt `ts=`): an epoch or
    ISO 8601 (`parse_time`), else any header spelling (`read_any_time`: RFC 1123, ctime, Go's Stamp,
    `dd/MM/yyyy`...), else a time of day alone (log4j2's ABSOLUTE, Go's Kitchen: on the day the source
    is read, `with_today`; not with `clock_alone` False, for a caller that first looks for the date
    in another key). None when it is none of these."""
    rules = rules or UTC_RULES
    if isinstance(value, str) and rules.date_order is not None:
        value = in_order(value, rules.date_order)  # `06/12/2026` in the order the source's dates show
    if isinstance(value, str) and " m=" in value:
        value = _MONOTONIC.sub("", value)  # Go's time.String(): `… -0700 PDT m=+0.000123`, the monotonic clock
    if isinstance(value, str) and len(value) in (14, 17) and value.isdigit():
        # yyyyMMddHHmmss[SSS] (log4j2's COMPACT): no epoch of today is 14 or 17 digits long
        m = SHAPE_RE["compact"].match(value)
        moment = time_from_groups(m.groupdict(), tz=rules.timezone) if m else None
        if moment is not None:
            return moment
    moment = parse_time(value, rules, epoch_unit=epoch_unit)
    if moment is not None or not isinstance(value, str) or not CLOCK.search(value):
        return moment
    text = value.strip()
    moment = read_any_time(text, tz=rules.timezone, year=rules.year, now=rules.now)
    if moment is None and clock_alone:
        m = SHAPE_RE["clock"].match(text)
        if m is not None:
            moment = time_from_groups({**m.groupdict(), "clock": ""}, tz=rules.timezone, year=rules.year, now=rules.now)
    return moment


# auditd's record stamp, `msg=audit(1485893834.891:18877201):`: epoch seconds and a serial number
_AUDIT = re.compile(r"audit\((\d{9,10}\.\d{1,6}):\d+\):?")


def embedded_time(value: str | None) -> datetime | None:
    """A time a logger writes inside a field's value (auditd's `audit(EPOCH:SERIAL)`), else None."""
    m = _AUDIT.fullmatch(value) if value else None
    return from_epoch(float(m.group(1)), "s") if m else None


CLOCK = re.compile(r"\d:\d\d")


def dateutil_time(text: str, tz: Any = timezone.utc) -> datetime | None:
    """A spelling TIME_SHAPES does not know, read by dateutil; None when it is not a full time."""
    from dateutil import parser as du

    if not CLOCK.search(text):
        return None  # a time of day is what makes a header's timestamp
    text = text.strip("[]()<>#")  # a column's decoration (WebLogic's `####<Mar 15, 2019 11:37:16 AM UTC>`)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            moment = du.parse(text, fuzzy=False, default=datetime(1900, 1, 1))
            # a full date writes its month and day: read with another default, they must not change
            # (`2019 11:37:16 AM` is a year and a clock, not the first of January)
            other = du.parse(text, fuzzy=False, default=datetime(1904, 2, 2))
    except (ValueError, OverflowError, TypeError, du.ParserError):
        return None
    if moment.year == 1900 or (moment.month, moment.day) != (other.month, other.day):
        return None

    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=tz)
    try:
        return moment.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        return None
