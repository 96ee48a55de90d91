"""Abstain rather than guess (issue 36, session 56): the lines naming a category that do not state its cause name
none (pipeline/analyst/abstain.py, offline._unstated): a hedged guess (`Perhaps out of memory?`), a peer's close or a
stated reason that is no refusal, a callee that failed first on a file of its own. A cause said before them is
taken, capped; with none, the analysis is `unknown`. Each with its near misses. Lines are this file's own."""
from __future__ import annotations

import pytest

from pipeline.analyst.abstain import file_named, hedged, spans_of


@pytest.mark.parametrize("line, signatures, guessed", [
    ("Worker (pid:7) was sent SIGKILL! Perhaps out of memory?", ["Perhaps out of memory?", r"re:was sent SIGKILL"], False),
    ("job 12 died (maybe out of memory)", ["out of memory"], True),
    ("reader stopped: disk full?", ["disk full"], True),
    ("killed: possibly the OOM killer", ["OOM killer"], True),
    # near misses: the words stated, a question in another clause, a hedge in another sentence
    ("Worker (pid:7) was sent SIGKILL", [r"re:was sent SIGKILL"], False),
    ("MemoryError: out of memory", ["out of memory"], False),
    ("could not connect: Connection refused. Is the server running on port 5432?", ["Connection refused"], False),
    ('failed: Connection refused Is the server running on host "db" and accepting connections on port 5432?',
     ["Connection refused"], False),
    ("Perhaps retrying helps. Out of memory in worker 3", ["Out of memory"], False),
    ("could not connect, maybe the server is down: Connection refused", ["Connection refused"], False),
])
def test_a_cause_the_writer_only_guesses_is_hedged(line, signatures, guessed):
    # the first row's kill is part of no hedged match of its own there: a kill stated beside a guessed cause
    assert hedged(line, spans_of(line, signatures)) is guessed


def test_a_kill_inside_the_hedged_match_is_part_of_the_guess():
    line = "Worker (pid:7) was sent SIGKILL! Perhaps out of memory?"
    assert hedged(line, spans_of(line, [r"re:Worker \(pid:\d+\) was sent SIGKILL",
                                        r"re:Worker \(pid:\d+\) was sent SIGKILL! Perhaps out of memory"]))


@pytest.mark.parametrize("line, path", [
    ("compaction failed: open /data/wal/checkpoint.0001.tmp: read-only file system", "/data/wal/checkpoint.0001.tmp"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '/usr/share/maps/city.db'", "/usr/share/maps/city.db"),
    # near misses: a socket, a URL's path, a request's path, a source line, a trace's frame below the statement
    ("connect() to unix:/run/app/app.sock failed (11: Resource temporarily unavailable)", None),
    ('Post "http://metrics-0.metrics:9090/api/v1/query": context deadline exceeded', None),
    ('10.0.0.4 - - "GET /api/cart/41 HTTP/1.1" 503', None),
    ("panic at /src/app/main.go:42: index out of range", None),
    ("fatal error: all goroutines are asleep - deadlock!\n\ngoroutine 1 [chan receive]:\n\t/src/app/main.go:42", None),
    ('Traceback (most recent call last):\n  File "/srv/app/boot.py", line 9, in <module>\nOSError: [Errno 30] Read-only file system: \'/var/lib/app/x.db\'', "/var/lib/app/x.db"),
])
def test_a_file_the_failing_line_names(line, path):
    assert file_named(line) == path


_CALLER = 'quote failed: Post "http://pricer.shop:8000/v1": dial tcp 10.3.1.9:8000: connect: connection refused'


@pytest.mark.parametrize("callee, category", [
    ("OSError: [Errno 30] Read-only file system: '/var/lib/pricer/cache.db'", "unknown"),
    ("fatal error: all goroutines are asleep - deadlock!", "connection_refused"),  # a death notice names no file
])
def test_a_callee_failing_first_on_its_own_file_is_cited_not_borrowed(offline_analyst, callee, category):
    from tests.support import offline_rca

    rca = offline_rca(offline_analyst, {"service": "pricer", "message": callee},
                      {"service": "shop", "message": _CALLER}, {"service": "shop", "message": _CALLER})
    assert rca.category == category
    if category == "unknown":
        assert any("/var/lib/pricer/cache.db" in note for note in rca.notes)


@pytest.mark.parametrize("lines, category", [
    # the writer's guess after a worker's time limit said first: the time limit is taken, capped
    (["CRITICAL WORKER TIMEOUT (pid:24)", "ERROR Worker (pid:24) was sent SIGKILL! Perhaps out of memory?"],
     "upstream_timeout"),
    # the guess alone: no category
    (["ERROR Worker (pid:24) was sent SIGKILL! Perhaps out of memory?"], "unknown"),
    # near miss: the memory stated by the kernel, not guessed
    (["ERROR Out of memory: Killed process 24 (gunicorn) total-vm:4194304kB",
      "ERROR Worker (pid:24) was sent SIGKILL! Perhaps out of memory?"], "out_of_memory"),
])
def test_a_guessed_cause_is_not_named(offline_analyst, lines, category):
    from tests.support import offline_rca

    rca = offline_rca(offline_analyst, *lines, leveled=True)
    assert rca.category == category and (category == "out_of_memory" or rca.confidence <= 0.45)


@pytest.mark.parametrize("lines, category", [
    # a proxy's close with no cause said before it: not a refusal, and why is not in the events
    (["upstream prematurely closed connection while reading response header from upstream, "
      'upstream: "http://10.9.1.2:8081/a"'] * 2, "unknown"),
    # near miss: a refusal stated
    (["connect() failed (111: Connection refused) while connecting to upstream, upstream: \"http://10.9.1.2:8081/a\""] * 2,
     "connection_refused"),
])
def test_a_close_that_is_no_refusal_names_none(offline_analyst, lines, category):
    from tests.support import offline_rca

    assert offline_rca(offline_analyst, *lines).category == category


@pytest.mark.parametrize("line, category", [
    # a hash's keys and a field left null are what a line reports, not words it says: no nil indexed
    ('Retrying failed action {:status=>403, :action=>["index", {:_id=>nil, :_index=>"logs-1"}]}', None),
    ('lookup failed {"index": "users", "parent": null}', None),
    # near misses: a null read as an object, said in words
    ("attempt to index a nil value (field 'config')", "null_reference"),
    ("NoMethodError: undefined method `name' for nil:NilClass", "null_reference"),
    ("TypeError: Cannot read properties of null (reading 'id')", "null_reference"),
])
def test_a_hashs_keys_and_a_null_field_are_not_a_null_read(line, category):
    from pipeline.analyst.ideas import category_of_line

    assert category_of_line(line) == category
