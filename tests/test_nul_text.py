"""Issue 39.1: a JSON line whose text fields hold the escape `\\u0000` is stored, on both stores,
with the same text (each NUL shown as ␀), and neither `ingest` nor the file poller stops at it.
On PostgreSQL it failed the whole batch on every rerun ("PostgreSQL text fields cannot contain
NUL"), and the poller never stored a later line."""
from __future__ import annotations

import json

from pipeline.composition import open_records
from pipeline.unattended.poller import Poller
from pipeline.sources.file import FileSource
from pipeline.store.stored_text import stored_params, stored_text
from tests.support import BOTH_BACKENDS, cli_json, make_settings

NUL_LINE = {"_time": "2026-11-28T10:00:00Z", "level": "ERROR", "service": "pay\u0000ments", "host": "pos\u0000-1",
            "exception": "java.lang.Null\u0000PointerException", "message": "card \u0000 declined\u0000",
            "stack": "\tat a.B(B.java:1)\u0000", "extra": "x\u0000y"}
LATER = {"_time": "2026-11-28T10:00:05Z", "level": "ERROR", "service": "checkout-api",
         "message": "HikariPool-1 - Connection is not available, request timed out after 30000ms."}


def write(path, *objs) -> None:
    with path.open("a") as f:
        for obj in objs:
            f.write(json.dumps(obj) + "\n")  # json.dumps writes NUL as the escape \u0000


def stored(data_dir) -> dict[str, dict]:
    records = open_records(make_settings(data_dir))
    try:
        return {e.service: json.loads(e.model_dump_json()) for e in records.all_events()}
    finally:
        records.close()


@BOTH_BACKENDS
def test_a_nul_escape_in_every_text_field_is_stored_as_the_same_visible_text_on_both_stores(
        data_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    log = tmp_path / "nul.jsonl"
    write(log, NUL_LINE, LATER)
    assert cli_json(capsys, "ingest", str(log)) == {"events": 2, "rejected": 0, "incidents_new": 2,
                                                    "incidents_updated": 0}
    assert cli_json(capsys, "ingest", str(log))["events"] == 0  # a rerun finds them stored
    event = stored(data_dir)["pay\u2400ments"]
    # the columns hold ␀ for each NUL (what PostgreSQL can hold; SQLite keeps the same); the body's
    # values (JSON text) keep theirs
    assert (event["host"], event["exception"], event["message"]) == (
        "pos\u2400-1", "java.lang.Null\u2400PointerException", "card \u2400 declined\u2400")
    assert event["stack"] == "at a.B(B.java:1)\u0000" and event["fields"]["extra"] == "x\u0000y"
    titles = sorted(i["title"] for i in cli_json(capsys, "list"))
    assert any("\u2400" in t for t in titles) and not any("\u0000" in t for t in titles)


@BOTH_BACKENDS
def test_the_file_poller_stores_a_nul_line_and_the_lines_after_it(engine, tmp_path):
    log = tmp_path / "app.jsonl"
    write(log, NUL_LINE)
    poller = Poller(engine, FileSource(log, max_bytes=engine.settings.max_event_bytes), interval=0.05)
    try:
        first = poller.poll_once()
        write(log, LATER)
        second = poller.poll_once()
    finally:
        poller.close()
    assert (first.error, first.counts.events, second.error, second.counts.events) == (None, 1, None, 1)
    assert sorted(e.service for e in engine.records.all_events()) == ["checkout-api", "pay\u2400ments"]


def test_the_sanitiser_changes_only_nuls_and_hands_back_clean_parameters_untouched():
    clean = ("a", 1, None, b"\x00 bytes stay", 2.5)
    assert stored_params(clean) is clean
    named = {"1": "x"}
    assert stored_params(named) is named
    assert stored_params(["a\x00b", b"\x00", 3]) == ("a\u2400b", b"\x00", 3)
    assert stored_params({"1": "\x00"}) == {"1": "\u2400"}
    assert stored_text("tab\tnewline\n\x1b[31m") == "tab\tnewline\n\x1b[31m"  # valid text in both databases
