"""Records that span lines in two conventions many programs share (session 58, issue 34.4): a
program's multi-line report relayed through syslog one line a message, each line repeating the
syslog header (`time host tag[pid]: `; rsyslog writes a tab as `#011`), and a Ruby backtrace that a
logger writes under its message without indentation (`path:line:in 'method'`). Read through the
product's reader (`LogFile`); every line is written here in the manner of those loggers (no
third-party text)."""
from __future__ import annotations

from pipeline.ingest.multiline import MultilineJoiner
from tests.support import read_log as read


def test_a_trace_relayed_line_by_line_through_syslog_is_one_record(tmp_path):
    path = tmp_path / "messages"
    path.write_text("Mar  1 10:15:30 app-2 orders[311]: ERROR checkout failed for cart 7\n"
                    "Mar  1 10:15:30 app-2 orders[311]: java.lang.IllegalStateException: cart closed\n"
                    "Mar  1 10:15:30 app-2 orders[311]: #011at shop.Cart.pay(Cart.java:88)\n"
                    "Mar  1 10:15:30 app-2 orders[311]: \tat shop.Api.run(Api.java:12)\n"
                    "Mar  1 10:15:30 app-2 orders[311]: Caused by: java.io.IOException: socket closed\n"
                    "Mar  1 10:15:30 app-2 orders[311]: #011... 4 more\n"
                    "Mar  1 10:15:31 app-2 orders[311]: INFO cart 8 paid\n")
    events = read(path)
    assert len(events) == 2
    first = events[0]
    assert first.level == "ERROR" and "checkout failed" in first.message
    assert first.stack.splitlines() == ["java.lang.IllegalStateException: cart closed",
                                        "\tat shop.Cart.pay(Cart.java:88)", "\tat shop.Api.run(Api.java:12)",
                                        "Caused by: java.io.IOException: socket closed", "\t... 4 more"]
    assert events[1].message.endswith("cart 8 paid")


def test_relayed_lines_of_another_program_or_of_prose_stay_records_of_their_own(tmp_path):
    path = tmp_path / "messages"
    path.write_text("Mar  1 10:15:30 app-2 orders[311]: ERROR checkout failed\n"
                    "Mar  1 10:15:30 app-2 billing[12]: \tat shop.Bill.run(Bill.java:3)\n"  # another process
                    "Mar  1 10:15:30 app-2 orders[311]: retrying checkout\n")  # the program's next message
    events = read(path)
    assert len(events) == 3


def test_the_kernels_blank_indented_lines_stay_records_of_their_own(tmp_path):
    path = tmp_path / "messages"
    path.write_text("Mar  1 10:15:30 node-4 kernel: Memory map follows:\n"
                    "Mar  1 10:15:30 node-4 kernel:  region 0: 0000 - 9fff (usable)\n"
                    "Mar  1 10:15:30 node-4 kernel:  region 1: f000 - ffff (reserved)\n")
    assert len(read(path)) == 3


def test_an_unindented_ruby_backtrace_under_its_message_is_the_records_stack():
    joiner = MultilineJoiner()
    lines = ["E, [2026-03-01T10:15:30.123456 #41] ERROR -- : undefined method `total' for nil (NoMethodError)",
             "/srv/app/models/order.rb:42:in `sum'",
             "app.rb:7:in 'Integer#/'",
             "from /srv/app/bin/run:3:in `<main>'",
             "I, [2026-03-01T10:15:31.000000 #41]  INFO -- : next order"]
    records = [r for n, line in enumerate(lines) for r in joiner.feed(n, line)] + joiner.flush()
    assert [r.lines for r in records] == [4, 1]
