"""Console loggers' tab columns, one-letter JSON keys and pretty-printed JSON records (issue 34,
session 49): what a column or a key holds says its role, not the logger's name."""
from __future__ import annotations

from datetime import datetime, timezone

from pipeline.ingest.multiline import MultilineJoiner
from tests.support import read_log as read


def test_a_trailing_json_column_is_the_records_fields_not_its_message(tmp_path):
    log = tmp_path / "console.log"
    log.write_text("2025-03-02T08:15:00.000Z\tINFO\tworker\tjobs/run.go:88\tbatch queued\t{\"batch\": 17}\n"
                   "2025-03-02T08:15:02.500Z\tWARN\tworker\tjobs/run.go:95\tbatch slow\t{\"batch\": 17, \"ms\": 2400}\n"
                   "2025-03-02T08:15:04.000Z\tERROR\tstore\tjobs/save.go:12\tsave refused\t{\"table\": \"runs\"}\n")
    events = read(log)
    assert [e.message for e in events] == ["batch queued", "batch slow", "save refused"]
    assert [e.level for e in events] == ["INFO", "WARN", "ERROR"]
    assert events[1].fields["ms"] == 2400 and events[2].fields["table"] == "runs"
    assert events[0].time == datetime(2025, 3, 2, 8, 15, tzinfo=timezone.utc)


def test_a_json_column_only_some_lines_write_is_cut_from_their_message(tmp_path):
    log = tmp_path / "console.log"
    log.write_text("2025-03-02T08:15:00.000Z\tINFO\tjobs/run.go:88\tbatch queued\t{\"batch\": 17}\n"
                   "2025-03-02T08:15:01.000Z\tDEBUG\tjobs/run.go:90\tpolling\n"
                   "2025-03-02T08:15:02.000Z\tINFO\tjobs/run.go:91\tbatch done\t{\"batch\": 17}\n")
    events = read(log)
    assert [e.message for e in events] == ["batch queued", "polling", "batch done"]
    assert events[2].fields["batch"] == 17


def test_a_level_word_in_the_second_tab_column_is_the_level(tmp_path):
    log = tmp_path / "console.log"
    log.write_text("17\twarn\tcache\tevicting entries\n18\tinfo\tcache\tcache warm\n")
    assert [e.level for e in read(log)] == ["WARN", "INFO"]


def test_a_one_letter_message_key_holds_a_single_word(tmp_path):
    log = tmp_path / "dev.log"
    log.write_text('{"L":"warn","T":"2025-03-02T08:15:00Z","N":"api","M":"draining"}\n'
                   '{"L":"info","T":"2025-03-02T08:15:01Z","N":"api","M":"stopped"}\n')
    events = read(log)
    assert [e.message for e in events] == ["draining", "stopped"]
    assert [e.level for e in events] == ["WARN", "INFO"]


def test_a_pretty_printed_json_record_is_one_event(tmp_path):
    log = tmp_path / "pretty.log"
    log.write_text('{\n  "level": "error",\n  "time": "2025-03-02T08:15:00Z",\n  "msg": "upload failed",\n'
                   '  "parts": [\n    {"n": 1, "ok": true},\n    {"n": 2, "ok": false}\n  ]\n}\n'
                   '{\n  "level": "info",\n  "time": "2025-03-02T08:15:05Z",\n  "msg": "upload retried"\n}\n')
    events = read(log)
    assert [e.message for e in events] == ["upload failed", "upload retried"]
    assert [e.level for e in events] == ["ERROR", "INFO"]
    assert events[0].time == datetime(2025, 3, 2, 8, 15, tzinfo=timezone.utc)


def test_a_json_document_left_open_is_cut_at_the_records_cap():
    joiner = MultilineJoiner(max_lines=5)
    records = list(joiner.join(enumerate(["{", '  "a": 1,', '  "b": {', '    "c": 2,', '    "d": 3,',
                                           "2025-03-02 08:15:00 INFO next"])))
    assert len(records) == 2 and records[1].text.endswith("INFO next")


def test_a_brace_line_after_a_log_line_still_continues_it(tmp_path):
    log = tmp_path / "app.log"
    log.write_text("2025-03-02 08:15:00 INFO request body:\n{\n  \"a\": 1\n}\n2025-03-02 08:15:01 INFO done\n"
                   "2025-03-02 08:15:02 INFO request body:\n{\n  \"a\": 2\n}\n")
    events = read(log)
    assert len(events) == 3 and '"a": 1' in events[0].message + (events[0].stack or "")


def test_a_level_in_four_capitals_joined_to_its_bracketed_time(tmp_path):
    log = tmp_path / "text.log"
    log.write_text("DEBU[2025-03-02T08:15:00+01:00] cache primed                                 keys=120\n"
                   "ERRO[2025-03-02T08:15:03+01:00] sync aborted                                 peer=b\n"
                   "TRAC[2025-03-02T08:15:04+01:00] heartbeat\n")
    events = read(log)
    assert [e.level for e in events] == ["DEBUG", "ERROR", "DEBUG"]
    assert events[1].time == datetime(2025, 3, 2, 7, 15, 3, tzinfo=timezone.utc)
    assert events[1].message.startswith("sync aborted") and "peer=b" in events[1].message


def test_a_level_in_four_capitals_joined_to_the_seconds_since_start(tmp_path):
    log = tmp_path / "tty.log"
    log.write_text("PANI[0031] queue lost\nFATA[0032] giving up\nINFO[0001] listening\n")
    events = read(log)
    assert [e.level for e in events] == ["FATAL", "FATAL", "INFO"]
    assert [e.message for e in events] == ["queue lost", "giving up", "listening"]


def test_a_header_level_cut_to_four_capitals_is_the_level(tmp_path):
    log = tmp_path / "daemon.log"
    log.write_text("2025-03-02 08:15:00,100 INFO daemon started\n2025-03-02 08:15:01,200 TRAC polling socket\n"
                   "2025-03-02 08:15:02,300 ERRO child exited unexpectedly\n")
    events = read(log)
    assert [e.level for e in events] == ["INFO", "DEBUG", "ERROR"]
    assert events[1].message == "polling socket"


def test_a_level_number_of_no_scheme_gives_way_to_a_key_named_as_a_level(tmp_path):
    log = tmp_path / "app.json"
    log.write_text('{"message":"quota reached","level":300,"level_name":"WARNING","datetime":"2025-03-02T08:15:00+00:00"}\n'
                   '{"message":"mail sent","level":250,"level_name":"NOTICE","datetime":"2025-03-02T08:15:01+00:00"}\n')
    events = read(log)
    assert [e.level for e in events] == ["WARN", "INFO"]
    assert events[0].fields["level"] == 300


def test_an_epoch_too_large_for_the_dialects_unit_is_read_by_its_magnitude(tmp_path):
    log = tmp_path / "zap.json"
    log.write_text('{"level":"info","ts":1740903300250000000,"caller":"q/w.go:3","msg":"nanos"}\n'
                   '{"level":"info","ts":1740903301500,"caller":"q/w.go:4","msg":"millis"}\n'
                   '{"level":"info","ts":1740903302.75,"caller":"q/w.go:5","msg":"seconds"}\n')
    events = read(log)
    assert [e.time for e in events] == [datetime(2025, 3, 2, 8, 15, 0, 250000, tzinfo=timezone.utc),
                                        datetime(2025, 3, 2, 8, 15, 1, 500000, tzinfo=timezone.utc),
                                        datetime(2025, 3, 2, 8, 15, 2, 750000, tzinfo=timezone.utc)]


def test_go_time_string_with_its_monotonic_clock_is_read_under_a_time_key(tmp_path):
    log = tmp_path / "app.log"
    log.write_text('time="2025-03-02 09:15:00.25 +0100 CET m=+12.500000001" level=info msg="tick"\n'
                   'time="2025-03-02 09:15:01 +0100 CET m=+13.5" level=info msg="tock"\n')
    events = read(log)
    assert [e.time for e in events] == [datetime(2025, 3, 2, 8, 15, 0, 250000, tzinfo=timezone.utc),
                                        datetime(2025, 3, 2, 8, 15, 1, tzinfo=timezone.utc)]
    assert all("time_inferred" not in e.fields for e in events)


def test_a_level_between_slogs_names_is_written_not_guessed(tmp_path):
    log = tmp_path / "go.log"
    log.write_text("2025/03/02 08:15:00 INFO+2 cache resized size=64\n2025/03/02 08:15:01 WARN-1 queue long n=9\n")
    events = read(log)
    assert [e.level for e in events] == ["INFO", "WARN"]
    assert [e.message for e in events] == ["cache resized size=64", "queue long n=9"]
    assert all(not e.fields.get("level_inferred") for e in events)
    bare = tmp_path / "bare.log"
    bare.write_text("INFO+1 cache resized size=64\nINFO+1 cache resized size=128\n")
    assert [e.level for e in read(bare)] == ["INFO", "INFO"]


def test_a_json_record_cut_off_by_its_shipper_keeps_what_it_wrote_before_the_cut(tmp_path):
    """A shipper's line limit cut an ERROR record inside its message: its time, level, service and host
    were written before the cut and are the event's; the message goes as far as it was written, and the
    event says it was cut. It was read as a plain line, its service unnamed and its title the raw JSON."""
    log = tmp_path / "app.jsonl"
    log.write_text('{"ts":"2025-04-01T10:00:00Z","app":"billing-api","host":"billing-1","severity":"INFO","text":"invoice run started"}\n'
                   '{"ts":"2025-04-01T10:00:05Z","app":"billing-api","host":"billing-1","severity":"ERROR","text":"PUT /v2/invoices/88 fail\n'
                   '{"ts":"2025-04-01T10:00:09Z","app":"billing-api","host":"billing-1","severity":"INFO","text":"invoice run done"}\n')
    events = read(log)
    assert len(events) == 3
    cut = events[1]
    assert (cut.service, cut.host, cut.level) == ("billing-api", "billing-1", "ERROR")
    assert cut.time == datetime(2025, 4, 1, 10, 0, 5, tzinfo=timezone.utc)
    assert cut.message.startswith("PUT /v2/invoices/88 fail") and "{" not in cut.message
    assert cut.fields.get("truncated") is True


def test_a_whole_object_that_does_not_parse_or_a_lone_pair_is_no_cut_record(tmp_path):
    from pipeline.ingest.structured import cut_record

    assert cut_record('{"ts":"2025-04-01T10:00:05Z","level":"ERROR","msg":"bad" oops}') is None  # whole, malformed
    assert cut_record('{"msg":"only this') is None  # one pair says too little
    assert cut_record('{"ts":"2025-04-01T10:00:05Z","msg":"half a') == {"ts": "2025-04-01T10:00:05Z", "msg": "half a…",
                                                                        "truncated": True}
