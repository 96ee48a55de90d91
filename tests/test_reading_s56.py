"""Session 56's reading mechanisms, each with its near misses: a level word in capitals closed by a
colon after a header's other columns (PostgreSQL's `log_line_prefix`, joined or not), the columns a
learnt layout took after such a level given back to the message, and a zap development encoder's
one-letter keys."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pipeline.ingest.formats import parse_lines
from pipeline.ingest.levels import prefixed_level

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
