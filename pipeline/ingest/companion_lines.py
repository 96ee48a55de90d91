"""Companion lines: a line that repeats, word for word, the header of the record before it (the same
time and the same process) and writes in that header's level slot an upper-case label that is no
level of the source continues that record (CONTRACT §1). PostgreSQL writes an error report so: its
`ERROR:` line, then `DETAIL:`, `HINT:`, `QUERY:`, `CONTEXT:`, `STATEMENT:`, `LOCATION:` lines under
the same prefix (the elog fields of one report); every PostgreSQL-derived server does the same.

The reading is of structure, not of those words:
- the slot is the first upper-case word closed by a colon and a blank or the line's end (`ERROR:  `,
  `…:[7]:LOG:  `) among a line's first LABEL_REACH characters, and the record's first line writes a
  level there (a message's own first `WORD:` under a header of one second is no slot);
- the header is what comes before the slot: it must open with a time (`looks_timed`) and be the
  same, character for character, as the record's first line's, whose slot holds a word too;
- a label is a level when any logger's level vocabulary names it (`normalize_level`: ERROR, LOG,
  NOTICE, DEBUG1…), or when the source itself uses it as one: in the detection sample it opens
  lines whose header differs from the line before more often than it repeats the header of the
  line before (`label_counts`). A level never continues a record, whatever its header (two records
  of one process in one millisecond stay two).
"""
from __future__ import annotations

import re
from typing import Iterable

from pipeline.ingest.levels import normalize_level

LABEL_REACH = 200  # characters: a header longer than this holds no level slot we read
_LABEL = re.compile(r"(?:(?<=\s)|(?<=[:\]-]))([A-Z][A-Z_]{2,11}):(?=\s|$)")
_WORD = re.compile(r"([A-Z][A-Z_]{2,11}):(?=\s|$)")  # the slot's word where the header ends


def label(line: str) -> tuple[int, str] | None:
    """(where the level slot's word starts, the word) for a line that writes one, else None: the
    first `_LABEL` among its first LABEL_REACH characters, found from the colons that a blank or the
    line's end follows (a search of the pattern costs five to ten times as much, once a record)."""
    end = min(len(line), LABEL_REACH)
    colon = line.find(":", 0, end)
    while colon != -1:
        after = line[colon + 1:colon + 2]
        if not after or after.isspace():
            start = colon
            while start > 0 and ("A" <= line[start - 1] <= "Z" or line[start - 1] == "_"):
                start -= 1
            if 3 <= colon - start <= 12 and line[start] != "_" and start > 0 and (
                    line[start - 1].isspace() or line[start - 1] in ":]-"):
                return start, line[start:colon]
        colon = line.find(":", colon + 1, end)
    return None


def label_counts(lines: Iterable[str]) -> dict[str, list[int]]:
    """Per slot word of a sample: [lines it opens under a header other than the line before's,
    lines it writes under the same header as the line before]."""
    counts: dict[str, list[int]] = {}
    header = None
    for line in lines:
        if not line or line[0] in " \t":
            continue
        slot = label(line)
        if slot is None:
            header = None
            continue
        at, word = slot
        counts.setdefault(word, [0, 0])[line[:at] == header] += 1
        header = line[:at]
    return counts


def is_level(word: str, counts: dict[str, list[int]] | None) -> bool:
    """Whether a slot word is a level of the source (module doc)."""
    if normalize_level(word) is not None:
        return True
    seen = counts.get(word) if counts else None
    return seen is not None and seen[0] > seen[1]


def header(first: str, counts: dict[str, list[int]] | None) -> str:
    """What a companion of the record whose first line is `first` repeats: that line up to its level
    slot, when the slot holds a level (module doc; that it opens with a time the caller asks:
    `multiline.looks_timed`), else ""."""
    slot = label(first)
    return first[:slot[0]] if slot is not None and is_level(slot[1], counts) else ""


def continues(head: str, line: str, counts: dict[str, list[int]] | None) -> bool:
    """Whether `line` is a companion of a record whose `header` is `head` (module doc)."""
    if not head or not line.startswith(head):
        return False
    found = _WORD.match(line, len(head))
    return found is not None and not is_level(found.group(1), counts)
