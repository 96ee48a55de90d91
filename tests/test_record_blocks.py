"""Records written as blocks: a line without the layout's header belongs to the record before it
(issue 34.4). MySQL's slow log writes each query as `# Key: value` lines and the statements; the
log is Percona Toolkit's sample `t/lib/samples/slowlogs/mysql5.7.log` (GPL-2.0; source and commit in
tests/data/loggers/README.md)."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from pipeline.ingest.key_roles import time_in_pairs
from pipeline.ingest.reading import LogFile

LOGGERS = Path(__file__).parent / "data" / "loggers"


def events_of(path: Path) -> list:
    return [item for item, _ in LogFile(path, max_bytes=1 << 20).scan(0, final=True, settled=True)]


def test_each_slow_query_block_is_one_record_with_its_own_time():
    path = LOGGERS / "percona-mysql5.7-slow.log"
    preamble, first, second = events_of(path)
    data = path.read_bytes()
    assert first.position.endswith(f"@{data.index(b'# Time: 2016-07-20T18:13:25.698433Z')}")
    assert first.time == datetime(2016, 7, 20, 18, 13, 25, 698433, tzinfo=timezone.utc)
    assert "time_inferred" not in first.fields
    assert first.stack.splitlines()[-1] == "SELECT * FROM db_facturacion.facturas LIMIT 0, 1000;"
    assert second.stack.splitlines()[-1] == "SHOW INDEX FROM `db_facturacion`.`facturas`;"
    assert preamble.message.startswith("/usr/sbin/mysqld, Version: 5.7.12")  # kept, not lost


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
