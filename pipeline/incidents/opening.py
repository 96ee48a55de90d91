"""The opening rule (CONTRACT §2): which log events open (or join) an incident and which are only
context for log windows.

An event opens an incident when
- its level (as written, or guessed from its words when the line carried none: an error word, or
  what the line says broke, `ingest/levels.infer_level`, marked `fields["level_inferred"]`) is at
  least the floor, INCIDENTIQ_OPEN_LEVEL (default ERROR: ERROR and FATAL); or
- it is one step below the floor (WARN, by default) and its text carries a known error
  signature, one of the knowledge base's docs' (INCIDENTIQ_OPEN_SIGNATURES, default on): a
  "WARN HikariPool-1 - Connection is not available" is the same problem as its ERROR twin; or
- it has no level at all but names an exception or carries a stack trace.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from pipeline.ingest.levels import LEVELS, at_least
from pipeline.state import LogEvent


@dataclass(frozen=True)
class OpeningRule:
    """The rule above; `signatures` are the docs' signatures (literal, or `re:` regexes)."""

    floor: str = "ERROR"
    signatures: tuple[str, ...] = ()
    # the signatures compiled (set by __post_init__; not arguments, not compared)
    _literals: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)
    _patterns: tuple[re.Pattern[str], ...] = field(default=(), init=False, repr=False, compare=False)
    _any: Callable[[str], bool] = field(default=lambda text: False, init=False, repr=False, compare=False)
    _opening: frozenset[str] = field(default=frozenset(), init=False, repr=False, compare=False)
    _below: str | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.floor not in LEVELS:
            raise ValueError(f"unknown level {self.floor!r}")
        literals = tuple(s.lower() for s in self.signatures if not s.startswith("re:"))
        patterns = tuple(re.compile(s[3:], re.I) for s in self.signatures if s.startswith("re:"))
        object.__setattr__(self, "_literals", literals)
        object.__setattr__(self, "_patterns", patterns)
        # a WARN line is checked against hundreds of signatures: see _one_search
        object.__setattr__(self, "_any", _one_search(literals, patterns))
        floor = self.floor  # a level: checked above
        object.__setattr__(self, "_opening", frozenset(level for level in LEVELS if at_least(level, floor)))
        object.__setattr__(self, "_below", LEVELS[LEVELS.index(floor) - 1] if floor != "DEBUG" else None)

    @classmethod
    def of(cls, *, floor: str, signatures: Iterable[str] = ()) -> "OpeningRule":
        return cls(floor=floor, signatures=tuple(dict.fromkeys(signatures)))

    def below_floor(self, event: LogEvent) -> bool:
        """Whether the event's level is the one just below the floor (a WARN, by default): such an
        event never opens an incident by itself (CONTRACT §2)."""
        return event.level is not None and event.level == self._below

    def beneath_warning(self, event: LogEvent) -> bool:
        """Whether the event's level is lower than the one just below the floor, or it has none (an INFO
        or a DEBUG, by default): it opens nothing, and leads only when it states the cause (CONTRACT §2)."""
        level = event.level
        return level is None or (self._below is not None and LEVELS.index(level) < LEVELS.index(self._below))

    def opens(self, event: LogEvent) -> bool:
        """Whether the event opens (or joins) an incident."""
        level = event.level
        if level is None:
            return bool(event.exception or event.stack)
        if level in self._opening:  # at_least(level, floor), worked out once
            return True
        return level == self._below and self.carries_signature(event)

    def carries_signature(self, event: LogEvent) -> bool:
        """Whether the event's text holds one of the signatures (case-insensitive)."""
        if not self.signatures:
            return False
        text = "\n".join(t for t in (event.exception, event.message, event.stack) if t)[:20_000]
        return self._any(text)


def _one_search(literals: tuple[str, ...], patterns: tuple[re.Pattern[str], ...]) -> Callable[[str], bool]:
    """A function that says whether a text holds any literal (case-insensitive) or matches any
    pattern. Each pattern is searched only when the text holds one of the literal runs the pattern
    cannot match without (`_required`): Python's regex engine costs microseconds a pattern on a
    short line, and a WARN line was searched with all 288 of the docs' patterns (0.75 ms).

    The literals and runs (hundreds) are not each looked for either: a substring search costs
    about 0.3 us on a log line, so 444 of them cost more than the rest of a line's ingest. Each
    is filed under one of its 3-character pieces; a text's own pieces say which can be in it,
    and only those are looked for (a literal is in a text only if all its pieces are)."""
    gated: list[int] = []  # patterns with a run to rely on
    always: list[int] = []  # and with none
    needing: dict[str, list[int]] = {}  # run -> the patterns (by index) it lets through
    for index, pattern in enumerate(patterns):
        need = _required(pattern)
        (always if need is None else gated).append(index)
        for run in need or ():
            needing.setdefault(run, []).append(index)
    find_literal = _substring_finder(literals)
    find_run = _substring_finder(tuple(needing))

    def search(text: str) -> bool:
        lowered = text.lower()
        if find_literal(lowered):
            return True
        folded = lowered if lowered.isascii() else text.casefold()  # the same for ASCII text
        chosen = set(always)
        for run in find_run(folded):
            chosen.update(needing[run])
        return any(patterns[i].search(text) is not None for i in sorted(chosen))
    return search


_PIECE = 3


def _substring_finder(needles: tuple[str, ...]) -> Callable[[str], set[str]]:
    """A function giving the needles found in a text."""
    short = [n for n in needles if len(n) < _PIECE]
    filed: dict[tuple[str, ...], list[str]] = {}
    for needle in (n for n in needles if len(n) >= _PIECE):
        pieces = {tuple(needle[i:i + _PIECE]) for i in range(len(needle) - _PIECE + 1)}
        # the piece fewest needles are filed under yet: fewer needles looked for in vain
        piece = min(sorted(pieces), key=lambda p: len(filed.get(p, ())))
        filed.setdefault(piece, []).append(needle)

    keys = frozenset(filed)

    def find(text: str) -> set[str]:
        # the text's pieces as character triples, made and met with the filed ones at C speed
        # (a set comprehension of 3-character slices was most of a WARN line's check)
        pieces = set(zip(text, text[1:], text[2:])) & keys
        found = {n for piece in pieces for n in filed[piece] if n in text}
        found.update(n for n in short if n in text)
        return found
    return find


def _required(pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """Literal runs (case-folded) of which every match of `pattern` contains at least one; None
    where the pattern gives no run of 3 ASCII characters to rely on (it is then always searched)."""
    from re import _parser as parser  # type: ignore[attr-defined]  # the parser re compiles with; no stubs

    try:
        items = parser.parse(pattern.pattern, pattern.flags & ~re.I)
    except re.error:
        return None
    return _required_of(items)


def _required_of(items: Any) -> tuple[str, ...] | None:
    from re import _constants as c  # type: ignore[attr-defined]  # re's opcodes; no stubs

    candidates: list[tuple[str, ...]] = []
    run: list[str] = []

    def close_run() -> None:
        text = "".join(run)
        if len(text) >= 3 and text.isascii():
            candidates.append((text.casefold(),))
        run.clear()

    for op, arg in items:
        if op is c.LITERAL:
            run.append(chr(arg))
            continue
        close_run()
        if op is c.SUBPATTERN:
            inner = _required_of(arg[-1])
        elif op is c.BRANCH:
            each = [_required_of(branch) for branch in arg[1]]
            inner = None if any(e is None for e in each) else tuple(n for e in each if e is not None for n in e)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT) and arg[0] >= 1:
            inner = _required_of(arg[2])
        else:
            inner = None
        if inner:
            candidates.append(inner)
    close_run()
    # the fewest alternatives, then the longest shortest one: the sharpest test
    return min(candidates, key=lambda alts: (len(alts), -min(map(len, alts)))) if candidates else None


DEFAULT_RULE = OpeningRule()


def opens_incident(event: LogEvent, rule: OpeningRule = DEFAULT_RULE) -> bool:
    """Errors open incidents; lower levels are kept as context for log windows (see the module doc)."""
    return rule.opens(event)
