"""Partial approvals under the two-person rule, and the turn that decides whose approval is which.

An approval counts for one analysis: the incident's pending interrupt when it was given. New
evidence, an edit or a revision pauses the run at a new interrupt, and approvals of the old one
stop counting (they stay in the table and the audit, as history). Taking a turn is one IMMEDIATE
transaction: read the approvals so far, then either record this one as partial (with its audit
entry) or, when it completes the count, take the incident's claim for the decision, so two
reviewers approving at once are first and second, never both first.
"""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

from pipeline.clock import iso
from pipeline.errors import IncidentNotFound
from pipeline.store.owners import owner_alive
from pipeline.store.records import Records
from pipeline.store.sql import Connection, Row, placeholders


# letters that render as nothing (Hangul fillers, the braille blank) but are not format characters
_BLANK_LETTERS = dict.fromkeys(map(ord, "\u115f\u1160\u3164\uffa0\u2800"))


def person_key(ident: str) -> str:
    """What two identities are compared by: `ann` and `ANN`, `bob` and `bob` plus a zero-width space, full-width
    `ａｎｎ` and `ann` are one person (Unicode NFKC, case folded, invisible characters dropped)."""
    text = unicodedata.normalize("NFKC", str(ident)).translate(_BLANK_LETTERS)
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cf", "Cc", "Zl", "Zp"))
    return unicodedata.normalize("NFKC", text.casefold()).strip()


@dataclass
class Turn:
    """What taking a turn did: `lost` (not paused at that interrupt, or in use), `same` (this
    person already approved it), `partial` (recorded, more needed) or `complete` (claim taken)."""

    kind: str
    approvals: list[dict[str, Any]] = field(default_factory=list)


def _rows(conn: Connection, incident_id: str, interrupt_id: str) -> list[dict[str, Any]]:
    rows = conn.execute("SELECT actor_id, actor_name, auth, at FROM approvals WHERE incident_id = $1 AND interrupt_id = $2"
                        " ORDER BY at, actor_id", (incident_id, interrupt_id)).fetchall()
    return [approval(r) for r in rows]


def approval(row: Row) -> dict[str, Any]:
    return {"by": row["actor_id"], "name": row["actor_name"], "auth": row["auth"], "at": row["at"]}


def approvals_for(records: Records, incident_id: str, interrupt_id: str | None) -> list[dict[str, Any]]:
    """The approvals that count for an interrupt, oldest first."""
    if not interrupt_id:
        return []
    with records.connection() as conn:  # the store's one connection is shared: hold its lock
        return _rows(conn, incident_id, interrupt_id)


def approved_in_part(records: Records, incident_ids: list[str]) -> set[str]:
    """The incidents that have had a partial approval (of any of their analyses): the two-person
    rule held for them when an approval was first given, and no later analysis lowers it."""
    ids = sorted(set(incident_ids))
    if not ids:
        return set()
    found = records.query(f"SELECT DISTINCT incident_id FROM approvals WHERE incident_id IN ({placeholders(len(ids))})",
                          ids)
    return {r["incident_id"] for r in found}


def approvals_of(records: Records, rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """For inbox rows: incident_id -> approvals of its pending interrupt (one query per page)."""
    keys = [(r["incident_id"], r["pending_interrupt_id"]) for r in rows if r.get("pending_interrupt_id")]
    out: dict[str, list[dict[str, Any]]] = {r["incident_id"]: [] for r in rows}
    if not keys:
        return out
    ids = sorted({k[0] for k in keys})
    wanted = set(keys)
    found = records.query(f"SELECT incident_id, interrupt_id, actor_id, actor_name, auth, at FROM approvals"
                          f" WHERE incident_id IN ({placeholders(len(ids))}) ORDER BY at, actor_id", ids)
    for r in found:
        if (r["incident_id"], r["interrupt_id"]) in wanted:
            out[r["incident_id"]].append(approval(r))
    return out


def take_turn(records: Records, incident_id: str, *, interrupt_id: str, actor_id: str, actor_name: str, auth: str,
              needed: int, owner: str, set_status: str, audit: dict[str, Any]) -> Turn:
    """Count one approval of `interrupt_id` by `actor_id` (see the module docstring).

    `audit` holds add_audit's arguments for a partial approval (its before/after get the
    approvals added here); it is written in the same transaction as the approval."""
    stamp = iso(records.clock.now())
    with records.transaction() as conn:
        row = conn.execute("SELECT status, pending_interrupt_id, claim_owner FROM incidents WHERE incident_id = $1",
                           (incident_id,)).fetchone()
        if row is None:
            raise IncidentNotFound(incident_id)
        busy = row["claim_owner"] and row["claim_owner"] != owner and owner_alive(row["claim_owner"])
        if row["status"] != "awaiting_approval" or row["pending_interrupt_id"] != interrupt_id or busy:
            return Turn("lost")
        so_far = _rows(conn, incident_id, interrupt_id)
        if any(person_key(a["by"]) == person_key(actor_id) for a in so_far):
            return Turn("same", so_far)
        mine = {"by": actor_id, "name": actor_name, "auth": auth, "at": stamp}
        if len(so_far) + 1 < needed:
            conn.execute("INSERT INTO approvals(incident_id, interrupt_id, actor_id, actor_name, auth, at)"
                         " VALUES ($1,$2,$3,$4,$5,$6)", (incident_id, interrupt_id, actor_id, actor_name, auth, stamp))
            after = [*so_far, mine]
            records.add_audit(conn=conn, **{**audit,
                                            "before": {**audit.get("before", {}), "approvals": so_far},
                                            "after": {**audit.get("after", {}), "approvals": after}})
            return Turn("partial", after)
        conn.execute("UPDATE incidents SET claim_owner = $1, claimed_at = $2, status = $3 WHERE incident_id = $4",
                     (owner, stamp, set_status, incident_id))
        return Turn("complete", [*so_far, mine])
