"""What identifies one service's failure (CONTRACT §2): names that tie errors of the same service only, never
two errors naming different destinations or resources (`outage.Candidate.ties`): its operation family (the first
words of its line past any route), an errno it failed with (its symbol or the C library's text for it) and an
exception class it raised. An errno of a resource the whole host shares (a full disk) ties the host's services.
"""
from __future__ import annotations

import errno
import os
import re

from pipeline.incidents.writers import IP_OR_ADDRESS, writer_service
from pipeline.state import LogEvent

# names that tie errors of one service only (the service is part of the name): its operation family (the
# first words of its masked line), an errno it failed with, an exception class it raised; they never tie
# two errors that name different destinations or resources (`outage.Candidate.ties`)
FAMILY, ERRNO, CLASS = "fam:", "err:", "cls:"
SAME_SERVICE = (FAMILY, ERRNO, CLASS)
FAMILY_WORDS = 3
# an errno a line failed with: its symbol (Node's and Go's `EMFILE`, `ECONNREFUSED`) or the C library's text
# for it (`Too many open files`, PostgreSQL's %m), both read from the platform's own errno table
# (not EPERM and EINVAL: "operation not permitted" and "invalid argument" say a call was refused or
# misused, not which resource failed)
_VAGUE_ERRNOS = frozenset({"EPERM", "EINVAL"})
_ERRNO_TEXT = {os.strerror(n).lower(): name for n, name in sorted(errno.errorcode.items())
               if name not in _VAGUE_ERRNOS and not os.strerror(n).lower().startswith("unknown error")}
_ERRNO_CODES = frozenset(errno.errorcode.values()) - _VAGUE_ERRNOS
# errnos of a resource the host's services share (a filesystem full or over quota, the system's file table
# full), not a process's own (EMFILE is one process's descriptors)
HOST_ERRNOS = frozenset({"ENOSPC", "EDQUOT", "ENFILE"})
_ERRNO_CODE = re.compile(r"\b(E[A-Z0-9]{2,15})\b")
_LOWER_WORD = re.compile(r"[a-z0-9]+")
# each text filed under its first two words: a line's own word pairs say which texts can be in it
_ERRNO_BY_PAIR: dict[tuple[str, ...], list[str]] = {}
for _text in _ERRNO_TEXT:
    _ERRNO_BY_PAIR.setdefault(tuple(_LOWER_WORD.findall(_text)[:2]), []).append(_text)
# what a line's operation family leaves out: quoted values and mail addresses (a word holding a
# digit is left out where the family is read)
_VALUES = re.compile(r'"[^"\n]*"|(?<!\w)\'[^\'\n]*\'(?!\w)|\S+@\S+')
_QUALIFIED_CLASS = re.compile(r"\b((?:[a-z_][\w]*\.)+[A-Z][\w$]*)\b")
_GENERIC_PACKAGE = re.compile(r"^(?:java\.lang|builtins|System|kotlin)\.")
_FAMILY_WORD = re.compile(r"(?<![\w/.-])[^\W\d_][\w/.-]*")


def same_service_names(event: LogEvent, head: str, text: str, chain: list[str]) -> list[str]:
    """The names that tie errors of the event's service only: its operation family (the first
    FAMILY_WORDS words of its masked first line), the errnos it names, the exception classes it
    raised (qualified, not a language's generic ones)."""
    # (session 53: a logger's class is no service: the file's application is, `writers.writer_service`)
    service = writer_service(event).lower()
    names = []
    # the line's own words, values left out (quoted, an address, any word holding a digit), read
    # without masking the line again: the miner masked it once already (issue 37.2)
    head = _VALUES.sub(" ", head)
    # a route or method a line serves (`POST /api/v1/checkout failed: ...`) is every error of that
    # operation, whatever broke: the family is in the words past it
    family = [w.rstrip(".:,;") for w in _FAMILY_WORD.findall(head)
              if "/" not in w and not w.isupper() and not any(c.isdigit() for c in w)][:FAMILY_WORDS]
    if len(family) == FAMILY_WORDS:
        names.append(f"{FAMILY}{service}|{' '.join(family).lower()}")
    codes = {c for c in _ERRNO_CODE.findall(text) if c in _ERRNO_CODES}
    lowered = text.lower()
    words = _LOWER_WORD.findall(lowered)
    for pair in {*zip(words, words[1:]), *((w,) for w in words)} & _ERRNO_BY_PAIR.keys():
        codes.update(_ERRNO_TEXT[t] for t in _ERRNO_BY_PAIR[pair] if t in lowered)
    names.extend(f"{ERRNO}{service}|{code}" for code in sorted(codes))
    if event.host and not IP_OR_ADDRESS.search(event.host):
        # a resource of the whole host (its disk, its file table): every service writing there meets it
        names.extend(f"{ERRNO}@{event.host.lower()}|{code}" for code in sorted(codes & HOST_ERRNOS))
    for cls in {*chain, *_QUALIFIED_CLASS.findall(text)}:
        if "." in cls and not _GENERIC_PACKAGE.match(cls) and cls.rsplit(".", 1)[-1][:1].isupper():
            names.append(f"{CLASS}{service}|{cls}")
    return names
