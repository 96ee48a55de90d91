"""Log levels: every common spelling and number → DEBUG / INFO / WARN / ERROR / FATAL.

    normalize_level("warning")  -> "WARN"
    normalize_level(50)         -> "ERROR"   (bunyan/pino numbers, 10..60)
    normalize_level(3, scheme="syslog") -> "ERROR"  (syslog severities, 0..7)
    infer_level("Connection refused, giving up")  -> "ERROR"   (no level field: keywords)
    infer_level("Peer down")                      -> "ERROR"   (no level field: what the line means)

`normalize_level` answers None when the value is not a level it knows (an empty string, an
unknown word, a number outside every scheme); callers keep the raw value for the reviewer
rather than guessing. `infer_level` answers None when neither a keyword nor what the line says
(a broken state, a healthy one negated, a non-zero exit, something down) speaks for a level.

Numbers: a small number (0..7) is read as a syslog severity, since that is what GELF and syslog
send; 10..60 as bunyan/pino (10 trace, 20 debug, 30 info, 40 warn, 50 error, 60 fatal), and
values between those steps round down to the step below (pino custom levels, 35 -> INFO).
Pass `scheme="syslog"` or `scheme="bunyan"` when the source's scheme is known, `scheme="otel"` for
OpenTelemetry's SeverityNumber (1-24, four steps a level: 1-4 trace, ..., 21-24 fatal).

Syslog severities: 0 emerg, 1 alert, 2 crit → FATAL (the system or a component is down or
about to be); 3 err → ERROR; 4 warning → WARN; 5 notice, 6 info → INFO; 7 debug → DEBUG.
"""
from __future__ import annotations

import re
from typing import Literal, Protocol

Level = Literal["DEBUG", "INFO", "WARN", "ERROR", "FATAL"]
LEVELS: tuple[Level, ...] = ("DEBUG", "INFO", "WARN", "ERROR", "FATAL")

_SYSLOG: dict[int, Level] = {0: "FATAL", 1: "FATAL", 2: "FATAL", 3: "ERROR", 4: "WARN",
                             5: "INFO", 6: "INFO", 7: "DEBUG"}
_BUNYAN: tuple[tuple[int, Level], ...] = ((60, "FATAL"), (50, "ERROR"), (40, "WARN"),
                                          (30, "INFO"), (20, "DEBUG"), (10, "DEBUG"))

_NAMES: dict[str, Level] = {}
for _level, _names in {
    "DEBUG": ("debug", "dbg", "dbug", "trace", "trc", "trce", "verbose", "verb", "vrb", "fine", "finer", "finest",
              "all", "d", "v", "t", "debug1", "debug2", "debug3", "debug4", "debug5",
              "d1", "d2", "d3", "d4", "d5"),
    "INFO": ("info", "inf", "information", "informational", "notice", "note", "ntc", "config",
             "log", "i", "n"),
    "WARN": ("warn", "warning", "wrn", "wrng", "w", "attention"),
    "ERROR": ("error", "err", "eror", "e", "severe", "fail", "failure", "fault"),
    "FATAL": ("fatal", "ftl", "pnc", "critical", "crit", "crt", "panic", "emerg", "emergency", "alert",
              "f", "a", "c", "wtf", "assert", "dpanic"),
}.items():
    for _name in _names:
        _NAMES[_name] = _level  # type: ignore[assignment]
LEVEL_NAMES = frozenset(_NAMES)  # every level name, in lower case
# dbug/trce: .NET's console formatter; pnc: zerolog's console writer (panic). Single letters: glog/klog (I W E F), logcat (V D I W E F A), MongoDB (F E W I D1-D5),
# a level name's initial (Python's `%(levelname).1s`: C for CRITICAL, T for TRACE). Logcat's
# "S" (silent) is never a record's level, so it stays unknown.
# The names as lines write them (lower, UPPER, Capitalised): a header's level is looked up at once
_SPELLED: dict[str, Level] = {form: level for name, level in _NAMES.items()
                              for form in (name, name.upper(), name.capitalize())}

# a level name cut to a column four capitals wide (Go's logrus text formatter: `ERRO`, `DEBU`, `TRAC`,
# `FATA`, `PANI`; supervisord's `TRAC`, `ERRO`): the cut of an enum's own names only, and only as
# written, in capitals
CUT_LEVELS: dict[str, Level] = {name[:4].upper(): _NAMES[name] for name in ("trace", "debug", "error", "fatal", "panic")}
# The level names of more than two letters (syslog's and MongoDB's debug1..debug5 included) as a regex alternation (longest first), in the spellings
# lines write them: the one list text layouts match a level column against
LEVEL_WORD = "(?:" + "|".join(sorted({form for name in _NAMES if len(name) > 2 and name[:3].isalpha() and name not in ("log", "all")
                                      for form in (name, name.upper(), name.capitalize())} | set(CUT_LEVELS),
                                     key=lambda w: (-len(w), w))) + ")"
_SPELLED.update(CUT_LEVELS)
_OFFSET = re.compile(r"^([A-Za-z]{4,5})[+-]\d{1,2}$")
# OpenTelemetry's severity texts for the steps within a level (`INFO2`, `ERROR3`, `TRACE4`: the
# data model's SeverityNumber short names), and the like: a level name of three letters or more and one digit
_STEPPED = re.compile(r"^([A-Za-z]{3,8})[1-9]$")
# OpenTelemetry's SeverityNumber: 1-4 TRACE, 5-8 DEBUG, 9-12 INFO, 13-16 WARN, 17-20 ERROR, 21-24 FATAL
_OTEL: tuple[Level, ...] = ("DEBUG", "DEBUG", "INFO", "WARN", "ERROR", "FATAL")
_DECORATED = re.compile(r"^\s*[<\[({]?\s*([A-Za-z]+)\s*[>\])}]?\s*[:!]?\s*$")  # `[ERROR]`, `{warn}`, `E!`

# Keyword inference for a line with no level: the most severe match wins. Word boundaries so
# "errorless" or "terror" do not count; "0 errors" and "no error" still do (a line that talks
# about errors is worth a reviewer's look, and these are only guesses for lines with no level).
#
# A line can say that something broke without any of those words: "Environment variable DEPLOY_ENV
# is undefined", "Peer down", "worker exited with code 137", "no such file". So after the error
# keywords comes a rule over the line's meaning (ERROR too), any of:
# - a word whose sense is a broken state or event (undefined, missing, invalid, corrupt, crashed,
#   unavailable, unhealthy, lost, killed, exhausted, expired, rejected, deadlocked, evicted, …);
# - a healthy state negated: `not`/`no`/`never`/an `n't` verb, within two words of found, set,
#   defined, available, reachable, running, responding, ready, connected, exists, allowed, started,
#   healthy, valid, resolved, mounted, accessible, authorised, or `no such`, `no route`, `no space`;
# - an exit status that is not zero (`exited with code 1`, `exit status 137`, `exited abnormally
#   with [1]`, `non-zero exit`);
# - something `down` or `dead` as the clause's predicate (`Peer down`, `node is dead`, `link down
#   on eth0`), not a deliberate act (`shutting down`, `scaled down to 3`) or an amount (`down 5%`).
# A written level always wins over all of this: only lines that carry none are guessed.
_BROKEN = frozenset((
    "crash crashed crashes crashing crashloop crashloopbackoff undefined unset missing absent invalid malformed"
    " corrupt corrupted corruption broken unavailable unresponsive unhealthy lost killed exhausted overflow"
    " overflowed overflows expired violated violation violations rejected forbidden unauthorized unauthorised"
    " mismatch mismatched stalled hung deadlock deadlocked deadlocks leak leaked leaking leaks evicted"
    " oomkilled").split())
_HEALTHY_STATES = frozenset((
    "found set defined available reachable running responding ready connected exist exists existing allowed"
    " permitted started healthy valid resolved resolvable mounted accessible authorized authorised"
    " authenticated").split())
_NEGATIONS = frozenset(("not", "no", "never", "cannot"))
_NO_WHAT = frozenset(("such", "route", "space"))
_WORD = re.compile(r"[a-z]+(?:n't)?")
_DELIBERATE = frozenset((
    "shut shutting scale scaled scales scaling slow slowed slowing wind winding step stepped stepping cool cooled"
    " cooling spin spinning spun power powered powering bring bringing brought turn turned turning tear tearing"
    " torn count counted counting write writing wrote let calm calmed calming settle settled settles settling"
    " narrow narrowed narrowing drill drilled drilling back backed backing sit sat lay laid put up and or going"
    " go weigh weighed weighing play played playing trickle trickled trickles cut cutting mark marked knock"
    " knocked knocking upside top run ran").split())


class _Meaning:
    """The rule above as one `search(text)`, like the keyword patterns, over the text's words (lower
    case, letters only: `DEPLOY_ENV` is `deploy` and `env`): a set lookup for the broken words, a
    look at the three words after each negation, and the exit and `down`/`dead` patterns only for
    the few lines that hold those words."""

    _exit = re.compile(r"\bexit(?:ed|s|ing)?\b(?:\s+(?:with|abnormally|unexpectedly|code|status|value|exit))*"
                       r"\s*[:=]?\s*[\[(]?\s*(?!0+\b)-?\d+\b|\bnon-?zero\s+(?:exit|status|return|code)", re.I)
    _down = re.compile(r"([\w-]+)\s+(?:(?:is|was|are|were|went|gone|goes|seems)\s+)?(?:down|dead)\b"
                       r"(?=\s*(?:$|[^\w\s]|(?:on|at|for|since|in|after|while|again|now)\b))", re.I)

    def search(self, text: str) -> bool:
        lowered = text.lower()
        words = _WORD.findall(lowered)
        if not _BROKEN.isdisjoint(words):
            return True
        if not _NEGATIONS.isdisjoint(words) or "n't" in lowered:
            for i, word in enumerate(words):
                if word in _NEGATIONS or word.endswith("n't"):
                    after = words[i + 1:i + 4]
                    if not _HEALTHY_STATES.isdisjoint(after) or (word == "no" and after and after[0] in _NO_WHAT):
                        return True
        if ("exit" in lowered or "zero" in lowered) and self._exit.search(text):
            return True
        if "down" in lowered or "dead" in lowered:
            return any(m.group(1).lower() not in _DELIBERATE for m in self._down.finditer(text))
        return False


class _Search(Protocol):
    def search(self, text: str, /) -> object: ...


_MEANING = _Meaning()
_KEYWORDS: tuple[tuple[Level, _Search], ...] = (
    ("FATAL", re.compile(r"\b(?:fatal|panic(?:ked)?|emerg(?:ency)?|critical|crit|segfault"
                         r"|segmentation fault|core dumped|kernel panic|out of memory|oom[- ]?kill(?:ed|er)?)\b",
                         re.I)),
    ("ERROR", re.compile(r"\b(?:errors?|err|exceptions?|fail(?:s|ed|ure|ures|ing)?|severe"
                         r"|denied|refused|unreachable|timed? ?out|timeout|abort(?:ed|ing)?"
                         r"|cannot|can't|could not|couldn't|unable to|traceback"
                         r"|[A-Z]\w*(?:Exception|Error))\b", re.I)),
    ("ERROR", _MEANING),
    ("WARN", re.compile(r"\b(?:warn(?:ing)?s?|deprecated|retry(?:ing)?|retries|degraded)\b", re.I)),
    ("DEBUG", re.compile(r"\b(?:debug|trace)\b", re.I)),
)
# What a match of each keyword pattern (in _KEYWORDS' order) holds, lower-cased: an ASCII text
# (lower-cased) holding none of a pattern's words cannot match it, which is then not searched (re.I's
# folds beyond ASCII, such as the long s or the Kelvin sign, are why only ASCII texts are gated).
_WORDS: tuple[tuple[str, ...], ...] = (
    ("fatal", "panic", "emerg", "crit", "segfault", "segmentation fault", "core dumped",
     "out of memory", "oom"),
    # (`timed? ?out|timeout` spelled out: `time` alone let through every line that says a lifetime or a
    # response time, a Proxifier log's every line, each then searched)
    ("err", "exception", "fail", "severe", "denied", "refused", "unreachable", "timeout", "timed out",
     "time out", "timedout", "abort", "cannot", "can't", "could", "unable to", "traceback"),
    ("no", "n't", "exit", "down", "dead", "zero", "never", "cannot", *sorted(_BROKEN)),
    ("warn", "deprecated", "retr", "degraded"),
    ("debug", "trace"),
)
# a JVM option (`-XX:+ExitOnOutOfMemoryError`, `-XX:OnError=...`) names a flag, not an error: a
# startup banner that lists the options ("Picked up JAVA_TOOL_OPTIONS: ...") speaks for no level
JVM_FLAG = re.compile(r"(?<!\S)-XX:[+-]?[A-Za-z]\w*(?:=\S*)?")


def normalize_level(value: object, *, scheme: str | None = None) -> Level | None:
    """A level field's value → DEBUG/INFO/WARN/ERROR/FATAL, or None when not a known level.

    `scheme` is "syslog" (0..7) or "bunyan" (10..60, pino too) when the source's numbers are
    known; without it small numbers are syslog and larger ones bunyan. Strings of digits are
    numbers ("3" from a syslog priority field, "50" from a text export).
    """
    if type(value) is str:
        spelled = _SPELLED.get(value)
        if spelled is not None:
            return spelled  # what the steps below answer for a name as written
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        return _from_number(value, scheme)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text:
        return None
    if text.isdigit():
        return _from_number(int(text), scheme)
    found = _NAMES.get(text.lower())
    if found is not None:
        return found
    # "[ERROR]", "<warn>", "ERROR:" and the like.
    bare = _DECORATED.match(text)
    if bare is not None:
        return _NAMES.get(bare.group(1).lower())
    # Go's slog writes a level between its names as the name below and the distance: INFO+2, ERROR+4, DEBUG-4
    offset = _OFFSET.match(text)
    if offset is not None:
        return _NAMES.get(offset.group(1).lower())
    stepped = _STEPPED.match(text)
    if stepped is not None:
        return _NAMES.get(stepped.group(1).lower())
    return None


# A level word that opens a line (`INFO: connected`, `WARN retrying`, `Information: started`, Python's
# default `WARNING:root:msg`, a console writer's `dbg msg`, `[warn] msg`, `<error> msg`): the word then
# a colon, or a blank or the end; in brackets, in any case. Taken as written when in upper case, or
# followed by a colon, or one of the canonical names (`_CANONICAL`), or a three-letter abbreviation in
# lower case (`inf`, `dbg`, `wrn`: no English word); another capitalised or lower-case word before a
# blank is prose (`Alert sent`, `Notice that`, `fine tuning`) and is not.
_LEADING = re.compile(r"([A-Za-z]{3,13})(?:[+-]\d{1,2}(?=\s|$))?(?:(:)|(?=\s|$))|([\[<(])([A-Za-z]{3,13})([\]>)]):?(?=\s|$)")
_CLOSING = {"[": "]", "<": ">", "(": ")"}
_NOT_LEADING = frozenset(("log", "all"))
# the names every logger's level enum writes: in any case before a blank (`info request failed`,
# `Warning disk almost full`); other level words (`Alert sent`, `Notice that`) only in upper case or
# with a colon
_CANONICAL = frozenset(("trace", "debug", "info", "warn", "warning", "error", "fatal"))


# The level names an abbreviation is cut from (`abbreviated_level`), each with its level
_FULL_NAMES: tuple[tuple[str, Level], ...] = (
    ("trace", "DEBUG"), ("verbose", "DEBUG"), ("debug", "DEBUG"), ("info", "INFO"), ("notice", "INFO"),
    ("warning", "WARN"), ("error", "ERROR"), ("critical", "FATAL"), ("fatal", "FATAL"), ("panic", "FATAL"),
    ("emergency", "FATAL"), ("alert", "FATAL"))
_ABBREVIATION = re.compile(r"^(?:[A-Z]{3,5}|[a-z]{3,5})$")


def _subsequence(short: str, name: str) -> bool:
    letters = iter(name)
    return all(c in letters for c in short)


def abbreviated_level(token: str) -> Level | None:
    """The level a column's abbreviation of a level name writes (`FATL`, `EROR`, `WRNG`, `NTC`, `EMRG`,
    `dbg`): three to five letters in one case, the name's first letter and then some of its others
    in their order; None when it is no such cut or cuts names of different levels. Read only where
    the column is already known to hold levels (a learnt layout's level column, `layout.py`): as a
    word of prose, `CAT` or `war` would pass (the rule is a shape, not a list of spellings)."""
    if not _ABBREVIATION.match(token):
        return None
    short = token.lower()
    found = {level for name, level in _FULL_NAMES if name[0] == short[0] and _subsequence(short, name)}
    return found.pop() if len(found) == 1 else None


def leading_level(text: str) -> Level | None:
    """The level a line's first word writes (see _LEADING), or None."""
    m = _LEADING.match(text)
    if m is None:
        return None
    if m.group(3):  # decorated (`[warn]`, `<error>`, `(info)`): a level column in any case
        word = m.group(4).lower()
        return _NAMES.get(word) if _CLOSING[m.group(3)] == m.group(5) and word not in _NOT_LEADING else None
    word = m.group(1)
    lowered = word.lower()
    if lowered in _NOT_LEADING:
        return None
    if m.group(2) or word.isupper() or (len(word) == 3 and word.islower()) or lowered in _CANONICAL:
        return _NAMES.get(lowered) or CUT_LEVELS.get(word)
    return None


def infer_level(text: str, *, default: Level | None = None) -> Level | None:
    """A guess from keywords for a line that carries no level; `default` when none matches."""
    head = text[:2_000]
    if "-XX:" in head:  # every JVM flag starts so
        head = JVM_FLAG.sub(" ", head)
    lowered = head.lower() if head.isascii() else None
    for (level, pattern), words in zip(_KEYWORDS, _WORDS):
        if lowered is not None:
            for word in words:
                if word in lowered:
                    break
            else:
                continue  # none of the words a match holds (see _WORDS)
        if pattern.search(head):
            return level
    return default


def at_least(level: Level | None, floor: Level) -> bool:
    """Whether `level` is `floor` or more severe (None is never)."""
    return level is not None and LEVELS.index(level) >= LEVELS.index(floor)


def _from_number(number: int, scheme: str | None) -> Level | None:
    if scheme not in (None, "syslog", "bunyan", "otel"):
        raise ValueError(f"unknown level scheme: {scheme!r} (expected 'syslog', 'bunyan' or 'otel')")
    if scheme == "otel":
        return _OTEL[(number - 1) // 4] if 1 <= number <= 24 else None
    if scheme == "syslog" or (scheme is None and 0 <= number <= 7):
        return _SYSLOG.get(number)
    if number < 10:
        return None
    for step, level in _BUNYAN:
        if number >= step:
            return level if number < 100 else None
    return None


# A level column's words that name no level elsewhere (MySQL's `System`, PostgreSQL's LOG/STATEMENT/
# DETAIL/HINT/CONTEXT, Apple's `Default`, loguru's `SUCCESS`): INFO where a header's position says
# they are its level (a learnt layout's level column, `prefixed_level`)
COLUMN_INFO = frozenset({"system", "statement", "detail", "hint", "context", "log", "default", "success"})
# a level word in capitals closed by a colon: its own column, or joined by `:` or `-` to the column
# before it (`…:[18762]:LOG:`, `UTC-5eefe116.22f4-LOG:`)
_PREFIXED = re.compile(r"(?:(?<=\s)|(?<=[:-]))([A-Z]{3,9}):(?=\s+\S)")
_PROSE_WORD = re.compile(r"[A-Za-z][a-z]*[,.;!?]?")
PREFIX_COLUMNS = 6


def _header_value(token: str) -> bool:
    """Whether a column before a level is a header's value: it holds a digit, a bracket, `=` or `@`, or a
    colon inside it (`UTC:host`), and no quote (`"how":`, a quoted word, is a document's or prose's)."""
    bare = token.rstrip(":-")
    if '"' in token or "'" in token or _PROSE_WORD.fullmatch(bare):
        return False
    return any(c.isdigit() or c in "[]()=@:" for c in bare)


def prefixed_level(text: str) -> tuple[str, Level, int] | None:
    """(word, level, where the message starts) for a level written after a header's other columns:
    an upper-case level word closed by a colon (`[1127]: [8-1] db=app,user=bob LOG:  duration: …`,
    `:[18762]:LOG:`), among a line's first PREFIX_COLUMNS columns, every column before it a header's
    value (a number, a bracket, a `key=value`, an address: `_header_value`), none a word of prose
    (`Connection lost ERROR: …` is prose before a level word, no header). The
    column words a level column writes (`COLUMN_INFO`: `LOG`) are INFO in that position. None
    when the line writes no such level."""
    head = text[:240]
    for m in _PREFIXED.finditer(head):
        word = m.group(1)
        level = normalize_level(word) or ("INFO" if word.lower() in COLUMN_INFO else None)
        if level is None:
            continue
        before = head[:m.start()].split()
        if not before or len(before) >= PREFIX_COLUMNS:
            return None
        if not all(_header_value(token) for token in before):
            return None
        return word, level, m.end()
    return None
