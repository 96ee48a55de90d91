"""Which of two supported causes is the cause and which its symptom (issue 36: honest confidence).

A category reaches the code-fix threshold only when its evidence supports it over the runner-up.
Two readings of the events tell a cause from its symptom without any knowledge of the wording:

- the chain of one trace: an exception printed as another's `Caused by:` (or after "nested exception
  is"), or printed before Python's "The above exception was the direct cause of the following
  exception", is deeper than it: the deepest is the cause, the outer ones what it caused (a pool's
  acquire timeout whose deepest cause is the database refusing its connections);
- time: the runner-up's problem lines starting before the top's (interleaved, so not the clean
  chain `offline._came_first` takes over) leave open which one led;
- how outages propagate (`PRODUCED_BY`): a caller's failure (a timeout, a refusal, a null read) beside
  a state of what it calls that produces it (a process out of memory, a full disk, a drained pool, an
  unset setting) is that state's symptom, whichever was logged first: two services' clocks and
  buffers do not order a cause before what it caused.

`chains` and `deeper` find the first; `started_before` the second. Both answer for the docs' signatures as
matched per event, so they hold for any stack and wording.
"""
from __future__ import annotations

import re
from datetime import datetime

from pipeline.knowledge.index import Doc
from pipeline.knowledge.retrieval import event_text
from pipeline.state import LogEvent

# an outer exception's text, then its cause's (Java, Spring's older messages, .NET's inner ones)
_INWARD = re.compile(r"^[ \t]*Caused by:|nested exception is\b|^[ \t]*---> ", re.M)
# the cause first, then the exception it caused (Python's chained tracebacks)
_OUTWARD = re.compile(r"^The above exception was the direct cause of the following exception:|"
                      r"^During handling of the above exception, another exception occurred:", re.M)


# a caller's failure and the states of what it calls that produce it: a service out of memory (GC-bound,
# then OOM-killed) times its callers out and, once down, refuses them; a full disk stops the database its
# clients then find refused; a drained pool, a deadlock or a backed-up queue hold a request past its
# caller's deadline; a server out of file descriptors or workers refuses or stalls; a setting left unset
# is read as null (not a refusal: a client's own missing setting fails its login or its address, and
# a server that cannot start for one shows its own failure). Never the reverse: a timeout does not
# fill a disk.
PRODUCED_BY: dict[str, frozenset[str]] = {
    "upstream_timeout": frozenset({"out_of_memory", "db_pool_exhausted", "db_deadlock", "resource_exhaustion",
                                   "disk_full", "queue_backlog"}),
    "connection_refused": frozenset({"out_of_memory", "disk_full", "resource_exhaustion"}),
    "null_reference": frozenset({"config_missing"}),
    # transactions waiting on locks hold their connections until the pool has none left; a pool that
    # cannot open connections (the database refusing them, its name not resolving, its login failing)
    # has none to give
    "db_pool_exhausted": frozenset({"db_deadlock", "connection_refused", "dns_resolution",
                                    "upstream_auth_failure"}),
}
# ... and failures that produce a caller's only when said first: a call retried against an endpoint that
# refuses it, or whose name does not resolve, runs out its deadline (a refusal strictly before the timeouts
# is their cause; after them it is the dependency, slow then down, refusing: their common symptom)
PRODUCED_WHEN_FIRST: dict[str, frozenset[str]] = {
    "upstream_timeout": frozenset({"connection_refused", "dns_resolution"}),
    # ... and a client's own outbound queue backs up (a producer's batches expire undelivered) when its broker
    # cannot be reached: the refusal said first is why nothing was delivered
    "queue_backlog": frozenset({"connection_refused", "dns_resolution"}),
}
# ... states that a slow dependency can produce in its caller as well (its own pool held by connections
# waiting on the slow call, its executor's threads blocked, its consumers lagging): the caller's timeout
# is their symptom only when another service says them (the callee), not the timing-out service itself
EITHER_WAY: dict[str, frozenset[str]] = {
    "upstream_timeout": frozenset({"db_pool_exhausted", "resource_exhaustion", "queue_backlog"}),
}


# a pool counting no connection open at all when it fails to give one (HikariCP's `(total=0, active=0, idle=0,
# waiting=8)`, a pool's `size: 0`): demand did not drain it, it could not open any
_NONE_OPEN = re.compile(r"\b(?:total|size|open|opened|connections)\s*[=:]\s*0\b(?![.\d])|"
                        r"\bactive\s*[=:]\s*0\b\W{1,3}idle\s*[=:]\s*0\b", re.I)


def none_open(texts: list[str]) -> bool:
    """Whether every one of a pool's failing lines counts no connection open at all (`_NONE_OPEN`): what stops it
    opening them (the database refusing, its name, its login: PRODUCED_BY) is their cause however often it is said."""
    return bool(texts) and all(_NONE_OPEN.search(t) for t in texts)


def segments(text: str) -> list[tuple[int, str]]:
    """The text cut at its chain markers, each part with its depth in the chain (0 the outermost)."""
    marks = sorted([(m.start(), True) for m in _INWARD.finditer(text)]
                   + [(m.start(), False) for m in _OUTWARD.finditer(text)])
    if not marks:
        return [(0, text)]
    cuts = [0, *(p for p, _ in marks), len(text)]
    inward = [i for _, i in marks]
    return [(sum(inward[:n]) + sum(not i for i in inward[n:]), text[cuts[n]:cuts[n + 1]])
            for n in range(len(cuts) - 1)]


def chains(events: list[LogEvent]) -> list[list[tuple[int, str]]]:
    """The problem events' texts that are chains (two parts or more), cut by `segments`."""
    out = []
    for event in events:
        if event.level in ("ERROR", "FATAL", "WARN", None):
            text = event_text(event)
            if ("Caused by:" in text or "nested exception is" in text or "---> " in text or "above exception" in text) \
                    and len(parts := segments(text)) > 1:
                out.append(parts)
    return out


def deeper(top: Doc, other: Doc, chained: list[list[tuple[int, str]]]) -> bool:
    """Whether one chain (`chains`) carries both docs' signatures with `other`'s deeper than any of
    `top`'s (so `top` is what `other` caused)."""
    for parts in chained:
        mine = [depth for depth, part in parts if top.matched_signatures(part)]
        theirs = [depth for depth, part in parts if other.matched_signatures(part)] if mine else []
        if theirs and max(theirs) > max(mine):
            return True
    return False


def started_before(mine: list[set[str]], theirs: list[set[str]], events: list[LogEvent]) -> bool:
    """Whether the problem lines carrying `theirs` began strictly before those carrying `mine`
    (per event, the signatures each carries: `offline.OfflineAnalyst._carrying`)."""
    def first(carrying: list[set[str]]):
        times = [e.time for e, found in zip(events, carrying) if found and e.level in ("ERROR", "FATAL", "WARN", None)]
        return min(times) if times else None
    a, b = first(mine), first(theirs)
    return a is not None and b is not None and b < a


# the failures a caller sees of what it calls, and the callee's own failures said before them that are their
# cause when the caller's lines name that callee: a server that failed (to start, or at its limit) refuses
# whatever its failure was; its callers' timeouts are a state's it holds that stalls it (PRODUCED_BY)
CALLER_SIDE = ("connection_refused", "upstream_timeout")


def callee_first(events: list[LogEvent], category: str, carrying: list[bool],
                 others: list[tuple[str, list[bool]]]) -> int | None:
    """The index of the first of `others` (each a category and, per event, whether it carries it) said
    only in problem lines strictly before every problem line of the caller-side `category` (per event
    `carrying`), by a service or host other than theirs that their lines name (`upstream: .../php-fpm.sock`
    of service php-fpm, `http://search.svc:7700` of service search): the callee's own failure, which its
    callers' refusals or timeouts follow. None when the caller's lines name no such callee."""
    caller = _caller_lines(events, category, carrying)
    if caller is None:
        return None
    mine, start, callers, said = caller
    produced = PRODUCED_BY.get(category, frozenset()) | PRODUCED_WHEN_FIRST.get(category, frozenset())
    for n, (other, found) in enumerate(others):
        if other == category or (category != "connection_refused" and other not in produced):
            continue
        theirs = [e for e, f in zip(events, found) if f and e.level in ("ERROR", "FATAL", "WARN", None)]
        if theirs and max(e.time for e in theirs) < start and any(
                e.service not in callers and _named(e.service, said) or
                e.host and e.host not in {c.host for c in mine} and _named(e.host, said) for e in theirs):
            return n
    return None


def callee_failed_first(events: list[LogEvent], category: str, carrying: list[bool],
                        saying: list[bool]) -> LogEvent | None:
    """The first error (ERROR or FATAL, said) of a service other than the callers' that the caller-side `category`'s
    lines (per event `carrying`) name, said strictly before every one of them and not itself saying the category (per
    event `saying`: a fellow caller refused too), whatever else it says: the callee failed first, so what its callers
    see of it (a refusal, a timeout) is what its failure left, not why it failed. None otherwise."""
    caller = _caller_lines(events, category, carrying)
    if caller is None:
        return None
    _, start, callers, said = caller
    return next((e for e, says in zip(events, saying) if not says and e.time < start and e.level in ("ERROR", "FATAL")
                 and e.service not in callers and _named(e.service, said)), None)


def _caller_lines(events: list[LogEvent], category: str, carrying: list[bool]
                  ) -> tuple[list[LogEvent], datetime, set[str | None], str] | None:
    """The caller side's problem lines of a caller-side `category` (per event `carrying`), their first
    time, their services and their text (lowercase), or None when the category is not a caller's or
    no problem line carries it."""
    if category not in CALLER_SIDE:
        return None
    mine = [e for e, found in zip(events, carrying) if found and e.level in ("ERROR", "FATAL", "WARN", None)]
    if not mine:
        return None
    return mine, min(e.time for e in mine), {e.service for e in mine}, " ".join(event_text(e) for e in mine).lower()


def named(name: str | None, text: str) -> bool:
    """Whether a service's or host's name is named in `text` (lowercase), as `callee_first` reads it."""
    return _named(name, text)


def _named(name: str | None, text: str) -> bool:
    """Whether every word of a service's or host's name (letters, 3 or more) starts a word of `text`."""
    words = re.findall(r"[a-z]{3,}", (name or "").lower())
    return bool(words) and all(re.search(rf"(?<![a-z]){w}", text) for w in words)


def state_behind(events: list[LogEvent], category: str, carrying: list[bool],
                 others: list[tuple[str, list[bool]]]) -> int | None:
    """The index of the first of `others` (a state named by the ideas of its cause or counted at its capacity,
    no signature: each a category and, per event, whether it says it) that produces the caller-side `category`
    (PRODUCED_BY), said in problem lines only by services other than the callers' (the callee's own state, not
    the caller's), and either named in the callers' lines (`http://quotes:8080/...` of service quotes: their
    clocks do not order it) or, when those lines name no peer by its name (an address alone names none), said
    before every one of them (a process OOM-killed, then its callers refused; a worker limit reached, then its
    callers' timeouts while it is said again), or said before every one of them on a host a caller's line was written
    on (the machine's own state, whatever peers they name: a kernel's table full, then the node's calls timing out;
    session 55). None otherwise: a caller's own pool or memory is not what it calls, and a caller naming another peer
    (`cluster=billing`) from another machine fails on that one."""
    caller = _caller_lines(events, category, carrying)
    if caller is None:
        return None
    mine, start, callers, said = caller
    for n, (other, found) in enumerate(others):
        if other not in PRODUCED_BY.get(category, frozenset()):
            continue
        theirs = [e for e, f in zip(events, found) if f and e.level in ("ERROR", "FATAL", "WARN", None)]
        if not theirs or any(e.service in callers for e in theirs):
            continue
        # (a state holds while it is said again: its first line before the callers' first is what they failed in)
        # (or, said on the very host a caller wrote from, whatever peers they name: the machine's own state)
        if any(_named(e.service, said) for e in theirs) or min(e.time for e in theirs) < start and (
                not _PEER.search(unnamed_peers_out(said)) or _on_their_host(theirs, mine)):
            return n
    return None


def _on_their_host(theirs: list[LogEvent], mine: list[LogEvent]) -> bool:
    """Whether another writer said the state on the very host a caller's line was written on (the machine's own state,
    a kernel's connection-tracking table full, is what every process on it calls through, whatever peer each names)."""
    hosts = {e.host for e in mine if e.host}
    return any(e.host in hosts for e in theirs if e.host)


# a peer named by its address alone (an IP literal, loopback, a socket) names no service: it may be the one that
# said the state; and the server a line names beside its client is the line's writer itself (nginx's `client:
# 10.0.0.7, server: shop`), not a peer it calls
_ADDRESS_ONLY = re.compile(r"\b[a-z][\w+.-]*://(?:\d{1,3}(?:\.\d{1,3}){3}|localhost\b|\[[0-9a-f:]+\]|unix:)[^\s\"',]*"
                           r"|\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{2,5})?\b", re.I)
_OWN_SERVER = re.compile(r"\bclient\s*[=:]\s*[^,\s]+,?\s+server\s*[=:]\s*[^,\s]+", re.I)


def unnamed_peers_out(text: str) -> str:
    """A text less the peers it names by an address alone and the server it names beside its client."""
    return _ADDRESS_ONLY.sub(" ", _OWN_SERVER.sub(" ", text))


# a peer a line names: a URL, a host:port, or a cluster, upstream, host or server said by key
_PEER = re.compile(r"\w://|\b[a-z][\w.-]*:\d{2,5}\b|\b\d{1,3}(?:\.\d{1,3}){3}:\d{2,5}\b|\b(?:cluster|upstream|host|server|service|peer|addr|address)"
                   r"\s*[=:]\s*[\w\[]", re.I)
