"""Multi-line records: join continuation lines (stack traces and the like) to their event.

    joiner = MultilineJoiner()
    for offset, line in lines:
        for record in joiner.feed(offset, line):
            handle(record.position, record.text)      # position of the record's first line
    for record in joiner.flush():                     # at the end of a one-shot read only
        handle(record.position, record.text)

A line continues the record before it when it is:

- indented (a Java ``\\tat ...`` frame, a Python frame, any indented detail);
- a Java frame or trailer without indentation: ``at x.Y(Z.java:1)``, ``... 12 more``,
  ``... 3 common frames omitted``, ``Caused by: ...``, ``Suppressed: ...``;
- an exception line right after a log line (``java.lang.IllegalStateException: boom``);
- a Python traceback: ``Traceback (most recent call last):``, its frames, and the unindented
  ``ValueError: ...`` line that closes it; chained tracebacks ("During handling of the above
  exception..." / "The above exception was the direct cause...") stay in the same record;
- a Go panic's dump: ``goroutine 1 [running]:`` and every line after it up to the next line
  that starts a record (Go prints function names unindented);
- a blank line followed by a continuation (blank lines that nothing follows are dropped).

A line that starts a record (by default: one that opens with a timestamp, a syslog priority, a
glog header, a bracketed time or a level word; or a `starts_record` predicate, such as a
`formats.SourceParser` that knows the source's format) is never a continuation unless it is
indented. With `headed`, the source's every record opens with its header (`starts_record`), so
any other line continues the record before it (MySQL's slow log: a `# User@Host:` line opens each
query's block). With `quoted` (CSV), a line continues its record while a double quote the record
opened is open (a quoted value spanning lines), unless it opens with a timestamp. JSON lines are never joined: each is a record, and nothing joins to one.
A record that opens with a `{` line alone (a pretty-printed JSON document: the first line of the
source, or one after another such document) takes every line up to the one that closes its brace,
whatever they look like (an indented one-line object among its values), and then nothing more.
So does a multi-line XML element or YAML document that opens the source or follows another such
document (pipeline/ingest/documents.py: log4j2's XmlLayout and YamlLayout): a line that is an
element's opening tag alone (`<Event timeMillis="…"`, its attributes possibly going on over the next
lines) takes every line up to the one that closes that element; a `---` line takes every line up to
the next `---` or `...` line (the `...` one included) while they are lines a YAML mapping writes
(`key: value`, indented, `- item`, a `#` comment); an element ends early at an unindented line that
opens with a dated time (a text log whose first line was a tag alone). An opening tag followed on
its line by a child or CDATA (log4net's `<log4net:event …><log4net:message>…`) opens such an element
too; an XML declaration, `<!DOCTYPE>`, comment or element whole on its line keeps documents possible;
a bare `<log>` whose next unindented line opens an element is a wrapper, a record of its own.

The last record is held back, since the next line may continue it: it comes out when a line
starts a new record, or on `flush()`. A tailer of a growing file keeps the held-back part by
saving `pending_position` (the first line of the held-back record, None when nothing is held)
as where to resume, so the record is read whole next time. A record longer than `max_lines`
lines or `max_chars` characters keeps its first ones: its further continuation lines are counted,
not kept, and one line at its end says how many (`FOLDED`), so memory stays bounded whatever the
input and a trace of 200,000 frames is one event (issue 39.10: cut into records of MAX_LINES,
each opened an incident of its own).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Iterator, NamedTuple

from pipeline.ingest import companion_lines
from pipeline.ingest.documents import (YAML_END, YAML_LINE, YAML_START, one_line_element, opens_element,
                                      wraps_records, xml_depth)
from pipeline.ingest.timestamps import SHAPE_RE, TIME_SHAPES, leading_time

MAX_LINES = 1_000
MAX_CHARS = 256 * 1024
FOLDED = "\t... {} more lines not kept (a record keeps its first {} lines, {} characters)"

_INDENTED = re.compile(r"^[ \t]+\S")
# epoch seconds of 2000-2033 with their fraction, then a blank: a stamp, where a bare number may be a count
_EPOCH_FIRST = re.compile(r"(?:1[0-9]{9}|9[5-9][0-9]{7})\.\d{1,9}\s")
_JAVA_TRAILER = re.compile(
    r"^(?:at [\w$.<>/\[\]-]+\(.*\)$|\.\.\. \d+ (?:more|common frames omitted)$"
    r"|(?:Caused by|Suppressed|Wrapped by):\s)")
_CHAINED = re.compile(r"^(?:Caused by|Suppressed|Wrapped by):\s")
_EXCEPTION_LINE = re.compile(
    r"^(?:[a-zA-Z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable|Fault)(?::\s.*)?$")
_PY_TRACEBACK = "Traceback (most recent call last):"
_PY_CHAIN = re.compile(r"^(?:During handling of the above exception, another exception occurred:"
                       r"|The above exception was the direct cause of the following exception:)$")
_PY_FINAL = re.compile(r"^[A-Za-z_][\w.]*(?::\s.*|:)?$")
_GOROUTINE = re.compile(r"^goroutine \d+ \[[^\]]*\]:$")
_HEAD = re.compile(
    r"^(?:\d{4}-\d{2}-\d{2}[T _]\d{2}:\d{2}|\d{4}/\d{2}/\d{2} \d{2}:\d{2}|\d{2}/\d{2}/\d{2} \d{2}:\d{2}"
    r"|\d{6} \d{6}|<\d{1,3}>|[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}|\[[^\]]*\d{2}:\d{2}:\d{2}"
    r"|[IWEF]\d{4} \d{2}:\d{2}:\d{2}|\d{2}:\d{2}:\d{2}[.,]\d+ "
    r"|(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|CRITICAL|SEVERE|PANIC)\b[:\s\]])")


_TIMED = re.compile(_HEAD.pattern.split("|(?:TRACE|DEBUG", 1)[0] + ")")  # _HEAD without its level words


def looks_timed(line: str) -> bool:
    """Whether a line opens with a timestamp or a syslog priority (the default guess without its
    level words: `SEVERE: msg` under a java.util.logging header line is no record of its own)."""
    return bool(_TIMED.match(line))


MAX_TIME_ALONE = 48  # characters: the longest spelling of a time and its zone


def time_alone(stripped: str) -> bool:
    """Whether a line is a timestamp and nothing else (Oracle's alert log writes each record's time on
    a line of its own, the message on the lines under it)."""
    return bool(_TIMED.match(stripped)) and any(SHAPE_RE[shape.name].match(stripped) for shape in TIME_SHAPES)


def opens_with_stamp(stripped: str) -> bool:
    """Whether a line (its indentation cut off) opens with a time that writes its date: a dated stamp
    in any header spelling, or epoch seconds with their fraction (`1511802599.453396 `, Zeek/Bro)."""
    return leading_time(stripped[:64]) is not None or _EPOCH_FIRST.match(stripped) is not None


def looks_like_record_start(line: str) -> bool:
    """The default guess of whether a line opens a new record (timestamp or level first)."""
    return bool(_HEAD.match(line)) or _is_json(line)


def _is_json(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("{") and stripped.endswith("}")


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def json_depth(line: str) -> int:
    """How many braces and brackets a line of a pretty-printed JSON document opens, less those it
    closes (outside its strings)."""
    bare = _STRING.sub("", line) if '"' in line else line
    return bare.count("{") + bare.count("[") - bare.count("}") - bare.count("]")


class Record(NamedTuple):
    """A complete record: where its first line was, its lines joined by \\n, their count (the
    lines it covers, those folded into its last line included), where its last line was."""

    position: Any
    text: str
    lines: int
    last_position: Any


class MultilineJoiner:
    """Stateful joiner: feed (position, line); complete records come out (see module doc)."""

    def __init__(self, *, starts_record: Callable[[str], bool] | None = None,
                 max_lines: int = MAX_LINES, max_chars: int = MAX_CHARS, headed: bool = False,
                 quoted: bool = False, labels: dict[str, list[int]] | None = None):
        self._starts = starts_record or looks_like_record_start
        # the source's level-slot words with how often each opened a new header (companion_lines)
        self._labels = labels
        self._header: str | None = None  # the held record's header up to its level slot, once asked
        # CSV: a line continues its record while a double quote the record opened is still open
        self._quoted = quoted
        self._open_quote = False
        # every record opens with the layout's header (`starts_record`): a line without it continues
        # the record before, whatever its shape
        self._headed = headed
        self._max_lines = max_lines
        self._max_chars = max_chars
        self._lines: list[str] = []
        self._first: Any = None
        self._last: Any = None
        self._chars = 0
        self._folded = 0  # continuation lines past the caps: counted, not kept
        self._blanks: list[str] = []
        self._json = False
        self._state = "plain"  # plain | traceback | traceback-frames | goroutine
        self._depth = 0  # a pretty-printed JSON document's open braces and brackets
        self._document = ""  # "xml" or "yaml" inside such a multi-line document (an XML one: `_depth` its open elements)
        self._documents = True  # the next record may be an XML or YAML document: none seen yet, or the last was one

    @property
    def pending_position(self) -> Any:
        """Position of the held-back record's first line (resume there), or None."""
        return self._first if self._lines else None

    @property
    def pending_can_grow(self) -> bool:
        """Whether a later line could still join the held-back record (nothing joins a JSON line)."""
        return bool(self._lines) and not self._json

    def feed(self, position: Any, line: str) -> list[Record]:
        """Take one line (its newline optional); the records it completes, oldest first."""
        line = line.rstrip("\r\n")
        stripped = line.strip()  # once a line: each test below reads it
        if not stripped:
            if self._lines and not self._json:
                self._blanks.append(line)
            return []
        out: list[Record] = []
        # a Go panic's `goroutine N [state]:` line, told by its first word before the pattern
        goroutine = stripped.startswith("goroutine ") and _GOROUTINE.match(stripped) is not None
        if self._lines and self._continues(line, stripped, goroutine):
            if (self._folded or self._chars + len(line) + 1 > self._max_chars
                    or len(self._lines) + len(self._blanks) >= self._max_lines):
                self._folded += len(self._blanks) + 1
                self._blanks = []
                self._last = position
            else:
                self._lines.extend(self._blanks)
                self._blanks = []
                self._lines.append(line)
                self._chars += len(line) + 1
                self._last = position
            self._advance(line, stripped, goroutine)
            return out
        if self._lines:
            out.append(self._emit())
        self._start(position, line, stripped)
        self._advance(line, stripped, goroutine)
        return out

    def flush(self) -> list[Record]:
        """Release the held-back record (end of a file read once, or a tailer giving up on it)."""
        return [self._emit()] if self._lines else []

    def join(self, lines: Iterable[tuple[Any, str]]) -> Iterator[Record]:
        """Every record of `lines`, the last one flushed: for one-shot reads."""
        for position, line in lines:
            yield from self.feed(position, line)
        yield from self.flush()

    # -- internals ---------------------------------------------------------------------------

    def _start(self, position: Any, line: str, stripped: str) -> None:
        self._lines = [line]
        self._header = None
        self._first = self._last = position
        self._chars = len(line)
        self._folded = 0
        self._blanks = []
        self._json = stripped[0] == "{" and stripped[-1] == "}"  # _is_json(line)
        self._state = "time-alone" if len(stripped) <= MAX_TIME_ALONE and time_alone(stripped) else "plain"
        self._open_quote = False
        self._depth = 1 if stripped == "{" else 0
        self._document = ""
        if self._documents and stripped[0] == "<" and opens_element(stripped):
            self._depth = xml_depth(stripped)
            self._document = "xml"
        elif self._documents and line == YAML_START:
            self._document = "yaml"
        # a document opens the source or follows one (or an XML prolog does: `<?xml …?>`, a `<!-- … -->`
        # comment, a `<!DOCTYPE …>`, or an element whole on its line); after any other record, these shapes are text
        self._documents = (bool(self._document) or self._depth > 0
                           or (self._documents and stripped[0] == "<" and (stripped[1:2] in ("?", "!")
                                                                          or one_line_element(stripped))))

    def _emit(self) -> Record:
        text = "\n".join(self._lines)
        if self._folded:
            text += "\n" + FOLDED.format(self._folded, self._max_lines, self._max_chars)
        record = Record(self._first, text, len(self._lines) + self._folded, self._last)
        self._lines, self._blanks, self._first, self._last, self._chars = [], [], None, None, 0
        self._folded = 0
        self._state = "plain"
        return record

    def _continues(self, line: str, stripped: str, goroutine: bool) -> bool:
        if self._quoted and self._open_quote and not looks_like_record_start(line):
            return True
        if self._depth > 0 or self._document == "yaml":  # inside a multi-line document (one never closed: up to the cap)
            if self._document == "yaml" and (line == YAML_START or not YAML_LINE.match(line)):
                return False  # the next YAML document, or a line no YAML mapping writes: the document ended
            if self._document == "xml" and stripped[0] != "<" and line[0] not in " \t" and leading_time(stripped):
                return False  # a dated record's line: the element was never closed (a text log opened by a tag)
            if self._document == "xml" and len(self._lines) == 1 and wraps_records(self._lines[0], line):
                return False  # `<log>` around the file's records: a record of its own, each record inside one
            return len(self._lines) + self._folded < self._max_lines
        if self._json or (stripped[0] == "{" and stripped[-1] == "}"):
            return False
        if line[0] in " \t" and _INDENTED.match(line):
            # an indented line continues its record, but for one that opens with a dated stamp the
            # source reads as a header (a record a program wrote with a leading tab), or with epoch
            # seconds and their fraction where the record before opens so too (a Zeek/Bro line after
            # blanks); no frame of a trace does
            return not ((stripped[0].isdigit() or stripped[0] == "[") and self._starts(stripped)
                        and (leading_time(stripped[:64]) is not None
                             or (_EPOCH_FIRST.match(stripped) is not None
                                 and _EPOCH_FIRST.match(self._lines[0].lstrip(" \t")) is not None)))

        if stripped == _PY_TRACEBACK and self._state in ("goroutine", "traceback-closed"):
            return False  # a new report after a whole one (a Go dump, a traceback its exception line closed)
        if (stripped == _PY_TRACEBACK or goroutine
                or (stripped[0] in "DT" and _PY_CHAIN.match(stripped))):  # "During...", "The above..."
            return True
        if stripped[0] in "CSW" and _CHAINED.match(stripped):
            return True  # a trace's `Caused by:` line, even one quoting a stamp that a layout would read
        if self._state == "time-alone" and not looks_like_record_start(line) and leading_time(stripped) is None:
            return True  # the lines under a time written on a line of its own are its record's
        if self._header is None and line[:13] == self._lines[0][:13]:  # the same second at least (the
            # shortest dated time, `081109 203615`), then once a record: its first line up to a level's slot
            first = self._lines[0]
            self._header = companion_lines.header(first, self._labels) if looks_timed(first) else ""
        if self._header and companion_lines.continues(self._header, line, self._labels):
            return True  # the same header, a label that is no level: the record's companion line
        if self._starts(line):
            return False
        if self._headed:
            return True
        if self._state == "traceback-frames" and _PY_FINAL.match(stripped):
            return True  # the exception line that closes a traceback
        if _JAVA_TRAILER.match(stripped) or (_EXCEPTION_LINE.match(stripped) and self._state != "traceback-closed"):
            return True  # (a JVM's exception line after a closed Python traceback is another program's report)
        return self._state == "goroutine"

    def _advance(self, line: str, stripped: str, goroutine: bool) -> None:
        if self._document:
            if len(self._lines) + self._folded > 1:
                if self._document == "xml":
                    self._depth = max(0, self._depth + xml_depth(stripped))
                    closed = self._depth == 0
                else:
                    closed = line == YAML_END
                self._json = closed  # the document is closed: nothing joins it
                self._document = "" if closed else self._document
            return
        if self._depth > 0 and len(self._lines) + self._folded > 1:
            self._depth = max(0, self._depth + json_depth(stripped))
            self._json = self._depth == 0  # the document is closed: nothing joins it
            return
        if self._quoted and '"' in line:
            self._open_quote ^= line.count('"') % 2 == 1
        if stripped.endswith(_PY_TRACEBACK):  # alone, or closing a logger's header (`logger.exception`)
            self._state = "traceback"
        elif goroutine:
            self._state = "goroutine"
        elif self._state in ("traceback", "traceback-frames"):
            indented = line[0] in " \t" and _INDENTED.match(line)
            self._state = "traceback-frames" if indented else (
                "traceback-closed" if self._state == "traceback-frames" and _PY_FINAL.match(stripped) else "plain")
        elif self._state == "traceback-closed":
            self._state = "plain"  # (a chain's "During handling..." line: the next traceback is the same report's)
