"""A source's set of learnt layouts (issue 34.3): each line is read by the layout that fits it, so
one file may interleave layouts, or change layout mid-file without a rotation.

- `learn_set(lines)`: the layouts of a sample. Usually one (`layout.learn`); several when the
  sample's lines put their level at different columns (PostgreSQL's `%m [%p] %q%u@%d `: a session's
  lines carry `user@db` before the level, a background process's do not): one layout for each
  group of lines that puts it at the same column.
- `LayoutSet.read(first)`: the layout whose pattern matches a line and whose level column (when it
  has one) holds a level word: the source's own layout first, then the one that matched the line
  before, so a file of one layout costs one match a line and two interleaved ones at most two.
- `LayoutSet.learn_line(first)`: a line none of the source's layouts or formats reads, whose own
  time opens it (first or second column), teaches the set a layout of its own, learnt from that
  line; the set keeps at most `MAX_LAYOUTS`, dropping the one that matched least recently.
  Attempts that teach nothing are counted and stop after `MAX_MISSES` (a file of plain text costs
  a cheap check a line, not a learning a line).
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable, Iterator


from pipeline.ingest.code_location import code_location
from pipeline.ingest.console_fields import split_fields_column
from pipeline.ingest.delimited import learn
from pipeline.ingest.layout import COLUMN_INFO, MARK_LEVELS, Layout, _is_letter_level, _is_level, _strip, _tokens, column_level, column_value_is_level
from pipeline.ingest.levels import normalize_level, prefixed_level
from pipeline.ingest.line_formats import _CALLER
from pipeline.ingest.parsed import ParsedRecord, ParseOptions, split_first, text_record
from pipeline.ingest.key_roles import finer_body_time, source_body_time
from pipeline.ingest.date_order import in_order
from pipeline.ingest.timestamps import TIME_SHAPES_BY_NAME, read_any_time

MAX_LAYOUTS = 6
MAX_MISSES = 200
GROUP_SHARE = 0.05  # a group of lines with its own level column must be this share of the sample
_CLOCKISH = re.compile(r"\d:\d\d|\d{10}")  # a time of day, or an epoch, somewhere in a header
# a level written as a header column: upper-case (`LOG:`, `ERROR`) or bracketed (`[warn]`, `<info>`)
_HEADER_LEVEL = re.compile(r"^(?:[A-Z]{2,12}:?|[\[<(][A-Za-z]{1,12}[\]>)]:?)$")


def _level_column(line: str) -> int | None:
    """The column of a line's first level word written as a header column, among its first 8."""
    for n, (start, end) in enumerate(_tokens(line, None)[:8]):
        token = line[start:end]
        if _HEADER_LEVEL.match(token) and _is_level(token):
            return n
    return None


def learn_set(sample: Iterable[str]) -> list[Layout]:
    """The layouts of a sample (module doc): the most common first; empty when none leads it."""
    lines = [ln.rstrip("\r\n") for ln in sample if ln.strip() and not ln[:1].isspace()]
    columns = [_level_column(line) for line in lines]
    counts = Counter(c for c in columns if c is not None)
    groups = [c for c, n in counts.most_common() if n >= max(2, GROUP_SHARE * len(lines))]
    if len(groups) >= 2 and counts[groups[0]] < 0.9 * len(lines):
        layouts = []
        for column in groups[:MAX_LAYOUTS]:
            layout = learn([line for line, c in zip(lines, columns) if c == column])
            if layout is not None and "level" in layout.names:
                layouts.append(layout)
        if len(layouts) >= 2:
            read = sum(1 for line in lines if any(_fits(layout, line) for layout in layouts))
            for layout in layouts:
                layout.share, layout.sample_size = read / len(lines), len(lines)
            return layouts
    single = learn(lines)
    return [single] if single is not None else []


_LEVEL_WORDS: dict[str, bool] = {}  # a level column's values seen: whether each is a level (few values)


def _level_ok(layout: Layout, m: re.Match[str]) -> bool:
    group = layout.names.get("level")
    value = m.group(group) if group is not None else None
    if value is None:
        return True
    known = _LEVEL_WORDS.get(value)
    if known is None:
        # a level column's value: a level word, a cut of one (`FATL`) or an initial in either case
        # (the column was taken for a level by all the sample's lines, `layout._column_role`)
        known = column_value_is_level(value)
        if len(_LEVEL_WORDS) < 4096:
            _LEVEL_WORDS[value] = known
    return known


def _time_ok(layout: Layout, m: re.Match[str]) -> bool:
    """A spelling no shape knows is any run of words to the layout's regex (dateutil reads it): the
    words the line holds there must read as a time for the layout to fit it."""
    return layout.time_shape != "dateutil" or layout.read_time(m["time"]) is not None


def _fits(layout: Layout, line: str) -> bool:
    m = layout.match(line)
    return m is not None and _level_ok(layout, m) and _time_ok(layout, m)


class LayoutSet:
    """The layouts a source is read with, the last one that matched tried first (module doc)."""

    def __init__(self, layouts: Iterable[Layout] = ()):
        self.layouts: list[Layout] = list(layouts)
        self.learnt = 0  # layouts learnt from lines while reading
        self.misses = 0  # lines that looked like headers but taught no layout
        self._last = 0
        self._used: list[int] = [0] * len(self.layouts)
        self._tick = 0

    def __len__(self) -> int:
        return len(self.layouts)

    def read(self, first: str) -> tuple[Layout, re.Match[str]] | None:
        """The layout that fits `first` and its match, or None."""
        return next(self.fitting(first), None)

    def fitting(self, first: str) -> Iterator[tuple[Layout, re.Match[str]]]:
        """Each layout that fits `first`, with its match, in the order `read` tries them: a caller
        that cannot read the line's time with one (a looser layout matched it) goes on to the next."""
        layouts = self.layouts
        if not layouts:
            return
        tried = set()
        # the source's own layout first (a later, looser one must not shadow it), then the last that fitted
        for n in (0, self._last) if self._last else (0,):
            tried.add(n)
            m = layouts[n].match(first)
            if m is not None and _level_ok(layouts[n], m) and _time_ok(layouts[n], m):
                self._touch(n)
                yield layouts[n], m
        for n, layout in enumerate(layouts):
            if n in tried:
                continue
            m = layout.match(first)
            if m is not None and _level_ok(layout, m) and _time_ok(layout, m):
                self._last = n
                self._touch(n)
                yield layout, m

    @staticmethod
    def fit(layout: Layout, first: str) -> tuple[Layout, re.Match[str]] | None:
        """`layout` and its match of `first` when it fits it (its level column holding a level word)."""
        m = layout.match(first)
        return (layout, m) if m is not None and _level_ok(layout, m) and _time_ok(layout, m) else None


    def _touch(self, n: int) -> None:

        self._tick += 1
        self._used[n] = self._tick

    def learn_line(self, first: str) -> Layout | None:
        """A layout learnt from `first` and added to the set, or None (module doc)."""
        if self.misses >= MAX_MISSES or len(first) < 10 or not _CLOCKISH.search(first, 0, 64):
            return None
        layout = learn([first])
        if layout is None or not _time_in_header(layout.columns):
            self.misses += 1  # a time deep in a line is in its message
            return None
        if len(self.layouts) >= MAX_LAYOUTS:
            oldest = min(range(1, len(self.layouts)), key=lambda n: self._used[n])  # the first stays
            del self.layouts[oldest], self._used[oldest]
            self._last = 0
        self.layouts.append(layout)
        self._used.append(0)
        self.learnt += 1
        return layout


# columns a header may write before its time: log4j's and Cassandra's `%-5level [%thread] %date ...`
# (`INFO  [main] 2026-11-14 03:30:01,010 CassandraDaemon.java:719 - ...`); a message opens with neither
_BEFORE_TIME = frozenset({"level", "thread"})


def _time_in_header(columns: list[str]) -> bool:
    """Whether a learnt layout's time is its header's: in its first two columns, or after only a level
    and a thread (a time after other words is in the line's message)."""
    at = columns.index("time")
    return at <= 1 or at <= len(_BEFORE_TIME) and _BEFORE_TIME.issuperset(columns[:at])


# -- one record read with a learnt layout ---------------------------------------------------------

def parse_learned(text: str, opts: ParseOptions, layout: Any) -> ParsedRecord | None:
    """One record read with a learnt layout (`pipeline.ingest.layout.Layout`): the header's time and
    level as written, its component as the service, the message after the header; its looser
    patterns (`Layout.loose`) for a line the full one misses."""
    first, rest = split_first(text)
    for m in (layout.match(first), layout.match_loose(first)):
        if m is not None:
            record = learned_record(layout, m, rest, opts)
            if record is not None:
                return record
    return None


def _writes_year(shape: str | None) -> bool:
    """Whether a time spelling writes the year (dateutil's and unknown ones are taken to)."""
    known = TIME_SHAPES_BY_NAME.get(shape or "")
    return known is None or any(g in known.regex for g in ("(?P<y>", "(?P<yy>", "(?P<epoch>", "(?P<tai>"))


# a level the layout has no column for, leading the message: `[Note] ...` (a level column on some
# lines only), or ending a colon-joined prefix the layout took as text (`UTC:host(port):user@db:[pid]:LOG:  msg`)
_OPENING_LEVEL = re.compile(r"(\S{1,14})\s+")
_CLOSING = re.compile(r"\s+(?:@|at|-|\||,|on)$")  # what joins a message to the time after it
_LEAD_LEVEL = re.compile(r"\[(?P<bracket>[A-Za-z]{1,12})\]\s|\S*?:(?P<joined>[A-Z]{3,12}):\s+")


_BRACKET_WORDS = re.compile(r"[\s|,;]+")


def learned_record(layout: Layout, m: re.Match[str], rest: str | None, opts: ParseOptions) -> ParsedRecord | None:
    """The record a line `m` matched holds (None when its time cannot be read)."""
    written = m["time"]
    ordered = in_order(written, opts.date_order)
    ordered = in_order(ordered, opts.dash_order, dashed=True) if ordered == written else ordered
    if ordered != written:  # a date of numbers in the order the source's sample shows (date_order.py)
        time = read_any_time(ordered, tz=opts.timezone, year=opts.year, now=opts.now)
    else:
        time = layout.read_time(written, tz=opts.timezone, year=opts.year, now=opts.now)
    if time is None:
        return None
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    named: dict[str, Any] = {role: groups.get(group) for role, group in layout.names.items()}
    taken = set(layout.names.values()) | {"time", "message"}
    fields: dict[str, Any] = {k: v for k, v in groups.items() if k not in taken}
    for role in ("pid", "thread"):
        fields[role] = named.get(role)
    if named.get("caller"):  # the code location a caller column writes, without its brackets
        fields["caller"] = code_location(named["caller"]) or named["caller"]
    if not named.get("component") and named.get("thread"):
        caller = _CALLER.search(named["thread"])  # a Java caller, "Class@line"
        named["component"] = caller.group(1) if caller else None
    if named.get("component"):
        fields["component"] = named["component"]
    level = named.get("level")
    host = named.get("host") or ""
    if level is None and host.isupper() and 3 <= len(host) <= 9 and normalize_level(host) is not None:
        # a level word in capitals where the layout's other lines write a host (Python's `time LEVEL
        # logger: msg` beside `time host program[pid]: msg` in one file): the level; no host is one
        level, named["host"] = host, None
    component = named.get("component") or ""
    if level is None and "/" in component and normalize_level(component.split("/", 1)[0]) is not None:
        level, named["component"] = component.split("/", 1)  # "warning/PluginNotificationTask:" (Icinga)
        fields["component"] = named["component"]
    if level is None and "." in component:
        # Monolog's `%channel%.%level_name%:` (PHP: Symfony, Laravel's `local.ERROR:`): the channel, then
        # the level's name in capitals after its last dot
        channel, _, word = component.rstrip(":").rpartition(".")
        if channel and word.isupper() and normalize_level(word) is not None:
            level, named["component"] = word, channel
            fields["component"] = channel
    if level is None:  # the words sharing the time's bracket (Serilog's `[08:00:00 INF]`, Tornado's
        # `[I 240301 08:00:00 web:2243]`) may be its level
        level = next((v.strip() for k, v in groups.items() if k[-1:] in "xl" and k[:1] == "f" and v
                      and normalize_level(v.strip()) is not None), None)
        extra = next((v.strip() for k, v in groups.items() if k[-1:] == "x" and k[:1] == "f" and v), "")
        if level is None:  # or one of them, a level word in capitals among `|`-cut columns
            # (dd-trace-dotnet's `[2000-01-01 04:00:00.000 +00:00 | DD_TRACE_DOTNET | INF]`)
            level = next((w for w in _BRACKET_WORDS.split(extra) if w.isupper() and normalize_level(w) is not None), None)
        if level is None and "/" in extra and normalize_level(extra.split("/", 1)[0]) is not None:
            # `LEVEL/process` (Celery's `[%(asctime)s: %(levelname)s/%(processName)s]`)
            level, fields["process"] = extra.split("/", 1)
    if level is None and "/" in (named.get("thread") or ""):
        # a level joined by `/` to the thread its bracket names, after it or before it (log4j2's
        # `[%t/%level]`: `[Server thread/WARN]`; `[INFO/MainProcess]`)
        thread = named["thread"]
        before, _, after = thread.rpartition("/")
        first, _, others = thread.partition("/")
        if before and after.isalpha() and normalize_level(after) is not None:
            level, fields["thread"] = after, before
        elif others and first.isalpha() and normalize_level(first) is not None:
            level, fields["thread"] = first, others

    if level is not None and len(level) == 1 and not level.isalnum():
        level = MARK_LEVELS.get(level, level)
    message = groups.get("message") or ""
    if message[:2] == ": " and layout.columns[-1:] == ["sep"]:
        # an empty name the header closes with its colon (Ruby's Logger without a progname:
        # `INFO -- : msg`): the colon is the header's, not the message's
        message = groups["message"] = message[2:]
    if layout.columns[:1] == ["prefix"] and not message.strip() and groups.get("f0"):
        # the time closes the line (`ERROR comp: refused @ 18/07/2026 17:10:24`): the words before
        # it are the record, its level when a level word opens them
        message = groups["message"] = _CLOSING.sub("", groups["f0"])
        opening = _OPENING_LEVEL.match(message)
        if level is None and opening is not None and (_is_level(opening[1]) or _is_letter_level(opening[1])):
            level, message = _strip(opening[1]), message[opening.end():]
            groups["message"] = message
    if level is None and ":" in m.string[m.end("time"):m.end("time") + 240]:
        # a level in capitals closed by a colon after the header's other columns, which the layout
        # took as columns of their own (`UTC:host(port):user@db:[pid]:LOG:  duration: …`): the level,
        # and the columns after it are the message's (`duration:` is no component)
        after = m.end("time") + len(m.string[m.end("time"):]) - len(m.string[m.end("time"):].lstrip(" :-,"))
        found = prefixed_level(m.string[after:])
        if found is not None:
            level, cut = found[0], after + found[2]
            for role, group in layout.names.items():
                if role in ("component", "host") and m.end(group) > cut - len(level) - 1:  # holds or follows it
                    named[role] = None
                    fields.pop(role, None)
            message = groups["message"] = m.string[cut:].strip()
    if level is None:
        lead = _LEAD_LEVEL.match(message)
        word = (lead["bracket"] or lead["joined"]) if lead is not None else None
        if lead is not None and word and normalize_level(word) is not None:
            level = word
            if lead["joined"]:  # `UTC::@:[7770]:LOG:  msg`: the colon-joined prefix is the header's rest
                groups["message"] = message[lead.end():]
    if groups.get("message", "").endswith("}") and (layout.separator == "\t" or "\t{" in groups["message"]):
        groups["message"] = split_fields_column(groups["message"], fields)  # zap's console `{"k": v}` column
    if not _writes_year(layout.time_shape):  # a stamp without a year gives way to the body's dated time
        time = source_body_time(groups.get("message") or "", opts, opts.key_roles) or time
    elif time is not None and not time.microsecond:  # a stamp to the second, its body's time-named key finer
        # the whole header line (a column may hold the key) and the lines below it
        time = finer_body_time(m.string, rest, time, opts, opts.key_roles) or time
    record = text_record("learned", groups.get("message") or "", rest, time=time, level=level,
                         service=named.get("component"), host=named.get("host"), fields=fields)
    if record.level is None and groups.get("pri"):
        # the `<PRI>` before the header (layout.learn): its severity is the level of a line that
        # writes none of its own (a Cisco `%FAC-2-MNEMONIC` in the body is more specific than the
        # relay's priority)
        record.level = int(groups["pri"]) % 8
        record.level_name = normalize_level(record.level, scheme="syslog")
        record.fields["facility"] = int(groups["pri"]) // 8
    if level is not None and record.level_name is None and level == named.get("level"):
        record.level_name = column_level(level)  # a level column's cut of a level name (`FATL`, `EROR`)
    if level is not None and record.level_name is None and level.lower() in COLUMN_INFO:
        record.level_name = "INFO"  # MySQL's System, PostgreSQL's LOG/STATEMENT/DETAIL/HINT/CONTEXT lines
    return record
