"""Which key of a structured record (a JSON object, logfmt's pairs) holds its time, level, message,
service, host and trace id, told by the key's name and its value, for loggers no list names.

A key's name is cut into words (`__REALTIME_TIMESTAMP` → realtime, timestamp; `traceId` → trace,
id; `log.level` → log, level); the last word says the role it may have (`…timestamp`, `…time`,
`…date` a time; `…level`, `…severity`, `…priority` a level (a last word that says the value's
form, `serviceName`, `severity_text`, gives way to the word before it); `…message`, `…msg`, `…body` (OpenTelemetry's log record) the message;
`…service`, `…app`, `…component`, `…logger`, `…identifier` the service; `…host`, `…hostname` the
host; `trace…id` the trace id); a key of one to three letters may abbreviate such a word (MongoDB's
`t`, `s`, `c`). A name proposes, the value decides: a time must read as an instant after 1990 (ISO
8601, epoch s/ms/µs/ns by magnitude, as a string or number, or MongoDB's `{"$date": …}`), a level
must be a level name or number (a `priority` is a syslog severity, 0-7), a message text (under a
one-letter key words, or one word where no value of words offers itself), a service or host one
short token. Words that make a number a duration or a clock since boot (`monotonic`,
`elapsed`, `duration`, `took`, `uptime`, `response`, `latency`) never name a time.

Nested objects are looked into (`{"id": {"time": …}}` offers `id.time`, up to three levels), a
top-level key winning a tie. When no key's name proposes a role, the values alone may (`flat_view`,
`infer`'s last ranks): a string that reads as a date and a time of day (any spelling `read_any_time`
knows) is a time (`published`, `created`); a plausible epoch number (2000 to next year) is one only
after every string; a value from the closed vocabulary of level words (`INFO`, `Warning`, `err`) is a
level; the one value of human text (three words or more, mostly letters) is the message (of
several, none is picked: the record stays whole).

The roles found for one key set are remembered per source (`ParseOptions.key_roles`): the next
record with the same keys is read with them at once.
"""
from __future__ import annotations

import json
import re
from typing import Any

from datetime import datetime, timedelta, timezone

from pipeline.ingest.levels import LEVEL_NAMES, normalize_level
from pipeline.ingest.timestamps import CLOCK, TimeRules, from_epoch, leading_time, parse_time, read_any_time

ROLES = ("time", "level", "message", "service", "host", "trace_id")
_WORDS: dict[str, frozenset[str]] = {
    "time": frozenset({"time", "timestamp", "ts", "date", "datetime", "at"}),
    "level": frozenset({"level", "severity", "lvl", "loglevel", "levelname", "priority", "sev"}),
    "message": frozenset({"message", "msg", "text", "log", "body"}),
    "service": frozenset({"service", "app", "application", "component", "logger", "identifier", "program",
                          "module"}),
    "host": frozenset({"host", "hostname", "computer"}),  # Windows events name their host `Computer`
}
LEVEL_KEYS = _WORDS["level"]  # the keys that name a level (a header column may write one: `level:INFO`)
_NOT_AN_INSTANT = frozenset({"monotonic", "elapsed", "duration", "took", "uptime", "response", "latency", "boot",
                             "offset", "delta", "spent", "ttl", "timeout"})
_FORM = frozenset({"name", "text", "number", "value", "string", "str"})  # words saying a value's form, not its role
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_TOKEN = re.compile(r"[A-Za-z][\w.:/-]{0,127}")
MIN_INFERRED_YEAR = 1990
_CACHE_LIMIT = 64  # key sets remembered per source (a source writes a handful)


def _remember(cache: dict | None, key: Any, value: dict) -> None:
    """Keep a key set's roles in the source's cache, emptied when it holds _CACHE_LIMIT of them."""
    if cache is None:
        return
    if len(cache) >= _CACHE_LIMIT:
        cache.clear()
    cache[key] = value
_NESTING = 3  # levels of nested objects looked into
# the closed vocabulary of level words a value alone may be read by (no single letters, no `log`)
_LEVEL_WORDS = frozenset({"trace", "debug", "info", "information", "informational", "notice", "warn", "warning",
                          "error", "err", "critical", "crit", "fatal", "emergency", "emerg", "alert", "severe"})
_DATE_PART = re.compile(r"\d{4}|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\b", re.I)
_LETTERS = re.compile(r"[^\W\d_]")


def words(name: str) -> list[str]:
    """A key's name as lower-case words: `__REALTIME_TIMESTAMP` → ["realtime", "timestamp"]."""
    return [w.lower() for part in re.split(r"[^A-Za-z0-9]+", name) for w in _CAMEL.findall(part)]


def seconds_and_nanos(value: Any) -> float | None:
    """An instant written as its epoch second and the nanosecond within it, two integers (log4j2's
    `{"epochSecond": …, "nanoOfSecond": …}`, protobuf's `{"seconds": …, "nanos": …}`) → epoch seconds."""
    if not (isinstance(value, dict) and len(value) == 2):
        return None
    (a, first), (b, second) = value.items()
    named = {"nanos" if "nano" in w or "nanos" in w else "seconds" if w[-1:] in (["second"], ["seconds"]) else "": v
             for w, v in ((words(a), first), (words(b), second))}
    seconds, nanos = named.get("seconds"), named.get("nanos")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (seconds, nanos)):
        return None
    return seconds + nanos / 1e9 if 0 <= nanos < 10**9 else None  # type: ignore[operator]


def time_value(value: Any) -> Any:
    """A time as a JSON logger may wrap it: MongoDB's extended JSON `{"$date": …}` (an ISO string,
    epoch milliseconds, or `{"$numberLong": "…"}`), an epoch second and its nanosecond
    (`seconds_and_nanos`) → what it wraps."""
    pair = seconds_and_nanos(value)
    if pair is not None:
        return pair
    while isinstance(value, dict) and len(value) == 1:
        (key, inner), = value.items()
        if key not in ("$date", "$numberLong"):
            break
        value = inner
    return value


def _candidates(name: str) -> list[tuple[str, int]]:
    """(role, rank) the name proposes, best first: 0 the whole name a role word, 1 its last word,
    2 an abbreviation of a role word."""
    split = words(name)
    if not split:
        return []
    if len(split) > 1 and split[-1] in _FORM and any(split[-2] in v for v in _WORDS.values()):
        split = split[:-1]  # `serviceName`, `hostName`, OpenTelemetry's `severity_text`: the word before says
    if len(split) == 2 and split[1] == "payload" and split[0] in ("text", "string", "str"):
        split = ["text"]  # a payload written as text is the message (Cloud Logging's `textPayload`)
    last = split[-1]
    out: list[tuple[str, int]] = []
    for role, vocabulary in _WORDS.items():
        if len(split) == 1 and last in vocabulary:
            out.append((role, 0))
        elif last in vocabulary:
            out.append((role, 1))
    if "trace" in split and last in ("id", "trace"):
        out.append(("trace_id", 1 if len(split) > 1 else 0))
    bare = name.lstrip("@_")  # Serilog's CLEF marks its own keys: `@t`, `@l`, `@m`
    if not out and len(bare) <= 3 and bare.isalpha():
        lower = bare.lower()
        out += [(role, 2) for role, vocabulary in _WORDS.items()
                if any(word.startswith(lower) and word != lower for word in vocabulary)]
    if "time" in (role for role, _ in out) and _NOT_AN_INSTANT & set(split):
        out = [(role, rank) for role, rank in out if role != "time"]
    return out


def proposes(name: str, role: str) -> bool:
    """Whether a key's name, whole or by its last word, proposes `role` (`level_name`: a level)."""
    return any(r == role and rank < 2 for r, rank in _candidates(name))


def level_scheme(name: str) -> str | None:
    """The number scheme a level key's name says: a priority is syslog's, a severity number
    OpenTelemetry's (`severityNumber`, `severity_number`: 1-24)."""
    split = words(name)
    if "priority" in split:
        return "syslog"
    return "otel" if split[-2:] == ["severity", "number"] else None


def fits(role: str, name: str, value: Any, *, abbreviated: bool = False) -> bool:
    """Whether `value` can be what `role` holds (module doc)."""
    if value is None or isinstance(value, bool) or value == "":
        return False
    if role == "time":
        moment = parse_time(time_value(value))
        if moment is None and isinstance(value, str) and len(value) <= 64 and CLOCK.search(value):
            moment = read_any_time(value)  # a header spelling under a time's name (`date="Apr  5 14:52:31"`)
        return moment is not None and moment.year >= MIN_INFERRED_YEAR
    if role == "level":
        if isinstance(value, str) and len(value) > 12 and value.lower() not in LEVEL_NAMES:
            return False
        if abbreviated and not (isinstance(value, int) or (isinstance(value, str) and (
                len(value) <= 8 or value.lower() in LEVEL_NAMES))):
            # a level name is short (`warning`, `critical`) or one written whole (FortiGate's
            # `pri=information`, syslog's `informational`, `emergency`): a longer word is no level
            return False
        return normalize_level(value, scheme=level_scheme(name)) is not None
    if role == "message":  # under a one-letter key, words (`@m`): a single token is another role's
        if isinstance(value, str) and value.lstrip()[:1] in ("{", "[") and words(name)[-1:] == ["body"]:
            return False  # a request's JSON body (`"body": "{\"a\":1}"`) is no log message
        return isinstance(value, str) and (not abbreviated or " " in value.strip())
    if role in ("service", "host"):
        return isinstance(value, str) and _TOKEN.fullmatch(value) is not None
    if role == "trace_id":
        return isinstance(value, (str, int)) and 0 < len(str(value)) <= 128
    return False


def flat_view(record: dict) -> dict[str, tuple[tuple[str, ...], Any]]:
    """Every scalar of `record` by its dotted name (`id.time`), with its path of keys: nested objects
    up to `_NESTING` levels, the top level first."""
    out: dict[str, tuple[tuple[str, ...], Any]] = {}
    queue: list[tuple[tuple[str, ...], dict]] = [((), record)]
    while queue:
        path, obj = queue.pop(0)
        for key, value in obj.items():
            where = path + (str(key),)
            if isinstance(value, dict) and seconds_and_nanos(value) is not None:
                value = seconds_and_nanos(value)  # one instant, not two numbers
            elif isinstance(value, dict) and not (len(value) == 1 and next(iter(value)) in ("$date", "$numberLong")):
                if len(where) < _NESTING:
                    queue.append((where, value))
                continue
            out.setdefault(".".join(where), (where, value))
    return out


def _now_bound() -> datetime:
    return datetime.now(timezone.utc) + timedelta(days=366)


def _by_value(role: str, value: Any) -> int | None:
    """The rank (3 best) at which a value with no role-naming key may hold `role`, or None."""
    if role == "time":
        if isinstance(value, str) and 8 <= len(value) <= 64 and CLOCK.search(value) and _DATE_PART.search(value):
            moment = parse_time(value) if value[:4].isdigit() else None
            moment = moment or read_any_time(value)
            if moment is not None and MIN_INFERRED_YEAR <= moment.year and moment <= _now_bound():
                return 3
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and value > 9.4e8:
            moment = from_epoch(float(value))
            if moment is not None and 2000 <= moment.year and moment <= _now_bound():
                return 5
        return None
    if role == "level":
        return 3 if isinstance(value, str) and value.strip().lower() in _LEVEL_WORDS else None
    if role == "message":
        if isinstance(value, str) and value.count(" ") >= 2 and len(value) <= 65536:
            head = value[:400]
            if len(_LETTERS.findall(head)) >= 0.6 * len(head.replace(" ", "")):
                return 4
    return None


def _rendered(values: dict[str, Any], texts: list[str]) -> str | None:
    """Of `texts` (keys of human text), the one holding the most of the other keys' values (words
    of three characters or more, numbers), when it holds two or more and more than any other does
    (one value met in a long text may be a coincidence: a `category` word in a description)."""
    others = {str(v) for k, v in values.items() if k not in texts and not isinstance(v, (bool, dict, list))
              and v is not None and len(str(v)) >= 3}
    counts = sorted(((sum(1 for v in others if v in str(values[t])), t) for t in texts), reverse=True)
    return counts[0][1] if counts and counts[0][0] >= 2 and (len(counts) == 1 or counts[0][0] > counts[1][0]) else None


_HELD = ("held-roles",)  # the source's cache entry: {role: the keys that held it in its earlier records}


def _held(cache: dict | None) -> dict[str, list[str]] | None:
    if cache is None:
        return None
    held = cache.get(_HELD)
    if held is None:
        held = cache[_HELD] = {}
    return held


def infer(record: dict, missing: tuple[str, ...], cache: dict | None, *,
          nested: dict[str, tuple[tuple[str, ...], Any]] | None = None,
          held: dict[str, list[str]] | None = None) -> dict[str, str]:
    """The keys of `record` that hold each role in `missing` (none when no key fits), the answer
    remembered in `cache` by the record's key set. With `nested` (`flat_view(record)`), dotted names
    of nested values are candidates too, and values alone may propose a role (module doc). A key
    that held a role in an earlier record of the source (`held`, kept in `cache`) holds it again in
    a new key set where its value can (a logger adding context keys to some records: zap's
    `{"L":…,"T":…,"M":"hello","extra":…}` keeps `M` as the message)."""
    memo_key = (tuple(record) if nested is None else tuple(nested), missing)
    if held is None:
        held = _held(cache)
    if cache is not None:
        known = cache.get(memo_key)
        if known is not None:
            return known
    found: dict[str, list[tuple[int, int, str]]] = {}
    items = list(record.items()) if nested is None else [(n, v) for n, (_p, v) in nested.items()]
    for position, (name, value) in enumerate(items):
        proposed = False
        for role, rank in _candidates(name):
            if role in missing and fits(role, name, value, abbreviated=rank == 2):
                found.setdefault(role, []).append((rank, position, name))
                proposed = True
        if nested is not None and not proposed:
            for role in missing:
                by_value = _by_value(role, value)
                if by_value is not None:
                    found.setdefault(role, []).append((by_value, position, name))
    # a one-letter key that abbreviates the message (zap's development keys `M`, Serilog's `@m`) holds
    # it even as one word (`"M": "hello"`), where no value of words is free for it (zap's `T` holds
    # words, `2020-01-01 00:00:00 +0000 UTC`, but the time's)
    initials = [(2, position, n) for position, (n, v) in enumerate(items) if len(n.lstrip("@_")) == 1
                and isinstance(v, str) and v.strip() and ("message", 2) in _candidates(n)] \
        if "message" in missing else []
    if initials and "message" not in found:
        found["message"] = initials  # the first one no other role takes (`L` is the level's)
    if "message" in found and sum(1 for r, _p, _n in found["message"] if r == 4) > 1:
        # several values of human text and no key naming the message: the one a template rendered
        # from the record's other values (Falco's `output` holds its `priority` word and its
        # `output_fields`' values; its `rule` none) is; else nothing says, and the record is kept
        # whole rather than one of them picked
        rendered = _rendered(dict(items), [n for r, _p, n in found["message"] if r == 4])
        found["message"] = [c for c in found["message"] if c[0] != 4 or c[2] == rendered]
    if held:
        for position, (name, value) in enumerate(items):
            for role in missing:
                if name in held.get(role, ()) and fits(role, name, value):  # as a whole name: `M` one word too
                    found.setdefault(role, []).append((-1, position, name))
    roles: dict[str, str] = {}
    for role in missing:  # one key holds one role: the roles in `missing` order take their best free key
        free = sorted(c for c in found.get(role, ()) if c[2] not in roles.values())
        if not free and role == "message":
            free = [c for c in initials if c[2] not in roles.values()]
        if free:
            roles[role] = free[0][2]
    if held is not None:
        for role, name in roles.items():
            keys = held.setdefault(role, [])
            if name not in keys and len(keys) < 8:
                keys.append(name)
    _remember(cache, memo_key, roles)
    return roles


# a key (quoted or not: a JSON object inside a text line, `-: {"ts": "1676367490"}`), `=` or `:`, a value
_PAIR = re.compile(r"(?<![\w.])([A-Za-z_][\w.@-]*)\"?(?:=|: ?)\"?([0-9][\w:.+-]*)")


def time_in_pairs(text: str, rules: TimeRules | None = None) -> Any:
    """The first time a record names in a `key=value` or `Key: value` pair whose key names a time
    and whose value is one (MySQL's `SET timestamp=1493370459;`, `# Time: 2017-04-28T09:16:30Z`), or
    None; what a text line with no header time may still write."""
    if "=" not in text and ":" not in text:
        return None
    pairs = _PAIR.finditer(text[:4096])
    for m in pairs:  # (a date alone reads on in the same pairs for its clock: the first time is returned)
        if any(role == "time" for role, _ in _candidates(m.group(1))):
            value = m.group(2).rstrip(".:;,")
            moment = parse_time(value, rules)
            if moment is not None and moment.year >= MIN_INFERRED_YEAR:
                if _DATE_ONLY.fullmatch(value):
                    # a date alone, its clock in a later pair (FortiGate's and FortiMail's
                    # `date=2023-02-06,time=19:10:00.391`, whatever separates the pairs)
                    moment = with_later_clock(value, pairs, rules or TimeRules()) or moment
                return moment
    return None


def with_later_clock(date_value: str, later: Any, rules: TimeRules) -> datetime | None:
    """A date written alone in one pair and its clock in a later one whose key names a time (`later`:
    the pairs' matches after it, key and value groups): the one time they write, else None."""
    for pair in later:
        clock = pair.group(2).strip('"').rstrip(".:;,")
        if _CLOCK_ONLY.fullmatch(clock) and any(role == "time" for role, _ in _candidates(pair.group(1))):
            return read_any_time(f"{date_value} {clock}", tz=rules.timezone)
    return None


def pop_path(record: dict, path: tuple[str, ...]) -> Any:
    """Take the value at `path` out of `record` (nested objects left empty are dropped)."""
    if len(path) == 1:
        return record.pop(path[0], None)
    inner = record.get(path[0])
    if not isinstance(inner, dict):
        return None
    inner = dict(inner)
    value = pop_path(inner, path[1:])
    if inner:
        record[path[0]] = inner
    else:
        del record[path[0]]
    return value


_CLOCK_ONLY = re.compile(r"\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?(?:\s?[AaPp][Mm])?")
_DATE_ONLY = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{4}|\d{1,2}[ -][A-Za-z]{3}[ -]\d{4}")


def date_and_clock(clock: Any, rest: dict, rules: TimeRules) -> datetime | None:
    """A time a record writes in two keys, a clock (`time=18:03:36`) and a date (`date=2019-05-15`):
    the date is the value of a key whose name says a date or time; its zone a `timezone`/`tz` key's
    offset or abbreviation, else the source's. The keys used are taken out of `rest`. None when the
    clock is no clock or no key holds a date."""
    from pipeline.ingest.timestamps import offset_zone

    if not isinstance(clock, str) or not _CLOCK_ONLY.fullmatch(clock.strip()):
        return None
    for name, value in list(rest.items()):
        if isinstance(value, str) and _DATE_ONLY.fullmatch(value.strip()) \
                and any(role == "time" for role, _ in _candidates(name)):
            zone = rules.timezone
            for zname, zvalue in rest.items():
                if isinstance(zvalue, str) and ("zone" in words(zname) or words(zname)[-1:] == ["tz"]
                                                or "timezone" in words(zname)):
                    try:
                        zone = offset_zone(zvalue.strip()) or zone
                    except ValueError:
                        pass
                    break
            moment = read_any_time(f"{value.strip()} {clock.strip()}", tz=zone)
            if moment is not None:
                rest.pop(name)
                return moment
    return None


_RELAYED_VERSION = re.compile(r"^[1-9] (?=\d{4}-\d\d-\d\dT)")
_DATED_PAIR = re.compile(r'(?<![\w.])([A-Za-z_][\w.-]*)[=:]\s?("[^"]{8,40}"|[^\s;,"]{8,40})')
_DATED_BRACKET = re.compile(r"\[([^\[\]]{10,40})\]")
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
# a stamp opening the body that writes its year in two digits, before its clock: RFC 822's `06 Dec 26 01:02`
# (Go's RFC822/RFC822Z), a slashed `06/12/26 01:02:03`
_SHORT_YEAR_OPENING = re.compile(r"\[?\d{1,2}[ /](?:[A-Z][a-z]{2}|\d{1,2})[ /]\d{2} +\d{1,2}:\d\d")


def dated_body_time(message: str, rules: TimeRules) -> datetime | None:
    """The time a record's body writes with its year, for a header whose stamp has none (a relay's
    syslog `Jan  3 13:45:36` before a firewall's `time="2007-01-03 14:48:06"`, HAProxy's
    `[20/Sep/2018:15:44:23.285]`): the first `key=value`/`key:value` pair whose key names a time and
    whose value writes a year and a clock, else the first `[...]` among the body's first 160
    characters that does; a body that is a JSON object (a program logging JSON through syslog) is
    read whole for such a key, however long the values before it. None when the body writes no such
    time."""
    if message[:1] == "{" or message.lstrip()[:1] == "{":
        moment = _json_body_time(message, rules)
        if moment is not None:
            return moment
    head = message[:400]
    if not _YEAR.search(head) and not _SHORT_YEAR_OPENING.match(head.lstrip()):
        return None
    body = head.lstrip()
    # the relayed line's own stamp opens its body, after its RFC 5424 version when the relayed header
    # is one without its priority (`Oct 19 09:11:09 host 1 2021-10-19T09:11:09+02:00 10.5.2.3 app: …`)
    opening = leading_time(_RELAYED_VERSION.sub("", body, 1), tz=rules.timezone)
    if opening is not None and opening.year >= MIN_INFERRED_YEAR:
        return opening
    pairs = list(_DATED_PAIR.finditer(head))
    for n, m in enumerate(pairs):
        if any(role == "time" for role, _ in _candidates(m.group(1))):
            value = m.group(2).strip('"')
            if _DATE_ONLY.fullmatch(value):  # a date alone, its clock a later pair's (`date=… time=…`)
                moment = with_later_clock(value, pairs[n + 1:], rules)
                if moment is not None and moment.year >= MIN_INFERRED_YEAR:
                    return moment
            elif _YEAR.search(value) and CLOCK.search(value):
                moment = parse_time(value, rules) or read_any_time(value, tz=rules.timezone)
                if moment is not None and moment.year >= MIN_INFERRED_YEAR:
                    return moment
    for m in _DATED_BRACKET.finditer(head[:160]):
        value = m.group(1)
        if _YEAR.search(value) and CLOCK.search(value):
            moment = read_any_time(value, tz=rules.timezone)
            if moment is not None and moment.year >= MIN_INFERRED_YEAR:
                return moment
    return None


def _json_body_time(message: str, rules: TimeRules) -> datetime | None:
    """The dated time a JSON object body writes under a key that names a time (top level)."""
    try:
        body = json.loads(message)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    for key, value in body.items():
        if isinstance(value, str) and _YEAR.search(value) and CLOCK.search(value) \
                and any(role == "time" for role, _ in _candidates(key)):
            moment = parse_time(value, rules) or read_any_time(value, tz=rules.timezone)
            if moment is not None and moment.year >= MIN_INFERRED_YEAR:
                return moment
    return None


_DATED_STATE = ("dated-body",)  # the source's cache entry: [records looked at, bodies with a dated time]
DATED_SAMPLE = 50  # a source none of whose first this many year-less records dates its body is not looked at again


def source_body_time(message: str, rules: TimeRules, cache: dict | None) -> datetime | None:
    """`dated_body_time`, learnt once per source (`cache`: its `ParseOptions.key_roles`): when none of
    the source's first DATED_SAMPLE bodies wrote a dated time, its later ones are not searched."""
    if cache is None:
        return dated_body_time(message, rules)
    state = cache.get(_DATED_STATE)
    if state is None:
        state = cache[_DATED_STATE] = [0, 0]
    if state[0] >= DATED_SAMPLE and not state[1]:
        return None
    moment = dated_body_time(message, rules)
    state[0] += 1
    state[1] += moment is not None
    return moment


# a key naming a time and its value, written `key=value`, `key: value` or `Key(value)` (IBM MQ's `Time(…)`)
_TIMED_PAIR = re.compile(r'(?<![\w.])([A-Za-z_][\w.-]*)(?:[=:]\s?|\()("[^"]{10,40}"|[^\s;,"()]{10,40})')
_FINE_CLOCK = re.compile(r"\d:\d\d[.,]\d")
_FINER_STATE = ("finer-body",)  # the source's cache entry: [records looked at, bodies with a finer time]


def finer_body_time(line: str, rest: str | None, header: datetime, rules: TimeRules,
                    cache: dict | None) -> datetime | None:
    """The header's own second written finer by a time its record names under a time's key (IBM MQ's
    `03/19/26 14:55:47 - … Time(2026-03-19T14:55:47.163Z)`, on the header's line or a continuation
    line; a relay's `ts=…` with its milliseconds):
    that time when it has a fraction and falls within the header's second; else None. Learnt once per
    source (`cache`): when none of its first DATED_SAMPLE bodies wrote one, later ones are not read."""
    state = cache.get(_FINER_STATE) if cache is not None else None
    if state is None:
        state = [0, 0]
        if cache is not None:
            cache[_FINER_STATE] = state
    if state[0] >= DATED_SAMPLE and not state[1]:
        return None
    state[0] += 1
    head = f"{line[:1000]}\n{rest[:600]}" if rest else line[:1000]  # the header's line and the lines below it
    if _FINE_CLOCK.search(head) is None:
        return None
    for m in _TIMED_PAIR.finditer(head):
        if any(role == "time" for role, _ in _candidates(m.group(1))):
            value = m.group(2).strip('"')
            moment = parse_time(value, rules) or read_any_time(value, tz=rules.timezone)
            if moment is not None and moment.microsecond and header <= moment < header + timedelta(seconds=1):
                state[1] += 1
                return moment
    return None


def infer_paths(record: dict, missing: tuple[str, ...], cache: dict | None) -> dict[str, tuple[str, ...]]:
    """`infer` over `record` and its nested objects (`flat_view`), as the path of keys each role's
    value is at; remembered in `cache` by the record's top-level keys (the next record with them is
    read at once, without flattening it)."""
    memo_key = ("paths", tuple(record), missing)
    if cache is not None:
        known = cache.get(memo_key)
        if known is not None:
            return known
    nested = flat_view(record)
    paths = {role: nested[name][0] for role, name in infer(record, missing, None, nested=nested, held=_held(cache)).items()}
    _remember(cache, memo_key, paths)
    return paths


# (a pair may close a bracket it opened: `[severity=info]`)
_LEVEL_PAIR = re.compile(r'(?<![\w.])([A-Za-z_][\w.-]{0,30})=("?)([A-Za-z0-9]{1,13})\2(?=[\s,;|\])}]|$)')
_LEVEL_STEMS = tuple(sorted({w[:3] for w in _WORDS["level"]} - {"log"}))
# a cheap first look: a level word's first three letters, then at most nine letters, then `=`
_LEVEL_HINT = re.compile("(?:" + "|".join(sorted({w[:3] for w in _WORDS["level"]} - {"log"})) + ')[a-z]{0,9}"?=',
                         re.I)


def level_in_pairs(text: str) -> tuple[str, str | None] | None:
    """(value, scheme) of the first `key=value` pair among a text's first 600 characters whose key
    names a level (`level=warning`, `severity=err`, `pri=6`: a priority is syslog's) and whose value
    is one; None when none does (a line with no header level, written by a key=value logger)."""
    head = text[:600]
    if "=" not in head:
        return None
    low = head.lower()
    if not any(stem in low for stem in _LEVEL_STEMS) or _LEVEL_HINT.search(head) is None:
        return None
    for m in _LEVEL_PAIR.finditer(head):
        name, value = m.group(1), m.group(3)
        for role, rank in _candidates(name):
            if role == "level" and fits(role, name, int(value) if value.isdigit() else value, abbreviated=rank == 2):
                return value, level_scheme(name)
    return None
