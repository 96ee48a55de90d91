"""Raw log lines of every known format parse to the right time, level, message and service."""
from __future__ import annotations

import csv
import json
from datetime import datetime, timezone

import pytest

from pipeline.errors import InvalidEvent
from pipeline.ingest.formats import SourceParser, decode_line, parse_lines, parse_record, parse_time

from tests.support import LOGHUB, LOGHUB_SYSTEMS
UTC = timezone.utc


def _t(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def _one(line: str, **options):
    return parse_record(line, **options)


# -- JSON dialects -----------------------------------------------------------------------------

def test_pino_epoch_ms_numeric_level_and_msg():
    r = _one('{"level":50,"time":1704164645000,"pid":1,"hostname":"h1","msg":"db down","service":"orders"}')
    assert (r.format, r.time, r.level, r.level_name, r.message, r.service, r.host) == (
        "json", _t(2024, 1, 2, 3, 4, 5), 50, "ERROR", "db down", "orders", "h1")


def test_zap_float_seconds_caller_and_stacktrace():
    r = _one('{"level":"error","ts":1704164645.5,"caller":"main.go:12","msg":"boom",'
             '"stacktrace":"main.main\\n\\t/app/main.go:12"}')
    assert r.time == _t(2024, 1, 2, 3, 4, 5, 500000) and r.level_name == "ERROR"
    assert r.message == "boom" and r.stack.startswith("main.main") and r.fields["caller"] == "main.go:12"


def test_structlog_event_is_the_message():
    r = _one('{"event":"payment failed","level":"warning","timestamp":"2024-01-02T03:04:05Z"}')
    assert (r.message, r.level_name, r.time) == ("payment failed", "WARN", _t(2024, 1, 2, 3, 4, 5))


def test_clef_rendered_message_template_and_exception():
    r = _one('{"@t":"2024-01-02T03:04:05.1234567+02:00","@m":"Order 5 failed","@mt":"Order {Id} failed",'
             '"@l":"Error","@x":"System.InvalidOperationException: bad\\n   at X.Y()","Id":5}')
    assert r.time == _t(2024, 1, 2, 1, 4, 5, 123456) and r.level_name == "ERROR"
    assert r.message == "Order 5 failed" and r.fields["message_template"] == "Order {Id} failed"
    assert r.exception == "System.InvalidOperationException" and r.fields["Id"] == 5


def test_clef_without_level_is_information():
    assert _one('{"@t":"2024-01-02T03:04:05Z","@mt":"Started"}').level_name == "INFO"


def test_ecs_nested_fields():
    r = _one(json.dumps({
        "@timestamp": "2024-01-02T03:04:05.000Z", "log": {"level": "ERROR"}, "message": "timeout",
        "service": {"name": "cart"}, "host": {"name": "web-1"}, "ecs.version": "8.0",
        "error": {"type": "java.net.SocketTimeoutException", "message": "Read timed out",
                  "stack_trace": "java.net.SocketTimeoutException: Read timed out\n\tat x.y(Z.java:1)"}}))
    assert (r.service, r.host, r.level_name, r.exception) == (
        "cart", "web-1", "ERROR", "java.net.SocketTimeoutException")
    assert r.stack.startswith("java.net.SocketTimeoutException") and r.fields["error.message"] == "Read timed out"


def test_ecs_flat_log_level():
    r = _one('{"@timestamp":"2024-01-02T03:04:05Z","log.level":"warn","message":"slow","service.name":"api"}')
    assert (r.level_name, r.service) == ("WARN", "api")


def test_bunyan_name_is_the_service():
    r = _one('{"name":"api","hostname":"box","pid":7,"level":60,"msg":"crash",'
             '"time":"2024-01-02T03:04:05.000Z","v":0}')
    assert (r.service, r.host, r.level_name, r.message) == ("api", "box", "FATAL", "crash")


def test_gelf_syslog_level_and_underscore_fields():
    r = _one('{"version":"1.1","host":"gw","short_message":"disk full","full_message":"disk full on /var",'
             '"timestamp":1704164645.25,"level":3,"_service":"storage","_user":"bob"}')
    assert (r.message, r.host, r.service, r.level_name) == ("disk full", "gw", "storage", "ERROR")
    assert r.time == _t(2024, 1, 2, 3, 4, 5, 250000) and r.fields["user"] == "bob"
    assert r.stack == "disk full on /var"


def test_logstash_event():
    r = _one('{"@timestamp":"2024-01-02T03:04:05.000Z","@version":"1","message":"hello","level":"INFO"}')
    assert (r.message, r.level_name, r.time) == ("hello", "INFO", _t(2024, 1, 2, 3, 4, 5))


def test_contract_aliases_still_work():
    r = _one('{"_time":1704164645,"_raw":"x failed","sourcetype":"pos","severity":"CRITICAL",'
             '"exception_type":"KeyError","traceId":"abc","extra":1}')
    assert (r.message, r.service, r.level_name, r.exception, r.trace_id) == (
        "x failed", "pos", "FATAL", "KeyError", "abc")
    assert r.fields["extra"] == 1


def test_an_unknown_level_is_kept_raw_not_guessed():
    r = _one('{"time":"2024-01-02T03:04:05Z","msg":"x","level":"banana"}')
    assert r.level == "banana" and r.level_name is None


# -- logfmt ------------------------------------------------------------------------------------

def test_logfmt_with_quoted_values():
    r = _one('time=2024-01-02T03:04:05Z level=error msg="connect failed: \\"db\\"" service=api err="dial tcp"')
    assert (r.format, r.time, r.level_name, r.message, r.service) == (
        "logfmt", _t(2024, 1, 2, 3, 4, 5), "ERROR", 'connect failed: "db"', "api")
    assert r.fields["err"] == "dial tcp"


def test_text_with_a_few_equals_signs_is_not_logfmt():
    assert _one("authentication failure; logname= uid=0 euid=0 tty=ssh").format == "text"


# -- text formats ------------------------------------------------------------------------------

def test_syslog_rfc3164_gets_the_reference_year():
    r = _one("Jun 14 15:16:01 combo sshd(pam_unix)[19939]: authentication failure; rhost=1.2.3.4", year=2005)
    assert (r.format, r.time, r.host, r.service, r.fields["pid"]) == (
        "syslog", _t(2005, 6, 14, 15, 16, 1), "combo", "sshd(pam_unix)", "19939")
    assert r.message == "authentication failure; rhost=1.2.3.4" and r.level_name == "ERROR"


def test_syslog_without_year_is_never_far_in_the_future():
    now = _t(2024, 1, 5, 0, 0, 0)
    assert _one("Dec 31 23:59:59 host app: late", now=now).time == _t(2023, 12, 31, 23, 59, 59)
    assert _one("Jan  4 10:00:00 host app: early", now=now).time == _t(2024, 1, 4, 10, 0, 0)


def test_syslog_priority_gives_the_level():
    r = _one("<11>Feb  5 17:32:18 10.0.0.99 myapp[123]: Use the BFG!", year=2024)
    assert (r.level, r.level_name, r.service, r.fields["facility"]) == (3, "ERROR", "myapp", 1)


def test_syslog_rfc5424():
    r = _one("<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - 'su root' failed")
    assert (r.format, r.time, r.host, r.service, r.level_name, r.message) == (
        "syslog5424", _t(2003, 10, 11, 22, 14, 15, 3000), "mymachine.example.com", "su", "FATAL",
        "'su root' failed")


def test_syslog_rfc5424_structured_data_with_a_bare_bracket_in_a_quoted_value_and_no_msg():
    # a firewall's export: its values quote a `]` without escaping it, and it writes no MSG after them
    sd = '[fw@1 act:"Deny"; rule:"edge[v2] inbound"; src:"198.51.100.7"]'
    r = _one(f"<134>1 2024-06-01T10:00:00Z edge-fw-2 FwLog 4410 - {sd}")
    assert (r.format, r.host, r.service, r.fields["procid"]) == ("syslog5424", "edge-fw-2", "FwLog", "4410")
    assert r.message == sd and r.fields["structured_data"] == sd
    r = _one(f"<134>1 2024-06-01T10:00:01Z edge-fw-2 FwLog 4410 - {sd} rule matched")
    assert (r.format, r.message) == ("syslog5424", "rule matched")


def test_apache_error_log():
    r = _one("[Sun Dec 04 04:47:44 2005] [error] mod_jk child workerEnv in error state 6")
    assert (r.format, r.time, r.level_name, r.message) == (
        "apache", _t(2005, 12, 4, 4, 47, 44), "ERROR", "mod_jk child workerEnv in error state 6")


def test_apache_24_error_log():
    r = _one("[Wed Oct 11 14:32:52.123456 2000] [core:error] [pid 35708:tid 43] [client 1.2.3.4] File missing")
    assert r.level_name == "ERROR" and r.fields["module"] == "core" and r.fields["pid"] == "35708"
    assert r.message == "[client 1.2.3.4] File missing"


def test_nginx_error_log():
    r = _one('2024/01/02 03:04:05 [error] 123#0: *5 open() "/x" failed (2: No such file or directory)')
    assert (r.format, r.time, r.level_name) == ("nginx", _t(2024, 1, 2, 3, 4, 5), "ERROR")
    assert r.message == 'open() "/x" failed (2: No such file or directory)'


def test_log4j_with_thread_and_logger():
    r = _one("2015-10-18 18:01:47,978 INFO [main] org.apache.hadoop.MRAppMaster: Created MRAppMaster")
    assert (r.format, r.time, r.level_name, r.message, r.fields["logger"], r.fields["thread"]) == (
        "log4j", _t(2015, 10, 18, 18, 1, 47, 978000), "INFO", "Created MRAppMaster",
        "org.apache.hadoop.MRAppMaster", "main")


def test_compact_date_with_pid_before_the_level():
    r = _one("081109 203615 148 INFO dfs.DataNode$PacketResponder: PacketResponder 1 terminating")
    assert (r.time, r.level_name, r.message, r.fields["pid"]) == (
        _t(2008, 11, 9, 20, 36, 15), "INFO", "PacketResponder 1 terminating", "148")


def test_two_digit_year_slash_date():
    r = _one("17/06/09 20:10:40 INFO spark.SecurityManager: Changing view acls to: yarn")
    assert (r.time, r.message, r.fields["logger"]) == (
        _t(2017, 6, 9, 20, 10, 40), "Changing view acls to: yarn", "spark.SecurityManager")


def test_dash_separated_layout_with_nested_brackets():
    r = _one("2015-07-29 17:41:44,747 - WARN  [QuorumPeer[myid=1]/0:0:0:0:0:0:0:0:2181:Leader@774]"
             " - Notification time out: 3200")
    assert (r.level_name, r.message) == ("WARN", "Notification time out: 3200")
    assert r.fields["thread"].startswith("QuorumPeer[myid=1]")


def test_python_logging_layouts():
    assert _one("2024-01-02 03:04:05,123 - myapp.db - ERROR - query failed").message == "query failed"
    r = _one("ERROR:root:something broke")
    assert (r.level_name, r.message, r.time) == ("ERROR", "something broke", None)


def test_logback_default_layout():
    r = _one("2024-01-02 03:04:05.123 [main] WARN  com.foo.Bar - slow query")
    assert (r.level_name, r.message, r.fields["logger"]) == ("WARN", "slow query", "com.foo.Bar")


def test_glog_header():
    r = _one("E0102 15:04:05.000123 1234 file.go:12] sync failed", year=2024)
    assert (r.format, r.time, r.level_name, r.message, r.fields["caller"]) == (
        "glog", _t(2024, 1, 2, 15, 4, 5, 123), "ERROR", "sync failed", "file.go:12")


def test_go_standard_log():
    r = _one("2009/11/10 23:00:00 listen tcp :80: bind: address already in use")
    assert (r.format, r.time, r.message) == ("golog", _t(2009, 11, 10, 23, 0, 0),
                                              "listen tcp :80: bind: address already in use")


def test_bracketed_year_less_time_with_program():
    r = _one("[10.30 16:49:06] chrome.exe *64 - proxy.example.com:5070 open through proxy", year=2016)
    assert (r.format, r.time, r.fields["program"], r.message) == (
        "bracket-time", _t(2016, 10, 30, 16, 49, 6), "chrome.exe *64", "proxy.example.com:5070 open through proxy")
    assert r.service is None  # the program is the proxied client, not the writer of the log


def test_a_user_pattern_with_named_groups():
    pattern = r"(?P<time>\S+) \| (?P<level>\w+) \| (?P<service>[\w-]+) \| (?P<message>.*)"
    r = _one("2024-01-02T03:04:05Z | crit | billing | card declined", pattern=pattern)
    assert (r.format, r.time, r.level_name, r.service, r.message) == (
        "custom", _t(2024, 1, 2, 3, 4, 5), "FATAL", "billing", "card declined")


def test_a_user_pattern_needs_a_message_group():
    with pytest.raises(ValueError, match="message"):
        SourceParser(pattern=r"(?P<time>\S+) (?P<rest>.*)")


def test_naive_times_are_read_in_the_source_timezone():
    r = _one("2024-07-01 12:00:00,000 ERROR x.Y: boom", timezone="Europe/Paris")
    assert r.time == _t(2024, 7, 1, 10, 0, 0)
    assert parse_time("2024-07-01T12:00:00+02:00") == _t(2024, 7, 1, 10, 0, 0)


# -- whatever is text is kept; only binary is refused -----------------------------------------

def test_unknown_text_is_a_record_with_a_keyword_level():
    r = _one("something exploded: FATAL disk error")
    assert (r.format, r.message, r.level_name) == ("text", "something exploded: FATAL disk error", "FATAL")
    assert _one("all quiet").level_name is None


def test_a_multi_line_record_keeps_its_stack_and_exception():
    text = ("2024-01-02 03:04:05,123 ERROR [main] com.acme.Svc: order failed\n"
            "java.lang.IllegalStateException: boom\n\tat com.acme.Svc.run(Svc.java:10)")
    r = _one(text)
    assert r.message == "order failed" and r.exception == "java.lang.IllegalStateException"
    assert r.stack.endswith("(Svc.java:10)")


def test_a_python_traceback_names_the_final_exception():
    r = _one('2024-01-02 03:04:05,123 ERROR x.y: boom\nTraceback (most recent call last):\n'
             '  File "a.py", line 1, in <module>\nValueError: bad')
    assert r.exception == "ValueError"


@pytest.mark.parametrize("raw, reason", [
    (b"abc\x00def", "NUL"), (b"caf\xe9", "invalid UTF-8"), (bytes(range(1, 32)) * 3, "binary"),
])
def test_non_text_is_refused_with_a_reason(raw, reason):
    with pytest.raises(InvalidEvent, match=reason):
        decode_line(raw)


def test_text_with_ansi_colours_and_a_bom_decodes():
    text = decode_line("\ufeff\x1b[31mERROR\x1b[0m: disk full".encode())
    assert _one(text).level_name == "ERROR"


def test_detection_picks_the_majority_format_and_falls_back_per_line():
    lines = ["Jun 14 15:16:01 combo sshd[1]: a"] * 5 + ['{"msg": "json", "time": 1}', "plain words"]
    records = list(parse_lines(lines, year=2005))
    assert [r.format for r in records] == ["syslog"] * 5 + ["json", "text"]
    parser = SourceParser()
    assert parser.detect(lines) == "syslog"


# -- real files --------------------------------------------------------------------------------

@pytest.mark.usefixtures("needs_loghub")
@pytest.mark.parametrize("system", LOGHUB_SYSTEMS)
def test_every_loghub_line_parses_into_a_record_with_a_time(system):
    folder = LOGHUB / system
    lines = decode_line((folder / f"{system}_2k.log").read_bytes()).splitlines()
    with open(folder / f"{system}_2k.log_structured.csv", encoding="utf-8", newline="") as f:
        content = [row["Content"].strip() for row in csv.DictReader(f)]
    records = list(parse_lines(lines, year=2016))
    assert len(records) == len(lines) == len(content)
    assert all(r.format != "text" and r.time is not None for r in records)
    same = sum(r.message.strip() == c for r, c in zip(records, content))
    assert same >= 0.99 * len(content)  # measured: 1992..2000 of 2000


def test_a_log4j_layout_is_tried_only_on_lines_that_hold_what_it_needs():
    # a row of the layout table is skipped when the line lacks the literal every match of it holds
    # (`needs`): every line a row matches holds it, so skipping changes no line's reading
    from pipeline.ingest.line_formats import LINE_LAYOUTS

    lines = ["2024-01-02 03:04:05.123  INFO 4711 --- [app] [  thread] o.a.c.Logger  : msg",
             "2024-01-02 03:04:05.123 INFO 4711 ---  [main] o.a.c.Logger : msg",
             "2015-07-29 17:41:44,747 - INFO  [thread] - msg", "2015-07-29 17:41:44,747   -  INFO [t] -  msg",
             "2024-01-02 03:04:05.123 [main] INFO  com.foo.Bar - msg", "2024-01-02 03:04:05,123 - name - ERROR - msg",
             "2015-10-18 18:01:47,978 INFO [main] org.apache.Foo: msg", "081109 203615 148 INFO dfs.DataNode$X: msg"]
    if LOGHUB.is_dir():
        lines += [line for f in sorted(LOGHUB.glob("*/*_2k.log")) for line in f.read_text(encoding="utf-8").splitlines()]
    tried = 0
    for row in LINE_LAYOUTS:
        for line in lines:
            if row.needs is not None and row.regex.match(line):
                tried += 1
                assert row.needs in line, (row.pattern[:40], line)
    assert tried >= 4  # each needing layout matched some line
    record = parse_record(lines[3])
    assert (record.format, record.message, record.fields["thread"]) == ("log4j", "msg", "t")
