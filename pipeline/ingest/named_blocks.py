"""Records written as numbered blocks of `Key: value` lines (CONTRACT §1).

Some tools print each record as a block: a line naming it with its number (`Event[0]:`, as Windows'
`wevtutil qe /f:text` prints events), its values as indented `Key: value` lines, then free text, the
record's description, on the lines after a key whose value is empty (`Description:`). Each block is
one record; its keys take their roles by their names and values as a JSON object's do
(`structured.record_from_object`: `Date` the time, `Level` the level), and the free text is its
message (else the value of a key naming a message).

A source is read so when its sample opens with such a numbered line and holds at least as many
indented `Key: value` lines as blocks: a line `Item[3]:` alone inside other text opens nothing.
"""
from __future__ import annotations

import re

from pipeline.ingest.parsed import ParsedRecord, ParseOptions
from pipeline.ingest.structured import record_from_object

# a block's opening line: a name and its number in brackets, then a colon, alone on its line
OPENER = re.compile(r"^[A-Za-z][\w .-]{0,40}\[\d{1,9}\]:\s*$")
_PAIR = re.compile(r"^[ \t]+([A-Za-z][\w .()/-]{0,40}?):(?:[ \t]+(.*?))?\s*$")
_MESSAGE_KEYS = ("description", "message", "msg", "text")


def learn(lines: list[str]) -> bool:
    """Whether a sample is written in numbered blocks (module doc)."""
    heads = [line for line in lines if line.strip()]
    if not heads or OPENER.match(heads[0]) is None:
        return False
    openers = sum(1 for line in heads if OPENER.match(line))
    pairs = sum(1 for line in heads if _PAIR.match(line))
    return pairs >= max(2, openers)


def block_record(text: str, opts: ParseOptions) -> ParsedRecord | None:
    """One block → its record; None when `text` does not open with a numbered line."""
    first, _, body = text.partition("\n")
    if OPENER.match(first) is None:
        return None
    values: dict[str, str] = {}
    free: list[str] = []
    for line in body.split("\n"):
        m = _PAIR.match(line) if not free else None
        if m is not None:
            values.setdefault(m.group(1).strip(), (m.group(2) or "").strip())
        elif line.strip():
            free.append(line.strip())
    described = " ".join(free) or next((v for k, v in values.items() if k.lower() in _MESSAGE_KEYS and v), "")
    obj = {k: v for k, v in values.items() if v and k.lower() not in _MESSAGE_KEYS}
    if described:
        obj = {"message": described, **obj}  # the text is the message, before a key that names a log (`Log Name`)
    record = record_from_object(obj, opts, format="block")
    record.fields["block"] = first.strip().rstrip(":")
    return record
