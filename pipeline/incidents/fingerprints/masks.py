"""Masks: the parts of a message that vary between two occurrences of the same event (numbers,
ids, addresses, host names, paths, URLs, durations, sizes, timestamps...) become placeholders
such as ``<NUM>`` or ``<IP>`` before the miner (miner.py) sees the text.

`mask` is what the product uses; `mask_reference` is the same list applied regex by regex (the
specification `mask` is tested against, and `without=` measures what each mask is worth). Both
run the masks through one loop, `apply_masks`; `mask` gives it the checks that let it skip a regex
that cannot match. The masked fingerprints made before the miner (incidents/correlation.py) run
their own masks through the same loop.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Iterable

# Only the head of a message is templated: it carries the meaning and it bounds the regex
# work on a huge line of hostile input.
TEMPLATE_CHARS = 2_000

WILDCARD = "<*>"  # what Drain writes for a generalised token (drain.py)

_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
          r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
_WEEKDAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)(?:day|sday|nesday|rsday|urday)?"
_HEX = r"[0-9A-Fa-f]"
_IPV6 = rf"(?=[0-9A-Fa-f:]*\d)(?:{_HEX}{{1,4}}|:)(?::{_HEX}{{0,4}}){{2,7}}"
# Top-level domains that end a host name. Java packages start with com/org/net, host names end
# with them; two-letter country codes are allowed except common file extensions.
_GTLD = ("com|net|org|edu|gov|mil|int|info|biz|io|dev|app|cloud|local|localdomain|internal"
         "|lan|arpa|corp|home|online|site|tech|xyz|asia|mobi|name|pro|aero|coop|museum|travel")
_NOT_CCTLD = "py|js|ts|so|gz|sh|md|rb|go|cc|hh|pl|ps|rs|cs|vb|db|hs|ml|el|xz|bz|tf|mk|id"
_HOST = (rf"(?<![\w.@/-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{{0,61}}[A-Za-z0-9])?\.)+"
         rf"(?:(?:{_GTLD})|(?!(?:{_NOT_CCTLD})\b)[a-z]{{2}})(?::\d{{1,5}})?(?![\w-]|\.\w)")

# Order matters: each mask runs on the output of the ones before it, so the wider shapes go
# first (a URL holds a host and a path, a timestamp holds numbers). Placeholders hold no digits,
# dots, slashes or colons, so later masks leave them alone. A pattern that opens with a
# look-behind opens with a look-ahead for its first character too, (?=\d): the regex engine then
# skips to the places that can match instead of trying the look-behind at every character.
MASKS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, flags), placeholder) for pattern, placeholder, flags in (
        # Whatever a quote holds is one value, however many words (a user's note, a SQL text),
        # when it follows "=" or ":" or opens with a space before it; an apostrophe in a word
        # ("can't") opens nothing. A request or a statement keeps its verb, which names the
        # event ("GET <STR>" is not "DELETE <STR>"): an upper-case first word stays.
        (r'(?<=[=:\s])"([A-Z]{3,}) (?:[^"\\\n]|\\.){0,500}"(?=[\s,;.)\]]|$)', r'"\1 <STR>"', 0),
        (r'(?<=[=:\s])"(?![A-Z]{3,} )(?:[^"\\\n]|\\.){0,500}"(?=[\s,;.)\]]|$)', "<STR>", 0),
        (r"(?<=[=:\s])'[^'\n]{0,500}'(?=[\s,;.)\]]|$)", "<STR>", 0),
        (r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+", "<URL>", 0),
        # Timestamps: ISO 8601 and its cousins, syslog and C's asctime, dd/Mon/yyyy:HH:MM:SS.
        # The compact date with a time, fields unpadded too: 20171223-22:16:0:119.
        (r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?"
         r"(?:Z|[+-]\d{2}:?\d{2}\b)?|\b\d{8}-\d{1,2}:\d{1,2}:\d{1,2}(?:[:.,]\d{1,9})?\b", "<TS>", 0),
        (r"\b\d{2,4}/\d{2}/\d{2,4}(?:[ T:]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?)?\b", "<TS>", 0),
        (rf"\b\d{{1,2}}/{_MONTH}/\d{{4}}(?::\d{{2}}:\d{{2}}:\d{{2}})?(?: [+-]\d{{4}})?", "<TS>", 0),
        (rf"\b(?:{_WEEKDAY},? +)?{_MONTH} +\d{{1,2}}(?:,? +\d{{4}})?"
         rf"(?: +\d{{1,2}}:\d{{2}}(?::\d{{2}}(?:\.\d+)?)?)?(?: +[A-Z]{{3,4}})?(?: +\d{{4}})?\b", "<TS>", 0),
        (r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b", "<TS>", 0),
        (rf"\b{_WEEKDAY}\b", "<TS>", 0),
        (rf"\b{_HEX}{{8}}-(?:{_HEX}{{4}}-){{3}}{_HEX}{{12}}\b", "<UUID>", 0),
        (r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b", "<EMAIL>", 0),
        (_HOST, "<HOST>", 0),
        # A lowercase name with a port is a host too, even a single label ("wpad:80").
        (r"(?<![^\s(\[/@'\"])[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*:\d{2,5}(?![\w.:])", "<HOST>", 0),
        (r"(?=\d)(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?(?![\w.]|\.\d)", "<IP>", 0),
        (rf"\[{_IPV6}\](?::\d{{1,5}})?|(?<![\w:]){_IPV6}(?![\w:])", "<IP>", 0),
        # File paths, with or without an extension: two or more /segments, or ~/ ./ ../ ones.
        (r"(?=[~./])(?<![\w.:/~@%+<>-])(?:~|\.{1,2})?(?:/[\w.@%+=,:*-]*[\w@%+=*-]){2,}/?", "<PATH>", 0),
        (r"(?=[~.])(?<![\w.:/~@%+<>-])(?:~|\.{1,2})/[\w.@%+=,:-]*[\w@%+=-]", "<PATH>", 0),
        # Windows folders may hold spaces ("Program Files"); only the file name ends at one.
        (r"\b[A-Za-z]:\\(?:[^\\\n:*?<>|]+\\)*[^\\\s:*?<>|]*", "<PATH>", 0),
        # Durations and sizes, unit attached or after one space ("12ms", "3.5 s", "<1 sec").
        (r"(?=[<>~+\d-])(?<![\w.])[<>~]?[-+]?(?:\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s|secs?|seconds?|mins?"
         r"|minutes?|h|hrs?|hours?|days?|m)(?![\w/]))+", "<DUR>", 0),
        (r"(?<![\w.])[-+]?\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|[kKMGT]b?|B|bytes?)(?![\w/])", "<SIZE>", 0),
        (r"\b0[xX][0-9A-Fa-f]+\b", "<HEX>", 0),
        # Long hex runs are ids (all digits is a number, below).
        (r"(?=[0-9A-Fa-f])(?<![\w.-])(?=[0-9A-Fa-f]*\d)(?=[0-9A-Fa-f]*[A-Fa-f])[0-9A-Fa-f]{8,}(?![\w]|\.\d)", "<HEX>", 0),
        # Numbers: signed, decimal, dotted (1.2.3), exponent, percentages; inside identifiers
        # after _ - # = : or a letter run (blk_-123, appattempt_1445_0020, tty2, CPU#0).
        # An HTTP status code stays a word (a 404 is not a 200): three digits after a status key,
        # a response's protocol or a quoted request (the digits first: most places fail there).
        (r"(?<![A-Za-z0-9.])(?![1-5]\d\d(?![\w.])(?:(?<=[Ss]tatus: \d\d\d)|(?<=[Ss]tatus=\d\d\d)"
         r"|(?<=[Ss]tatus \d\d\d)|(?<=STATUS: \d\d\d)|(?<=STATUS=\d\d\d)|(?<=[Cc]ode: \d\d\d)|(?<=[Cc]ode=\d\d\d)"
         r"|(?<=HTTP/\d\.\d \d\d\d)|(?<=HTTP/\d \d\d\d)|(?<=\" \d\d\d)))"
         r"[-+]?\d+(?:[._]\d+)*(?:[eE][-+]?\d+)?%?(?![A-Za-z0-9]|\.\d)", "<NUM>", 0),
        # ...but an upper-case name with a number is a name (SOCKS5, HTTP2, IPV6), not an id. A
        # number after a word and a dot is a numbered instance of it too (core.1234).
        # (A digit first: the engine then skips to digits instead of trying every place.)
        (r"(?=\d)(?:(?<=[A-Za-z])|(?<=[A-Za-z]\.))(?<!\b[A-Z])(?<!\b[A-Z]{2})(?<!\b[A-Z]{3})(?<!\b[A-Z]{4})(?<!\b[A-Z]{5})"
         r"\d+(?:[._]\d+)*(?![A-Za-z0-9]|\.\d)", "<NUM>", 0),
        # Fields joined by "|" are words (time|component|pid|text): each varies on its own.
        (r"(?<=\S)\|(?=\S)", " | ", 0),
        (r"\s+", " ", 0),
        # A list of ids is one value however long it is: "delete blk_1 blk_2 blk_3".
        (r"(?<!\S)(\S*<[A-Z]+>\S*)(?: \1)+(?!\S)", r"\1", 0),
    )
)
_HAS_PLACEHOLDER = re.compile(r"<[A-Z]+>")


DIGIT = object()  # a check: the text holds a digit (\d)
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_c = re.compile
# What each mask of MASKS cannot match without, as cheap checks that must all pass for the mask
# to run: a substring, any of a tuple of substrings, a regex search (each starting with a literal
# or one character class, which the regex engine scans for fast), or DIGIT. Each check is
# implied by every match of its mask, so skipping a mask whose check fails changes nothing.
# The last two masks (white space, a run of one value) are done without regexes in `_mask`.
_NEEDS: tuple[tuple[Any, ...], ...] = (
    ('"',), ('"',), ("'",), ("://",),
    ("-", DIGIT), ("/", DIGIT), ("/", DIGIT),                       # dates
    (DIGIT, _MONTHS, _c(rf"{_MONTH} +\d")), (":", _c(r":\d\d")), (_WEEKDAYS,),  # syslog dates, times, days
    ("-",), ("@",), (".", _c(r"\.[a-z]")), (":", _c(r":\d\d")),       # UUID, e-mail, hosts
    (".", _c(r"\.\d")), (":", _c(r":[0-9A-Fa-f]{0,4}:")),               # IPv4, IPv6
    ("/",), ("/",), (":\\",),                                          # paths
    (DIGIT, _c(r"\d\s?[nuµmshd]")), (DIGIT, _c(r"\d\s?[KMGTPkBb]")),  # durations, sizes
    (("0x", "0X"),), (DIGIT, _c(r"[0-9A-Fa-f]{8}")),                   # hex
    (DIGIT,), (DIGIT, _c(r"[A-Za-z]\.?\d")),                          # numbers
    ("|",),
)
del _c
assert len(_NEEDS) == len(MASKS) - 2
_ANY_DIGIT = re.compile(r"\d")
_FAST_MASKS = tuple((pattern.sub, placeholder, needs) for (pattern, placeholder), needs in zip(MASKS, _NEEDS))


# (re.sub of a mask, its placeholder, the checks that must all pass for it to run)
Step = tuple[Callable[[str, str], str], str, tuple[Any, ...]]


def mask_reference(message: str, *, without: frozenset[str] = frozenset()) -> str:
    """`mask` as it is specified: every regex of MASKS in turn (slow; tests check `mask` against it).
    `without`: placeholders whose masks are left out (to measure what each mask is worth)."""
    # a mask is left out when its replacement writes a left-out placeholder ('"\1 <STR>"' is a <STR>)
    steps = [(pattern.sub, placeholder, ()) for pattern, placeholder in MASKS
             if not any(p in placeholder for p in without)]
    return apply_masks(message[:TEMPLATE_CHARS], steps).strip()


def mask(message: str) -> str:
    """The message's first TEMPLATE_CHARS characters with variable parts as placeholders.

    The same text as `mask_reference`, faster: a mask whose required character (or word) is not
    in the text is skipped, the white-space and repeated-value passes are string operations, and
    a message seen lately is answered from a cache (logs repeat their messages)."""
    return _mask(message[:TEMPLATE_CHARS])


# keys are at most TEMPLATE_CHARS long, so the cache holds at most a few MB
@functools.lru_cache(maxsize=4096)
def _mask(text: str) -> str:
    text = apply_masks(text, _FAST_MASKS)
    # "\s+" -> " " then strip(): str.split() splits on the same white space as \s
    tokens = text.split()
    if len(tokens) > 1 and len(set(tokens)) < len(tokens):
        tokens = _one_of_each_run(tokens)
    return " ".join(tokens)


def apply_masks(text: str, steps: Iterable[Step]) -> str:
    """Each mask in turn on the output of the ones before, skipping one whose checks fail: a
    substring, any of a tuple of substrings, DIGIT (the text holds a digit) or a regex to search."""
    digits = None
    for sub, placeholder, needs in steps:
        for need in needs:
            if need.__class__ is str:
                if need not in text:
                    break
            elif need is DIGIT:
                # digits only ever disappear (placeholders hold none): a text without one stays so
                if digits is None or digits:
                    digits = _ANY_DIGIT.search(text) is not None
                if not digits:
                    break
            elif need.__class__ is tuple:
                for word in need:
                    if word in text:
                        break
                else:
                    break
            elif not need.search(text):
                break
        else:
            text = sub(placeholder, text)
    return text


def _one_of_each_run(tokens: list[str]) -> list[str]:
    r"""(?<!\S)(\S*<[A-Z]+>\S*)(?: \1)+(?!\S)" -> r"\1" on the joined tokens: a run of one
    token holding a placeholder is written once."""
    out: list[str] = []
    i, n = 0, len(tokens)
    while i < n:
        token = tokens[i]
        out.append(token)
        i += 1
        if i < n and tokens[i] == token and _HAS_PLACEHOLDER.search(token):
            while i < n and tokens[i] == token:
                i += 1
    return out

