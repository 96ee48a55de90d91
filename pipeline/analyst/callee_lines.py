"""The callee's own lines (issue 36, end to end): an incident grouped out of a whole log holds its callers' failures
(nginx's `connect() to unix:/run/php/php8.2-fpm.sock failed`), while the callee's own warning (php-fpm's `server
reached pm.max_children`) is another group's, though retrieval brought it in the log window (same host, same
minutes). The analyst reads, beside the evidence, the window's problem lines of a service the evidence's problem
lines name in their own words (every word of its name starting a word of theirs: cause_side's reading) and that
no evidence line comes from, said no later than the evidence's last problem line: what the callee said of itself
while its callers failed. The cause-side readings (offline.py) then decide whether its state is their cause.

A service's own warnings before its first error are read the same way (`own_warnings`): a state it said of itself
(`This could be caused by thread pool starvation`, `connection blocked: low on memory`) before its errors began is
grouped apart from them (a warning opens no incident), yet it is where their cause is said. Only a warning (a level
said, WARN) counts, and only one said before that service's first problem line of the evidence: an earlier error is
another incident's, and what it said after its errors began is no sign of their start. The analyst keeps only those
that name some cause (offline.py): the others are the service's ordinary lines, the evidence report's baseline.
"""
from __future__ import annotations

from datetime import datetime

from pipeline.analyst import cause_side
from pipeline.knowledge.retrieval import event_text
from pipeline.state import IncidentState, LogEvent

# a window event that is the incident's own leading warning (the grouping's: incidents/leading.py), whichever writer
# said it (retrieval marks it: engine/nodes.py `leading_warning`)
LEADS = "incidentiq.leads"
_PROBLEM = ("ERROR", "FATAL", "WARN")  # a level said, not guessed: an unlevelled window line is anyone's
LIMIT = 20  # the callee's lines read: its first ones say when its state began


def callee_lines(state: IncidentState) -> list[LogEvent]:
    """The window's problem lines of services the evidence's problem lines name (module docstring), oldest first."""
    if not state.log_window:
        return []
    problems = [e for e in state.evidence if e.level in (*_PROBLEM, None)]
    if not problems:
        return []
    own = {e.event_id for e in state.evidence}
    services = {e.service for e in state.evidence}
    said = " ".join(event_text(e) for e in problems).lower()
    last = max(e.time for e in problems)
    named: dict[str, bool] = {}
    found = []
    for event in sorted(state.log_window, key=lambda e: e.time):
        if event.event_id in own or event.level not in _PROBLEM or event.time > last or event.service in services:
            continue
        if event.service not in named:
            named[event.service] = cause_side.named(event.service, said)
        if named[event.service]:
            found.append(event)
            if len(found) >= LIMIT:
                break
    return found


def own_warnings(state: IncidentState) -> list[LogEvent]:
    """The window's warnings of the evidence's own services said before each one's first problem line of the
    evidence (module docstring), oldest first."""
    if not state.log_window:
        return []
    first: dict[str, datetime] = {}
    for event in state.evidence:
        if event.level in (*_PROBLEM, None) and (event.service not in first or event.time < first[event.service]):
            first[event.service] = event.time
    own = {e.event_id for e in state.evidence}
    start = min(first.values(), default=None)
    found = [e for e in sorted(state.log_window, key=lambda e: e.time)
             if e.event_id not in own and e.level == "WARN" and (
                 e.service in first and e.time < first[e.service] or
                 # ... and the incident's leading warning, another writer's, said before its first problem line
                 e.fields.get(LEADS) is True and start is not None and e.time < start)]
    return found[:LIMIT]
