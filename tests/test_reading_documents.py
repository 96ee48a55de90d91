"""Records written as multi-line XML elements or YAML documents (pipeline/ingest/documents.py), read
through the product's reader: one event a document, its time, level and message by the keys' roles,
as a JSON logger's are. The lines are written here in the manner of log4j2's XmlLayout and YamlLayout
and log4j 1's XMLLayout (no file of those projects is copied)."""
from __future__ import annotations

from pipeline.ingest.key_roles import seconds_and_nanos
from tests.support import read_lines, utc

XML_EVENT = ['<Event xmlns="http://logging.apache.org/log4j/2.0/events"',
             '       timeMillis="1700000000250"',
             '       level="WARN"',
             '       loggerName="billing.Job"',
             '       thread="main">',
             '  <Instant epochSecond="1700000000" nanoOfSecond="250000000"/>',
             '  <Message>retrying the charge</Message>',
             '  <Source',
             '      class="billing.Job"',
             '      line="29"/>',
             '</Event>']


def test_a_multi_line_xml_event_is_one_record_read_by_its_attributes_and_elements(tmp_path):
    second = [line.replace("1700000000250", "1700000001500").replace("WARN", "ERROR")
              .replace("retrying the charge", "charge failed") for line in XML_EVENT]
    events = read_lines(tmp_path, XML_EVENT + second)
    assert [e.message for e in events] == ["retrying the charge", "charge failed"]
    assert [e.level for e in events] == ["WARN", "ERROR"]
    assert events[0].time == utc(2023, 11, 14, 22, 13, 20, 250_000)
    assert events[1].time == utc(2023, 11, 14, 22, 13, 21, 500_000)
    assert events[0].service == "billing.Job"


def test_a_log4j1_xml_event_with_an_undeclared_prefix_is_read(tmp_path):
    lines = ['<log4j:event logger="orders.Api" timestamp="1700000000250" level="ERROR" thread="main">',
             "<log4j:message><![CDATA[payment gateway timed out]]></log4j:message>",
             "</log4j:event>"]
    [event] = read_lines(tmp_path, lines)
    assert event.message == "payment gateway timed out" and event.level == "ERROR"
    assert event.time == utc(2023, 11, 14, 22, 13, 20, 250_000)


def test_yaml_documents_are_one_record_each_with_an_instant_of_seconds_and_nanos(tmp_path):
    lines = ["---", "instant:", "  epochSecond: 1700000000", "  nanoOfSecond: 118000000", 'level: "INFO"',
             'loggerName: "HelloWorld"', 'message: "Hello, world!"', "thrown:", '  message: "error message"',
             "---", "timeMillis: 1700000001000", "level: ERROR", "message: second one", "..."]
    events = read_lines(tmp_path, lines)
    assert [(e.message, e.level) for e in events] == [("Hello, world!", "INFO"), ("second one", "ERROR")]
    assert events[0].time == utc(2023, 11, 14, 22, 13, 20, 118_000)
    assert events[1].time == utc(2023, 11, 14, 22, 13, 21)


def test_a_text_log_keeps_its_dashed_and_angled_lines_as_text(tmp_path):
    # `---` and `<tag>` lines after a text record are no documents: nothing is swallowed up to a closer
    lines = ["2026-01-02 03:04:05 INFO start", "---", "2026-01-02 03:04:06 INFO next",
             "<config>", "2026-01-02 03:04:07 ERROR failed"]
    events = read_lines(tmp_path, lines)
    assert [e.message.split("\n")[0] for e in events] == ["start", "next", "failed"]
    assert events[-1].level == "ERROR"
    opened = read_lines(tmp_path, ["<ERROR> disk full", "<INFO> recovered"])  # a tag with text after it
    assert len(opened) == 2
    # a `---` line opening a text log is a YAML document only while its lines are YAML's
    banner = read_lines(tmp_path, ["---", "2026-01-02 03:04:05 INFO start", "2026-01-02 03:04:06 ERROR failed"])
    assert [e.message for e in banner][-2:] == ["start", "failed"] and banner[-1].level == "ERROR"
    tagged = read_lines(tmp_path, ["<Configuration>", "2026-01-02 03:04:05 INFO start", "2026-01-02 03:04:06 ERROR failed"])
    assert [e.message for e in tagged][-2:] == ["start", "failed"]


def test_an_instant_of_seconds_and_nanos_is_one_epoch():
    assert seconds_and_nanos({"epochSecond": 1700000000, "nanoOfSecond": 250000000}) == 1700000000.25
    assert seconds_and_nanos({"seconds": 1700000000, "nanos": 5}) == 1700000000 + 5e-9
    assert seconds_and_nanos({"seconds": 1700000000, "count": 5}) is None
    assert seconds_and_nanos({"seconds": "x", "nanos": 5}) is None
