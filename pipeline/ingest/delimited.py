"""Headers written as delimited columns (issue 34.2-34.4): the time, a delimiter, the level, the same
delimiter, then the message, each column bare or quoted, as CSV-style layouts write them
(`${longdate};${level};${message}`, NLog's CsvLayout, log4net's and Serilog's delimited templates):

    2010-01-01 12:34:56.0000;Info;hello, world
    '2010-01-01 12:34:56.0000'|'Info'|'hello, world'
    2010-01-01 12:34:56.0000zzzInfozzzhello, world

The delimiter is whatever the line writes between the time and its level word, when the same text
follows that word: a character (`;`, `,`, `|`, a tab), a run of them, or a word the writer chose.
Blanks alone are a delimiter only between quoted columns (a blank-cut header is `layout.learn`'s).
A column may be quoted (`'` or `"`, only where it needs it: a quoted message may span lines); the
quotes are not the value's.

`learn_delimited(lines)` is the layout most of the lines share, or None; `learn(sample)` is
`layout.learn`'s layout, or this one where the blank- or separator-cut columns give no layout, or one
without a level (the learnt layouts' callers use it: `layout_set`, `reading`).
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

from pipeline.ingest.layout import MIN_SHARE, SAMPLE, Layout, _is_level
from pipeline.ingest.layout import learn as learn_columns
from pipeline.ingest.timestamps import TIME_SHAPES, spaced

_QUOTES = "'\""
MAX_DELIMITER = 5  # characters: a delimiter is short (a word the writer chose included)
_SHAPES = [(s.name, s.score, re.compile(spaced(s.regex))) for s in TIME_SHAPES]


def _leading_time(line: str, at: int) -> tuple[str, int] | None:
    """(shape, end) of the best-scoring (then longest) timestamp that opens `line` at `at`."""
    best: tuple[int, int, str] | None = None
    for name, score, regex in _SHAPES:
        m = regex.match(line, at)
        if m is not None and m.end() > at and (best is None or (score, m.end()) > best[:2]):
            best = (score, m.end(), name)
    return (best[2], best[1]) if best is not None else None


def delimiter(line: str) -> tuple[str, str, bool] | None:
    """(time shape, delimiter, quoted) of a line that opens `time D level D`, or None."""
    at = 1 if line[:1] in _QUOTES else 0
    found = _leading_time(line, at)
    if found is None:
        return None
    shape, end = found
    if at and line[end:end + 1] != line[0]:
        return None  # an opening quote the time does not close
    end += at
    if end < len(line) and (line[end].isdigit() or line[end - 1].isalpha() and line[end].isalpha()):
        return None  # the time's spelling stopped inside a longer token
    for n in range(1, MAX_DELIMITER + 1):
        d = line[end:end + n]
        if len(d) < n or d[-1:] in _QUOTES:
            break
        nxt = line.find(d, end + n)
        if nxt < 0:
            continue
        word = line[end + n:nxt]
        quoted = bool(word) and word[0] in _QUOTES and word[-1] == word[0]
        bare = word[1:-1] if quoted else word
        if (bare.isalpha() and _is_level(bare)) and (d.strip() or quoted or at):
            return shape, d, bool(at or quoted)
    return None


def learn_delimited(lines: list[str]) -> Layout | None:
    """The delimited layout most of `lines` share (module doc), or None."""
    seen = [found for found in map(delimiter, lines) if found is not None]
    if not seen:
        return None
    (shape, d, quoted), count = Counter(seen).most_common(1)[0]
    if count < MIN_SHARE * len(lines):
        return None
    q = r"[\"']?" if quoted else ""
    sep = re.escape(d)
    time_re = re.sub(r"\(\?P<\w+>", "(?:", spaced(next(s.regex for s in TIME_SHAPES if s.name == shape)))
    pattern = (rf"^{q}(?P<time>{time_re}){q}{sep}{q}(?P<f1>[A-Za-z]{{1,12}}?\d?){q}"
               rf"{sep}{q}(?P<message>.*?){q}\s*$")
    layout = Layout(pattern=pattern, time_shape=shape, columns=["time", "level"], separator=d,
                    names={"level": "f1"}, sample_size=len(lines))
    matches = [layout.match(line) for line in lines]
    layout.share = sum(1 for m in matches if m is not None and layout.read_time(m["time"]) is not None) / len(lines)
    return layout if layout.share >= MIN_SHARE else None


def learn(sample: Iterable[str], *, limit: int = SAMPLE) -> Layout | None:
    """The layout of `sample`: `layout.learn`'s, or the delimited one where that gives none or none
    with a level (a level the delimiter around it tells, which the blank-cut columns miss)."""
    lines = [ln.rstrip("\r\n") for ln in sample if ln.strip()][:limit]
    layout = learn_columns(lines, limit=limit)
    if layout is None or "level" not in layout.names:
        delimited = learn_delimited([ln for ln in lines if not ln[:1].isspace()])
        if delimited is not None and (layout is None or delimited.share >= layout.share):
            return delimited
    return layout
