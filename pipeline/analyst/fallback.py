"""The model analyst with a circuit breaker and the offline analyst behind it, so an endpoint that
is down, slow or answers garbage never keeps incidents from reviewers.

Every failed model call (an AnalystError: HTTP errors, timeouts, refusals, invalid answers) is
answered by the offline analyst instead, and its RCA says so in `analyst`
("offline (model unavailable: <reason>)"). After `failures` consecutive failed calls the breaker
opens: for `cooldown` seconds the model is not called at all (no timeouts paid per incident);
then one call tries it again, and a success closes the breaker. The breaker's state is in memory,
per process (the web app and a CLI poller each keep their own); a restart closes it.
"""
from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Callable, TypeVar

from pipeline.analyst.model import ModelAnalyst
from pipeline.analyst.offline import OfflineAnalyst
from pipeline.clock import Clock, SystemClock
from pipeline.errors import AnalystError
from pipeline.redaction import redact
from pipeline.state import RCA, IncidentState, Recommendation

DEFAULT_FAILURES = 3
DEFAULT_COOLDOWN = 60.0
T = TypeVar("T")


class Breaker:
    """Consecutive failures open it for a cool-down; the first call after the cool-down tries again."""

    def __init__(self, *, failures: int = DEFAULT_FAILURES, cooldown: float = DEFAULT_COOLDOWN,
                 clock: Clock | None = None):
        self.failures = failures
        self.cooldown = cooldown
        self.clock: Clock = clock or SystemClock()
        self.consecutive = 0
        self.open_until: datetime | None = None
        self.last_reason: str | None = None
        self._lock = threading.Lock()  # the poller thread and a reviewer's action share one analyst

    def skip_reason(self) -> str | None:
        """Why the model is skipped now, or None when it may be called."""
        with self._lock:
            if self.open_until is not None and self.clock.now() < self.open_until:
                return (f"skipped for {self.cooldown:g}s after {self.consecutive} failed calls;"
                        f" last: {self.last_reason}")
            return None

    def failed(self, reason: str) -> None:
        with self._lock:
            self.consecutive += 1
            self.last_reason = reason
            if self.consecutive >= self.failures:
                self.open_until = self.clock.now() + timedelta(seconds=self.cooldown)

    def succeeded(self) -> None:
        with self._lock:
            self.consecutive, self.open_until, self.last_reason = 0, None, None

    @property
    def is_open(self) -> bool:
        return self.skip_reason() is not None


class FallbackModelAnalyst(ModelAnalyst):
    """ModelAnalyst whose failures are answered by the offline analyst; see the module docstring."""

    def __init__(self, *, breaker: Breaker | None = None, **model_args):
        super().__init__(**model_args)
        self.breaker = breaker or Breaker()
        self.offline = OfflineAnalyst(self.kb)

    def rca(self, state: IncidentState) -> RCA:
        result, reason = self._guarded(lambda: super(FallbackModelAnalyst, self).rca(state),
                                       lambda: self.offline.rca(state))
        if reason is not None:
            result = result.model_copy(update={"analyst": f"offline (model unavailable: {reason})"})
        return result

    def recommend(self, state: IncidentState, *, feedback: str | None = None) -> Recommendation:
        return self._guarded(lambda: super(FallbackModelAnalyst, self).recommend(state, feedback=feedback),
                             lambda: self.offline.recommend(state, feedback=feedback))[0]

    def fix_plan(self, state: IncidentState) -> list[str]:
        return self._guarded(lambda: super(FallbackModelAnalyst, self).fix_plan(state),
                             lambda: self.offline.fix_plan(state))[0]

    def _guarded(self, model_call: Callable[[], T], offline_call: Callable[[], T]) -> tuple[T, str | None]:
        """The model's answer, or the offline one and why the model gave none."""
        reason = self.breaker.skip_reason()
        if reason is None:
            try:
                answer = model_call()
            except AnalystError as exc:
                reason = redact(exc.message)
                self.breaker.failed(reason)
            else:
                self.breaker.succeeded()
                return answer, None
        return offline_call(), reason
