"""The backtests' SQL (migration 8): a backtest's row (candidate, selection, status) and one result
row per incident it analysed. A backtest is `running` while a worker holds it, `stopped` once its
worker let it go unfinished (cancelled, Ctrl-C) or died (read as `stopped`: no live worker), and
`done`; a stopped one is resumed by claiming it again. Results are keyed by (backtest, incident) and inserted with ON
CONFLICT DO NOTHING, so a resumed or concurrent worker never writes an incident twice. Nothing here reads or
writes an incident's live rows."""
from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Iterable

from pipeline.clock import iso
from pipeline.errors import BacktestNotFound
from pipeline.store.owners import owner_alive
from pipeline.store.records import Records
from pipeline.store.sql import Params, Row, placeholders

RESULT_COLUMNS = ("incident_id", "checkpoint_id", "outcome", "human_decision", "human_edit", "human_category",
                  "old_category", "new_category", "old_confidence", "new_confidence", "old_root_cause",
                  "new_root_cause", "old_proposal_hash", "new_proposal_hash", "skipped", "old_fix", "new_fix")
_JSON_COLUMNS = ("human_decision", "human_edit", "old_fix", "new_fix")


def select_incidents(records: Records, *, statuses: Iterable[str], since: datetime | None,
                     limit: int | None) -> list[str]:
    """The incidents a backtest analyses: by status, opened since `since`, oldest first."""
    p = Params()
    sql = f"SELECT incident_id FROM incidents WHERE status IN ({p.each(statuses)})"
    if since is not None:
        sql += f" AND created_at >= {p(iso(since))}"
    sql += " ORDER BY created_at, incident_id"
    if limit is not None:
        sql += f" LIMIT {p(int(limit))}"
    return [r["incident_id"] for r in records.query(sql, p)]


def decided_incidents(records: Records, *, since: datetime | None = None) -> list[str]:
    """Incidents a person decided (approved, fix proposed or rejected), oldest decision first."""
    p = Params()
    sql = "SELECT incident_id FROM incidents WHERE status IN ('approved', 'fix_proposed', 'rejected')"
    if since is not None:
        sql += f" AND closed_at >= {p(iso(since))}"
    sql += " ORDER BY closed_at, incident_id"
    return [r["incident_id"] for r in records.query(sql, p)]


def create(records: Records, *, backtest_id: str, candidate: str, candidate_key: str, selection: list[str],
           owner: str) -> None:
    with records.transaction() as conn:
        conn.execute("INSERT INTO backtests(backtest_id, candidate, candidate_key, selection, total, started_at,"
                     " status, owner) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)",
                     (backtest_id, candidate, candidate_key, json.dumps(selection), len(selection),
                      iso(records.clock.now()), "running", owner))


UNFINISHED = ("running", "stopped")


def claim_unfinished(records: Records, *, candidate_key: str, owner: str, backtest_id: str | None = None) -> dict[str, Any] | None:
    """Take over an unfinished backtest (by id, or the newest of the same candidate and selection)
    whose worker is gone, `running` again; None when there is none free. Compare-and-set in one
    transaction, so two workers never take the same one."""
    with records.transaction() as conn:
        if backtest_id is not None:
            rows = conn.execute("SELECT * FROM backtests WHERE backtest_id = $1", (backtest_id,)).fetchall()
            if not rows:
                raise BacktestNotFound(backtest_id)
        else:
            rows = conn.execute("SELECT * FROM backtests WHERE candidate_key = $1 AND status IN ($2, $3)"
                                " ORDER BY started_at DESC", (candidate_key, *UNFINISHED)).fetchall()
        for row in rows:
            if row["status"] not in UNFINISHED:
                continue
            if row["owner"] and row["owner"] != owner and owner_alive(row["owner"]):
                continue
            conn.execute("UPDATE backtests SET owner = $1, status = 'running' WHERE backtest_id = $2",
                         (owner, row["backtest_id"]))
            return _backtest(row)
        return None


def add_result(records: Records, backtest_id: str, result: dict[str, Any]) -> bool:
    """Record one incident's result; False when the backtest already has it."""
    values = [json.dumps(result.get(c) or {}) if c in _JSON_COLUMNS else result.get(c) for c in RESULT_COLUMNS]
    with records.transaction() as conn:
        cur = conn.execute(f"INSERT INTO backtest_results(backtest_id, {', '.join(RESULT_COLUMNS)}, created_at)"
                           f" VALUES ({placeholders(len(RESULT_COLUMNS) + 2)}) ON CONFLICT DO NOTHING",
                           (backtest_id, *values, iso(records.clock.now())))
        return cur.rowcount == 1


def done_ids(records: Records, backtest_id: str) -> set[str]:
    return {r["incident_id"] for r in records.query("SELECT incident_id FROM backtest_results WHERE backtest_id = $1",
                                                    (backtest_id,))}


def finish(records: Records, backtest_id: str, owner: str) -> None:
    with records.transaction() as conn:
        conn.execute("UPDATE backtests SET status = 'done', finished_at = $1, owner = NULL"
                     " WHERE backtest_id = $2 AND owner = $3", (iso(records.clock.now()), backtest_id, owner))


def release(records: Records, backtest_id: str, owner: str) -> None:
    """Let another worker resume it: an interrupted run is `stopped`, and says so to any reader."""
    with records.transaction() as conn:
        conn.execute("UPDATE backtests SET owner = NULL, status = 'stopped' WHERE backtest_id = $1 AND owner = $2",
                     (backtest_id, owner))


def backtest(records: Records, backtest_id: str) -> dict[str, Any]:
    rows = records.query("SELECT * FROM backtests WHERE backtest_id = $1", (backtest_id,))
    if not rows:
        raise BacktestNotFound(backtest_id)
    out = _backtest(rows[0])
    out["status"] = _status(out["status"], out["owner"])
    out["done"] = records.query("SELECT count(*) AS n FROM backtest_results WHERE backtest_id = $1",
                                (backtest_id,))[0]["n"]
    return out


def backtests(records: Records, *, limit: int = 50) -> list[dict[str, Any]]:
    """Backtests newest first, with how many incidents each has done and whether its worker still
    runs (`working`; no selection lists)."""
    rows = records.query("SELECT b.backtest_id, b.candidate, b.total, b.started_at, b.finished_at, b.status, b.owner,"
                         " (SELECT count(*) FROM backtest_results r WHERE r.backtest_id = b.backtest_id) AS done"
                         " FROM backtests b ORDER BY b.started_at DESC, b.backtest_id DESC LIMIT $1", (int(limit),))
    out = []
    for r in rows:
        row = dict(r)
        owner = row.pop("owner")
        row["status"] = _status(row["status"], owner)
        row["working"] = row["status"] == "running"
        out.append(row)
    return out


def owner_of(records: Records, backtest_id: str) -> str | None:
    """The worker holding a backtest (None: finished, or released for another to resume)."""
    rows = records.query("SELECT owner FROM backtests WHERE backtest_id = $1", (backtest_id,))
    if not rows:
        raise BacktestNotFound(backtest_id)
    owner = rows[0]["owner"]
    return str(owner) if owner else None


def results(records: Records, backtest_id: str) -> list[dict[str, Any]]:
    # with the incident's title (None once retention removed it) for a reviewer choosing one
    rows = records.query(f"SELECT {', '.join('r.' + c for c in RESULT_COLUMNS)}, r.created_at, i.title"
                         " FROM backtest_results r LEFT JOIN incidents i ON i.incident_id = r.incident_id"
                         " WHERE r.backtest_id = $1 ORDER BY r.incident_id", (backtest_id,))
    out = []
    for r in rows:
        row = dict(r)
        for c in _JSON_COLUMNS:
            row[c] = json.loads(row[c]) if row[c] else {}
        out.append(row)
    return out


def prune_before(records: Records, cutoff: datetime) -> int:
    """Delete backtests started before `cutoff` (finished or abandoned) with their results."""
    with records.transaction() as conn:
        old = [r["backtest_id"] for r in conn.execute("SELECT backtest_id, owner, status FROM backtests"
                                                     " WHERE started_at < $1", (iso(cutoff),)).fetchall()
               if r["status"] != "running" or not (r["owner"] and owner_alive(r["owner"]))]
        for backtest_id in old:
            conn.execute("DELETE FROM backtest_results WHERE backtest_id = $1", (backtest_id,))
            conn.execute("DELETE FROM backtest_judgments WHERE backtest_id = $1", (backtest_id,))
            conn.execute("DELETE FROM backtests WHERE backtest_id = $1", (backtest_id,))
        return len(old)


def _status(stored: str, owner: str | None) -> str:
    """A backtest's status as a reader should see it: one still marked `running` whose worker died
    without letting it go (killed) is stopped."""
    if stored == "running" and not (owner and owner_alive(owner)):
        return "stopped"
    return stored


def _backtest(row: Row) -> dict[str, Any]:
    out = dict(row)
    out["selection"] = json.loads(out["selection"])
    return out

