"""The outbox's delivery thread: the poller wakes it after each poll and never waits on it.

A webhook that answers slowly (or a byte at a time) holds this thread for at most the sender's
deadline per row; the poll loop goes on reading lines and running incidents meanwhile. Failed
rows wait in the outbox for their backoff (`sender.backoff`); the thread looks again every
`idle_seconds`, so a retry falls due without a poll.
"""
from __future__ import annotations

import threading

from pipeline.errors import IncidentIQError
from pipeline.notifications import sender
from pipeline.notifications.targets import Target
from pipeline.store.records import Records


class DeliveryWorker:
    """Drains the outbox on its own daemon thread, started on the first `wake()`."""

    def __init__(self, records: Records, *, idle_seconds: float = 1.0, deadline: float = sender.DEADLINE_SECONDS,
                 timeout: float = sender.TIMEOUT_SECONDS, targets: list[Target] | None = None,
                 first_backoff: float = sender.FIRST_BACKOFF_SECONDS):
        self.records = records
        self.idle_seconds = idle_seconds
        self.deadline = deadline
        self.timeout = timeout
        self.targets = targets
        self.first_backoff = first_backoff
        self.last: sender.Delivery | None = None
        self.last_error: str | None = None
        self.passes = 0
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def wake(self) -> None:
        """Deliver what is due soon, on the worker's thread (started if it is not running)."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._stop = threading.Event()
                self._thread = threading.Thread(target=self._run, name="incidentiq-deliveries", daemon=True)
                self._thread.start()
        self._wake.set()

    def stop(self, timeout: float | None = None) -> bool:
        """Stop after the row in flight (at most one deadline); True once the thread has ended."""
        self._stop.set()
        self._wake.set()
        thread = self._thread
        if thread is None:
            return True
        thread.join(self.deadline + 1.0 if timeout is None else timeout)
        return not thread.is_alive()

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        stop = self._stop
        while not stop.is_set():
            self._wake.wait(self.idle_seconds)
            self._wake.clear()
            if stop.is_set():
                return
            try:
                self.last = sender.deliver_due(self.records, targets=self.targets, timeout=self.timeout,
                                               deadline=self.deadline, keep_going=lambda: not stop.is_set(),
                                               first_backoff=self.first_backoff)
                self.last_error = None
            except IncidentIQError as exc:  # the store is busy or broken: the rows wait, try again
                self.last_error = f"{type(exc).__name__}: {exc.message}"[:1000]
            self.passes += 1
