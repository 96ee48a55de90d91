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
from dataclasses import dataclass
from typing import Iterable

from pipeline.ingest.levels import LEVELS, at_least
from pipeline.state import LogEvent


@dataclass(frozen=True)
class OpeningRule:
    """The rule above; `signatures` are the docs' signatures (literal, or `re:` regexes)."""

    floor: str = "ERROR"
    signatures: tuple[str, ...] = ()

    def __post_init__(self):
        if self.floor not in LEVELS:
            raise ValueError(f"unknown level {self.floor!r}")
        literals = tuple(s.lower() for s in self.signatures if not s.startswith("re:"))
        patterns = tuple(re.compile(s[3:], re.I) for s in self.signatures if s.startswith("re:"))
        object.__setattr__(self, "_literals", literals)
        object.__setattr__(self, "_patterns", patterns)
        # one search for all of them: a WARN line is checked against hundreds of signatures
        object.__setattr__(self, "_any", _one_search(literals, patterns))

    @classmethod
    def of(cls, *, floor: str, signatures: Iterable[str] = ()) -> "OpeningRule":
        return cls(floor=floor, signatures=tuple(dict.fromkeys(signatures)))

    def opens(self, event: LogEvent) -> bool:
        """Whether the event opens (or joins) an incident."""
        if event.level is None:
            return bool(event.exception or event.stack)
        if at_least(event.level, self.floor):
            return True
        below = LEVELS[LEVELS.index(self.floor) - 1] if self.floor != "DEBUG" else None
        return event.level == below and self.carries_signature(event)

    def carries_signature(self, event: LogEvent) -> bool:
        """Whether the event's text holds one of the signatures (case-insensitive)."""
        if not self.signatures:
            return False
        text = "\n".join(t for t in (event.exception, event.message, event.stack) if t)[:20_000]
        return self._any(text)


def _one_search(literals: tuple[str, ...], patterns: tuple[re.Pattern[str], ...]):
    """A function that says whether a text holds any literal (case-insensitive) or matches any
    pattern: one alternation of them all, each pattern kept apart where it cannot be joined (a
    back-reference would count the joined groups, an inline flag is only allowed first)."""
    joinable = [p for p in patterns if not re.search(r"\\\d|\(\?P=|\(\?[aiLmsux]+\)", p.pattern)]
    apart = [p for p in patterns if p not in joinable]
    alternatives = [re.escape(s) for s in literals] + [f"(?:{p.pattern})" for p in joinable]
    try:
        joined = re.compile("|".join(alternatives), re.I) if alternatives else None
    except re.error:
        joined, apart = None, list(patterns)
    if joined is None and alternatives:
        def search_each(text: str) -> bool:
            lowered = text.lower()
            return any(s in lowered for s in literals) or any(p.search(text) for p in apart)
        return search_each

    def search(text: str) -> bool:
        return bool(joined is not None and joined.search(text)) or any(p.search(text) for p in apart)
    return search


DEFAULT_RULE = OpeningRule()


def opens_incident(event: LogEvent, rule: OpeningRule = DEFAULT_RULE) -> bool:
    """Errors open incidents; lower levels are kept as context for log windows (see the module doc)."""
    return rule.opens(event)
