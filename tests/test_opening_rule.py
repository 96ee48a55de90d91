"""The opening rule's signature check (a WARN line that names a known error opens an incident)
answers as every signature searched one by one would, for the shipped docs' 700-odd signatures."""
from __future__ import annotations

import random

from pipeline.incidents.opening import OpeningRule
from pipeline.knowledge.index import load_docs
from pipeline.state import LogEvent


def one_by_one(rule: OpeningRule, text: str) -> bool:
    lowered = text.lower()
    return any(s in lowered for s in rule._literals) or any(p.search(text) for p in rule._patterns)


def test_the_joined_search_finds_what_each_signature_finds():
    signatures = [s for doc in load_docs() for s in doc.signatures]
    rule = OpeningRule.of(floor="ERROR", signatures=signatures)
    rng = random.Random(7)
    words = ["pool", "timed", "out", "Connection", "is", "not", "available", "request", "after", "30000ms",
             "ExpiredToken", "broker", "does", "support", "java.net.SocketTimeoutException:", "Read", "timed"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))) for _ in range(400)]
    texts += [s if not s.startswith("re:") else s[3:] for s in rng.sample(signatures, 120)]  # literal spellings
    texts += [t.upper() for t in texts[:100]]
    hits = 0
    for text in texts:
        event = LogEvent(event_id="e", time="2026-11-28T10:00:00Z", level="WARN", service="s", message=text)
        assert rule.carries_signature(event) == one_by_one(rule, text), text
        hits += rule.carries_signature(event)
    assert 100 < hits < len(texts)  # both answers were exercised


def test_a_pattern_with_a_back_reference_still_counts_its_own_groups():
    rule = OpeningRule.of(floor="ERROR", signatures=["re:(\\w+) then \\1 again", "deadlock found"])
    event = lambda text: LogEvent(event_id="e", time="2026-11-28T10:00:00Z", level="WARN", service="s",  # noqa: E731
                                  message=text)
    assert rule.carries_signature(event("retry then retry again"))
    assert not rule.carries_signature(event("retry then abort again"))
    assert rule.carries_signature(event("InnoDB: Deadlock found when trying to get lock"))


def test_each_floor_opens_its_level_and_above_and_a_signed_line_one_step_below():
    from pipeline.ingest.levels import LEVELS, at_least

    for floor in LEVELS:
        rule = OpeningRule.of(floor=floor, signatures=["connection is not available"])
        below = LEVELS[LEVELS.index(floor) - 1] if floor != "DEBUG" else None
        for level in (*LEVELS, None):
            for message in ("Connection is not available, request timed out", "all good"):
                event = LogEvent(event_id="e", time="2026-11-28T10:00:00Z", level=level, service="s", message=message)
                signed = message.startswith("Connection")
                want = at_least(level, floor) or (level is not None and level == below and signed)
                assert rule.opens(event) == want, (floor, level, message)
