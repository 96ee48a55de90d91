"""What the pollers did, as the Operations page reads it: each poller's state and heartbeat, per-source
counters and one row per poll (written by the poller: unattended/poll_record.py; tables and SQL:
store/poller_rows.py). Counters live in the records store, not in memory, so they survive restarts
and every process sees the same numbers.
"""
from __future__ import annotations

from datetime import datetime

from pipeline.store import lease, source_leases
from pipeline.store import poller_rows as store
from pipeline.store.poller_rows import COUNTERS
from pipeline.store.owners import owner_alive
from pipeline.clock import parse_iso
from pipeline.store.records import Records

SERIES_LIMIT = 5_000
RECENT_GONE = 5  # pollers that stopped or died, listed after the live ones


def poller_status(records: Records) -> list[dict]:
    """Per source: state (running / standby / error / stopped), last poll, lag, last error,
    counters and latency, with the pollers behind it (each `running`, `standby`, `error`,
    `stopped`, `crashed`, or `gone`: not live, its row left as it was). Sources polled most
    recently first. `held_by`: the poller holding the source's lease (store/source_leases.py), if live."""
    stamp = records.clock.now()
    holder = lease.holder(records)
    leases = {row["source"]: row for row in source_leases.holders(records)}
    stats = store.source_stats(records)
    pollers: dict[str, list[dict]] = {}
    for p in store.pollers(records):
        p["live"] = (p["state"] not in ("stopped", "crashed") and parse_iso(p["stale_after"]) > stamp
                     and owner_alive(p["owner"]))
        if not p["live"] and p["state"] not in ("stopped", "crashed"):
            # its row says what it was doing when it last wrote; its process is gone (SIGKILL, a
            # lost machine) or its heartbeat is past due: it is not running, whatever the row says
            p["state"] = "gone"
        p["holds_lease"] = bool(holder and holder["live"] and holder["owner"] == p["owner"])
        # a poller of several sources is named by them all (`a;b`): it is listed under each
        label = p["source"]
        for name in ([label] if label in stats or label in leases or ";" not in label else label.split(";")):
            pollers.setdefault(name, []).append(p)
    result = []
    for source in sorted(set(stats) | set(pollers), key=lambda s: (stats.get(s, {}).get("last_poll_at") or ""),
                         reverse=True):
        row = stats.get(source) or {"source": source, **{c: 0 for c in COUNTERS}, "consecutive_errors": 0,
                                    "last_poll_at": None, "last_ok_at": None, "last_latency_ms": None,
                                    "lag_seconds": None, "lines_behind": None, "bytes_behind": None,
                                    "last_error": None, "last_error_at": None}
        mine = pollers.get(source, [])
        leased = leases.get(source)
        held_by = leased["holder"] if leased and leased["live"] else None
        working = [p for p in mine if p["live"] and (p["owner"] == held_by if leased else p["holds_lease"])]
        if working:
            state = "error" if working[0]["state"] == "error" else "running"
        elif any(p["live"] and p["state"] == "standby" for p in mine):
            state = "standby"
        elif any(p["state"] == "crashed" for p in mine[:1]):
            state = "error"
            if mine[0]["last_error_at"] and mine[0]["last_error_at"] > (row["last_error_at"] or ""):
                # why it crashed (the crash ended the poll before its report was recorded)
                row = {**row, "last_error": mine[0]["last_error"], "last_error_at": mine[0]["last_error_at"]}
        else:
            state = "stopped"
        newest = working[0] if working else (mine[0] if mine else None)
        result.append({
            **row,
            "state": state,
            "owner": newest["owner"] if newest else None,
            "next_poll_at": newest["next_poll_at"] if newest and newest["live"] else None,
            "latency_ms": row["last_latency_ms"],
            "lease": holder if holder and holder["source"] == source else None,
            "held_by": held_by,
            "pollers": [{k: p[k] for k in ("owner", "state", "started_at", "heartbeat_at", "live", "holds_lease",
                                           "last_error", "last_error_at")}
                        for p in [p for p in mine if p["live"]] + [p for p in mine if not p["live"]][:RECENT_GONE]],
        })
    return result


def metrics_series(records: Records, since: datetime | None = None, *, source: str | None = None,
                   limit: int = SERIES_LIMIT) -> list[dict]:
    """One row per poll, oldest first (the newest `limit` rows since `since`), for the charts."""
    return store.poll_series(records, since, source=source, limit=limit)
