"""Outage correlation inside one stored batch (CONTRACT §2, the rules in `outage.py`, the names
in `line_names.py`, the leader in `leading.py`): which open incident an error that no incident of
its pattern takes joins, the names the batch's errors add to their incidents, and each touched
incident's leader.

A joiner lives for one batch, inside the batch's transaction: what it reads (the open incidents
holding a name, their names and services, their leaders) and what it writes (names as members,
leaders) commit or roll back with the batch's events, so a killed ingest leaves no half of it and a
restart reads it all back from the store.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, Iterable

from pipeline.clock import iso, parse_iso
from pipeline.incidents import correlation, leading, learnt_addresses, line_names, machines, outage, writers
from pipeline.incidents.leading import Leader
from pipeline.incidents.name_spellings import may_carry_id
from pipeline.incidents.open_candidates import OpenCandidates
from pipeline.incidents.outage import Candidate
from pipeline.state import OPEN_STATUSES, LogEvent
from pipeline.store import outage_rows
from pipeline.store.sql import Connection

FOLD = "fold"  # a dump's line folded into its component's error
NAMES = "names"  # joined by a named thing within the burst window
MAX_WARNINGS = 10_000  # WARNs a batch keeps as possible leaders
MAX_IDS = 64  # trace or request ids an incident keeps of its pattern's later errors in one batch
MAX_LATER = 64  # later errors of its pattern an incident reads for the writers they name, in one batch


class Joiner:
    """One batch's outage correlation (see the module doc)."""

    def __init__(self, conn: Connection, *, burst_minutes: float, leaders: dict[str, str | None] | None = None,
                 span: tuple[str, str] | None = None, unbounded: Iterable[str] = ()):
        self.conn = conn
        # the stored incidents read are those whose window can hold an error of the batch (`span`: its first and last
        # error's times): last seen at most a burst window (or a fold's reach) before the first, first seen at most that
        # after the last; `unbounded`: those its errors join by their pattern (windows it widens), read whatever their times
        reach = timedelta(minutes=max(burst_minutes, 0.0), seconds=outage.FOLD_SECONDS)
        self.window = (iso(datetime.fromisoformat(span[0]) - reach), iso(datetime.fromisoformat(span[1]) + reach)) \
            if span is not None else None
        self.unbounded = set(unbounded)
        # incident -> its stored leader (JSON text; None: it has none), as the batch read its incidents:
        # `finish` reads only the others' (under the writer lock, nothing else changes them meanwhile)
        self.stored_leaders = dict(leaders or {})
        self.minutes = burst_minutes
        self.candidates = OpenCandidates()  # open incidents read or touched in this batch
        self.worded = False  # whether one of them holds what an error said (`Wording`): once so, always
        self.asked: set[str] = set()  # members already looked up in this batch
        self.names: Counter[tuple[str, str, str]] = Counter()  # (incident, 'name', name) -> events
        self.best: dict[str, dict[str, Leader]] = {}  # incident -> service -> the batch's best leader of it
        self.earliest: dict[tuple[str, str], str] = {}  # (incident, pattern) -> its earliest time in the batch
        self.earliest_of: dict[tuple[str, str], str] = {}  # (incident, service) -> its earliest error in the batch
        self.opened: set[str] = set()
        self.warnings: list[tuple[LogEvent, bool]] = []  # the batch's WARNs, signed or not: may lead
        self.lines: dict[str, set[str]] = {}  # incident -> the masked first lines of its errors in the batch
        self.opened_at: dict[str, int] = {}  # an incident this batch opened -> the order it was opened in
        self.into: dict[str, str] = {}  # an incident this batch opened -> the one it was merged into
        self._last_named: tuple[LogEvent | None, frozenset[str]] = (None, frozenset())
        self.book = learnt_addresses.AddressBook()  # the ports this batch's errors named with one host name (`learnt_addresses`)
        self._last_wording: tuple[LogEvent | None, outage.Wording | None] = (None, None)
        self.linked: set[str] = set()  # incidents this batch opened as recurrences of decided ones: never merged
        self.warnings_read: dict[str, tuple[frozenset[str], frozenset[str], bool, str]] = {}  # a WARN's, by event id
        self.kept_ids: dict[str, int] = {}  # incident -> the ids its pattern-joined errors added in this batch
        self.read_later: dict[str, int] = {}  # incident -> its pattern-joined errors read for writers named, this batch

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
            comp = writers.component(event)
            self._load([comp])
            fold = timedelta(seconds=outage.FOLD_SECONDS)
            for candidate in self.candidates.latest_within(event.time, outage.FOLD_SECONDS):
                last = parse_iso(candidate.last)
                if comp in candidate.names and last is not None and abs(event.time - last) <= fold:
                    return candidate.incident_id, candidate.fingerprint, FOLD
        if self.minutes <= 0:
            return None
        names, said = self._named_things(event), line_names.words(event)
        self._load(self._members(event, names, said))
        wording = self._wording(event) if self.worded else None
        tied: list[tuple[int, str, str]] = []
        near = list(self.candidates.near(event.time, self.minutes))
        for candidate in near:
            ties = candidate.ties(event, names, said, wording)
            if ties:
                tied.append((ties, candidate.last, candidate.incident_id))
        if not tied and (only := outage.same_process_incident(event, names, near)
                         or outage.concluding_writers_incident(event, names, near)
                         or outage.answering_writers_incident(event, names, near)
                         or machines.same_machine_incident(event, names, near)) is not None:
            tied.append((1, only.last, only.incident_id))
        if not tied:
            return None
        best = max(tied)[2]
        # an error tied to two incidents this batch opened (nobody has seen them yet) makes them one: a
        # callee's first error opened one before its callers' errors named it, a caller's opened another
        if self.mergeable(best):
            best = self._merge_all([best, *(other for _, _, other in tied if other != best and self.mergeable(other))])
        return best, fingerprint, NAMES

    def _merge_all(self, incidents: list[str]) -> str:
        """Merge the batch's `incidents` into the one opened first (its earliest error, then the first
        read: its title is the outage's first line); that one."""
        kept = min(incidents, key=lambda i: (self.candidates[i].first, self.opened_at.get(i, 0)))
        for other in incidents:
            if other != kept:
                self._merge(other, into=kept)
        return kept

    def merge_tied(self, event: LogEvent, incident: str) -> None:
        """An error that joined its pattern's incident, which this batch opened, carrying a structured
        error its pattern's template does not hold (`line_names.carries_error_fields`): another incident the
        batch opened that it is tied to (as `find` ties) is the same outage, merged into it; so is one whose writer
        it names (session 53: a relay's refusal naming the client whose error opened that incident), or that holds
        a trace or request id it carries."""
        if self.minutes <= 0 or not self.mergeable(incident) or len(self.opened) < 2:
            return  # (nothing to merge with: the batch opened no other incident)
        fields = line_names.carries_error_fields(event)
        read = self._last_named[0] is event  # (`joined` read what it names: a later error naming writers)
        if not fields and not read and not may_carry_id(event, line_names.HEAD_CHARS):
            return  # (most errors joining their pattern's incident: nothing more is read)
        names, said = self._named_things(event), line_names.words(event)
        # (or a trace or request id, which no template holds, or a machine by its address: one story, another incident's)
        ids = {n for n in names if n.startswith(line_names.ID) or writers.names_address(n)}
        # (or a writer it names, another incident's: a relay's refusal of that client, and the client's error of it)
        called = {writers.IS + n.split(":", 1)[1] for n in names if n.startswith((writers.SERVICE_NAMED, writers.CLIENT_NAMED))} \
            - {writers.IS + i for i in writers.identities(event)}
        if not fields and not ids and not called:
            return
        self._load(self._members(event, names, said))
        tied = [c.incident_id for c in self.candidates.near(event.time, self.minutes)
                if c.incident_id != incident and self.mergeable(c.incident_id)
                and (c.ties(event, names, said) if fields else bool(ids & c.names or called & c.names))]
        if tied:
            self._merge_all([incident, *tied])

    def _served(self, event: LogEvent, held: set[str]) -> list[str]:
        """The writers a later error of a pattern names (a service it called, a client it served) that its incident does
        not name yet (a few)."""
        mine = {writers.SERVICE_NAMED + i for i in writers.identities(event)}
        return [n for n in self._named_things(event) if n.startswith((writers.SERVICE_NAMED, writers.CLIENT_NAMED))
                and n not in held and n not in mine][:4]

    def _wording(self, event: LogEvent) -> outage.Wording:
        """`outage.Wording` of an event, read once for `find` and `joined` both."""
        held, wording = self._last_wording
        if held is not event or wording is None:
            self._last_wording = (event, wording := outage.Wording.of(event))
        return wording

    def _named_things(self, event: LogEvent) -> frozenset[str]:
        """`line_names.named_things` of an event and the batch's learnt spellings (`learnt_addresses`), read once."""
        if self._last_named[0] is not event:
            self._last_named = (event, self.book.spelt(line_names.named_things(event)))
        return self._last_named[1]

    @staticmethod
    def _members(event: LogEvent, names: frozenset[str], said: frozenset[str]) -> list[str]:
        """What to look open incidents up by for an error: its names, words, and what it is called."""
        return [*names, *outage.other_spelling(names), writers.SERVICE_NAMED + event.service.lower(), *said,
                *(p + i for i in writers.identities(event) for p in (writers.SERVICE_NAMED, writers.CALLS)),
                *(writers.IS + n.split(":", 1)[1] for n in names if n.startswith((writers.SERVICE_NAMED, writers.CALLS))),
                writers.CLIENT_NAMED + event.service.lower(), *(writers.CLIENT_NAMED + i for i in writers.identities(event)),
                *(writers.IS + n[len(writers.CLIENT_NAMED):] for n in names if n.startswith(writers.CLIENT_NAMED))]

    def mergeable(self, incident: str) -> bool:
        """Whether `incident` may be merged with another by the batch: it opened in it, as no recurrence."""
        return incident in self.opened and incident not in self.linked and incident not in self.into

    def resolve(self, incident: str) -> str:
        """The incident `incident` is now (itself, or the one the batch merged it into)."""
        while incident in self.into:
            incident = self.into[incident]
        return incident

    def _merge(self, loser: str, *, into: str) -> None:
        """Make the batch's incident `loser` part of `into`: its names, services, window and leaders."""
        self.into[loser] = into
        self.opened.discard(loser)
        gone, kept = self.candidates.pop(loser), self.candidates[into]
        kept.names |= gone.names
        kept.services |= gone.services
        kept.clauses |= gone.clauses
        kept.texts |= gone.texts
        kept.relayed |= gone.relayed
        kept.quoted |= gone.quoted
        for service, texts in gone.own_texts.items():
            kept.own_texts.setdefault(service, set()).update(texts)
        self.candidates.span(kept, min(kept.first, gone.first), max(kept.last, gone.last))
        for times, theirs in ((kept.recent, gone.recent), (kept.symptoms, gone.symptoms)):
            times.update({comp: max(at, times.get(comp, at)) for comp, at in theirs.items()})
        for leader in self.best.pop(loser, {}).values():
            self._offer(into, leader)
        for table in (self.earliest, self.earliest_of):
            for pair in [k for k in table if k[0] == loser]:
                moment = table.pop(pair)
                moved = (into, pair[1])
                table[moved] = min(moment, table.get(moved, moment))
        self.lines.setdefault(into, set()).update(self.lines.pop(loser, set()))
        for named in [k for k in self.names if k[0] == loser]:
            self.names[(into, named[1], named[2])] += self.names.pop(named)

    def joined(self, event: LogEvent, incident: str, pattern: str, *, how: str | None, opened: bool = False) -> None:
        """An error joined (or opened) `incident`, counting toward `pattern`: its names are kept
        (from the error that opened it, joined it by a name or a fold, or is its pattern's first
        in the batch), its window widened, and it may lead."""
        incident = self.resolve(incident)
        pair = (incident, pattern)
        first_of_pattern = pair not in self.earliest
        moment = iso(event.time)
        candidate = self.candidates.get(incident)
        if candidate is None and not opened and self.window is not None and incident not in self.unbounded:
            # an incident its pattern's error joins that the batch's reads bounded by time left out (one
            # another incident of the pattern was merged into): read as it would have been unbounded
            self.unbounded.add(incident)
            self._read(outage_rows.open_incidents_holding(self.conn, sorted(self.asked), OPEN_STATUSES,
                                                          only=[incident]) if self.asked else {})
            candidate = self.candidates.get(incident)
        if opened:
            self.opened.add(incident)
            self.opened_at[incident] = len(self.opened_at)
            candidate = self.candidates.add(Candidate(incident, pattern, moment, moment, set(), set()))
        # (and from a structured error whose pattern's first did not say what it says: one message,
        # `get session failed`, carrying each time another `err` the pattern's template never sees)
        if opened or how is not None or first_of_pattern or line_names.carries_error_fields(event):
            # a dump's line names its component only (its register names are no resource)
            named = self._named_things(event) if how != FOLD else frozenset()
            things = sorted(named)[:line_names.MAX_NAMES]
            names = [*things, writers.component(event), *line_names.writer_names(event, things)]
            for name in names:
                self.names[(incident, outage_rows.NAME, name)] += 1
            if candidate is not None:
                candidate.names.update(names)
                if how != FOLD and len(candidate.texts) < outage.MAX_WORDINGS:
                    wording = self._wording(event)
                    candidate.clauses.update(wording.clauses)
                    candidate.texts.add(wording.text)
                    self.worded = True
                    candidate.relayed.update(wording.relayed)
                    candidate.quoted.update(wording.quoted)
                    candidate.own_texts.setdefault(event.service, set()).add(wording.text)
            if how != FOLD:
                self.lines.setdefault(incident, set()).add(line_names.masked_line(event))
        elif candidate is not None:
            if self.kept_ids.get(incident, 0) < MAX_IDS and may_carry_id(event, line_names.HEAD_CHARS):
                # a later error of its pattern carrying a trace or request id (no template holds one): the id is kept, so
                # the error of that same request another service writes later ties to it (a few an incident a batch)
                for name in [n for n in self._named_things(event) if n.startswith(line_names.ID)][:4]:
                    self.names[(incident, outage_rows.NAME, name)] += 1
                    candidate.names.add(name)
                    self.kept_ids[incident] = self.kept_ids.get(incident, 0) + 1
            if self.read_later.get(incident, 0) < MAX_LATER:
                # (session 53) a later error of its pattern naming a writer its first did not (a mail relay's `reject: MAIL
                # from helpdesk-1.internal[…]`, each time another client it refused): that writer is named by the
                # incident, so the error it writes of that refusal, read after, ties to it (a few reads an incident a batch)
                self.read_later[incident] = self.read_later.get(incident, 0) + 1
                served = self._served(event, candidate.names)
                # (and who called whom: `leading.side` reads it)
                for name in [*served, *(n for n in line_names.writer_names(event, served) if n.startswith(writers.BY))]:
                    self.names[(incident, outage_rows.NAME, name)] += 1
                    candidate.names.add(name)
        if candidate is not None:
            comp = writers.component(event)
            if how != FOLD:  # (a machine's symptom: `machines.same_machine_incident`)
                machines.note(candidate, comp, event, lambda: self._named_things(event))
            candidate.wrote(comp, event)
            candidate.services.add(event.service)
            self.candidates.span(candidate, min(candidate.first, moment), max(candidate.last, moment))
        if how == FOLD:
            return  # a dump's line is its error's record, not a leader of its own
        of_service = (incident, event.service)
        if of_service not in self.earliest_of or moment < self.earliest_of[of_service]:
            self.earliest_of[of_service] = moment
        if first_of_pattern or moment < self.earliest[pair]:
            self.earliest[pair] = moment
            self._offer(incident, Leader.of(event, pattern))

    def finish(self) -> Counter[tuple[str, str, str]]:
        """Keep each touched incident's leader where the batch brought a better one; the names to
        count as members (the caller counts them with the batch's other members)."""
        self._warned_leaders()
        touched = [i for i in self.best if i not in self.opened]
        stored = outage_rows.leaders(self.conn, [i for i in touched if i not in self.stored_leaders])
        stored.update((i, json.loads(text)) for i in touched if (text := self.stored_leaders.get(i)) is not None)
        # incidents joined by their pattern, never looked up, that a leader of another service may lead
        unread = [i for i, per_service in self.best.items() if i not in self.candidates
                  and (len(per_service) > 1 or i not in stored or stored[i].get("service") not in per_service)]
        read = outage_rows.names_of(self.conn, unread) if unread else {}
        chosen: dict[str, dict[str, Any]] = {}
        added: dict[str, set[str]] = {}
        for (incident, _, name) in self.names if unread else ():
            added.setdefault(incident, set()).add(name)
        for incident, per_service in self.best.items():
            before = stored.get(incident)
            options = [*per_service.values(), *([Leader.from_json(before)] if before else [])]
            if len({o.service for o in options}) == 1 and before is not None:
                # one service's errors (most batches): its side is the same for each, as it was
                best = replace(min(options, key=Leader.key), side=options[-1].side)
            else:
                candidate = self.candidates.get(incident)
                names = candidate.names if candidate is not None else (
                    read.get(incident, (set(), set()))[0] | added.get(incident, set()))
                best = min(options, key=lambda leader: leader.ranked(names))
                # the reviewer is told of the calls when they decided (a caller's error came first otherwise)
                decided = best is not min(options, key=Leader.key)
                best = replace(best, side=leading.CALLEE if decided else leading.BETWEEN)
            if before is None or best.as_json() != before:
                chosen[incident] = best.as_json()
        outage_rows.set_leaders(self.conn, chosen)
        return self.names

    def _offer(self, incident: str, leader: Leader) -> None:
        """Keep `leader` as its service's best in `incident` when it comes first (`Leader.key`)."""
        per_service = self.best.setdefault(incident, {})
        held = per_service.get(leader.service)
        if held is None or leader.key() < held.key():
            per_service[leader.service] = leader

    def _warned_leaders(self) -> None:
        """A WARN leads an incident the batch touched when it was written before the incident's
        first error, within the burst window, and is the first sign of its cause: it states the
        cause's own failure and names what the errors name (or is their own component's: the same
        service on the same host); or it is an earlier line of one of the incident's own errors (the
        same masked line: the errors' first one, logged at WARN before it was logged at ERROR); or
        it names the same destination or resource (host:port, URL host, resource name) as the
        errors; or it carries a known error signature and is tied to them (the WARN that would have
        joined the incident, had it been read after the incident's first error); or it is the called
        service's (`leading.side`: the incident's other errors name its writer, whose errors are there). Its rank is its own words': a warning of slowness leads only errors that are all
        symptoms."""
        window = timedelta(minutes=max(self.minutes, 0.0))
        read = self.warnings_read  # (a source's next batch is handed them with its WARNs: carried.py)
        for incident in list(self.best):
            candidate = self.candidates.get(incident)
            first = parse_iso(candidate.first) if candidate is not None else None
            if candidate is None or first is None:
                continue
            strong = {n for n in candidate.names if n.startswith(line_names.DISTINCT)}
            for event, signed in self.warnings:
                # before the incident's first error, or its own service's first there (a callee's warning
                # leads its errors, written after a caller's first)
                own = self.earliest_of.get((incident, event.service))
                until = max(first, parse_iso(own) or first) if own else first
                if not (until - window <= event.time <= until):
                    continue
                if event.event_id not in read:  # its names, read once, only when it is near an incident
                    read[event.event_id] = (line_names.named_things(event), line_names.words(event), leading.states_cause(event),
                                       line_names.masked_line(event))
                names, said, states, line = read[event.event_id]
                if not (line in self.lines.get(incident, ())
                        or names & strong
                        # the resource it names, named by the errors as a word (`resourceName="ephemeral-storage"`
                        # before `The node was low on resource: ephemeral-storage`)
                        or line_names.values(names, ("res:",)) & line_names.values(candidate.names, ("res:", writers.SERVICE_NAMED))
                        # the called service's own warning before its errors: its callers' errors name it
                        or writers.component(event) in candidate.names
                        and leading.side(event.service, candidate.names) == leading.CALLEE
                        # the warning of a service the errors name (their calls to it failed, or relay it) that wrote none of them
                        or (incident, event.service) not in self.earliest_of
                        and writers.named_writer(event, candidate.names, candidate.texts)
                        or (states or signed) and ((writers.component(event) in candidate.names
                                                    or writers.host_named(event, candidate.names)) and states
                                                   or candidate.ties(event, names, said))):
                    continue
                self._offer(incident, Leader.of(event, leading.WARNED + correlation.fingerprint(event)))

    def _load(self, members: list[str]) -> None:
        new = [m for m in dict.fromkeys(members) if m not in self.asked]
        if not new:
            return
        self.asked.update(new)
        self._read(outage_rows.open_incidents_holding(self.conn, new, OPEN_STATUSES, window=self.window,
                                                      unbounded=sorted(self.unbounded)))

    def _read(self, found: dict[str, dict[str, Any]]) -> None:
        """The open incidents found by a member, with their names and services, as candidates."""
        unknown = [i for i in found if i not in self.candidates]
        for incident, (names, services) in outage_rows.names_of(self.conn, unknown).items():
            row = found[incident]
            self.candidates.add(Candidate(incident, row["fingerprint"], row["first_seen"], row["last_seen"],
                                          names, services))
