"""Delivers the outbox: POST each due row to its target, mark it sent, or retry with backoff.

At-least-once: a row is taken before the POST and marked sent after the target answered 2xx; a
sender that dies in between leaves it taken by a dead owner, and the next delivery sends it
again, with the same `Idempotency-Key` header and the same `ref` in the text. Errors are
recorded as the target's host and the HTTP status or error class, never the URL.

Each POST has httpx's timeouts (per connect and per read) and an overall wall-clock deadline:
a target that answers a byte at a time never gets a read timeout, so the request is cancelled
when the deadline passes and retried later like any failure. The poller never calls this on its
own thread: `pipeline/unattended/delivery.py` runs it.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Callable

import httpx

from pipeline.notifications.targets import Target, targets as configured_targets
from pipeline.store import outbox
from pipeline.store.owners import process_owner
from pipeline.store.records import Records

TIMEOUT_SECONDS = 5.0
# the whole request (connect, send, every read of the answer): a tarpit cannot hold it longer
DEADLINE_SECONDS = 2 * TIMEOUT_SECONDS
MAX_ATTEMPTS = 8
FIRST_BACKOFF_SECONDS = 30.0
MAX_BACKOFF_SECONDS = 3600.0
# a row `sending` for longer than this under a live sender is taken over (the sender hung)
STALE_AFTER_SECONDS = 4 * TIMEOUT_SECONDS


@dataclass
class Delivery:
    sent: int = 0
    failed: int = 0
    given_up: int = 0
    dropped: int = 0
    errors: list[str] = field(default_factory=list)


def backoff(attempts: int, first: float = FIRST_BACKOFF_SECONDS) -> float:
    """Seconds before the next try after `attempts` failed ones (`first` after the first)."""
    return min(MAX_BACKOFF_SECONDS, first * 2 ** max(0, attempts - 1))


def deliver_due(records: Records, *, targets: list[Target] | None = None, owner: str | None = None,
                limit: int = 20, timeout: float = TIMEOUT_SECONDS, deadline: float = DEADLINE_SECONDS,
                keep_going: Callable[[], bool] | None = None,
                first_backoff: float = FIRST_BACKOFF_SECONDS) -> Delivery:
    """Send what is due now (at most `limit` rows, each POST within `deadline` seconds), while
    `keep_going()` says so; see the module docstring."""
    report = Delivery()
    rows = outbox.due(records, limit=limit, stale_after=STALE_AFTER_SECONDS)
    if not rows:
        return report
    by_id = {t.id: t for t in (configured_targets() if targets is None else targets)}
    owner = owner or process_owner()
    for row in rows:
        if keep_going is not None and not keep_going():
            break
        target = by_id.get(row["target_id"])
        if target is None:
            outbox.drop(records, row["id"], reason=f"{row['target_host']}: no longer in INCIDENTIQ_NOTIFY_URLS")
            report.dropped += 1
            continue
        if not outbox.take(records, row["id"], owner=owner, stale_after=STALE_AFTER_SECONDS):
            continue
        error = _post(target, row, timeout=timeout, deadline=deadline)
        if error is None:
            outbox.mark_sent(records, row["id"], owner=owner)
            report.sent += 1
            continue
        attempts = row["attempts"] + 1
        retry_at = records.clock.now() + timedelta(seconds=backoff(attempts, first_backoff)) if attempts < MAX_ATTEMPTS else None
        outbox.mark_failed(records, row["id"], owner=owner, error=error, retry_at=retry_at)
        report.errors.append(error)
        if retry_at is None:
            report.given_up += 1
        else:
            report.failed += 1
    return report


def _post(target: Target, row: dict, *, timeout: float, deadline: float) -> str | None:
    """POST one row within `deadline` seconds; None when the target took it, else an error
    naming only the host."""
    async def send() -> httpx.Response:
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client:
            return await asyncio.wait_for(
                client.post(target.url, json=row["payload"], headers={"Idempotency-Key": row["idempotency_key"]}),
                deadline)

    try:
        response = asyncio.run(send())
    except (TimeoutError, asyncio.TimeoutError):
        return f"{target.host}: no answer within {deadline:g} s"
    except httpx.HTTPError as exc:  # str(exc) may hold the URL: keep only the kind of failure
        return f"{target.host}: {type(exc).__name__}"
    if 200 <= response.status_code < 300:
        return None
    return f"{target.host}: HTTP {response.status_code}"
