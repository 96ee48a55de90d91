import json
import tracemalloc
from datetime import datetime, timezone

import pytest

from pipeline.errors import InvalidEvent, UsageError
from pipeline.ingest.events import DeadLetter, iter_paths, normalize, parse_line, read_jsonl
from pipeline.state import LogEvent

LIMIT = 256 * 1024
T0 = "2026-11-28T10:01:02+00:00"


def event(**obj) -> LogEvent:
    return normalize({"_time": T0, "message": "boom", **obj})


def line(**obj) -> bytes:
    return json.dumps({"_time": T0, "message": "boom", **obj}).encode() + b"\n"


def reject_reason(obj) -> str:
    with pytest.raises(InvalidEvent) as caught:
        normalize(obj)
    return caught.value.reason


# --- normalize: aliases, times, levels, fields ---------------------------------------------

def test_splunk_style_aliases_map_to_canonical_fields():
    e = normalize({"time": T0, "_raw": "boom", "app": "orders", "severity": "error",
                   "exception_type": "KeyError", "stacktrace": "Traceback ...", "traceId": "t1",
                   "host": "web-1"})
    assert (e.message, e.service, e.level, e.exception, e.stack, e.trace_id, e.host) == (
        "boom", "orders", "ERROR", "KeyError", "Traceback ...", "t1", "web-1")
    assert e.fields == {}


def test_every_time_and_message_alias_is_accepted():
    for time_key in ("_time", "time", "timestamp", "@timestamp"):
        for message_key in ("message", "_raw", "msg"):
            e = normalize({time_key: T0, message_key: "boom"})
            assert e.message == "boom" and e.time == datetime(2026, 11, 28, 10, 1, 2, tzinfo=timezone.utc)


def test_sourcetype_and_log_level_aliases():
    e = event(sourcetype="pos:payments", log_level="WARNING")
    assert e.service == "pos:payments" and e.level == "WARN"


def test_dotted_aliases_as_literal_keys_or_nested_objects():
    literal = event(**{"error.type": "TimeoutError", "error.stack": "at x"})
    nested = event(error={"type": "TimeoutError", "stack": "at x", "code": 504})
    assert literal.exception == nested.exception == "TimeoutError"
    assert literal.stack == nested.stack == "at x"
    assert nested.fields == {"error": {"code": 504}}  # what the aliases did not consume stays


def test_canonical_name_wins_over_alias_and_the_alias_is_kept():
    e = event(service="orders", app="legacy-name")
    assert e.service == "orders" and e.fields == {"app": "legacy-name"}


def test_service_defaults_to_unknown():
    assert event().service == "unknown"


def test_message_is_trimmed():
    assert event(message="  boom \n").message == "boom"


@pytest.mark.parametrize("value, expected", [
    ("2026-11-28T10:01:02Z", datetime(2026, 11, 28, 10, 1, 2, tzinfo=timezone.utc)),
    ("2026-11-28T15:31:02.250+05:30", datetime(2026, 11, 28, 10, 1, 2, 250000, tzinfo=timezone.utc)),
    ("2026-11-28T05:01:02-05:00", datetime(2026, 11, 28, 10, 1, 2, tzinfo=timezone.utc)),
    (1795860062, datetime(2026, 11, 28, 10, 1, 2, tzinfo=timezone.utc)),
    (1795860062.5, datetime(2026, 11, 28, 10, 1, 2, 500000, tzinfo=timezone.utc)),
    ("1795860062.5", datetime(2026, 11, 28, 10, 1, 2, 500000, tzinfo=timezone.utc)),
    ("1795860062", datetime(2026, 11, 28, 10, 1, 2, tzinfo=timezone.utc)),
])
def test_times_become_aware_utc(value, expected):
    e = event(_time=value)
    assert e.time == expected and e.time.utcoffset().total_seconds() == 0


@pytest.mark.parametrize("value", ["yesterday", "", "2026-13-45T10:00:00Z", True, [1], float("nan")])
def test_unparseable_times_are_rejected_naming_the_value(value):
    reason = reject_reason({"_time": value, "message": "boom"})
    assert reason.startswith("unparseable time: ") and "\n" not in reason


@pytest.mark.parametrize("value", [1795860062000, "1795860062000", 1795860062000000, 1795860062000000000])
def test_epoch_milli_micro_and_nanoseconds_are_told_by_magnitude_as_in_a_file(value):
    # a JSON event (a Splunk result's `_raw`, an evaluation case) reads an epoch as a file's line
    # does: pino's milliseconds were a dead letter here while the same line in a file was read
    assert event(_time=value).time == datetime(2026, 11, 28, 10, 1, 2, tzinfo=timezone.utc)


def test_an_epoch_beyond_the_year_2999_in_any_unit_is_rejected_as_out_of_range():
    assert reject_reason({"_time": 1e20, "message": "boom"}).startswith("time out of range (years 1970-2999)")


def test_unparseable_time_reason_quotes_the_value():
    assert reject_reason({"_time": "yesterday", "message": "x"}) == "unparseable time: 'yesterday'"


@pytest.mark.parametrize("raw, level", [
    ("warning", "WARN"), ("Warn", "WARN"), ("CRITICAL", "FATAL"), ("panic", "FATAL"),
    ("EMERG", "FATAL"), ("alert", "FATAL"), ("err", "ERROR"), ("ERROR", "ERROR"),
    ("trace", "DEBUG"), ("debug", "DEBUG"), ("info", "INFO"), ("fatal", "FATAL"),
])
def test_levels_are_normalised(raw, level):
    assert event(level=raw).level == level


def test_unrecognised_level_is_none_and_original_kept():
    e = event(level="loudly")
    assert e.level is None and e.fields["level_raw"] == "loudly"


@pytest.mark.parametrize("raw, level", [
    # .NET's and Serilog's names, java.util.logging's, syslog's and pino's numbers (CONTRACT §1), as the
    # file readers map them: an `Information` line is no problem line
    ("Information", "INFO"), ("Verbose", "DEBUG"), ("SEVERE", "ERROR"), ("FINE", "DEBUG"), ("Critical", "FATAL"),
    (30, "INFO"), (50, "ERROR"),
])
def test_every_common_spelling_of_a_level_is_normalised_as_the_file_readers_do(raw, level):
    assert event(level=raw).level == level


def test_unknown_fields_are_kept_verbatim():
    extra = {"user_id": 42, "cart": {"items": [1, 2]}, "region": "eu-west-1", "ok": False}
    e = event(**extra)
    assert e.fields == extra


def test_input_object_is_not_modified():
    obj = {"_time": T0, "message": "boom", "error": {"type": "E", "code": 1}}
    normalize(obj)
    assert obj == {"_time": T0, "message": "boom", "error": {"type": "E", "code": 1}}


@pytest.mark.parametrize("obj, reason", [
    ({"_time": T0}, "missing required field: message"),
    ({"message": "boom"}, "missing required field: _time"),
    ({"_time": T0, "message": "   "}, "empty required field: message"),
    ({"_time": T0, "message": 42}, "invalid message: expected a string, got number"),
    ({"_time": T0, "message": "boom", "service": {"a": 1}}, "invalid service: expected a string, got object"),
])
def test_invalid_objects_say_what_is_wrong(obj, reason):
    assert reject_reason(obj) == reason


# --- event_id ---------------------------------------------------------------------------------

def test_event_id_is_stable_and_ignores_where_the_event_came_from():
    obj = {"_time": T0, "message": "boom", "service": "orders", "user": 7}
    a = normalize(obj, source="a.jsonl", position="a.jsonl@0")
    b = normalize(dict(reversed(obj.items())), source="splunk", position="sid:3")
    assert a.event_id == b.event_id and len(a.event_id) == 24


def test_event_id_is_the_same_for_the_same_instant_written_differently():
    assert event(_time="2026-11-28T11:01:02+01:00").event_id == event(_time=1795860062).event_id


@pytest.mark.parametrize("change", [
    {"message": "boom!"}, {"service": "payments"}, {"host": "web-2"}, {"level": "ERROR"},
    {"exception": "E"}, {"stack": "at x"}, {"trace_id": "t"}, {"user": 1},
    {"_time": "2026-11-28T10:01:03Z"},
])
def test_event_id_changes_with_content(change):
    assert event(**change).event_id != event().event_id


# --- parse_line --------------------------------------------------------------------------------

def parse_reason(raw: bytes, max_bytes: int = LIMIT) -> str:
    with pytest.raises(InvalidEvent) as caught:
        parse_line(raw, source="s", position="p", max_bytes=max_bytes)
    return caught.value.reason


def test_parse_line_keeps_source_and_position():
    e = parse_line(line().strip(), source="app.jsonl", position="app.jsonl@10", max_bytes=LIMIT)
    assert (e.source, e.position, e.message) == ("app.jsonl", "app.jsonl@10", "boom")


def test_parse_line_accepts_a_utf8_bom():
    assert parse_line(b"\xef\xbb\xbf" + line().strip(), source="s", position="p", max_bytes=LIMIT)


@pytest.mark.parametrize("raw, reason", [
    (b'{"_time": 1, "message": "x"', "invalid JSON: "),
    (b"[1, 2]", "not a JSON object: list"),
    (b'"just a string"', "not a JSON object: string"),
    (b"42", "not a JSON object: number"),
    (b"null", "not a JSON object: null"),
    (b'{"_time": 1, "message": "a\x00b"}', "contains NUL bytes"),
    (b'{"_time": 1, "message": "caf\xe9"}', "invalid UTF-8 at byte 28"),
    (b'\xef\xbb\xbf{"message": "\xe9"}', "invalid UTF-8 at byte 16"),
    (b"[" * 100_000, "invalid JSON: nested too deeply"),
])
def test_parse_line_rejections(raw, reason):
    assert parse_reason(raw).startswith(reason)


def test_parse_line_rejects_lines_over_the_limit():
    assert parse_reason(b"x" * 101, max_bytes=100) == "line of 101 bytes exceeds the limit of 100"


# --- read_jsonl ----------------------------------------------------------------------------------

def read_all(path, **kwargs):
    return list(read_jsonl(path, max_bytes=kwargs.pop("max_bytes", LIMIT), **kwargs))


def test_mixed_file_parses_good_lines_and_dead_letters_each_bad_one(tmp_path):
    path = tmp_path / "app.jsonl"
    huge = b'{"_time": 1, "message": "' + b"A" * (10 * 1024 * 1024) + b'"}'
    bad = {
        "truncated": (b'{"_time": 1, "message": "cut', "invalid JSON: "),
        "list": (b"[1, 2, 3]", "not a JSON object: list"),
        "string": (b'"hello"', "not a JSON object: string"),
        "number": (b"3.14", "not a JSON object: number"),
        "no message": (b'{"_time": 1}', "missing required field: message"),
        "empty message": (b'{"_time": 1, "message": ""}', "empty required field: message"),
        "bad time": (b'{"_time": "soon", "message": "x"}', "unparseable time: 'soon'"),
        "huge": (huge, f"line of {len(huge)} bytes exceeds the limit of {LIMIT}"),
        "nul": (b'{"_time": 1, "message": "x\x00"}', "contains NUL bytes"),
        "utf8": (b'{"_time": 1, "message": "\xff\xfe"}', "invalid UTF-8 at byte 25"),
    }
    lines, expected = [], {}
    offset = 0
    for i, (raw, reason) in enumerate(bad.values()):
        good = line(message=f"good {i}")
        lines += [good, raw + b"\n"]
        expected[offset + len(good)] = reason
        offset += len(good) + len(raw) + 1
    path.write_bytes(b"".join(lines))

    items = read_all(path)

    events = [item for _, item in items if isinstance(item, LogEvent)]
    letters = {int(item.position.rsplit("@", 1)[1]): item for _, item in items
               if isinstance(item, DeadLetter)}
    assert [e.message for e in events] == [f"good {i}" for i in range(len(bad))]
    assert sorted(letters) == sorted(expected)
    for start, letter in letters.items():
        assert letter.reason.startswith(expected[start]), letter
        assert letter.position == f"{path}@{start}" and letter.source == str(path)
        assert "\n" not in letter.reason
    assert items[-1][0] == path.stat().st_size


def test_dead_letter_raw_is_readable_and_bounded(tmp_path):
    path = tmp_path / "app.jsonl"
    huge = b'{"m": "' + b"A" * (10 * 1024 * 1024) + b'"}'
    path.write_bytes(b'{"m": "x\x00\xff"}\n' + huge + b"\n")
    (_, nul), (_, big) = read_all(path)
    assert nul.raw == '{"m": "x\\x00\ufffd"}'
    assert big.raw.startswith('{"m": "AAAA') and len(big.raw.split("…")[0]) == 2000
    assert big.raw.endswith(f"…[truncated {len(huge) - 2000} bytes]")


def test_huge_line_is_not_read_into_memory(tmp_path):
    path = tmp_path / "app.jsonl"
    path.write_bytes(b"x" * (10 * 1024 * 1024) + b"\n" + line())
    tracemalloc.start()
    try:
        items = read_all(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(items[0][1], DeadLetter) and isinstance(items[1][1], LogEvent)
    assert peak < 2 * LIMIT + 256 * 1024


def test_end_offsets_point_after_each_line(tmp_path):
    path = tmp_path / "app.jsonl"
    first, second = line(message="a"), line(message="b")
    path.write_bytes(first + second)
    assert [end for end, _ in read_all(path)] == [len(first), len(first) + len(second)]


def test_blank_lines_are_skipped_but_consumed(tmp_path):
    path = tmp_path / "app.jsonl"
    path.write_bytes(b"\n" + line(message="a") + b"  \r\n\n" + line(message="b") + b"\n\n")
    reader = read_jsonl(path, max_bytes=LIMIT)
    assert [item.message for _, item in reader] == ["a", "b"]
    assert reader.offset == path.stat().st_size


def test_crlf_line_endings_are_accepted(tmp_path):
    path = tmp_path / "app.jsonl"
    path.write_bytes(line(message="a").replace(b"\n", b"\r\n"))
    [(_, e)] = read_all(path)
    assert e.message == "a"


def test_partial_last_line_is_left_for_later_and_read_once_completed(tmp_path):
    path = tmp_path / "app.jsonl"
    complete, partial = line(message="a"), line(message="b")
    path.write_bytes(complete + partial[:10])
    reader = read_jsonl(path, max_bytes=LIMIT)
    assert [e.message for _, e in reader] == ["a"]
    assert reader.offset == len(complete)

    with path.open("ab") as f:
        f.write(partial[10:])
    again = read_all(path, start=reader.offset)
    assert [e.message for _, e in again] == ["b"]
    assert again[-1][0] == len(complete) + len(partial)


def test_partial_huge_line_is_not_dead_lettered_until_complete(tmp_path):
    path = tmp_path / "app.jsonl"
    path.write_bytes(b"x" * 5000)
    reader = read_jsonl(path, max_bytes=1000)
    assert list(reader) == [] and reader.offset == 0


def test_final_read_takes_an_unterminated_last_line(tmp_path):
    path = tmp_path / "app.jsonl"
    path.write_bytes(line(message="a") + line(message="b").rstrip(b"\n"))
    reader = read_jsonl(path, max_bytes=LIMIT, final=True)
    assert [e.message for _, e in reader] == ["a", "b"]
    assert reader.offset == path.stat().st_size


def test_reading_from_a_saved_offset_yields_only_new_lines(tmp_path):
    path = tmp_path / "app.jsonl"
    path.write_bytes(line(message="a") + line(message="b"))
    reader = read_jsonl(path, max_bytes=LIMIT)
    first = [e.message for _, e in reader]
    with path.open("ab") as f:
        f.write(line(message="c") + b"not json\n")
    later = [item for _, item in read_jsonl(path, start=reader.offset, max_bytes=LIMIT)]
    assert first == ["a", "b"]
    assert later[0].message == "c" and later[1].reason.startswith("invalid JSON")
    assert read_all(path, start=path.stat().st_size) == []


def test_rereading_a_file_gives_the_same_event_ids(tmp_path):
    path = tmp_path / "app.jsonl"
    path.write_bytes(line(message="a") + line(message="b"))
    assert [e.event_id for _, e in read_all(path)] == [e.event_id for _, e in read_all(path)]


# --- iter_paths -------------------------------------------------------------------------------

def test_iter_paths_lists_log_files_recursively_sorted(tmp_path):
    for name in ("b.jsonl", "a.log", "sub/c.json", "notes.txt", "sub/z/d.jsonl"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    found = [p.relative_to(tmp_path).as_posix() for p in iter_paths(tmp_path)]
    assert found == ["a.log", "b.jsonl", "sub/c.json", "sub/z/d.jsonl"]


def test_iter_paths_accepts_a_single_file(tmp_path):
    path = tmp_path / "events.txt"
    path.write_text("")
    assert iter_paths(path) == [path]


def test_iter_paths_rejects_a_missing_path(tmp_path):
    with pytest.raises(UsageError, match="no such file or folder"):
        iter_paths(tmp_path / "nope")


def test_events_read_are_the_events_validation_builds(tmp_path, monkeypatch):
    # reading builds a LogEvent without validating it again when every value already has its
    # field's exact type; it must be the very event `LogEvent(**values)` gives
    from pipeline.ingest import reading

    path = tmp_path / "mixed.log"
    path.write_text("2026-11-28 10:01:02,123 ERROR [main] com.acme.Pay: charge failed\n"
                    "\tat com.acme.Pay.run(Pay.java:12)\n"
                    '{"time": "2026-11-28T10:01:03Z", "level": "warn", "message": "slow", "service": "pay",'
                    ' "trace_id": "t1", "n": {"deep": [1, 2]}, "host": "h1"}\n'
                    "just text with no time at all\n", encoding="utf-8")

    def read() -> list:
        return [item for item, _ in reading.LogFile(path, max_bytes=1 << 16).scan(0, final=True, settled=True)]

    fast = read()
    monkeypatch.setattr(reading, "_as_validated", lambda values: False)
    validated = read()
    assert len(fast) == len(validated) == 3
    for a, b in zip(fast, validated):
        assert a == b
        assert a.model_fields_set == b.model_fields_set
        assert a.__pydantic_private__ == b.__pydantic_private__
        assert a.model_dump_json() == b.model_dump_json()
        assert list(a.__dict__) == list(b.__dict__)
    # and a value of another type is still validated (refused or converted) as before
    values = dict(event_id="e", time=datetime(2026, 1, 1, tzinfo=timezone.utc), message="m", service="s", host=None,
                  level="NOTICE", exception=None, stack=None, trace_id=None, fields={}, source="", position="")
    assert not reading._as_validated(values)
