"""Whether new evidence for a paused incident is news to its analysis, or more of what it holds.

An event repeats the analysis when its shape (service, exception and masked first line: the
pre-miner fingerprint, `correlation.fingerprint` without a template id) is the shape of an event
the analysis holds. Repeats are counted (the record's event count, first and last seen, "N events
arrived since the analysis") without re-running rca -> recommend -> propose_fix, so the reviewer's
pending interrupt, and the approvals given on it, stay valid. A new shape, or a rise of the
incident's events past `INCIDENTIQ_REANALYSE_GROWTH` times those the analysis covered, re-runs it.
"""
from __future__ import annotations

from typing import Iterable

from pipeline.incidents.correlation import first_line, template
from pipeline.state import LogEvent

Shape = tuple[str, str, str]


def shape(service: str, exception: str | None, message: str) -> Shape:
    """What two events share when one repeats the other."""
    return service, exception or "", template(first_line(message))


def held_shapes(evidence: Iterable[LogEvent]) -> set[Shape]:
    """The shapes of the events an analysis holds."""
    return {shape(e.service, e.exception, e.message) for e in evidence}


def all_repeats(heads: Iterable[tuple[str, str, str | None, str]], held: set[Shape]) -> bool:
    """Whether every (event id, service, exception, message) repeats a held shape; a burst of one
    line masks each distinct first line once."""
    seen: dict[tuple[str, str | None, str], bool] = {}
    for _, service, exception, message in heads:
        key = (service, exception, first_line(message))
        known = seen.get(key)
        if known is None:
            known = seen[key] = shape(service, exception, message) in held
        if not known:
            return False
    return True


def grown_past(event_count: int, analysed_events: int | None, growth: float) -> bool:
    """Whether the incident's events rose past `growth` times those its analysis covered (an
    analysis whose coverage is unknown, or of none, counts as risen)."""
    return not analysed_events or event_count >= growth * analysed_events
