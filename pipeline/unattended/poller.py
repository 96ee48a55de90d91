"""The poller: reads new events from the configured source every few seconds, stores them,
and advances every incident that needs work (new runs, cut-off runs, new evidence, retries).

The web app runs it in a background thread (`start()` / `stop()`), the CLI in the foreground
(`run_forever`). One poller works a data dir's incidents at a time (see lease.py); the others stand
by and take over when it stops or dies. On PostgreSQL the sources are shared: each is leased to one
poller (store/source_leases.py), so several processes read and store the configured sources
side by side, each starting the first runs of the incidents its batches opened; on SQLite the one
working poller reads them all, as before. Its state, last error and counters are written to the records
store after every poll (poll_record.py; the Operations page reads them: operations/metrics.py),
so a failing poller is visible, never silent.
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
import time
import traceback
from datetime import timedelta
from typing import Callable

from pipeline.notifications import sender
from pipeline.unattended.delivery import DeliveryWorker
from pipeline.unattended import escalation
from pipeline.store import due, lease, source_leases
from pipeline.unattended import poll_record
from pipeline.unattended import retention
from pipeline.unattended.settling import Settler, settler_for
from pipeline.engine import runner
from pipeline.engine import Engine
from pipeline.engine.lost_runs import recover_lost_runs
from pipeline.errors import IncidentIQError, LeaseLost, StorageError
from pipeline.review.related import RelatedIncidents
from pipeline.unattended.poll_record import PollReport
from pipeline.store.owners import process_owner
from pipeline.sources import Source

LEASE_INTERVALS = 5  # the lease outlives this many missed polls...
LEASE_MIN_SECONDS = 30.0  # ...and never less: a long graph run must not lose it mid-poll
MAX_BACKOFF_SECONDS = 60.0
PRUNE_EVERY_SECONDS = 3600.0
PRUNE_BATCH = 500  # incidents compacted per hourly prune; the rest on the next
# while the source is behind, a paused incident's new evidence waits this many merge delays, so one
# merge takes what the backlog held for it rather than one every delay (a repeat is only counted;
# new templates re-run the analysis)
BEHIND_MERGE_DELAYS = 2
# while the source has more ready, each batch doubles, up to this many times the source's batch size
# (INCIDENTIQ_POLL_BATCH_LINES; and INCIDENTIQ_POLL_MAX_LINES): a backlog is stored in fewer, larger transactions; the first
# batch of every poll has the configured size, so a source that keeps up reads as before. Bounded
# low: a batch's new incidents start their runs one after another once it is stored, so at 16x the
# burst bench's p95 read -> awaiting approval rose from 0.5 s to 3.4 s
BATCH_GROWTH = 4


class Poller:
    """Polls one source for one engine; see the module docstring."""

    def __init__(self, engine: Engine, source: Source | Sequence[Source], interval: float | None = None, *,
                 owner: str | None = None, max_backoff: float = MAX_BACKOFF_SECONDS,
                 deliveries: DeliveryWorker | None = None, source_lease: float | None = None):
        self.engine = engine
        # webhooks are told on their own thread: a slow one never holds a poll (issue 25)
        self.deliveries = deliveries or DeliveryWorker(engine.records)
        self.sources: list[Source] = list(source) if isinstance(source, Sequence) else [source]
        if not self.sources:
            raise ValueError("a poller needs a source")
        self.source = self.sources[0]
        self.label = ";".join(s.name for s in self.sources)  # its row in `pollers`
        self.interval = float(interval if interval is not None else engine.settings.poll_interval)
        self.owner = owner or process_owner()
        self.max_backoff = max_backoff
        self.cursor_key = f"source:{self.source.name}"
        # seconds a source stays leased without renewal (PostgreSQL: INCIDENTIQ_SOURCE_LEASE_SECONDS)
        self.source_lease = float(source_lease if source_lease is not None
                                  else getattr(engine.settings, "source_lease", 30.0))
        self.held: dict[str, int] = {}  # the sources this poller holds, each with its lease's generation
        self._reading: str | None = None  # the source being read now
        self._batch_lines: dict[str, int | None] = {}  # each source's configured batch size, by name
        self._settlers: dict[str, Settler | None] = {}  # each source's held lines (settling.py), by name
        self._housekeeper = False  # holds the data dir's lease: due work, escalation, pruning
        self._claimed_at = 0.0
        self.state = "stopped"
        self.failures = 0  # consecutive failed polls, for the backoff
        self.restarts = 0  # times the supervisor restarted the loop after a bug ended it
        self.last_crash: str | None = None
        self._stop = threading.Event()
        self.polled = threading.Event()  # set once the first poll is over (work done, standby or failed)
        self._thread: threading.Thread | None = None
        self._renewed_at = 0.0
        self._pruned_at = 0.0
        self._related: RelatedIncidents | None = None  # the evidence index, opened once it has work

    @property
    def lease_ttl(self) -> float:
        """Longer than the longest step between renewals: a model-backed run may spend three
        timeouts (a call and two retries) in each of rca and recommend before the next renewal."""
        ttl = max(self.interval * LEASE_INTERVALS, LEASE_MIN_SECONDS)
        model_timeout = getattr(self.engine.analyst, "timeout", None)
        if model_timeout:
            ttl = max(ttl, 6 * model_timeout + LEASE_MIN_SECONDS)
        return ttl

    # -- one poll ------------------------------------------------------------------------
    def poll_once(self) -> PollReport:
        """One poll: hold the lease, store what the source has, advance incidents; raises our
        errors after recording them (the loop in `run_forever` retries with backoff)."""
        report, error = self._poll()
        if error is not None:
            raise error
        self._after_poll(report)
        return report

    def _after_poll(self, report: PollReport) -> None:
        """What follows a poll that worked and caught up, outside the leased work: the evidence
        index is this process's own (a convenience for the incident page), so it needs no lease, and
        a slow catch-up never runs on after the lease was lost (a standby may be working by then)."""
        if not report.standby and not report.error and not report.more and not self._stop.is_set():
            self._index_evidence()

    def _poll(self) -> tuple[PollReport, IncidentIQError | None]:
        records = self.engine.records
        started = time.monotonic()
        self._housekeeper = lease.acquire(records, self.owner, source=self.label, ttl=self.lease_ttl)
        if (self._housekeeper or records.postgres) and (
                not self.held or time.monotonic() - self._claimed_at > self._source_ttl / 3):
            # SQLite: the data dir's one working poller reads every source; PostgreSQL: each poller its
            # share. Renewed every third of the lease (and while reading: _keep_going), not every poll
            self.held = self._claim(self._source_ttl)
        if not self._housekeeper and (not self.held or not records.postgres):
            if self.held:  # SQLite: another poller works the data dir, its sources with it
                source_leases.release(records, self.owner)
                self.held = {}
            current = lease.holder(records)
            report = PollReport(source=self.label, standby=True, holder=current["owner"] if current else None)
            self._set_state("standby", next_in=self.interval)
            return report, None
        self._renewed_at = time.monotonic()
        reports: list[PollReport] = []
        error: IncidentIQError | None = None
        try:
            if self._housekeeper:
                recover_lost_runs(self.engine)
            for source in self.sources:
                if source.name not in self.held or not self._keep_going():
                    continue
                report = PollReport(source=source.name)
                reports.append(report)
                source_started = time.monotonic()
                try:
                    self._read_and_store(report, source)
                except LeaseLost:
                    self.held.pop(source.name, None)  # its new holder reads the batch again
                except IncidentIQError as exc:
                    # the source or the store failed: nothing is lost (the cursor did not move
                    # past unstored events); record it where the operations page looks, and retry
                    error = error or exc
                    report.error = f"{type(exc).__name__}: {exc.message}"[:1000]
                finally:
                    self._reading = None
                    report.latency_ms = (time.monotonic() - source_started) * 1000
            if self._housekeeper:
                if not reports:  # it holds no source: its work is told (not recorded) as the first source's
                    reports.append(PollReport(source=self.source.name))
                self._advance_incidents(reports[0], more=any(r.more for r in reports))
                if self._keep_going():
                    # nobody decided: announce, escalate, expire; then wake the delivery thread (a
                    # failing or slow webhook is retried from the outbox there, never in the poll)
                    done = escalation.run(self.engine)
                    reports[0].announced, reports[0].escalated, reports[0].expired = (
                        len(done.announced), len(done.escalated), len(done.expired))
                    self.deliveries.wake()
        except IncidentIQError as exc:
            error = error or exc
            if not reports:
                reports.append(PollReport(source=self.source.name))
            reports[-1].error = f"{type(exc).__name__}: {exc.message}"[:1000]
        if not reports:  # every source it held was taken over before it read
            reports.append(PollReport(source=self.source.name))
        self.failures = self.failures + 1 if error else 0
        for report in reports:
            if report.source in self.held or report.error:  # what it read, or failed at
                poll_record.record_poll(records, report)
        total = poll_record.combined(self.label, reports) if len(self.sources) > 1 else reports[0]
        total.latency_ms = (time.monotonic() - started) * 1000
        delay = self.next_delay(total)
        if error:
            # keep the lease through the backoff, so a standby does not take over only to fail alike
            if self._housekeeper:
                lease.acquire(records, self.owner, source=self.label, ttl=delay + self.lease_ttl)
            if self.held:
                self.held = self._claim(delay + self._source_ttl)
        self._set_state("error" if error else "running", next_in=delay, error=total.error)
        if self._housekeeper:
            self._prune_now_and_then()
        return total, error

    def _claim(self, ttl: float) -> dict[str, int]:
        """Renew and balance this poller's sources (store/source_leases.py); the one it reads is kept."""
        self._claimed_at = time.monotonic()
        return source_leases.claim(self.engine.records, self.owner, [s.name for s in self.sources], ttl=ttl,
                                   share=self.engine.records.postgres, keep=self._reading)

    @property
    def _source_ttl(self) -> float:
        """How long a source lease lasts: on SQLite the data dir's lease decides, and a source's
        lease only fences; on PostgreSQL INCIDENTIQ_SOURCE_LEASE_SECONDS."""
        return self.source_lease if self.engine.records.postgres else self.lease_ttl

    def _read_and_store(self, report: PollReport, source: Source) -> None:
        """Read the source in batches of INCIDENTIQ_POLL_BATCH_LINES, at most INCIDENTIQ_POLL_MAX_LINES
        a poll (batches grow while the source has more ready: BATCH_GROWTH); after each stored batch
        the runs of the incidents it opened start, before the next batch is read, so a backlog being
        read never keeps its first incidents from the reviewer. The cursor is read and advanced
        under the source's lease (a batch stored after it was taken over is refused: LeaseLost)."""
        settings = self.engine.settings
        self._reading = source.name
        cursor_key = f"source:{source.name}"
        cursor = stored = self.engine.records.cursor(cursor_key)
        # lines read before and held until their burst settles (INCIDENTIQ_SETTLE_SECONDS): read on after
        # them while the stored cursor is the one they follow, else they are read again from it
        # (a tail's: a file source's, `settles`; by its own clock)
        settles = getattr(source, "settles", False)  # a file source: it has a clock too
        settler = self._settlers.setdefault(source.name, settler_for(
            settings.settle_seconds, clock=source.clock) if settles else None)  # type: ignore[attr-defined]
        cursor = settler.follow(stored) if settler is not None else cursor
        lines = 0
        # the source's configured batch size (INCIDENTIQ_POLL_BATCH_LINES as composition.py opens it),
        # noted on its first read: a batch grown while it was behind is not the next poll's start
        size: int | None = self._batch_lines.setdefault(source.name, getattr(source, "batch_lines", None))
        largest = min(size * BATCH_GROWTH, max(settings.poll_max_lines, size)) if size else None
        while True:
            if size and largest:  # a source that sizes its batches (Source)
                source.batch_lines = size  # type: ignore[attr-defined]  # not every Source has one
            batch = source.read(cursor)
            size = min(2 * size, largest) if size and largest else size
            for items, covered in (settler.offer(batch.items, batch.cursor, more=batch.more, final=False, base=stored)
                                   if settler is not None else [(batch.items, batch.cursor)]):
                if not items and covered is None:
                    continue
                fence = (source.name, self.owner, self.held[source.name])
                # events, dead letters and the cursor that covers them: one transaction
                counts = self.engine.incidents.store_batch(
                    items, cursor=(cursor_key, covered) if covered is not None else None, fence=fence)
                stored = covered if covered is not None else stored
                report.counts.add(counts)
                self._start_runs(report, sorted(counts.incidents_new))
            if batch.cursor is not None:
                cursor = batch.cursor
            lines += len(batch.items)
            report.lag_seconds, report.more = batch.lag_seconds, batch.more
            report.lines_behind, report.bytes_behind = batch.lines_behind, batch.bytes_behind
            if not batch.more or lines >= settings.poll_max_lines or not self._keep_going():
                return

    def _start_runs(self, report: PollReport, incident_ids: list[str]) -> None:
        """The first runs of a batch's new incidents, to the approval pause (or their failure)."""
        for incident_id in incident_ids:
            if not self._keep_going():
                return
            self._advance(report, incident_id)

    def _advance_incidents(self, report: PollReport, *, more: bool) -> None:
        engine = self.engine
        delay = engine.settings.merge_delay * (BEHIND_MERGE_DELAYS if more else 1)
        # due work in bounded batches (store/due.py): the next batch is read once this one is worked
        for incident_id in due.due_incidents(engine.records, merge_delay=delay):
            if not self._keep_going():
                return
            self._advance(report, incident_id)

    def _advance(self, report: PollReport, incident_id: str) -> None:
        kind = runner.advance_run(self.engine, incident_id)
        if kind in ("started", "resumed", "merged", "retried"):
            setattr(report, f"runs_{kind}", getattr(report, f"runs_{kind}") + 1)
        elif kind == "counted":
            report.repeats_counted += 1
        # the status alone: `incident` would decompress and parse the summary after every run and count
        if kind is not None and self.engine.records.incident_fields(incident_id, "status")["status"] == "failed":
            report.runs_failed += 1

    def _index_evidence(self) -> None:
        """Once the source is caught up: index the evidence of the incidents opened since the last
        time (one batch), so opening an incident never pays for it (review/related.py)."""
        if self._related is None:
            self._related = RelatedIncidents(records=self.engine.records, settings=self.engine.settings,
                                             embedder=self.engine.kb.embedder)
        try:
            self._related.catch_up(batches=1)
        except StorageError as exc:
            # the related-incidents index is a convenience: its failure never fails ingestion
            sys.stderr.write(f"evidence index not caught up: {exc.message}\n")

    def _keep_going(self) -> bool:
        """Between batches and runs: stop when asked, and keep the leases fresh (the data dir's, if
        this poller holds it, and its sources': the one being read must still be ours)."""
        if self._stop.is_set():
            return False
        records = self.engine.records
        if self._housekeeper and not lease.held(records, self.owner):
            return False  # PostgreSQL dropped our session, and the lock with it: take it again next poll
        if time.monotonic() - self._renewed_at > min(self.lease_ttl, self._source_ttl) / 3:
            if self._housekeeper and not lease.acquire(records, self.owner, source=self.label, ttl=self.lease_ttl):
                return False  # taken over (we were thought dead): let the new owner work
            self.held = self._claim(self._source_ttl)
            self._renewed_at = time.monotonic()
        return self._reading is None or self._reading in self.held

    def next_delay(self, report: PollReport) -> float:
        """Seconds until the next poll: at once when the source has more, backoff after errors."""
        if report.error:
            return min(self.max_backoff, self.interval * 2 ** self.failures)
        if report.more:
            return 0.0
        return self.interval

    def _set_state(self, state: str, *, next_in: float = 0.0, error: str | None = None) -> None:
        self.state = state
        poll_record.set_poller_state(self.engine.records, owner=self.owner, source=self.label, state=state,
                                     stale_after=next_in + self.lease_ttl,
                                     next_poll_at=self.engine.records.clock.now() + timedelta(seconds=next_in), error=error)

    def _prune_now_and_then(self) -> None:
        if time.monotonic() - self._pruned_at > PRUNE_EVERY_SECONDS:
            poll_record.prune(self.engine.records)
            retention.prune(self.engine, limit=PRUNE_BATCH, full_vacuum=False)  # bounded: runs wait meanwhile
            self._pruned_at = time.monotonic()

    # -- the loop ------------------------------------------------------------------------
    def run_forever(self, stop_event: threading.Event | None = None, *,
                    on_report: Callable[[PollReport], None] | None = None) -> None:
        """Poll until `stop_event` is set; errors of ours are recorded and retried with backoff.

        Anything else is a bug: it is recorded as `crashed` with its message and raised, so it
        shows on the operations page and in the log instead of being retried forever.
        """
        self._stop = stop_event or self._stop
        try:
            while not self._stop.is_set():
                report = self._poll_guarded()
                self._after_poll(report)
                self.polled.set()
                if on_report is not None:
                    on_report(report)
                delay = self.interval if report.standby else self.next_delay(report)
                self._stop.wait(delay)
        finally:
            self._finish(sys.exc_info()[1])

    def _poll_guarded(self) -> PollReport:
        """The loop boundary: a poll whose own bookkeeping failed (the store is locked or
        broken) is still a failed poll to retry, not the end of the poller."""
        try:
            return self._poll()[0]
        except IncidentIQError as exc:
            self.failures += 1
            report = PollReport(source=self.label, error=f"{type(exc).__name__}: {exc.message}"[:1000])
            try:
                self._set_state("error", next_in=self.next_delay(report), error=report.error)
            except IncidentIQError:
                pass  # the store is what failed; the next poll tries again
            return report

    def run_supervised(self, stop_event: threading.Event | None = None, *,
                       on_report: Callable[[PollReport], None] | None = None) -> None:
        """`run_forever`, restarted with backoff whenever a bug ends it: the crash is recorded
        (state `crashed`, its error) and counted in `restarts`, and polling goes on, so one bad
        input or a dependency's surprise cannot stop ingestion for good."""
        self._stop = stop_event or self._stop
        while not self._stop.is_set():
            try:
                self.run_forever(self._stop, on_report=on_report)
            except Exception as exc:  # noqa: BLE001 - run_forever recorded it; this loop only restarts
                self.restarts += 1
                self.last_crash = f"{type(exc).__name__}: {exc}"[:1000]
                delay = min(self.max_backoff, self.interval * 2 ** min(self.restarts, 10))
                # said where its operator looks (the terminal of `poll`, the web app's log), with
                # the traceback a bug report needs: a crash recorded only in a row went unseen
                sys.stderr.write(f"poller crashed ({self.last_crash}); restarting in {delay:g}s\n")
                traceback.print_exception(exc, file=sys.stderr)
                self._stop.wait(delay)

    def ensure_running(self) -> bool:
        """Restart the background thread if it ended without being asked to; True if it did."""
        if self._thread is None or self._thread.is_alive() or self._stop.is_set():
            return False
        self.restarts += 1
        self.last_crash = self.last_crash or "the poller thread ended"
        self.start()
        return True

    def _finish(self, exc: BaseException | None) -> None:
        """Release the lease and record how the loop ended."""
        crashed = exc is not None and not isinstance(exc, (KeyboardInterrupt, SystemExit))
        error = f"{type(exc).__name__}: {exc}"[:1000] if crashed else None
        self.deliveries.stop()
        try:
            self._release()
            self._set_state("crashed" if crashed else "stopped", error=error)
        except IncidentIQError:
            pass  # the store is unusable; the lease expires, or dies with this process

    def close(self) -> None:
        """After `poll_once` calls: deliver what is due (for at most the sender's deadline in
        all; the rest waits in the outbox), give up the lease and record the poller as stopped."""
        self.deliveries.stop()
        until = time.monotonic() + self.deliveries.deadline
        try:
            sender.deliver_due(self.engine.records, deadline=self.deliveries.deadline,
                               keep_going=lambda: time.monotonic() < until)
        finally:
            self._release()
        self._set_state("stopped")

    def _release(self) -> None:
        """Give back the data dir's lease and the sources: the others take them at their next poll."""
        lease.release(self.engine.records, self.owner)
        if self.held or self.engine.records.postgres:
            source_leases.release(self.engine.records, self.owner)
        self.held = {}

    # -- background thread (web app) -----------------------------------------------------
    def start(self) -> None:
        """Run the loop in a daemon thread (it never touches Streamlit); idempotent."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self.run_supervised, args=(self._stop,),
                                        name=f"incidentiq-poller-{self.label}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = 30.0) -> bool:
        """Ask the loop to stop after the current step and wait; True once it has stopped."""
        self._stop.set()
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def alive(self) -> bool:
        """Whether the background thread runs."""
        return self._thread is not None and self._thread.is_alive()

