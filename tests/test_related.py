"""Related incidents: the same fingerprint (paged, newest first) and the nearest by evidence, each
with how it was decided, in `show --json` and on the incident page."""
from __future__ import annotations

import pytest

from pipeline.composition import open_engine
from pipeline.unattended.file_ingest import ingest_path
from pipeline.review.service import ReviewService
from tests.support import HIKARI, cli_json, make_settings, open_incident, texts, write_jsonl


@pytest.fixture
def recurring(data_dir, tmp_path, monkeypatch):
    """The same pool exhaustion three times (approved, rejected, paused now) and one other incident."""
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    monkeypatch.setenv("INCIDENTIQ_REOPEN_MINUTES", "0")
    engine = open_engine(make_settings(data_dir, reopen_minutes=0))
    review = ReviewService(engine)
    ids = []
    for k in range(3):
        events = [{**e, "_time": e["_time"].replace("10:00", f"1{k}:00")} for e in HIKARI]
        ingest_path(engine, write_jsonl(tmp_path / f"h{k}.jsonl", events))
        [opened] = [r["incident_id"] for r in engine.records.incidents(status="awaiting_approval")]
        ids.append(opened)
        if k == 0:
            review.approve(opened, reviewer="ann")
        elif k == 1:
            review.reject(opened, reviewer="cy", reason="known noise during the failover drill")
    ingest_path(engine, write_jsonl(tmp_path / "other.jsonl", [
        {"_time": "2026-11-28T15:00:00Z", "service": "inventory", "level": "ERROR",
         "message": "[Errno 28] No space left on device", "exception": "OSError"}]))
    yield engine, ids
    engine.records.close()


def test_show_json_lists_past_incidents_of_the_fingerprint_with_their_decisions(recurring, capsys):
    engine, (approved, rejected, now) = recurring
    doc = cli_json(capsys, "show", now)
    same = doc["related"]["same_fingerprint"]
    assert [r["incident_id"] for r in same["rows"]] == [rejected, approved] and same["next"] is None
    by_id = {r["incident_id"]: r for r in same["rows"]}
    assert by_id[rejected]["status"] == "rejected" and by_id[rejected]["decided_by"] == ["cy"]
    assert by_id[rejected]["rejection_reason"] == "known noise during the failover drill"
    assert by_id[approved]["status"] == "fix_proposed" and by_id[approved]["fix"]["hash"]
    assert by_id[approved]["decided_by"] == ["ann"] and by_id[approved]["decided_at"]
    assert doc["related"]["nearest"] == []  # only with --nearest: a plain show stays off Chroma
    first = cli_json(capsys, "show", now, "--related-limit", "1")["related"]["same_fingerprint"]
    assert [r["incident_id"] for r in first["rows"]] == [rejected] and first["next"] == rejected
    second = cli_json(capsys, "show", now, "--related-limit", "1", "--related-before", first["next"])
    assert [r["incident_id"] for r in second["related"]["same_fingerprint"]["rows"]] == [approved]


def test_the_nearest_by_evidence_come_from_the_evidence_index(recurring, capsys):
    engine, (approved, rejected, now) = recurring
    nearest = cli_json(capsys, "show", now, "--nearest")["related"]["nearest"]
    ranked = [r["incident_id"] for r in nearest]
    assert set(ranked[:2]) == {approved, rejected} and now not in ranked
    assert nearest[0]["similarity"] > 0.9 and nearest[-1]["similarity"] < nearest[0]["similarity"]
    assert (engine.settings.data_dir / "evidence-index").is_dir()


def _idle_poll(engine, tmp_path) -> None:
    from pipeline.sources.file import FileSource
    from pipeline.unattended.poller import Poller

    quiet = tmp_path / "quiet.log"
    quiet.write_text("")
    poller = Poller(engine, FileSource(quiet, max_bytes=engine.settings.max_event_bytes), interval=0.05)
    try:
        poller.poll_once()
    finally:
        poller.close()


def test_the_incident_page_shows_related_incidents(recurring, monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    from tests.support import APP, TIMEOUT
    from workbench import session

    engine, (approved, rejected, now) = recurring
    monkeypatch.setenv("INCIDENTIQ_POLLER", "off")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    try:
        open_incident(at, now)
        # the page never indexes evidence: until a poll has, the nearest are not offered
        assert not [d for d in at.dataframe if "similarity" in d.value.columns]
        assert not list((engine.settings.data_dir / "evidence-index").glob("cursor-*.json"))
        _idle_poll(engine, tmp_path)
        open_incident(at, now)
        assert any(e.label == "Related incidents" for e in at.expander)
        frames = [d.value for d in at.dataframe if "decided by" in d.value.columns]
        same = frames[0]
        assert list(same["incident"]) == [rejected, approved]
        assert "known noise during the failover drill" in set(same["rejection reason / fix approved"])
        assert "similarity" in frames[1].columns and frames[1].iloc[0]["similarity"] > 0.9
        assert "Same fingerprint" in texts(at)
    finally:
        session._runtime.clear()
