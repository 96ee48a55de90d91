"""What a source's recent batches joined, kept in memory for its next batch (CONTRACT §2, issue 35: one outage, one
incident, however the reads cut it).

A joiner (joining.py) lives for one batch, and what it knows of an incident it opened or joined is more than the
store keeps of one: what its errors said (`outage.Wording`), the masked lines they were, the writers and processes
that wrote them and when (`same_process_incident`, `machines`), the ports a host name was written with
(`learnt_addresses`), the WARNs that may lead what comes after them. A live tail read a few lines at a time cut one
outage's lines into several batches, and an error read one batch after the incident it belongs to found it only by
the names the store kept: a dense log opened several incidents for what one read ties.

So the poller's batches of one source (`Incidents.store_batch` with a cursor or a fence: a live read, cut by when
lines arrived) hand that state on: after a batch commits, the open incidents it read or touched whose last error is
still within the burst window (and a fold's reach) of the batch's latest line, their lines and services' first
errors, the WARNs of that window and the learnt ports are kept by source, and the next batch of that source starts
from them, as if it had read those lines itself. Nothing is read from the store for it but which of the kept
incidents are still open (a reviewer may have decided or merged one meanwhile: one primary-key read), except when
no memory is held (a restart, or after a batch that failed): then the incidents active around the batch and the
source's errors stored in that window are read back once (`outage_rows.recent_errors`), and the WARNs stored before
its first error. An incident of an earlier batch is still never merged by ingest: it is only joined.

`ingest`'s final reads are decided batch by batch as alone (`store_batches`), as the contract has always said:
they hold no memory, and forget the source's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, AbstractSet, Callable, Sequence

from pipeline.clock import iso
from pipeline.incidents import learnt_addresses, line_names, machines, outage, writers
from pipeline.state import OPEN_STATUSES, LogEvent
from pipeline.store import outage_rows
from pipeline.store.sql import Connection, Cursor

if TYPE_CHECKING:
    from pipeline.incidents.joining import Joiner

MAX_INCIDENTS = 256  # incidents a source's memory keeps (the latest active)
MAX_WARNINGS = 256  # WARNs it keeps (the latest read)
# read back after a restart: the open incidents active around the batch, their errors, the WARNs before it
READ_INCIDENTS, READ_ERRORS, READ_WARNINGS, SCAN_LINES = 64, 256, 16, 128


@dataclass
class Carried:
    """One source's memory (see the module doc). `primed`: it holds what the store held when the process began
    reading the source (read back, or there was nothing to read)."""

    candidates: list[outage.Candidate] = field(default_factory=list)  # in the order they were read
    lines: dict[str, set[str]] = field(default_factory=dict)  # incident -> its errors' masked first lines
    earliest_of: dict[tuple[str, str], str] = field(default_factory=dict)  # (incident, service) -> its first error
    warnings: list[tuple[LogEvent, bool]] = field(default_factory=list)
    warnings_read: dict[str, tuple[frozenset[str], frozenset[str], bool, str]] = field(default_factory=dict)  # read once
    book: learnt_addresses.AddressBook | None = None
    # incident -> the ids and the later errors' writers its pattern's errors added (`Joiner.kept_ids`, `read_later`):
    # their caps hold while the incident is remembered, as within one batch, not again in each batch
    read: dict[str, tuple[int, int]] = field(default_factory=dict)
    primed: bool = False


class Memory:
    """Each source's `Carried`, by the source's cursor key; taken by a batch, kept again once it committed."""

    def __init__(self) -> None:
        self._held: dict[str, Carried] = {}
        self.pending: dict[str, Carried] = {}  # kept by batches whose transaction has not committed yet

    def take(self, source: str) -> Carried:
        return self.pending.pop(source, None) or self._held.pop(source, None) or Carried()

    def committed(self) -> None:
        self._held.update(self.pending)
        self.pending.clear()

    def forget(self, sources: Sequence[str] = ()) -> None:
        """Forget the memory of `sources` (none: every source's, and what is pending)."""
        for source in sources:
            self._held.pop(source, None)
            self.pending.pop(source, None)
        if not sources:
            self._held.clear()
            self.pending.clear()


def send_open(conn: Connection, carried: Carried) -> list[Cursor]:
    """Which of the remembered incidents are open, sent with the batch's first reads (`seed` reads it)."""
    return outage_rows.send_open(conn, [c.incident_id for c in carried.candidates], OPEN_STATUSES)


def seed(joiner: "Joiner", carried: Carried, sent: list[Cursor], *, sources: AbstractSet[str],
         warns: Callable[[LogEvent], bool], errors: Sequence[LogEvent]) -> Carried:
    """Start `joiner` from the memory: its open incidents (read first, in their order), their lines and services'
    first errors, its WARNs and learnt ports. With no memory held and errors to join, what the store holds of the
    source's earlier batches is read back first. The memory, primed."""
    still = outage_rows.read_open(sent) if sent else set()
    for candidate in carried.candidates:
        if candidate.incident_id in still and candidate.incident_id not in joiner.candidates:
            joiner.candidates.add(candidate)
            joiner.worded = joiner.worded or bool(candidate.texts)
    joiner.lines.update((i, lines) for i, lines in carried.lines.items() if i in still)
    joiner.earliest_of.update((k, v) for k, v in carried.earliest_of.items() if k[0] in still)
    for incident, (ids, later) in carried.read.items():
        joiner.kept_ids[incident], joiner.read_later[incident] = ids, later
    joiner.warnings.extend(carried.warnings)
    joiner.warnings_read.update(carried.warnings_read)
    if carried.book is not None:
        joiner.book = carried.book
    if not carried.primed and joiner.window is not None and joiner.minutes > 0:
        _read_back(joiner, sources, warns, errors)
        carried.primed = True
    return carried


def kept(joiner: "Joiner", carried: Carried, latest: datetime | None) -> Carried:
    """What the next batch of the source starts from, after this one (`latest`: the time of its latest error or WARN;
    None: it had none, and the memory stays as it was)."""
    if latest is None:
        return carried
    reach = timedelta(minutes=max(joiner.minutes, 0.0), seconds=outage.FOLD_SECONDS)
    window = timedelta(minutes=max(joiner.minutes, 0.0))
    alive = []
    for candidate in joiner.candidates.values():
        last = candidate.last_at()
        if last is not None and last.utcoffset() is not None and last + reach >= latest:
            alive.append(candidate)
    alive = sorted(alive, key=lambda c: c.last)[-MAX_INCIDENTS:]
    order = {c.incident_id: n for n, c in enumerate(joiner.candidates.values())}
    alive.sort(key=lambda c: order[c.incident_id])
    for candidate in alive:  # who wrote its errors when: only the window's writers tie anything (a long storm's are many)
        for times in (candidate.recent, candidate.symptoms):
            for writer in [w for w, at in times.items() if at.utcoffset() is None or at + window < latest]:
                del times[writer]
    ids = {c.incident_id for c in alive}
    warnings = [(e, signed) for e, signed in joiner.warnings
                if e.time.utcoffset() is not None and e.time + window >= latest][-MAX_WARNINGS:]
    return Carried(candidates=alive, lines={i: joiner.lines[i] for i in ids if i in joiner.lines},
                   earliest_of={k: v for k, v in joiner.earliest_of.items() if k[0] in ids}, warnings=warnings,
                   read={i: (joiner.kept_ids.get(i, 0), joiner.read_later.get(i, 0)) for i in ids
                         if i in joiner.kept_ids or i in joiner.read_later},
                   warnings_read={e.event_id: joiner.warnings_read[e.event_id] for e, _ in warnings
                                  if e.event_id in joiner.warnings_read},
                   book=joiner.book if alive else None, primed=carried.primed)


def _read_back(joiner: "Joiner", sources: AbstractSet[str], warns: Callable[[LogEvent], bool],
               errors: Sequence[LogEvent]) -> None:
    """No memory held (a restart): the open incidents active around the batch and the source's errors stored in that
    window, kept as the batch's own earlier errors would be; and the WARNs stored within the burst window before its
    first error by its errors' services or on their hosts (`warns` picks them)."""
    assert joiner.window is not None
    near, stored = outage_rows.recent_errors(joiner.conn, joiner.window, OPEN_STATUSES, sources=sorted(sources),
                                             incidents=READ_INCIDENTS, events=READ_ERRORS)
    joiner._read({i: row for i, row in near.items() if i not in joiner.candidates})
    seen: set[tuple[str, str]] = set()  # (incident, masked line): what one pattern said is kept once
    for event, incident in stored:
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
        candidate.wrote(comp, event)
        key, moment = (incident, event.service), iso(event.time)
        joiner.earliest_of[key] = min(joiner.earliest_of.get(key, moment), moment)
        candidate.services.add(event.service)
    if not errors:
        return
    first = min(e.time for e in errors)
    own = {e.event_id for e, _ in joiner.warnings}
    for event in outage_rows.recent_context(
            joiner.conn, services=sorted({e.service for e in errors}), hosts=sorted({e.host for e in errors if e.host}),
            start=first - timedelta(minutes=joiner.minutes), end=first, limit=READ_WARNINGS, scan=SCAN_LINES,
            keep=warns):
        if event.event_id not in own and event.source in sources:
            joiner.warned(event)
