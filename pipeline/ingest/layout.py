"""A source's line layout, learnt from its first lines: where the header ends and the message begins,
and which header fields are the time, the level, the component, the host and the pid/thread.

`learn(sample)` looks at the first lines of a file (or a Splunk sourcetype's first events):
- it locates a timestamp among the leading tokens of each line, in any of the spellings loggers use
  (`pipeline.ingest.timestamps.TIME_SHAPES`), and keeps the spelling and the position most lines
  agree on;
- it splits the header into columns (space-, `|`- or `,`-separated; a `[...]` or `(...)` group is one
  column) and reads each column's statistics over the sample: one whose values are level words and
  take few values is the level; digits are a pid/thread; a dotted or `name[pid]:` token is the
  logger/component; a column of source locations (`CassandraDaemon.java:687`, `(Foo.java:42)`) is the
  code location (`caller`), never the component; a column of host-like names with many values is the
  host; `-`, `---`, `:` are separators;
- the header ends after the last column that is a time, a level or a `tag:`, plus the pid, thread,
  logger and separator columns that follow it on (nearly) every line.

The result, a `Layout`, is a regex with named groups (`time`, `level`, `component`, `host`, `pid`,
`thread`, `message`, and `f<N>` for the other header columns) and the time spelling that reads the
`time` group; `Layout.parse` turns one line into a `ParsedRecord` (format `learned`). A layout is
only kept when it reads at least `MIN_SHARE` of the sample's lines with a time. Its times are read
by `pipeline.ingest.timestamps` in the spelling learnt; a spelling no shape knows is read by
python-dateutil's parser, which is then used for every line of that source.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Iterable

from pipeline.ingest.code_location import is_code_location
from pipeline.ingest.key_roles import LEVEL_KEYS
from pipeline.ingest.levels import COLUMN_INFO, LEVELS, Level, abbreviated_level, normalize_level
from pipeline.ingest import date_order
from pipeline.ingest.timestamps import CLOCK, CLOCK_SHAPE, DAY_FIRST_SHAPE, SHAPE_RE, TIME_SHAPES, TIME_SHAPES_BY_NAME, dateutil_time, read_shape, spaced, time_from_groups

MIN_SHARE = 0.6  # a layout must read this share of the sample (with its own time) to be used
HEADED_SHARE = 0.3  # or this share, when the time opens those lines and the others continue records
MAX_LEAD_TOKENS = 12  # a timestamp is looked for among this many leading columns
SAMPLE = 200
EXTRA = "+extra"  # a time shape's mark: the time shares its bracket with other words
LEAD = "+lead"  # and the bracket opens with a level before the time


# -- tokens ------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\[(?:[^\]\[]|\[[^\]\[]*\]){0,200}\]:?|\((?:[^()]|\([^()]*\)){0,200}\):?|\S+")
_SEPARATORS = {"|": r"\s*\|\s*", ",": r"\s*,\s*", "\t": r" *\t\s*"}


def _tokens(line: str, sep: str | None) -> list[tuple[int, int]]:
    if sep is None:
        return [m.span() for m in _TOKEN.finditer(line)]
    spans, pos = [], 0
    for part in line.split(sep):
        spans.append((pos, pos + len(part)))
        pos += len(part) + len(sep)
    return spans


_BRACKETED = re.compile(r"\[[^\]]*\]")


def _separator(lines: list[str]) -> str | None:
    """`|` or a tab when (nearly) every line's header is cut by it at least twice (outside `[...]`)."""
    for sep in ("|", "\t"):
        counts = [_BRACKETED.sub("", line[:200]).count(sep) for line in lines]  # uWSGI's `[pid: 7|app: 0]` is one column
        if counts and sum(1 for c in counts if c >= 2) >= 0.9 * len(counts):
            return sep
    return None


def _strip(token: str) -> str:
    return _KEYED.sub("", token.strip("[](){}:,;=!* ")).strip('"')


# a level column may name itself: `level:INFO`, `[severity=warn]` (a key naming a level, `=` or `:`)
_KEY = "(?:" + "|".join(sorted(LEVEL_KEYS, key=lambda k: (-len(k), k))) + ')[=:]"?'
_KEYED = re.compile(r"^(?i:" + _KEY + ")")


# debug2: syslog's numbered debug levels; `=ERROR`: a run of `=` rules a header off (Erlang's
# `=ERROR REPORT==== 12-Mar-2019::10:00:00 ===`)
# a level decorated as loggers write it: in brackets of any kind (`[W]`, `<warn>`, `{WARN}`), or
# followed by a colon or an exclamation mark (`WARN:`, Telegraf's `W!`)
# or between asterisks, as Apache Sling and Adobe Experience Manager write it (`*ERROR*`, `*INFO*`)
_LEVELISH = re.compile(r"^(?:=*[\[<({]?\s*(?i:" + _KEY + r")?[A-Za-z]{1,12}\d?\"?\s*[\]>)}]?=*[:!]?|\*[A-Za-z]{1,12}\*)$")
_PID = re.compile(r"^[\[(]?\d{1,10}(?:[:#/]\d{1,10})?[\])]?:?$")
_LOGGER = re.compile(r"^[A-Za-z_$][\w$-]*(?:[.:/][\w$<>\[\]/-]+)+:?$")
_TAG = re.compile(r"^[A-Za-z_/][\w./()@-]*(?:\[[^\]]*\])?:$")
_HOST = re.compile(r"^[A-Za-z0-9][\w.:/-]*[A-Za-z0-9]$")
_WORD = re.compile(r"^[A-Za-z_][\w.$-]*$")
_MNEMONIC = re.compile(r"^%[A-Z][A-Z0-9_]*-(?:[A-Z0-9_]+-)?\d-[A-Z0-9_]+:?$")  # Cisco's %ASA-6-110002:
_SEP = {"-", "--", "---", ":", "|", "::", "-->", "=>", ">"}
# Redis writes its level as one symbol: . debug, - verbose, * notice, # warning
MARK_LEVELS = {".": "DEBUG", "-": "DEBUG", "*": "INFO", "#": "WARN"}
_LETTER_LEVELS = set("VDIWEFACT")  # logcat / glog single-letter levels, a level name's initial (C critical, T trace)
# words a level column writes beside level words that name no level elsewhere: MySQL's System,
# PostgreSQL's LOG/STATEMENT/DETAIL/HINT/CONTEXT, Apple's unified log's Default (its notice level) and
# loguru's SUCCESS (between INFO and WARNING): read as INFO in such a column only (COLUMN_INFO). The
# last two make no column a level column by themselves (a column of `default` is a namespace or a
# profile): only beside level words (`_column_role`)
_BESIDE_LEVELS = frozenset({"default", "success"})
_EXTRA_LEVELS = {"information", "notice", "note", "sev"} | (COLUMN_INFO - _BESIDE_LEVELS)


def _spells_levels(values: list[str]) -> bool:
    """Whether three in four values are level words naming at least three different levels."""
    known = [normalize_level(_strip(v)) for v in values if _is_level(v)]
    return len(known) >= 0.75 * len(values) and len(set(known)) >= 3


def _letter_column(values: list[str]) -> bool:
    """Whether a column of one-letter values is a level column (glog's `I`, Python's `%(levelname).1s`,
    a console writer's `i`/`w`/`e`), by the evidence of all its lines, since a column of letters may
    be something else (a CRI tag `P`/`F`, a stream `O`/`E`, a thread or shard letter):
    - every value is a level's initial (V D I W E F A C T), decorated as a level word is, and all in
      one case: a value no level starts with (`P`, `O`, `B`) makes the column something else;
    - two or more different letters, or one letter alone only when it is INFO or lower (a file
      whose every line is `F` or `E` is a tag's column, not a log of fatal lines only); a single
      line (a layout learnt from one line while reading) has no column to judge: an initial in
      capitals is read there, as before."""
    if not values or not all(_LEVELISH.match(v) for v in values):
        return False
    bare = {_strip(v) for v in values}
    if not all(len(b) == 1 and b.upper() in _LETTER_LEVELS for b in bare):
        return False
    if not (all(b.isupper() for b in bare) or all(b.islower() for b in bare)):
        return False
    if len(bare) >= 2:
        return True
    if len(values) == 1:
        return next(iter(bare)).isupper()  # one line (a layout learnt while reading) shows no column: its capital initial is read
    level = normalize_level(next(iter(bare)))
    return level is not None and LEVELS.index(level) <= LEVELS.index("INFO")


def _level_vocabulary(values: list[str]) -> bool:
    """Whether a column's values are a small vocabulary of levels written in the logger's own cuts
    (`FATL`, `EROR`, `WRNG` beside `INFO`): every value a level word or an abbreviation of one
    (`levels.abbreviated_level`), in one case, at least two different levels, and at least one of
    them a level word any logger writes, so that a column of short words that merely happen to
    cut a level's name (`war`, `dug`) is not taken."""
    bare = [_strip(v) for v in values]
    if not bare or not all(_LEVELISH.match(v) for v in values):
        return False
    if not (all(b.isupper() for b in bare) or all(b.islower() for b in bare)):
        return False
    read = [normalize_level(b) if len(b) > 1 else None for b in bare]
    known = sum(1 for r in read if r is not None)
    levels = {r or abbreviated_level(b) for r, b in zip(read, bare)}
    return known > 0 and None not in levels and len(levels) >= 2


_SEVERITY = re.compile(r"^<([0-7])>:?$")


def _severity_column(values: list[str]) -> bool:
    """Whether a column is a syslog severity in angle brackets (`<6>`, the kernel's and systemd's
    `SyslogLevelPrefix` before a message): every value `<0>`..`<7>`, and, as for initials, two or
    more different ones or one alone only when it is INFO or lower (`<5>`-`<7>`): a column of `<3>`
    on every line is a tag, not a log of errors only."""
    found = [_SEVERITY.match(v) for v in values]
    if not values or not all(found):
        return False
    numbers = {int(m[1]) for m in found if m}
    return len(numbers) >= 2 or min(numbers) >= 5


def column_level(value: str) -> Level | None:
    """A level column's value as a level: any spelling `normalize_level` knows, or a cut of a level's
    name (the column is a level column: its position says so, `_column_role`)."""
    return normalize_level(value) or abbreviated_level(value)


def column_value_is_level(value: str) -> bool:
    """Whether a level column's value (as its group captured it) reads as a level: a level word, a
    cut of one (`FATL`), an initial in either case or a one-symbol mark."""
    return value in MARK_LEVELS or value.upper() in _LETTER_LEVELS or _is_level(value) or column_level(value) is not None


def _is_letter_level(token: str) -> bool:
    """A level written as its initial (glog's `I`, logcat's `W`), bare or decorated as any level
    word is (`[W]`, `(E)`, `<I>`, `D:`)."""
    return _strip(token) in _LETTER_LEVELS and bool(_LEVELISH.match(token))


def _is_level(token: str) -> bool:
    bare = _strip(token)
    return bool(_LEVELISH.match(token)) and (normalize_level(bare) is not None or bare.lower() in _EXTRA_LEVELS
                                            and not (bare.islower() and bare in COLUMN_INFO)) and len(bare) > 1
    # (a column word in lower case, `system`, `log`, `detail`, is prose: its writers write it `LOG`, `[System]`)


# -- the layout --------------------------------------------------------------------------------

@dataclass
class Layout:
    """A learnt layout: `pattern` (a regex with named groups) and how its `time` group is read."""

    pattern: str
    time_shape: str | None
    columns: list[str]  # the header columns' roles in order, e.g. ["time", "pid", "level", "component"]
    separator: str | None = None
    share: float = 0.0  # share of the sample this layout reads
    sample_size: int = 0
    source: str = "learned"  # "learned" or "pattern" (INCIDENTIQ_LOG_PATTERN)
    names: dict[str, str] = field(default_factory=dict)  # role (level, component...) -> group name
    loose: list[str] = field(default_factory=list)  # looser patterns, for lines the full one misses
    _loose: list[re.Pattern[str]] | None = field(default=None, repr=False, compare=False)
    _regex: re.Pattern[str] | None = field(default=None, repr=False, compare=False)

    @property
    def regex(self) -> re.Pattern[str]:
        if self._regex is None:
            self._regex = re.compile(self.pattern, re.S)
        return self._regex

    def as_dict(self) -> dict:
        return {"pattern": self.pattern, "time_shape": self.time_shape, "columns": self.columns,
                "separator": self.separator, "share": round(self.share, 3), "sample_size": self.sample_size,
                "source": self.source, "names": self.names, "loose": self.loose}

    @staticmethod
    def from_dict(data: dict) -> Layout:
        return Layout(pattern=data["pattern"], time_shape=data.get("time_shape"), columns=list(data.get("columns", [])),
                      separator=data.get("separator"), share=float(data.get("share", 0.0)),
                      sample_size=int(data.get("sample_size", 0)), source=data.get("source", "learned"),
                      names=dict(data.get("names", {})),
                      loose=[data["loose"]] if isinstance(data.get("loose"), str) else list(data.get("loose") or []))

    def match(self, line: str) -> re.Match[str] | None:
        return self.regex.match(line)

    def match_loose(self, line: str) -> re.Match[str] | None:
        if self._loose is None:
            self._loose = [re.compile(p, re.S) for p in self.loose]
        for regex in self._loose:
            m = regex.match(line)
            if m is not None:
                return m
        return None

    def read_time(self, text: str, *, tz: Any = timezone.utc, year: int | None = None,
                  now: datetime | None = None) -> datetime | None:
        return read_shape(self.time_shape, text, tz=tz, year=year, now=now)

    def split(self, line: str) -> dict[str, str] | None:
        """A line's header fields and message, named by role (None when the layout does not fit it)."""
        m = self.match(line)
        if m is None:
            return None
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        named = {role: groups[g] for role, g in self.names.items() if groups.get(g)}
        taken = set(self.names.values())
        rest = {k: v for k, v in groups.items() if k not in taken and k not in ("time", "message")}
        return {"time": groups.get("time"), **named, **rest, "message": groups.get("message", "")}


# spellings of digits alone whose order another shape reads otherwise: a match that is no calendar date
# (`03/19/26` as yy/MM/dd) gives way to the next shape (MM/dd/yy)
_ORDERED_DIGITS = frozenset(("yy-slashed", "yy-compact"))


def _find_time(line: str, spans: list[tuple[int, int]]) -> tuple[int, int, str] | None:
    """(first column, column count, shape) of the best timestamp among the leading columns."""
    best: tuple[int, int, int, str] | None = None
    for i in range(min(MAX_LEAD_TOKENS, len(spans))):
        for n in range(1, 7):
            if i + n > len(spans):
                break
            text = line[spans[i][0]:spans[i + n - 1][1]].strip()  # a `|` column's blanks are not the time's
            text = text.strip("[]()").rstrip(",;") if n == 1 or text.startswith(("[", "(")) else text.rstrip(",;")
            if n > 1 and text.startswith(("[", "(")):
                text = text[1:]
            text = text.rstrip("]):")
            for shape in TIME_SHAPES:
                found = SHAPE_RE[shape.name].match(text)
                if found and (shape.name not in _ORDERED_DIGITS or time_from_groups(found.groupdict()) is not None):
                    score = shape.score
                    if best is None or score > best[2] or (score == best[2] and i == best[0] and n > best[1]):
                        best = (i, n, score, shape.name)
                    break
    for i in range(min(MAX_LEAD_TOKENS, len(spans))) if best is None else ():
        # a bracket holding the time and more (Ruby's Logger: `[2024-03-01T08:00:00.123456 #1234]`,
        # Serilog's console: `[08:00:00 INF]`, a time of day alone)
        words = line[spans[i][0]:spans[i][1]].rstrip(":")
        words = words[1:-1].split() if words[:1] in "[(" and words[-1:] in "])" else []
        # or after the level that opens the bracket (Tornado's `[I 240301 08:00:00 web:2243]`)
        lead = 1 if len(words) >= 3 and (_is_level(words[0]) or _is_letter_level(words[0])) else 0
        for k in range(len(words) - 1 + lead, lead, -1):
            # a colon may close the time (Celery's `[2024-03-01 08:00:01,123: INFO/MainProcess]`)
            stamp = " ".join(words[lead:k]).removesuffix(":")
            shape_name = next((t.name for t in (*TIME_SHAPES, CLOCK_SHAPE) if SHAPE_RE[t.name].match(stamp)), None)
            if shape_name is not None:
                return i, 1, shape_name + (LEAD if lead else "") + EXTRA
    if best is None:
        # a spelling no shape knows ("12-Mar-2024 10:00:00", "Tuesday, 12 March 2024 10:00:00 PM"):
        # the shortest run of leading columns with a clock that python-dateutil reads as a full date
        # and time (and an AM/PM after it)
        for i in range(min(4, len(spans))):
            for n in range(1, min(6, len(spans) - i) + 1):
                text = line[spans[i][0]:spans[i + n - 1][1]].strip("[]()")
                if CLOCK.search(text) and dateutil_time(text) is not None:
                    if i + n < len(spans) and line[spans[i + n][0]:spans[i + n][1]].upper() in ("AM", "PM"):
                        n += 1
                    return i, n, "dateutil"
    if best is None:
        # a time of day alone, as the line's first column (`08:00:05.123 [main] INFO ...`) or after a
        # level word (`INFO  08:00:05,123 msg`); with its AM/PM column (`1:02:03 AM`)
        first = 1 if len(spans) > 1 and _is_level(line[spans[0][0]:spans[0][1]]) else 0
        for i in range(first + 1) if spans else ():
            text = line[spans[i][0]:spans[i][1]].strip("[]()").rstrip(",;:")
            after = line[spans[i + 1][0]:spans[i + 1][1]].rstrip(",;:]") if i + 1 < len(spans) else ""
            # its AM/PM column first: a clock alone would leave it a column of its own before the level
            if after.upper() in ("AM", "PM") and SHAPE_RE[CLOCK_SHAPE.name].match(f"{text.lstrip('[(')} {after}"):
                return i, 2, CLOCK_SHAPE.name
            if SHAPE_RE[CLOCK_SHAPE.name].match(text):
                return i, 1, CLOCK_SHAPE.name
    return None if best is None else (best[0], best[1], best[3])



def _column_role(values: list[str], total: int) -> str:
    """A header column's role from its values over the sample."""
    if not values:
        return "other"
    share = len(values) / total
    distinct = len(set(values))
    few = distinct <= max(3, min(12, total // 4)) or distinct <= 0.05 * len(values)
    def most(test: Callable[[str], bool]) -> bool:
        return sum(1 for v in values if test(v)) >= 0.9 * len(values)
    if most(lambda v: v in _SEP):
        return "sep"
    if most(lambda v: bool(_MNEMONIC.match(v))):
        return "mnemonic"  # a network device's `%FACILITY-SEVERITY-MNEMONIC:`: the message opens with it
    if distinct <= 4 and most(lambda v: len(v) == 1 and not v.isalnum()):
        return "mark"  # a one-symbol column (redis's `* . - #`)
    # level words: few values (a level column rarely holds more than the eight a logger writes)
    # (or three in four rows, when they spell at least three different levels: a name the list lacks
    # among them does not make the column something else)
    if (few or distinct <= 8) and share >= 0.9 and (most(_is_level) or _letter_column(values)
                                                    or (most(lambda v: _is_level(v) or _strip(v).lower() in _BESIDE_LEVELS)
                                                        and any(map(_is_level, values)))
                                                    or _spells_levels(values) or _level_vocabulary(values)
                                                    or _severity_column(values)):
        return "level"
    if most(lambda v: bool(_PID.match(v))):
        return "pid"
    if most(lambda v: bool(_TAG.match(v))):
        return "tag"
    if most(is_code_location):
        return "caller"  # a source location (`CassandraDaemon.java:687`, `(Foo.java:42)`): where, never who
    if most(lambda v: v.startswith("[") and v.rstrip(":").endswith("]")):
        inner = [v.rstrip(":")[1:-1].strip() for v in values]
        if sum(1 for v in inner if re.fullmatch(r"[A-Za-z_$][\w$]*(?:\.[\w$]+)+", v)) >= 0.9 * len(inner):
            return "blogger"  # a bracketed logger name: "[o.e.c.m.MetaDataCreateIndexService]"
        return "thread"
    if most(lambda v: v.startswith("(") and v.rstrip(":").endswith(")")):
        return "paren"
    if most(lambda v: bool(_LOGGER.match(v))) and (few or any(c.isalpha() for c in values[0])) \
            and not most(lambda v: bool(re.match(r"^[\d.:/]+$", v))):
        return "logger"
    if few and most(lambda v: bool(_WORD.match(v))):
        return "word"
    if most(lambda v: bool(_HOST.match(v))) and most(lambda v: any(c.isalpha() for c in v)) \
            and most(lambda v: any(c.isdigit() or c in "-." for c in v)):
        return "host"
    return "other"


_COLUMN_RE = {
    "level": r"=*[\[<({*]?\s*(?i:" + _KEY + r")?(?P<{g}>[A-Za-z]{1,12}\d?|(?<=<)[0-7](?=>))\"?\s*[\]>)}*]?=*[:!]?",
    "pid": r"[\[(]?(?P<{g}>\d+(?:[:#/]\d+)?)[\])]?:?",
    "tag": r"(?P<{g}>[^\s\[:]+)(?:\[(?P<{g}p>[^\]]*)\])?:",
    "thread": r"\[\s*(?P<{g}>(?:[^\]\[]|\[[^\]\[]*\])*?)\s*\]:?",
    "paren": r"\((?P<{g}>[^)]*)\):?",
    "logger": r"(?P<{g}>\S+?):?",
    "blogger": r"\[\s*(?P<{g}>[^\]\s]*)\s*\]:?",
    "word": r"(?P<{g}>[\w.$-]+?):?",
    "host": r"(?P<{g}>\S+)",
    "sep": r"(?:-{1,3}|:|\||::|-->|=>|>)",
    "mark": r"(?P<{g}>[^\w\s])",
    "caller": r"[\[({<]?(?P<{g}>[^\s\[\](){}<>]+?)[\])}>]?:?",
    "other": r"(?P<{g}>\[[^\]]*\]|\S+)",
}
_TRAILING = {"pid", "thread", "logger", "blogger", "sep", "tag", "paren", "word", "mark", "caller"}


def _timed(lines: list[str], sep: str | None) -> list[tuple[str, list[tuple[int, int]], tuple[int, int, str]]]:
    """Each line whose tokens (cut at `sep`, else at blanks) show a time: (line, spans, where)."""
    found = []
    for line in lines:
        spans = _tokens(line, sep)
        hit = _find_time(line, spans)
        if hit is not None:
            found.append((line, spans, hit))
    return found


_SLASHED_PAIR = re.compile(r"\[?(\d{1,2})/(\d{1,2})/")


def _day_first(texts: list[str]) -> bool:
    """Whether a sample's slashed dates put the day first: some first number cannot be a month, and
    no second one cannot be (then every line of the source is read day first, `06/12/2026` too)."""
    pairs = [(int(m[1]), int(m[2])) for m in map(_SLASHED_PAIR.match, texts) if m]
    return any(a > 12 for a, _ in pairs) and all(b <= 12 for _, b in pairs)


_TWO_DIGIT_TRIPLE = re.compile(r"\[?(\d\d)/(\d\d)/(\d\d)(?!\d)")
_ORDER_SHAPES = {"mdy": "month-day-slashed", "dmy": DAY_FIRST_SHAPE.name}


def _two_digit_order(texts: list[str]) -> str:
    """The shape of a sample's `nn/nn/nn` dates: yy/MM/dd, MM/dd/yy or dd/MM/yy as their numbers
    together say (`date_order.decide`); yy/MM/dd where they cannot tell."""
    triples = [m.groups() for m in map(_TWO_DIGIT_TRIPLE.match, texts) if m]
    return _ORDER_SHAPES.get(date_order.decide(triples) or "", "yy-slashed")


_PRI = re.compile(r"<(\d{1,3})>:?")  # Cisco devices write a colon after it: `<166>:2018-06-27T12:17:46Z: %ASA-...`


def learn(sample: Iterable[str], *, limit: int = SAMPLE) -> Layout | None:
    """The layout most of `sample`'s lines share, or None when no timestamp leads them."""
    lines = [ln.rstrip("\r\n") for ln in sample if ln.strip()][:limit]
    lines = [ln for ln in lines if not ln[:1].isspace()]  # continuation lines say nothing of the header
    if len(lines) < 1:
        return None
    pris = [_PRI.match(line) for line in lines]
    if sum(1 for m in pris if m) >= 0.9 * len(lines):
        # a syslog priority (RFC 3164 section 4.1.1) glued before whatever header the sender writes
        # (`<134>2026/06/12 13:29:11.589 app[12]: ...`): the layout is learnt from what follows it,
        # and the priority's severity is the level of a line whose header has none
        layout = _learn([line[m.end():].lstrip() if m else line for line, m in zip(lines, pris)], None)
        return _after_priority(layout) if layout is not None else None
    layout = _learn(lines, None)
    if layout is None and sum(1 for line in lines if line.count(",") >= 2) >= 0.9 * len(lines):
        # comma-separated header columns (a CSV row without a header row); tried only where the
        # blank-cut columns show no layout, since most messages hold commas
        layout = _learn(lines, ",")
    return layout


def _after_priority(layout: Layout) -> Layout:
    """`layout` behind an optional `<PRI>` (read by `learned_record` as the syslog severity)."""
    def behind(pattern: str) -> str:
        return r"^(?:<(?P<pri>\d{1,3})>:?\s*)?" + pattern.removeprefix("^")
    layout.pattern, layout.loose = behind(layout.pattern), [behind(p) for p in layout.loose]
    layout._regex, layout._loose = None, None
    return layout


def _learn(lines: list[str], sep: str | None) -> Layout | None:
    """`learn` on non-blank header lines, their columns cut at `sep` (None: found from the lines)."""
    forced = sep is not None
    sep = sep if forced else _separator(lines)
    found = _timed(lines, sep)
    if sep is not None and not forced and len(found) < MIN_SHARE * len(lines):
        # the `|`s were inside the message (`action=EXEC|decision=ALLOW|...`), not between header
        # columns: the lines whose time their blank-cut tokens show say so
        blank = _timed(lines, None)
        if len(blank) > len(found):
            sep, found = None, blank
    if not found:
        return None
    (start, width, shape), count = Counter(hit for _, _, hit in found).most_common(1)[0]
    total = len(lines)
    if len(found) < MIN_SHARE * total:
        # records of several lines whose first holds the header (java.util.logging's `Dec 30, 2020
        # 11:30:40 AM org.x.Y method` + `SEVERE: message`): the time opens the line, in one spelling,
        # or follows only a level column (Erlang/OTP's `=ERROR REPORT==== 12-Mar-2019::10:00:00 ===`)
        lead = start > 0 and _level_leads(found, start, width, shape)
        # (such a header that opens the file, with no other time in it but its own headers', heads
        # the lines below it however many they are: one report and its body)
        opening = lead and found[0][0] == lines[0]
        if not ((start == 0 or lead) and count >= 0.9 * len(found)
                and (opening or count >= min(2, total - 1) and count >= HEADED_SHARE * total)):
            return None
        lines = [line for line, _, hit in found if hit == (start, width, shape)]
        found = [(line, spans, hit) for line, spans, hit in found if hit == (start, width, shape)]
    same_shape = [(line, spans, hit) for line, spans, hit in found if hit[1:] == (width, shape)]
    prefix: tuple[int, int] | None = None
    at_start = [(line, spans) for line, spans, hit in found if hit == (start, width, shape)]
    if (count < MIN_SHARE * len(lines) or _prose_columns(at_start, start) >= 2) and MIN_SHARE * len(lines) <= len(same_shape):
        # the time's spelling is constant but not its column (a varying prefix: "[pid] time", "pid:role time")
        starts = [hit[0] for _, _, hit in same_shape]
        prefix = (min(starts), max(starts))
        rows = [(line, spans[hit[0]:]) for line, spans, hit in same_shape]
        start = 0
    else:
        rows = [(line, spans) for line, spans, hit in found if hit == (start, width, shape)]
    after = start + width
    words = width
    if shape == "month-day-slashed" and _day_first([line[s[start][0]:s[start + width - 1][1]] for line, s in rows]):
        shape = DAY_FIRST_SHAPE.name
    elif shape == "yy-slashed":
        shape = _two_digit_order([line[s[start][0]:s[start + width - 1][1]] for line, s in rows])
    if shape == "dateutil":  # the time's words (a `[...]` column of several is one column)
        line0, spans0 = rows[0][0], rows[0][1]
        words = len(line0[spans0[start][0]:spans0[start + width - 1][1]].strip("[]()").split())
    before = [_column_role([line[s[j][0]:s[j][1]] for line, s in rows], len(rows)) for j in range(start)]
    if prefix is not None:
        before = ["prefix"]
    if sep is not None:
        # every cut but the last bounds a header column: the message is what follows the last one
        cuts = min(len(s) for _, s in rows) - 1
        last = [line[s[-1][0]:s[-1][1]].strip() for line, s in rows]
        if cuts > after and sum(1 for v in last if _json_object(v)) >= 0.9 * len(last):
            cuts -= 1  # a last column of JSON objects is the record's fields (zap's console encoder): the message is before it
        header = [_column_role([line[s[j][0]:s[j][1]].strip() for line, s in rows], len(rows))
                  for j in range(after, cuts)]
        # the message is the column of free text; columns of single tokens after it (ActiveMQ's
        # `time | level | message | logger | thread`) are fields the logger appends
        texty = [_texty([line[s[j][0]:s[j][1]].strip() for line, s in rows]) for j in range(after, cuts + 1)]
        if texty and not texty[-1] and any(texty):
            k = max(i for i, t in enumerate(texty) if t)
            if all(_column_role([line[s[j][0]:s[j][1]].strip() for line, s in rows], len(rows)) != "other"
                   or not texty[j - after] for j in range(after + k + 1, cuts + 1)):
                trailer = [_column_role([line[s[j][0]:s[j][1]].strip() for line, s in rows], len(rows))
                           for j in range(after + k + 1, cuts + 1)]
                return _scaled(_build(before, shape, header[:k], sep, lines, prefix, width=words,
                                      trailer=trailer), total)
        return _scaled(_build(before, shape, header, sep, lines, prefix, width=words), total)
    roles: list[str] = []
    for j in range(after, min(after + 8, max(len(s) for _, s in rows))):
        values = [line[s[j][0]:s[j][1]] for line, s in rows if len(s) > j + 1]
        role = _column_role(values, len(rows))
        roles.append("other" if role == "level" and "level" in roles else role)  # a header has one level
    # the header ends after the last anchor (a level or a `tag:`), then takes the pid, thread, logger
    # and separator columns that follow it; after a `tag:` the message starts
    end, closed = 0, False
    for k, role in enumerate(roles):
        if role == "mnemonic":
            break
        if (len(rows) == 1 and (role == "tag" or role == "level" and not _written_as_header(rows[0], after + k))
                and _prose_before(rows[0], after, k) > 1):
            break  # one line's `word:`, or a level word written as prose, after several prose words is its message's
        if role == "tag" and k >= 2 and roles[k - 1] == "word" and roles[k - 2] != "level" \
                and not _padded(rows, after + k - 1):
            continue  # a `word:` right after a free word that is no host (vsftpd's `OK DOWNLOAD:`) is its message's
        if role == "tag" and k >= 1 and roles[k - 1] == "level" and _colon_closed(rows, after + k - 1) \
                and not _component_column(rows, after + k):
            closed = True
            break  # `LOG:  duration: 3 ms`: a level closed by its colon ends the header; the `word:` is the message's
        if role in ("level", "tag"):
            end = k + 1
            if len(rows) == 1:
                closed = role == "level" and _colon_closed(rows, after + k)
                break  # one line tells no header column from a message's `word:`: the first anchor ends it
    k = end
    if not (end and roles[end - 1] == "tag") and not closed:
        while k < len(roles) and roles[k] in _TRAILING:
            if roles[k] == "word" and (k > end or not _padded(rows, after + k)):
                break  # a free word joins the header only as a padded (fixed-width) column
            k += 1
            if roles[k - 1] in ("tag", "logger", "blogger", "word"):
                while k < len(roles) and roles[k] in ("sep", "thread"):
                    k += 1  # "logger : message", "logger - message", "logger [request ids] message"
                break
    header = roles[:k]
    # columns written with no blank between them ("[time][LEVEL ][logger]")
    ends = [j for j in range(start)] + [start + width - 1] + [after + i for i in range(len(header))]
    tight = [_tight(rows, j) for j in ends] if prefix is None else None
    return _scaled(_build(before, shape, header, sep, lines, prefix, optional_from=end, tight=tight, width=words),
                   total)


COMPONENT_EVIDENCE = 20  # lines it takes to tell a component column from a message's first `word:`


def _colon_closed(rows, j: int) -> bool:
    """Whether column j (a level) is closed by a colon on every line (`LOG:`, `ERROR:`)."""
    return all(line[s[j][0]:s[j][1]].endswith(":") for line, s in rows if len(s) > j)


def _component_column(rows, j: int) -> bool:
    """Whether column j takes few values over enough lines to be a component's (`main:`, `sshd:`),
    not the first `word:` of messages (`duration:`, `connection received:`)."""
    values = [line[s[j][0]:s[j][1]] for line, s in rows if len(s) > j]
    return len(values) >= COMPONENT_EVIDENCE and len(set(values)) <= max(3, len(values) // 10)


def _level_leads(found, start: int, width: int, shape: str) -> bool:
    """Whether the columns before the time, on the lines that put it at `start`, are a level column
    and words that do not change from line to line and are no prose (a header's fixed text,
    `REPORT====`, not `ERROR happened at <time>`): then the time is still the header's, though not
    its first column."""
    rows = [(line, spans) for line, spans, hit in found if hit == (start, width, shape)]
    if not 1 <= start <= 3 or not rows:
        return False
    roles = [_column_role([line[s[j][0]:s[j][1]] for line, s in rows], len(rows)) for j in range(start)]
    fixed = [len({line[s[j][0]:s[j][1]] for line, s in rows}) == 1
             and not _PROSE.fullmatch(rows[0][0][rows[0][1][j][0]:rows[0][1][j][1]]) for j in range(start)]
    return "level" in roles and all(r == "level" or f for r, f in zip(roles, fixed))


_PROSE = re.compile(r'"?[A-Za-z][a-z]+"?,?')


def _written_as_header(row: tuple[str, list[tuple[int, int]]], j: int) -> bool:
    """A level written as headers write it (`LOG:`, `ERROR`, `[warn]`), not as a word of prose (`debug level`):
    after words of a header's own (a database, a user, an application name) it is still the header's level."""
    line, spans = row
    token = line[spans[j][0]:spans[j][1]]
    return token.isupper() or token.endswith(":") or token[:1] in "[(<"


def _prose_before(row: tuple[str, list[tuple[int, int]]], after: int, k: int) -> int:
    """How many of a line's columns from `after` to `after + k` are prose words (`Time`, `since`,
    `"Cleanup",`), not header values (a host `dn7`, a date, a bracketed field)."""
    line, spans = row
    return sum(1 for s, e in spans[after:after + k] if _PROSE.fullmatch(line[s:e]))


def _prose_columns(rows: list[tuple[str, list[tuple[int, int]]]], start: int) -> int:
    """How many of the columns before the time hold prose: words that vary from line to line (a
    message's, when the time closes lines whose messages happen to share a length)."""
    count = 0
    for j in range(start):
        values = [line[s[j][0]:s[j][1]] for line, s in rows]
        if values and len(set(values)) >= 0.5 * len(values) and sum(1 for v in values if _PROSE.fullmatch(v)) >= 0.6 * len(values):
            count += 1
    return count


def _json_object(value: str) -> bool:
    """Whether a column's value is a JSON object (`{"k": v}`), not text in braces."""
    if value[:1] != "{" or value[-1:] != "}":
        return False
    try:
        return isinstance(json.loads(value), dict)
    except ValueError:
        return False


def _texty(values: list[str]) -> bool:
    """Whether a column holds free text: most values have several words, and they vary."""
    if not values:
        return False
    spaced_share = sum(1 for v in values if len(v.split()) >= 3) / len(values)
    return spaced_share >= 0.5 and len(set(values)) >= max(2, 0.3 * len(values))


def _scaled(layout: Layout | None, total: int) -> Layout | None:
    """The layout's share of the whole sample (when learnt from its header lines alone)."""
    if layout is not None and total > layout.sample_size:
        layout.share, layout.sample_size = layout.share * layout.sample_size / total, total
    return layout


def _tight(rows, j: int) -> bool:
    """Whether column j ends where the next begins on most lines (no blank between them)."""
    hits = sum(1 for _line, s in rows if len(s) > j + 1 and s[j + 1][0] == s[j][1])
    return hits >= 0.8 * len(rows)


def _padded(rows, j: int) -> bool:
    """Whether column j is followed by a run of blanks on most lines (a fixed-width column)."""
    hits = 0
    for _line, s in rows:
        if len(s) > j + 1 and s[j + 1][0] - s[j][1] >= 2:
            hits += 1
    return hits >= 0.8 * len(rows)


def _names(roles: list[str]) -> dict[str, str]:
    """Which column (f<N>) is the level, component, host, pid and thread."""
    names: dict[str, str] = {}
    level = roles.index("level") if "level" in roles else None
    for role in ("level", "pid", "thread", "caller"):
        if role in roles:
            names[role] = f"f{roles.index(role)}"
    if "level" not in names and "mark" in roles:
        names["level"] = f"f{roles.index('mark')}"  # a one-symbol level column (see MARK_LEVELS)
    tags = [i for i, r in enumerate(roles) if r == "tag"]
    loggers = [i for i, r in enumerate(roles) if r in ("logger", "blogger")]
    words = [i for i, r in enumerate(roles) if r == "word"]
    if tags:
        names["component"] = f"f{tags[-1]}"
        if "pid" not in names or roles.index("pid") < tags[-1]:
            names["pid"] = f"f{tags[-1]}p"
    elif level is not None and any(i > level for i in loggers + words):
        names["component"] = f"f{min(i for i in loggers + words if i > level)}"
    elif level is not None and any(i < level and roles[i] == "word" for i in words):
        names["component"] = f"f{max(i for i in words if i < level)}"
    elif loggers or words:
        names["component"] = f"f{min(loggers + words)}"
    comp = int(names["component"][1:]) if "component" in names else None
    hosts = [i for i, r in enumerate(roles) if r == "host"]
    if hosts:
        names["host"] = f"f{hosts[-1]}"
    elif comp is not None and roles[comp] == "tag" and comp > 0 and roles[comp - 1] in ("word", "logger", "other") \
            and roles[comp - 2:comp - 1] in (["time"], []):
        # syslog: "time host tag[pid]:", the host right after the time (vsftpd's `[pid 3] [jean] OK
        # DOWNLOAD:` writes a status word there, after other columns: no host)
        names["host"] = f"f{comp - 1}"
    return names


def _bare(shape: str) -> str:
    """A time shape's name without the marks of the bracket it shares."""
    return shape.removesuffix(EXTRA).removesuffix(LEAD)


def _build(before: list[str], shape: str, header: list[str], sep: str | None, lines: list[str],
           prefix: tuple[int, int] | None = None, optional_from: int | None = None,
           tight: list[bool] | None = None, width: int = 1, trailer: list[str] | None = None) -> Layout | None:
    """The layout's regex: `before` columns, the time, the `header` columns, then the message (and
    the `trailer` columns a separated layout writes after it).
    Header columns from `optional_from` on (those after the last anchor) may be absent on a line."""
    gap = _SEPARATORS.get(sep or "", r"\s+")
    parts: list[str] = []
    roles = list(before) + ["time"] + list(header)
    first_optional = len(before) + 1 + optional_from if optional_from is not None else len(roles)
    for n, role in enumerate(roles):
        if role == "time":
            if shape == "dateutil":  # as many words as the sample's times take (a bracket holds several)
                time_re = r"[^\s\])]+" + r"\s+[^\s\])]+" * (width - 1)
            else:
                time_re = spaced(TIME_SHAPES_BY_NAME[_bare(shape)].regex)
                time_re = re.sub(r"\(\?P<\w+>", "(?:", time_re)
            if shape.endswith(LEAD + EXTRA):  # the level before the time, the other words after it
                parts.append(rf"[\[(](?P<f{n}l>[A-Za-z]{{1,12}})\s+(?P<time>{time_re})(?:\s+(?P<f{n}x>[^\])]*))?[\])]:?")
            elif shape.endswith(EXTRA):  # the bracket's other words are a column of their own
                parts.append(rf"[\[(](?P<time>{time_re}):?\s+(?P<f{n}x>[^\])]*)[\])]:?")

            else:  # a comma, colon or semicolon may close the time (`Fri May 05 08:46:44.257 2017; Created.`)
                parts.append(rf"[\[(]?(?P<time>{time_re})[\])]?[,:;]?")
        elif role == "prefix":
            # at most the leading columns a time is looked for among (a stamp quoted deep in a message
            # is not the header's)
            parts.append(rf"(?P<f0>(?:\S+\s+){{0,{MAX_LEAD_TOKENS - 1}}}?\S+)" if prefix and prefix[1] > 0 else "")
        elif sep is not None:
            parts.append(rf"(?P<f{n}>[^{re.escape(sep)}]*?)")
        else:
            parts.append(_COLUMN_RE.get(role, _COLUMN_RE["other"]).replace("{g}", f"f{n}"))
    gaps = [r"\s*" if tight and n < len(tight) and tight[n] else gap for n in range(len(parts))]

    def joined(first: int, last: int) -> str:  # parts[first:last] with the gap after each but the last
        return "".join(parts[n] + (gaps[n] if n < last - 1 else "") for n in range(first, last))

    if prefix is not None and prefix[0] == 0:
        parts[0] = parts[0] and rf"(?:{parts[0]}{gap})??"  # a line that opens with its time has no prefix
        head = parts[0] + joined(1, first_optional)
    else:
        head = joined(0, first_optional)
    tail = "".join(rf"(?:{gaps[n - 1]}{parts[n]})?" for n in range(first_optional, len(parts)))
    last_gap = gaps[len(parts) - 1] if parts else gap
    pattern = "^" + head + tail + rf"(?:{last_gap}(?P<message>.*))?$"
    if trailer and sep is not None:
        ends = "".join(rf"{gap}(?P<f{len(roles) + i}>[^{re.escape(sep)}]*?)" for i in range(len(trailer)))
        pattern = "^" + head + tail + rf"{last_gap}(?P<message>.*){ends}\s*$"
        roles = roles + list(trailer)
    # for lines the pattern misses: any value in the columns before the time ("-" on most lines,
    # "KERNDTLB" on some), then the same header; then the header up to the time alone, so a line
    # whose later columns differ still gets its own time
    upto = len(before) + 1
    loose: list[str] = []
    if prefix is None and before:
        generic = [r"\S+" if sep is None else rf"[^{re.escape(sep)}]*?"] * len(before)
        lead = "".join(g + gaps[n] for n, g in enumerate(generic))
        rest = joined(len(before), first_optional) if first_optional > len(before) else parts[len(before)]
        loose.append("^" + lead + rest + tail + rf"(?:{last_gap}(?P<message>.*))?$")
        loose.append("^" + lead + parts[len(before)] + rf"(?:{gaps[upto - 1]}(?P<message>.*))?$")
    elif len(parts) > upto:
        head_time = (parts[0] + joined(1, upto)) if prefix is not None and prefix[0] == 0 else joined(0, upto)
        loose.append("^" + head_time + rf"(?:{gaps[upto - 1]}(?P<message>.*))?$")
    layout = Layout(pattern=pattern, time_shape=_bare(shape), columns=roles, separator=sep, names=_names(roles),
                    loose=loose)
    try:
        layout.regex.pattern  # noqa: B018 - compiles it
    except re.error:
        return None
    hits = 0
    for line in lines:
        m = layout.match(line)
        if m and layout.read_time(m["time"]) is not None:
            hits += 1
    layout.share = hits / len(lines)
    layout.sample_size = len(lines)
    return layout if layout.share >= MIN_SHARE else None



def describe(layout: Layout, line: str) -> dict:
    """What the CLI and the Operations page show: the layout and one line split into its fields."""
    return {**layout.as_dict(), "line": line, "fields": layout.split(line) or {}}
