"""Outage correlation inside one stored batch (CONTRACT §2, the rules in `outage.py`): which open
incident an error that no incident of its pattern takes joins, the names the batch's errors add
to their incidents, and each touched incident's leader.

A joiner lives for one batch, inside the batch's transaction: what it reads (the open incidents
holding a name, their names and services, their leaders) and what it writes (names as members,
leaders) commit or roll back with the batch's events, so a killed ingest leaves no half of it and a
restart reads it all back from the store.
"""
from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

from pipeline.clock import iso, parse_iso
from pipeline.incidents import correlation, outage
from pipeline.incidents.outage import Candidate, Leader
from pipeline.state import OPEN_STATUSES, LogEvent
from pipeline.store import outage_rows
from pipeline.store.sql import Connection

FOLD = "fold"  # a dump's line folded into its component's error
NAMES = "names"  # joined by a named thing within the burst window
MAX_WARNINGS = 10_000  # WARNs a batch keeps as possible leaders


class Joiner:
    """One batch's outage correlation (see the module doc)."""

    def __init__(self, conn: Connection, *, burst_minutes: float):
        self.conn = conn
        self.minutes = burst_minutes
        self.candidates: dict[str, Candidate] = {}  # open incidents read or touched in this batch
        self.asked: set[str] = set()  # members already looked up in this batch
        self.names: Counter[tuple[str, str, str]] = Counter()  # (incident, 'name', name) -> events
        self.best: dict[str, Leader] = {}  # incident -> the batch's best leader for it
        self.earliest: dict[tuple[str, str], str] = {}  # (incident, pattern) -> its earliest time in the batch
        self.opened: set[str] = set()
        self.warnings: list[tuple[LogEvent, bool]] = []  # the batch's WARNs, signed or not: may lead
        self.lines: dict[str, set[str]] = {}  # incident -> the masked first lines of its errors in the batch

    def warned(self, event: LogEvent, *, signed: bool = False) -> None:
        """A WARN (one level below the opening floor) that opens nothing: kept for this batch as a
        possible leader of an incident it precedes (CONTRACT §2: a WARN never opens an incident by
        itself, it may lead one; `_warned_leaders` says when). `signed`: it carries a known error
        signature, so it joins an outage it is tied to, and found none open when it was read."""
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append((event, signed))

    def find(self, event: LogEvent, fingerprint: str) -> tuple[str, str, str] | None:
        """The open incident an error joins though no incident of its pattern takes it, the
        pattern it counts toward and how it was found (FOLD or NAMES); None: it opens one."""
        if outage.is_dump(event.message) or outage.is_part(event):
            # a dump's line, or a line with neither level nor time of its own written with its
            # component's error (a banner's lines, compose's exit line): one record of that error
            comp = outage.component(event)
            self._load([comp])
            fold = timedelta(seconds=outage.FOLD_SECONDS)
            for candidate in sorted(self.candidates.values(), key=lambda c: c.last, reverse=True):
                last = parse_iso(candidate.last)
                if comp in candidate.names and last is not None and abs(event.time - last) <= fold:
                    return candidate.incident_id, candidate.fingerprint, FOLD
        if self.minutes <= 0:
            return None
        names, said = outage.named_things(event), outage.words(event)
        self._load([*names, outage.SERVICE_NAMED + event.service.lower(), *said])
        best: tuple[int, str, str] | None = None
        for candidate in self.candidates.values():
            ties = candidate.ties(event, names, said)
            if ties and candidate.near(event.time, self.minutes):
                key = (ties, candidate.last, candidate.incident_id)
                best = key if best is None or key > best else best
        return (best[2], fingerprint, NAMES) if best is not None else None

    def joined(self, event: LogEvent, incident: str, pattern: str, *, how: str | None, opened: bool = False) -> None:
        """An error joined (or opened) `incident`, counting toward `pattern`: its names are kept
        (from the error that opened it, joined it by a name or a fold, or is its pattern's first
        in the batch), its window widened, and it may lead."""
        pair = (incident, pattern)
        first_of_pattern = pair not in self.earliest
        moment = iso(event.time)
        candidate = self.candidates.get(incident)
        if opened:
            self.opened.add(incident)
            candidate = self.candidates[incident] = Candidate(incident, pattern, moment, moment, set(), set())
        if opened or how is not None or first_of_pattern:
            # a dump's line names its component only (its register names are no resource)
            things = sorted(outage.named_things(event))[:outage.MAX_NAMES] if how != FOLD else []
            names = [*things, outage.component(event)]
            for name in names:
                self.names[(incident, outage_rows.NAME, name)] += 1
            if candidate is not None:
                candidate.names.update(names)
            if how != FOLD:
                self.lines.setdefault(incident, set()).add(outage.masked_line(event))
        if candidate is not None:
            candidate.services.add(event.service)
            candidate.first, candidate.last = min(candidate.first, moment), max(candidate.last, moment)
        if how == FOLD:
            return  # a dump's line is its error's record, not a leader of its own
        if first_of_pattern or moment < self.earliest[pair]:
            self.earliest[pair] = moment
            leader = Leader.of(event, pattern)
            if incident not in self.best or leader.key() < self.best[incident].key():
                self.best[incident] = leader

    def finish(self) -> Counter[tuple[str, str, str]]:
        """Keep each touched incident's leader where the batch brought a better one; the names to
        count as members (the caller counts them with the batch's other members)."""
        self._warned_leaders()
        stored = outage_rows.leaders(self.conn, [i for i in self.best if i not in self.opened])
        chosen: dict[str, dict[str, Any]] = {}
        for incident, leader in self.best.items():
            before = stored.get(incident)
            if before is None or leader.key() < Leader.from_json(before).key():
                chosen[incident] = leader.as_json()
        outage_rows.set_leaders(self.conn, chosen)
        return self.names

    def _warned_leaders(self) -> None:
        """A WARN leads an incident the batch touched when it was written before the incident's
        first error, within the burst window, and is the first sign of its cause: it states the
        cause's own failure and names what the errors name (or is their own component's: the same
        service on the same host); or it is an earlier line of one of the incident's own errors (the
        same masked line: the errors' first one, logged at WARN before it was logged at ERROR); or
        it names the same destination or resource (host:port, URL host, resource name) as the
        errors; or it carries a known error signature and is tied to them (the WARN that would have
        joined the incident, had it been read after the incident's first error). Its rank is its own words': a warning of slowness leads only errors that are all
        symptoms."""
        window = timedelta(minutes=max(self.minutes, 0.0))
        read: dict[int, tuple[frozenset[str], frozenset[str], bool, str]] = {}
        for incident in list(self.best):
            candidate = self.candidates.get(incident)
            first = parse_iso(candidate.first) if candidate is not None else None
            if candidate is None or first is None:
                continue
            strong = {n for n in candidate.names if n.startswith(outage.DISTINCT)}
            for event, signed in self.warnings:
                if not (first - window <= event.time <= first):
                    continue
                if id(event) not in read:  # its names, read once, only when it is near an incident
                    read[id(event)] = (outage.named_things(event), outage.words(event), outage.states_cause(event),
                                       outage.masked_line(event))
                names, said, states, line = read[id(event)]
                if not (line in self.lines.get(incident, ())
                        or names & strong
                        or (states or signed) and (outage.component(event) in candidate.names and states
                                                   or candidate.ties(event, names, said))):
                    continue
                leader = Leader.of(event, outage.WARNED + correlation.fingerprint(event))
                if leader.key() < self.best[incident].key():
                    self.best[incident] = leader

    def _load(self, members: list[str]) -> None:
        new = [m for m in dict.fromkeys(members) if m not in self.asked]
        if not new:
            return
        self.asked.update(new)
        found = outage_rows.open_incidents_holding(self.conn, new, OPEN_STATUSES)
        unknown = [i for i in found if i not in self.candidates]
        for incident, (names, services) in outage_rows.names_of(self.conn, unknown).items():
            row = found[incident]
            self.candidates[incident] = Candidate(incident, row["fingerprint"], row["first_seen"], row["last_seen"],
                                                  names, services)
