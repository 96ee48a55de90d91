"""Raw log lines → LogEvent (CONTRACT §1).

A line that cannot become an event raises `InvalidEvent` with a one-line reason; file readers
turn that into a `DeadLetter` and carry on, so one bad line never hides the lines after it.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from pipeline import storable
from pipeline.errors import InvalidEvent, SourceError, UsageError
from pipeline.ingest.levels import normalize_level
from pipeline.ingest.timestamps import MAX_YEAR, MIN_YEAR, parse_time
from pipeline.state import LogEvent

EXCERPT_CHARS = 2_000
_CHUNK = 64 * 1024
_LOG_SUFFIXES = (".jsonl", ".log", ".json")
MAX_FOLDER_ENTRIES = 100_000  # of a folder source, sub-folders included (see iter_paths)

# Canonical field → accepted names, first match wins. A dotted name matches a literal key
# ("error.type") or a nested object ({"error": {"type": ...}}), as ECS-style loggers emit both.
_ALIASES: dict[str, tuple[str, ...]] = {
    "time": ("_time", "time", "timestamp", "@timestamp"),
    "message": ("message", "_raw", "msg"),
    "service": ("service", "app", "sourcetype"),
    "host": ("host",),
    "level": ("level", "severity", "log_level"),
    "exception": ("exception", "exception_type", "error.type"),
    "stack": ("stack", "stacktrace", "error.stack"),
    "trace_id": ("trace_id", "traceId"),
}
_LEVELS = {
    "TRACE": "DEBUG", "DEBUG": "DEBUG",
    "INFO": "INFO", "NOTICE": "INFO",
    "WARN": "WARN", "WARNING": "WARN",
    "ERR": "ERROR", "ERROR": "ERROR",
    "FATAL": "FATAL", "CRITICAL": "FATAL", "CRIT": "FATAL", "PANIC": "FATAL",
    "EMERG": "FATAL", "EMERGENCY": "FATAL", "ALERT": "FATAL",
}
MAX_FIELD_DEPTH = storable.MAX_DEPTH


@dataclass(frozen=True)
class DeadLetter:
    """A rejected input line: where it was, why, and an excerpt of it."""

    source: str
    position: str
    reason: str
    raw: str


def normalize(obj: dict, *, source: str = "", position: str = "") -> LogEvent:
    """One decoded log object → LogEvent, applying the aliases of CONTRACT §1."""
    if not isinstance(obj, dict):
        raise InvalidEvent(f"not a JSON object: {_json_type(obj)}")
    _check_storable(obj)
    rest = dict(obj)
    raw_time = _take(rest, _ALIASES["time"])
    raw_message = _take(rest, _ALIASES["message"])
    if raw_time is None:
        raise InvalidEvent("missing required field: _time")
    if raw_message is None:
        raise InvalidEvent("missing required field: message")
    if not isinstance(raw_message, str):
        raise InvalidEvent(f"invalid message: expected a string, got {_json_type(raw_message)}")
    message = raw_message.strip()
    if not message:
        raise InvalidEvent("empty required field: message")
    time = _parse_time(raw_time)
    level = _parse_level(_take(rest, _ALIASES["level"]), rest)
    values = {name: _text(name, _take(rest, _ALIASES[name]))
              for name in ("service", "host", "exception", "stack", "trace_id")}
    values["service"] = values["service"] or "unknown"
    identity = dict(values, time=time.isoformat(), level=level, message=message, fields=rest)
    return LogEvent(
        event_id=_event_id(identity), time=time, message=message, level=level,
        fields=rest, source=source, position=position, **values,
    )


def parse_line(raw: bytes, *, source: str, position: str, max_bytes: int) -> LogEvent:
    """One line of bytes (without its newline) → LogEvent, or InvalidEvent saying why not."""
    if len(raw) > max_bytes:
        raise InvalidEvent(_too_long(len(raw), max_bytes))
    if b"\x00" in raw:
        raise InvalidEvent("contains NUL bytes")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidEvent(f"invalid UTF-8 at byte {error.start}") from None
    try:
        # Files saved by Windows editors start with a BOM, which json refuses.
        obj = json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as error:
        raise InvalidEvent(f"invalid JSON: {error}") from None
    except RecursionError:
        raise InvalidEvent("invalid JSON: nested too deeply") from None
    return normalize(obj, source=source, position=position)


class JsonlReader:
    """Iterates `(end_offset, LogEvent | DeadLetter)` over the complete lines of a JSONL file.

    `offset` is the byte offset just after the last consumed line, blank lines included; save it
    after iterating and pass it as `start` next time to read only what was appended since.
    An unterminated last line is not consumed (a writer may still be appending to it) unless
    `final=True`, for one-shot reads of files that simply lack a trailing newline.
    """

    def __init__(self, path: Path, *, start: int = 0, max_bytes: int, final: bool = False):
        self.path = Path(path)
        self.offset = start
        self.max_bytes = max_bytes
        self.final = final
        self._items = self._read()

    def __iter__(self) -> JsonlReader:
        return self

    def __next__(self) -> tuple[int, LogEvent | DeadLetter]:
        return next(self._items)

    def _read(self) -> Iterator[tuple[int, LogEvent | DeadLetter]]:
        try:
            file = open(self.path, "rb")
        except OSError as error:
            raise SourceError(f"cannot read {self.path}: {error.strerror}") from None
        with file:
            file.seek(self.offset)
            while True:
                line_start = self.offset
                # Never hold more than max_bytes + 1 of a line: enough to know it is too long.
                head = file.readline(self.max_bytes + 1)
                size, last = len(head), head
                while last and not last.endswith(b"\n") and size > self.max_bytes:
                    last = file.readline(_CHUNK)
                    size += len(last)
                terminated = last.endswith(b"\n")
                if size == 0 or not (terminated or self.final):
                    return
                end = line_start + size
                content_size = size - 1 if terminated else size
                position = f"{self.path}@{line_start}"
                if content_size > self.max_bytes:
                    item = DeadLetter(str(self.path), position,
                                      _too_long(content_size, self.max_bytes),
                                      _excerpt(head, total=content_size))
                else:
                    content = head[:content_size].removesuffix(b"\r")
                    if not content.strip():
                        self.offset = end
                        continue
                    item = self._parse(content, position)
                self.offset = end
                yield end, item

    def _parse(self, content: bytes, position: str) -> LogEvent | DeadLetter:
        try:
            return parse_line(content, source=str(self.path), position=position,
                              max_bytes=self.max_bytes)
        except InvalidEvent as error:
            return DeadLetter(str(self.path), position, error.reason, _excerpt(content))


def read_jsonl(path: Path, *, start: int = 0, max_bytes: int, final: bool = False) -> JsonlReader:
    """Read events from a JSONL file from byte `start`; see JsonlReader for offsets."""
    return JsonlReader(path, start=start, max_bytes=max_bytes, final=final)


def iter_paths(path: Path) -> list[Path]:
    """The log files to read: the file itself, or a folder's log files sorted by path.

    A folder changes while it is listed (Kubernetes pod folders come and go, day folders are
    pruned): what vanished or cannot be opened is left out, never an error (`rglob` raised
    FileNotFoundError and ended `ingest` and the poller, issue 39.3). A folder of more than
    MAX_FOLDER_ENTRIES files and folders (`file:/`, `/proc`: not a log folder, and walked again
    every poll) is refused with a SourceError naming it."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise UsageError(f"no such file or folder: {path}")
    found: list[Path] = []
    entries = 0
    # os.walk leaves out a folder it cannot list (gone, or unreadable: onerror is None) and enters
    # no symlinked folder (a link to a file is checked by _inside)
    for top, folders, files in os.walk(path):
        entries += len(folders) + len(files)
        if entries > MAX_FOLDER_ENTRIES:
            raise SourceError(f"{path} holds more than {MAX_FOLDER_ENTRIES:,} files and folders: name the"
                              " folder the logs are in")
        for name in files:
            file = Path(top, name)
            if file.suffix in _LOG_SUFFIXES and os.path.isfile(file) and _inside(file, path):
                found.append(file)
    return sorted(found, key=lambda p: p.relative_to(path).parts)


def _inside(file: Path, folder: Path) -> bool:
    """Whether a file found in a folder really is in it: a symlink to a file elsewhere (say
    /etc/shadow named app.log) would put that file's lines in the records and the dead letters."""
    try:
        return file.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError):  # a dangling link or a link loop
        return False


def _take(rest: dict, names: tuple[str, ...]) -> Any:
    """Pop the first of `names` holding a value; a null counts as absent."""
    for name in names:
        if name in rest:
            value = rest.pop(name)
        elif "." in name and isinstance(rest.get(name.split(".")[0]), dict):
            parent, child = name.split(".", 1)
            nested = dict(rest[parent])  # a copy: the caller's object stays untouched
            if child not in nested:
                continue
            value = nested.pop(child)
            if nested:
                rest[parent] = nested
            else:
                del rest[parent]
        else:
            continue
        if value is not None:
            return value
    return None


def _check_storable(obj: dict) -> None:
    reason = storable.problem(obj, max_depth=MAX_FIELD_DEPTH)
    if reason:
        raise InvalidEvent(reason)


def _parse_time(value: Any) -> datetime:
    """The event's time by the rules of `pipeline.ingest.timestamps` (a time without an offset is
    UTC: shippers that omit it log in UTC); InvalidEvent when unreadable or outside MIN_YEAR-MAX_YEAR."""
    parsed = parse_time(value)
    if parsed is None:
        raise InvalidEvent(f"unparseable time: {_show(value)}")
    if not MIN_YEAR <= parsed.year <= MAX_YEAR:
        raise InvalidEvent(f"time out of range (years {MIN_YEAR}-{MAX_YEAR}): {_show(value)}")
    return parsed


def _parse_level(value: Any, rest: dict) -> str | None:
    if value is None:
        return None
    # every common spelling, as the file readers map it (CONTRACT §1 "Levels": .NET's and Serilog's
    # `Information`, `Verbose`, java.util.logging's `SEVERE`, `FINE`); a word no list knows stays raw
    # a number is a syslog severity (0-7) or a bunyan/pino level (10-60)
    level = (_LEVELS.get(value.strip().upper()) if isinstance(value, str) else None) or normalize_level(value)
    if level is None:
        rest["level_raw"] = value  # keep what we could not map, for the reviewer
    return level


def _text(name: str, value: Any) -> str | None:
    if isinstance(value, list) and name == "stack" and all(isinstance(v, str) for v in value):
        value = "\n".join(value)  # some loggers emit the stack as a list of frames
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    if value is not None and not isinstance(value, str):
        raise InvalidEvent(f"invalid {name}: expected a string, got {_json_type(value)}")
    return (value or "").strip() or None


def _event_id(identity: dict) -> str:
    # Content only, never source or position: re-reading a source must yield the same ids.
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:24]


def _too_long(size: int, limit: int) -> str:
    return f"line of {size} bytes exceeds the limit of {limit}"


def _excerpt(data: bytes, *, total: int | None = None) -> str:
    """The first EXCERPT_CHARS characters of a line, readable whatever its bytes.

    Invalid bytes show as U+FFFD and NULs as a visible \\x00; `total` is the line's full size,
    which may exceed len(data) when only the head of a huge line was kept.
    """
    total = len(data) if total is None else total
    # surrogateescape maps every invalid byte to one character, so bytes shown can be counted.
    text = data[: EXCERPT_CHARS * 4].decode("utf-8", errors="surrogateescape")
    shown, used, budget = [], 0, EXCERPT_CHARS
    for char in text:
        piece = "\\x00" if char == "\x00" else "\ufffd" if "\udc80" <= char <= "\udcff" else char
        if len(piece) > budget:
            break
        shown.append(piece)
        budget -= len(piece)
        used += len(char.encode("utf-8", errors="surrogateescape"))
    dropped = total - used
    return "".join(shown) + (f"…[truncated {dropped} bytes]" if dropped > 0 else "")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "list", dict: "object"}.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    shown = repr(value)  # repr keeps the reason on one line whatever the value holds
    return shown if len(shown) <= 80 else shown[:77] + "..."


def content_id_of(text: str) -> str | None:
    """The content id older versions gave a JSON line (None for any other line)."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        return normalize(json.loads(stripped)).event_id
    except (InvalidEvent, ValueError, RecursionError, TypeError, AttributeError):
        return None
