"""The opening rule (CONTRACT §2): which log events open (or join) an incident and which are only
context for log windows.

An event opens an incident when
- its level (as written, or guessed from keywords when the line carried none) is at least the
  floor, INCIDENTIQ_OPEN_LEVEL (default ERROR: ERROR and FATAL); or
- it is one step below the floor (WARN, by default) and its text carries a known error
  signature, one of the knowledge base's docs' (INCIDENTIQ_OPEN_SIGNATURES, default on): a
  "WARN HikariPool-1 - Connection is not available" is the same problem as its ERROR twin; or
- it has no level at all but names an exception or carries a stack trace.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, cast

from pipeline.ingest.levels import LEVELS, Level, at_least
from pipeline.state import LogEvent


@dataclass(frozen=True)
class OpeningRule:
    """The rule above; `signatures` are the docs' signatures (literal, or `re:` regexes)."""

    floor: str = "ERROR"
    signatures: tuple[str, ...] = ()
    # the signatures compiled (set by __post_init__; not arguments, not compared)
    _literals: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)
    _patterns: tuple[re.Pattern[str], ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.floor not in LEVELS:
            raise ValueError(f"unknown level {self.floor!r}")
        literals = tuple(s.lower() for s in self.signatures if not s.startswith("re:"))
        patterns = tuple(re.compile(s[3:], re.I) for s in self.signatures if s.startswith("re:"))
        object.__setattr__(self, "_literals", literals)
        object.__setattr__(self, "_patterns", patterns)

    @classmethod
    def of(cls, *, floor: str, signatures: Iterable[str] = ()) -> "OpeningRule":
        return cls(floor=floor, signatures=tuple(dict.fromkeys(signatures)))

    def opens(self, event: LogEvent) -> bool:
        """Whether the event opens (or joins) an incident."""
        if event.level is None:
            return bool(event.exception or event.stack)
        if at_least(event.level, cast(Level, self.floor)):  # a level: checked in __post_init__
            return True
        below = LEVELS[LEVELS.index(self.floor) - 1] if self.floor != "DEBUG" else None
        return event.level == below and self.carries_signature(event)

    def carries_signature(self, event: LogEvent) -> bool:
        """Whether the event's text holds one of the signatures (case-insensitive)."""
        if not self.signatures:
            return False
        text = "\n".join(t for t in (event.exception, event.message, event.stack) if t)[:20_000]
        lowered = text.lower()
        return any(s in lowered for s in self._literals) or any(p.search(text) for p in self._patterns)


DEFAULT_RULE = OpeningRule()


def opens_incident(event: LogEvent, rule: OpeningRule = DEFAULT_RULE) -> bool:
    """Errors open incidents; lower levels are kept as context for log windows (see the module doc)."""
    return rule.opens(event)
