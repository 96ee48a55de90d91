"""The opening rule: which log events open (or join) an incident and which are only context."""
from __future__ import annotations

from pipeline.state import LogEvent


def opens_incident(event: LogEvent) -> bool:
    """Errors open incidents; INFO/WARN lines are kept as context for log windows."""
    if event.level in ("ERROR", "FATAL"):
        return True
    return event.level is None and bool(event.exception or event.stack)
