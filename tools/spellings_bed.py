"""Write the generated spellings bed (tests/data/outside/spellings/, issue 34): times and levels as
logging libraries and formatters themselves DEFINE them, rendered for a few instants and put where
loggers put them.

    python tools/spellings_bed.py          # (re)writes tests/data/outside/spellings/ and its README rows

Nothing here was tuned on a log: each time spelling is a named or default format of a library (its
repository, path and commit in `SOURCES`; only the format's definition is taken, no code), rendered
by this script for the instants in `INSTANTS` (a single-digit day, month and hour, a fraction of 0,
milliseconds to nanoseconds, a noon and an evening for 12-hour clocks, an evening that an offset
moves to the next day), in the zones the format writes (`Z`, `+0530`, `+05:30`, `-03`, `UTC`,
`GMT` or none: read as UTC), and put in each of the positions loggers put a time: opening the line,
inside `[...]`, after a level word, as a logfmt `ts=`/`time=` value, under a JSON key, after a
syslog header. Levels are written by each library's own names in its own line layout (`LEVEL_FILES`).

Each file is `<source>/<format>/<position>.log` beside `<position>.log.expected.json` in the outside
bed's layout (tests/data/outside/README.md): the expected time is the rendered instant (to the
precision the format writes), `year_written` false where the format has no year and
`date_written` false where it has no date (then only the time of day is compared); the expected
level is the one the library means, already as DEBUG/INFO/WARN/ERROR/FATAL (so a name the reader
does not know counts as wrong instead of not counted).
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
BED = ROOT / "tests" / "data" / "outside" / "spellings"
README = ROOT / "tests" / "data" / "outside" / "README.md"
BEGIN, END = "<!-- spellings: begin (tools/spellings_bed.py writes these rows) -->", "<!-- spellings: end -->"

# source key -> (repository, path, commit, licence): where each format or level name is defined
SOURCES: dict[str, tuple[str, str, str, str]] = {
    "go-time": ("golang/go", "src/time/format.go", "53ce81ef642355d27223eaf77c0a8e74580632e8", "BSD-3-Clause"),
    "go-log": ("golang/go", "src/time/format.go", "53ce81ef642355d27223eaf77c0a8e74580632e8", "BSD-3-Clause"),
    "go-slog": ("golang/go", "src/log/slog/level.go", "4a38cb0f9de9b7978cf361b0ca664ec853b508d7", "BSD-3-Clause"),
    "log4j2": ("apache/logging-log4j2",
               "log4j-core/src/main/java/org/apache/logging/log4j/core/util/datetime/FixedDateFormat.java",
               "01d21cbe25d6005799f720d21a3ecb07c3eaa01e", "Apache-2.0"),
    "logback": ("qos-ch/logback", "logback-core/src/main/java/ch/qos/logback/core/CoreConstants.java",
                "0dd3c19e1fe3f50cf7a13c08024cdbe9cc8b62b1", "EPL-1.0 OR LGPL-2.1"),
    "python": ("python/cpython", "Lib/logging/__init__.py", "a49e078802348246d13585c64f8b0da2b445d249", "PSF-2.0"),
    "dotnet": ("dotnet/runtime", "src/libraries/System.Private.CoreLib/src/System/Globalization/DateTimeFormat.cs",
               "3d450df84e038a96935e200db5406bef071f502e", "MIT"),
    "dotnet-console": ("dotnet/runtime", "src/libraries/Microsoft.Extensions.Logging.Console/src/SimpleConsoleFormatter.cs",
                       "41a56dd091c653df75e23d7f70333db947898ec3", "MIT"),
    "chrono": ("chronotope/chrono", "src/datetime/mod.rs", "788712460d67764f6110222ee339159568445620", "MIT OR Apache-2.0"),
    "tracing": ("tokio-rs/tracing", "tracing-subscriber/src/fmt/time/mod.rs", "66d96cdb576d477d7e6a225320d1ed3b5ff56ddd", "MIT"),
    "env_logger": ("rust-cli/env_logger", "src/fmt/mod.rs", "e55af6f7c3be0731c902025a76b42a97a97ead8e", "MIT OR Apache-2.0"),
    "klog": ("kubernetes/klog", "klog.go", "2ccf744a9794ec7beaec4148324c3a0cd09b8a3d", "Apache-2.0"),
    "nginx": ("nginx/nginx", "src/core/ngx_log.c", "a9a01e09380466339cc2f7769e7d0263841cded1", "BSD-2-Clause"),
    "ruby": ("ruby/logger", "lib/logger.rb", "a01137130d8164269c7529a24ff7b72553c7cf26", "BSD-2-Clause OR Ruby"),
    "erlang": ("erlang/otp", "lib/kernel/src/logger_formatter.erl", "55ac76deff38d20c7cadf892f0b6bce320de80ab", "Apache-2.0"),
    "elixir": ("elixir-lang/elixir", "lib/logger/lib/logger/formatter.ex", "690c2c40c948564f7db5fccfd66246ed78c6fe8d", "Apache-2.0"),
    "serilog": ("serilog/serilog-sinks-console", "src/Serilog.Sinks.Console/ConsoleLoggerConfigurationExtensions.cs",
                "aea8738160bd7a523d02010ff26819aad437f840", "Apache-2.0"),
    "zap": ("uber-go/zap", "zapcore/level.go", "3e4a6c3d072da3b0fa6f84c116325b887514b344", "MIT"),
    "zerolog": ("rs/zerolog", "console.go", "272c153734f5a8cf1930f6b3aa76c25b29721e4f", "MIT"),
    "bunyan": ("trentm/node-bunyan", "lib/bunyan.js", "c04e84313fbb90bbc1b70f95776f66d11ba6fac2", "MIT"),
    "jul": ("openjdk/jdk", "src/java.logging/share/classes/java/util/logging/SimpleFormatter.java",
            "86a0c85f6bdfc347338579ab4496668e3de3c854", "GPL-2.0 WITH Classpath-exception-2.0 (names and format only)"),
}


@dataclass(frozen=True)
class Instant:
    when: datetime  # UTC, microseconds
    nanos: str  # the 9 fraction digits


def _instant(y: int, mo: int, d: int, h: int, mi: int, s: int, nanos: str) -> Instant:
    return Instant(datetime(y, mo, d, h, mi, s, int(nanos[:6]), tzinfo=timezone.utc), nanos)


INSTANTS = (
    _instant(2026, 12, 6, 1, 2, 3, "456789123"),   # single-digit day and hour
    _instant(2026, 3, 9, 9, 5, 7, "000000000"),    # single-digit month and day, a fraction of 0
    _instant(2026, 11, 23, 14, 34, 2, "781000000"),
    _instant(2026, 8, 17, 12, 0, 0, "120450000"),  # noon: 12 PM
    _instant(2026, 10, 31, 20, 59, 58, "999999999"),  # +05:30 moves it to the next day (and month)
)
LEVELS = ("INFO", "WARN", "ERROR", "DEBUG", "INFO")
MESSAGES = (
    "Started OrderService in 4.2 seconds (JVM running for 5.1)",
    "Connection pool 7 of 10 in use, waiting 250 ms",
    "Failed to reach payments at 10.0.3.17:8443: connection refused",
    "cache miss for key user:1042, loading from db",
    "processed 1796518923 bytes in 12 batches",
)
ZONES = {"none": None, "Z": 0, "UTC": 0, "GMT": 0, "+0530": 330, "+05:30": 330, "-03": -180, "-0700": -420}
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


@dataclass(frozen=True)
class Wall:
    """An instant as a clock in a zone shows it, with the tokens formats are built from."""

    t: datetime
    nanos: str
    zone: str

    def f(self, digits: int, trim: bool = False) -> str:
        frac = self.nanos[:digits]
        return frac.rstrip("0") if trim else frac

    @property
    def off(self) -> tuple[str, int, int]:
        minutes = ZONES[self.zone] or 0
        return ("-" if minutes < 0 else "+"), abs(minutes) // 60, abs(minutes) % 60

    def z(self) -> str:  # the zone as written
        if self.zone in ("none",):
            return ""
        if self.zone in ("Z", "UTC", "GMT"):
            return self.zone
        sign, h, m = self.off
        if self.zone == "-03":
            return f"{sign}{h:02d}"
        return f"{sign}{h:02d}:{m:02d}" if ":" in self.zone else f"{sign}{h:02d}{m:02d}"

    @property
    def b(self) -> str:
        return MONTHS[self.t.month - 1][:3]

    @property
    def a(self) -> str:
        return DAYS[self.t.weekday()][:3]

    @property
    def h12(self) -> tuple[int, str]:
        return (self.t.hour % 12 or 12), ("AM" if self.t.hour < 12 else "PM")


@dataclass(frozen=True)
class Spelling:
    source: str
    name: str
    render: Callable[[Wall], str]
    zone: str = "none"
    precision: str = "ms"  # min, s, ms, us, ns: what the expected instant keeps
    year: bool = True
    date: bool = True
    epoch: bool = False  # a number: JSON writes it unquoted


def _t(w: Wall) -> datetime:
    return w.t


def _iso(w: Wall, sep: str = "T", digits: int = 0, comma: bool = False, trim: bool = False) -> str:
    t = w.t
    frac = w.f(digits, trim) if digits else ""
    return (f"{t:%Y-%m-%d}{sep}{t:%H:%M:%S}" + ((("," if comma else ".") + frac) if frac else "") + w.z())


def _epoch(w: Wall, unit: str) -> str:
    seconds = int(w.t.timestamp())
    return {"s": str(seconds), "s.ms": f"{seconds}.{w.f(3)}", "ms": f"{seconds}{w.f(3)}",
            "us": f"{seconds}{w.f(6)}", "ns": f"{seconds}{w.f(9)}"}[unit]


S = Spelling
SPELLINGS: tuple[Spelling, ...] = (
    # Go's time package layout constants (src/time/format.go)
    S("go-time", "ANSIC", lambda w: f"{w.a} {w.b} {w.t.day:>2} {w.t:%H:%M:%S} {w.t.year}", precision="s"),
    S("go-time", "UnixDate", lambda w: f"{w.a} {w.b} {w.t.day:>2} {w.t:%H:%M:%S} {w.z()} {w.t.year}", "UTC", "s"),
    S("go-time", "RubyDate", lambda w: f"{w.a} {w.b} {w.t:%d %H:%M:%S} {w.z()} {w.t.year}", "+0530", "s"),
    S("go-time", "RFC822", lambda w: f"{w.t:%d} {w.b} {w.t:%y %H:%M} {w.z()}", "UTC", "min"),
    S("go-time", "RFC822Z", lambda w: f"{w.t:%d} {w.b} {w.t:%y %H:%M} {w.z()}", "-0700", "min"),
    S("go-time", "RFC850", lambda w: f"{DAYS[w.t.weekday()]}, {w.t:%d}-{w.b}-{w.t:%y %H:%M:%S} {w.z()}", "UTC", "s"),
    S("go-time", "RFC1123", lambda w: f"{w.a}, {w.t:%d} {w.b} {w.t:%Y %H:%M:%S} {w.z()}", "GMT", "s"),
    S("go-time", "RFC1123Z", lambda w: f"{w.a}, {w.t:%d} {w.b} {w.t:%Y %H:%M:%S} {w.z()}", "+0530", "s"),
    S("go-time", "RFC3339-Z", lambda w: _iso(w), "Z", "s"),
    S("go-time", "RFC3339-offset", lambda w: _iso(w), "+05:30", "s"),
    S("go-time", "RFC3339Nano", lambda w: _iso(w, digits=9, trim=True), "Z", "ns"),
    S("go-time", "Kitchen", lambda w: f"{w.h12[0]}:{w.t:%M}{w.h12[1]}", precision="min", date=False),
    S("go-time", "Stamp", lambda w: f"{w.b} {w.t.day:>2} {w.t:%H:%M:%S}", precision="s", year=False),
    S("go-time", "StampMilli", lambda w: f"{w.b} {w.t.day:>2} {w.t:%H:%M:%S}.{w.f(3)}", year=False),
    S("go-time", "StampMicro", lambda w: f"{w.b} {w.t.day:>2} {w.t:%H:%M:%S}.{w.f(6)}", precision="us", year=False),
    S("go-time", "StampNano", lambda w: f"{w.b} {w.t.day:>2} {w.t:%H:%M:%S}.{w.f(9)}", precision="ns", year=False),
    S("go-time", "DateTime", lambda w: _iso(w, " "), precision="s"),
    S("go-time", "Time.String", lambda w: f"{_iso(w, ' ', 9, trim=True)} +0000 UTC", precision="ns"),
    # the log package's LstdFlags and Lmicroseconds
    S("go-log", "LstdFlags", lambda w: f"{w.t:%Y/%m/%d %H:%M:%S}", precision="s"),
    S("go-log", "Lmicroseconds", lambda w: f"{w.t:%Y/%m/%d %H:%M:%S}.{w.f(6)}", precision="us"),
    # log4j2's FixedDateFormat.FixedFormat names
    S("log4j2", "ABSOLUTE", lambda w: f"{w.t:%H:%M:%S},{w.f(3)}", date=False),
    S("log4j2", "ABSOLUTE_MICROS", lambda w: f"{w.t:%H:%M:%S},{w.f(6)}", precision="us", date=False),
    S("log4j2", "ABSOLUTE_NANOS", lambda w: f"{w.t:%H:%M:%S},{w.f(9)}", precision="ns", date=False),
    S("log4j2", "ABSOLUTE_PERIOD", lambda w: f"{w.t:%H:%M:%S}.{w.f(3)}", date=False),
    S("log4j2", "COMPACT", lambda w: f"{w.t:%Y%m%d%H%M%S}{w.f(3)}"),
    S("log4j2", "DATE", lambda w: f"{w.t:%d} {w.b} {w.t:%Y %H:%M:%S},{w.f(3)}"),
    S("log4j2", "DATE_PERIOD", lambda w: f"{w.t:%d} {w.b} {w.t:%Y %H:%M:%S}.{w.f(3)}"),
    S("log4j2", "DEFAULT", lambda w: _iso(w, " ", 3, comma=True)),
    S("log4j2", "DEFAULT_MICROS", lambda w: _iso(w, " ", 6, comma=True), precision="us"),
    S("log4j2", "DEFAULT_NANOS", lambda w: _iso(w, " ", 9, comma=True), precision="ns"),
    S("log4j2", "DEFAULT_PERIOD", lambda w: _iso(w, " ", 3)),
    S("log4j2", "ISO8601_BASIC", lambda w: f"{w.t:%Y%m%dT%H%M%S},{w.f(3)}"),
    S("log4j2", "ISO8601_BASIC_PERIOD", lambda w: f"{w.t:%Y%m%dT%H%M%S}.{w.f(3)}"),
    S("log4j2", "ISO8601", lambda w: _iso(w, "T", 3, comma=True)),
    S("log4j2", "ISO8601_OFFSET_DATE_TIME_HH", lambda w: _iso(w, "T", 3, comma=True), "-03"),
    S("log4j2", "ISO8601_OFFSET_DATE_TIME_HHMM", lambda w: _iso(w, "T", 3, comma=True), "+0530"),
    S("log4j2", "ISO8601_OFFSET_DATE_TIME_HHCMM", lambda w: _iso(w, "T", 3, comma=True), "+05:30"),
    S("log4j2", "ISO8601_PERIOD", lambda w: _iso(w, "T", 3)),
    S("log4j2", "ISO8601_PERIOD_MICROS", lambda w: _iso(w, "T", 6), precision="us"),
    S("log4j2", "US_MONTH_DAY_YEAR2_TIME", lambda w: f"{w.t:%d/%m/%y %H:%M:%S}.{w.f(3)}"),  # dd/MM/yy despite the name
    S("log4j2", "US_MONTH_DAY_YEAR4_TIME", lambda w: f"{w.t:%d/%m/%Y %H:%M:%S}.{w.f(3)}"),
    S("log4j2", "UNIX", lambda w: _epoch(w, "s"), precision="s", epoch=True),
    S("log4j2", "UNIX_MILLIS", lambda w: _epoch(w, "ms"), epoch=True),
    # logback: %d's default (CoreConstants.ISO8601_PATTERN) and the manual's console pattern's %d{HH:mm:ss.SSS}
    S("logback", "default", lambda w: _iso(w, " ", 3, comma=True)),
    S("logback", "HH-mm-ss.SSS", lambda w: f"{w.t:%H:%M:%S}.{w.f(3)}", date=False),
    # Python logging: asctime's default (`%Y-%m-%d %H:%M:%S` + `,%03d` msecs) and time.strftime's %c
    S("python", "asctime", lambda w: _iso(w, " ", 3, comma=True)),
    S("python", "strftime-c", lambda w: f"{w.a} {w.b} {w.t.day:>2} {w.t:%H:%M:%S} {w.t.year}", precision="s"),
    # .NET standard date and time format strings (invariant, and "G" for en-US)
    S("dotnet", "o-utc", lambda w: _iso(w, "T", 7), "Z", "us"),
    S("dotnet", "o-offset", lambda w: _iso(w, "T", 7), "+05:30", "us"),
    S("dotnet", "s", lambda w: _iso(w), precision="s"),
    S("dotnet", "u", lambda w: _iso(w, " ") + "Z", precision="s"),
    S("dotnet", "R", lambda w: f"{w.a}, {w.t:%d} {w.b} {w.t:%Y %H:%M:%S} GMT", precision="s"),
    S("dotnet", "G-en-US", lambda w: f"{w.t.month}/{w.t.day}/{w.t.year} {w.h12[0]}:{w.t:%M:%S} {w.h12[1]}",
      precision="s"),
    # Rust: chrono's Display of DateTime<Utc>, tracing-subscriber's default SystemTime, env_logger's default
    S("chrono", "Display-Utc", lambda w: f"{_iso(w, ' ', 9, trim=True)} UTC", precision="ns"),
    S("tracing", "SystemTime", lambda w: _iso(w, "T", 6), "Z", "us"),
    S("env_logger", "default", lambda w: _iso(w), "Z", "s"),
    # glog / klog header (month, day; no year), nginx's error log, the common log format
    S("klog", "header", lambda w: f"{w.t:%m%d %H:%M:%S}.{w.f(6)}", precision="us", year=False),
    S("nginx", "error_log", lambda w: f"{w.t:%Y/%m/%d %H:%M:%S}", precision="s"),
    S("nginx", "clf", lambda w: f"{w.t:%d}/{w.b}/{w.t:%Y:%H:%M:%S} {w.z()}", "+0530", "s"),
    # syslog: RFC 3164's TIMESTAMP (Mmm dd hh:mm:ss, the day space-padded) and RFC 5424's (RFC 3339, up to us)
    S("syslog", "rfc3164", lambda w: f"{w.b} {w.t.day:>2} {w.t:%H:%M:%S}", precision="s", year=False),
    S("syslog", "rfc5424", lambda w: _iso(w, "T", 6, trim=True), "+05:30", "us"),
    # Windows event log exported as text (en-US)
    S("windows", "event-text", lambda w: f"{w.t.month}/{w.t.day}/{w.t.year} {w.h12[0]}:{w.t:%M:%S} {w.h12[1]}",
      precision="s"),
    # epoch numbers
    S("epoch", "seconds", lambda w: _epoch(w, "s"), precision="s", epoch=True),
    S("epoch", "seconds-fraction", lambda w: _epoch(w, "s.ms"), epoch=True),
    S("epoch", "millis", lambda w: _epoch(w, "ms"), epoch=True),
    S("epoch", "micros", lambda w: _epoch(w, "us"), precision="us", epoch=True),
    S("epoch", "nanos", lambda w: _epoch(w, "ns"), precision="ns", epoch=True),
    # Erlang's logger_formatter (RFC 3339, microseconds), Elixir's Logger ($time: hh:mm:ss.SSS), Ruby's Logger
    S("erlang", "logger_formatter", lambda w: _iso(w, "T", 6), "+05:30", "us"),
    S("elixir", "time", lambda w: f"{w.t:%H:%M:%S}.{w.f(3)}", date=False),
    S("ruby", "Logger", lambda w: _iso(w, "T", 6), precision="us"),
)
SOURCES.update({"syslog": ("IETF", "RFC 3164 section 4.1.2; RFC 5424 section 6.2.3", "", "IETF Trust"),
                "windows": ("IETF", "(none: Event Viewer's text export, .NET 'G' en-US)", "", "-"),
                "epoch": ("IETF", "(none: POSIX time in s/ms/us/ns)", "", "-")})
# sources without a repository cite the format's definition in the README; their expected files name
# the repository whose format definition they follow most closely
_FALLBACK = {"syslog": "go-time", "windows": "dotnet", "epoch": "log4j2"}


def _q(text: str) -> str:
    return json.dumps(text) if (" " in text or "=" in text or '"' in text) else text


def _syslog_stamp(t: datetime) -> str:
    return f"{MONTHS[t.month - 1][:3]} {t.day:>2} {t:%H:%M:%S}"


POSITIONS: dict[str, Callable[[str, str, str, Spelling, datetime, int], str]] = {
    "start": lambda t, lvl, msg, sp, u, i: f"{t} {lvl:<5} [main] com.example.OrderService - {msg}",
    "bracket": lambda t, lvl, msg, sp, u, i: f"[{t}] {lvl} {msg}",
    "after-level": lambda t, lvl, msg, sp, u, i: f"{lvl:<5} {t} {msg}",
    "logfmt": lambda t, lvl, msg, sp, u, i: f"{('ts', 'time')[len(sp.name) % 2]}={_q(t)} level={lvl.lower()} msg={_q(msg)}",
    "json": lambda t, lvl, msg, sp, u, i: json.dumps({
        ("time", "ts", "timestamp", "@timestamp")[len(sp.name) % 4]: (json.loads(t) if sp.epoch else t),
        "level": lvl.lower() if len(sp.name) % 2 else lvl, ("msg", "message")[len(sp.name) % 2]: msg}),
    "syslog": lambda t, lvl, msg, sp, u, i: f"<{8 * 16 + {'DEBUG': 7, 'INFO': 6, 'WARN': 4, 'ERROR': 3}[lvl]}>"
                                            f"{_syslog_stamp(u)} web-01 orders[4242]: {t} {lvl} {msg}",
}

# -- levels as each library names them, in its own layout (a DEFAULT time; messages as above) -----

LevelLine = Callable[[str, str, Wall], str]
LEVEL_FILES: tuple[tuple[str, str, tuple[tuple[str, str], ...], LevelLine], ...] = (
    ("log4j2", "levels", (("TRACE", "DEBUG"), ("DEBUG", "DEBUG"), ("INFO", "INFO"), ("WARN", "WARN"),
                          ("ERROR", "ERROR"), ("FATAL", "FATAL")),
     lambda n, m, w: f"{_iso(w, ' ', 3, comma=True)} {n:<5} [main] c.e.OrderService - {m}"),
    ("logback", "levels", (("TRACE", "DEBUG"), ("DEBUG", "DEBUG"), ("INFO", "INFO"), ("WARN", "WARN"), ("ERROR", "ERROR")),
     lambda n, m, w: f"{w.t:%H:%M:%S}.{w.f(3)} [main] {n:<5} c.e.OrderService - {m}"),
    ("jul", "levels", (("SEVERE", "ERROR"), ("WARNING", "WARN"), ("INFO", "INFO"), ("CONFIG", "INFO"),
                       ("FINE", "DEBUG"), ("FINER", "DEBUG"), ("FINEST", "DEBUG")),
     lambda n, m, w: f"{w.b} {w.t:%d}, {w.t.year} {w.h12[0]}:{w.t:%M:%S} {w.h12[1]} com.example.OrderService run\n{n}: {m}"),
    ("python", "levels", (("DEBUG", "DEBUG"), ("INFO", "INFO"), ("WARNING", "WARN"), ("ERROR", "ERROR"),
                          ("CRITICAL", "FATAL")),
     lambda n, m, w: f"{_iso(w, ' ', 3, comma=True)} - orders - {n} - {m}"),
    ("go-slog", "text", (("DEBUG", "DEBUG"), ("INFO", "INFO"), ("WARN", "WARN"), ("ERROR", "ERROR"),
                         ("INFO+2", "INFO"), ("ERROR+4", "ERROR"), ("DEBUG-4", "DEBUG")),
     lambda n, m, w: f"time={_iso(w, 'T', 3)}+05:30 level={n} msg={_q(m)}"),
    ("zap", "json", (("debug", "DEBUG"), ("info", "INFO"), ("warn", "WARN"), ("error", "ERROR"),
                     ("dpanic", "FATAL"), ("panic", "FATAL"), ("fatal", "FATAL")),
     lambda n, m, w: json.dumps({"level": n, "ts": float(_epoch(w, "s.ms")), "caller": "orders/service.go:42", "msg": m})),
    ("zap", "console", (("DEBUG", "DEBUG"), ("INFO", "INFO"), ("WARN", "WARN"), ("ERROR", "ERROR"),
                        ("DPANIC", "FATAL"), ("PANIC", "FATAL"), ("FATAL", "FATAL")),
     lambda n, m, w: f"{_iso(w, 'T', 3)}Z\t{n}\torders/service.go:42\t{m}"),
    ("zerolog", "console", (("TRC", "DEBUG"), ("DBG", "DEBUG"), ("INF", "INFO"), ("WRN", "WARN"), ("ERR", "ERROR"),
                            ("FTL", "FATAL"), ("PNC", "FATAL")),
     lambda n, m, w: f"{_iso(w)}Z {n} {m}"),
    ("zerolog", "json", (("trace", "DEBUG"), ("debug", "DEBUG"), ("info", "INFO"), ("warn", "WARN"),
                         ("error", "ERROR"), ("fatal", "FATAL"), ("panic", "FATAL")),
     lambda n, m, w: json.dumps({"level": n, "time": _iso(w) + "Z", "message": m})),
    ("klog", "letters", (("I", "INFO"), ("W", "WARN"), ("E", "ERROR"), ("F", "FATAL")),
     lambda n, m, w: f"{n}{w.t:%m%d %H:%M:%S}.{w.f(6)}   12345 service.go:42] {m}"),
    ("serilog", "console", (("VRB", "DEBUG"), ("DBG", "DEBUG"), ("INF", "INFO"), ("WRN", "WARN"), ("ERR", "ERROR"),
                            ("FTL", "FATAL")),
     lambda n, m, w: f"[{w.t:%H:%M:%S} {n}] {m}"),
    ("dotnet-console", "simple", (("trce", "DEBUG"), ("dbug", "DEBUG"), ("info", "INFO"), ("warn", "WARN"),
                                  ("fail", "ERROR"), ("crit", "FATAL")),
     lambda n, m, w: f"{_iso(w, ' ')} {n}: Orders.OrderService[0]\n      {m}"),
    ("bunyan", "numbers", (("10", "DEBUG"), ("20", "DEBUG"), ("30", "INFO"), ("40", "WARN"), ("50", "ERROR"),
                           ("60", "FATAL")),
     lambda n, m, w: json.dumps({"name": "orders", "hostname": "web-01", "pid": 4242, "level": int(n), "msg": m,
                                 "time": _iso(w, "T", 3) + "Z", "v": 0})),
    ("syslog", "pri", (("<11>", "ERROR"), ("<12>", "WARN"), ("<13>", "INFO"), ("<14>", "INFO"), ("<15>", "DEBUG"),
                       ("<10>", "FATAL"), ("<8>", "FATAL")),
     lambda n, m, w: f"{n}1 {_iso(w, 'T', 3)}Z web-01 orders 4242 - - {m}"),
    ("ruby", "logger", (("D", "DEBUG"), ("I", "INFO"), ("W", "WARN"), ("E", "ERROR"), ("F", "FATAL")),
     lambda n, m, w: f"{n}, [{_iso(w, 'T', 6)} #4242] {dict(D='DEBUG', I='INFO', W='WARN', E='ERROR', F='FATAL')[n]:>5}"
                     f" -- orders: {m}"),
    ("erlang", "logger", (("emergency", "FATAL"), ("alert", "FATAL"), ("critical", "FATAL"), ("error", "ERROR"),
                          ("warning", "WARN"), ("notice", "INFO"), ("info", "INFO"), ("debug", "DEBUG")),
     lambda n, m, w: f"{_iso(w, 'T', 6)}+00:00 {n}: {m}"),
    ("elixir", "logger", (("emergency", "FATAL"), ("alert", "FATAL"), ("critical", "FATAL"), ("error", "ERROR"),
                          ("warning", "WARN"), ("notice", "INFO"), ("info", "INFO"), ("debug", "DEBUG")),
     lambda n, m, w: f"{w.t:%H:%M:%S}.{w.f(3)} [{n}] {m}"),
    ("windows", "event-text", (("Information", "INFO"), ("Warning", "WARN"), ("Error", "ERROR"), ("Critical", "FATAL"),
                               ("Verbose", "DEBUG")),
     lambda n, m, w: f"{n}\t{w.t.month}/{w.t.day}/{w.t.year} {w.h12[0]}:{w.t:%M:%S} {w.h12[1]}\tService Control Manager\t7034\tNone\t{m}"),
)
_LEVEL_SOURCE = {"windows": "dotnet", "syslog": "go-time"}


def _expected_time(sp: Spelling, inst: Instant) -> str:
    t = inst.when
    keep = {"min": t.replace(second=0, microsecond=0), "s": t.replace(microsecond=0),
            "ms": t.replace(microsecond=t.microsecond // 1000 * 1000)}.get(sp.precision, t)
    zone = ZONES[sp.zone]
    shown = keep.astimezone(timezone(timedelta(minutes=zone))) if zone else keep
    return shown.isoformat()


def _wall(sp: Spelling, inst: Instant) -> Wall:
    minutes = ZONES[sp.zone] or 0
    return Wall(inst.when.astimezone(timezone(timedelta(minutes=minutes))), inst.nanos, sp.zone)


def _write(path: Path, lines: list[str], records: list[dict], source: str, note: str) -> None:
    repo, src_path, commit, _licence = SOURCES[source if SOURCES[source][2] else _FALLBACK[source]]
    text = "\n".join(lines) + "\n"
    starts, line_no = [0], 0
    for line in text.splitlines(keepends=True)[:-1]:
        starts.append(starts[-1] + len(line.encode()))
    out = []
    for rec in records:
        line_no = rec.pop("_line")
        out.append({"offset": starts[line_no], "line": line_no, **rec})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    cite = {"repo": repo, "path": src_path, "commit": commit}
    data = {"log": cite, "expected": cite, "timezone": None, "note": note, "records": out}
    path.with_name(path.name + ".expected.json").write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def generate(bed: Path = BED) -> list[tuple[str, str, int]]:
    """Write every file; returns (relative path, source, records) rows for the README."""
    rows = []
    for sp in SPELLINGS:
        for position, line_of in POSITIONS.items():
            if position == "syslog" and sp.source == "syslog":
                continue
            lines, records = [], []
            for i, inst in enumerate(INSTANTS):
                wall = _wall(sp, inst)
                lines.append(line_of(sp.render(wall), LEVELS[i], MESSAGES[i], sp, inst.when, i))
                rec = {"_line": i, "time": _expected_time(sp, inst), "level": LEVELS[i], "message": MESSAGES[i]}
                if not sp.year:
                    rec["year_written"] = False
                if not sp.date:
                    rec["date_written"] = False
                records.append(rec)
            rel = f"{sp.source}/{sp.name}/{position}.log"
            _write(bed / rel, lines, records, sp.source, f"time spelling {sp.source} {sp.name}, zone {sp.zone}, "
                                                          f"precision {sp.precision}, position {position}")
            rows.append((rel, sp.source, len(records)))
    for source, name, levels, line_of in LEVEL_FILES:
        lines, records, line_no = [], [], 0
        for i, (written, meant) in enumerate(levels):
            inst = INSTANTS[i % len(INSTANTS)]
            wall = Wall(inst.when, inst.nanos, "none")
            text = line_of(written, MESSAGES[i % len(MESSAGES)], wall)
            lines.append(text)
            records.append({"_line": line_no, "level": meant, "message": MESSAGES[i % len(MESSAGES)]})
            line_no += text.count("\n") + 1
        rel = f"levels/{source}-{name}.log"
        _write(bed / rel, lines, records, _LEVEL_SOURCE.get(source, source),
               f"level names of {source} ({name}) as written: " + ", ".join(w for w, _ in levels))
        rows.append((rel, source, len(records)))
    return rows


def _readme(rows: list[tuple[str, str, int]]) -> None:
    text = README.read_text(encoding="utf-8")
    head = text.split(BEGIN)[0].rstrip("\n")
    tail = text.split(END, 1)[1] if END in text else ""
    table = ["| file | format defined in (repo: path @ commit; licence) | commit | records |", "| --- | --- | --- | --- |"]
    for rel, source, n in rows:
        repo, path, commit, licence = SOURCES[source]
        table.append(f"| spellings/{rel} | {repo}: {path}" + (f" @ {commit[:12]}" if commit else "")
                     + f"; {licence} | {commit[:12] or '-'} | {n} |")
    README.write_text(f"{head}\n\n{BEGIN}\n" + "\n".join(table) + f"\n{END}{tail}", encoding="utf-8")


def main() -> int:
    import shutil

    if BED.exists():
        shutil.rmtree(BED)
    rows = generate()
    _readme(rows)
    print(f"{len(rows)} files, {sum(n for *_, n in rows)} records under {BED.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
