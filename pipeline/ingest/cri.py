"""Container logs as the kubelet and containerd write them (the CRI log format):

    2019-05-07T18:57:50.904275087+00:00 stdout P 1a. some
    2019-05-07T18:57:52.904275089+00:00 stdout F log

Each line is the runtime's time (RFC 3339, nanoseconds), the stream (`stdout`/`stderr`), a tag (`P`
a partial line: the runtime cut a long line; `F` the line's last part) and the container's text.
A line's parts are joined per stream (a `P` part waits for its stream's next parts up to the `F`
one, whatever the other stream writes between them), and the joined lines of each stream are then
joined into records as any log's lines are (`multiline`: a Java trace the container printed, one
line each, is one record). A record is kept at the position of its first part, written back as one
CRI line (`<time> <stream> F <text>`) with its continuation lines after it; `parse_cri` reads that:
the runtime's time, the stream as `fields.stream`, and the container's text read as the JSON
logger or text line it is.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable

from pipeline.ingest.multiline import MultilineJoiner, Record
from pipeline.ingest.parsed import ParsedRecord, ParseOptions, split_first, text_record
from pipeline.ingest.timestamps import parse_time

# Docker's json-file driver writes the same three things as one JSON object a line (moby's
# daemon/logger/jsonfilelog: `{"log":"<text>\n","stream":"stderr","attrs":{...},"time":"<RFC 3339>"}`),
# a line cut at 16 KiB without its `\n`: read as the CRI line it amounts to (`P` when the text lacks it)
_DOCKER_KEYS = frozenset(("log", "stream", "time", "attrs"))
LINE = re.compile(r"^(?P<time>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})) "
                  r"(?P<stream>stdout|stderr) (?P<tag>[PF])(?::\S*)?(?: (?P<text>.*))?$", re.S)
# the tag may carry more, colon-separated, after `P`/`F` (the kubelet reads `P:TAG1:TAG2` as `P`)

def envelope(line: str) -> tuple[str, str, str, str] | None:
    """(runtime's time, stream, tag, container's text) of a CRI line or a Docker json-file line."""
    m = LINE.match(line)
    if m is not None:
        return m["time"], m["stream"], m["tag"], m["text"] or ""
    if line[:1] != "{" or '"log"' not in line[:16]:
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if not isinstance(obj, dict) or not obj.keys() <= _DOCKER_KEYS or not isinstance(obj.get("log"), str) \
            or obj.get("stream") not in ("stdout", "stderr") or not isinstance(obj.get("time"), str):
        return None
    text = obj["log"]
    whole = text.endswith("\n")
    found = LINE.match(f"{obj['time']} {obj['stream']} F x")
    if found is None:
        return None
    return obj["time"], obj["stream"], "F" if whole else "P", text[:-1].removesuffix("\r") if whole else text


def texts(lines: list[str]) -> list[str]:
    """The container's own text of each CRI (or Docker json-file) line among `lines`."""
    return [found[3] for found in map(envelope, lines) if found is not None]


def parse_cri(text: str, opts: ParseOptions, *, inner_parse: Callable[[str], ParsedRecord] | None = None
              ) -> ParsedRecord | None:
    """One CRI record (module doc), or None when the text is not a CRI line. `inner_parse` reads the
    container's text (with its continuation lines) as the source's container writes it: a parser
    detected from the containers' own lines, so a logger's header there gives the level and message."""
    first, rest = split_first(text)
    found = envelope(first)
    if found is None:
        return None
    time = parse_time(found[0], opts)
    if time is None:
        return None
    stream, content = found[1], found[3]
    inner = None
    if inner_parse is not None and content.strip():
        inner = inner_parse(content + ("\n" + rest if rest else ""))
        inner.format = "cri"
        # the runtime's time, as every reader of these logs takes it: the text's own may lack a year
        # or a zone, and where it is right it is the same instant
        inner.time = time
        inner.fields = {**inner.fields, "stream": stream}
        return inner
    if content.lstrip().startswith("{"):
        from pipeline.ingest.structured import parse_json

        inner = parse_json(content, opts)
    if inner is not None:
        inner.format = "cri"
        inner.time = inner.time or time
        inner.fields = {**inner.fields, "stream": stream}
        if rest:
            inner.stack = "\n".join(s for s in (inner.stack, rest.strip("\n")) if s)
        return inner
    return text_record("cri", content, rest, time=time, fields={"stream": stream})


MAX_HELD = 1_000  # records of other streams a stream's unfinished record may hold back


class StreamJoiner:
    """A `MultilineJoiner` for CRI lines: parts joined per stream, then each stream's lines into
    records (module doc). Same interface: `feed`, `flush`, `pending_position`, `pending_can_grow`.
    Records come out in the order of their first lines, so where a read stops is always before every
    record it has not given out (a record of one stream waits for an earlier one of the other
    stream, at most MAX_HELD records: then the earlier one comes out as it is). A line that is not a
    CRI line is a record of its own."""

    def __init__(self) -> None:
        self._parts: dict[str, tuple[Any, str, list[str]]] = {}  # stream → (first position, header, texts)
        self._joiners: dict[str, MultilineJoiner] = {}
        self._done: list[Record] = []  # records complete, waiting for an earlier one

    def _joiner(self, stream: str) -> MultilineJoiner:
        if stream not in self._joiners:
            self._joiners[stream] = MultilineJoiner()  # the container's text: any log's lines
        return self._joiners[stream]

    def feed(self, position: Any, line: str) -> list[Record]:
        found = envelope(line.rstrip("\r\n"))
        if found is None:
            self._done += self._joiner("").feed(position, line)
            return self._release()
        time, stream, tag, text = found
        # parts and lines join within one writer's stream: a Docker json-file part never ends with a
        # CRI line of the same stream name (a file holding both is two writers)
        key = f"json {stream}" if line[:1] == "{" else stream
        first, header, texts = self._parts.pop(key, (position, f"{time} {stream}", []))
        texts.append(text)
        if tag == "P":
            self._parts[key] = (first, header, texts)
            return self._release()
        self._done += self._records(key, self._joiner(key).feed((first, position, header), "".join(texts)))
        return self._release()

    def flush(self) -> list[Record]:
        for stream in list(self._parts):
            self._finish(stream)
        for stream, joiner in self._joiners.items():
            self._done += self._records(stream, joiner.flush())
        return self._release()

    def _finish(self, stream: str) -> None:
        """A stream's unfinished line (a `P` part the runtime never ended) as it is."""
        first, header, texts = self._parts.pop(stream)
        self._done += self._records(stream, self._joiner(stream).feed((first, first, header), "".join(texts)))

    def _release(self) -> list[Record]:
        while len(self._done) > MAX_HELD:  # the earliest unfinished record comes out as it is
            floor = self._floor()
            stream = next(s for s, (first, _, _) in self._parts.items() if first == floor) if any(
                first == floor for first, _, _ in self._parts.values()) else None
            if stream is not None:
                self._finish(stream)
            stream = next((s for s, j in self._joiners.items() if j.pending_position is not None
                           and (j.pending_position[0] if s else j.pending_position) == floor), None)
            if stream is not None:
                self._done += self._records(stream, self._joiners[stream].flush())
            if floor is None or self._floor() == floor:
                break
        floor = self._floor()
        # a record comes out once its last line is before every line of the records not complete:
        # a read that stops after it resumes at the first of those and meets none of its lines again
        out = [r for r in self._done if floor is None or _offset(r.last_position) < _offset(floor)]
        if out:
            self._done = [r for r in self._done if not (floor is None or _offset(r.last_position) < _offset(floor))]
        return sorted(out, key=lambda r: _offset(r.position))

    def _floor(self) -> Any:
        """The first position of the earliest record not complete yet, or None."""
        held = [first for first, _, _ in self._parts.values()]
        for stream, joiner in self._joiners.items():
            if joiner.pending_position is not None:
                held.append(joiner.pending_position[0] if stream else joiner.pending_position)
        return min(held, key=_offset) if held else None

    @staticmethod
    def _records(stream: str, records: list[Record]) -> list[Record]:
        """A stream's joined records as CRI records: each at its first part's position, its text after
        that part's time and stream, its last position its last line's last part's. The stream
        joiners' positions are (first part's position, last part's position, "time stream")."""
        if not stream:
            return records
        return [r._replace(position=r.position[0], text=f"{r.position[2]} F {r.text}",
                           last_position=r.last_position[1]) for r in records]

    @property
    def pending_position(self) -> Any:
        """Where a read that stops now resumes: the first line of the earliest record not given out."""
        held = [p for p in (self._floor(), *(r.position for r in self._done)) if p is not None]
        return min(held, key=_offset) if held else None

    @property
    def pending_can_grow(self) -> bool:
        return bool(self._parts) or any(j.pending_can_grow for j in self._joiners.values())


def _offset(position: Any) -> Any:
    return position[0] if isinstance(position, tuple) else position
