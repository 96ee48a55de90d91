"""A source location is where a line was written, never who wrote it (issues 34/35, session 53): a
token shaped `file.ext:line` (a path before it, `:col` after it, in brackets or not) is the event's
`fields.caller`, and the service comes from what else names it (a prefix, a logger, the file's name).
One program's lines are one service whatever line of its code wrote them.
The lines are written here in the manner of the loggers named (no third-party text)."""
from __future__ import annotations

import pytest

from pipeline.ingest.code_location import code_location
from tests.support import read_log

CASES = {
    # Cassandra's logback `%-5level [%thread] %date %F:%L - %msg`, a header column after the time
    "cassandra": (["INFO  [main] 2026-03-01 10:00:00,123 CassandraDaemon.java:687 - Startup complete",
                   "WARN  [GossipTasks:1] 2026-03-01 10:00:01,456 FailureDetector.java:288 - Not marking nodes down",
                   "ERROR [CompactionExecutor:2] 2026-03-01 10:00:02,789 CassandraDaemon.java:228 - Exception in thread"],
                  "app", ["CassandraDaemon.java:687", "FailureDetector.java:288", "CassandraDaemon.java:228"],
                  ["Startup complete", "Not marking nodes down", "Exception in thread"]),
    # zap's development console encoder: time, level, caller, message in tab columns, no logger name
    "zap-console": (["2026-03-01T10:00:00.000Z\tINFO\tjobs/run.go:88\tbatch queued",
                     "2026-03-01T10:00:01.000Z\tERROR\tjobs/run.go:90\tbatch failed",
                     "2026-03-01T10:00:02.000Z\tINFO\tstore/save.go:12\tbatch saved"],
                    "app", ["jobs/run.go:88", "jobs/run.go:90", "store/save.go:12"],
                    ["batch queued", "batch failed", "batch saved"]),
    # Python's `%(asctime)s - %(filename)s:%(lineno)d - %(levelname)s - %(message)s`
    "python-columns": (["2026-03-01 10:00:00,123 - worker.py:42 - ERROR - connection refused",
                        "2026-03-01 10:00:01,123 - worker.py:57 - INFO - retrying",
                        "2026-03-01 10:00:02,123 - db.py:9 - INFO - connected"],
                       "app", ["worker.py:42", "worker.py:57", "db.py:9"],
                       ["connection refused", "retrying", "connected"]),
    # Python's `%(asctime)s %(levelname)s %(filename)s:%(lineno)d %(message)s` and log4j's
    # `%d %p [%t] (%F:%L) - %m`: the location after the level is no part of the message
    "after-level": (["2026-03-01 10:00:00,123 ERROR worker.py:42 connection refused",
                     "2026-03-01 10:00:01,123 INFO [main] (Pool.java:310) - pool drained"],
                    "app", ["worker.py:42", "Pool.java:310"], ["connection refused", "pool drained"]),
    # Airflow's `[%(asctime)s] {%(filename)s:%(lineno)d} %(levelname)s - %(message)s`
    "braced": (["[2026-03-01 10:00:00,123] {taskinstance.py:1150} INFO - Starting attempt 1 of 1",
                "[2026-03-01 10:00:01,123] {taskinstance.py:1332} ERROR - Task failed with exception",
                "[2026-03-01 10:00:02,123] {local_task_job.py:102} INFO - Task exited with return code 1"],
               "app", ["taskinstance.py:1150", "taskinstance.py:1332", "local_task_job.py:102"],
               ["Starting attempt 1 of 1", "Task failed with exception", "Task exited with return code 1"]),
    # Go's log with a prefix and Lshortfile: the prefix names the service, the file is where
    "go-prefix": (["billing: 2026/03/01 10:00:00 main.go:42: connection refused",
                   "billing: 2026/03/01 10:00:01 db.go:17: retrying"],
                  "billing", ["main.go:42", "db.go:17"], ["connection refused", "retrying"]),
    # zap's JSON with its keys renamed to one letter and no logger name: the caller key is no service
    "zap-json-letters": (['{"L":"info","T":"2026-03-01T10:00:00Z","C":"foo.go:42","M":"hello"}',
                          '{"L":"warn","T":"2026-03-01T10:00:01Z","C":"foo.go:57","M":"slow"}'],
                         "app", ["foo.go:42", "foo.go:57"], ["hello", "slow"]),
    # as it was: glog/klog's header and Go's log with Lshortfile alone
    "klog": (["E0301 10:00:00.000123    1234 reflector.go:138] watch failed",
              "I0301 10:00:01.000123    1234 shared_informer.go:270] caches synced"],
             "app", ["reflector.go:138", "shared_informer.go:270"], ["watch failed", "caches synced"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_source_location_is_the_callers_field_never_the_service(tmp_path, name):
    lines, service, callers, messages = CASES[name]
    path = tmp_path / "app.log"
    path.write_text("\n".join(lines) + "\n")
    events = read_log(path)
    assert [e.service for e in events] == [service] * len(lines)
    assert [e.fields.get("caller") for e in events] == callers
    assert [e.message for e in events] == messages
    assert all(e.host is None or code_location(e.host) is None for e in events)


def test_a_source_location_is_told_from_a_host_and_port_by_its_extension():
    assert code_location("(Foo.java:42)") == "Foo.java:42"
    assert code_location("/src/app/main.go:42:7:") == "/src/app/main.go:42:7"
    assert code_location("{taskinstance.py:1150}") == "taskinstance.py:1150"
    for other in ("db.internal:5432", "10.0.0.1:80", "com.shop.Cart", "Foo.java", "worker", "api-1"):
        assert code_location(other) is None
