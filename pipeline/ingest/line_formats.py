"""Text line formats as a table: each `LineLayout` row is one layout a logger writes, read by one
generic parser (`TextFormat`). Adding a layout is adding a row.

A row says how a line is recognised (its regex, tried only on lines holding its `needs` literal),
which named groups hold the time, and which fill the record's roles (level, service, host, the
fields kept). Rows of one format are tried in order and the first that matches decides.

Group names the parser knows: ``msg`` (the message); ``time`` (the whole timestamp, kept as
``fields.time_raw`` when it cannot be read), read from ``iso`` (an ISO 8601 string) or from its parts
``date`` (``yyyy-mm-dd``, ``yyyy/mm/dd``, ``yy/mm/dd``, ``yymmdd``) or ``year``, ``mon`` (a month's
name) or ``mo``, ``day``, then ``hms`` (``HH:MM:SS`` or ``HHMMSS``), ``frac`` and ``off`` (an
offset); ``pri`` (a syslog priority: the level is its severity, ``fields.facility`` its facility).

Times follow `pipeline.ingest.timestamps`: a header whose date is not a calendar date (31 April, a
month name no calendar has) is not that layout, unless the row says `keep_bad_date`; a date that UTC
cannot hold in the source's zone (year 1 at +14:00) or with an offset of 24 hours or more is read as
no time and kept as ``time_raw``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

from pipeline.ingest.code_location import LOCATION
from pipeline.ingest.date_order import in_order
from pipeline.ingest.levels import LEVEL_WORD, normalize_level
from pipeline.ingest.parsed import ParsedRecord, ParseOptions, split_first, text_record
from pipeline.ingest.timestamps import AMBIGUOUS_ZONES, MONTHS, ZONE_ABBREVIATIONS, OutOfRange, agreeing_opening_time, at, finer_opening_time, micro, offset_zone, parse_time, with_year
from pipeline.ingest.key_roles import LEVEL_KEYS, finer_body_time, source_body_time

_LEVEL_WORD = LEVEL_WORD  # every name of `levels` (log4j, JUL, syslog, Erlang, .NET, zerolog...)
_LEVEL_KEY = "(?i:" + "|".join(sorted(LEVEL_KEYS)) + ")"  # a key naming a level (`level:INFO` is no host)
# a zone's abbreviation after a time is the time's (`2024-04-02T10:11:12.345 CEST INFO msg`), no host
_ZONE_WORD = "(?:" + "|".join(sorted((z for z in (*ZONE_ABBREVIATIONS, *AMBIGUOUS_ZONES) if len(z) > 1), key=len, reverse=True)) + ")"
_LOCATION = LOCATION.replace("(?P<loc>", "(?:", 1)  # a source location, `Foo.java:42` (code_location)
_CALLER = re.compile(r"([A-Za-z_][\w$]*)@\d+$")  # a Java caller at the end of a thread column, "Class@line"


def _same_days(dated: datetime, header: datetime) -> bool:
    """Whether a body's dated time is within a day of its year-less header's month, day and clock."""
    try:
        return abs(dated - header.replace(year=dated.year)) <= timedelta(days=1)
    except ValueError:  # the header's leap day in a year without one
        return True


@dataclass(frozen=True)
class LineLayout:
    """One row of the table: a layout's regex and which of its groups fill which roles."""

    format: str
    pattern: str
    level: str | None = None  # the group holding the level as written (or `<group>_`, its second spelling)
    scheme: str | None = None  # how a numeric level reads (`pipeline.ingest.levels`)
    service: tuple[str, ...] = ()  # groups naming the service, first non-empty wins ("caller": a thread's Class@line)
    host: str | None = None
    fields: tuple[tuple[str, str], ...] = ()  # (field name, group) kept under `fields`, in this order
    needs: str | None = None  # a literal every line it matches holds: lines without it are not tried
    nil: str | None = None  # a value that means absent ("-" in RFC 5424)
    known_level: bool = False  # the level must be one `normalize_level` knows, else the line is not this layout
    keep_bad_date: bool = False  # a line whose date is no calendar date is still this layout (time kept raw)
    bare: str | None = None  # the group that is the message of a line that writes none after its header

    def __post_init__(self):
        object.__setattr__(self, "regex", re.compile(self.pattern, re.S))

    def record(self, m: re.Match[str], rest: str | None, opts: ParseOptions) -> ParsedRecord | None:
        """The record a matching line holds; None when its header says it is not this layout."""
        g = m.groupdict()
        if self.nil is not None:
            g = {k: (None if v == self.nil else v) for k, v in g.items()}
        level = (g.get(self.level) or g.get(self.level + "_")) if self.level else None
        if self.known_level and normalize_level(level) is None:
            return None
        time, written = None, g.get("time")
        if written:
            try:
                time = header_time(g, opts)
            except ValueError:  # not a calendar date
                if not self.keep_bad_date:
                    return None
        pri = g.get("pri")
        if pri:
            level, g["facility"] = int(pri) % 8, int(pri) // 8
        fields = {name: g.get(group) for name, group in self.fields}
        if time is None and written:
            fields["time_raw"] = written
        elif time is not None and g.get("iso") is None and not g.get("date") and not g.get("year") \
                and not g.get("year_"):
            # a stamp without a year (a relay's syslog header) gives way to the body's own dated time
            body = g.get("msg") or ""
            dated = source_body_time(body, opts, opts.key_roles)
            if dated is not None and not _same_days(dated, time):
                # the body's date read in one order of its fields (`06/12/2026`: June 12) where the
                # header's month and day say another (`Dec  6`): the order that agrees, if one does
                dated = agreeing_opening_time(body, time, tz=opts.timezone) or dated
            time = dated or finer_opening_time(body, time, tz=opts.timezone) or time
        elif time is not None and not time.microsecond:  # a stamp to the second, its body's time-named key finer
            # the whole header line (a column may hold the key) and the lines below it
            time = finer_body_time(m.string, rest, time, opts, opts.key_roles) or time
        message = g.get("msg") or (g.get(self.bare) if self.bare else None) or ""
        return text_record(self.format, message.removeprefix("\ufeff"), rest, time=time, level=level,
                           scheme=self.scheme, service=self._service(g) if self.service else None,
                           host=g.get(self.host) if self.host else None, fields=fields)

    def _service(self, g: dict) -> str | None:
        for group in self.service:
            if group == "caller":
                caller = _CALLER.search(g.get("thread") or "")
                value = caller.group(1) if caller else None
            else:
                value = g.get(group)
            if value:
                return value
        return None


def header_time(g: dict, opts: ParseOptions) -> datetime | None:
    """A header's time from its groups (module doc) → UTC; None when UTC cannot hold it;
    ValueError when the date is not a calendar date."""
    if g.get("iso") is not None:
        return parse_time(g["iso"], opts)
    if g.get("epoch") is not None:  # seconds since 1970 and their fraction (logcat's `-v epoch`)
        seconds, _, fraction = g["epoch"].partition(".")
        return datetime.fromtimestamp(int(seconds), timezone.utc).replace(microsecond=micro(fraction))
    digits = g["hms"].replace(":", "")
    hms = int(digits[0:2]), int(digits[2:4]), int(digits[4:6]), micro(g.get("frac"))
    year: int | None
    if g.get("date"):
        year, month, day = _numeric_date(g["date"] if opts.date_order is None else in_order(g["date"], opts.date_order, alone=True))
    else:
        named = int(g["mo"]) if g.get("mo") else MONTHS.get((g.get("mon") or "").lower())
        if named is None:
            raise ValueError("not a month")
        written = g.get("year") or g.get("year_")  # a year before the month or after the day
        year, month, day = (int(written) if written else None), named, int(g["day"])
    off = g.get("off")
    try:
        zone = offset_zone(off) if off else None  # a zone written beside a year-less time is still its zone
        if year is None:
            return with_year(month, day, hms, opts, zone)
        return at(year, month, day, hms, zone or opts.timezone)
    except OutOfRange:
        return None


def _numeric_date(text: str) -> tuple[int, int, int]:
    """`yyyy-mm-dd`, `yyyy/mm/dd`, `yy/mm/dd`, `yymmdd` or ISO 8601's ordinal `yyyy-ddd` → (year, month, day)."""
    if len(text) == 8 and text[4] == "-":
        day = date(int(text[:4]), 1, 1) + timedelta(days=int(text[5:]) - 1)
        if day.year != int(text[:4]):
            raise ValueError("not a day of the year")
        return day.year, day.month, day.day
    if len(text) == 10:

        return int(text[:4]), int(text[5:7]), int(text[8:10])
    if len(text) == 8:
        return 2000 + int(text[:2]), int(text[3:5]), int(text[6:8])
    return 2000 + int(text[:2]), int(text[2:4]), int(text[4:6])


class TextFormat:
    """The parser of one format: its rows tried in order on a record's first line."""

    def __init__(self, name: str, rows: list[LineLayout]):
        self.name = name
        self.rows = [(row, row.regex, row.needs) for row in rows]  # type: ignore[attr-defined]

    def __call__(self, text: str, opts: ParseOptions) -> ParsedRecord | None:
        first, rest = split_first(text)
        for row, regex, need in self.rows:
            if need is not None and need not in first:
                continue
            m = regex.match(first)
            if m is not None:
                return row.record(m, rest, opts)
        return None


# log4j & co: a date, a level, then optional thread, logger and separators.
_L4J_DATE = (r"(?P<time>(?P<date>\d{4}-\d{2}-\d{2}|\d{2}/\d{2}/\d{2}|\d{6}|\d{4}-[0-3]\d\d(?=T))[ T]"
             r"(?P<hms>\d{2}:?\d{2}:?\d{2})(?:[.,](?P<frac>\d+))?(?P<off>Z|[+-]\d{2}:?\d{2})?)")


def _log4j(pattern: str, needs: str | None = None) -> LineLayout:
    """A log4j-family row: the level, thread, logger and pid it names; the service its app, else its
    logger, else the class a thread column ends with (ZooKeeper's `[...:FastLeaderElection@774]`)."""
    return LineLayout("log4j", pattern, level="level", service=("app", "logger", "caller"), needs=needs,
                      fields=(("thread", "thread"), ("logger", "logger"), ("pid", "pid"), ("caller", "file")))


# logcat's time: its date with the `year` modifier's year or none, `usec`'s six digits (`nsec`'s nine), `zone`'s offset,
# or `epoch`'s seconds since 1970 (nine or ten digits: `monotonic`'s seconds since boot are no time)
_LOGCAT_TIME = (r"(?P<time>(?:(?P<year>\d{4})-)?(?P<mo>\d{2})-(?P<day>\d{2}) (?P<hms>\d{2}:\d{2}:\d{2})\.(?P<frac>\d{9}|\d{6}|\d{3,4})"
                r"(?: (?P<off>[+-]\d{4}))?|(?P<epoch>\d{9,10}\.(?:\d{9}|\d{6}|\d{3})))")
# logcat's priority letters and its tag as `-v brief`, `time` and `long` write it (`W/Tag` padded to
# eight columns); its pid column with the `uid` modifier's uid before it (`( 1000:  123)`)
_LOGCAT_TAG = r"(?P<level>[VDIWEFA])/(?P<tag>[^\s(\]]+)"  # a tag of one word (`I/O error(5):` is prose)
_LOGCAT_PID = r"\(\s*(?:(?P<uid>[\w-]+):\s*)?(?P<pid>\d+)\)"

# Order: most specific first; it breaks ties in detection and orders the line-by-line fallback.
LINE_LAYOUTS: tuple[LineLayout, ...] = (
    # RFC 5424: VERSION is NONZERO-DIGIT 0*2DIGIT (`<34>0 ...` is no RFC 5424 message); a `]` inside a
    # quoted value does not close the structured data, escaped or not (firewalls write it bare); a line
    # without a MSG says what it says in its structured data: that is its message
    # (over TCP a frame may open with its length in octets, RFC 6587: `87 <14>1 2024-...`)
    LineLayout("syslog5424", r"^(?:\d{1,5} )?<(?P<pri>\d{1,3})>[1-9]\d{0,2} (?P<time>(?P<iso>\S+)) (?P<host>\S+) (?P<app>\S+) (?P<procid>\S+)"
               r' (?P<msgid>\S+) (?P<sd>-|(?:\[(?>[^\]\\"]+|\\.|"(?:[^"\\]|\\.)*"|")*\])+)(?:(?: |(?<=\]))(?P<msg>.*))?$',
               scheme="syslog", service=("app",), host="host", nil="-", bare="sd",
               fields=(("facility", "facility"), ("procid", "procid"), ("msgid", "msgid"), ("structured_data", "sd"))),
    # [Sun Dec 04 04:47:44 2005] [error] msg; 2.4: [...] [mod:level] [pid 1:tid 2] msg (mod_php's module
    # is empty: [:error]). "[client 1.2.3.4] ..."
    # stays in the message: Apache's own text refers to it.
    LineLayout("apache", r"^\[(?P<time>(?:[A-Z][a-z]{2} )?(?P<mon>[A-Z][a-z]{2}) (?P<day>\d{1,2}) (?P<hms>\d{2}:\d{2}:\d{2})"
               r"(?:\.(?P<frac>\d+))? (?P<year>\d{4}))\] \[(?:(?P<module>[\w-]+)?:)?(?P<level>\w+)\]"
               r"(?: \[pid (?P<pid>\d+)(?::tid (?P<tid>\d+))?\])? ?(?P<msg>.*)$",
               level="level", fields=(("module", "module"), ("pid", "pid"), ("tid", "tid"))),
    LineLayout("nginx", r"^(?P<time>(?P<date>\d{4}/\d{2}/\d{2}) (?P<hms>\d{2}:\d{2}:\d{2})) \[(?P<level>\w+)\] "
               r"(?P<pid>\d+)#(?P<tid>\d+): (?:\*(?P<conn>\d+) )?(?P<msg>.*)$",
               level="level", known_level=True, keep_bad_date=True,
               fields=(("pid", "pid"), ("tid", "tid"), ("connection", "conn"))),
    LineLayout("glog", r"^(?P<level>[IWEF])(?P<time>(?P<mo>\d{2})(?P<day>\d{2}) (?P<hms>\d{2}:\d{2}:\d{2})\.(?P<frac>\d+))"
               r" +(?P<tid>\d+) (?P<file>[^\s:\]]+:\d+)\] ?(?P<msg>.*)$",
               level="level", fields=(("thread", "tid"), ("caller", "file"))),
    # [10.30 16:49:06] program - msg (Windows proxy tools). The program is the client whose traffic
    # the tool handled, not who wrote the line: one failing proxy is one problem whichever browser
    # met it, so it is a field, not the service.
    LineLayout("bracket-time", r"^\[(?P<time>(?P<mo>\d{1,2})\.(?P<day>\d{1,2}) (?P<hms>\d{2}:\d{2}:\d{2}))\]"
               r" (?P<program>.+?) - (?P<msg>.*)$", fields=(("program", "program"),)),
    # a level in four capitals joined to its bracketed time (Go's logrus text formatter with full
    # timestamps: `ERRO[2024-05-01T10:00:02-07:00] failed     err=x`; the pairs stay in the message)
    LineLayout("bracket-time", r"^(?P<level>[A-Z]{4})\[(?P<time>(?P<iso>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?"
               r"(?:Z|[+-]\d{2}:?\d{2})?))\] +(?P<msg>.*)$", level="level", known_level=True, needs="]"),
    # Android's logcat, as AOSP's liblog `logprint` writes its formats: `threadtime`
    # (11-28 10:00:00.123  123  456 E Tag: msg) and `time` (11-28 10:00:00.123 E/Tag(  123): msg), with
    # the `-v` modifiers `year` (2022-11-28), `usec` (.123456), `zone` (+1000 after the clock) and `uid`
    # (a uid before the pid: `1000  123  456 E`, `E/Tag( 1000:  123)`)
    LineLayout("logcat", rf"^{_LOGCAT_TIME} +(?:(?P<uid>[\w-]+) +)??(?P<pid>\d+) +(?P<tid>\d+) (?P<level>[VDIWEFA])"
               r" \s*(?P<tag>[^:]*?)\s*: (?P<msg>.*)$",
               level="level", service=("tag",), fields=(("uid", "uid"), ("pid", "pid"), ("tid", "tid"), ("tag", "tag"))),
    LineLayout("logcat", rf"^{_LOGCAT_TIME} (?P<level>[VDIWEFA])/(?P<tag>[^(]*?)\s*\(\s*(?:(?P<uid>[\w-]+):\s*)?"
               r"(?P<pid>\d+)\): (?P<msg>.*)$",
               level="level", service=("tag",), fields=(("uid", "uid"), ("pid", "pid"), ("tag", "tag"))),
    # the formats without a time: `brief` (E/Tag( 123): msg), `process` (E( 123) msg  (Tag)) and
    # `thread` (E( 123:  456) msg): a priority letter joined to its tag or its bracketed pid
    LineLayout("logcat", rf"^{_LOGCAT_TAG} *{_LOGCAT_PID}: (?P<msg>.*)$", needs="(",
               level="level", service=("tag",), fields=(("uid", "uid"), ("pid", "pid"), ("tag", "tag"))),
    LineLayout("logcat", r"^(?P<level>[VDIWEFA])\(\s*(?:(?P<uid>[\w-]+):\s*(?=\d+:))?(?P<pid>\d+)(?::\s*(?P<tid>\d+))?\)"
               r" (?P<msg>.*?)(?:  \((?P<tag>[^()\s][^()]*)\))?$", needs="(",
               level="level", service=("tag",), fields=(("uid", "uid"), ("pid", "pid"), ("tid", "tid"), ("tag", "tag"))),
    # `tag` (E/Tag    : msg): a tag of two characters or more, so that `I/O: failed` is prose
    LineLayout("logcat", r"^(?P<level>[VDIWEFA])/(?P<tag>[A-Za-z][\w.$-]+) *: (?P<msg>.*)$", needs="/",
               level="level", service=("tag",), fields=(("tag", "tag"),)),
    # `long`: the header alone in brackets, the message on the lines below it, a blank line after
    # (`[ 11-28 10:00:00.123  123:  456 E/Tag ]`)
    # (ddmlib writes the thread in hex, `495:0x1ef`, and a fraction of four digits)
    # (the columns padded wider by other readers' writers: `[     1517266949.472     5755:601     I/Tag     ]`)
    LineLayout("logcat", rf"^\[ +{_LOGCAT_TIME} +(?:(?P<uid>[\w-]+): *(?=\d+: *\d+ ))?(?P<pid>\d+): *(?P<tid>0x[0-9a-f]+|\d+) +"
               rf"{_LOGCAT_TAG} *\]$", needs="[ ",
               level="level", service=("tag",), fields=(("uid", "uid"), ("pid", "pid"), ("tid", "tid"), ("tag", "tag"))),
    # Spring Boot's default: 2024-01-02 03:04:05.123  INFO 4711 --- [app] [  thread] o.a.c.Logger  : msg
    _log4j(rf"^{_L4J_DATE} +(?P<level>{_LEVEL_WORD}) +(?P<pid>\d+) +--- +(?:\[(?P<app>[^\]]*)\] +)?"
           rf"\[\s*(?P<thread>[^\]]*?)\s*\] +(?P<logger>\S+) +: (?P<msg>.*)$", " ---"),
    # 2015-07-29 17:41:44,747 - INFO  [thread] - msg
    _log4j(rf"^{_L4J_DATE} +- +(?P<level>{_LEVEL_WORD}) +\[(?P<thread>.*?)\] +- +(?P<msg>.*)$", " - "),
    # 2015-10-18 18:01:47,978 INFO [main] org.apache.Foo: msg   (logger optional)
    # 081109 203615 148 INFO dfs.DataNode$PacketResponder: msg  (a pid before the level)
    _log4j(rf"^{_L4J_DATE} +(?:(?P<pid>\d+) +)?(?P<level>{_LEVEL_WORD}) +(?:\[(?P<thread>[^\]]*)\] +)?"
           rf"(?P<logger>[A-Za-z_$][\w$]*[.$][\w$.]*(?:\[[^\]]*\])?)(?: ?:| +-) (?P<msg>.*)$"),
    # logback: 2024-01-02 03:04:05.123 [main] INFO  com.foo.Bar - msg
    _log4j(rf"^{_L4J_DATE} +\[(?P<thread>[^\]]*)\] +(?P<level>{_LEVEL_WORD}) +(?P<logger>[\w$.]+) +- "
           rf"(?P<msg>.*)$", " - "),
    # Python: 2024-01-02 03:04:05,123 - name - ERROR - msg
    _log4j(rf"^{_L4J_DATE} +- +(?P<logger>[\w.$-]+) +- +(?P<level>{_LEVEL_WORD}) +- (?P<msg>.*)$", " - "),
    # Python: 2024-01-02 03:04:05,123 ERROR name: msg  /  [2024-01-02 03:04:05,123] ERROR in x: msg
    # Kafka: [2018-10-17 12:04:41,718] INFO [GroupMetadataManager brokerId=10] msg (logger)
    # (a bracket opened before the date or the level closes right after it: `[time LEVEL module] msg`,
    # Rust's env_logger, is one bracket of header columns, which a learnt layout reads)
    # a source location after them is the caller's, not the message's (Python's `%(filename)s:%(lineno)d`,
    # log4j's `(%F:%L)`, zap's console caller padded with blanks)
    _log4j(rf"^(?P<ob>\[)?{_L4J_DATE}(?(ob)\]) +(?P<lb>\[)?(?P<level>{_LEVEL_WORD})(?(lb)\]):? +(?:\[(?P<thread>[^\]]*)\] +)?"
           rf"(?:[\[({{]?(?P<file>{_LOCATION})[\])}}]?:?(?: +-)? +)?(?P<msg>.*)$"),
    # fields joined by colons, not spaces: Python's `%(asctime)s:%(levelname)s:%(message)s`
    # (2024-01-02 03:04:05,123:ERROR:msg) and `::`-joined headers that put a thread and the level
    # before the time (Thread-7::ERROR::2024-01-02 03:04:05,123::module::42::logger::(func) msg);
    # the module, line, logger and function the `::` header names after the time are fields
    _log4j(rf"^{_L4J_DATE}:(?P<level>{_LEVEL_WORD}) *:(?P<msg>.*)$"),  # a level padded to its column's width (`INFO :`)
    LineLayout("log4j", rf"^(?:(?P<thread>[^\s:]+)::)?(?P<level>{_LEVEL_WORD})::{_L4J_DATE}::"
               r"(?:(?P<module>[\w.$-]+)::(?P<line>\d+)::(?P<logger>[\w.$-]+)::\((?P<func>[^)]*)\) ?)?(?P<msg>.*)$",
               level="level", service=("logger",), needs="::",
               fields=(("thread", "thread"), ("module", "module"), ("line", "line"), ("logger", "logger"),
                       ("function", "func"))),
    # Python's basicConfig: ERROR:name:msg (no time)
    LineLayout("log4j", rf"^(?P<level>{_LEVEL_WORD}):(?P<logger>[\w.]+):(?P<msg>.*)$", level="level",
               fields=(("logger", "logger"),)),
    # Network devices' syslog (Cisco IOS, NX-OS): `<189>1234: *Mar  1 18:46:11.123: %LINK-3-UPDOWN: msg`:
    # a sequence number, a clock mark (`*` never set, `.` not synced), a time with or without its year
    # and zone, no host, and the `%FACILITY-SEVERITY-MNEMONIC:` message; as the device's own buffer
    # (`show logging`) or console writes it, without the priority and sequence (`*Mar  1 18:46:11.123: %...`)
    LineLayout("syslog", r"^(?:<(?P<pri>\d{1,3})>)?(?:(?P<seq>\d+)?: )?[*.]?(?P<time>(?:(?P<year>\d{4}) )?(?P<mon>[A-Z][a-z]{2})"
               r" +(?P<day>\d{1,2}) (?P<hms>\d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d+))?(?: (?P<off>[A-Z]{2,5}))?):"
               r" (?P<msg>%[A-Z][\w-]*-\d-\w+:.*)$", scheme="syslog", needs=": %",
               fields=(("facility", "facility"), ("sequence", "seq"))),
    # the same message code after a host column: a device that names itself (NX-OS's `2024 Apr  2
    # 10:11:12 leaf-3 %ETHPORT-5-IF_UP: msg`, `Apr  2 2024 10:11:12 fw-1: %FTD-6-...:`). The code's
    # severity is the level: a priority before it is the relay's (a facility's default severity)
    LineLayout("syslog", r"^(?:<\d{1,3}> ?)?(?P<time>(?:(?P<year>\d{4}) )?(?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2})"
               r"(?: (?P<year_>\d{4}))? (?P<hms>\d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d+))?(?: (?P<off>[A-Z]{2,5}))?)"
               r" (?P<host>[A-Za-z0-9][\w.:-]*?):? (?P<msg>%[A-Z][\w-]*-\d-\w+:.*)$",
               scheme="syslog", needs=" %", host="host"),
    # a relay's RFC 3164 header naming the sender before the device's own numbered line (`Apr  2
    # 10:11:12 10.0.0.1 2211: Apr  2 10:11:12.345 UTC: %LINK-3-UPDOWN: msg`): the device's clock is
    # the record's time, the relay's host its host
    LineLayout("syslog", r"^(?:<\d{1,3}> ?)?[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2} (?P<host>[\w.:-]+) (?P<seq>\d+): [*.]?"
               r"(?P<time>(?:(?P<year>\d{4}) )?(?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) (?P<hms>\d{2}:\d{2}:\d{2})"
               r"(?:\.(?P<frac>\d+))?(?: (?P<off>[A-Z]{2,5}))?): (?P<msg>%[A-Z][\w-]*-\d-\w+:.*)$",
               scheme="syslog", needs=": %", host="host", fields=(("sequence", "seq"),)),
    # RFC 3164 and its ISO-timestamp variant: Jun 14 15:16:01 host tag[pid]: msg (a space after the
    # priority and a colon after the clock as some relays write them, a wider gap before the host).
    # The tag may carry a version, as old syslogd prints itself (`syslogd 1.4.1:`), follow a `--`
    # marker and a wider gap (`host  -- root[2421]: ROOT LOGIN`), or the sender's address after its
    # name (`host 10.1.2.3 tag:`, kept as `fields.address`); an empty `[]` is no pid; a frame's octet count
    # before the priority (RFC 6587, as for RFC 5424)
    LineLayout("syslog", r"^(?:(?:\d{1,5} )?<(?P<pri>\d{1,3})> ?)?"
               r"(?P<time>(?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) (?P<hms>\d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d+))?:?"
               r"|(?P<iso>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?))"
               rf" +(?!\d+ |[A-Z] |{_LEVEL_WORD}:? |-+ |{_LEVEL_KEY}[=:]|{_ZONE_WORD} )(?P<host>[\w.:-]+)"
               r"(?: +(?:(?P<addr>\d{1,3}(?:\.\d{1,3}){3}|[0-9a-fA-F]*:[0-9a-fA-F:]*:[0-9a-fA-F]*) +)?(?:-- )?"
               r"(?P<tag>(?P<app>(?!%)[^\s\[:]+)(?:\[(?P<pid>[^\]]+)?\])?)(?: v?\d+(?:\.\d+)+)?:)?(?(iso)(?(tag)|(?!)))(?: (?P<msg>.*)|$)",
               scheme="syslog", service=("app",), host="host",
               fields=(("facility", "facility"), ("pid", "pid"), ("tag", "tag"), ("address", "addr"))),
    # RFC 3164 as a local program hands it to syslogd, before the relay adds a host (pfSense/BSD
    # remote logging, macOS): `<29>Jul  3 21:42:57 openvpn[66026]: msg`; the `tag[pid]:` right
    # after the time is what tells it from a host
    LineLayout("syslog", r"^(?:<(?P<pri>\d{1,3})> ?)?"
               r"(?P<time>(?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) (?P<hms>\d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d+))?)"
               r":? (?P<tag>(?P<app>[^\s\[:]+)\[(?P<pid>\d+)\]):(?: (?P<msg>.*)|$)",
               scheme="syslog", service=("app",), fields=(("facility", "facility"), ("pid", "pid"), ("tag", "tag"))),
    # the kernel's ring buffer as `dmesg --decode` prints it: the syslog facility and severity
    # names as two padded columns, then the seconds since boot (no time) and the message
    # (`kern  :warn  : [    1.204411] ACPI: msg`)
    LineLayout("syslog", r"^(?P<fac>kern|user|mail|daemon|auth|syslog|lpr|news|uucp|cron|authpriv|ftp|local[0-7]) *:"
               r"(?P<level>emerg|alert|crit|err|warn|notice|info|debug) *: (?:\[ *(?P<uptime>\d+\.\d+)\] )?(?P<msg>.*)$",
               level="level", needs=":", fields=(("facility", "fac"), ("uptime", "uptime"))),
    # BSD and macOS syslogd's own lines name no host: `Apr  4 03:39:57 --- last message repeated 1 time ---`
    LineLayout("syslog", r"^(?P<time>(?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) (?P<hms>\d{2}:\d{2}:\d{2})) "
               r"(?P<msg>--- .* ---)$", needs=" --- "),
    # Go's standard log: 2009/11/10 23:00:00 msg; a level word after it, bare or in brackets (nginx's
    # error log without its pid#tid: 2009/11/10 23:00:00 [error] msg), slog's between its names too
    # (`INFO+2`, `DEBUG-4`: the level below and the distance, as log/slog's default handler writes)
    # a level word bare is in capitals (slog's); in lower case it needs its colon (`error: x`), since Go's
    # log writes no level and a message may open with the word (`error encoding metric family: …`)
    LineLayout("golog", r"^(?P<time>(?P<date>\d{4}/\d{2}/\d{2}) (?P<hms>\d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d+))?)"
               rf" (?:(?P<file>[\w./-]+\.go:\d+): )?(?:(?P<level>{_LEVEL_WORD}(?:[+-]\d{{1,2}})?)(?::|(?<=[A-Z0-9])) +|\[(?P<level_>{_LEVEL_WORD})\] +)?"
               r"(?P<msg>.*)$", level="level",
               fields=(("caller", "file"),)),
)


def text_formats() -> dict[str, TextFormat]:
    """Each format of the table with its parser, in the table's order."""
    names = list(dict.fromkeys(row.format for row in LINE_LAYOUTS))
    return {name: TextFormat(name, [row for row in LINE_LAYOUTS if row.format == name]) for name in names}
