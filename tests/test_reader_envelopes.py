"""A collector's envelope (issue 34/35): a JSON or logfmt record whose message is the line the program
wrote, its own header included, is read as that line (CONTRACT §1). Read through the product's
reader (`LogFile`, as `ingest` and the poller read). The lines are written here in the manner of
common loggers and collectors (no third-party text)."""
from __future__ import annotations

import json

from tests.support import read_log as read, utc


def _envelopes(tmp_path, rows: list[dict], name: str = "collected.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return read(path)


def test_a_spring_boot_header_inside_the_message_is_read_and_the_envelope_keeps_its_time_and_service(tmp_path):
    rows = [{"time": f"2026-11-14T03:30:0{i}.010Z", "level": "error" if i == 1 else "info", "service": "orders",
             "message": f"2026-11-14 04:30:0{i}.010 {'ERROR' if i == 1 else 'INFO '} 1 --- [nio-8080-exec-{i}] "
                        f"o.s.web.servlet.DispatcherServlet        : request {i} handled"}
            for i in range(3)]
    rows.append({"time": "2026-11-14T03:30:05Z", "level": "info", "service": "orders",
                 "message": "cache hit ratio=0.97 window=60s"})
    events = _envelopes(tmp_path, rows)
    assert [e.message for e in events] == ["request 0 handled", "request 1 handled", "request 2 handled",
                                           "cache hit ratio=0.97 window=60s"]  # a plain message stays whole
    first = events[1]
    assert first.time == utc(2026, 11, 14, 3, 30, 1, 10_000)  # the envelope's time, not the program's
    assert first.fields["message_time"].startswith("2026-11-14T04:30:01.010")
    assert first.service == "orders" and first.level == "ERROR"
    assert first.fields["logger"] == "o.s.web.servlet.DispatcherServlet"  # the class is no service name


def test_an_envelope_without_a_level_takes_the_level_the_inner_header_writes_not_a_guess(tmp_path):
    # Docker/Vector envelopes carry only the stream; "Failed" would guess ERROR, the header says INFO
    rows = [{"time": "2026-11-14T03:30:01Z", "stream": "stderr", "service": "cache",
             "message": "2026-11-14 03:30:01,004 INFO  [main] c.e.Warmup - Failed entries retried: 0"},
            {"time": "2026-11-14T03:30:02Z", "stream": "stdout", "service": "cache",
             "message": "2026-11-14 03:30:02,004 WARN  [main] c.e.Warmup - warm-up slower than usual"}]
    events = _envelopes(tmp_path, rows)
    assert [(e.level, e.message) for e in events] == [
        ("INFO", "Failed entries retried: 0"), ("WARN", "warm-up slower than usual")]
    assert not any(e.fields.get("level_inferred") for e in events)
    assert events[0].fields["stream"] == "stderr"


def test_an_inner_logfmt_line_gives_its_level_its_pairs_and_its_error_text(tmp_path):
    rows = [{"time": "2026-11-14T03:30:01Z", "service": "relay",
             "message": 'level=error ts=2026-11-14T03:30:01.1Z caller=client.go:88 msg="deliver failed" '
                        'err="dial tcp 10.0.0.5:5432: connect: connection refused"'},
            {"time": "2026-11-14T03:30:02Z", "service": "relay",
             "message": 'level=info ts=2026-11-14T03:30:02.1Z caller=client.go:90 msg="delivered" attempts=2'}]
    events = _envelopes(tmp_path, rows)
    assert [(e.level, e.message) for e in events] == [
        ("ERROR", "deliver failed: dial tcp 10.0.0.5:5432: connect: connection refused"), ("INFO", "delivered")]
    assert events[0].fields["err"] == "dial tcp 10.0.0.5:5432: connect: connection refused"
    assert events[0].fields["caller"] == "client.go:88" and events[1].fields["attempts"] == "2"
    assert events[0].service == "relay"


def test_a_json_logger_line_nested_as_the_envelope_message_is_read(tmp_path):
    inner = {"level": 50, "time": 1794627001000, "msg": "enqueue failed", "err": "socket hang up", "reqId": "r-7"}
    rows = [{"@timestamp": "2026-11-14T03:30:01Z", "kubernetes": {"pod_name": "api-5d9-x"}, "service": "api",
             "log": json.dumps(inner)}]
    (event,) = _envelopes(tmp_path, rows)
    assert (event.level, event.message) == ("ERROR", "enqueue failed: socket hang up")
    assert event.fields["reqId"] == "r-7" and event.time == utc(2026, 11, 14, 3, 30, 1)


def test_a_header_no_known_format_reads_is_learnt_from_the_other_messages_of_the_source(tmp_path):
    # a program's own header, `[pid] yyyy/mm/dd hh:mm:ss.ffffff [LVL] text`, in every message
    levels = ["INF", "INF", "WRN", "ERR", "INF"]
    rows = [{"time": f"2026-11-14T03:30:0{i}Z", "service": "broker",
             "message": f"[1] 2026/11/14 03:30:0{i}.11320{i} [{lvl}] stream {i} state changed"}
            for i, lvl in enumerate(levels)]
    events = _envelopes(tmp_path, rows)
    assert [(e.level, e.message) for e in events] == [
        ({"INF": "INFO", "WRN": "WARN", "ERR": "ERROR"}[lvl], f"stream {i} state changed")
        for i, lvl in enumerate(levels)]


def test_stern_prefixed_lines_are_read_per_pod_and_container_each_rest_a_line_of_its_own(tmp_path):
    # stern's default `<pod> <container> <message>`, and the pod alone (`--template '{{.PodName}} {{.Message}}'`)
    path = tmp_path / "stern.log"
    path.write_text(
        'cart-6b8d5c4f9-w7x2p cart {"level":50,"time":1794627001000,"msg":"session read failed"}\n'
        "etcd-0 etcd E1114 03:30:01.010123       1 leader.go:120] lost the leader election\n"
        'cart-6b8d5c4f9-w7x2p cart {"level":30,"time":1794627002000,"msg":"ok"}\n'
        "etcd-1 W1114 03:30:02.010123       1 raft.go:77] slow fdatasync took 1.2s\n")
    events = read(path)
    assert [(e.service, e.host, e.level, e.message) for e in events] == [
        ("cart", "cart-6b8d5c4f9-w7x2p", "ERROR", "session read failed"),
        ("etcd", "etcd-0", "ERROR", "lost the leader election"),
        ("cart", "cart-6b8d5c4f9-w7x2p", "INFO", "ok"),
        ("etcd", "etcd-1", "WARN", "slow fdatasync took 1.2s")]


def test_a_compose_prefix_before_an_empty_line_is_a_line_of_its_own_not_the_end_of_the_read(tmp_path):
    # `docker compose logs` writes a service's empty output line as its prefix alone (a database's
    # init script prints blank lines): the read goes on, every line kept
    path = tmp_path / "compose.log"
    path.write_text(
        "db-1   | The files belonging to this database system will be owned by user \"postgres\".\n"
        "db-1   | \n"
        "db-1   | 2026-12-07 10:00:00.001 UTC [1] LOG:  starting PostgreSQL 16.4\n"
        "api-1  | 2026-12-07T10:00:01.100Z ERROR connect ECONNREFUSED 10.0.0.5:5432\n"
        "api-1  | \n"
        "api-1  | 2026-12-07T10:00:02.200Z INFO listening on :8080\n")
    events = read(path)
    assert any(e.level == "ERROR" and "ECONNREFUSED 10.0.0.5:5432" in e.message for e in events)
    assert any("listening on :8080" in e.message for e in events)
    assert {e.service for e in events if e.message.strip()} == {"db", "api"}


# -- session 55: the inner line read by the same line reader a plain line is ------------------------

def _export(rows: list[tuple[str | None, str]]) -> list[dict]:
    """A cloud logging export: its own time, service and host, a level or none, the program's line."""
    return [{"time": f"2026-11-14T03:30:{i:02d}Z", "service": "shop", "host": "vm-1",
             **({"level": level} if level else {}), "message": line} for i, (level, line) in enumerate(rows)]


def test_a_syslog_header_inside_an_export_is_read_and_its_tag_kept_as_the_logger(tmp_path):
    rows = _export([(None, "Nov 14 03:29:58 app-1 kernel: Out of memory: Killed process 1234 (java)"),
                    (None, "Nov 14 03:29:59 app-1 sshd[812]: Accepted publickey for deploy from 10.0.0.9")])
    first, second = _envelopes(tmp_path, rows)
    assert (first.message, second.message) == ("Out of memory: Killed process 1234 (java)",
                                               "Accepted publickey for deploy from 10.0.0.9")
    assert first.time == utc(2026, 11, 14, 3, 30, 0)  # the envelope's time; the program's kept beside it
    assert first.fields["message_time"].endswith("11-14T03:29:58+00:00")
    assert (first.service, first.host, first.fields["logger"]) == ("shop", "vm-1", "kernel")


def test_every_header_of_a_mixed_export_is_read_by_the_reader_that_reads_it_in_a_plain_file(tmp_path):
    lines = ["2026-11-14 03:30:01,123 ERROR [main] c.e.Orders - connection refused to db:5432",
             "E1114 03:30:02.123456       1 reflector.go:123] failed to list pods: timeout",
             'time="2026-11-14T03:30:03Z" level=error msg="cannot reach upstream"',
             "[2026-11-14T03:30:04Z] WARN disk almost full on /var",
             "Nov 14 03:30:05 app-1 kernel: nfs: server filer-01 not responding, still trying"]
    events = _envelopes(tmp_path, [{"time": f"2026-11-14T03:30:0{i}Z", "stream": "stderr", "log": line}
                                   for i, line in enumerate(lines)])
    assert [e.message for e in events] == [
        "connection refused to db:5432", "failed to list pods: timeout", "cannot reach upstream",
        "disk almost full on /var", "nfs: server filer-01 not responding, still trying"]
    # a stream is no level: each line's own level is the record's
    assert [e.level for e in events[:4]] == ["ERROR", "ERROR", "ERROR", "WARN"]
    assert {e.fields["stream"] for e in events} == {"stderr"}


def test_a_level_word_opening_a_message_is_its_level_only_where_the_envelope_writes_none(tmp_path):
    rows = _export([(None, "2026-11-14 03:30:00,001 INFO [main] c.e.Boot - started"),
                    (None, "error: disk quota exceeded for user bob"),
                    ("info", "warning: the setting cache.size is deprecated")])
    _, quota, setting = _envelopes(tmp_path, rows)
    assert (quota.level, quota.message) == ("ERROR", "error: disk quota exceeded for user bob")  # no word lost
    assert not quota.fields.get("level_inferred")
    assert (setting.level, setting.message) == ("INFO", "warning: the setting cache.size is deprecated")


def test_near_misses_a_message_opening_with_a_number_or_a_time_in_its_prose_keeps_every_word(tmp_path):
    near = ["12:30 is when the nightly backup runs",
            "2024 was the year the cluster moved",
            "1710295801 is the epoch the import stopped at",
            "404 Not Found: /favicon.ico",
            "3 retries left before giving up on db:5432",
            'Started GET "/users/7" for 10.0.0.1 at 2026-11-14 03:30:01 +0000',
            "Mar 13 was the day the cluster failed",
            "15 Mar 2024 is the deadline for the migration"]
    rows = _export([(None, "2026-11-14 03:30:00,001 INFO [main] c.e.Boot - started")] + [(None, m) for m in near])
    events = _envelopes(tmp_path, rows)
    assert [e.message for e in events[1:]] == near
    assert all(e.time.minute == 30 and "message_time" not in e.fields for e in events[1:])


def test_a_multi_line_message_whose_first_word_is_a_level_stays_as_written_under_the_envelopes_level(tmp_path):
    panic = ("panic: runtime error: invalid memory address or nil pointer dereference\n\n"
             "goroutine 1 [running]:\nmain.main()\n\t/src/main.go:12 +0x1d")
    rows = _export([(None, "2026-11-14 03:30:00,001 INFO [main] c.e.Boot - started"), ("error", panic)])
    _, event = _envelopes(tmp_path, rows)
    assert event.level == "ERROR" and event.message == panic



def test_a_stamp_alone_on_the_messages_first_line_gives_the_message_of_the_line_below(tmp_path):
    # Oracle's alert log writes each stamp on a line of its own; a collector ships stamp and text as one
    rows = _export([("error", f"2026-11-14T03:30:0{i}.200000Z\nARC1: Error 19809 Creating archive log file to '+FRA'")
                    for i in range(3)])
    events = _envelopes(tmp_path, rows)
    assert [e.message for e in events] == ["ARC1: Error 19809 Creating archive log file to '+FRA'"] * 3
