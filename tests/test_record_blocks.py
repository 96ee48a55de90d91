"""Records that span lines, by the layout (issue 34.4): a line without the layout's header belongs
to the record before it (MySQL's slow log writes each query as `# Key: value` lines and the
statements: Elastic Beats' MySQL 5.5 fixture `filebeat/module/mysql/slowlog/test/mysql-ubuntu-5.5.53.log`,
Apache 2.0), and a CSV row's quoted value may span lines (PostgreSQL's csvlog). Sources and commits:
tests/data/loggers/README.md."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from pipeline.incidents.opening import opens_incident
from pipeline.ingest.key_roles import time_in_pairs
from pipeline.ingest.reading import LogFile

LOGGERS = Path(__file__).parent / "data" / "loggers"


def events_of(path: Path) -> list:
    return [item for item, _ in LogFile(path, max_bytes=1 << 20).scan(0, final=True, settled=True)]


def test_each_slow_query_block_is_one_record_with_its_own_time():
    # MySQL 5.5 writes `# Time:` only when the second changes, so most blocks carry no time line;
    # each block's own `SET timestamp=` gives its time
    path = LOGGERS / "mysql-ubuntu-5.5.53-slow.log"
    preamble, *blocks = events_of(path)
    assert preamble.message.startswith("/usr/sbin/mysqld, Version: 5.5.53")  # kept, not lost
    assert len(blocks) == 14  # one record per `# User@Host:` block, not one per line
    assert all(block.message.startswith("# User@Host:") for block in blocks)
    assert all("time_inferred" not in block.fields for block in blocks)
    assert blocks[0].time == datetime(2016, 12, 9, 14, 37, 59, tzinfo=timezone.utc)
    assert blocks[-1].time == datetime(2016, 12, 9, 14, 39, 40, tzinfo=timezone.utc)
    # a statement spanning three lines stays inside its block, and is not a stack trace
    concat = blocks[1]
    assert "select concat('select count(*) into @discard from `'," in concat.message
    assert "from information_schema.TABLES where ENGINE='MyISAM';" in concat.message
    assert blocks[-1].message.splitlines()[-1] == "select * from user;"
    assert all(event.stack is None for event in [preamble, *blocks])
    assert not any(opens_incident(event) for event in [preamble, *blocks])


def test_a_block_opens_at_the_key_every_block_holds(tmp_path):
    # the slow log's first block has no `# Time:` line (written only when the second changes)
    blocks = ["# User@Host: app[app] @ apphost [1.1.1.1]  Id: 1", "# Query_time: 4.07  Lock_time: 0.0002",
              "SET timestamp=1493370459;", "SELECT 1;",
              "# Time: 2017-04-28T09:16:30.738365Z", "# User@Host: app[app] @ apphost [1.1.1.1]  Id: 2",
              "# Query_time: 10.34  Lock_time: 0.00003", "SET timestamp=1493370990;", "call load_stats(1);"]
    path = tmp_path / "slow.log"
    path.write_text("\n".join(blocks) + "\n")
    first, second = events_of(path)
    assert first.message.startswith("# User@Host:") and second.message.startswith("# User@Host:")
    assert first.time == datetime(2017, 4, 28, 9, 7, 39, tzinfo=timezone.utc)  # SET timestamp=, not Query_time
    assert second.time == datetime(2017, 4, 28, 9, 16, 30, tzinfo=timezone.utc)


def test_a_time_in_a_pair_is_one_only_when_its_key_names_a_time_and_its_value_is_an_instant():
    assert time_in_pairs("# Query_time: 4.071491  Lock_time: 0.000212") is None  # durations
    assert time_in_pairs("retries=3 timeout=1700000000") is None  # not a key naming an instant
    assert time_in_pairs("ok ts=1700000000 done") == datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc)


def test_a_csvlog_row_with_quoted_newlines_is_one_record_read_by_its_columns():
    # elastic/beats' PostgreSQL 11 csvlog fixture (Apache 2.0; tests/data/loggers/README.md)
    path = LOGGERS / "postgresql-11-connection-disconnection.csv.log"
    events = events_of(path)
    assert len(events) == 15  # 20 lines: five rows hold a quoted newline
    assert {e.fields["format"] for e in events} == {"csv"}
    statement = next(e for e in events if "substring(name,1,10)" in e.message)
    assert statement.message.endswith("='log_connec'\nLIMIT 1000")  # its SQL is the message
    assert statement.stack is None and statement.level == "INFO"  # a LOG statement, not a trace
    assert not opens_incident(statement) and opens_incident(refused := events[13])
    assert refused.level == "FATAL"
    assert statement.time == datetime(2021, 1, 4, 0, 5, 12, 999000, tzinfo=timezone.utc)
    refused = next(e for e in events if e.level == "FATAL")
    assert refused.message == 'password authentication failed for user "azlev"'
    assert refused.fields["column_15"] == ('Role "azlev" does not exist.\n'
                                           'Connection matched pg_hba.conf line 95: "host all all all md5"')


def test_an_empty_file_reads_as_no_records(tmp_path):
    # a new, empty file (a log just rotated in, a quiet source) holds no blocks to learn from
    path = tmp_path / "new.log"
    path.write_text("")
    assert events_of(path) == []
