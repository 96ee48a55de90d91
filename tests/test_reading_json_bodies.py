"""A JSON logger's record written as another layout's message (session 58, issue 34): an app that
writes JSON to syslog (`host app[pid]: {"level":...}`), a header of time and program before the
object, or a few words that prefix it (a container tool's `pod container `). The object's keys'
roles give the level and the message, as a JSON line's would; an object that writes no level a
scale knows (an event's payload, a request body) stays the text it is. Read through the product's
reader (`LogFile`); every line is written here in the manner of those loggers (no third-party text)."""
from __future__ import annotations

from tests.support import read_log as read


def test_a_json_record_after_a_syslog_header_gives_its_level_and_message(tmp_path):
    path = tmp_path / "syslog"
    path.write_text('Mar  1 10:15:30 web-1 billing[812]: {"level":"error","msg":"card declined","order":77}\n'
                    'Mar  1 10:15:31 web-1 billing[812]: {"level":"info","msg":"order paid","order":78}\n'
                    'Mar  1 10:15:32 web-1 billing[812]: {"level":50,"msg":"ledger write failed","name":"ledger"}\n')
    events = read(path)
    assert [(e.level, e.message) for e in events] == [("ERROR", "card declined"), ("INFO", "order paid"),
                                                      ("ERROR", "ledger write failed")]
    assert events[0].fields["order"] == 77 and events[0].fields["pid"] == "812"
    assert all("level_inferred" not in e.fields for e in events)


def test_a_json_record_after_a_time_and_program_header(tmp_path):
    path = tmp_path / "app.log"
    path.write_text('2024-05-02T08:00:00Z api {"severity":"WARNING","message":"pool at 90%"}\n'
                    '2024-05-02T08:00:01Z api {"severity":"INFO","message":"pool drained"}\n')
    events = read(path)
    assert [(e.level, e.message) for e in events] == [("WARN", "pool at 90%"), ("INFO", "pool drained")]


def test_a_json_record_behind_a_few_prefix_words_keeps_them_as_the_prefix(tmp_path):
    path = tmp_path / "merged.log"
    path.write_text('cart-7f9c-x2p cart {"lvl":"error","msg":"session read failed","ts":"2024-05-02T08:00:00Z"}\n'
                    'Some banner line without a header\n')
    events = read(path)
    assert (events[0].level, events[0].message) == ("ERROR", "session read failed")
    assert events[0].fields["prefix"] == "cart-7f9c-x2p cart"


def test_an_object_without_a_known_level_stays_the_text_it_is(tmp_path):
    path = tmp_path / "syslog"
    path.write_text('Mar  1 10:15:30 web-1 audit[9]: {"event":"login","user":"ann"}\n'
                    'Mar  1 10:15:31 web-1 audit[9]: request body {"priority":"high","msg":"refund"}\n')
    events = read(path)
    assert events[0].message == '{"event":"login","user":"ann"}'
    assert events[1].message == 'request body {"priority":"high","msg":"refund"}'
