"""A resource at its capacity (issue 36.1): a line that counts what is taken of a bounded resource and
its maximum, the two the same (`pool in use 50/50`, `acquired=20 idle=0 pending=57 maxSize=20`,
`CURDEPTH(5000) MAXDEPTH(5000)`), says the resource has nothing left to give, whatever the library's
words for the failure it causes. Which category it supports is the resource's: a worker, thread or
executor limit a server's or client's own (resource_exhaustion), a pool a database's connection pool
when the incident names one such (db_pool_exhausted), a queue's depth its consumers not keeping up
(queue_backlog). Any level: a health check's or metrics' INFO line states the state; but only in an
incident some problem line opened (a healthy pool at its size says nothing alone).

Grounded in the line, weaker than a doc's signature: named capped below the code-fix threshold, as
the ideas of a cause are (pipeline/analyst/ideas.py), and a little above an idea's support, since
a measured state is what the failures it produces are said of (a connection request timing out
beside its pool at its maximum is the pool's).
"""
from __future__ import annotations

from pipeline.analyst.specifics import counted_at_max
from pipeline.analyst.cause_words import DATABASE_WORDS, Idea
from pipeline.analyst.ideas import IDEA_SCORE, event_text_of, tokens_of, unframed_head
from pipeline.knowledge.meaning import masked
from pipeline.state import LogEvent

CAPACITY_SCORE = IDEA_SCORE + 0.1
# the resource, by the words the line names it with: the first group that matches decides
_RESOURCES: tuple[tuple[str, frozenset[str]], ...] = (
    ("resource_exhaustion", frozenset("thread threads worker workers executor process processes children "
                                      "semaphore bulkhead".split())),
    # ... a pool's, or its connections' counted (`conns busy=10/10`): a database's pool when the incident names one
    ("db_pool_exhausted", frozenset("pool pooled connection connections conn conns".split())),
    ("queue_backlog", frozenset("queue queues depth".split())),
)
_POOL = Idea("db_pool_exhausted", (frozenset({"pool", "pooled"}), frozenset(DATABASE_WORDS.split())), "")
# ... or a line taking a database's connection or client from it (`failed to get db client: timed out waiting for a
# slot`): what the pool gives is the database's
_TAKEN = Idea("db_pool_exhausted", (frozenset("get getting got acquire acquiring obtain obtaining checkout".split()),
                                    frozenset(DATABASE_WORDS.split())), "")
LABEL = {"resource_exhaustion": "a worker, thread or executor limit reached",
         "db_pool_exhausted": "a connection pool with every connection taken",
         "queue_backlog": "a queue at its maximum depth"}


def _names(words: frozenset[str], names: frozenset[str]) -> bool:
    """Whether a word is one of `names` or a compound of one, as a setting's or metric's name joins
    it to a qualifier (`CURDEPTH`, `maxDepth` read as two words already, `threadpool`, `poolsize`)."""
    return bool(names & words) or any(w.startswith(n) or w.endswith(n) for w in words for n in names)


def categories_at_capacity(events: list[LogEvent]) -> dict[str, tuple[str, int]]:
    """category -> (what is at its capacity, how many lines say so), for the lines counting a bounded
    resource taken to its maximum; {} when no problem line opened the incident."""
    return {c: (label, len(texts)) for c, (label, texts) in _at_capacity(events).items()}


def lines_at_capacity(events: list[LogEvent], category: str) -> list[bool]:
    """Per event, whether its line counts the category's resource at its maximum (read in the whole incident's
    context, as categories_at_capacity reads it)."""
    texts = _at_capacity(events).get(category, ("", frozenset()))[1]
    return [bool(texts) and unframed_head(e.message) in texts for e in events]


def _at_capacity(events: list[LogEvent]) -> dict[str, tuple[str, frozenset[str]]]:
    """category -> (what is at its capacity, the line heads that say so)."""
    if not any(e.level in (None, "WARN", "ERROR", "FATAL") for e in events):
        return {}
    # most incidents count nothing at its maximum: their lines are not read further
    full = [text for text in dict.fromkeys(e.message for e in events) if counted_at_max(text)]
    if not full:
        return {}
    texts = [event_text_of(e) for e in events]
    out: dict[str, tuple[str, frozenset[str]]] = {}
    said: list[tuple[str, ...]] | None = None
    for text in dict.fromkeys(unframed_head(m) for m in full):
        words = frozenset(tokens_of(masked(text)))
        category = next((c for c, names in _RESOURCES if _names(words, names)), None)
        if category == "db_pool_exhausted":
            # a pool is a database's when some line of the incident names it so (`jdbc pool`, `connection pool`)
            said = said if said is not None else [tokens_of(masked(t)) for t in texts]
            if not any(_POOL.found_near(t) or _TAKEN.found_near(t) for t in said):
                category = None
        if category is not None:
            label, lines = out.get(category, (LABEL[category], frozenset()))
            out[category] = (label, lines | {text})
    return out
