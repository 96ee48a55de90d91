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


# -- any logger writing each record as one XML element (issue 34) --------------------------------------
# Lines written here in the manner of Zend/Laminas' Xml formatter, log4j 1's XMLLayout behind its file's
# prolog, log4net's XmlLayout and java.util.logging's XMLFormatter; no file of those projects is copied.

def test_one_xml_element_a_line_is_read_by_its_child_elements(tmp_path):
    lines = ["<entry><timestamp>2025-06-01T08:30:00+02:00</timestamp><message>cache warmed</message>"
             "<priority>6</priority><priorityName>INFO</priorityName></entry>",
             "",
             "<entry><timestamp>2025-06-01T08:31:00+02:00</timestamp><message>quota exceeded</message>"
             "<priority>3</priority><priorityName>ERR</priorityName><extra><user>7</user></extra></entry>"]
    events = read_lines(tmp_path, lines)
    assert [(e.message, e.level) for e in events] == [("cache warmed", "INFO"), ("quota exceeded", "ERROR")]
    assert events[1].time == utc(2025, 6, 1, 6, 31)
    assert events[1].fields["format"] == "xml"


def test_xml_events_after_a_declaration_and_a_comment_are_read_with_their_throwable_as_the_stack(tmp_path):
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<!--", "  ~ written by the test", "  -->",
             '<log4j:event logger="shop.Cart" timestamp="1750000000500" level="ERROR" thread="worker-2">',
             "<log4j:message><![CDATA[checkout aborted]]></log4j:message>",
             "<log4j:throwable><![CDATA[java.lang.IllegalStateException: empty cart",
             "\tat shop.Cart.checkout(Cart.java:88)",
             "]]></log4j:throwable>",
             "</log4j:event>",
             "",
             '<log4j:event logger="shop.Cart" timestamp="1750000001000" level="INFO" thread="worker-2">',
             "<log4j:message><![CDATA[cart emptied]]></log4j:message>",
             "</log4j:event>"]
    events = read_lines(tmp_path, lines)
    aborted, emptied = events[-2:]
    assert (aborted.message, aborted.level, aborted.service) == ("checkout aborted", "ERROR", "shop.Cart")
    assert aborted.time == utc(2025, 6, 15, 15, 6, 40, 500_000)
    assert aborted.stack is not None and "Cart.java:88" in aborted.stack
    assert aborted.exception == "java.lang.IllegalStateException"
    assert aborted.fields["thread"] == "worker-2"
    assert (emptied.message, emptied.level) == ("cart emptied", "INFO")
    assert len(events) == 4  # the declaration and the comment stay what they are: text records


def test_an_element_whose_message_goes_over_lines_is_one_record(tmp_path):
    lines = ['<log4net:event logger="Api.Orders" timestamp="2025-06-01T10:00:00.5+00:00" level="WARN" thread="9">'
             "<log4net:message>slow query",
             "took 2.5 s</log4net:message></log4net:event>",
             '<log4net:event logger="Api.Orders" timestamp="2025-06-01T10:00:01+00:00" level="ERROR" thread="9">'
             "<log4net:message>order lost</log4net:message><log4net:exception>System.IO.IOException: pipe closed",
             "   at Api.Orders.Save()</log4net:exception></log4net:event>"]
    events = read_lines(tmp_path, lines)
    assert [e.message for e in events] == ["slow query\ntook 2.5 s", "order lost"]
    assert [e.level for e in events] == ["WARN", "ERROR"]
    assert events[1].stack is not None and "Api.Orders.Save" in events[1].stack
    assert events[1].exception == "System.IO.IOException"
    assert events[0].time == utc(2025, 6, 1, 10, 0, 0, 500_000)


def test_records_inside_a_wrapping_element_are_one_event_each(tmp_path):
    record = ["<record>", "  <date>2025-06-01T10:00:00.250Z</date>", "  <millis>1748772000250</millis>",
              "  <logger>db.Pool</logger>", "  <level>SEVERE</level>", "  <thread>12</thread>",
              "  <message>no connection left</message>", "</record>"]
    second = [line.replace("SEVERE", "INFO").replace("no connection left", "pool grown") for line in record]
    lines = ['<?xml version="1.0" encoding="UTF-8" standalone="no"?>', '<!DOCTYPE log SYSTEM "logger.dtd">',
             "<log>", *record, *second, "</log>"]
    events = read_lines(tmp_path, lines)
    read = [e for e in events if e.fields.get("format") == "xml"]
    assert [(e.message, e.level, e.service) for e in read] == [("no connection left", "ERROR", "db.Pool"),
                                                               ("pool grown", "INFO", "db.Pool")]
    assert read[0].time == utc(2025, 6, 1, 10, 0, 0, 250_000)
    # nothing lost: the prolog's two lines, the wrapper's two tags and the two records are six events
    assert len(events) == 6 and [e.message for e in events][2] == "<log>" and events[-1].message == "</log>"
    again = read_lines(tmp_path, lines)  # the same file read again gives the same events
    assert [e.event_id for e in again] == [e.event_id for e in events]


def test_lines_that_only_look_like_xml_stay_text(tmp_path):
    lines = ["<entry><message>unbalanced</msg></entry>",  # does not parse
             "<entry><message>&undeclared; entity</message></entry>",  # an entity nothing declares
             "<b>bold</b>"]  # parses, but holds no fields
    events = read_lines(tmp_path, lines)
    assert [e.message for e in events] == lines
    assert all(e.fields["format"] != "xml" for e in events)
