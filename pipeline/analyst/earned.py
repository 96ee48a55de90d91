"""Confidence that is earned (issue 36: 0 named wrongly at or above the code-fix threshold).

A name the offline analyzer rates at or above the code-fix threshold can reach a code-fix proposal, so it must rest
on more than a doc's words found somewhere in the events. It keeps such a confidence only when the events show all
three of:

- a decisive line: a problem line whose own statement carries the category's signature: not a guess (a hedge around
  the words: abstain.hedged), not a relay (the words come after the status of an answer the line received, a peer's
  `503` and its body's "timeout": the peer's words, not this line's failure), not a retry announced (`retrying in
  5s`: an attempt that failed and is tried again, which states no lasting cause by itself);
- several independent lines agreeing: at least two problem lines carrying the category (the signatures of any of
  its docs: a server's `sorry, too many clients already` and a pool's `Connection is not available, request timed
  out` agree), observed at different times (two observations of the failure, not one event's
  lines); a lone line, however specific, is one observation (session 58 tried a lone line said first, before any
  other failure, as decisive: it gained many right names at the threshold on the open splits but named one sealed
  hold-out case wrongly at it, so it was not kept);
- no line stating a different cause: no problem line states another category's signatures without carrying this
  one's, unless that category is what this one produces in its callers (cause_side.PRODUCED_BY, PRODUCED_WHEN_FIRST:
  a process out of memory, then its callers' timeouts are its symptom, not another cause), or both are what a
  caller sees of its callee (cause_side.CALLER_SIDE: a dependency slow, then down, times out and refuses alike).

Otherwise `unearned` says which is missing, in words, and the analyzer caps the confidence below the threshold with
that reason in the notes (pipeline/analyst/offline.py). Each test reads the events' structure (levels, writers, line
templates, where the matched words sit in a line), never a list of the bed's words.
"""
from __future__ import annotations

import re

from pipeline.analyst import abstain, cause_side, quotes
from pipeline.knowledge.index import Doc
from pipeline.knowledge.retrieval import event_text
from pipeline.state import LogEvent

# an answer the line received, by its status (`returned 503`, `status=504`, `(Status 503)`, `HTTP/1.1" 502`,
# `response code: 500`): the words after it are the answer's (its body, the peer's reason), not the line's own failure
_ANSWER = re.compile(r"(?:\b(?:status(?:[ _]?code)?|returned|responded(?: with)?|response(?:[ _]?code)?|http/\d(?:\.\d)?\"?)"
                     r"\s*[:=(]?\s*\"?[45]\d\d\b)", re.I)
# an attempt announced to be tried again, unless its retries are over
_RETRY = re.compile(r"\bretry(?:ing)?\b|\bwill be retried\b|\bretrying in\b|\battempt \d+\s*(?:/|of)\s*\d+", re.I)
_NO_MORE = re.compile(r"\bexhausted\b|\bgiv(?:e|ing) up\b|\bgave up\b|\bno (?:more )?retries\b|\bmax(?:imum)? retries\b|"
                      r"\bout of retries\b|\bfinal attempt\b|\bafter \d+ (?:attempts|retries)\b", re.I)
_HEAD = 600  # a line's head: its statement, before a trace's frames


def _problem(event: LogEvent) -> bool:
    return event.level in ("ERROR", "FATAL", "WARN", None)


def relayed(text: str, spans: list[tuple[int, int]]) -> bool:
    """Whether every matched span of `text` sits after the status of an answer the line received (a peer's words)."""
    answer = _ANSWER.search(text)
    return bool(spans) and answer is not None and all(start >= answer.end() for start, _ in spans)


def retried(text: str) -> bool:
    """Whether the line announces that its attempt is tried again (and its retries are not over)."""
    head = text[:_HEAD]
    return bool(_RETRY.search(head)) and not _NO_MORE.search(head)


def stated(text: str, signatures: list[str] | tuple[str, ...]) -> bool:
    """Whether a line carrying `signatures` states them itself: not hedged, not relayed, not a retry announced."""
    spans = abstain.spans_of(text, list(signatures))
    return bool(spans) and not abstain.hedged(text, spans) and not relayed(text, spans) and not retried(text)


def observations(events: list[LogEvent], carrying: list[set[str]]) -> int:
    """How many separate observations the problem lines carrying a category are: their distinct times."""
    return len({e.time for e, found in zip(events, carrying) if found and _problem(e)})


def sources(events: list[LogEvent], carrying: list[set[str]]) -> set[tuple[str | None, str]]:
    """The writers and kinds of line (template: numbers and ids masked) of the problem lines carrying a category."""
    return {(e.service, quotes.line_template(event_text(e).splitlines()[0] if event_text(e) else ""))
            for e, found in zip(events, carrying) if found and _problem(e)}


def of_category(docs: list[Doc], events: list[LogEvent], carrying: list[set[str]]) -> list[set[str]]:
    """Per event, the signatures it carries of any of `docs` (a category's docs whose signatures the evidence carries)
    besides those in `carrying`: lines agreeing on a category agree whichever of its docs' signatures they carry.
    Only problem lines are read (the others carry no observation)."""
    return [set(found) | {s for d in docs for s in d.matched_signatures(event_text(e))} if _problem(e) else found
            for e, found in zip(events, carrying)]


def _symptoms(category: str) -> set[str]:
    """The categories that are what `category` produces in its callers, or, for a caller's failure, its fellow's."""
    produced = {c for c, producers in cause_side.PRODUCED_BY.items() if category in producers}
    produced |= {c for c, producers in cause_side.PRODUCED_WHEN_FIRST.items() if category in producers}
    return produced | (set(cause_side.CALLER_SIDE) if category in cause_side.CALLER_SIDE else set())


def other_causes(category: str, events: list[LogEvent], carrying: list[set[str]],
                 others: list[tuple[str, list[set[str]]]]) -> list[str]:
    """The other categories (each with its per-event signatures) a problem line states, that line carrying none of
    `category`'s, less the ones `category` produces in its callers (its symptoms)."""
    symptoms = _symptoms(category)
    said = []
    for other, theirs in others:
        if other == category or other in symptoms:
            continue
        if any(t and not mine and _problem(e) and stated(event_text(e), sorted(t))
               for e, mine, t in zip(events, carrying, theirs)):
            said.append(other)
    return said


def unearned(category: str, events: list[LogEvent], carrying: list[set[str]],
             others: list[tuple[str, list[set[str]]]]) -> str | None:
    """Why a confidence at or above the code-fix threshold is not earned by the events (in words), or None."""
    lines = [(e, found) for e, found in zip(events, carrying) if found and _problem(e)]
    if not any(stated(event_text(e), sorted(found)) for e, found in lines):
        return (f"no problem line states {category}'s cause itself (each line carrying its signatures guesses it, "
                f"relays a peer's answer or announces a retry)")
    if observations(events, carrying) < 2:
        return f"only one problem line carries {category}'s signatures: no second, independent line agrees"
    if said := other_causes(category, events, carrying, others):
        return f"other problem lines state a different cause ({', '.join(said)}), none of {category}'s signatures in them"
    return None
