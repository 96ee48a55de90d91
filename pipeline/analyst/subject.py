"""What a cause's word is said of (issue 36): a signature's state word ("refused", "expired", "full",
"timeout", "too many", "exceeded", "left") names a category only when what is refused, expired, full or timed
out is that category's object. "Connection refused: not authorised" refuses a login, "the token has
expired" a credential, "Too many connections: worker limit" a server's workers, "lookup ... :53 ...
timeout" a resolver: each line carries another category's signature, but its subject is another
category's object.

`foreign_subject` reads, in every problem event carrying the top category's signatures, the words
said next to the signature's state word (within NEAR words, numbers left out: an address is not a
clause's words); when each such event names there an object of one other category (SUBJECTS) the
subject is contested and the name stays below the code-fix threshold (pipeline/analyst/offline.py),
with what would decide between the two. The nearest object decides: another category's counts only
when it is said at least as near the state word as the category's own (SUBJECTS and OWN: a pool's
"connection timed out, timeout 30 (worker threads 40)" is the pool's; "Connection refused: login
failed" is contested).
"""
from __future__ import annotations

import re

from pipeline.analyst.ideas import tokens_of
from pipeline.state import LogEvent

_HEAD = 2_000  # a line's head: where its error is said
NEAR = 6  # words either side of the state word: one clause
# the words of a failure's state: what happened to the subject
STATE = frozenset("refused refuse refusing expired expire expires full exceeded exceed timeout timeouts timed "
                  "deadline denied rejected exhausted many left".split())
# each category's objects: what it is that is refused, expired, full or timed out
SUBJECTS: dict[str, frozenset[str]] = {c: frozenset(w.split()) for c, w in {
    "upstream_auth_failure": "login logon username password passwords passwd credential credentials "
                             "authentication authenticate authenticated unauthorized unauthorised authorised "
                             "authorized authorization authorisation token tokens jwt sasl kerberos ticket",
    "tls_certificate": "certificate certificates cert certs x509 ssl tls handshake",
    "dns_resolution": "resolve resolver resolving resolution dns nameserver getaddrinfo",
    # ... and the kernel tables whose calls fail with ENOSPC's "No space left on device" though no disk is
    # full (inotify_add_watch(2), epoll_ctl(2), semget(2), add_key(2): a limit on watches, semaphores, keys)
    "resource_exhaustion": "workers threads processes executor descriptors bulkhead semaphore semaphores fork "
                           "inotify watch watches epoll semget keyring",
    "upstream_rate_limited": "throttled throttling ratelimit quota",
    "disk_full": "disk tablespace filesystem",
    "db_deadlock": "lock locks deadlock",  # a lock waited for, not a call (`acquire advisory lock: ... deadline`)
}.items()}


# what a category's own state is said of besides SUBJECTS' words (a connection refused, a pool's timeout)
OWN: dict[str, frozenset[str]] = {c: frozenset(w.split()) for c, w in {
    "connection_refused": "connection connections connect socket port",
    "db_pool_exhausted": "pool pooled connection connections datasource",
    "upstream_timeout": "request requests response read upstream call",
    "queue_backlog": "consumer consumers queue topic partition",
    "upstream_rate_limited": "requests rate",
}.items()}


def _said(category: str, words: list[str], anchors: list[int]) -> dict[str, set[str]] | None:
    """Per other category, its objects said at least as near a state word as the category's own
    nearest object; {} when only the category's own object is said there; None when no object is."""
    own = SUBJECTS.get(category, frozenset()) | OWN.get(category, frozenset())
    said: dict[str, set[str]] = {}
    any_object = False
    for n in anchors:
        window = {m: words[m] for m in range(max(0, n - NEAR), min(len(words), n + NEAR + 1))}
        mine = min((abs(m - n) for m, w in window.items() if w in own), default=None)
        for other, objects in SUBJECTS.items():
            if other == category:
                continue
            theirs = {(abs(m - n), w) for m, w in window.items() if w in objects and w not in own}
            if theirs:
                any_object = True
                if mine is None or min(theirs)[0] <= mine:
                    said.setdefault(other, set()).update(w for _, w in theirs)
        any_object = any_object or mine is not None
    return said if any_object else None


def _state_words(signature: str) -> frozenset[str]:
    text = signature[3:] if signature.startswith("re:") else signature
    return frozenset(tokens_of(text)) & STATE


def foreign_subject(category: str, events: list[LogEvent], carrying: list[set[str]],
                    problem) -> tuple[str, tuple[str, ...]] | None:
    """The other category (and its words) whose object every problem event carrying `category`'s
    signatures names next to the signature's state word, or None when one of them names none (or
    the category's own object is the only one said there)."""
    common: dict[str, set[str]] | None = None
    for event, found in zip(events, carrying):
        if not found or not problem(event):
            continue
        states = frozenset().union(*(_state_words(s) for s in found))
        if not states:
            return None  # a signature without a state word names its object itself
        text = " ".join(filter(None, (event.exception, event.message, event.stack)))
        words = [t for t in tokens_of(text) if not t.isdigit()]
        anchors = [n for n, word in enumerate(words) if word in states]
        said = _said(category, words, anchors)
        if said is None:
            # the signature's own state word said of no object: a state said again in the clause is
            # the same statement's ("X timed out: context deadline exceeded")
            said = _said(category, words, [n for n, word in enumerate(words) if word in STATE and word not in states
                                           and any(abs(n - a) <= NEAR for a in anchors)])
        if not said:
            return None  # said of the category's own object, or of none
        common = said if common is None else {c: common[c] | w for c, w in said.items() if c in common}
        if not common:
            return None
    if not common:
        return None
    other = sorted(common)[0]
    return other, tuple(sorted(common[other]))


# the kubelet's check of the container itself (pkg/kubelet/prober: "Readiness probe failed: ...", "Liveness
# probe errored: ...", "Startup probe failed"): the probe is the caller and the service its callee, so the
# probe's timeout or refusal says the service did not answer in time or was not listening, not why
_PROBE = re.compile(r"\b(?:readiness|liveness|startup) probe\b", re.I)
PROBED = frozenset({"upstream_timeout", "connection_refused"})


def probed_only(category: str, events: list[LogEvent], carrying: list[set[str]], problem) -> bool:
    """Whether every problem event carrying `category`'s signatures is a platform's probe of the service
    itself, for a category that says only that the callee did not answer (PROBED)."""
    lines = [e for e, found in zip(events, carrying) if found and problem(e)]
    return category in PROBED and bool(lines) and all(_PROBE.search(e.message or "") for e in lines)


# a server's write to (or read from) a client that went away, as Go's net.OpError spells it: `op net
# local->remote: err` (src/net/net.go), the local port a listening one, the remote one ephemeral (the
# client's end, from the range Linux gives outgoing connections, net.ipv4.ip_local_port_range 32768-60999):
# `write tcp 10.3.0.7:8080->10.3.0.2:41822: write: broken pipe`. Not a client's own call: its local port is
# the ephemeral one (`write tcp 10.0.0.5:53412->10.0.0.9:5432: ... broken pipe` is a database lost)
_PEER_GONE = re.compile(r"\b(?:write|read|readfrom) tcp[46]? \S+?:(\d{1,5})->\S+?:(\d{1,5}): (?:write|read|readfrom): "
                        r"(?:broken pipe|connection reset by peer)\b")
EPHEMERAL_PORTS = 32768


def peer_gone(head: str) -> bool:
    """Whether a line's head says only that the client it was answering went away (`_PEER_GONE`, every
    connection it names): a download abandoned on a bad network, nothing refused or broken on this side."""
    if "->" not in head:
        return False
    found = _PEER_GONE.findall(head)
    return bool(found) and head.count("->") == len(found) \
        and all(int(local) < EPHEMERAL_PORTS <= int(remote) for local, remote in found)


# ... or a server saying so of its client in words (PostgreSQL's pqcomm.c `could not receive data from client: %m`, `unexpected
# EOF on client connection`; `client closed the connection`): the one that reset or closed is the client it served
_CLIENT_WENT = re.compile(r"\b(?:from|to) (?:the )?client(?: connection)?: (?:connection reset by peer|broken pipe)\b|"
                         r"\bunexpected EOF on client connection\b", re.I)


def client_gone(event: LogEvent) -> bool:
    """peer_gone of an event's first line, or its first line saying its client reset or closed the connection
    (`_CLIENT_WENT`)."""
    head = event.message[:_HEAD]
    first = head.split("\n", 1)[0]
    return "->" in head and peer_gone(first) or bool(_CLIENT_WENT.search(first))

