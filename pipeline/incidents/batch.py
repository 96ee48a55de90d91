"""Events into incidents: a batch of parsed lines (events and dead letters) is stored with the
source's cursor in one transaction, and each event the opening rule picks joins the open
incident of its fingerprint, or opens a new one with its SLA deadline; a decided incident never
takes new events: the new one is linked to it as a recurrence (incidents/recurrence.py, CONTRACT §2).

Fingerprints come from the template miner, whose state is read (when another process changed it)
and written in the same transaction, under the store's writer lock. On PostgreSQL the lock is taken
midway: a batch's dead letters and the lines that open nothing (its source's own rows) are written
first, beside other pollers' batches, and the lock is held only for the miner, the incidents and the
cursor (store/postgres.py). The rows themselves are the store's (pipeline/store/incident_rows.py);
the decisions are made here.
"""
from __future__ import annotations

import contextlib
import json
from collections import Counter
from typing import Any, Iterable, Iterator, Sequence

from pipeline.clock import Clock, iso, parse_iso
from pipeline.incidents import carried, correlation, recurrence
from pipeline.incidents.counts import IngestCounts as IngestCounts  # (imported from here by the drivers)
from pipeline.incidents.joining import Joiner
from pipeline.incidents.leading import states_failure
from pipeline.incidents.outage import BURST_MINUTES, is_dump
from pipeline.incidents.expected import expected
from pipeline.incidents.notices import notice_only
from pipeline.incidents.recovery import answered_missing, cancelled, handled, no_work, recovered
from pipeline.incidents.opening import DEFAULT_RULE, OpeningRule
from pipeline.incidents.sla import DEFAULT_SEVERITY, SlaPolicy
from pipeline.ingest.events import DeadLetter
from pipeline.ingest.events import content_id_of
from pipeline.incidents.fingerprints.miner import TemplateMiner
from pipeline.redaction import configured_secrets, scrubbed
from pipeline.state import OPEN_STATUSES, LogEvent
from pipeline.store import incident_rows as rows
from pipeline.store import members, outage_rows
from pipeline.store.records import Records
from pipeline.store.sql import Connection

REOPEN_MINUTES = 30.0


class Incidents:
    """The incident step of one records store, with its policies: which events open incidents
    (`opening`), the SLA a new incident's deadline is computed with (`sla`) and the window within
    which errors that name the same things are one outage (`burst_minutes`, outage.py).
    `reopen_minutes` (INCIDENTIQ_REOPEN_MINUTES) is kept for configurations that set it and no
    longer changes anything: a decided incident never takes new events back, however soon they come."""

    def __init__(self, records: Records, *, opening: OpeningRule = DEFAULT_RULE,
                 reopen_minutes: float = REOPEN_MINUTES, sla: SlaPolicy | None = None,
                 burst_minutes: float = BURST_MINUTES):
        self.records = records
        self.opening = opening
        self.reopen_minutes = reopen_minutes
        self.burst_minutes = burst_minutes
        self.sla = sla or SlaPolicy()
        # the template miner as of `_miner_revision` of the saved state (None: load it)
        self._miner: TemplateMiner | None = None
        self._miner_revision: int | None = None
        self._miner_mark = 0  # the miner's mark when its changes were last saved or loaded
        self._rows_pending = False  # the state was read whole (before schema 11): its first save writes every row
        self._content_ids: bool | None = None  # store_meta 'content_ids': written by a migration only, read once
        self.memory = carried.Memory()  # what each source's recent batches joined (carried.py)

    @property
    def clock(self) -> Clock:
        return self.records.clock

    def store_batch(self, items: Iterable[LogEvent | DeadLetter], *, cursor: tuple[str, str] | None,
                    fence: tuple[str, str, int] | None = None) -> IngestCounts:
        """Store events and dead letters and advance the source cursor in one transaction.

        Each event is stored once (by event_id); an event the opening rule picks joins the open
        incident of its fingerprint or opens a new one; other events are kept as context for log
        windows. The batch's writes are batched too: one lookup of the ids stored before, one
        insert of the new events, one count update per incident. On PostgreSQL the transaction is
        pipelined: it waits on the server for its reads alone (the ids and dead letters stored before;
        the lock and the miner's revision; the incidents of the batch's patterns and its lease; the
        leaders), its writes sent with them and with the COMMIT. A source's batch (a cursor or a fence
        names it) starts from what its recent batches joined (carried.py)."""
        source = fence[0] if fence is not None else cursor[0] if cursor is not None else None
        return self.store_batches([(items, cursor)], fence=fence, carry=source)

    def store_batches(self, batches: Sequence[tuple[Iterable[LogEvent | DeadLetter], tuple[str, str] | None]], *,
                      fence: tuple[str, str, int] | None = None, carry: str | None = None) -> IngestCounts:
        """Store several batches (each with the cursor that covers it) in one transaction, each
        decided as `store_batch` decides it alone (what heals an error, what opens or joins what),
        in order: a final read (`ingest`) commits thousands of lines at a time, not 500. `carry`: the
        source whose memory the batches start from and keep (carried.py); without it, they hold none
        and the memory of their cursors' sources is forgotten."""
        counts = IngestCounts()
        if carry is None:
            self.memory.forget([cursor[0] for _, cursor in batches if cursor is not None])
        try:
            with self.records.transaction(serial=False, pipelined=True) as conn:
                for items, cursor in batches:
                    counts.add(self._store(conn, items, cursor=cursor, fence=fence, carry=carry))
        except BaseException:
            # rolled back: what the miner learned from the batches before the failing one is not
            # saved (nor, when the commit failed, from any), so it is read again; and what the batches
            # joined is forgotten, read back from the store by the next
            self._miner, self._miner_revision = None, None
            self.memory.pending.clear()
            raise
        self.memory.committed()
        return counts

    def _store(self, conn: Connection, items: Iterable[LogEvent | DeadLetter], *, cursor: tuple[str, str] | None,
               fence: tuple[str, str, int] | None, carry: str | None) -> IngestCounts:
        """One batch, inside the caller's transaction (`store_batch`)."""
        counts = IngestCounts()
        stamp = iso(self.clock.now())
        secrets = configured_secrets()
        items = list(items)
        for i, item in enumerate(items):  # before anything keeps their text: rows, blocks, templates
            items[i], found = scrubbed(item, secrets)
            counts.redacted += found
        # the source's own rows first, beside other writers (PostgreSQL: store/postgres.py begin):
        # its dead letters and the lines that open nothing (most of a log: one context block).
        # They are the source's alone (ids by source and position, the source leased to this
        # process, the fence checked before the commit), so they need no writer lock; then, one
        # writer at a time, what all sources share: the miner, the incidents, the cursor
        if self._content_ids is None:
            self._content_ids = rows.has_content_ids(conn)
        content_ids = self._content_ids
        events = [item for item in items if not isinstance(item, DeadLetter)]
        # each event's ids (_ids_of): in a store that never held content ids, its own id alone
        ids_of = {id(e): self._ids_of(e, content_ids) for e in events} if content_ids else None
        seen = rows.stored_event_ids(conn, list(dict.fromkeys(
            (i for ids in ids_of.values() for i in ids) if ids_of is not None else (e.event_id for e in events))))
        opening: list[LogEvent] = []
        context: list[LogEvent] = []
        letters: list[tuple[str, str, str, str]] = []
        for item in items:
            if isinstance(item, DeadLetter):
                letters.append((item.source, item.position, item.reason, item.raw))
                continue
            if item.event_id in seen if ids_of is None else seen.intersection(ids_of[id(item)]):
                continue  # seen before (or stored by an older version under its content's id)
            seen.add(item.event_id)
            (opening if self.opening.opens(item) else context).append(item)
        # an error its own writer says came back from within the burst window (a reconnect, a retry
        # that succeeded) is context, not an incident (recovery.recovered, CONTRACT §2);
        healed = recovered(opening, context, self.burst_minutes)
        # and one that says only that its request was cancelled by whoever made it (recovery.cancelled)
        healed.update(id(item) for item in opening if cancelled(item))
        healed.update(id(item) for item in opening if notice_only(item))  # or says only a notice (notices.py)
        healed.update(answered_missing(opening, context))  # or asked for what is not there, answered 404
        # or whose request its story says ended well (answered 2xx, done already), or whose run had nothing
        # to do and ended normally
        healed.update(handled(opening, context))
        healed.update(no_work(opening, context, self.burst_minutes))
        healed.update(expected(opening, context, self.burst_minutes))  # or is a healthy system's (expected.py)
        if healed:
            context.extend(item for item in opening if id(item) in healed)
            opening = [item for item in opening if id(item) not in healed]
        rows.insert_events(conn, [(item, None) for item in context], stamp=stamp)
        stored_letters = rows.send_dead_letters(conn, letters, stamp=stamp)  # read once answered
        # the WARNs, and the lines below them stating a failure: each may lead an outage it precedes (`_warns`)
        warned = [item for item in context if self._warns(item)]
        conn.serialize()
        self._correlate_batch(conn, opening, warned, counts, stamp, pre_miner=content_ids, cursor=cursor,
                              fence=fence, carry=carry)
        counts.rejected += rows.count_stored(stored_letters)
        counts.events += len(opening) + len(context)
        counts.incidents_updated -= counts.incidents_new
        return counts

    def _correlate_batch(self, conn: Connection, opening: list[LogEvent], warned: list[LogEvent],
                         counts: IngestCounts, stamp: str, *, pre_miner: bool, cursor: tuple[str, str] | None,
                         fence: tuple[str, str, int] | None, carry: str | None) -> None:
        """The batch's serial part, under the writer lock: each opening event's patterns (the miner
        learning from it), the incident it joins or opens, the counts, and the source's cursor.
        `warned`: the batch's WARNs that open nothing (they may lead an outage it touches)."""
        with self._templates(conn, stamp) as miner:
            fresh = [(item, self._fingerprints(miner, item, pre_miner=pre_miner)) for item in opening]
            # the newest incident of every fingerprint the batch's opening events lead to, in one
            # lookup (not one an event); the incidents the batch opens are added as it opens them
            # (and of the patterns that joined another pattern's incident: outage.py), read with the
            # lease's fence (held to the commit: no take of a lease passes the writer lock we hold)
            fingerprints = list(dict.fromkeys(fp for _, keys in fresh for fp in keys[1]))
            sent = rows.send_newest(conn, fingerprints), outage_rows.send_joined(conn, fingerprints)
            held = rows.send_fence(conn, fence) if fence is not None else None
            memory = self.memory.take(carry) if carry is not None else None
            still = carried.send_open(conn, memory) if memory is not None and memory.candidates else []
            newest = rows.read_newest(sent[0])
            for fp, row in outage_rows.read_joined(sent[1]).items():
                if fp not in newest or _prefer(row, newest[fp]):
                    newest[fp] = row
            if held is not None and fence is not None:
                rows.fence_held(held, fence)
            times = [iso(item.time) for item, _ in fresh]  # (stored times: UTC, so the text sorts as the time)
            joiner = Joiner(conn, burst_minutes=self.burst_minutes,
                            span=(min(times), max(times)) if times else None,
                            unbounded=[row["incident_id"] for row in newest.values()])
            if memory is not None:  # what the source's recent batches joined, as if read with this one
                memory = carried.seed(joiner, memory, still, sources={e.source for e in (*opening, *warned)},
                                      warns=self._warns, errors=opening)
            for item in warned:
                joiner.warned(item)  # a WARN opens nothing; one stating the cause may lead (CONTRACT §2)
            took_by: list[tuple[LogEvent, tuple[str, str] | None]] = []
            opened: dict[str, dict[str, Any]] = {}  # the incidents the batch opens, written once it is read
            for item, keys in fresh:
                took_by.append((item, self._correlate(conn, item, keys, newest, counts, stamp, joiner, opened)))
            # incidents the batch opened and then found to be one outage were merged (joining.py): each
            # event counts where its incident went, and only the incidents that remain are written
            new: list[tuple[LogEvent, str | None]] = []
            joined: dict[str, list[str]] = {}  # incident -> the times of the events it gained
            gathered: Counter[tuple[str, str, str]] = Counter()  # its patterns and services, with counts
            for item, took in took_by:
                incident = joiner.resolve(took[0]) if took else None
                new.append((item, incident))
                if took is not None and incident is not None:
                    joined.setdefault(incident, []).append(iso(item.time))
                    gathered[(incident, members.PATTERN, took[1])] += 1
                    gathered[(incident, members.SERVICE, item.service)] += 1
            counts.incidents_new -= joiner.into.keys()
            counts.incidents_updated = {joiner.resolve(i) for i in counts.incidents_updated}
            for incident_id, row in opened.items():
                if incident_id not in joiner.into:
                    rows.insert_incident(conn, **row["incident"])
                    if row["link"] is not None:
                        rows.link_incident(conn, incident_id, **row["link"])
            # the writes, sent without waiting for each (PostgreSQL: a round trip for the leaders read,
            # and the rest go with the COMMIT)
            with conn.pipelined():
                rows.insert_events(conn, new, stamp=stamp)
                for incident, times in joined.items():
                    rows.count_events(conn, incident, added=len(times), first=min(times), last=max(times),
                                      stamp=stamp)
                gathered.update(joiner.finish())
                members.count(conn, gathered, day=stamp[:10])
                if cursor is not None:  # under the source's lease, its fence read above (store/source_leases.py)
                    rows.save_cursor(conn, cursor[0], cursor[1], stamp)
            if memory is not None and carry is not None:  # kept once the transaction commits
                self.memory.pending[carry] = carried.kept(
                    joiner, memory, max((e.time for e in (*opening, *warned)), default=None))

    def _warns(self, item: LogEvent) -> bool:
        """Whether a line that opened nothing may lead an outage it precedes: a WARN, or one below it stating a
        cause's own failure (an INFO `Failed authentication with /10.7.3.21`, a kernel line with no level)."""
        return self.opening.below_floor(item) or self.opening.beneath_warning(item) and states_failure(item)

    @staticmethod
    def _ids_of(event: LogEvent, content_ids: bool) -> tuple[str, ...]:
        """The ids an event may be stored under: its own, and the id its content hashed to in an
        older version (only in stores that had such events: store_meta 'content_ids')."""
        if not content_ids:
            return (event.event_id,)
        content_id = event._content_id or (content_id_of(event._content_line) if event._content_line else None)
        return (event.event_id, content_id) if content_id else (event.event_id,)

    @staticmethod
    def _fingerprints(miner: TemplateMiner, event: LogEvent, *, pre_miner: bool) -> tuple[str, list[str]]:
        """The event's fingerprint (by the miner's template of its first line, the miner learning
        from it), and every fingerprint whose incident it joins: clusters the miner joined since an
        incident opened still lead to it, and so does the masked fingerprint incidents had before
        the miner. That one masks the message a second time, with the pre-miner masks: only a
        store that held events before the miner came (migration 2: store_meta 'content_ids',
        `pre_miner`) can hold such incidents, so elsewhere the message is masked once."""
        template_id = miner.add(correlation.first_line(event.message)).template_id
        fp = correlation.fingerprint(event, template_id=template_id)
        known = [correlation.fingerprint(event, template_id=t) for t in miner.group_members(template_id)]
        if pre_miner:
            known.append(correlation.fingerprint(event))
        return fp, list(dict.fromkeys([fp, *known]))

    def _correlate(self, conn: Connection, event: LogEvent, keys: tuple[str, list[str]],
                   newest: dict[str, dict[str, Any]], counts: IngestCounts, stamp: str,
                   joiner: Joiner, opened_here: dict[str, dict[str, Any]]) -> tuple[str, str] | None:
        """The incident the event joins or opens and the pattern it counts toward there: the
        undecided incident of its pattern (recurrence.py); else an open incident of the same outage (a
        dump it is a line of, or an error naming what it names within the burst window: joining.py);
        else a new one, unless it is a dump's line (`outage.is_dump`) with nothing to fold into: None,
        kept as context for log windows. `newest` is the newest incident of each of its fingerprints (by
        created_at), kept current with the incidents this batch opens or its patterns join."""
        fp, known = keys
        row: dict[str, Any] | None = None
        for candidate in (newest.get(k) for k in known):
            if candidate is not None and (row is None or candidate["created_at"] > row["created_at"]):
                row = candidate
        after: dict[str, Any] | None = None  # the decided incident a new one recurs after
        if row is not None:
            row = rows.merge_target(conn, row)  # a merged incident's events join the one it was merged into
            if recurrence.absorbs(row["status"]):
                joined: str = joiner.resolve(row["incident_id"])
                counts.incidents_updated.add(joined)
                joiner.joined(event, joined, fp, how=None)
                joiner.merge_tied(event, joined)
                return joined, fp
            after = row  # decided: it never takes new evidence, a new incident recurs after it
        outage = joiner.find(event, fp)  # open incidents only: a decided one absorbs nothing
        if outage is not None:
            joined, pattern, how = outage
            counts.incidents_updated.add(joined)
            joiner.joined(event, joined, pattern, how=how)
            if pattern == fp:  # its pattern's later errors join the same incident
                newest[fp] = {"incident_id": joined, "status": "analyzing", "closed_at": None, "created_at": stamp,
                              "linked_to": None, "link_kind": None}
            return joined, pattern
        if is_dump(event.message) and not (event.exception or event.stack):
            return None  # a dump's line with no error to fold into says nothing on its own: context
        if self.opening.below_floor(event):
            # a WARN (one that carries a known error signature) joins its pattern's or its outage's
            # incident, never opens one by itself; one stating the cause, or tied to an incident it
            # would have joined had it been read after its first error, may lead (CONTRACT §2)
            joiner.warned(event, signed=True)
            return None
        new_id = correlation.incident_id(fp, event.time)
        salt = 0
        while new_id in opened_here or rows.incident_exists(conn, new_id):
            # an earlier incident of this fingerprint opened at the very same instant (a backfilled
            # host's log): derive another id rather than fail the whole batch
            salt += 1
            new_id = correlation.incident_id(f"{fp}:{salt}", event.time)
        opened = parse_iso(stamp)
        assert opened is not None  # the batch's own stamp
        deadline, backfilled = self.sla.due(first_seen=event.time, opened=opened, severity=DEFAULT_SEVERITY)
        # written once the batch is read (`_correlate_batch`): the batch may merge it into another it opened
        opened_here[new_id] = {
            "incident": {"incident_id": new_id, "fingerprint": fp, "title": correlation.title(event),
                         "service": event.service, "severity": DEFAULT_SEVERITY, "first_seen": iso(event.time),
                         "stamp": stamp, "sla_deadline": iso(deadline), "backfilled": backfilled},
            "link": None if after is None else {"to": after["incident_id"], "kind": recurrence.RECURRED,
                                                "status": after["status"]}}
        counts.incidents_new.add(new_id)
        joiner.joined(event, new_id, fp, how=None, opened=True)
        if after is not None:
            joiner.linked.add(new_id)
        if fp not in newest or stamp >= newest[fp]["created_at"]:
            newest[fp] = {"incident_id": new_id, "status": "analyzing", "closed_at": None, "created_at": stamp,
                          "linked_to": None, "link_kind": None}
        return new_id, fp

    @contextlib.contextmanager
    def _templates(self, conn: Connection, stamp: str) -> Iterator[TemplateMiner]:
        """The miner, current with the saved state (inside the caller's transaction), its changes
        saved back when it learned something; forgotten when the transaction fails, so it is read
        again. The state is rows (a cluster or join key each): what another process saved is read
        by revision, what this one learned is upserted, and nothing is rewritten whole."""
        revision = rows.template_revision(conn)
        if self._miner is None or self._miner_revision != revision:
            self._miner, self._rows_pending = self._load_miner(conn, revision, self._miner, self._miner_revision)
            self._miner_revision = revision
            self._miner_mark = self._miner.mark
        miner = self._miner
        learned = miner.revision
        try:
            yield miner
            if miner.revision != learned:
                changes = miner.changes_since(None if self._rows_pending else self._miner_mark)
                rows.save_template_changes(conn, revision + 1, changes, stamp)
                self._miner_revision, self._miner_mark, self._rows_pending = revision + 1, changes["mark"], False
        except BaseException:
            self._miner, self._miner_revision = None, None
            raise

    def _load_miner(self, conn: Connection, revision: int, miner: TemplateMiner | None,
                    had: int | None) -> tuple[TemplateMiner, bool]:
        """The miner as saved at `revision`: `miner` (at revision `had`) brought up to date with the
        rows saved since, or read whole. A state saved whole before schema 11 is read as it was, and
        saved as rows the first time the miner learns something (the flag returned says so)."""
        text = rows.template_state(conn) if revision else None
        header = json.loads(text) if text else None
        if header is None:
            return TemplateMiner.from_state(None), False
        if header.get("kind") != "rows":
            return TemplateMiner.from_state(header), True
        if miner is not None and had is not None and had < revision:
            miner.apply_changes(rows.template_changes(conn, header, had))
            return miner, False
        return TemplateMiner.from_state(rows.template_changes(conn, header, 0)), False

    def patterns_of(self, events: Iterable[LogEvent]) -> dict[str, list[str]]:
        """Each event's patterns, by event id: its fingerprint and every fingerprint whose incident it
        would join (as `store_batch` reads them; a reviewer's split picks a member pattern's events
        with them). The miner learns nothing new from events it has seen; what it does learn is saved."""
        with self.records.transaction() as conn, self._templates(conn, iso(self.clock.now())) as miner:
            pre_miner = rows.has_content_ids(conn)
            return {e.event_id: self._fingerprints(miner, e, pre_miner=pre_miner)[1] for e in events}

    def templates(self) -> dict[str, str]:
        """Every template the miner knows: id → template text (as last saved by any process)."""
        with self.records.reading() as conn:
            return self._load_miner(conn, rows.template_revision(conn), None, None)[0].templates()


def _prefer(row: dict[str, Any], other: dict[str, Any]) -> bool:
    """Whether a pattern's incident `row` is the one its errors join rather than `other`: an open
    one before a closed one, then the newer."""
    return (row["status"] in OPEN_STATUSES, row["created_at"]) > (other["status"] in OPEN_STATUSES, other["created_at"])
