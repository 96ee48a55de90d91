"""Source leases: several pollers (processes, machines) share a data dir's sources (issue 37.6).

Each configured source is leased to one poller at a time: a row of `source_leases` names its
holder, when its lease expires and its generation. The holder renews it as it polls; another
poller takes it once it expired, was released, or its holder's process is gone (same host), and
taking it raises the generation. The cursor of a source is read and advanced only under its lease:
`Incidents.store_batch` writes the cursor only where the lease's row still names the holder at the
generation it took (`fence`; store/incident_rows.py `save_cursor`), so a holder that was thought
dead and taken over has its whole batch refused (`LeaseLost`, the transaction rolls back) and the
new holder reads those lines again from the cursor: nothing is lost or stored twice.

Balance: every poller keeps a heartbeat row in `source_workers` (it expires with the lease); a
poller takes at most ceil(sources / live pollers) and gives back what it holds beyond that at its
next renewal, so a poller that starts gets its share within one renewal of the others. On SQLite
one process works the data dir (lease.py) and takes every source (`share=False`): as before.
"""
from __future__ import annotations

import math
from datetime import timedelta
from typing import Any, Sequence

from pipeline.clock import iso, parse_iso
from pipeline.store.owners import owner_alive
from pipeline.store.records import Records
from pipeline.store.sql import Params

Fence = tuple[str, str, int]  # (source, holder, generation): what a holder's cursor write must still find


def claim(records: Records, owner: str, sources: Sequence[str], *, ttl: float, share: bool,
          keep: str | None = None) -> dict[str, int]:
    """Renew `owner`'s heartbeat and its leases, give back what it holds beyond its share, take free
    or expired sources up to it; returns the sources it holds now, each with its generation.
    `keep` (the source being read) is the last one given back."""
    now = records.clock.now()
    stamp, until = iso(now), iso(now + timedelta(seconds=ttl))
    order = {name: i for i, name in enumerate(sources)}
    with records.transaction() as conn:
        conn.execute("INSERT INTO source_workers(owner, renewed_at, expires_at) VALUES ($1,$2,$3)"
                     " ON CONFLICT(owner) DO UPDATE SET renewed_at = excluded.renewed_at,"
                     " expires_at = excluded.expires_at", (owner, stamp, until))
        for name in sources:
            conn.execute("INSERT INTO source_leases(source) VALUES ($1) ON CONFLICT DO NOTHING", (name,))
        p = Params()
        marks = ", ".join(p(name) for name in sources)
        rows = [dict(r) for r in conn.execute(
            f"SELECT source, holder, generation, expires_at FROM source_leases WHERE source IN ({marks})", p).fetchall()]
        quota = len(sources)
        if share:
            workers = conn.execute("SELECT owner FROM source_workers WHERE expires_at > $1", (stamp,)).fetchall()
            live = sum(1 for w in workers if w["owner"] == owner or owner_alive(w["owner"]))
            quota = math.ceil(len(sources) / max(1, live))
        rows.sort(key=lambda r: order[r["source"]])
        mine = sorted((r for r in rows if r["holder"] == owner), key=lambda r: r["source"] != keep)
        held: dict[str, int] = {}
        for row in mine:
            if len(held) < quota:
                conn.execute("UPDATE source_leases SET renewed_at = $1, expires_at = $2"
                             " WHERE source = $3 AND holder = $4", (stamp, until, row["source"], owner))
                held[row["source"]] = int(row["generation"])
            else:  # beyond our share: a poller that started since takes it
                conn.execute("UPDATE source_leases SET holder = NULL, expires_at = NULL"
                             " WHERE source = $1 AND holder = $2", (row["source"], owner))
        for row in rows:
            if len(held) >= quota:
                break
            if row["holder"] == owner or not _free(row, now):
                continue
            generation = int(row["generation"]) + 1
            conn.execute("UPDATE source_leases SET holder = $1, generation = $2, acquired_at = $3, renewed_at = $3,"
                         " expires_at = $4 WHERE source = $5", (owner, generation, stamp, until, row["source"]))
            held[row["source"]] = generation
        return {name: held[name] for name in sources if name in held}


def _free(row: dict[str, Any], now: Any) -> bool:
    """Whether a lease may be taken: nobody holds it, it expired, or its holder's process is gone."""
    if row["holder"] is None:
        return True
    expires_at = parse_iso(row["expires_at"]) if row["expires_at"] else None
    return expires_at is None or expires_at <= now or not owner_alive(row["holder"])


def release(records: Records, owner: str) -> None:
    """Give back every source `owner` holds and end its heartbeat (a poller that stops): the
    others take its sources at their next poll."""
    with records.transaction() as conn:
        conn.execute("UPDATE source_leases SET holder = NULL, expires_at = NULL WHERE holder = $1", (owner,))
        conn.execute("DELETE FROM source_workers WHERE owner = $1", (owner,))


def holders(records: Records) -> list[dict[str, Any]]:
    """Each leased source: its holder (None when free), generation, expiry and whether the lease is
    live now (held, unexpired, its holder's process not known gone); for status views."""
    now = records.clock.now()
    out = []
    for row in records.query("SELECT source, holder, generation, acquired_at, renewed_at, expires_at"
                             " FROM source_leases ORDER BY source"):
        item = dict(row)
        item["live"] = not _free(item, now)
        out.append(item)
    return out


def live_workers(records: Records) -> int:
    """How many pollers keep a live heartbeat (their process not known gone)."""
    stamp = iso(records.clock.now())
    rows = records.query("SELECT owner FROM source_workers WHERE expires_at > $1", (stamp,))
    return sum(1 for r in rows if owner_alive(r["owner"]))
