"""Causes in any wording (issue 36.1): a category is supported when one event carries every
required idea of its cause, each idea a set of words, matched over the event's normalised words
(lowered, `CamelCase` and `snake_case` split: `ConnectionPoolExhausted` is connection, pool,
exhausted). A pool-exhaustion needs a pool word, a connection word and an exhaustion or acquire
word, however the library phrases it (`Failed to acquire database connection - pool exhausted`,
`ConnectionPoolExhausted: All connections in use`, `Could not acquire connection from pool after
30s`). It is grounded (the words are in an event) but weaker than a doc's signature: such a
category is named with its confidence capped below the code-fix threshold (IDEA_CONFIDENCE),
and it adds nothing to a category a signature already supports.

The ideas themselves, a table of words, are pipeline/analyst/cause_words.py. Meaning, a weaker signal still,
is read in pipeline/analyst/meant.py.
"""
from __future__ import annotations

import functools
import re

from pipeline.analyst import sqlstates, versions
from pipeline.analyst.cause_words import IDEAS, Idea
from pipeline.analyst.specifics import CAUSED_BY, FRAME, INNER, OPENS_WITH_CLASS
from pipeline.knowledge.meaning import masked
from pipeline.state import LogEvent

IDEA_SCORE = 1.2  # a support score as the signatures' (pipeline/analyst/offline.py category_support)
IDEA_CONFIDENCE = 0.45  # below the default code-fix threshold: ideas name a cause, never prove it
_CHARS = 2_000  # per event text: the cause is worded in the head of a line or trace


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORDS = re.compile(r"[a-z0-9]+")
_LOCATOR = re.compile(r"\b[a-z][\w+.-]*://[^\s\"'<>)\]]+|(?<![\w./])/?[\w.-]+(?:/[\w.{}:-]+){2,}")
# a setting's key or a host (`quarkus.rest-client.pricing-api.url`, `kafka-2.kafka.svc`): lowercase and
# dotted, one word; a class's name keeps its words (`tomcat.jdbc.pool.PoolExhaustedException`)
_KEY = re.compile(r"(?<![\w.-])[a-z][a-z0-9_-]*(?:\.[a-z0-9_-]+){2,}(?![\w.-])")
# ... and, read for the ideas of a cause, a snake_case field's name before its value (`internal_log_rate_limit=true`,
# `retry_after_ms=500`): the name of what the line reports, not words it says (its value is read; a count's key still
# names its resource where a line counting one is read: capacity.py)
# ... and a key of a hash written with an arrow (Ruby's `:_index=>"logs"`, `"type"=>"x"`, whatever its case; session 56:
# a bulk action's `{:_id=>nil, :_index=>…}` is no nil indexed)
# ... and a key's value that is a null (`:_id=>nil,`, `"parent": null}`, `owner=None)`): an empty field, not a null read
_FIELD_NAME = re.compile(r"(?<![\w.-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?==)|(?<![\w])[:\"']?_?[A-Za-z]\w*[\"']?(?=\s*=>)|"
                         r"(?<=[=:>])\s*(?:nil|null|None)(?=\s*(?:[,}\])]|$))")


# a verb said in two words is one idea (`Could not check out a connection`, Erlang's `** (EXIT) time out`)
_PHRASAL = re.compile(r"\b(?:check(?:ed|ing)?|(time))[ -]out\b", re.I)


# ... and a connection said to have timed out, the words one after the other (the JDK's `Connection timed out`,
# `connect timed out`) is one idea, `connecttimeout`: not a connection and a timeout said apart in one line (`publish
# timed out: connection blocked by broker`, `Connection refused, Timeout: 30s`)
_CONNECT_TIMEOUT = re.compile(r"\bconnect(?:ion)?[ -]+(?:timed[ -]+out|time[ -]?out)\b", re.I)


# a few ideas said in several words by people writing their own messages, each read as the one word the ideas name
# (the words kept beside it for the other ideas): a supply `ran out of`, or with `no free` one, is exhausted; what is `no longer valid` or
# `not valid` is invalid; a `self-signed` certificate is one no authority signed; an `unknown host` (`UnknownHostError`,
# curl's `Unknown host`) is a name that did not resolve; `didn't` and `can't` are `not`
_SAID_AS = (
    (re.compile(r"\b(?:ran|run|runs|running)[ -]+out[ -]+of\b", re.I), "exhausted"),
    # ... as is one with none free, idle or spare (`no free connections left`, `NoIdleConnection`)
    (re.compile(r"\bno[ _-]?(?:free|idle|spare)\b(?![ _-]?time)", re.I), "exhausted"),  # not a setting's `no idle timeout`
    (re.compile(r"\b(?:no[ -]+longer|not)[ -]+valid\b", re.I), "invalid"),
    (re.compile(r"\bself[ -]?signed\b", re.I), "selfsigned"),
    (re.compile(r"\bunknown[ _-]?host(?![ _-]?keys?\b)", re.I), "unknownhost"),
    # a negation said in a contraction (`didn't respond`, `couldn't connect`, `can't resolve`) is `not`
    (re.compile(r"\b(?:did|does|do|could|can|would|was|were|is|are|has|have|wo)n[’']t\b|\bcan[’']t\b", re.I), "not"),
)


def _joined(text: str) -> str:
    text = _CONNECT_TIMEOUT.sub(lambda m: f"{m.group(0)} connecttimeout", text)  # the words kept for the other ideas
    for said, word in _SAID_AS:
        text = said.sub(rf"\g<0> {word} ", text)
    return _PHRASAL.sub(lambda m: "timeout" if m.group(1) else "checkout", text)


@functools.lru_cache(maxsize=2048)
def words_of(text: str) -> frozenset[str]:
    """The normalised words of a text: CamelCase and snake_case split, lowered."""
    return frozenset(_WORDS.findall(_CAMEL.sub(" ", _joined(text[:_CHARS])).lower()))


# a position in a text read (`at line 1 column 92`, `line: 3, column: 7`): a parser's, never a table's column
_POSITION = re.compile(r"\b(?:line|row)\W{0,2}\d+\W{0,3}col(?:umn)?\W{0,2}\d+|\bcol(?:umn)?\W{0,2}\d+\b", re.I)


@functools.lru_cache(maxsize=2048)
def tokens_of(text: str) -> tuple[str, ...]:
    """words_of in their order (for nearness)."""
    # a URL or a path is one word however long: its host and path are not the clause's words
    text = _POSITION.sub(" position ", _joined(text[:_CHARS]))
    return tuple(_WORDS.findall(_CAMEL.sub(" ", _KEY.sub(" key ", _LOCATOR.sub(" url ", text))).lower()))


def _texts(events: list[LogEvent]) -> list[str]:
    # the problem events only: an INFO line's "request timeout set to 30s" states a setting
    seen: dict[str, None] = {}
    for event in events:
        if event.level not in (None, "WARN", "ERROR", "FATAL"):
            continue
        seen.setdefault("\n".join(filter(None, (event.exception, _unframed(event.message[:_CHARS * 4])[:_CHARS],
                                               _thrown(event.stack)))))
    return list(seen)


def event_text_of(event: LogEvent) -> str:
    """An event's message without its trace's frames (any level: a context line names what the error's
    pool or lock is)."""
    return unframed_head(event.message)


def unframed_head(message: str) -> str:
    """A message's head without its trace's frames."""
    return _unframed(message[:_CHARS * 4])[:_CHARS]


@functools.lru_cache(maxsize=2048)
def _unframed(message: str) -> str:
    """A message less the frames of a trace it carries (`at org.apache.derby.impl.services.locks.
    ConcurrentLockSet.lockObject`): a frame's class names the code that ran, not what failed."""
    if "\n" not in message:
        return message
    return "\n".join(line for line in message.splitlines() if not FRAME.match(line))


def _thrown(stack: str | None) -> str | None:
    """A trace's exception lines (its head and each `Caused by:`), not its frames: the deepest
    exception's words are the cause's, wherever the logger put the trace."""
    if not stack:
        return None
    lines = [line for line in stack[:_CHARS * 4].splitlines() if line.strip() and not FRAME.match(line)]
    # the head, each `Caused by:` and each line that opens with an exception class (a Python trace's
    # last line); a traceback's source lines (`data = json.loads(body)`) are code, not what failed
    thrown = [line for n, line in enumerate(lines) if (n == 0 and not line.startswith(" "))
              or CAUSED_BY.match(line) or OPENS_WITH_CLASS.match(line.strip())]
    return "\n".join(thrown)[:_CHARS] or None  # a line each: a `Caused by:` still opens its line (_readings)


def categories_worded(events: list[LogEvent]) -> dict[str, tuple[str, int]]:
    """category -> (its idea's label, how many distinct event texts carry it), the first idea an
    event's words carry deciding that event (the most specific)."""
    out: dict[str, tuple[str, int]] = {}
    said: list[tuple[str, ...]] = []  # every event's tokens, read when an idea needs its context
    # a burst's texts differ in their ids and numbers only: texts of one masked reading decide alike
    # (the context read is the incident's, the same for each), so each reading is decided once
    decided: dict[tuple[str, ...], Idea | None] = {}
    changed: list[bool] = []  # whether a line says a version changed, read once when an idea needs it
    for text in _texts(events):
        coded = sqlstates.coded(text)
        if coded is not None:
            # the server's own code says it, whatever its wording
            label, n = out.get(coded[0], (f"SQLSTATE's {coded[1]}", 0))
            out[coded[0]] = (label, n + 1)
            continue
        # no idea's word is a long number or an id: a burst's texts share one reading of their words
        # ... the deepest link of a cause chain read first (`Failed to obtain JDBC Connection` / `Caused by: ... protocol
        # version TLS10 is not accepted`): the wrapper's words say what failed, the deepest cause's why; the whole text
        # when the deepest link names no idea
        idea = None
        for tokens in _readings(text):
            if tokens not in decided:
                decided[tokens] = _idea_of(tokens, events, said, changed)
            if (idea := decided[tokens]) is not None:
                break
        if idea is not None:
            label, n = out.get(idea.category, (idea.label, 0))
            out[idea.category] = (label, n + 1)
    return out


def _readings(text: str) -> list[tuple[str, ...]]:
    """A text's tokens to read for an idea, in order: its cause chain's deepest link (Java's `Caused by:`, .NET's
    `--->`, with the line continuing it) when it has one, then the whole text."""
    whole = tokens_of(masked(_FIELD_NAME.sub(" key ", text)))
    links = list(INNER.finditer(text))
    if not links:
        return [whole]
    inner = links[-1]
    deepest = tokens_of(masked(" ".join(filter(None, (inner.group("what"), inner.group("more"))))))
    return [deepest, whole] if deepest and deepest != whole else [whole]


def _idea_of(tokens: tuple[str, ...], events: list[LogEvent], said: list[tuple[str, ...]],
             changed: list[bool]) -> Idea | None:
    """The idea one text's tokens name (categories_worded's reading), or None; `said` is filled with
    every event's tokens the first time an idea needs the incident's context, `changed` with whether
    a line says a version changed the first time an idea needs that."""
    words = frozenset(tokens)  # once per text, not once per idea tested on it
    deciding: str | None = None  # the category whose idea's words the text carries, not said together
    for idea in IDEAS:
        # a more specific idea's words anywhere in the text decide it (a pool's trace is not read
        # for a timeout), but name its category only when said together; the category's later ideas are
        # still read (a memory limit exceeded, its allocation's words further on): they name that one alone
        if deciding is not None and idea.category != deciding:
            continue
        if idea.found_in(words):
            if idea.changed:
                if not changed:
                    changed.append(versions.changed(events))
                if not changed[0]:
                    continue
            if idea.context or idea.unless:
                # said of another thing here, or its subject named nowhere: not this idea's
                if idea.unless & words or \
                        idea.unless & {a + b for a, b in zip(tokens, tokens[1:])}:  # a class's name, split
                    continue
                if idea.context and not said:
                    said += [tokens_of(masked(event_text_of(e))) for e in events]
                if idea.context and not any(Idea(idea.category, idea.context, idea.label).found_near(t)
                                            for t in said):
                    continue
            if idea.found_near(tokens):
                return idea
            deciding = idea.category
    return None


@functools.lru_cache(maxsize=2048)
def category_of_line(text: str) -> str | None:
    """The category the first idea whose words one line carries names, when said together (the
    incident's context aside: the line that says the cause, not whether it holds)."""
    tokens = tokens_of(masked(_FIELD_NAME.sub(" key ", text)))
    words = frozenset(tokens)
    deciding: str | None = None
    for idea in IDEAS:
        if deciding is not None and idea.category != deciding:
            continue
        if idea.found_in(words) and not idea.unless & words:
            if idea.found_near(tokens):
                return idea.category
            deciding = idea.category
    return None
