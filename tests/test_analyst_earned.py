"""Confidence that is earned (issue 36, session 57): a name reaches the code-fix threshold only when a decisive line
states the category's cause itself (not a guess, not a peer's answer relayed, not a retry announced), a second line
agrees at another time, and no problem line states a different cause (pipeline/analyst/earned.py); otherwise the
confidence is capped below the threshold with the reason in the notes. Each with its near miss. Lines are this
file's own."""
from __future__ import annotations

import pytest

from pipeline.analyst.earned import relayed, retried, stated
from pipeline.analyst.offline import UNDECIDED_CONFIDENCE
from tests.support import THRESHOLD, offline_rca

REFUSED = "checkout failed: dial tcp 10.4.2.9:5432: connect: connection refused"


@pytest.mark.parametrize("line, signatures, expected", [
    # the words after the status of an answer the line received are the peer's, not this line's failure
    ('quote failed: pricing returned 503: {"error": "connect: connection refused"}', ["connection refused"], True),
    ("charge failed (Status 502) upstream said: context deadline exceeded", ["context deadline exceeded"], True),
    # near misses: the line's own failure, before or without any answer's status
    ("quote failed: connect: connection refused (will answer 503)", ["connection refused"], False),
    ("quote failed: connect: connection refused", ["connection refused"], False),
])
def test_a_peers_answer_is_relayed_not_stated(line, signatures, expected):
    from pipeline.analyst.abstain import spans_of
    assert relayed(line, spans_of(line, signatures)) is expected


@pytest.mark.parametrize("line, expected", [
    ("connect: connection refused, retrying in 5s", True),
    ("request failed (attempt 2/5): connection refused", True),
    # near misses: the retries are over, or none is announced
    ("connect: connection refused, giving up after 5 attempts", False),
    ("connect: connection refused", False),
])
def test_a_retry_announced(line, expected):
    assert retried(line) is expected


def test_a_guess_is_not_stated():
    assert not stated("worker 3 was killed, perhaps out of memory?", ["out of memory"])
    assert stated("worker 3 killed: out of memory", ["out of memory"])


def _at(second: int, message: str, service: str = "shop") -> dict:
    return {"time": f"2026-01-05T08:00:{second:02d}Z", "service": service, "message": message}


def test_a_lone_line_is_named_but_not_confidently(offline_analyst):
    rca = offline_rca(offline_analyst, _at(1, REFUSED))
    assert rca.category == "connection_refused"
    assert rca.confidence <= UNDECIDED_CONFIDENCE < THRESHOLD
    assert any("no second, independent line agrees" in n for n in rca.notes), rca.notes


def test_two_lines_at_different_times_earn_it(offline_analyst):
    rca = offline_rca(offline_analyst, _at(1, REFUSED), _at(9, REFUSED.replace("checkout", "cart 88")))
    assert rca.category == "connection_refused" and rca.confidence >= THRESHOLD, (rca.confidence, rca.notes)


def test_only_relayed_answers_do_not_earn_it(offline_analyst):
    relay = 'quote failed: pricing returned 503: {"error": "dial tcp 10.4.2.9:5432: connect: connection refused"}'
    rca = offline_rca(offline_analyst, _at(1, relay), _at(9, relay.replace("quote", "order")))
    assert rca.confidence <= UNDECIDED_CONFIDENCE < THRESHOLD
    assert any("relays a peer's answer" in n for n in rca.notes), rca.notes


def test_only_retries_announced_do_not_earn_it(offline_analyst):
    retry = "dial tcp 10.4.2.9:5432: connect: connection refused; retrying in 5s"
    rca = offline_rca(offline_analyst, _at(1, retry), _at(9, retry))
    assert rca.category == "connection_refused" and rca.confidence <= UNDECIDED_CONFIDENCE < THRESHOLD


def test_a_line_stating_another_cause_leaves_it_undecided(offline_analyst):
    pool = "HikariPool-1 - Connection is not available, request timed out after 30000ms."
    rca = offline_rca(offline_analyst, _at(1, pool), _at(5, "429 Too Many Requests", "ledger"), _at(9, pool), _at(12, pool))
    assert rca.category == "db_pool_exhausted" and rca.confidence <= UNDECIDED_CONFIDENCE < THRESHOLD
    assert any("state a different cause (upstream_rate_limited)" in n for n in rca.notes), rca.notes
    # near miss: the pool's lines alone
    alone = offline_rca(offline_analyst, _at(1, pool), _at(9, pool), _at(12, pool))
    assert alone.category == "db_pool_exhausted" and alone.confidence >= THRESHOLD


def test_a_symptom_of_the_cause_is_no_other_cause(offline_analyst):
    # a process out of memory, then its callers' timeouts: the timeouts are what it produces, not another cause
    oom = "java.lang.OutOfMemoryError: Java heap space"
    rca = offline_rca(offline_analyst, _at(1, oom, "reports"), _at(4, oom, "reports"), _at(6, oom, "reports"),
                      _at(8, "call to reports failed: read timeout"))
    assert rca.category == "out_of_memory" and rca.confidence >= THRESHOLD, (rca.confidence, rca.notes)


# session 58: agreement across a category's docs
def test_lines_of_one_category_agree_whichever_of_its_docs_they_carry(offline_analyst):
    # a database server out of connection slots, then a pool with none to give: two docs of one category agree
    slots = _at(3, "FATAL: sorry, too many clients already", "orders")
    hikari = _at(9, "HikariPool-1 - Connection is not available, request timed out after 30000ms.", "orders")
    rca = offline_rca(offline_analyst, slots, hikari)
    assert rca.category == "db_pool_exhausted" and rca.confidence >= THRESHOLD, (rca.confidence, rca.notes)
    # near miss: the pool's line alone
    alone = offline_rca(offline_analyst, hikari)
    assert alone.category == "db_pool_exhausted" and alone.confidence <= UNDECIDED_CONFIDENCE < THRESHOLD
    assert any("no second, independent line agrees" in n for n in alone.notes), alone.notes
