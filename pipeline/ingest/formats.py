"""Raw log text → ParsedRecord: which format a source writes, and one record parsed with it.

Formats known (names as in `ParsedRecord.format`):

- ``json``: one object a line, with the field names of CONTRACT §1 and of pino, zap,
  structlog, Serilog/CLEF, ECS (flat or nested), bunyan, GELF and Logstash (see `_JSON_ALIASES`).
- ``logfmt``: ``key=value`` pairs, values optionally double-quoted with backslash escapes.
- ``syslog5424`` (``<PRI>1 TIMESTAMP HOST APP PROCID MSGID [SD] MSG``) and ``syslog``
  (RFC 3164 and its ISO-timestamp variant: ``Jun 14 15:16:01 host tag[pid]: msg``).
- ``apache`` error log (``[Sun Dec 04 04:47:44 2005] [error] msg``, 2.4's ``[mod:level]`` too)
  and ``nginx`` error log (``2024/01/02 03:04:05 [error] 123#0: msg``).
- ``log4j``: the layouts log4j, logback and Python's logging print by default or by habit:
  a date (``2015-10-18 18:01:47,978``, ``17/06/09 20:10:40``, ``081109 203615``), a level, then
  optionally a ``[thread]``, a pid, a logger name and a ``-``/``:`` before the message.
- ``glog`` (Go's klog/glog: ``I0102 15:04:05.000000 1234 file.go:12] msg``) and ``golog``
  (Go's standard log: ``2009/11/10 23:00:00 msg``).
- ``bracket-time`` (``[10.30 16:49:06] program - msg``, as Windows proxy tools write).
- ``logcat`` (Android's threadtime: ``11-28 10:00:00.123  123  456 E Tag: msg``).
- ``custom``: a regex with named groups time/level/message/service/host, given as `pattern`.
- ``text``: anything else that is text: the line is the message, the level a keyword guess.

Per source, `SourceParser.detect` samples the first lines and picks the format that parses
most of them; `parse` then tries that format first and falls back, line by line, to the others
and finally to ``text``. Only what is not text is refused (`decode_line`): NUL bytes, bytes that
are not UTF-8, or control characters that say binary; the refusal is an `InvalidEvent` with a
one-line reason, as `pipeline.events` turns into a dead letter.

Times: a timestamp without an offset is read in the source's `timezone` (default UTC); one
without a year (syslog, glog, bracket-time) gets `year`, or when no year is given the current
one, moved back a year when that would put the record more than a day in the future (a
December line read in January). Every time returned is timezone-aware, in UTC.

A record may be several lines (a multiline joiner's output): the first line is parsed, the
rest is kept as the record's `stack`, and an exception type found there fills `exception`.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator

from pipeline.errors import InvalidEvent
from pipeline.ingest.levels import JVM_FLAG, Level, infer_level, normalize_level
from pipeline.ingest.timestamps import MONTHS, TimeRules, in_utc, micro, parse_time, read_any_time, with_year, zone_named

SAMPLE_LINES = 50
LEARN_LINES = 200  # a layout is learnt from up to this many first lines
_CONTROL = re.compile(r"[\x01-\x08\x0e-\x1a\x1c-\x1f\x7f]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass
class ParsedRecord:
    """One log record as parsed: every value the line held, nothing normalised away.

    `level` is the raw value (a word or a number); `level_name` is it normalised to
    DEBUG/INFO/WARN/ERROR/FATAL, or for a line that carried no level a keyword guess, or None.
    `fields` holds whatever else the record named (JSON keys, logfmt keys, thread, pid...).
    """

    message: str
    format: str
    time: datetime | None = None
    level: str | int | float | None = None
    level_name: Level | None = None
    service: str | None = None
    host: str | None = None
    exception: str | None = None
    stack: str | None = None
    trace_id: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ParseOptions(TimeRules):
    """How to read one source: its time rules and `pattern`, a user regex with named groups (module doc)."""

    pattern: re.Pattern[str] | None = None

    @staticmethod
    def make(*, timezone_name: str | tzinfo | None = None, year: int | None = None,
             pattern: str | re.Pattern[str] | None = None, now: datetime | None = None) -> ParseOptions:
        compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
        if compiled is not None and "message" not in compiled.groupindex:
            raise ValueError("a custom log pattern needs a named group 'message', e.g. (?P<message>.*)")
        return ParseOptions(timezone=zone_named(timezone_name), year=year, now=now, pattern=compiled)


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


# -- exceptions in text --------------------------------------------------------------------

_JAVA_EXC = re.compile(r"(?:^|[\s:(])((?:[a-zA-Z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable|Fault))\b")
_PY_EXC_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt|Fault)|"
                          r"[A-Z]\w*Error)(?::|$)")
_BARE_EXC = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Exception|Error))\b")
# A Python exception named by its module: httpx.ReadTimeout, requests.exceptions.ConnectTimeout
_PY_DOTTED_EXC = re.compile(r"(?:^|[\s:(])((?:[a-z_][a-z0-9_]*\.)+[A-Z][A-Za-z0-9]*"
                            r"(?:Error|Exception|Timeout|Fault|Failure|Refused|Reset|Closed|Exit|Interrupt|Warning))\b")


# Every exception name the patterns above find ends with one of these words (and a Go panic is
# told by its "panic:" line): a text holding none of them names no exception, whatever its lines.
_EXC_WORDS = re.compile(r"Exception|Error|Throwable|Fault|Warning|Exit|Interrupt|Timeout|Failure|Refused"
                        r"|Reset|Closed|panic:")


def exception_in(text: str) -> str | None:
    """The exception type a message or stack names (Java, Python, Go panic), or None."""
    if _EXC_WORDS.search(text) is None:
        return None  # most lines: none of the words every match needs (see _EXC_WORDS)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return None
    if "-XX:" in lines[0]:  # `-XX:+ExitOnOutOfMemoryError` is a JVM option, not an exception
        lines[0] = JVM_FLAG.sub(" ", lines[0]).strip() or " "
    if lines[0].startswith("Traceback (most recent call last)") or any(
            ln.startswith("Traceback (most recent call last)") for ln in lines):
        for ln in reversed(lines):
            m = _PY_EXC_LINE.match(ln) or _PY_DOTTED_EXC.match(ln)
            if m:
                return m.group(1)
    if any(ln.startswith("panic:") for ln in lines) and any(ln.startswith("goroutine ") for ln in lines):
        return "panic"
    for ln in lines:
        m = _JAVA_EXC.search(ln)
        if m and not ln.startswith("at "):
            return m.group(1)
    for ln in lines:
        m = _PY_DOTTED_EXC.search(ln)
        if m:
            return m.group(1)
    m = _BARE_EXC.search(lines[0])
    return m.group(1) if m else None


# -- JSON ----------------------------------------------------------------------------------

# Canonical field → names accepted, first match wins; a dotted name matches a literal key
# ("log.level") or a nested object ({"log": {"level": ...}}).
_JSON_ALIASES: dict[str, tuple[str, ...]] = {
    "time": ("_time", "@timestamp", "timestamp", "time", "ts", "@t", "t", "date", "datetime"),
    "message": ("message", "msg", "@m", "_raw", "event", "short_message", "log", "text"),
    "service": ("service", "service.name", "app", "application", "Application", "_service", "_app",
                "sourcetype"),
    "host": ("host", "hostname", "host.name", "host.hostname", "_host", "source_host"),
    "level": ("level", "severity", "log_level", "log.level", "@l", "lvl", "loglevel",
              "levelname", "severity_text", "_level"),
    "exception": ("exception", "exception_type", "error.type", "exc_type", "error.kind",
                  "_exception"),
    "stack": ("stack", "stacktrace", "stack_trace", "error.stack", "error.stack_trace", "@x",
              "exc_info", "full_message", "err.stack", "error_stack"),
    "trace_id": ("trace_id", "traceId", "trace.id", "@tr", "traceID", "dd.trace_id", "_trace_id"),
}
# Keys whose presence says which logger wrote the line; they steer level and time reading.
_DIALECTS: tuple[tuple[str, Callable[[dict], bool]], ...] = (
    ("gelf", lambda o: "short_message" in o and "version" in o or "short_message" in o),
    ("clef", lambda o: "@t" in o and ("@m" in o or "@mt" in o)),
    ("ecs", lambda o: "@timestamp" in o and ("ecs" in o or "ecs.version" in o or "log.level" in o
                                             or isinstance(o.get("log"), dict))),
    ("bunyan", lambda o: "hostname" in o and "pid" in o and isinstance(o.get("level"), int)
     and "v" in o),
    ("pino", lambda o: isinstance(o.get("level"), int) and isinstance(o.get("time"), (int, float))),
    ("zap", lambda o: isinstance(o.get("ts"), (int, float)) and ("caller" in o or "msg" in o)),
    ("structlog", lambda o: "event" in o and ("level" in o or "timestamp" in o)),
    ("logstash", lambda o: "@timestamp" in o and "@version" in o),
)


def _take(rest: dict, names: Iterable[str], *, scalar: bool = False) -> Any:
    """Pop the first of `names` holding a value; a null counts as absent.

    With `scalar`, only a string or number counts (ECS's "log" and "event" are objects, Docker's
    "log" is the line).
    """
    for name in names:
        if scalar and name in rest and isinstance(rest[name], (dict, list)):
            continue
        if name in rest:
            value = rest.pop(name)
        elif "." in name and isinstance(rest.get(name.split(".", 1)[0]), dict):
            parent, child = name.split(".", 1)
            nested = dict(rest[parent])
            if child not in nested:
                continue
            value = nested.pop(child)
            if nested:
                rest[parent] = nested
            else:
                del rest[parent]
        else:
            continue
        if value is not None and value != "":
            return value
    return None


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "\n".join(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True)
    text = str(value).strip()
    return text or None


_HOLE = re.compile(r"\{\{|\}\}|\{([@$]?)([A-Za-z_][\w.]*)(?:,[^}:]*)?(?::[^}]*)?\}")


def render_template(template: Any, properties: dict) -> Any:
    """A message template (Serilog/CLEF `@mt`) with its `{Name}` holes filled from the event's
    properties; a hole with no property stays as written, `{{`/`}}` are literal braces."""
    if not isinstance(template, str):
        return template

    def fill(m: re.Match[str]) -> str:
        if m.group(0) in ("{{", "}}"):
            return m.group(0)[0]
        value = properties.get(m.group(2))
        if value is None:
            return m.group(0)
        if isinstance(value, (dict, list)):
            return json.dumps(value, sort_keys=True)
        return str(value)

    return _HOLE.sub(fill, template)


def parse_json(text: str, opts: ParseOptions) -> ParsedRecord | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        obj = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    dialect = next((name for name, test in _DIALECTS if test(obj)), "json")
    rest = dict(obj)
    rest.pop("@version", None) if dialect == "logstash" else None
    if dialect == "gelf":
        rest.pop("version", None)
    raw_time = _take(rest, _JSON_ALIASES["time"])
    template = rest.pop("@mt", None) if dialect == "clef" else None
    message = _take(rest, _JSON_ALIASES["message"], scalar=True)
    if message is None and template is not None:
        message = render_template(template, rest)  # CLEF may carry only the template: fill its holes
        rest["message_template"] = template
    elif template is not None:
        rest["message_template"] = template
    error = rest.get("error") if isinstance(rest.get("error"), dict) else None
    err_message = None
    if error is not None and "message" in error:
        err_message = _take(rest, ("error.message",))
    elif "error.message" in rest:
        err_message = rest.pop("error.message")
    if message is None and err_message is not None:
        message = err_message
    elif err_message is not None:
        rest["error.message"] = err_message
    level = _take(rest, _JSON_ALIASES["level"])
    if level is None and dialect == "clef":
        level = "Information"  # CLEF: an event without @l is Information
    scheme = "syslog" if dialect == "gelf" else "bunyan" if dialect in ("pino", "bunyan") else None
    epoch_unit = "ms" if dialect in ("pino",) else "s" if dialect in ("zap", "gelf") else None
    time = parse_time(raw_time, opts, epoch_unit=epoch_unit) if raw_time is not None else None
    if raw_time is not None and time is None:
        rest["time_raw"] = raw_time
    values = {name: _as_text(_take(rest, _JSON_ALIASES[name], scalar=name != "stack"))
              for name in ("service", "host", "exception", "stack", "trace_id")}
    if values["service"] is None and dialect in ("bunyan", "pino"):
        values["service"] = _as_text(_take(rest, ("name",)))  # pino and bunyan name the logger `name`
    # GELF's additional fields are _name; once the known ones are taken, drop the underscore.
    if dialect == "gelf":
        rest = {(k[1:] if k.startswith("_") and k[1:] not in rest else k): v for k, v in rest.items()}
    message_text = _as_text(message) or ""
    stack = values["stack"]
    if dialect == "gelf" and stack is not None and stack.strip() == message_text.strip():
        stack = None  # full_message often repeats short_message
    level_name = normalize_level(level, scheme=scheme) if level is not None else None
    if level is None:
        level_name = infer_level(message_text)
    exception = values["exception"] or (exception_in(stack) if stack else None)
    rest["dialect"] = dialect
    return ParsedRecord(message=message_text, format="json", time=time, level=level,
                        level_name=level_name, service=values["service"], host=values["host"],
                        exception=exception, stack=stack, trace_id=values["trace_id"], fields=rest)


# -- logfmt --------------------------------------------------------------------------------

_LOGFMT_PAIR = re.compile(r'\s*([^\s=]+)(?:=("(?:[^"\\]|\\.)*"|[^\s]*))?')
_LOGFMT_KEYS = {"msg", "message", "level", "lvl", "time", "ts", "t", "severity", "err", "error"}


def parse_logfmt_pairs(text: str) -> dict[str, str] | None:
    """logfmt's pairs, or None when the text is not wholly logfmt."""
    pairs: dict[str, str] = {}
    pos, keyed = 0, 0
    text = text.strip()
    while pos < len(text):
        m = _LOGFMT_PAIR.match(text, pos)
        if not m or m.end() == pos:
            return None
        key, value = m.group(1), m.group(2)
        if m.end() < len(text) and not text[m.end()].isspace():
            return None  # e.g. a quote opened and never closed
        if value is None:
            pairs[key] = "true"  # a bare key is a flag
        else:
            keyed += 1
            if value.startswith('"'):
                value = re.sub(r'\\(.)', lambda e: {"n": "\n", "t": "\t"}.get(e.group(1), e.group(1)),
                               value[1:-1])
            pairs[key] = value
        pos = m.end()
    if keyed < 2 or keyed < len(pairs) - 1:
        return None
    return pairs


def parse_logfmt(text: str, opts: ParseOptions) -> ParsedRecord | None:
    if "=" not in text:
        return None
    pairs = parse_logfmt_pairs(text)
    if pairs is None or not (_LOGFMT_KEYS & set(pairs)):
        return None
    rest: dict[str, Any] = dict(pairs)
    raw_time = _take(rest, ("time", "ts", "t", "timestamp", "@timestamp"))
    message = _take(rest, ("msg", "message", "event")) or ""
    level = _take(rest, ("level", "lvl", "severity", "log_level"))
    time = parse_time(raw_time, opts) if raw_time is not None else None
    if raw_time is not None and time is None:
        rest["time_raw"] = raw_time
    err = rest.get("err") or rest.get("error")
    if not message and err:
        message = err
    return ParsedRecord(
        message=message, format="logfmt", time=time, level=level,
        level_name=normalize_level(level) if level is not None else infer_level(message + " " + (err or "")),
        service=_take(rest, ("service", "app", "component", "logger", "caller_service")),
        host=_take(rest, ("host", "hostname")), exception=_take(rest, ("exception", "error_type")),
        stack=_take(rest, ("stack", "stacktrace")), trace_id=_take(rest, ("trace_id", "traceId", "traceID")),
        fields=rest)


# -- text line formats ---------------------------------------------------------------------

_LEVEL_WORD = (r"(?:TRACE|DEBUG|INFO|NOTICE|WARN(?:ING)?|ERROR|ERR|SEVERE|FATAL|CRITICAL|CRIT"
               r"|ALERT|EMERG|PANIC|FINE|FINER|FINEST|CONFIG|VERBOSE"
               r"|trace|debug|info|notice|warn(?:ing)?|error|err|fatal|critical|crit|panic)")

_SYSLOG_5424 = re.compile(
    r"^<(?P<pri>\d{1,3})>1 (?P<time>\S+) (?P<host>\S+) (?P<app>\S+) (?P<procid>\S+) (?P<msgid>\S+)"
    r" (?P<sd>-|(?:\[(?:[^\]\\]|\\.)*\])+)(?: (?P<msg>.*))?$", re.S)
_SYSLOG_3164 = re.compile(
    r"^(?:<(?P<pri>\d{1,3})>)?"
    r"(?:(?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) (?P<hms>\d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d+))?"
    r"|(?P<iso>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?))"
    rf" (?!\d+ |[A-Z] |{_LEVEL_WORD} )(?P<host>[\w.:-]+)"
    # the tag: `app[pid]`, with a version after it as old syslogd prints itself (`syslogd 1.4.1:`)
    # or after a `--` marker and a wider gap (`host  -- root[2421]: ROOT LOGIN`)
    r"(?: +(?:-- )?(?P<tag>[^\s\[:]+(?:\[(?P<pid>[^\]]*)\])?)(?: v?\d+(?:\.\d+)+)?:)?(?: (?P<msg>.*)|$)", re.S)
_APACHE = re.compile(
    r"^\[(?:[A-Z][a-z]{2} )?(?P<mon>[A-Z][a-z]{2}) (?P<day>\d{1,2}) (?P<hms>\d{2}:\d{2}:\d{2})"
    r"(?:\.(?P<frac>\d+))? (?P<year>\d{4})\] \[(?:(?P<module>[\w-]+):)?(?P<level>\w+)\]"
    # "[client 1.2.3.4] ..." stays in the message: Apache's own text refers to it.
    r"(?: \[pid (?P<pid>\d+)(?::tid (?P<tid>\d+))?\])? ?(?P<msg>.*)$",
    re.S)
_NGINX = re.compile(
    r"^(?P<date>\d{4}/\d{2}/\d{2}) (?P<hms>\d{2}:\d{2}:\d{2}) \[(?P<level>\w+)\] "
    r"(?P<pid>\d+)#(?P<tid>\d+): (?:\*(?P<conn>\d+) )?(?P<msg>.*)$", re.S)
_GOLOG = re.compile(
    r"^(?P<date>\d{4}/\d{2}/\d{2}) (?P<hms>\d{2}:\d{2}:\d{2})(?:\.(?P<frac>\d+))?"
    r" (?:(?P<file>[\w./-]+\.go:\d+): )?(?P<msg>.*)$", re.S)
_GLOG = re.compile(
    r"^(?P<level>[IWEF])(?P<mo>\d{2})(?P<day>\d{2}) (?P<hms>\d{2}:\d{2}:\d{2})\.(?P<frac>\d+)"
    r" +(?P<tid>\d+) (?P<file>[^\s:\]]+:\d+)\] ?(?P<msg>.*)$", re.S)
_BRACKET_TIME = re.compile(
    r"^\[(?P<mo>\d{1,2})\.(?P<day>\d{1,2}) (?P<hms>\d{2}:\d{2}:\d{2})\] (?P<program>.+?) - (?P<msg>.*)$",
    re.S)
_LOGCAT = re.compile(
    r"^(?P<mo>\d{2})-(?P<day>\d{2}) (?P<hms>\d{2}:\d{2}:\d{2})\.(?P<frac>\d{3}) +(?P<pid>\d+) +(?P<tid>\d+)"
    r" (?P<level>[VDIWEFA]) (?P<tag>[^:]*?) ?: (?P<msg>.*)$", re.S)
# log4j & co: a date, a level, then optional thread, logger and separators.
_L4J_DATE = (r"(?P<date>\d{4}-\d{2}-\d{2}|\d{2}/\d{2}/\d{2}|\d{6})[ T]"
             r"(?P<hms>\d{2}:?\d{2}:?\d{2})(?:[.,](?P<frac>\d+))?(?P<off>Z|[+-]\d{2}:?\d{2})?")
_LOG4J = tuple(re.compile(p, re.S) for p in (
    # Spring Boot's default: 2024-01-02 03:04:05.123  INFO 4711 --- [app] [  thread] o.a.c.Logger  : msg
    rf"^{_L4J_DATE} +(?P<level>{_LEVEL_WORD}) +(?P<pid>\d+) +--- +(?:\[(?P<app>[^\]]*)\] +)?"
    rf"\[\s*(?P<thread>[^\]]*?)\s*\] +(?P<logger>\S+) +: (?P<msg>.*)$",
    # 2015-07-29 17:41:44,747 - INFO  [thread] - msg
    rf"^{_L4J_DATE} +- +(?P<level>{_LEVEL_WORD}) +\[(?P<thread>.*?)\] +- +(?P<msg>.*)$",
    # 2015-10-18 18:01:47,978 INFO [main] org.apache.Foo: msg   (logger optional)
    # 081109 203615 148 INFO dfs.DataNode$PacketResponder: msg  (a pid before the level)
    rf"^{_L4J_DATE} +(?:(?P<pid>\d+) +)?(?P<level>{_LEVEL_WORD}) +(?:\[(?P<thread>[^\]]*)\] +)?"
    rf"(?P<logger>[A-Za-z_$][\w$]*[.$][\w$.]*(?:\[[^\]]*\])?)(?: ?:| +-) (?P<msg>.*)$",
    # logback: 2024-01-02 03:04:05.123 [main] INFO  com.foo.Bar - msg
    rf"^{_L4J_DATE} +\[(?P<thread>[^\]]*)\] +(?P<level>{_LEVEL_WORD}) +(?P<logger>[\w$.]+) +- (?P<msg>.*)$",
    # Python: 2024-01-02 03:04:05,123 - name - ERROR - msg
    rf"^{_L4J_DATE} +- +(?P<logger>[\w.$-]+) +- +(?P<level>{_LEVEL_WORD}) +- (?P<msg>.*)$",
    # Python: 2024-01-02 03:04:05,123 ERROR name: msg  /  [2024-01-02 03:04:05,123] ERROR in x: msg
    # Kafka: [2018-10-17 12:04:41,718] INFO [GroupMetadataManager brokerId=10] msg (logger)
    rf"^\[?{_L4J_DATE}\]? +\[?(?P<level>{_LEVEL_WORD})\]?:? +(?:\[(?P<thread>[^\]]*)\] +)?(?P<msg>.*)$",
))
_PY_BASIC = re.compile(rf"^(?P<level>{_LEVEL_WORD}):(?P<logger>[\w.]+):(?P<msg>.*)$", re.S)
# What a line must hold for each of _LOG4J to match it (None: nothing to test first): Spring Boot's
# " --- " and the " - " the dashed layouts put between columns (a space, a dash, a space at
# least). A line lacking it is not tried against that pattern: a log4j line used to try 2.9 of
# them; a match holds it, so no line reads otherwise.
_LOG4J_NEEDS: tuple[str | None, ...] = (" ---", " - ", None, " - ", " - ", None)


def _split_first(text: str) -> tuple[str, str | None]:
    first, sep, rest = text.partition("\n")
    return first.rstrip("\r"), (rest if sep and rest.strip() else None)


def _text_record(fmt: str, message: str, rest: str | None, *, time=None, level=None,
                 scheme: str | None = None, service=None, host=None, fields=None) -> ParsedRecord:
    message = message.strip()
    level_name = normalize_level(level, scheme=scheme) if level is not None else None
    if level is None:
        # only a line whose header carries no level is guessed from its words: a header's level,
        # even one no scheme knows (kept raw for the reviewer), wins over keywords
        level_name = infer_level(message + ("\n" + rest if rest else ""))
    exception = exception_in(message + ("\n" + rest if rest else ""))
    return ParsedRecord(message=message, format=fmt, time=time, level=level, level_name=level_name,
                        service=service or None, host=host or None, exception=exception,
                        stack=rest.strip("\n") if rest else None,
                        fields={k: v for k, v in (fields or {}).items() if v is not None})


def _hms(text: str, frac: str | None = None) -> tuple[int, int, int, int]:
    digits = text.replace(":", "")
    return int(digits[0:2]), int(digits[2:4]), int(digits[4:6]), micro(frac)


def parse_syslog5424(text: str, opts: ParseOptions) -> ParsedRecord | None:
    first, rest = _split_first(text)
    m = _SYSLOG_5424.match(first)
    if not m:
        return None
    pri = int(m["pri"])
    time = parse_time(m["time"], opts) if m["time"] != "-" else None
    msg = (m["msg"] or "").removeprefix("\ufeff")
    nil = lambda v: None if v == "-" else v  # noqa: E731
    return _text_record("syslog5424", msg, rest, time=time, level=pri % 8, scheme="syslog",
                        service=nil(m["app"]), host=nil(m["host"]),
                        fields={"facility": pri // 8, "procid": nil(m["procid"]),
                                "msgid": nil(m["msgid"]), "structured_data": nil(m["sd"]),
                                "time_raw": nil(m["time"]) if time is None else None})


def parse_syslog(text: str, opts: ParseOptions) -> ParsedRecord | None:
    first, rest = _split_first(text)
    m = _SYSLOG_3164.match(first)
    if not m:
        return None
    if m["iso"]:
        time = parse_time(m["iso"], opts)
    else:
        month = MONTHS.get(m["mon"].lower())
        if month is None:
            return None
        try:
            time = with_year(month, int(m["day"]), _hms(m["hms"], m["frac"]), opts)
        except ValueError:
            return None
    pri = int(m["pri"]) if m["pri"] else None
    tag = m["tag"]
    app = tag.split("[", 1)[0] if tag else None
    return _text_record("syslog", m["msg"] or "", rest, time=time,
                        level=pri % 8 if pri is not None else None, scheme="syslog",
                        service=app, host=m["host"],
                        fields={"facility": pri // 8 if pri is not None else None,
                                "pid": m["pid"], "tag": tag, "time_raw": m["iso"] if time is None else None})


def parse_apache(text: str, opts: ParseOptions) -> ParsedRecord | None:
    first, rest = _split_first(text)
    m = _APACHE.match(first)
    if not m or m["mon"].lower() not in MONTHS:
        return None
    try:
        time = in_utc(datetime(int(m["year"]), MONTHS[m["mon"].lower()], int(m["day"]),
                               *_hms(m["hms"], m["frac"])), opts.timezone)
    except ValueError:
        return None
    return _text_record("apache", m["msg"], rest, time=time, level=m["level"],
                        fields={"module": m["module"], "pid": m["pid"], "tid": m["tid"]})


def _slash_date(date: str, hms: str, frac: str | None, opts: ParseOptions) -> datetime | None:
    y, mo, d = (int(x) for x in date.split("/"))
    try:
        return in_utc(datetime(y, mo, d, *_hms(hms, frac)), opts.timezone)
    except ValueError:
        return None


def parse_nginx(text: str, opts: ParseOptions) -> ParsedRecord | None:
    first, rest = _split_first(text)
    m = _NGINX.match(first)
    if not m or normalize_level(m["level"]) is None:
        return None
    return _text_record("nginx", m["msg"], rest, time=_slash_date(m["date"], m["hms"], None, opts),
                        level=m["level"], fields={"pid": m["pid"], "tid": m["tid"], "connection": m["conn"]})


def parse_golog(text: str, opts: ParseOptions) -> ParsedRecord | None:
    first, rest = _split_first(text)
    m = _GOLOG.match(first)
    if not m:
        return None
    time = _slash_date(m["date"], m["hms"], m["frac"], opts)
    if time is None:
        return None
    return _text_record("golog", m["msg"], rest, time=time, fields={"caller": m["file"]})


def parse_glog(text: str, opts: ParseOptions) -> ParsedRecord | None:
    first, rest = _split_first(text)
    m = _GLOG.match(first)
    if not m:
        return None
    try:
        time = with_year(int(m["mo"]), int(m["day"]), _hms(m["hms"], m["frac"]), opts)
    except ValueError:
        return None
    return _text_record("glog", m["msg"], rest, time=time, level=m["level"],
                        fields={"thread": m["tid"], "caller": m["file"]})


def parse_bracket_time(text: str, opts: ParseOptions) -> ParsedRecord | None:
    first, rest = _split_first(text)
    m = _BRACKET_TIME.match(first)
    if not m:
        return None
    try:
        time = with_year(int(m["mo"]), int(m["day"]), _hms(m["hms"]), opts)
    except ValueError:
        return None
    # the program is the client whose traffic the tool handled, not who wrote the line: one failing
    # proxy is one problem whichever browser met it, so it is a field, not the service
    return _text_record("bracket-time", m["msg"], rest, time=time, fields={"program": m["program"]})


def parse_logcat(text: str, opts: ParseOptions) -> ParsedRecord | None:
    first, rest = _split_first(text)
    m = _LOGCAT.match(first)
    if not m:
        return None
    try:
        time = with_year(int(m["mo"]), int(m["day"]), _hms(m["hms"], m["frac"]), opts)
    except ValueError:
        return None
    return _text_record("logcat", m["msg"], rest, time=time, level=m["level"], service=m["tag"].strip() or None,
                        fields={"pid": m["pid"], "tid": m["tid"], "tag": m["tag"].strip()})


def _log4j_time(m: re.Match[str], opts: ParseOptions) -> tuple[datetime | None, bool]:
    """(the time in UTC or None, whether the text was a calendar date at all)."""
    date, hms = m["date"], m["hms"]
    try:
        if "-" in date:
            y, mo, d = int(date[:4]), int(date[5:7]), int(date[8:10])
        elif "/" in date:
            y, mo, d = 2000 + int(date[:2]), int(date[3:5]), int(date[6:8])
        else:
            y, mo, d = 2000 + int(date[:2]), int(date[2:4]), int(date[4:6])
        moment = datetime(y, mo, d, *_hms(hms, m["frac"]))
    except ValueError:
        return None, False
    try:
        if m["off"]:
            return parse_time(moment.isoformat() + m["off"].replace("Z", "+00:00"), opts), True
        return in_utc(moment, opts.timezone), True
    except ValueError:
        return None, True  # a date, but not one UTC can hold (year 1 at +14:00, an offset of +25:00)


_CALLER = re.compile(r"([A-Za-z_][\w$]*)@\d+$")  # a Java caller at the end of a thread column, "Class@line"


def parse_log4j(text: str, opts: ParseOptions) -> ParsedRecord | None:
    first, rest = _split_first(text)
    for pattern, need in zip(_LOG4J, _LOG4J_NEEDS):
        if need is not None and need not in first:
            continue
        m = pattern.match(first)
        if not m:
            continue
        time, is_date = _log4j_time(m, opts)
        if not is_date:
            return None
        groups = m.groupdict()
        raw = None if time is not None else first[m.start("date"):m.end("off" if m["off"] else "hms")]
        # the logger is the component: it names the service when the line names no other
        # (ZooKeeper's thread column ends with it: "[QuorumPeer[myid=1]/...:FastLeaderElection@774]")
        caller = _CALLER.search(groups.get("thread") or "")
        return _text_record("log4j", m["msg"], rest, time=time, level=m["level"],
                            service=groups.get("app") or groups.get("logger") or (caller and caller.group(1)),
                            fields={"thread": groups.get("thread"),
                                                  "logger": groups.get("logger"), "pid": groups.get("pid"),
                                                  "time_raw": raw})
    m = _PY_BASIC.match(first)
    if m:
        return _text_record("log4j", m["msg"], rest, level=m["level"], fields={"logger": m["logger"]})
    return None


def parse_custom(text: str, opts: ParseOptions) -> ParsedRecord | None:
    if opts.pattern is None:
        return None
    first, rest = _split_first(text)
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
    return _text_record("custom", groups.get("message", ""), rest, time=time, level=groups.get("level"),
                        service=groups.get("service") or groups.get("component"), host=groups.get("host"),
                        fields={k: v for k, v in groups.items() if k not in named})


def parse_text(text: str, opts: ParseOptions) -> ParsedRecord:
    """The last resort: the line is the message; the level is a keyword guess."""
    first, rest = _split_first(text)
    return _text_record("text", first, rest)


# Order: most specific first; it breaks ties in detection and orders the line-by-line fallback.
PARSERS: dict[str, Callable[[str, ParseOptions], ParsedRecord | None]] = {
    "custom": parse_custom,
    "json": parse_json,
    "syslog5424": parse_syslog5424,
    "apache": parse_apache,
    "nginx": parse_nginx,
    "glog": parse_glog,
    "bracket-time": parse_bracket_time,
    "logcat": parse_logcat,
    "log4j": parse_log4j,
    "syslog": parse_syslog,
    "golog": parse_golog,
    "logfmt": parse_logfmt,
}
FORMATS: tuple[str, ...] = tuple(PARSERS) + ("learned", "text")
# A known format that reads less than this share of a source's sample gives way to a learnt layout
# (`pipeline.ingest.layout`) that reads more.
FAST_PATH_SHARE = 0.9
_FOOTER = re.compile(r" \(((?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*)\)$")
# a logger without a package (`Remoting`, Akka's; `main`): a name right before the message's ": "
_BARE_LOGGER = re.compile(r"^([A-Za-z_$][\w$]*(?:\[[^\]]*\])?): (?=\S)")


def parse_learned(text: str, opts: ParseOptions, layout: Any) -> ParsedRecord | None:
    """One record read with a learnt layout (`pipeline.ingest.layout.Layout`): the header's time and
    level as written, its component as the service, the message after the header."""
    first, rest = _split_first(text)
    time = None
    for m in (layout.match(first), layout.match_loose(first)):
        if m is not None:
            time = layout.read_time(m["time"], tz=opts.timezone, year=opts.year, now=opts.now)
            if time is not None:
                break
    if m is None or time is None:
        return None
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    named = {role: groups.get(group) for role, group in layout.names.items()}
    taken = set(layout.names.values()) | {"time", "message"}
    fields: dict[str, Any] = {k: v for k, v in groups.items() if k not in taken}
    for role in ("pid", "thread"):
        fields[role] = named.get(role)
    if not named.get("component") and named.get("thread"):
        caller = re.search(r"([A-Za-z_][\w$]*)@\d+$", named["thread"])  # a Java caller, "Class@line"
        named["component"] = caller.group(1) if caller else None
    if named.get("component"):
        fields["component"] = named["component"]
    level = named.get("level")
    component = named.get("component") or ""
    if level is None and "/" in component and normalize_level(component.split("/", 1)[0]) is not None:
        level, named["component"] = component.split("/", 1)  # "warning/PluginNotificationTask:" (Icinga)
        fields["component"] = named["component"]
    if level is not None and len(level) == 1 and not level.isalnum():
        from pipeline.ingest.layout import MARK_LEVELS

        level = MARK_LEVELS.get(level, level)
    record = _text_record("learned", groups.get("message") or "", rest, time=time, level=level,
                          service=named.get("component"), host=named.get("host"), fields=fields)
    if level is not None and record.level_name is None and level.lower() in ("system", "statement", "detail",
                                                                               "hint", "context"):
        record.level_name = "INFO"  # MySQL's System, PostgreSQL's STATEMENT/DETAIL/HINT/CONTEXT lines
    return record


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

    def detect(self, sample: Iterable[str], *, limit: int = SAMPLE_LINES) -> str:
        """Pick the format that parses most of the first `limit` non-blank records; remember it."""
        lines, more = [], []
        for line in sample:
            if line.strip():
                (lines if len(lines) < limit else more).append(_clean(line))
                if len(lines) + len(more) >= max(limit, LEARN_LINES):
                    break
        counts = {name: 0 for name in PARSERS}
        for line in lines:
            for name, parser in PARSERS.items():
                try:
                    if parser(line, self.options) is not None:
                        counts[name] += 1
                except (ValueError, OverflowError):
                    pass  # a line no parser can read says nothing about the file's format
        best = max(PARSERS, key=lambda name: counts[name])  # first in PARSERS wins a tie
        self.format = best if counts[best] > 0 else "text"
        self.share = counts[best] / len(lines) if lines else 0.0
        self.sample_size = len(lines)
        if lines and self.share < FAST_PATH_SHARE and self.format not in ("json", "logfmt", "custom"):
            # no known format reads (nearly) every line: learn this source's own layout
            from pipeline.ingest.layout import learn

            layout = learn(lines + more)
            if layout is not None and layout.share > self.share:
                self.format, self.layout, self.share = "learned", layout, layout.share
        self._learn_footer(lines)
        self._learn_logger_column(lines)
        return self.format

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

    def parse(self, text: str) -> ParsedRecord:
        """One record → ParsedRecord; InvalidEvent only when the text is binary."""
        record = self._parse(text)
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
        if self.layout is not None and self.format == "learned":
            try:
                record = parse_learned(text, self.options, self.layout)
            except (ValueError, OverflowError):
                record = None
            if record is not None:
                return record
        for name in _order(self.format):
            record = PARSERS[name](text, self.options)
            if record is not None:
                return record
        return parse_text(text, self.options)


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
