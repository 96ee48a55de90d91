"""Directive lines configure the layout instead of becoming events (issue 34.3): W3C's `#Fields:`.

The IIS log is KinesisTap's W3SVC parser test (awslabs/kinesis-agent-windows, Apache 2.0; see
tests/data/loggers/README.md for the path and commit); the mid-file `#Fields:` change is that
test's `TestW3SVCLogs_HeaderLineInTheMiddle_WithDefaultMapping`."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from pipeline.ingest.reading import LogFile

LOGGERS = Path(__file__).parent / "data" / "loggers"


def events_of(path: Path) -> list:
    return [item for item, _ in LogFile(path, max_bytes=1 << 20).scan(0, final=True, settled=True)]


def test_an_iis_log_is_read_by_the_columns_its_fields_directive_names():
    events = events_of(LOGGERS / "kinesistap-w3svc.log")
    assert len(events) == 2  # the four directive lines are the layout, not events
    first, second = events
    assert first.fields["format"] == "w3c"
    assert first.time == datetime(2017, 5, 31, 6, 0, 30, tzinfo=timezone.utc)  # W3C writes UTC
    assert "time_inferred" not in first.fields
    assert first.fields["time-taken"] == "128" and second.fields["time-taken"] == "3"
    assert first.fields["cs-uri-stem"] == "/" and second.fields["cs(Referer)"] == "http://localhost/"
    assert "cs-uri-query" not in first.fields  # `-` is an empty value
    assert first.message.startswith("W3SVC1 EC2AMAZ-HCNHA1G ::1 GET / ")  # the line after its time columns
    assert second.position.endswith(f"@{(LOGGERS / 'kinesistap-w3svc.log').read_bytes().index(b'2017-05-31 06:00:30 W3SVC1 EC2AMAZ-HCNHA1G ::1 GET /iisstart')}")


def test_a_fields_directive_mid_file_changes_the_columns_of_the_lines_after_it(tmp_path):
    log = tmp_path / "w3c.log"
    log.write_text("#Fields: date time key1\n2017-05-31 06:00:30 value1\n"
                   "#Fields: date time key2\n2017-05-31 06:00:31 value2\n")
    first, second = events_of(log)
    assert first.fields["key1"] == "value1" and "key2" not in first.fields
    assert second.fields["key2"] == "value2" and "key1" not in second.fields
    assert second.time == datetime(2017, 5, 31, 6, 0, 31, tzinfo=timezone.utc)


def test_a_hash_line_of_a_log_without_w3c_columns_stays_an_event(tmp_path):
    log = tmp_path / "app.log"
    log.write_text("2024-05-01 10:00:00 INFO start\n#Date: not a directive here\n")
    assert [e.message for e in events_of(log)][-1] == "#Date: not a directive here"


def test_zeeks_header_names_its_tab_separated_columns_and_is_no_event(tmp_path):
    """Zeek's (Bro's) ASCII logs: `#fields` names the columns, `ts` (epoch seconds) is the time, `-`
    is unset; the header lines (`#separator`, `#types`, `#close`...) configure, they are not records."""
    from tests.support import read_log, utc

    path = tmp_path / "http.log"
    path.write_text("#separator \\x09\n#set_separator\t,\n#empty_field\t(empty)\n#unset_field\t-\n#path\thttp\n"
                    "#open\t2024-03-01-08-00-00\n#fields\tts\tuid\tid.orig_h\tmethod\thost\turi\tstatus_code\n"
                    "#types\ttime\tstring\taddr\tstring\tstring\tstring\tcount\n"
                    "1709280001.250000\tCwFs1P2\t192.0.2.76\tGET\tshop.example\t/cart\t200\n"
                    "1709280002.500000\tCJxSUg\t192.0.2.76\tPOST\tshop.example\t-\t503\n"
                    "#close\t2024-03-01-08-00-05\n")
    events = read_log(path)
    assert [e.time for e in events] == [utc(2024, 3, 1, 8, 0, 1, 250000), utc(2024, 3, 1, 8, 0, 2, 500000)]
    assert events[0].fields["method"] == "GET" and events[1].fields["status_code"] == "503"
    assert "uri" not in events[1].fields  # `-`: unset
