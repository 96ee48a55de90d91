"""No log line can stop ingestion, break a run, or hide its neighbours."""
from __future__ import annotations

import json

from pipeline.composition import open_records
from pipeline.ingest.events import MAX_FIELD_DEPTH, DeadLetter, read_jsonl
from tests.support import BOTH_BACKENDS, cli_here as cli, make_settings

GOOD = {"_time": "2026-11-28T10:00:00Z", "level": "ERROR", "service": "checkout-api",
        "message": "NullPointerException at CartService.total(CartService.java:88)"}


def nested(depth: int):
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def hostile_lines() -> list[str]:
    return [
        json.dumps(GOOD),
        '{"_time": "2026-11-28T10:00:01Z", "level": "ERROR", "service": "x", "message": "bad \\ud800 text"}',
        '{"_time": "2026-11-28T10:00:01Z", "level": "ERROR", "service": "x", "message": "ok", "k\\udfff": 1}',
        json.dumps({"_time": "2026-11-28T10:00:02Z", "level": "ERROR", "service": "y", "message": "deep",
                    "extra": nested(300)}),
        json.dumps({"_time": "2026-11-28T10:00:03Z", "level": "INFO", "service": "checkout-api",
                    "message": "info deep", "extra": nested(210)}),
        json.dumps({"_time": "0001-01-01T00:00:00Z", "level": "ERROR", "service": "z", "message": "year one"}),
        json.dumps({"_time": "9999-12-31T23:59:00Z", "level": "ERROR", "service": "w", "message": "year 9999"}),
        json.dumps({"_time": 253402300000, "level": "ERROR", "service": "w", "message": "epoch past 9999"}),
        json.dumps({**GOOD, "_time": "2026-11-28T10:00:09Z", "service": "cart", "extra": nested(MAX_FIELD_DEPTH - 1)}),
        # a NUL escape is text, stored as ␀ (PostgreSQL's text cannot hold it: issue 39.1)
        json.dumps({**GOOD, "_time": "2026-11-28T10:00:10Z", "service": "nul\u0000svc", "host": "h\u0000",
                    "message": "NUL \u0000 here", "exception": "E\u0000"}),
    ]


def stored_bodies(data_dir) -> list[dict]:
    """Every stored event as JSON, on the test's store (SQLite files or PostgreSQL)."""
    records = open_records(make_settings(data_dir))
    try:
        return [json.loads(e.model_dump_json()) for e in records.all_events()]
    finally:
        records.close()


@BOTH_BACKENDS
def test_lines_that_would_fail_when_stored_are_dead_lettered_and_neighbours_run(tmp_path, data_dir):
    source = tmp_path / "hostile.jsonl"
    source.write_text("\n".join(hostile_lines()) + "\n")
    first = cli(data_dir, "ingest", str(source), "--json")
    assert first.returncode == 0, first.stderr
    # out-of-range times are unreadable times (CONTRACT §1): those lines are events at the time of
    # the line before them, so three more incidents, none dated in year 1 or 9999; `cart`'s error
    # names what checkout-api's names (CartService.java:88) within seconds: one outage, one incident
    assert json.loads(first.stdout) == {"events": 6, "rejected": 4, "incidents_new": 5, "incidents_updated": 0}
    again = cli(data_dir, "ingest", str(source), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["events"] == 0
    listed = json.loads(cli(data_dir, "list", "--json").stdout)
    assert sorted(i["status"] for i in listed) == ["awaiting_approval"] * 5
    years = [i["incident_id"].split("-")[1][:-4] for i in listed]  # INC-<yyyymmdd>-<hex>
    assert all(len(y) == 4 and 1970 <= int(y) <= 2999 for y in years), years
    reasons = [d["reason"] for d in json.loads(cli(data_dir, "deadletters", "--json").stdout)]
    assert sum("surrogate" in r for r in reasons) == 2
    assert sum("nested deeper" in r for r in reasons) == 2
    kept = [e["fields"] for e in stored_bodies(data_dir) if e["message"] in ("year one", "year 9999")]
    assert sorted(str(f["time_raw"])[:4] for f in kept) == ["0001", "9999"]
    assert all(f["time_inferred"] == "previous record" for f in kept)


def test_each_rejection_is_one_line_naming_the_cause(tmp_path):
    source = tmp_path / "hostile.jsonl"
    source.write_text("\n".join(hostile_lines()) + "\n")
    items = [item for _, item in read_jsonl(source, max_bytes=262144, final=True)]
    letters = [i for i in items if isinstance(i, DeadLetter)]
    # 253402300000 is epoch milliseconds by magnitude (1978), as a file's reader reads it: an event
    assert len(letters) == 6 and len(items) == 10
    assert not any("epoch past 9999" in d.raw for d in letters)
    assert all("\n" not in d.reason and len(d.reason) < 200 for d in letters)
    assert all(d.raw.encode("utf-8") for d in letters)  # storable as text


def test_the_flat_values_shortcut_answers_as_the_full_check():
    # storable.problem answers flat values (a parsed line's) without encoding them: the same
    # answer as walking them, lone surrogates found wherever they are
    from pipeline import storable

    cases = [
        [{"a": "b", "n": 1, "f": 1.5, "t": True, "z": None}, "message", None, "exc"],
        [{"a": "\ud800"}, "m"], [{"\udc00": "v"}, "m"], [{}, "caf\u00e9 \ud83d\ude00"], ["\ud83d"],
        ({"k": "v"}, "tuple too"), [{"nested": {"x": 1}}], [{"list": [1, 2]}], [[1, [2]]], "a string",
    ]
    for value in cases:
        assert storable.problem(value) == storable._walked(value, storable.MAX_DEPTH), value
        assert storable.problem(value, max_depth=1) == storable._walked(value, 1), value
    assert storable.problem([{"a": "\ud800"}]) is not None
