"""Errors whose own words say nothing failed (CONTRACT §2): a notice logged at ERROR. A deprecation
(Python's warnings categories, `FutureWarning: DataFrame.applymap has been deprecated`, through
`py.warnings` at whatever level its handler was given) says a call will stop working one day, not
that it failed; a cache's miss (`cache miss for key user:88121, loading from db`) is the normal path of
a cache, the value read from its source; a scheduled run skipped because the previous one still holds its
lock or is already running (session 50) leaves the work to that run. Each is kept as context, unless the line also says
something broke (a cause or a symptom, `leading.rank`, or a failure word: `cache miss ... failed to
load: connection refused` opens).
"""
from __future__ import annotations

import re

from pipeline.incidents.leading import NEUTRAL, rank
from pipeline.incidents.line_names import HEAD_CHARS, first_line, holds_any
from pipeline.state import LogEvent

# what a deprecation is written as: Python's warning categories (the `warnings` module's names), and the
# words libraries print it in (`has been deprecated`, `is deprecated and will be removed`)
_DEPRECATION = re.compile(r"\b(?:Pending)?DeprecationWarning\b|\bFutureWarning\b|"
                          r"\b(?:is|are|has been|have been|was|were) deprecated\b|\bdeprecated since\b", re.I)
# a cache's miss, said as such (`cache miss`, `missed the cache`, `not in cache`)
_CACHE_MISS = re.compile(r"\bcache miss(?:es|ed)?\b|\bmiss(?:ed)? (?:in |from |the )?(?:the )?cache\b|"
                         r"\bnot (?:found )?in (?:the )?cache\b", re.I)
# a run skipped because another is still at the work (a scheduler's overlap: `previous run still holds
# /run/lock/digest.lock, skipping`, `job already running, skipped`): the earlier run does the work
_SKIPPED_OVERLAP = re.compile(r"\b(?:still|already)\b[^;\n]{0,80}?\bskip(?:ping|ped|s)?\b|"
                              r"\bskip(?:ping|ped|s)?\b[^;\n]{0,80}?\b(?:still|already) (?:running|in progress|active|held)\b",
                              re.I)
# every match of `_DEPRECATION`, `_CACHE_MISS` or `_SKIPPED_OVERLAP`, lower-cased, holds one of `deprecat`, `futurewarning`,
# `cache` or `skip` (`_NOTICE_WORDS`): an ASCII head (where lower-casing is what re.I compares) holding none is not
# searched (issue 37.3: three searches of every error line of a log)
_NOTICE_WORDS = ("deprecat", "futurewarning", "cache", "skip")
# a word that says something failed besides the notice (a miss whose load failed opens)
_FAILED = re.compile(r"fail|error|exception|refused|denied|timed? ?out|timeout|unavailable|unable|cannot|can't|"
                     r"could not|abort|crash|panic|fatal|killed|exhausted|corrupt|lost|reset|overload|"
                     # a deprecation that says the thing is gone is a failure (`… is deprecated and was removed in 1.25`)
                     r"\b(?:was|were|has been|have been|is|are) removed\b|\bno longer (?:supported|available|served)\b|"
                     r"unsupported|not supported|rejected", re.I)


def notice_only(event: LogEvent) -> bool:
    """Whether an error says only a notice (`_DEPRECATION`, `_CACHE_MISS`, `_SKIPPED_OVERLAP`): nothing failed, nothing
    to act on."""
    head = first_line(event.message)[:HEAD_CHARS]
    if head.isascii() and not holds_any(head.lower(), _NOTICE_WORDS):
        return False  # none of the words a match of the three needs: not searched
    if not (_DEPRECATION.search(head) or _CACHE_MISS.search(head) or _SKIPPED_OVERLAP.search(head)):
        return False  # (most errors say neither: nothing more is read)
    said = " ".join(t for t in (event.exception or "", head, (event.stack or "")[:HEAD_CHARS]) if t)
    # the warning's category is its name, not a failure word (`FutureWarning`, `DeprecationWarning`, Rails'
    # `DEPRECATION WARNING`), and so is a level its header writes (Ruby's `E, [...] ERROR -- :`, an `ERROR:` tag)
    return rank(event) == NEUTRAL and not _FAILED.search(_HEADER_LEVEL.sub(" ", re.sub(r"\w*Warning\b", " ", said, flags=re.I)))


# a level written in capitals, as a header writes it (a failure word in the message is written in its own case)
_HEADER_LEVEL = re.compile(r"\b(?:ERROR|ERR|FATAL|CRIT(?:ICAL)?|SEVERE|ALERT|EMERG)\b")
