"""The reader reads layouts it has never seen (issue 34.1, 34.2): each structured key's role told by
its name and its value, nested objects looked into, times written in two keys or as a time of day
alone, and separated headers whose message is not the last column. Read through the product's
reader (`LogFile`, as `ingest` and the poller read). The lines are written here in the manner of
common loggers (no third-party text)."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from tests.support import read_log as read, utc


def own_time(event) -> bool:
    return "time_inferred" not in event.fields


def test_a_json_record_whose_keys_name_no_role_is_read_by_its_values_and_nested_objects(tmp_path):
    # an audit feed: the time under a key no name list holds, nested; a level word under `state`;
    # one value of human text; nothing named time, level or message
    rows = [{"kind": "audit#entry", "ref": {"recorded": f"2021-06-01 10:0{i}:00", "seq": i},
             "state": "warning" if i % 2 else "info", "actor": {"uid": 1000 + i},
             "note": f"quota of volume {i} is almost used up"} for i in range(4)]
    path = tmp_path / "feed.ndjson"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    events = read(path)
    assert [(e.time, e.level, e.message) for e in events] == [
        (utc(2021, 6, 1, 10, i, 0), "WARN" if i % 2 else "INFO", f"quota of volume {i} is almost used up")
        for i in range(4)]
    assert all(own_time(e) for e in events)
    assert events[0].fields["ref"] == {"seq": 0}  # what was not taken is kept


def test_a_json_record_with_two_texts_and_no_message_key_is_kept_whole(tmp_path):
    # which of two human texts is the message nothing says: none is picked, the record stays whole
    path = tmp_path / "alerts.ndjson"
    path.write_text(json.dumps({"at": "2021-06-01T10:00:00Z", "rule": "outbound call to a known bad host",
                                "category": "possible data exfiltration attempt"}) + "\n")
    (event,) = read(path)
    assert "outbound call" in event.message and "exfiltration" in event.message


def test_json_array_elements_written_one_a_line_are_records(tmp_path):
    # an audit plugin writing a JSON array, one element a line, each ending with `},`
    lines = ["["] + [json.dumps({"timestamp": f"2020-10-19 19:2{i}:33", "class": "connection", "id": i}) + ","
                     for i in range(3)] + ["]"]
    path = tmp_path / "audit.log"
    path.write_text("\n".join(lines) + "\n")
    events = read(path)
    timed = [e for e in events if own_time(e)]
    assert [e.time for e in timed] == [utc(2020, 10, 19, 19, 20 + i, 33) for i in range(3)]


def test_pairs_of_any_logger_with_the_date_and_the_clock_in_two_keys(tmp_path):
    # a firewall's key=value lines: no logfmt key name (`msg`, `ts`...) but `date`, `time`, `level`
    path = tmp_path / "fw.log"
    path.write_text("".join(
        f'date=2019-05-15 time=18:0{i}:36 devid="FG100" type="event" level="{lvl}" action="login" '
        f'logdesc="Admin login {word}" reason="none"\n'
        for i, (lvl, word) in enumerate([("information", "successful"), ("warning", "failed")])))
    events = read(path)
    assert [(e.time, e.level) for e in events] == [(utc(2019, 5, 15, 18, 0, 36), "INFO"),
                                                   (utc(2019, 5, 15, 18, 1, 36), "WARN")]
    assert all(own_time(e) for e in events)
    # the record's own zone key reads its zone-less time
    path.write_text('date=2017-12-19 time=10:29:48 timezone="CET" device="X1" priority=Warning log_type="Health"\n')
    (event,) = read(path)
    assert event.time == utc(2017, 12, 19, 9, 29, 48) and event.level == "WARN"


def test_a_separated_layout_whose_message_is_not_the_last_column(tmp_path):
    # `time | level | message | logger | thread`: the logger and thread written after the message
    loggers = ["org.shop.broker.Service", "org.shop.store.Journal"]
    path = tmp_path / "broker.log"
    path.write_text("".join(
        f"2020-05-12 16:42:{i:02d},{i * 7:03d} | {'WARN ' if i % 3 == 0 else 'INFO '} | "
        f"step {i} of the store took {i * 3} ms to settle | {loggers[i % 2]} | main\n" for i in range(12)))
    events = read(path)
    assert [e.message for e in events] == [f"step {i} of the store took {i * 3} ms to settle" for i in range(12)]
    assert [e.service for e in events] == [loggers[i % 2] for i in range(12)]
    assert [e.level for e in events] == ["WARN" if i % 3 == 0 else "INFO" for i in range(12)]


def test_a_tab_separated_header(tmp_path):
    path = tmp_path / "tabs.log"
    path.write_text("".join(f"2024-03-01T08:00:0{i}Z\t{'ERROR' if i == 2 else 'INFO'}\tapi\trequest {i} served\n"
                            for i in range(4)))
    events = read(path)
    assert [(e.time, e.level, e.service, e.message) for e in events] == [
        (utc(2024, 3, 1, 8, 0, i), "ERROR" if i == 2 else "INFO", "api", f"request {i} served") for i in range(4)]


def test_a_time_of_day_alone_opens_the_header_and_takes_the_day_it_is_read(tmp_path):
    # logback's default console pattern, `%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg`
    path = tmp_path / "console.log"
    path.write_text("".join(f"0{i}:15:05.123 [main] {'ERROR' if i == 3 else 'INFO '} com.shop.App - step {i}\n"
                            for i in range(6)))
    events = read(path, timezone="UTC")
    assert [(e.level, e.service, e.message) for e in events] == [
        ("ERROR" if i == 3 else "INFO", "com.shop.App", f"step {i}") for i in range(6)]
    now = datetime.now(timezone.utc)
    for i, event in enumerate(events):
        assert own_time(event) and (event.time.hour, event.time.minute, event.time.microsecond) == (i, 15, 123000)
        assert now - timedelta(days=1, minutes=1) <= event.time <= now + timedelta(minutes=1)


def test_a_relayed_syslog_stamp_without_a_year_gives_way_to_the_bodys_dated_time(tmp_path):
    # a firewall's key=value body behind a relay's year-less syslog header, and a proxy's bracketed time
    path = tmp_path / "relay.log"
    path.write_text("".join(
        f'Jan  3 13:45:3{i} 10.0.0.1 id=fw sn=0001 time="2007-01-03 14:48:0{i}" pri=6 msg="Connection Opened" n={i}\n'
        for i in range(3)))
    events = read(path)
    assert [e.time for e in events] == [utc(2007, 1, 3, 14, 48, i) for i in range(3)]
    path.write_text("".join(f"Sep 20 15:44:2{i} lb proxy[25457]: 10.0.0.9:4096{i} [20/Sep/2018:15:44:2{i}.285] "
                            f"front back/srv 0/0/1 212 SC\n" for i in range(3)))
    assert [e.time for e in read(path)] == [utc(2018, 9, 20, 15, 44, 20 + i, 285000) for i in range(3)]


def test_a_csv_row_of_another_width_keeps_its_time_and_a_label_column_is_no_message(tmp_path):
    # a DNS export: quoted CSV without a header, a column of comma-glued categories, one row a column short
    rows = [f'"2020-07-23 23:4{i}:54","user{i}","Roaming Computers","10.0.0.{i}","8.8.8.8","Allowed","1 (A)",'
            f'"NOERROR","host{i}.example.","Software/Technology,Business Services","Policy A"' for i in range(4)]
    rows.append('"2021-05-14 19:39:58","user9","10.0.0.9","8.8.4.4","Allowed","1 (A)","NOERROR","x.example.",'
                '"Infrastructure","Policy A"')
    path = tmp_path / "dns.csv.log"
    path.write_text("\n".join(rows) + "\n")
    events = read(path)
    assert [e.time for e in events] == [utc(2020, 7, 23, 23, 40 + i, 54) for i in range(4)] + [utc(2021, 5, 14, 19, 39, 58)]
    assert all(own_time(e) for e in events)
    assert events[0].message.startswith('"user0","Roaming Computers"') and events[4].message.startswith('"user9"')


def test_a_csv_export_with_a_header_row_reads_its_named_date_and_time_columns(tmp_path):
    # a server's activity export: a header naming the columns, the date and the clock in two of them,
    # an id column of small numbers (no epoch)
    path = tmp_path / "activity.csv"
    path.write_text("ID,Date,Time,Description,IP Address,Host Name,MAC Address\n" + "".join(
        f"1{i},01/13/21,08:0{i}:05,{'Renew' if i % 2 else 'Assign'},10.0.0.{i},host{i}.example.com,000C29AABB0{i}\n"
        for i in range(4)))
    events = read(path)
    timed = [e for e in events if e.fields.get("format") == "csv"]
    assert [e.time for e in timed] == [utc(2021, 1, 13, 8, i, 5) for i in range(4)]
    assert timed[1].fields["Host Name"] == "host1.example.com" and timed[1].message.startswith("Renew,")
    assert len(events) == 5  # the header row stays a line of its own: nothing is lost


def test_csv_rows_between_banner_lines_and_unquoted_value_lines_are_still_read_as_csv(tmp_path):
    # a desktop client's trace: month-first dashed dates, a banner line each session (no comma), and a
    # value printed over lines without quotes; the rows keep their own times and columns
    row = "{d},{t},{n},1f0,0,SYNC,engine.cpp({n}),0,0,{lvl},{msg},hr=0x8004{n}"
    rows = [row.format(d="03-02-21", t=f"10:1{i}:0{i}.250", n=100 + i, lvl="ERR", msg=f"upload of part {i} refused")
            for i in range(6)]
    lines = (["==== session opened. Build=2.3.1 Started:2021-03-02-101000.000 PID=0x10"] + rows[:3]
             + ["==== session opened. Build=2.3.1 Started:2021-03-02-101300.000 PID=0x11"] + rows[3:5]
             + ["reply body:", "<ok/>"] + rows[5:])
    path = tmp_path / "client-trace.log"
    path.write_text("\n".join(lines) + "\n")
    events = read(path)
    csv_rows = [e for e in events if e.fields.get("format") == "csv"]
    assert [e.time for e in csv_rows] == [utc(2021, 3, 2, 10, 10 + i, i, 250000) for i in range(6)]
    assert all(own_time(e) for e in csv_rows)
    assert csv_rows[2].message == "upload of part 2 refused" and csv_rows[2].fields["column_6"] == "SYNC"


def test_lines_without_a_comma_or_a_time_continue_the_csv_row_before_them(tmp_path):
    # a client trace's row whose last value (a reply it received) was printed over lines without quotes;
    # a session's banner line, with a time of its own (a key naming a time), stays a record of its own
    row = "03-02-21,10:1{i}:0{i}.250,{n},1f0,0,NET,wire.cpp({n}),0,0,VRB,{msg},{extra}"
    lines = ["==== session opened. Build=2.3.1 SessionTime:2021-03-02-101000.000 PID=0x10"]
    lines += [row.format(i=i, n=100 + i, msg=f"frame {i} sent", extra=f"bytes={10 * i}") for i in range(4)]
    lines[2] = row.format(i=1, n=101, msg="reply received", extra="body=HDR 2 LEN 40")
    lines[3:3] = ["Session: 7a1", "", "<reply><code>0</code></reply>"]
    lines += ["==== session opened. Build=2.3.1 SessionTime:2021-03-02-101500.000 PID=0x11"]
    path = tmp_path / "client-net.log"
    path.write_text("\n".join(lines) + "\n")
    events = read(path)
    assert len(events) == 6  # the banner, four rows, the second banner
    reply = events[2]
    assert reply.fields["format"] == "csv" and reply.time == utc(2021, 3, 2, 10, 11, 1, 250000)
    assert reply.message.startswith("reply received")
    assert "Session: 7a1" in (reply.stack or reply.message) and "<reply><code>0</code></reply>" in (reply.stack or reply.message)
    assert events[-1].time == utc(2021, 3, 2, 10, 15) and events[-1].message.startswith("==== session opened")


def test_a_csv_level_column_is_read_when_the_time_is_a_date_column_and_a_clock_column(tmp_path):
    # no header, the date and the clock in two columns, then a module, a level word and the message
    path = tmp_path / "agent.csv.log"
    levels = ["ERR", "WRN", "INF", "ERR", "INF", "DBG"]
    path.write_text("".join(f"11-0{i + 1}-22,07:0{i}:1{i}.500,{40 + i},SYNC,store.cpp({i}),{lvl},step {i} of the plan ran\n"
                            for i, lvl in enumerate(levels)))
    events = read(path)
    assert [e.level for e in events] == ["ERROR", "WARN", "INFO", "ERROR", "INFO", "DEBUG"]
    assert all("level_inferred" not in e.fields for e in events)
    assert events[1].time == utc(2022, 11, 2, 7, 1, 11, 500000) and events[1].message == "step 1 of the plan ran"


def test_a_key_value_body_without_a_header_level_gives_its_level(tmp_path):
    # a device relaying key=value records through syslog without a <PRI>: its `pri=` is the level
    path = tmp_path / "device.log"
    path.write_text("".join(f'Jan  3 13:45:3{i} 10.0.0.1 id=fw sn=0001 pri={p} c=32 msg="{m}" n={i}\n'
                            for i, (p, m) in enumerate([(6, "Connection Opened"), (1, "Administrator login denied"),
                                                        (4, "Rule changed")])))
    assert [e.level for e in read(path)] == ["INFO", "FATAL", "WARN"]
