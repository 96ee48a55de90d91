"""Fingerprints: which events are the same problem (CONTRACT §2).

Events share a fingerprint when they share service, exception and message template. The store
passes the template id the miner (`fingerprints.miner.TemplateMiner`, Drain over masks) gives the
message's first line; without one, `template` masks the variable parts (numbers, ids,
addresses, quoted values, paths, query strings, timestamps) as fingerprints were made before
the miner, which the store still matches so incidents opened then keep their evidence.
"""
from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from pipeline.incidents import titles
from pipeline.incidents.fingerprints.masks import DIGIT, Step, apply_masks
from pipeline.ingest.readable import record_text, record_words
from pipeline.ingest.levels import normalize_level
from pipeline.state import LogEvent

TITLE_CHARS = titles.TITLE_CHARS
# Only the head of a message is templated: it carries the meaning, and it bounds the regex
# work on a 256 KiB line of hostile input.
TEMPLATE_CHARS = 2_000

_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_HEXDIGIT = r"[0-9A-Fa-f]"
_IPV6 = rf"(?=[0-9A-Fa-f:]*\d)(?:{_HEXDIGIT}{{1,4}}|:)(?::{_HEXDIGIT}{{0,4}}){{2,7}}"

# Order matters: each mask runs on the output of the ones before it, so the wider shapes go
# first (a timestamp would otherwise be chewed into numbers, an IP into decimals, a UUID into
# hex runs). Placeholders contain no digits, slashes or quotes, so later masks leave them alone.
_MASKS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), placeholder) for pattern, placeholder in (
        # Quoted values first: whatever a quote holds is a value, whatever it looks like.
        # An apostrophe inside a word ("can't") opens nothing.
        (r'"(?:[^"\\\n]|\\.)*"', "<STR>"),
        (r"(?<!\w)'[^'\n]*'(?!\w)", "<STR>"),
        (r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?"
         r"(?:Z|[+-]\d{2}:?\d{2}|\b)", "<TS>"),
        (r"\b\d{4}/\d{2}/\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?", "<TS>"),
        (rf"\b{_MONTH} +\d{{1,2}} \d{{2}}:\d{{2}}:\d{{2}}(?:\.\d+)?", "<TS>"),
        (r"\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\b", "<TS>"),
        (rf"\b{_HEXDIGIT}{{8}}-(?:{_HEXDIGIT}{{4}}-){{3}}{_HEXDIGIT}{{12}}\b", "<UUID>"),
        (r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b", "<EMAIL>"),
        (r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b", "<IP>"),
        (rf"\[{_IPV6}\](?::\d{{1,5}})?|(?<![\w:]){_IPV6}(?![\w:])", "<IP>"),
        # A query string after a URL or route: ?key=... up to the next space, leaving the
        # punctuation that ends a clause ("...?id=5: dial tcp").
        (r"\?[^\s?#<>]*=[^\s#<>]*?(?=[:,.;)\]]*(?:\s|$))", "?<QUERY>"),
        # File paths: they end in a file name with an extension (an API route such as
        # /api/orders names the failing endpoint, which is meaning, so it stays).
        (r"(?<![\w.:/~@%+-])(?:~|\.{1,2})?(?:/[\w.@%+-]+)+\.[A-Za-z][\w.]*", "<PATH>"),
        # Windows folders may hold spaces ("Program Files"); only the file name ends at one.
        (r"\b[A-Za-z]:\\(?:[^\\\n:*?<>|]+\\)*[^\\\s:*?<>|]+", "<PATH>"),
        (r"\b0[xX][0-9A-Fa-f]+\b", "<HEX>"),
        # Long hex runs are ids; an id that happens to be all digits must mask like its siblings.
        (r"(?<![\w.])(?=[0-9A-Fa-f]*\d)[0-9A-Fa-f]{8,}(?![\w]|\.\d)", "<HEX>"),
        # Durations before ids, so 30000ms stays a number. Go prints 1m30.5s.
        (r"(?<![\w.])[-+]?(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|d))+(?!\w)", "<NUM>"),
        # Tokens, keys, ULIDs, request ids: runs mixing letters and digits.
        (r"(?<![\w+/=.-])(?=[\w+/=-]*\d)(?=[\w+/=-]*[A-Za-z])"
         r"[A-Za-z0-9][\w+/-]{19,}={0,2}(?![\w+/=-])", "<TOKEN>"),
        (r"(?<!\w)(?=\w*\d)(?=\w*[A-Za-z])\w{6,}(?!\w)", "<ID>"),
        # Sizes keep no unit either: humanised sizes switch from MB to GB. Versions (1.2.3) are
        # one number, so 1.2.3 and 1.2.4 mask alike.
        (r"(?<![\w.])[-+]?\d+(?:\.\d+)*(?:[eE][-+]?\d+)?(?:[KMGTP]i?B|[kKMG]b|B|%)?(?!\w)", "<NUM>"),
        (r"\s+", " "),
    )
)


# What each mask of _MASKS cannot match without (every match, or its lookahead, holds it): a
# substring, any of a tuple of substrings, or DIGIT; all of a mask's checks must pass for it to
# run. A mask that cannot match changes nothing, so skipping it is the same text (the white-space
# mask, last, always runs). Digits only ever disappear (placeholders hold none).
_NEEDS: tuple[tuple[Any, ...], ...] = (
    ('"',), ("'",),                                                    # quoted values
    ("-", DIGIT), ("/", DIGIT), (":", DIGIT), (":", DIGIT),        # timestamps
    ("-",), ("@",), (".", DIGIT), (":", DIGIT),                      # UUID, e-mail, IPv4, IPv6
    ("?", "="), ("/", "."), (":\\",),                                  # query strings, paths
    (("0x", "0X"),), (DIGIT,), (DIGIT,), (DIGIT,), (DIGIT,), (DIGIT,),  # hex, ids, numbers
    (),                                                                # white space
)
assert len(_NEEDS) == len(_MASKS)
_STEPS: tuple[Step, ...] = tuple((pattern.sub, placeholder, needs)
                                 for (pattern, placeholder), needs in zip(_MASKS, _NEEDS))


@lru_cache(maxsize=1024)
def template(message: str) -> str:
    """The message's first TEMPLATE_CHARS characters, variable parts masked (<NUM>, <IP>...):
    every mask of _MASKS in turn, a mask skipped when the text lacks what it needs (_NEEDS)."""
    # cached: the store masks an opening event's first line twice (its fingerprint and the new
    # incident's title), and the masks are most of correlating one event
    return apply_masks(message[:TEMPLATE_CHARS], _STEPS).strip()


def fingerprint(event: LogEvent, *, template_id: str | None = None) -> str:
    """What makes two events the same problem: service, exception and message template
    (the miner's template id when given, else the masked first line)."""
    shape = f"tid:{template_id}" if template_id is not None else template(_first_line(event.message))
    key = f"{event.service}|{event.exception or ''}|{shape}"
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def incident_id(fingerprint: str, opened_at: datetime) -> str:
    """INC-<yyyymmdd>-<6 hex>, the same for the same fingerprint and opening instant."""
    opened_at = _as_utc(opened_at)
    # The full instant, not just the date: an incident reopened the same day is another one.
    digest = hashlib.sha1(f"{fingerprint}|{opened_at.isoformat()}".encode("utf-8")).hexdigest()
    return f"INC-{opened_at:%Y%m%d}-{digest[:6]}"


# the parts a line may open with that say nothing of the problem (a timestamp, a pid, a connection
# number): a title starts after them
_HEADER_PLACEHOLDERS = frozenset({"<TS>", "<NUM>", "<HEX>", "<IP>", "<UUID>", "<ID>"})
_OPENERS = "([{<\"'"


def _header_end(line: str) -> int:
    """Where a line's words begin: past a lead of timestamps, numbers, ids and punctuation (found
    with the template's own masks, each match blanked to keep the positions); 0 when none."""
    work = line[:TEMPLATE_CHARS]
    for pattern, placeholder in _MASKS:
        if placeholder in _HEADER_PLACEHOLDERS:
            work = pattern.sub(lambda m: "\0" * len(m.group()), work)
    i = _skip_blank(work, 0)
    while i < len(work) and line[i - 1:i] == "[":
        # a tag that names a value the header carries ("[client 10.0.0.7]", "[pid 4411]"): one word at
        # most beside a masked number, address or id; "[alert]" and "[mod_jk]" say something, and stay
        end = work.find("]", i, i + _TAG_CHARS)
        inner = work[i:end]
        if end < 0 or "\0" not in inner or len(_WORD.findall(inner.replace("\0", " "))) > 1:
            break
        i = _skip_blank(work, end + 1)
    if i >= len(work):
        return 0  # nothing but a header: keep the line whole
    while i > 0 and line[i - 1] in _OPENERS:  # "[alert]", "'customer_id'": from the bracket or quote
        i -= 1
    tagged = _LEVEL_TAG_AND_IDS.match(line, i) or _LEVEL_TAG.match(line, i)
    if tagged and normalize_level(tagged.group(1)) and tagged.end() < len(line):
        return tagged.end()  # the level is the event's ("[ERROR] plugin/…"); the message starts after it
    return i


_TAG_CHARS = 80
_WORD = re.compile(r"[^\W\d_]+")


def _skip_blank(work: str, i: int) -> int:
    """Past masked header values and punctuation, to the next letter or digit."""
    while i < len(work) and (work[i] == "\0" or not work[i].isalnum()):
        i += 1
    return i


# nginx's error log (ngx_log_error_core): "[level] PID#TID: " then "*CONNECTION " before the message;
# after a level tag, the process's numbers say nothing ("[alert] 29#29: *1592139 1024 worker_connections…")
_LEVEL_TAG_AND_IDS = re.compile(r"\[([A-Za-z]+)\]\s+\d+#\d+:\s*(?:\*\d+\s+)?")
# a leading level in brackets ("[ERROR] plugin/kubernetes: …", CoreDNS) is the event's level, not its title's
# first word: a title never starts with it (a word that is no level, "[mod_jk]", stays)
_LEVEL_TAG = re.compile(r"\[([A-Za-z]+)\]\s*")


def title(event: LogEvent) -> str:
    """A short human title in the log's own words: the exception's short name and the opening event's
    first line (never the template's placeholders), from where its words begin (a lead timestamp or
    pid says nothing in the inbox's first 45 characters); a line that is a JSON object's text (one
    the reader could not take apart: cut off by the shipper, or with no message key) by its words,
    not its quotes and braces."""
    line = _first_line(event.message).strip()
    record = record_text(line)
    text = record_words(record, event.exception) if record else line[_header_end(line):].strip()
    # the words that tell it from another incident in view (pipeline/incidents/titles.py)
    text = titles.empty_fields_dropped(text)
    text = titles.said_after_colon(text, more=_said_next(event, line),
                                   service="" if event.exception else event.service)
    text = titles.own_message_first(text, exception=event.exception, stack=event.stack)
    text = titles.failure_first(text)
    if event.exception:
        short = re.split(r"[.$:\\/]", event.exception.strip())[-1] or event.exception
        if short not in text.split(":")[0]:  # don't repeat "KeyError: KeyError ..."
            text = f"{short}: {text}"
    return titles.bounded(text, TITLE_CHARS)


def _said_next(event: LogEvent, first: str) -> str:
    """What a message's first line was followed by: its next line, or its stack's first."""
    rest = event.message.split(first, 1)[1] if first and first in event.message else ""
    for text in (rest, event.stack or ""):
        following = _first_line(text).strip()
        if following:
            return following
    return ""




def first_line(message: str) -> str:
    """The line of a message that is templated: its first non-blank one."""
    return _first_line(message)


def _first_line(message: str) -> str:
    return next((line for line in message.splitlines() if line.strip()), "")


def _as_utc(moment: datetime) -> datetime:
    # Naive datetimes are taken as UTC, like the event times they come from.
    if moment.tzinfo is None:
        return moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)
