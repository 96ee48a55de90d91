"""Backtests: a candidate analyst over past incidents, never on the live run.

Real stores, real child processes killed with SIGKILL, real concurrent processes."""
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.backtest.candidate import candidate_for
from pipeline.backtest.report import report
from pipeline.backtest.run import run_backtest
from pipeline.engine.graph import thread_config
from pipeline.review.service import ReviewService
from pipeline.store import backtests
from tests.support import BOTH_BACKENDS, ROOT, SAMPLE_REPO, cli, cli_here, cli_json, wait_for

DOCS = ROOT / "knowledge" / "docs"
LIVE_TABLES = ("incidents", "audit", "fixes", "outbox", "approvals", "comments", "events", "incident_counts")


def decided(engine) -> dict[str, str]:
    """The small fixture's incidents decided four ways; returns outcome → incident id."""
    review = ReviewService(engine)
    ids = {r["category"]: r["incident_id"] for r in engine.records.incidents(status="awaiting_approval")}
    review.approve(ids["upstream_rate_limited"], reviewer="ann")
    review.approve(ids["unknown"], reviewer="bob", edits={"rca.category": "connection_refused"})
    review.reject(ids["null_reference"], reviewer="cy", reason="a test fixture, not an outage")
    return {"approved": ids["upstream_rate_limited"], "edited": ids["unknown"], "rejected": ids["null_reference"],
            "paused": ids["db_pool_exhausted"]}


def docs_without(tmp_path: Path, *categories: str) -> Path:
    """The shipped docs minus some: a candidate that cannot name those categories."""
    out = tmp_path / "candidate-docs"
    shutil.copytree(DOCS, out)
    for c in categories:
        shutil.rmtree(out / c)
    return out


def live_rows(engine) -> dict:
    """Every live row: the records' tables and the checkpoint store's (as stored, byte for byte)."""
    rows = {t: [tuple(r) for r in engine.records.query(f"SELECT * FROM {t} ORDER BY 1")] for t in LIVE_TABLES}
    if engine.settings.database_url:
        import psycopg

        with psycopg.connect(engine.settings.database_url) as conn:
            for t in ("checkpoints", "checkpoint_writes", "checkpoint_blobs"):
                rows[t] = conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2, 3, 4").fetchall()
    else:
        with sqlite3.connect(engine.checkpoint_path) as conn:
            for t in ("checkpoints", "writes", "checkpoint_values"):
                rows[t] = conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2, 3").fetchall()
    return rows


@BOTH_BACKENDS
def test_a_backtest_changes_no_live_row_and_reports_against_the_humans(paused_engine, tmp_path):
    ids = decided(paused_engine)
    paused_interrupt = paused_engine.records.incident(ids["paused"])["pending_interrupt_id"]
    before = live_rows(paused_engine)
    candidate = candidate_for(paused_engine, docs=docs_without(tmp_path, "upstream_rate_limited"))
    run = run_backtest(paused_engine, candidate, status="all")
    assert live_rows(paused_engine) == before  # 0 changes to any inbox, audit, fix or checkpoint row
    snap = paused_engine.graph.get_state(thread_config(ids["paused"]))
    assert snap.next == ("approval",) and snap.interrupts[0].id == paused_interrupt
    rep = report(paused_engine, run.backtest_id)
    assert rep["backtest"]["status"] == "done" and rep["summary"]["analysed"] == 4
    verdicts = {d["incident_id"]: d["verdict"] for d in rep["disagreements"]}
    # the candidate lost the doc the approved analysis rested on: it now disagrees with the reviewer
    assert verdicts[ids["approved"]] == "changes_approved"
    changed = next(d for d in rep["disagreements"] if d["incident_id"] == ids["approved"])
    assert (changed["old_category"], changed["new_category"]) == ("upstream_rate_limited", "unknown")
    assert changed["human_decision"]["reviewer"] == "ann" and changed["checkpoint_id"]
    # the reviewer corrected unknown → connection_refused; the candidate still says unknown
    assert rep["corrections"]["same_mistake"] == [ids["edited"]]
    assert rep["by_outcome"]["rejected"]["incidents"] == 1
    assert rep["per_category"]["upstream_rate_limited"] == {"incidents": 1, "live_agreed": 1, "candidate_agrees": 0}


def test_a_stricter_threshold_shows_fixes_no_longer_eligible_and_a_looser_one_newly_eligible(paused_engine, tmp_path):
    decided(paused_engine)
    strict = tmp_path / "strict.toml"
    strict.write_text("CODE_FIX_MIN_CONFIDENCE = 0.99\n")
    rep = report(paused_engine, run_backtest(paused_engine, candidate_for(paused_engine, settings_file=strict),
                                             status="all").backtest_id)
    assert rep["summary"]["fix_no_longer_eligible"] >= 1 and rep["summary"]["category_changed"] == 0
    bad = tmp_path / "bad.toml"
    bad.write_text('OPENAI_API_KEY = "sk-x"\n')
    with pytest.raises(Exception, match="cannot be set for a backtest"):
        candidate_for(paused_engine, settings_file=bad)


def test_the_cli_runs_lists_and_reports(paused_engine, capsys, tmp_path):
    ids = decided(paused_engine)
    docs = docs_without(tmp_path, "upstream_rate_limited")
    code, out, err = cli(capsys, "backtest", "--docs", docs, "--since", "3650d")
    assert code == 0, err
    assert "approved as analysed" in out and "upstream_rate_limited → unknown" in out
    listed = cli_json(capsys, "backtest", "--list")
    assert len(listed) == 1 and listed[0]["done"] == 3  # decided only: the paused one is not selected
    rep = cli_json(capsys, "backtest", "--report", listed[0]["backtest_id"])
    assert ids["paused"] not in {d["incident_id"] for d in rep["disagreements"]}
    assert cli(capsys, "backtest", "--report", "bt-nope")[0] == 4
    assert cli(capsys, "backtest", "--since", "yesterday")[0] == 2
    assert cli(capsys, "backtest", "--docs", tmp_path / "missing")[0] == 2


def test_a_stopped_backtest_reads_stopped_everywhere_and_resumes(paused_engine, capsys):
    """Cancel (SIGINT, as Ctrl-C) lets the backtest go unfinished: the store, `--list` and the report
    say `stopped`, not `running` with no worker; a worker that died holding it reads the same."""
    import socket

    decided(paused_engine)

    def interrupt(_incident_id: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_backtest(paused_engine, candidate_for(paused_engine), progress=interrupt)
    [row] = backtests.backtests(paused_engine.records)
    assert (row["status"], row["done"], row["working"]) == ("stopped", 1, False)
    assert " stopped " in cli(capsys, "backtest", "--list")[1]
    assert report(paused_engine, row["backtest_id"])["backtest"]["status"] == "stopped"
    run = run_backtest(paused_engine, candidate_for(paused_engine), resume=row["backtest_id"])
    assert run.resumed and run.already_done == 1
    assert backtests.backtest(paused_engine.records, row["backtest_id"])["status"] == "done"
    # a worker killed while holding one (no release) leaves `running` stored with a dead owner
    backtests.create(paused_engine.records, backtest_id="bt-killed", candidate="c", candidate_key="k",
                     selection=[], owner=f"{socket.gethostname()}:999999999:0:dead")
    assert backtests.backtest(paused_engine.records, "bt-killed")["status"] == "stopped"


# -- durability and isolation with real processes -----------------------------------------------
def many_decided(engine, tmp_path: Path, n: int) -> list[str]:
    """n incidents ingested and approved (the bench's event shapes)."""
    from bench.pipeline import write_events
    from pipeline.unattended.file_ingest import ingest_path

    events = tmp_path / "many.jsonl"
    write_events(events, n)
    ingest_path(engine, events)
    review = ReviewService(engine)
    ids = [r["incident_id"] for r in engine.records.incidents(status="awaiting_approval")]
    for i in ids:
        review.approve(i, reviewer="ann")
    return ids


def backtest_child(data_dir: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(data_dir), "INCIDENTIQ_REPO_DIR": str(SAMPLE_REPO),
           "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "pipeline", "backtest", *args, "--json"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def result_count(engine) -> int:
    return engine.records.query("SELECT count(*) AS n FROM backtest_results")[0]["n"]


def test_a_backtest_killed_mid_run_resumes_without_duplicates(engine, data_dir, tmp_path):
    ids = many_decided(engine, tmp_path, 60)
    child = backtest_child(data_dir, "--limit", "60")
    try:
        wait_for(lambda: result_count(engine) >= 3, timeout=120)
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    finally:
        child.kill()
        child.communicate()  # its pipes closed
    cut = result_count(engine)
    assert 0 < cut < len(ids), "the kill came too late to test a resume"
    [row] = backtests.backtests(engine.records)
    assert row["status"] == "stopped" and row["done"] == cut
    # the same command resumes it (run here: the killed run is what had to be a real process)
    again = cli_here(data_dir, "backtest", "--limit", "60", "--json")
    assert again.returncode == 0, again.stderr
    rep = json.loads(again.stdout)
    assert rep["run"]["resumed"] and rep["run"]["backtest_id"] == row["backtest_id"]
    assert rep["run"]["already_done"] == cut and rep["run"]["analysed"] == len(ids) - cut
    counted = engine.records.query("SELECT incident_id, count(*) AS n FROM backtest_results GROUP BY incident_id")
    assert sorted(r["incident_id"] for r in counted) == sorted(ids) and {r["n"] for r in counted} == {1}
    assert backtests.backtest(engine.records, row["backtest_id"])["status"] == "done"
    assert cli_resume_refused(data_dir, row["backtest_id"])


def cli_resume_refused(data_dir: Path, backtest_id: str) -> bool:
    refused = cli_here(data_dir, "backtest", "--resume", backtest_id, "--json")
    return refused.returncode == 2 and "is done" in refused.stderr


def test_two_backtests_at_once_do_not_collide(engine, data_dir, tmp_path):
    ids = many_decided(engine, tmp_path, 24)
    docs = docs_without(tmp_path, "db_deadlock")
    a, b = backtest_child(data_dir), backtest_child(data_dir, "--docs", str(docs))
    outs = [p.communicate(timeout=240) for p in (a, b)]
    assert a.returncode == 0 and b.returncode == 0, [e for _, e in outs]
    first, second = (json.loads(o) for o, _ in outs)
    assert first["backtest"]["backtest_id"] != second["backtest"]["backtest_id"]
    for rep in (first, second):
        assert rep["backtest"]["done"] == len(ids) == rep["summary"]["incidents"]
    assert first["summary"]["category_changed"] == 0 and second["summary"]["category_changed"] >= 1
    assert result_count(engine) == 2 * len(ids)


def copy_data_dir(engine, data_dir: Path, to: Path) -> Path:
    """A consistent copy of a SQLite data dir (the backup API: WAL contents included)."""
    to.mkdir()
    for name in ("app.sqlite3", "checkpoints.sqlite"):
        with sqlite3.connect(data_dir / name) as src, sqlite3.connect(to / name) as dst:
            src.backup(dst)
    shutil.copytree(data_dir / "knowledge-index", to / "knowledge-index")
    return to


def test_an_approval_while_a_backtest_runs_is_the_approval_it_would_be_without(engine, data_dir, tmp_path):
    from bench.pipeline import write_events
    from pipeline.composition import open_engine
    from pipeline.unattended.file_ingest import ingest_path
    from tests.support import make_settings

    many_decided(engine, tmp_path, 30)
    later = tmp_path / "later.jsonl"
    write_events(later, 1)
    later.write_text(later.read_text().replace("svc-", "late-svc-").replace("2026-11-28", "2026-11-29"))
    ingest_path(engine, later)
    [paused] = [r["incident_id"] for r in engine.records.incidents(status="awaiting_approval")]
    twin = open_engine(make_settings(copy_data_dir(engine, data_dir, tmp_path / "twin")))  # no backtest there
    child = backtest_child(data_dir, "--status", "all")
    try:
        wait_for(lambda: result_count(engine) >= 1, timeout=120)
        ReviewService(engine).approve(paused, reviewer="ann")  # while the backtest reads the checkpoints
        out, err = child.communicate(timeout=240)
    finally:
        child.kill()
    assert child.returncode == 0, err
    assert json.loads(out)["backtest"]["done"] == 31
    ReviewService(twin).approve(paused, reviewer="ann")

    def outcome(eng):
        row = eng.records.incident(paused)
        snap = eng.graph.get_state(thread_config(paused))
        return (row["status"], row["category"], row["summary"]["decision"]["proposal_hash"],
                [f["proposal"]["hash"] for f in eng.records.fixes(paused)],
                [(a["action"], a["reviewer"]) for a in eng.records.audit(paused)],
                len(list(eng.graph.get_state_history(thread_config(paused)))), snap.next, snap.values["outcome"])

    assert outcome(engine) == outcome(twin)
    assert outcome(engine)[0] == "fix_proposed" and len(outcome(engine)[3]) == 1


def test_retention_removes_old_backtests_with_the_rest(paused_engine):
    from pipeline.unattended.retention import prune

    decided(paused_engine)
    run = run_backtest(paused_engine, candidate_for(paused_engine))
    assert prune(paused_engine, days=30).backtests_removed == 0  # started today: kept
    pruned = prune(paused_engine, days=0)
    assert pruned.backtests_removed == 1 and pruned.incidents  # with the incidents it compacted
    assert backtests.backtests(paused_engine.records) == []
    assert paused_engine.records.query("SELECT count(*) AS n FROM backtest_results")[0]["n"] == 0
    with pytest.raises(Exception, match=f"backtest {run.backtest_id} not found"):
        report(paused_engine, run.backtest_id)
    # a backtest of the compacted incidents now says why it cannot start from before rca
    rerun = run_backtest(paused_engine, candidate_for(paused_engine))
    skipped = {s["why"] for s in report(paused_engine, rerun.backtest_id)["skipped"]}
    assert skipped == {"no checkpoint before rca is kept (retention compacted the incident)"}


def test_a_model_candidate_analyses_through_that_model_and_is_recorded_as_it(paused_engine, stub, capsys,
                                                                             monkeypatch):
    """`backtest --model NAME` with the live analyst offline: every re-analysis goes to the
    OpenAI-compatible endpoint (the loopback stub) asking for NAME, the results carry its answers,
    and the backtest names the candidate as that model."""
    from tests.support import KEY

    ids = decided(paused_engine)
    monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    out = cli_json(capsys, "backtest", "--model", "candidate-llm", "--since", "3650d")

    assert out["backtest"]["candidate"] == "model candidate-llm (model)" and out["backtest"]["done"] == 3
    asked = {r.body.get("model") for r in stub.chat_requests() if r.schema_name == "RCAAnswer"}
    assert asked == {"candidate-llm"}
    assert len([r for r in stub.chat_requests() if r.schema_name == "RCAAnswer"]) == 3  # one per decided incident
    results = paused_engine.records.query("SELECT incident_id, new_root_cause FROM backtest_results")
    assert {r["incident_id"] for r in results} == {ids["approved"], ids["edited"], ids["rejected"]}
    # the stub's words; a cause resting on a doc of another technology says so first ("By analogy: ...")
    assert all("The pool is exhausted" in r["new_root_cause"] for r in results)
    listed = cli_json(capsys, "backtest", "--list")
    assert listed[0]["candidate"] == "model candidate-llm (model)"
    # the live analysis stayed the offline analyzer's
    assert all(paused_engine.records.incident(i)["summary"]["rca"]["analyst"] == "offline" for i in ids.values())
