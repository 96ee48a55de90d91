"""Container (CRI) logs: `P` partial lines joined with their stream's `F` line, then each stream's
lines into records (issue 34.4).

`fluent-bit-cri.log` and its expected records are fluent-bit's multiline test (`cri_input` and
`cri_output` of tests/internal/multiline.c, Apache 2.0; tests/data/loggers/README.md). The Java trace
is fluent-bit's `java_input` of the same file, each line written as a CRI `F` line of stderr."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from pipeline.ingest.reading import LogFile

LOGGERS = Path(__file__).parent / "data" / "loggers"
FLUENT_BIT_EXPECTED = ["1a. some multiline log", "1b. some multiline log", "2a. another multiline log",
                       "2b. another multiline log", "3a. non multiline 1", "4a. non multiline 2",
                       "3b. non multiline 1", "4b. non multiline 2"]
JAVA = ['Exception in thread "main" java.lang.IllegalStateException: ..null property',
        "     at com.example.myproject.Author.getBookIds(xx.java:38)",
        "     at com.example.myproject.Bootstrap.main(Bootstrap.java:14)",
        "Caused by: java.lang.NullPointerException",
        "     at com.example.myproject.Book.getId(Book.java:22)",
        "     at com.example.myproject.Author.getBookIds(Author.java:35)",
        "     ... 1 more",
        "single line"]


def scan(path: Path) -> list:
    return [item for item, _ in LogFile(path, max_bytes=1 << 20).scan(0, final=True, settled=True)]


def read_in_batches(path: Path, budget: int) -> list:
    log, offset, items = LogFile(path, max_bytes=1 << 20), 0, []
    for _ in range(1000):
        read = log.read(offset, final=True, settled=True, budget=budget)
        items += read.items
        if read.offset == offset and not read.items:
            return items
        offset = read.offset
    raise AssertionError("the reads made no progress")


def test_fluent_bits_cri_lines_are_the_records_it_expects():
    events = scan(LOGGERS / "fluent-bit-cri.log")
    assert sorted(e.message for e in events) == sorted(FLUENT_BIT_EXPECTED)
    first = min(events, key=lambda e: int(e.position.rsplit("@", 1)[1]))
    assert first.fields["format"] == "cri" and first.fields["stream"] == "stdout"
    assert first.host is None  # `stdout` is the stream, not a syslog host
    assert first.time == datetime(2019, 5, 7, 18, 57, 50, 904275, tzinfo=timezone.utc)  # its first part's time
    assert first.position.endswith("@0")


def interleaved(tmp_path: Path) -> Path:
    """stdout's partial lines with stderr's written between them, and a Java trace on stderr."""
    lines = ["2019-05-07T18:57:50.904275087+00:00 stdout P 1a. some ",
             "2019-05-07T18:57:50.904275087+00:00 stderr P 1b. some "]
    lines += [f"2019-05-07T18:57:51.00000000{n}+00:00 stderr F {text}" for n, text in enumerate(JAVA[:7])]
    lines += ["2019-05-07T18:57:51.904275088+00:00 stdout P multiline ",
              "2019-05-07T18:57:51.904275088+00:00 stderr F multiline log",
              "2019-05-07T18:57:52.904275089+00:00 stdout F log",
              f"2019-05-07T18:57:53.000000000+00:00 stderr F {JAVA[7]}"]
    path = tmp_path / "pod.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_partial_lines_join_per_stream_and_a_trace_printed_line_by_line_is_one_record(tmp_path):
    events = {e.message: e for e in scan(interleaved(tmp_path))}
    assert set(events) == {"1a. some multiline log",
                           '1b. some Exception in thread "main" java.lang.IllegalStateException: ..null property',
                           "multiline log", "single line"}
    trace = events['1b. some Exception in thread "main" java.lang.IllegalStateException: ..null property']
    assert trace.stack.splitlines() == [line for line in JAVA[1:7]]
    assert trace.exception == "java.lang.IllegalStateException"


def test_reads_cut_anywhere_lose_no_record_and_repeat_none(tmp_path):
    path = interleaved(tmp_path)
    whole = sorted((e.position, e.message) for e in scan(path))
    for budget in (1, 2, 3):
        assert sorted((e.position, e.message) for e in read_in_batches(path, budget)) == whole


def test_a_containers_logger_header_gives_the_level_and_message_not_the_runtimes_tag(tmp_path):
    """The `F` tag is the runtime's, not FATAL: the level and message are the container's own header's."""
    path = tmp_path / "pod.log"
    path.write_text("2024-03-01T08:00:01.123456789Z stderr F 2024-03-01 08:00:01.123 ERROR [main] c.e.Orders - payment failed\n"
                    "2024-03-01T08:00:01.223456789Z stderr F \tat com.example.Orders.pay(Orders.java:12)\n"
                    "2024-03-01T08:00:02.123456789Z stdout F 2024-03-01 08:00:02.123 INFO [main] c.e.Orders - order placed\n"
                    "2024-03-01T08:00:03.123456789Z stdout F 2024-03-01 08:00:03.001 WARN [main] c.e.Orders - slow reply\n")
    events = scan(path)
    assert [(e.level, e.message) for e in events] == [
        ("ERROR", "payment failed"), ("INFO", "order placed"), ("WARN", "slow reply")]
    assert events[0].stack.strip() == "at com.example.Orders.pay(Orders.java:12)"
    assert events[0].fields["stream"] == "stderr" and "level_inferred" not in events[0].fields


def test_docker_json_file_lines_are_read_as_the_container_text_they_carry(tmp_path):
    """Docker's json-file driver: `log` is the container's line, joined per stream as CRI's are."""
    path = tmp_path / "container-json.log"
    path.write_text(
        '{"log":"2024-03-01 08:00:01.123 ERROR [main] c.e.Orders - payment failed\\n","stream":"stderr","time":"2024-03-01T08:00:01.123456789Z"}\n'
        '{"log":"2024-03-01 08:00:01.200 INFO [main] c.e.Orders - order placed\\n","stream":"stdout","time":"2024-03-01T08:00:01.200000000Z"}\n'
        '{"log":"\\tat com.example.Orders.pay(Orders.java:12)\\n","stream":"stderr","time":"2024-03-01T08:00:01.223456789Z"}\n'
        '{"log":"a long line cut by the driver, ","stream":"stdout","time":"2024-03-01T08:00:02.000000000Z"}\n'
        '{"log":"its end\\n","stream":"stdout","time":"2024-03-01T08:00:02.000000001Z"}\n')
    events = scan(path)
    assert [(e.level, e.message) for e in events][:2] == [("ERROR", "payment failed"), ("INFO", "order placed")]
    assert events[0].stack.strip() == "at com.example.Orders.pay(Orders.java:12)"
    assert events[2].message == "a long line cut by the driver, its end" and len(events) == 3
    assert events[0].time == datetime(2024, 3, 1, 8, 0, 1, 123456, tzinfo=timezone.utc)  # the runtime's


def test_a_json_file_part_is_not_ended_by_a_cri_line_and_a_tag_may_carry_more_after_a_colon(tmp_path):
    """Two writers in one file (Docker's json-file and the CRI format) join their parts each within its
    own stream; the kubelet reads a tag `P:TAG1:TAG2` as `P` (kubernetes' logs_test.go cases)."""
    path = tmp_path / "mixed.log"
    path.write_text(
        '{"log":"docker stdout test log","stream":"stdout","time":"2016-10-20T18:39:20.57606443Z"}\n'
        "2016-10-20T18:39:20.57606443Z stdout F cri stdout test log\n"
        "2016-10-20T18:39:21.57606443Z stdout P:TAG1:TAG2 cri partial, \n"
        "2016-10-20T18:39:21.57606443Z stdout F:TAG1 its end\n")
    events = scan(path)
    assert [e.message for e in events] == ["docker stdout test log", "cri stdout test log", "cri partial, its end"]
    assert all(e.fields.get("format") == "cri" for e in events)
