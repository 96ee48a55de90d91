"""A batch's neighbours (CONTRACT §2, session 58): the errors earlier batches stored around its time, read back as
its own earlier errors were, so that where a read cut the log does not change what an error joins.

A joiner (joining.py) lives for one batch. What it knows of an incident it opened or joined in the batch is more than
the store keeps of one: what its errors said (`outage.Wording`), the masked lines they were (a WARN's earlier line of
one), the writers and processes that wrote them and when (`same_process_incident`, `machines`), the ports a host name
was written with (`learnt_addresses`). An error read one batch later found the incident by the names it stored and no
more: a dense log that never pauses (Loghub's OpenSSH, a live tail read a few lines at a time) opened a new incident for
what one read would have tied by its wording or its process.

So each batch first reads the open incidents whose errors were written within the burst window (and a fold's reach)
of its own errors, and the latest of their errors stored in that window (`outage_rows.recent_errors`, bounded: a
storm's older events are never read), and keeps what those errors said on each incident as the joiner keeps what its
own errors say: nothing is written (their names, leaders and counts were, by the batch that stored them), and a
decided incident is none of them (it absorbs nothing).
"""
from __future__ import annotations

from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Callable, Sequence

from pipeline.incidents import joining, line_names, machines, outage, writers
from pipeline.state import OPEN_STATUSES, LogEvent
from pipeline.store import outage_rows

if TYPE_CHECKING:
    from pipeline.incidents.joining import Joiner

MAX_INCIDENTS = 64  # open incidents a batch reads as neighbours (the latest active)
MAX_ERRORS = 64  # their errors it reads back (the latest in the window)
MAX_WARNINGS = 16  # the WARNs before its first error it reads back (the latest, of the latest SCAN_LINES lines)
SCAN_LINES = 128


def warnings(joiner: "Joiner", errors_of_batch: Sequence[LogEvent], *, warned: Callable[[LogEvent], bool],
             had: Sequence[LogEvent] = ()) -> None:
    """For a batch that opened an incident: the lines that opened nothing written within the burst window before its
    first error by its errors' services or on their hosts that `warned` picks (a WARN, or a line below one stating a
    failure), kept as its own WARNs are (`had`: the batch's own, kept already): each may lead what it opened."""
    if not joiner.opened or joiner.minutes <= 0 or not errors_of_batch:
        return
    first = min(e.time for e in errors_of_batch)
    own = {e.event_id for e in had}
    for event in outage_rows.recent_context(
            joiner.conn, services=sorted({e.service for e in errors_of_batch}),
            hosts=sorted({e.host for e in errors_of_batch if e.host}), start=first - timedelta(minutes=joiner.minutes),
            end=first, limit=MAX_WARNINGS, scan=SCAN_LINES, keep=warned):
        if event.event_id not in own:
            joiner.warned(event)


def read(joiner: "Joiner") -> int:
    """Keep on `joiner` what the errors earlier batches stored around its batch said (see the module doc); how many
    were read."""
    if joiner.window is None or joiner.minutes <= 0:
        return 0
    near, errors = outage_rows.recent_errors(joiner.conn, joiner.window, OPEN_STATUSES, incidents=MAX_INCIDENTS,
                                             events=MAX_ERRORS, also=sorted(joiner.unbounded))
    fresh = {i: row for i, row in near.items() if i not in joiner.candidates}
    joiner._read(fresh)
    for incident in fresh.keys() & joiner.unbounded:
        # one its pattern's errors join, read for what they say and who wrote them; what the later ones name (ids, writers
        # served) is read as before, only of an incident an error's names found (`Joiner.joined`): not once a batch
        joiner.kept_ids[incident], joiner.read_later[incident] = joining.MAX_IDS, joining.MAX_LATER
    seen: set[tuple[str, str]] = set()  # (incident, masked line): what one pattern said is kept once, as a batch keeps it
    for event, incident in errors:
        candidate = joiner.candidates.get(incident)
        if candidate is None:
            continue
        comp = writers.component(event)
        dump = outage.is_dump(event.message) or outage.is_part(event)
        line = line_names.masked_line(event)
        if not dump and (incident, line) not in seen:
            seen.add((incident, line))
            joiner._named_things(event)  # (the ports it wrote with a host name are learnt, as the batch's own)
            joiner.lines.setdefault(incident, set()).add(line)
            if len(candidate.texts) < outage.MAX_WORDINGS:
                wording = joiner._wording(event)
                candidate.clauses.update(wording.clauses)
                candidate.texts.add(wording.text)
                candidate.relayed.update(wording.relayed)
                candidate.quoted.update(wording.quoted)
                candidate.own_texts.setdefault(event.service, set()).add(wording.text)
                joiner.worded = True
        if not dump:
            machines.note(candidate, comp, event, partial(joiner._named_things, event))
        for writer in (comp, writers.process(event)):
            if writer is not None and (writer not in candidate.recent or event.time > candidate.recent[writer]):
                candidate.recent[writer] = event.time
        candidate.services.add(event.service)
    return len(errors)
