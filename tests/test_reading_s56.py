"""Session 56's reading mechanisms, each with its near misses: a level word in capitals closed by a
colon after a header's other columns (PostgreSQL's `log_line_prefix`, joined or not), the columns a
learnt layout took after such a level given back to the message, and a zap development encoder's
one-letter keys."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pipeline.ingest.formats import parse_lines
from pipeline.ingest.levels import prefixed_level
from tests.support import read_log

UTC = timezone.utc
NOW = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("text, level, message", [
    ("[1127]: [8-1] db=postgres,user=app LOG:  duration: 2.1 ms", "INFO", "duration: 2.1 ms"),
    ("[8-1] [user=postgres,db=postgres] FATAL:  no pg_hba.conf entry", "FATAL", "no pg_hba.conf entry"),
    ("host(48808):bob@db:[18762]:ERROR:  relation missing", "ERROR", "relation missing"),
    ("5eefe116.22f4-WARNING:  checkpoints too frequent", "WARN", "checkpoints too frequent"),
    ("Connection lost ERROR: timeout", None, None),  # near miss: prose before the level word
    ("[12] [3] [4] [5] [6] [7] ERROR: late", None, None),  # near miss: too deep to be the header's
    ("[12] PATH: /usr/bin", None, None),  # near miss: a word in capitals that names no level
    ("[12] Error: retrying", None, None),  # near miss: a capitalised word is the message's
    ("[12] ERROR:", None, None),  # near miss: nothing after it
    ("Status: ERROR: disk full", None, None),  # near miss: a label's colon is no header value
    ('"how": "alert-log \'ORA-19815: WARNING: db_recovery_file_dest_size', None, None),  # near miss: quoted words
    ("==> WARNING: It is highly recommended", "WARN", "It is highly recommended"),  # a marker column (Consul's)
])
def test_a_level_closed_by_a_colon_after_header_columns_is_the_lines_level(text, level, message):
    found = prefixed_level(text)
    assert (found and found[1], found and text[found[2]:].strip()) == (level, message) if level else found is None


def test_a_learnt_layouts_columns_after_such_a_level_are_the_message():
    lines = ["2018-08-22 16:00:04 UTC:ec2-1-1.compute-1.amazonaws.com(48808):bob@db:[18762]:LOG:  duration: 3.6 ms  execute 1: SELECT 1",
             "2018-08-22 16:00:03 UTC:127.0.0.1(36404):bob@db:[21495]:LOG:  duration: 1.6 ms  execute 3: SELECT 1",
             "2018-08-22 16:00:05 UTC:[local]:bob@db:[21495]:ERROR:  relation \"x\" does not exist"]
    records = list(parse_lines(lines, now=NOW))
    assert [(r.level_name, r.message[:12], r.service) for r in records] == [
        ("INFO", "duration: 3.", None), ("INFO", "duration: 1.", None), ("ERROR", 'relation "x"', None)]


def test_a_syslog_messages_prefix_before_its_level_is_kept_as_a_field():
    record = next(parse_lines(["Feb  1 21:48:31 db1 postgres[9076]: [3-1] LOG:  database system is ready"], now=NOW))
    assert (record.level_name, record.message, record.fields.get("prefix")) == ("INFO", "database system is ready", "[3-1]")


def test_a_word_and_colon_after_a_colon_closed_level_is_the_messages_first_word():
    lines = ["2018-05-04 03:06:18.360 UTC [3184] LOG:  duration: 3.1 ms  statement: SELECT 1",
             "2018-05-04 03:06:19.360 UTC [3184] LOG:  connection received: host=[local]",
             "2018-05-04 03:06:20.360 UTC [3185] LOG:  duration: 2.0 ms  statement: SELECT 2"]
    assert [r.message[:11] for r in parse_lines(lines, now=NOW)] == ["duration: 3", "connection ", "duration: 2"]
    # near miss: a level without its colon keeps the component column after it
    plain = [f"2018-05-04 03:06:{10 + n}.360 UTC [3184] INFO sshd: accepted key {n}" for n in range(3)]
    assert {r.service for r in parse_lines(plain, now=NOW)} == {"sshd"}


def test_a_colon_closed_levels_component_column_stays_where_many_lines_show_few_values():
    lines = [f"2018-05-04 03:06:{n:02d}.360 UTC [31{n % 3}] INFO: {('main', 'pool')[n % 2]}: request {n} done"
             for n in range(24)]
    assert {r.service for r in parse_lines(lines, now=NOW)} == {"main", "pool"}


@pytest.mark.parametrize("line, hour", [
    ("2022-12-23 09:53:43.862 -03 [790081] LOG: started", 12),  # an offset of hours alone as a column of its own
    ("2022-12-23 09:53:43.862-03 [790081] LOG: started", 12),  # glued, as before
    ("2022-12-23 09:53:43.862 -15.5 degrees at the probe", 9),  # near miss: a number in the message
    ("2022-12-23 09:53:43.862 -150 retries left", 9),  # near miss: three digits are no offset
])
def test_an_offset_of_hours_alone_after_a_blank_is_the_times_zone(line, hour):
    assert next(parse_lines([line], now=NOW)).time.hour == hour


def test_a_column_word_in_lower_case_is_no_level_for_a_layout_learnt_on_capitals():
    # two layouts (a session's lines write more columns before the level): the first, tried first,
    # fits the other's line with `system` in its level column
    lines = [f"2020-05-21 17:53:0{n}.307 UTC [3{n}] 172.18.0.{n}(5640{n}) app{n} LOG:  checkpoint {n} starting" for n in range(5)]
    lines += ["2022-07-22 06:13:10.389 UTC [1] LOG:  listening on 5432", "2022-07-22 06:13:11.389 UTC [1] LOG:  ready",
              "2022-07-22 06:13:13.389 UTC [1] LOG:  database system is ready to accept connections"]
    assert list(parse_lines(lines, now=NOW))[-1].message == "database system is ready to accept connections"
    # near miss: the same word in capitals in a level column is INFO
    assert next(parse_lines(["2020-05-21 17:53:05.307 UTC [1] [2] SYSTEM:  x"], now=NOW)).level_name == "INFO"


@pytest.mark.parametrize("line, message", [
    # zap's development encoder: `T` abbreviates the time (and holds words), `M` the message, one word
    ('{"L":"info","T":"2020-01-01 00:00:00 +0000 UTC","N":"main","C":"foo.go:42","M":"hello","S":"stack"}', "hello"),
    ('{"L":"info","T":1577836800,"N":"main","M":"hello"}', "hello"),  # an epoch time, as before
    # near miss: a value of words under a key naming the message wins over a one-letter key
    ('{"L":"info","T":1577836800,"M":"x","msg":"cache warmed up"}', "cache warmed up"),
])
def test_a_one_letter_message_key_holds_the_message_when_the_times_value_is_words(line, message):
    assert next(parse_lines([line], now=NOW)).message == message


def test_a_line_with_a_level_after_header_columns_opens_a_record_in_a_headed_source(tmp_path):
    log = tmp_path / "postgresql.log"
    log.write_text("2024-10-04 06:38:27.001 UTC [2569016]: [1-1] db=,user= LOG: checkpoint starting: time\n"
                   "2024-10-04 06:38:27.501 UTC [2569016]: [2-1] db=,user= LOG: checkpoint complete\n"
                   "2024-10-04 06:38:28.808 UTC [2569017]: [1-1] db=,user= LOG: automatic vacuum of table t\n"
                   "pages: 0 removed, 14 remain\n"
                   "user=[unknown],db=[unknown],app=[unknown],client=[local] LOG: connection received: host=[local]\n"
                   "tuples: 0 removed, 107 remain: CPU: user: 0.00 s\n")  # near miss: a `word:` line continues
    assert [e.message.split("\n")[0][:19] for e in read_log(log)][2:] == ["automatic vacuum of", "connection received"]


@pytest.mark.parametrize("line, message", [
    # zap's console encoder: its last tab column, a JSON object, is the record's fields
    ('2020-01-01 00:00:00 +0000 UTC\tinfo\tmain@foo.go:42\thello\t{"extra": "1s", "extras": ["1m0s"]}', "hello"),
    # near miss: a last column in braces that is the message's text stays the message
    ("2020-01-01 00:00:00 +0000 UTC\tinfo\tmain@foo.go:42\t{retrying in 5s}", "{retrying in 5s}"),
])
def test_a_tab_layouts_last_column_of_json_is_fields_not_the_message(line, message):
    assert next(parse_lines([line], now=NOW)).message == message
