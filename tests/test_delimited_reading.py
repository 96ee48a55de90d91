"""Headers written as delimited columns (`time;level;message`, quoted or not, any delimiter the writer
chose): the time, the level and the message are the columns', not the whole line's
(pipeline/ingest/delimited.py; NLog's CsvLayout renders such lines)."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pipeline.ingest.delimited import delimiter
from pipeline.ingest.reading import LogFile

LEVELS = ["Info", "Warn", "Error", "Debug", "Info"]
MESSAGES = ["hello, world", "disk almost full", "connection refused by peer", "cache miss for key 17", "done"]


def _read(tmp_path, sep: str, quote: str) -> list:
    lines = [f"{quote}2010-01-01 12:34:5{i}.0000{quote}{sep}{quote}{LEVELS[i]}{quote}{sep}{quote}{MESSAGES[i]}{quote}"
             for i in range(5)]
    path = tmp_path / "delimited.log"
    path.write_text("\n".join(lines) + "\n")
    return [item for item, _ in LogFile(path, max_bytes=1 << 20).scan(0, final=True, settled=True)]


@pytest.mark.parametrize(("sep", "quote"), [(";", ""), ("zzz", ""), (",", "'"), (";", "'"), (" ", "'"),
                                            ("\t", '"'), ("|", "'")])
def test_a_delimited_header_gives_the_time_level_and_message(tmp_path, sep, quote):
    events = _read(tmp_path, sep, quote)
    assert [(e.level, e.message) for e in events] == [
        ("INFO", "hello, world"), ("WARN", "disk almost full"), ("ERROR", "connection refused by peer"),
        ("DEBUG", "cache miss for key 17"), ("INFO", "done")]
    assert events[2].time == datetime(2010, 1, 1, 12, 34, 52, tzinfo=timezone.utc)
    assert "time_inferred" not in events[2].fields


def test_blanks_alone_are_no_delimiter_and_a_word_that_is_no_level_is_no_column():
    assert delimiter("2010-01-01 12:34:56 Info hello") is None  # the blank-cut learner's
    assert delimiter("2010-01-01 12:34:56;payment;failed;again") is None
    assert delimiter("'2010-01-01 12:34:56' 'Warn' 'x'") is not None
