"""The service of a file's lines when neither the line nor its layout names one (an Apache error log,
Proxifier's log): the program the file is the log of, by the file's own name.

Why the file's name and not a program named inside the line: a line's program (Proxifier's
`chrome.exe`) is what the writer was serving, not the writer, and it varies line by line, so one
failing proxy would read as a dozen services; the file is the writer's own. Its name is read as a person
names the log: the stem without its extensions and without the parts a rotation, a date or a size adds
(`Apache_2k.log` → `Apache`, `app-2024-05-01.log.1` → `app`); a stem that only says which kind of log it is
(`error.log`, `access_log`, `messages`) names nothing, so the folder it is in names it
(`/var/log/httpd/error_log` → `httpd`)."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import PurePosixPath, PureWindowsPath

from pipeline.state import UNNAMED_SERVICE

# a part a rotation, a date, a size or a count adds: it holds a digit ("2k", "2024", "1", "10MB")
_NUMBERED_PART = re.compile(r"[._-][^._-]*\d[^._-]*$")
# the names of a log's kinds, which a web server, syslog or a runtime gives its files whatever the
# program: they say which log, not whose
_KIND_OF_LOG = frozenset({"log", "logs", "error", "errors", "access", "messages", "syslog", "out", "err", "stdout",
                          "stderr", "debug", "info", "warn", "current", "output", "console", "trace", "events"})
# folders that hold any program's logs
_NO_PROGRAM = _KIND_OF_LOG | {"tmp", "temp", "var", "data", "home", "srv"}
# an id (a container's, a run's): whose log it is, nobody reads from it
_AN_ID = re.compile(r"[0-9a-f]{12,}(?:[._-].*)?", re.IGNORECASE)
_EXTENSION = re.compile(r"\.(?:log|txt|out|err|json|jsonl|ndjson|csv|gz|bz2|xz|zst|\d+)$", re.IGNORECASE)


@lru_cache(maxsize=1024)  # once per file, not per line
def service_of_source(source: str) -> str:
    """The name the file `source` gives the program it is the log of; UNNAMED_SERVICE when it gives none."""
    path = PureWindowsPath(source) if "\\" in source else PurePosixPath(source)
    name = _program_in(path.name)
    if name is None:  # only a kind of log: the folder names whose
        name = _program_in(path.parent.name)
    return name or UNNAMED_SERVICE


def _program_in(name: str) -> str | None:
    """The program a file or folder name names; "" when it names none, None when it names only a kind of log."""
    while True:
        shorter = _EXTENSION.sub("", name)
        shorter = _NUMBERED_PART.sub("", shorter) if _NUMBERED_PART.search(shorter) and \
            _NUMBERED_PART.sub("", shorter) else shorter
        if shorter == name:
            break
        name = shorter
    name = name.strip("._- ")
    if name.lower().replace("-", "_").split("_")[0] in _NO_PROGRAM or not any(c.isalpha() for c in name):
        return None
    return "" if _AN_ID.fullmatch(name) else name
