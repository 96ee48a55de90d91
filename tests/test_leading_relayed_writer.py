"""The leader (CONTRACT §2, session 56): a warning leads an incident whose errors say its writer's one-word service name,
as a word or as its server program's (`<name>server:`, `<name>d:`), the writer having written none of the errors. Every line here is
written for these tests (no bed's words)."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pipeline.incidents.writers import SERVICE_NAMED, named_writer
from pipeline.state import LogEvent

T0 = datetime(2026, 12, 7, 3, 0, tzinfo=timezone.utc)


def _warning(service: str, host: str = "node-4") -> LogEvent:
    return LogEvent(event_id="w1", time=T0, service=service, host=host, level="WARN", message="compaction behind")


@pytest.mark.parametrize(("service", "texts", "named"), [
    # the errors say the writer: its name as a word, or its server program's, its name and `server` or `d` as one word
    ("kvstore", {" client error org kvstore action search failed "}, True),
    ("kvstore", {" proxy got an error kvstoreserver request timed out "}, True),
    ("quill", {" sync failed quilld lease revoked "}, True),
    ("kvstore-0", {" write rejected kvstoreserver quota reached "}, True),  # an ordinal is one instance of it
    # near misses: the name inside a longer word, another suffix, too short to be a program's name, two words
    ("worker", {" workers pool drained "}, False),
    ("kvstore", {" kvstoreservers list empty "}, False),
    ("kvstore", {" kvstoreclient closed "}, False),
    ("db", {" dbd connection lost "}, False),
    ("report-api", {" report apiserver down "}, False),  # a name of two words is no program's one word
    ("unknown", {" unknownd failed "}, False),
])
def test_a_writer_is_named_by_its_server_program_said_in_the_errors(service, texts, named):
    assert named_writer(_warning(service), frozenset(), texts) is named


def test_a_writer_the_errors_calls_named_is_still_named_without_words():
    assert named_writer(_warning("ledger"), {SERVICE_NAMED + "ledger"}, set())
    assert not named_writer(_warning("ledger"), {SERVICE_NAMED + "billing"}, {" billing failed "})
