"""Findings: the concrete entities an incident's evidence names (a column, a table, a config key,
a host and port, a file and line, a pool's numbers, an HTTP status, a dependency and version, a
SQLSTATE or errno), each with the events and character spans where it was found.

General regexes over the texts of each event (message, exception, stack, error fields), not one
per incident: they are what lets a root cause say "column `gift_card_id` missing in `orders`"
instead of a knowledge-base paragraph. `locate` checks that a value a model claims occurs in the
evidence at all; a finding nothing in the evidence shows is not a finding.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from pipeline.knowledge.pattern_text import required_text
from pipeline.state import Finding, LogEvent, Span

MAX_SPANS = 5  # per finding: enough to show where, not every copy of a burst
MAX_PER_KIND = 3


@dataclass(frozen=True)
class Rule:
    """One pattern and the kind of each of its named groups; `needs` is text every match of it
    contains (lowered when the pattern ignores case), "" when unsure."""

    pattern: re.Pattern
    kinds: dict[str, str]
    needs: str = ""
    ignore_case: bool = False
    any_of: tuple[str, ...] = ()  # lowered texts one of which every match contains (a cheaper test first)
    hint: re.Pattern | None = None  # a simpler pattern every match's text holds (tested first)


def _rule(regex: str, flags: int = re.I, *, any_of: tuple[str, ...] = (), hint: str | None = None,
          **kinds: str) -> Rule:
    ignore_case = bool(flags & re.I)
    return Rule(re.compile(regex, flags), kinds, required_text(regex, ignore_case=ignore_case), ignore_case, any_of,
                re.compile(hint) if hint else None)


_Q = r"""[`"'\u201c\u201d]?"""  # an optional quote around a name
_NAME = r"[A-Za-z_][\w$]*"
# a dotted host name or IPv4 address (a source file such as `points.js:31` is dropped when collected)
# (anchored where a name starts: a regex that may start inside every word is quadratic on a long trace)
_HOST = r"(?<![\w.-])[A-Za-z0-9][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)+"
# (C++'s `.cc`, as BoringSSL's `handshake.cc:393` in every Dart TLS error, though `.cc` is a TLD too; not `.cr`,
# `.rs` or `.pl`, whose hosts are common: a path's last segment is caught by `_in_path` instead)
_SOURCE_FILE = re.compile(r"\.(?:java|kt|scala|js|mjs|cjs|ts|py|go|rb|cs|php|c|h|cpp|cc|cxx|hpp|s|dart|ex|exs|lua|jl|"
                          r"erl|hs|zig|swift)$")
_DOC_HOSTS = frozenset({"sqlalche.me"})  # "Background on this error at ..." links name no dependency
# a URL after words like these is a hint to read (Hadoop's "For more details see: http://wiki...",
# "Background on this error at:", "see https://..."), not the dependency that fails: its host and
# port are no finding (looked for in the text just before the URL, back to the sentence's start)
_HINT_BEFORE = re.compile(r"(?:\b(?:see|details|visit|refer(?:ring)? to|documentation|docs|help|more info(?:rmation)?|"
                          r"learn more|read more|background on this error|explained|faq|wiki|troubleshooting)\b"
                          r"[\s:,.-]*(?:at|on|in|here)?[\s:,.-]*)$", re.I)
_HINT_LOOKBACK = 60

RULES: tuple[Rule, ...] = (
    # schema: Postgres, MySQL, SQLite, SQL Server
    _rule(rf"column {_Q}(?P<c>{_NAME}(?:\.{_NAME})?){_Q} of relation {_Q}(?P<t>{_NAME}){_Q}", c="column", t="table"),
    _rule(rf"column {_Q}(?P<c>{_NAME}(?:\.{_NAME})?){_Q} (?:does not exist|not found)", c="column"),
    _rule(rf"Unknown column {_Q}(?P<c>[\w.]+){_Q}", c="column"),
    _rule(rf"no such column:? {_Q}(?P<c>[\w.]+)", c="column"),
    _rule(rf"Invalid column name {_Q}(?P<c>\w+)", c="column"),
    _rule(rf"relation {_Q}(?P<t>[\w.]+){_Q} does not exist", t="table"),
    _rule(rf"Table {_Q}(?P<t>[\w.]+){_Q} doesn't exist", t="table"),
    _rule(rf"no such table:? {_Q}(?P<t>[\w.]+)", t="table"),
    _rule(rf"(?:UPDATE|DELETE) statement on table {_Q}(?P<t>\w+)", t="table"),
    _rule(rf"(?:unique|foreign key|check|exclusion) constraint {_Q}(?P<k>\w+){_Q}", k="constraint"),
    # configuration: env vars, config keys, placeholders, secrets
    _rule(rf"(?:environment variable|env var(?:iable)?|required key|config(?:uration)? key|setting)s? "
          rf"{_Q}(?P<k>[A-Za-z_][\w.\-]*){_Q}", k="key",
          any_of=("environment variable", "env var", "required key", "config", "setting")),
    _rule(rf"Could not resolve placeholder {_Q}(?P<k>[\w.\-]+)", k="key"),
    _rule(r"\b(?P<k>[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b(?= (?:is )?(?:not set|missing|required|undefined|empty|unset))",
          re.S, k="key", any_of=("not set", "missing", "required", "undefined", "empty", "unset")),
    _rule(rf"KeyError: {_Q}(?P<k>[A-Z][A-Z0-9_]+){_Q}", re.S, k="key"),
    _rule(rf"(?:secrets?|configmaps?) {_Q}(?P<k>[\w.\-]+){_Q} not found", k="key"),
    # hosts and ports
    _rule(rf"host name {_Q}(?P<h>{_HOST}){_Q}", h="host"),
    _rule(rf"(?:ENOTFOUND|EAI_AGAIN|lookup|resolve host|UnknownHostException:?) {_Q}(?P<h>{_HOST})", h="host",
          any_of=("enotfound", "eai_again", "lookup", "resolve host", "unknownhostexception")),
    _rule(rf"(?P<h>{_HOST}):(?P<p>\d{{2,5}})\b", h="host", p="port", hint=r"\.[A-Za-z0-9-]+:\d\d"),
    # a host without a domain where the line says it is the peer ("from A to msra-sa-41:9000")
    _rule(r"\b(?:to|host|server|upstream|peer)\s+(?P<h>[A-Za-z][A-Za-z0-9-]{1,62}):(?P<p>\d{2,5})\b",
          h="host", p="port", any_of=("to", "host", "server", "upstream", "peer")),
    _rule(rf"https?://(?P<h>{_HOST})", h="host"),
    _rule(rf"host='(?P<h>{_HOST})', port=(?P<p>\d+)", h="host", p="port"),  # Python requests / urllib3
    _rule(rf"(?P<h>{_HOST}) could not be resolved", h="host"),
    _rule(r"\b(?:port|ECONNREFUSED [\d.]+:)\s?(?P<p>\d{2,5})\b", p="port", any_of=("port", "econnrefused")),
    # pools
    _rule(r"total=(?P<a>\d+), active=(?P<b>\d+), idle=(?P<c>\d+), waiting=(?P<d>\d+)",
          a="pool_total", b="pool_active", c="pool_idle", d="pool_waiting"),
    _rule(r"size:(?P<a>\d+); busy:(?P<b>\d+); idle:(?P<c>\d+)", a="pool_total", b="pool_active", c="pool_idle"),
    _rule(r"\b(?P<n>HikariPool-\d+|QueuePool)\b", re.S, n="pool_name", any_of=("hikaripool-", "queuepool")),
    _rule(r"\bpool ['\"](?P<n>[\w.\-]+)['\"]", n="pool_name"),  # psycopg_pool, asyncpg: pool 'pool-1'
    _rule(r"(?:timed out after|timeout of|couldn't get a connection after) (?P<t>\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds))\b",
          t="timeout", any_of=("timed out after", "timeout of", "couldn't get a connection after")),
    _rule(r"QueuePool limit of size (?P<a>\d+) overflow (?P<b>\d+) reached", a="pool_total", b="pool_active"),
    # HTTP
    _rule(r"status code (?P<s>[1-5]\d\d)\b", s="http_status"),
    _rule(r"\b(?P<s>[45]\d\d) (?:Unauthorized|Forbidden|Too Many Requests|Bad Gateway|Service Unavailable|"
          r"Gateway Timeout|Not Found|Internal Server Error|Bad Request|Conflict)\b", s="http_status",
          any_of=("unauthorized", "forbidden", "too many requests", "bad gateway", "service unavailable",
                  "gateway timeout", "not found", "internal server error", "bad request", "conflict")),
    # dependencies and versions
    _rule(rf"cannot import name {_Q}(?P<n>\w+){_Q} from {_Q}(?P<d>[\w.]+)", n="class", d="dependency"),
    _rule(rf"No module named {_Q}(?P<d>[\w.]+)", d="dependency"),
    _rule(r"Cannot find module '(?P<d>[^']+)'", d="dependency"),
    _rule(r"(?<![\w.\-/])(?P<d>[\w.\-/]*\w)@v?(?P<v>\d+\.\d+(?:\.\d+)?)\b", d="dependency", v="version"),
    _rule(r"\b(?P<d>[a-z][\w\-]+)(?:==|>=|<=|~=| version )(?P<v>\d+\.\d+(?:\.\d+)?)\b", d="dependency", v="version",
          any_of=("==", ">=", "<=", "~=", " version ")),
    # codes
    _rule(r"SQLSTATE[\s:=\[]*(?P<s>[0-9A-Z]{5})\b", s="sqlstate"),
    _rule(r"\[Errno (?P<e>\d+)\]", e="errno"),
    _rule(r"\b(?P<e>E(?:NOSPC|CONNREFUSED|CONNRESET|TIMEDOUT|NOTFOUND|ACCES|MFILE|PIPE|HOSTUNREACH|AI_AGAIN|NOMEM))\b",
          re.S, e="errno", any_of=("enospc", "econnrefused", "econnreset", "etimedout", "enotfound", "eacces",
                                   "emfile", "epipe", "ehostunreach", "eai_again", "enomem")),
    _rule(r"No space left on device: '(?P<p>/[^']+)'", p="path"),
    _rule(r"memory limit (?P<l>\d+(?:Mi|Gi|M|G|MB|GB))", l="limit"),
    _rule(r"\b(?P<l>\d+) worker_connections are not enough", l="limit"),
)

# stack frames as Java, Python, Node and Go print them: (path, line)
FRAME_RULES = (
    re.compile(r"at ((?!(?:java|javax|jdk|sun|kotlin|scala|org\.springframework|org\.apache|org\.hibernate|com\.zaxxer|"
               r"io\.netty|io\.lettuce|reactor|com\.mysql|org\.postgresql|com\.fasterxml|com\.google|io\.grpc|"
               r"okhttp3|feign)\.)[\w$.]+)\(([\w$.-]+\.(?:java|kt|scala)):(\d+)\)"),
    re.compile(r'File "([^"\n]+\.py)", line (\d+)'),
    # a path match starts only where a path token starts: otherwise a long run of path characters
    # is rescanned from each of its positions, quadratic in the line
    # (Node, Go, Ruby and Rails views in one scan of the text)
    # (and as Dart, Elixir, Crystal, Lua, Swift, Rust, Julia, Erlang, Haskell, Zig and PHP print a frame: `path:line`)
    re.compile(r"(?<![\w@./$-])([\w@./-]+\.(?:js|mjs|cjs|ts|go|rb|erb|haml|slim|dart|ex|exs|cr|lua|swift|rs|jl|erl|hs|"
               r"zig|php)):(\d+)"),
    # Perl's `at /srv/lib/Billing/Invoice.pm line 142.` and .NET's `in /src/Api/OrdersController.cs:line 57`
    re.compile(r"\bat ((?<![\w@./$-])[\w@./-]+\.p[ml]) line (\d+)"),
    re.compile(r"\bin ((?<![\w@./$-])[\w@./\\:-]+\.cs):line (\d+)"),
)
LIBRARY_PATH = re.compile(r"site-packages|dist-packages|node_modules|/usr/lib|/usr/local/lib|node:internal|"
                           r"^internal/|pkg/mod/|/go/src/|^<")
SCAN_CHARS = 8_000  # of one text: a 256 KiB stack trace names its cause near the ends, not in every frame

_TRACE_FIELD = re.compile(r"exc|err|trace(?!_?id)|stack", re.I)
# words before " version " that name no dependency ("class file version 65.0")
_NOT_DEPENDENCY = frozenset({"file", "class", "protocol", "format", "schema", "api", "major", "minor", "recent",
                             "newer", "older", "this", "that", "the", "runtime", "version"})
# structured fields whose value is itself a finding
FIELD_KINDS = {
    "sqlstate": "sqlstate", "sql_state": "sqlstate", "errno": "errno", "error_code": "error_code",
    "errorcode": "error_code", "upstream_status": "http_status", "status_code": "http_status",
    "statuscode": "http_status",
}


def event_texts(event: LogEvent) -> list[tuple[str, str]]:
    """(field, text) of an event that findings are read from, in the order a reviewer reads them."""
    texts = [("message", event.message)]
    if event.exception:
        texts.append(("exception", event.exception))
    if event.stack:
        texts.append(("stack", event.stack))
    for key, value in (event.fields or {}).items():
        if isinstance(value, (str, int)) and not isinstance(value, bool) and key.lower() in FIELD_KINDS:
            texts.append((f"fields.{key}", str(value)))
        elif isinstance(value, str) and "\n" in value and _TRACE_FIELD.search(key):
            texts.append((f"fields.{key}", value))  # a trace kept in a field (Python's exc_info)
    return texts


# the address a server binds to listen on every interface: never a peer it calls
_UNSPECIFIED = frozenset({"0.0.0.0", "::", "[::]"})
# The peer of a failing call is the party the call was made TO. A host and port is the writer's own side, not a
# peer, when the words just before it say so (a source or client field, a local address, where it listens:
# `(from 10.2.0.7:48812)`, `client: 1.2.3.4`, `listening on :8080`), when its port is an ephemeral one (at or above
# 32768: a client's, no listener's) and no word before it says it is called (`to`, `dial tcp`, `upstream`), or when
# the line is an access line (a quoted `"GET /x HTTP/1.1"`) and it is the line's first address, before the request
# (the client's field: combined log, ALB, uvicorn's access log), or the host the request itself names (the
# writer's own listener).
LOCAL_BEFORE = re.compile(r"(?:\bfrom|\blocal(?:[ _]?addr(?:ess)?)?|\bladdr|\bsrc|\bsource(?:[ _]?addr(?:ess)?)?|"
                          r"\bclient(?:[ _]?(?:addr(?:ess)?|ip))?|\blisten(?:ing)?(?:\s+on)?|\bbind(?:ing)?(?:\s+to)?|"
                          r"\bbound\s+to|\bserving\s+on)[=:\s/(\"']*$", re.I)
PEER_BEFORE = re.compile(r"(?:\bto|\bupstream|\bdial(?:ing)?(?:\s+tcp\d?)?|\bconnect(?:ing)?|\bserver|\bhost|\btarget|"
                         r"\bremote(?:[ _]?addr(?:ess)?)?|\braddr|\bpeer|\bdest(?:ination)?|\bon)[=:\s/(\"'\[]*$", re.I)
EPHEMERAL = 32768  # Linux's ephemeral range starts here (ip_local_port_range 32768-60999)
_REQUEST_LINE = re.compile(r"\"(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|CONNECT|TRACE) \S+ HTTP/\d(?:\.\d)?\"")
_AN_ADDRESS = re.compile(r"(?<![\w.:-])(?:\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z][\w-]*(?:\.[\w-]+)+):\d{2,5}\b")


def served_or_client(text: str, host_start: int, port: str | None) -> bool:
    """Whether the host (and port) at `host_start` is the writer's own side or its client's, no peer it calls
    (see LOCAL_BEFORE above)."""
    before = text[max(0, host_start - 24):host_start]
    if LOCAL_BEFORE.search(before):
        return True
    if port is not None and port.isdigit() and int(port) >= EPHEMERAL and not PEER_BEFORE.search(before):
        return True
    if '" ' not in text and not text.rstrip().endswith('"'):
        return False  # no quoted request line: no access line (most lines)
    request = _REQUEST_LINE.search(text)
    if request is None:
        return False
    if request.start() <= host_start < request.end():
        return True  # the host the request names: the one the writer serves
    if host_start < request.start() and not PEER_BEFORE.search(before):
        first = _AN_ADDRESS.search(text, 0, request.start())
        return first is not None and first.start() == host_start
    return False


class _Collector:
    def __init__(self) -> None:
        self.found: dict[tuple[str, str], Finding] = {}

    def add(self, kind: str, value: str, event_id: str, field: str, start: int, end: int) -> None:
        value = value.strip()
        if not value or (kind == "host" and (_SOURCE_FILE.search(value) or value in _DOC_HOSTS)) or \
                (kind == "dependency" and value.lower() in _NOT_DEPENDENCY):
            return
        key = (kind, value)
        finding = self.found.get(key)
        if finding is None:
            finding = self.found[key] = Finding(kind=kind, value=value)
        if event_id not in finding.event_ids:
            finding.event_ids = [*finding.event_ids, event_id]
        if len(finding.spans) < MAX_SPANS and not any(s.event_id == event_id and s.field == field
                                                      for s in finding.spans):
            finding.spans = [*finding.spans, Span(event_id=event_id, field=field, start=start, end=end)]


def extract(events: list[LogEvent]) -> list[Finding]:
    """Every finding of the events, the most widespread of each kind first (at most a few per kind)."""
    collector = _Collector()
    seen_texts: set[tuple[str, str]] = set()
    for event in events:
        for field, text in event_texts(event):
            if (field, text) in seen_texts:  # a burst repeats its text: count the event, skip the regexes
                for finding in list(collector.found.values()):
                    for span in finding.spans:
                        if span.field == field and text[span.start:span.end] == finding.value:
                            collector.add(finding.kind, finding.value, event.event_id, field, span.start, span.end)
                            break
                continue
            seen_texts.add((field, text))
            if field.startswith("fields.") and field[7:].lower() in FIELD_KINDS:
                collector.add(FIELD_KINDS[field[7:].lower()], text, event.event_id, field, 0, len(text))
                continue
            _scan(collector, event.event_id, field, text)
    return _ranked(list(collector.found.values()))


def _passes(rule: Rule, text: str, lowered: str | None) -> bool:
    """Whether a rule's cheap tests (its needed text, one of its texts, its hint) pass on a text."""
    if rule.needs:
        if not rule.ignore_case:
            if rule.needs not in text:
                return False
        elif lowered is not None and rule.needs not in lowered:
            return False
    if rule.any_of and lowered is not None and not any(part in lowered for part in rule.any_of):
        return False
    return rule.hint is None or bool(rule.hint.search(text))


# A burst's texts differ in their numbers (ids, counts, times): the rules worth running on a text
# are found once per shape, its ASCII digits as `0`. A rule whose cheap tests name no digit but as
# `\d` or `0-9` passes on a text exactly when it passes on its shape; the others are tested on the
# text itself (_DIGIT_FREE).
_ZEROS = str.maketrans("123456789", "000000000")
_SHAPE_CHARS = 4_000  # longer texts (traces) are rarely repeated: not kept


def _digit_free(rule: Rule) -> bool:
    tests = [rule.needs, *rule.any_of, (rule.hint.pattern.replace("0-9", "") if rule.hint is not None else "")]
    return not any(ch.isdigit() for test in tests for ch in test)


_DIGIT_FREE = tuple(_digit_free(rule) for rule in RULES)


@functools.lru_cache(maxsize=2048)
def _candidates(shape: str) -> tuple[bool, ...]:
    """Per rule, whether it may match a text of this shape (always True for a rule not _DIGIT_FREE)."""
    lowered = shape.lower() if shape.isascii() else None
    return tuple(not free or _passes(rule, shape, lowered) for rule, free in zip(RULES, _DIGIT_FREE))


def _scan(collector: _Collector, event_id: str, field: str, text: str) -> None:
    if len(text) > 2 * SCAN_CHARS:
        text = text[:SCAN_CHARS] + "\0" * (len(text) - 2 * SCAN_CHARS) + text[-SCAN_CHARS:]  # offsets stay true
    # an ignore-case regex may match non-ASCII text its lowered literal is not in (the Kelvin sign
    # matches `k`): such text skips no ignore-case rule
    lowered = text.lower() if text.isascii() else None
    maybe = _candidates(text.translate(_ZEROS)) if len(text) <= _SHAPE_CHARS else None
    for n, rule in enumerate(RULES):
        if maybe is not None and not maybe[n]:
            continue
        if (maybe is None or not _DIGIT_FREE[n]) and not _passes(rule, text, lowered):
            continue
        for match in rule.pattern.finditer(text):
            host = match.groupdict().get("h")
            if host and (_SOURCE_FILE.search(host) or host in _DOC_HOSTS or _in_path(text, match.start("h"))):
                continue  # `points.js:31` (`lib/db/pool.cr:224`) is a file and a line, not a host and a port
            if host in _UNSPECIFIED:
                continue  # `0.0.0.0:8080`: where a server listens, its port no peer's either
            if host and _in_hint(text, match.start("h")):
                continue  # a link to read, not the failing host
            if host and served_or_client(text, match.start("h"), match.groupdict().get("p")):
                continue  # the client's or the writer's own side of a call, not the peer it calls
            for group, kind in rule.kinds.items():
                if match.group(group) is not None:
                    collector.add(kind, match.group(group), event_id, field, match.start(group), match.end(group))
    if field in ("message", "stack") or field.startswith("fields."):
        for pattern in FRAME_RULES:
            for match in pattern.finditer(text):
                path, line = match.group(match.lastindex - 1), match.group(match.lastindex)
                if LIBRARY_PATH.search(path):
                    continue
                start = match.start(match.lastindex - 1)
                collector.add("file_line", f"{path}:{line}", event_id, field, start, match.end(match.lastindex))
    if field == "exception":
        collector.add("class", text, event_id, field, 0, len(text))


def _in_path(text: str, host_start: int) -> bool:
    """Whether the host starting at `host_start` is a path's last segment (`src/db/pool.cr`), not a URL's
    host (after `//`) nor a host on its own."""
    return host_start > 0 and text[host_start - 1] == "/" and text[max(0, host_start - 2):host_start] != "//"


def _in_hint(text: str, host_start: int) -> bool:
    """Whether the host starting at `host_start` is a URL's a hint text points to."""
    scheme = text.rfind("://", max(0, host_start - 3), host_start)
    if scheme < 0:
        return False  # a host not in a URL (`db:5432`) is no link
    start = scheme
    while start > 0 and text[start - 1].isalpha():
        start -= 1
    before = text[max(0, start - _HINT_LOOKBACK):start]
    before = re.split(r"[.;!?]\s|\n", before)[-1]  # this sentence only
    return bool(_HINT_BEFORE.search(before))


def _ranked(findings: list[Finding]) -> list[Finding]:
    # a value that is a host's part of a URL already found as host:port is still a host: keep one
    by_kind: dict[str, list[Finding]] = {}
    for finding in findings:
        by_kind.setdefault(finding.kind, []).append(finding)
    out: list[Finding] = []
    for group in by_kind.values():
        group.sort(key=lambda f: -len(f.event_ids))  # stable: first seen wins ties
        out += group[:MAX_PER_KIND]
    return out


def first(findings: list[Finding], kind: str) -> str | None:
    """The value of the first finding of a kind (reviewer-named first), or None."""
    named = [f for f in findings if f.kind == kind]
    named.sort(key=lambda f: f.source != "reviewer")
    return named[0].value if named else None


def locate(value: str, events: list[LogEvent]) -> tuple[list[str], list[Span]]:
    """The events and spans where `value` occurs verbatim in the evidence (empty when it does not)."""
    ids: list[str] = []
    spans: list[Span] = []
    if not value or not value.strip():
        return ids, spans
    for event in events:
        for field, text in event_texts(event):
            at = text.find(value)
            if at >= 0:
                if event.event_id not in ids:
                    ids.append(event.event_id)
                if len(spans) < MAX_SPANS:
                    spans.append(Span(event_id=event.event_id, field=field, start=at, end=at + len(value)))
                break
    return ids, spans


# -- a reviewer's request, read for what it names --------------------------------------------------
_REQUEST = re.compile(
    r"\bthe (?P<kind>column|table|key|env(?:ironment)? var(?:iable)?|variable|setting|host|port|file|class|"
    r"dependency|version|constraint) (?:is|should be|=) [`'\"]?(?P<value>[\w.\-:/@]+[\w])", re.I)
_REQUEST_KINDS = {"env var": "key", "env variable": "key", "environment variable": "key", "environment var": "key",
                  "variable": "key", "setting": "key", "file": "file_line"}


def named_in_request(text: str) -> list[Finding]:
    """What a reviewer's request names ("the column is X"), as reviewer findings."""
    out = []
    for match in _REQUEST.finditer(text or ""):
        kind = match.group("kind").lower()
        out.append(Finding(kind=_REQUEST_KINDS.get(kind, kind), value=match.group("value"), source="reviewer"))
    return out
