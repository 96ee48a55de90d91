"""What every format's parser returns (`ParsedRecord`), how a source is read (`ParseOptions`), and
what text records share: the exception a text names and the record a text line becomes."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any

from pipeline.ingest.key_roles import level_in_pairs
from pipeline.ingest.levels import CUT_LEVELS, JVM_FLAG, Level, infer_level, leading_level, normalize_level, prefixed_level
from pipeline.ingest.timestamps import TimeRules, zone_named
from pipeline.ingest.program_tags import program_tag


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
    """How to read one source: its time rules, `pattern` (a user regex with named groups, module doc)
    and what its structured records' keys hold (`key_roles`)."""

    pattern: re.Pattern[str] | None = None
    # the roles a structured record's keys were found to hold, by key set (pipeline/ingest/key_roles.py):
    # remembered for the source these options read
    key_roles: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    @staticmethod
    def make(*, timezone_name: str | tzinfo | None = None, year: int | None = None,
             pattern: str | re.Pattern[str] | None = None, now: datetime | None = None) -> ParseOptions:
        compiled = re.compile(pattern) if isinstance(pattern, str) else pattern
        if compiled is not None and "message" not in compiled.groupindex:
            raise ValueError("a custom log pattern needs a named group 'message', e.g. (?P<message>.*)")
        return ParseOptions(timezone=zone_named(timezone_name), year=year, now=now, pattern=compiled)


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


# `%FACILITY[-SUBFACILITY]-SEVERITY-MNEMONIC` (Cisco IOS, ASA, NX-OS and the devices that copy them)
_MNEMONIC = re.compile(r"(?:^|[\s:])%[A-Z][A-Z0-9_]{1,31}(?:-[A-Z0-9_]{1,31})?-([0-7])-[A-Z0-9_]{1,40}(?::|\s|$)")


def split_first(text: str) -> tuple[str, str | None]:
    """A record's first line and its continuation lines (None when there are none)."""
    first, sep, rest = text.partition("\n")
    return first.rstrip("\r"), (rest if sep and rest.strip() else None)


_KLOG = re.compile(r"([IWEF])\d{4} \d{2}:\d{2}:\d{2}\.\d{6}\s+\d+ ([\w.-]+:\d+)\] ")
_JOINED_LEVEL = re.compile(r"([A-Z]{4})\[(?:\d{1,9}|[\d:.|/ -]{5,40})\] +(?=\S)")
_BAR_LEVEL = re.compile(r"([A-Z]{3,8}) *\|")
_BRACKET_LEVEL = re.compile(r"\[(TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL|PANIC)\] ")
_KLOG_LEVELS = {"I": "INFO", "W": "WARN", "E": "ERROR", "F": "FATAL"}


def _bracketed_level(message: str) -> str | None:
    """The first `[Level]` among a message's first eight columns (a word of letters, capitalised),
    when a level name: written there by the header, not guessed."""
    for token in message.split(None, 8)[:8]:

        word = token.rstrip(":")
        if word[:1] == "[" and word[-1:] == "]" and word[1:2].isupper() and 3 <= len(word) <= 14 \
                and word[1:-1].isalpha() and normalize_level(word[1:-1]) is not None:
            return word[1:-1]
    return None


def text_record(fmt: str, message: str, rest: str | None, *, time=None, level=None,

                 scheme: str | None = None, service=None, host=None, fields=None) -> ParsedRecord:
    """A text line's record: the level normalised (or guessed from its words when the header has
    none), the exception its text names, the continuation lines as the stack, empty fields dropped."""
    message = message.strip()
    if not service and message[:1].isalnum() and "]: " in message[:140]:
        tag = program_tag(message)  # `host program[pid]: msg` after another layout's header (ingest/program_tags.py)
        if tag is not None and not (fields or {}).get("pid"):
            host, service, message = host or tag[0], tag[1], tag[3]
            fields = {**(fields or {}), "pid": tag[2]}
    if level is None and ("%" in message or (isinstance(service, str) and service[:1] == "%")):
        # a Cisco-style message code writes its syslog severity: `%ASA-6-302013:`, `%LINK-3-UPDOWN:`
        # (in the message, or read as a syslog tag)
        code = _MNEMONIC.search(message, 0, 200) or (_MNEMONIC.match(service) if service else None)
        if code is not None:
            level, scheme = int(code.group(1)), "syslog"
    if level is None and "=" in message:
        # a key=value body that writes its level (`level=warning`, `pri=6`): the record's own level
        pair = level_in_pairs(message)
        if pair is not None:
            level, scheme = pair[0], pair[1] or scheme
    if level is None and message[:1] == "[":
        # a bracketed level word opens the line (CoreDNS: `[ERROR] plugin/errors: ...`, `[INFO] ...`)
        bracket = _BRACKET_LEVEL.match(message)
        if bracket is not None:
            level = bracket.group(1)
    if level is None and message[:1].isupper() and "|" in message[:12]:
        # a level word as the first `|` column (ActiveMQ's audit log: `WARN  | admin requested ...`)
        column = _BAR_LEVEL.match(message)
        if column is not None and normalize_level(column.group(1)) is not None:
            level = column.group(1)
    if level is None and message[4:5] == "[" and message[:4].isupper():
        # a level in four capitals joined to the seconds since the program started (logrus's text
        # formatter: `WARN[0012] msg`), or to a stamp of digits and punctuation (log15's terminal
        # format: `DBUG[03-01|08:00:01] msg`): the level, and the message after the bracket; any
        # four-capital level name, or cut of one, as a level column writes it
        joined = _JOINED_LEVEL.match(message)
        if joined is not None and (joined.group(1) in CUT_LEVELS or normalize_level(joined.group(1)) is not None):
            level, message = joined.group(1), message[joined.end():]
    if level is None and "\t" in message[:40]:
        # a console logger's tab columns: a level word as the column after one token (zap's console
        # encoder: `<time>\t<level>\t<logger>\t<message>`, its time in a spelling no layout reads)
        columns = message.split("\t", 2)
        if len(columns) == 3 and columns[0] and " " not in columns[0] and columns[1].isalpha() \
                and 3 <= len(columns[1]) <= 11 and normalize_level(columns[1]) is not None:
            level = columns[1]
    if level is None and "[" in message[:160]:
        # a bracketed level word among the line's first columns, after a pid, a thread or a channel
        # (gunicorn's `[17] [INFO] msg`, Ceph's `mon.0 10.0.0.4:6789/0 7 : audit [DBG] msg`)
        level = _bracketed_level(message)
    if level is None and message[:1] in "IWEF":
        # a klog header (Kubernetes components: `I0602 17:00:03.551210  990 prober.go:107] msg`)
        # writes the level as its first letter: read, not guessed from the words after it
        klog = _KLOG.match(message)
        if klog is not None:
            level, message = _KLOG_LEVELS[klog.group(1)], message[klog.end():].strip() or message
            fields = {**(fields or {}), "caller": klog.group(2)}
    if level is None and isinstance(service, str) and service.isupper() and 3 <= len(service) <= 8 \
            and normalize_level(service) is not None:
        # a header's component that is an upper-case level word is the line's level, not a program
        # (`Apr  4 09:57:48 host WRN: msg`, read as syslog's `host tag:`)
        level, service = service, None
    if level is None and isinstance(service, str) and service.count(":") == 1:
        # a component colon-joined to its level, either way round (`Zigbee2MQTT:info`, Python's
        # default `INFO:root`): the level is written there; the other part names the component
        before, after = service.split(":")
        for word, other in ((after, before), (before, after)):
            if 3 <= len(word) <= 11 and word.isalpha() and other and normalize_level(word) is not None:
                level, service = word, other
                break
    named = None
    if level is None and ":" in message[:240]:
        # a level word in capitals closed by a colon after a header's other columns (PostgreSQL's
        # `log_line_prefix`: `[1127]: [8-1] db=app,user=bob LOG:  msg`): the level, the message after it
        found = prefixed_level(message)
        if found is not None:
            level, named = found[0], found[1]
            fields = {**(fields or {}), "prefix": message[:found[2] - len(found[0]) - 1].rstrip(" :-") or None}
            message = message[found[2]:].strip()
    if level is None and (message[:1].isalpha() or message[:1] in "[<("):
        # a level word opens the line (`INFO: connected`, `WARN retrying`, `[warn] x`): written, not guessed
        # from the words after it (`INFO request failed with error` is an INFO line)
        level = leading_level(message)
    level_name = named or (normalize_level(level, scheme=scheme) if level is not None else None)
    if level is None:
        # only a line whose header carries no level is guessed from its words: a header's level,
        # even one no scheme knows (kept raw for the reviewer), wins over keywords
        level_name = infer_level(message + ("\n" + rest if rest else ""))
    exception = exception_in(message + ("\n" + rest if rest else ""))
    return ParsedRecord(message=message, format=fmt, time=time, level=level, level_name=level_name,
                        service=service or None, host=host or None, exception=exception,
                        stack=rest.strip("\n") if rest else None,
                        fields={k: v for k, v in (fields or {}).items() if v is not None})
