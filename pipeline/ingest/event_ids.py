"""Event identity by position, not content (CONTRACT §1).

The same line delivered twice (a re-read, an overlapping window, a restart) must be stored once,
and two identical lines at two positions are two events. So an event's id names where it was:

- in a file: the file's identity (a hash of its first line, which a rename-rotation, a re-save
  or a byte-identical copy keep, and a truncation that starts a new log changes), the byte
  offset of the record's first line, and a hash of that first line (two files that happen to
  start alike still differ wherever their records differ);
- in Splunk: the bucket and the event's address in it (`_bkt`, `_cd`), which Splunk keeps for an
  event across searches; without them, the raw text, `_time`, `_indextime`, host, source and the
  occurrence of that combination within the search (`_serial` is not used: it is the result's
  rank in one search and changes from one window to the next).

Events used to be identified by a hash of their normalised content (`events.normalize`); a JSON
event still carries that id as `LogEvent.content_id`, so that a data dir written by an older
version is not duplicated when one of its files is read again (see `Incidents.store_batch`).
"""
from __future__ import annotations

import hashlib

ID_CHARS = 24
HEAD_BYTES = 256


def _digest(*parts: object) -> str:
    text = "\x1f".join(str(p) for p in parts)
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:ID_CHARS]


def file_identity(first_line: bytes) -> str:
    """A file's identity: a hash of its first line (at most HEAD_BYTES bytes of it)."""
    return hashlib.sha1(first_line[:HEAD_BYTES]).hexdigest()[:16]


def file_event_id(identity: str, offset: int, first_line: bytes) -> str:
    """The id of the record whose first line starts at `offset` in the file `identity`."""
    # _digest("file", identity, offset, sha1 of the line) written out: one per record read
    text = f"file\x1f{identity}\x1f{offset}\x1f{hashlib.sha1(first_line).hexdigest()}"
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:ID_CHARS]


def splunk_event_id(*, bucket: str | None, address: str | None, raw: str, time: str, indextime: str,
                    host: str, source: str, occurrence: int) -> str:
    """The id of a Splunk result: its bucket and address, or the documented fallback."""
    if address:
        return _digest("splunk", bucket or "", address)
    return _digest("splunk-content", raw, time, indextime, host, source, occurrence)

