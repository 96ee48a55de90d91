"""A program's syslog tag after another layout's header: `<header> [host ]program[pid]: message`
(CONTRACT §1). A logger whose own header (Go's `2006/01/02 15:04:05`, a learnt time and nothing else)
is followed by what a syslog relay writes, an optional host and the `program[pid]:` tag, names
the program that wrote the line: the program is the record's service, the pid `fields.pid`, the
host its host, and none of them is the message's. Read only where the header named no service: a
tag is told by its bracketed pid of digits closed by `]:` and a blank (`worker[3]: started`), so a
message's `word:` (`http: panic serving …`, `success: process entered RUNNING state`) stays its own.
"""
from __future__ import annotations

import re

# an optional host (a name or an address), then the program (a name, paths and dots allowed) and
# its pid in brackets, closed by a colon and a blank
_TAG = re.compile(r"(?:(?P<host>[A-Za-z0-9][\w.:-]{0,62}) )?(?P<program>[A-Za-z_][\w./@-]{0,63})\[(?P<pid>\d{1,10})\]: +(?=\S)")


def program_tag(message: str) -> tuple[str | None, str, str, str] | None:
    """(host or None, program, pid, the message after the tag) for a message that opens with a
    syslog tag (module doc), else None."""
    if "]: " not in message[:140]:
        return None
    found = _TAG.match(message)
    if found is None:
        return None
    return found["host"], found["program"], found["pid"], message[found.end():]
