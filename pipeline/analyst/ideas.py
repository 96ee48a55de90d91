"""Causes in any wording (issue 36.1): a category is supported when one event carries every
required idea of its cause, each idea a set of words, matched over the event's normalised words
(lowered, `CamelCase` and `snake_case` split: `ConnectionPoolExhausted` is connection, pool,
exhausted). A pool-exhaustion needs a pool word, a connection word and an exhaustion or acquire
word, however the library phrases it (`Failed to acquire database connection - pool exhausted`,
`ConnectionPoolExhausted: All connections in use`, `Could not acquire connection from pool after
30s`). It is grounded (the words are in an event) but weaker than a doc's signature: such a
category is named with its confidence capped below the code-fix threshold (IDEA_CONFIDENCE),
and it adds nothing to a category a signature already supports.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from pipeline.state import LogEvent

IDEA_SCORE = 1.2  # a support score as the signatures' (pipeline/analyst/offline.py category_support)
IDEA_CONFIDENCE = 0.45  # below the default code-fix threshold: ideas name a cause, never prove it
_CHARS = 2_000  # per event text: the cause is worded in the head of a line or trace


@dataclass(frozen=True)
class Idea:
    """The required ideas of one category's cause: every group needs one of its words in one event."""

    category: str
    groups: tuple[frozenset[str], ...]
    label: str

    def found_in(self, words: frozenset[str]) -> bool:
        return all(group & words for group in self.groups)


def _idea(category: str, label: str, *groups: str) -> Idea:
    return Idea(category, tuple(frozenset(g.split()) for g in groups), label)


# the most specific first: a pool's acquire timeout is pool exhaustion before it is a timeout
IDEAS: tuple[Idea, ...] = (
    _idea("db_pool_exhausted", "a connection pool with no connection to give",
          "pool pooled", "connection connections conn conns",
          "exhausted exhaustion exhaust acquire acquiring obtain checkout depleted"),
    _idea("tls_certificate", "a certificate expired, revoked or not trusted",
          "certificate certificates cert certs x509 ssl tls", "expired untrusted revoked"),
    _idea("dns_resolution", "a host name that does not resolve",
          "resolve resolving resolution resolved unresolved nxdomain unknownhost lookup",
          "host hostname dns domain name", "not unable failed failure cannot unknown nxdomain error no"),
    _idea("upstream_timeout", "a call to a dependency timing out",
          "timeout timed timedout deadline",
          "service upstream gateway request requests call calls response http 503 504 read command redis api"),
    _idea("connection_refused", "a connection refused",
          "refused refusing", "connection connections connect connecting"),
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORDS = re.compile(r"[a-z0-9]+")


@functools.lru_cache(maxsize=2048)
def words_of(text: str) -> frozenset[str]:
    """The normalised words of a text: CamelCase and snake_case split, lowered."""
    return frozenset(_WORDS.findall(_CAMEL.sub(" ", text[:_CHARS]).lower()))


def _texts(events: list[LogEvent]) -> list[str]:
    # the problem events only: an INFO line's "request timeout set to 30s" states a setting
    seen: dict[str, None] = {}
    for event in events:
        if event.level not in (None, "WARN", "ERROR", "FATAL"):
            continue
        seen.setdefault(" ".join(filter(None, (event.exception, event.message[:_CHARS]))))
    return list(seen)


def categories_worded(events: list[LogEvent]) -> dict[str, tuple[str, int]]:
    """category -> (its idea's label, how many distinct event texts carry it), the first idea an
    event's words carry deciding that event (the most specific)."""
    out: dict[str, tuple[str, int]] = {}
    for text in _texts(events):
        words = words_of(text)
        for idea in IDEAS:
            if idea.found_in(words):
                label, n = out.get(idea.category, (idea.label, 0))
                out[idea.category] = (label, n + 1)
                break
    return out
