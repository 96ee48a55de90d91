"""Columns the reader has not seen a layout for (issue 34, session 44): what makes a column a level or
a time is what it holds, not a list of loggers; one line's prose is never its header; nothing lost."""
from __future__ import annotations

from datetime import datetime, timezone

from tests.support import read_log as read


def test_a_level_word_before_a_bar_is_the_level_not_a_containers_name(tmp_path):
    log = tmp_path / "audit.log"
    log.write_text("INFO  | admin called QueueView.retryMessages[] at 15-04-2026 22:28:00,100 | qtp-43\n"
                   "INFO  | guest called BrokerView.getBrokerName[] at 15-04-2026 22:28:00,215 | qtp-44\n"
                   "WARN  | admin requested /admin/queues.jsp from 127.0.0.1 | qtp-45\n")
    events = read(log)
    assert len(events) == 3
    assert [e.level for e in events] == ["INFO", "INFO", "WARN"]
    assert "admin called QueueView.retryMessages[]" in events[0].message
    assert all(e.service != "INFO" for e in events)


def test_auditds_stamp_is_the_time_and_its_quoted_msg_the_message(tmp_path):
    log = tmp_path / "audit.log"
    log.write_text(
        "type=ADD_GROUP msg=audit(1610903553.686:584): pid=2940 uid=0 auid=1000 ses=14 msg='op=adding group "
        "to /etc/group id=1004 exe=\"/usr/sbin/groupadd\" hostname=ubuntu-bionic addr=127.0.0.1 terminal=pts/2 res=success'\n"
        "type=USER_AUTH msg=audit(1610903558.178:595): pid=2954 uid=0 auid=1000 ses=14 msg='op=PAM:authentication "
        "acct=\"root\" exe=\"/usr/bin/chfn\" hostname=ubuntu-bionic addr=127.0.0.1 terminal=pts/2 res=success'\n")
    events = read(log)
    assert [e.time for e in events] == [datetime(2021, 1, 17, 17, 12, 33, 686000, tzinfo=timezone.utc),
                                        datetime(2021, 1, 17, 17, 12, 38, 178000, tzinfo=timezone.utc)]
    assert all("time_inferred" not in e.fields for e in events)
    assert events[0].message.startswith("op=adding group to /etc/group")


def test_a_line_missing_a_header_column_keeps_its_prose_in_the_message(tmp_path):
    log = tmp_path / "gc.log"
    log.write_text(
        '[2022-09-04T22:55:24.027+0000][208][info ][safepoint   ] Safepoint "Cleanup", Time since last: 4002353570 ns, Total: 139783 ns\n'
        '[2022-09-04T22:55:25.029+0000][208][info ][safepoint   ] Safepoint "Cleanup", Time since last: 1000758133 ns, Total: 351310 ns\n'
        '[2022-09-04T22:55:27.031+0000][208][safepoint   ] Safepoint "Cleanup", Time since last: 2002572298 ns, Total: 354573 ns\n')
    events = read(log)
    assert len(events) == 3
    assert events[2].message.startswith('Safepoint "Cleanup", Time since last: 2002572298 ns')
    assert events[2].time == datetime(2022, 9, 4, 22, 55, 27, 31000, tzinfo=timezone.utc)


def test_a_bracketed_level_word_opens_a_record_between_timed_lines(tmp_path):
    log = tmp_path / "coredns.log"
    log.write_text('[INFO] 172.17.0.1:42114 - 64820 "A IN host.example.com. udp 57 false 1232" NOERROR qr,aa,rd 66 0.0001s\n'
                   '[INFO] 172.17.0.1:41393 - 54384 "A IN asdf.coma. udp 50 false 1232" NXDOMAIN qr,rd,ra 113 0.05s\n'
                   '2019-03-06T08:55:28.903Z [INFO] 172.17.0.4:36413 - 21583 "A IN httpbin.org. udp 43 false 512" NXDOMAIN\n')
    events = read(log)
    assert len(events) == 3  # each line its own record: the second is not the first's continuation
    assert all(e.level == "INFO" for e in events)


def test_a_day_first_slashed_date_joined_to_its_clock_by_a_colon_is_the_time(tmp_path):
    log = tmp_path / "ns.log"
    log.write_text("<134> 27/06/2026:22:38:17  host-1.example.local 0-PPE-0 : default APPFW APPFW_X 124787067 0 :  "
                   "198.51.100.10 Endpoint not found <blocked>\n")
    (event,) = read(log)
    assert event.time == datetime(2026, 6, 27, 22, 38, 17, tzinfo=timezone.utc)
    assert "time_inferred" not in event.fields


def test_a_status_word_before_a_tag_after_other_columns_is_no_host(tmp_path):
    log = tmp_path / "ftp.log"
    lines = [f"Mon Jun  6 18:43:{10 + n:02d} 2016 [pid {n % 3 + 1}] [user{n % 2}] {'OK' if n % 4 else 'FAIL'} "
             f"{('UPLOAD', 'DOWNLOAD', 'MKDIR')[n % 3]}: Client \"192.168.1.{n}\", \"/home/f{n}.jpg\", {n * 100} bytes"
             for n in range(24)]
    log.write_text("\n".join(lines) + "\n")
    events = read(log)
    assert len(events) == 24
    assert all(e.host not in ("OK", "FAIL") for e in events)
    syslog = tmp_path / "syslog.log"
    syslog.write_text("".join(f"Jun  6 18:43:{n:02d} web-{n % 3} app[{n}]: request {n} served\n" for n in range(24)))
    assert {e.host for e in read(syslog)} == {"web-0", "web-1", "web-2"}
