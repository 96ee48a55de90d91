"""Message templates: which log lines are the same kind of event, mined online with Drain.

A message is first *masked*: the parts that vary between two occurrences of the same event
(numbers, ids, addresses, host names, paths, URLs, durations, sizes, timestamps...) become
placeholders such as ``<NUM>`` or ``<IP>``. The masked text goes through Drain (the ``drain3``
package's prefix-tree clusterer), which also generalises the variable words no mask catches
(user names, file names...) into ``<*>``. A last pass joins clusters whose templates have the
same constant words and differ only in how many masked or generalised tokens they hold
("0 bytes sent" and "1190 bytes (1.16 KB) sent").

    miner = TemplateMiner(None)                # memory only, as the product uses it
    miner.template_id("Connection from 10.0.0.1 closed")   # -> "T3f9c0a1b2d4e"
    miner.template_of("Connection from 10.0.0.1 closed")   # -> "Connection from <IP> closed"

`template_id` is stable: it is given to a cluster when the cluster is created and never
changes while the cluster lives, even as its template text generalises; clusters joined by the
last pass answer with the id of the oldest one. The state (Drain's tree, the clusters, the
joins) is `state()` / `from_state()` (or only what changed: `changes_since()` / `apply_changes()`);
the product keeps it in the records store (as rows: `changes_since()` per batch), read and written in the transaction
that stores each batch (pipeline/incidents/batch.py), so every process on a data dir goes on with
the same ids. A `state_dir` instead keeps it as a JSON file, written atomically after every change,
for standalone use by one process at a time; within a process the miner is thread-safe.

One configuration serves every log: there are no per-source rules.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from drain3.drain import Drain, LogCluster, Node

STATE_FILE = "templates.json"
STATE_VERSION = 1
# Only the head of a message is templated: it carries the meaning and it bounds the regex
# work on a huge line of hostile input.
TEMPLATE_CHARS = 2_000

# Drain's knobs, one setting for all logs (see bench/grouping.py for how they were chosen).
SIM_TH = 0.8
# Depth 5 (Drain's tree splits on the first three tokens): chosen leave-one-system-out, each Loghub
# system's score from the depth the other seven pick (`python -m pipeline grouping --loo`). A state
# saved without a depth was made at 4 and keeps it, so its ids stay what they were.
DEPTH = 5
LEGACY_DEPTH = 4
MAX_CHILDREN = 100

_WILDCARD = "<*>"

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
# dots, slashes or colons, so later masks leave them alone.
_MASKS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, flags), placeholder) for pattern, placeholder, flags in (
        # Whatever a quote holds is one value, however many words (a user's note, a SQL text),
        # when it follows "=" or ":" or opens with a space before it; an apostrophe in a word
        # ("can't") opens nothing.
        (r'(?<=[=:\s])"(?:[^"\\\n]|\\.){0,500}"(?=[\s,;.)\]]|$)', "<STR>", 0),
        (r"(?<=[=:\s])'[^'\n]{0,500}'(?=[\s,;.)\]]|$)", "<STR>", 0),
        (r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]+", "<URL>", 0),
        # Timestamps: ISO 8601 and its cousins, syslog and C's asctime, dd/Mon/yyyy:HH:MM:SS.
        (r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?)?"
         r"(?:Z|[+-]\d{2}:?\d{2}\b)?", "<TS>", 0),
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
        (r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?(?![\w.]|\.\d)", "<IP>", 0),
        (rf"\[{_IPV6}\](?::\d{{1,5}})?|(?<![\w:]){_IPV6}(?![\w:])", "<IP>", 0),
        # File paths, with or without an extension: two or more /segments, or ~/ ./ ../ ones.
        (r"(?<![\w.:/~@%+<>-])(?:~|\.{1,2})?(?:/[\w.@%+=,:*-]*[\w@%+=*-]){2,}/?", "<PATH>", 0),
        (r"(?<![\w.:/~@%+<>-])(?:~|\.{1,2})/[\w.@%+=,:-]*[\w@%+=-]", "<PATH>", 0),
        # Windows folders may hold spaces ("Program Files"); only the file name ends at one.
        (r"\b[A-Za-z]:\\(?:[^\\\n:*?<>|]+\\)*[^\\\s:*?<>|]*", "<PATH>", 0),
        # Durations and sizes, unit attached or after one space ("12ms", "3.5 s", "<1 sec").
        (r"(?<![\w.])[<>~]?[-+]?(?:\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s|secs?|seconds?|mins?"
         r"|minutes?|h|hrs?|hours?|days?|m)(?![\w/]))+", "<DUR>", 0),
        (r"(?<![\w.])[-+]?\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|[kKMGT]b?|B|bytes?)(?![\w/])", "<SIZE>", 0),
        (r"\b0[xX][0-9A-Fa-f]+\b", "<HEX>", 0),
        # Long hex runs are ids (all digits is a number, below).
        (r"(?<![\w.-])(?=[0-9A-Fa-f]*\d)(?=[0-9A-Fa-f]*[A-Fa-f])[0-9A-Fa-f]{8,}(?![\w]|\.\d)", "<HEX>", 0),
        # Numbers: signed, decimal, dotted (1.2.3), exponent, percentages; inside identifiers
        # after _ - # = : or a letter run (blk_-123, appattempt_1445_0020, tty2, CPU#0).
        (r"(?<![A-Za-z0-9.])[-+]?\d+(?:[._]\d+)*(?:[eE][-+]?\d+)?%?(?![A-Za-z0-9]|\.\d)", "<NUM>", 0),
        # ...but an upper-case name with a number is a name (SOCKS5, HTTP2, IPV6), not an id.
        (r"(?<=[A-Za-z])(?<!\b[A-Z])(?<!\b[A-Z]{2})(?<!\b[A-Z]{3})(?<!\b[A-Z]{4})(?<!\b[A-Z]{5})"
         r"\d+(?:[._]\d+)*(?![A-Za-z0-9]|\.\d)", "<NUM>", 0),
        (r"\s+", " ", 0),
        # A list of ids is one value however long it is: "delete blk_1 blk_2 blk_3".
        (r"(?<!\S)(\S*<[A-Z]+>\S*)(?: \1)+(?!\S)", r"\1", 0),
    )
)
_PLACEHOLDER = re.compile(r"<[A-Z]+>|<\*>")
_HAS_PLACEHOLDER = re.compile(r"<[A-Z]+>")
# "user=<*>": a key that stays when its value is generalised.
_KEY_PREFIX = re.compile(r"^[^\s=:<>]*[A-Za-z][^\s=:<>]*[=:]")
# A token that is only placeholders and punctuation carries no constant word.
_VARIABLE_TOKEN = re.compile(r"^(?:<[A-Z]+>|<\*>|[^\w<>])*(?:<[A-Z]+>|<\*>)(?:<[A-Z]+>|<\*>|[^\w<>])*$"
                             r"|^[(\[{'\"]+[)\]}'\"]+[,;:.]?$")
# Upper-case words are names of states, protocols, verbs (ERROR, HTTPS, SOCKS5, GET): two
# messages that differ in one are different events, however alike the rest.
_ENUM_WORD = re.compile(r"^[A-Z][A-Z0-9_]{2,}[,;:.]?$")


_DIGIT = object()  # a check: the text holds a digit (\d)
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_c = re.compile
# What each mask of _MASKS cannot match without, as cheap checks that must all pass for the mask
# to run: a substring, any of a tuple of substrings, a regex search (each starting with a literal
# or one character class, which the regex engine scans for fast), or _DIGIT. Each check is
# implied by every match of its mask, so skipping a mask whose check fails changes nothing.
# The last two masks (white space, a run of one value) are done without regexes in `_mask`.
_NEEDS: tuple[tuple, ...] = (
    ('"',), ("'",), ("://",),
    ("-", _DIGIT), ("/", _DIGIT), ("/", _DIGIT),                       # dates
    (_DIGIT, _MONTHS, _c(rf"{_MONTH} +\d")), (":", _c(r":\d\d")), (_WEEKDAYS,),  # syslog dates, times, days
    ("-",), ("@",), (".", _c(r"\.[a-z]")), (":", _c(r":\d\d")),       # UUID, e-mail, hosts
    (".", _c(r"\.\d")), (":", _c(r":[0-9A-Fa-f]{0,4}:")),               # IPv4, IPv6
    ("/",), ("/",), (":\\",),                                          # paths
    (_DIGIT, _c(r"\d\s?[nuµmshd]")), (_DIGIT, _c(r"\d\s?[KMGTPkBb]")),  # durations, sizes
    (("0x", "0X"),), (_DIGIT, _c(r"[0-9A-Fa-f]{8}")),                   # hex
    (_DIGIT,), (_DIGIT, _c(r"[A-Za-z]\d")),                             # numbers
)
del _c
assert len(_NEEDS) == len(_MASKS) - 2
_ANY_DIGIT = re.compile(r"\d")
_FAST_MASKS = tuple((pattern.sub, placeholder, needs) for (pattern, placeholder), needs in zip(_MASKS, _NEEDS))


def mask_reference(message: str, *, without: frozenset[str] = frozenset()) -> str:
    """`mask` as it is specified: every regex of _MASKS in turn (slow; tests check `mask` against it).
    `without`: placeholders whose masks are left out (to measure what each mask is worth)."""
    text = message[:TEMPLATE_CHARS]
    for pattern, placeholder in _MASKS:
        if placeholder not in without:
            text = pattern.sub(placeholder, text)
    return text.strip()


def mask(message: str) -> str:
    """The message's first TEMPLATE_CHARS characters with variable parts as placeholders.

    The same text as `mask_reference`, faster: a mask whose required character (or word) is not
    in the text is skipped, the white-space and repeated-value passes are string operations, and
    a message seen lately is answered from a cache (logs repeat their messages)."""
    return _mask(message[:TEMPLATE_CHARS])


# keys are at most TEMPLATE_CHARS long, so the cache holds at most a few MB
@functools.lru_cache(maxsize=4096)
def _mask(text: str) -> str:
    digits = None
    for sub, placeholder, needs in _FAST_MASKS:
        for need in needs:
            if need.__class__ is str:
                if need not in text:
                    break
            elif need is _DIGIT:
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
    # "\s+" -> " " then strip(): str.split() splits on the same white space as \s
    tokens = text.split()
    if len(tokens) > 1 and len(set(tokens)) < len(tokens):
        tokens = _one_of_each_run(tokens)
    return " ".join(tokens)


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


def _constant_key(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The template's constant words, in order: what joins clusters in the last pass."""
    return tuple(_PLACEHOLDER.sub(_WILDCARD, t) for t in tokens if not _VARIABLE_TOKEN.match(t))


class _Drain(Drain):
    """Drain that keeps a token's key when it generalises the value: user=a, user=b -> user=<*>."""

    def get_seq_distance(self, seq1, seq2, include_params):
        if not seq1:
            return 1.0, 0
        sim = params = 0
        for t1, t2 in zip(seq1, seq2):
            if t1 == self.param_str:
                params += 1
            elif t1 == t2:
                sim += 1
            elif t1.endswith(self.param_str) and t2.startswith(t1[:-len(self.param_str)]):
                params += 1
            elif _ENUM_WORD.match(t1) and _ENUM_WORD.match(t2):
                return 0.0, 0
        if include_params:
            sim += params
        return sim / len(seq1), params

    def add_seq_to_prefix_tree(self, root_node, cluster):
        super().add_seq_to_prefix_tree(root_node, cluster)
        if root_node is self.root_node:
            self.paths[cluster.cluster_id] = _leaf_path(root_node, cluster, self.param_str)

    def create_template(self, seq1, seq2):
        out = list(seq2)
        for i, (t1, t2) in enumerate(zip(seq1, seq2)):
            if t1 == t2 or t2 == self.param_str:
                continue
            key = _KEY_PREFIX.match(t2)
            if key and t1.startswith(key.group()):
                out[i] = key.group() + self.param_str
            else:
                out[i] = self.param_str
        return out


@dataclass(frozen=True)
class Template:
    """What the miner says about one message."""

    template_id: str
    template: str
    masked: str


class TemplateMiner:
    """Online template miner; see the module docstring."""

    def __init__(self, state_dir: str | os.PathLike | None = None, *, sim_th: float = SIM_TH,
                 depth: int = DEPTH, max_children: int = MAX_CHILDREN,
                 join_variable_runs: bool = True, masker: Callable[[str], str] | None = None):
        self._lock = threading.RLock()
        self._mask = masker or mask  # another masker only to measure masks (ingest.grouping)
        self._path = Path(state_dir) / STATE_FILE if state_dir is not None else None
        self._join = join_variable_runs
        self._drain = _Drain(depth=depth, sim_th=sim_th, max_children=max_children,
                            parametrize_numeric_tokens=True, param_str=_WILDCARD)
        self._drain.paths = {}                # cluster id -> its leaf's keys from the root
        self._ids: dict[int, str] = {}        # cluster id -> template id, given at creation
        self._cluster_of: dict[str, int] = {}  # and back
        self._parent: dict[int, int] = {}     # joined cluster -> the older cluster it joined
        self._by_key: dict[tuple[str, ...], int] = {}
        # root cluster -> every cluster that answers with its id (itself included): what
        # group_members reads, so correlating one event does not walk every template of the log
        self._members: dict[int, list[int]] = {}
        self._revision = 0
        # what changed at which add (`_tick` counts them): what `changes_since` returns
        self._tick = 0
        self._changed: dict[int, int] = {}
        self._key_changed: dict[tuple, int] = {}
        if self._path is not None and self._path.exists():
            self._load()

    # -- public API --------------------------------------------------------------------------

    def add(self, message: str) -> Template:
        """Learn from one message and say its template (its id never changes afterwards)."""
        masked = self._mask(message)
        with self._lock:
            cluster, change = self._drain.add_log_message(masked)
            if change == "cluster_created":
                self._ids[cluster.cluster_id] = self._new_id(masked)
                self._cluster_of[self._ids[cluster.cluster_id]] = cluster.cluster_id
                self._members[cluster.cluster_id] = [cluster.cluster_id]
            root = self._find(cluster.cluster_id)
            self._tick += 1  # every add changes a cluster (its size at least)
            self._changed[cluster.cluster_id] = self._tick
            if change != "none":
                self._revision += 1
                root = self._index(cluster)
                self._save()
            owner = self._drain.id_to_cluster[root]
            return Template(self._ids[root], self._text(cluster, owner), masked)

    def template_id(self, message: str) -> str:
        """The stable id of the message's template (learning from the message)."""
        return self.add(message).template_id

    def template_of(self, message: str) -> str:
        """The message's template text, placeholders for variable parts (learning from it)."""
        return self.add(message).template

    def group_of(self, cluster_template_id: str) -> str:
        """The id a template id answers with now (ids of joined clusters lead to the oldest)."""
        with self._lock:
            cluster_id = self._cluster_of.get(cluster_template_id)
            return cluster_template_id if cluster_id is None else self._ids[self._find(cluster_id)]

    def templates(self) -> dict[str, str]:
        """Every live template id → its current template text."""
        with self._lock:
            out: dict[str, str] = {}
            for cluster_id, cluster in sorted(self._drain.id_to_cluster.items()):
                root = self._find(cluster_id)
                out.setdefault(self._ids[root], cluster.get_template())
            return out

    # -- clusters and joins ------------------------------------------------------------------

    def _new_id(self, masked: str) -> str:
        # From the text that created the cluster, so two miners fed the same first message
        # agree; a suffix keeps ids unique in the unlikely case of a repeat.
        base = "T" + hashlib.sha1(masked.encode("utf-8")).hexdigest()[:12]
        tid, n = base, 1
        while tid in self._cluster_of:
            n += 1
            tid = f"{base}-{n}"
        return tid

    def _find(self, cluster_id: int) -> int:
        while cluster_id in self._parent:
            cluster_id = self._parent[cluster_id]
        return cluster_id

    def _index(self, cluster: LogCluster) -> int:
        root = self._find(cluster.cluster_id)
        if not self._join:
            return root
        key = (len(cluster.log_template_tokens) if not _constant_key(cluster.log_template_tokens)
               else None, _constant_key(cluster.log_template_tokens))
        other = self._by_key.get(key)
        if other is None:
            self._by_key[key] = root
            self._key_changed[key] = self._tick
            return root
        other = self._find(other)
        if other != root:
            older, newer = sorted((other, root))
            self._parent[newer] = older
            self._changed[newer] = self._tick
            self._members.setdefault(older, [older]).extend(self._members.pop(newer, [newer]))
            root = older
        if self._by_key[key] != root:
            self._by_key[key] = root
            self._key_changed[key] = self._tick
        return root

    @staticmethod
    def _text(cluster: LogCluster, owner: LogCluster) -> str:
        return owner.get_template() if owner is not cluster else cluster.get_template()

    # -- persistence -------------------------------------------------------------------------

    @property
    def mark(self) -> int:
        """Where `changes_since` starts from to give what the miner learns from now on."""
        return self._tick

    @property
    def revision(self) -> int:
        """How many times the miner has changed since it was made or loaded (a cheap change check)."""
        return self._revision

    def state(self) -> dict:
        """Everything the miner knows, as plain JSON-able data (see `load_state`)."""
        with self._lock:
            return {
                "version": STATE_VERSION,
                "depth": self._drain.log_cluster_depth,
                "clusters_counter": self._drain.clusters_counter,
                "clusters": [[c.cluster_id, list(c.log_template_tokens), c.size, self._ids[c.cluster_id]]
                             for c in self._drain.id_to_cluster.values()],
                "parent": [[a, b] for a, b in self._parent.items()],
                "keys": [[key[0], list(key[1]), root] for key, root in self._by_key.items()],
                "tree": _dump_node(self._drain.root_node),
            }

    @classmethod
    def from_state(cls, state: dict | None, **options) -> "TemplateMiner":
        """A memory-only miner that goes on from `state` (None: a fresh one)."""
        miner = cls(None, **options)
        if state is not None:
            miner._load_state(state, where="template state")
        return miner

    def group_members(self, template_id: str) -> list[str]:
        """Every template id that answers with the same id as `template_id` now, oldest first."""
        with self._lock:
            cluster_id = self._cluster_of.get(template_id)
            if cluster_id is None:
                return []
            return [self._ids[cid] for cid in sorted(self._members[self._find(cluster_id)])]

    def changes_since(self, mark: int | None) -> dict:
        """What changed after `mark` (the "mark" of the changes taken before; None: everything),
        as plain JSON-able data: the clusters created or changed (template, size, id, leaf path
        in Drain's tree, the cluster it joined) and the join keys that moved. A store saves these
        rows (upserted by cluster id) instead of the whole state; `apply_changes` (or
        `from_state`) on another miner brings it to the same state."""
        with self._lock:
            def changed(at: int) -> bool:
                return mark is None or at > mark

            clusters = self._drain.id_to_cluster
            cids = sorted(cid for cid in clusters if changed(self._changed.get(cid, 0)))
            return {
                "version": STATE_VERSION, "kind": "changes", "since": mark, "mark": self._tick,
                "depth": self._drain.log_cluster_depth,
                "clusters_counter": self._drain.clusters_counter,
                "clusters": [[cid, list(clusters[cid].log_template_tokens), clusters[cid].size, self._ids[cid],
                              self._drain.paths[cid], self._parent.get(cid)] for cid in cids],
                "keys": [[key[0], list(key[1]), root] for key, root in self._by_key.items()
                         if changed(self._key_changed.get(key, 0))],
            }

    def apply_changes(self, changes: dict) -> None:
        """Bring this miner up to date with `changes` (from another miner's `changes_since`, applied
        in order). The miner's own revision does not move: it learned nothing itself."""
        if changes.get("version") != STATE_VERSION or changes.get("kind") != "changes":
            raise ValueError(f"not template changes: {changes.get('version')!r}/{changes.get('kind')!r}")
        with self._lock:
            drain = self._drain
            self._set_depth(changes.get("depth", LEGACY_DEPTH))
            for cid, tokens, size, tid, path, parent in changes["clusters"]:
                cluster = drain.id_to_cluster.get(cid)
                if cluster is None:
                    cluster = drain.id_to_cluster[cid] = LogCluster(tokens, cid)
                    _insert(drain.root_node, path, cid)
                    drain.paths[cid] = list(path)
                    self._ids[cid] = tid
                    self._cluster_of[tid] = cid
                else:
                    cluster.log_template_tokens = tuple(tokens)
                cluster.size = size
                if parent is not None:
                    self._parent[cid] = parent
            drain.clusters_counter = max(drain.clusters_counter, changes["clusters_counter"])
            for n, key, root in changes["keys"]:
                self._by_key[(n, tuple(key))] = root
            self._members = {}
            for cluster_id in sorted(self._ids):
                self._members.setdefault(self._find(cluster_id), []).append(cluster_id)

    def _set_depth(self, depth: int) -> None:
        """Take the depth a state was made with (the tree's shape depends on it)."""
        if depth == self._drain.log_cluster_depth:
            return
        if self._drain.id_to_cluster:
            raise ValueError(f"template changes made at depth {depth} for a miner at {self._drain.log_cluster_depth}")
        self._drain.log_cluster_depth, self._drain.max_node_depth = depth, depth - 2

    def _save(self) -> None:
        if self._path is None:
            return
        state = self.state()
        self._path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".templates-", dir=self._path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(state, out, separators=(",", ":"))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self._path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def _load(self) -> None:
        self._load_state(json.loads(self._path.read_text(encoding="utf-8")), where=str(self._path))

    def _load_state(self, state: dict, *, where: str) -> None:
        if state.get("kind") == "changes":
            self.apply_changes(state)
            return
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"{where}: unknown template state version {state.get('version')!r}")
        self._set_depth(state.get("depth", LEGACY_DEPTH))
        for cluster_id, tokens, size, tid in state["clusters"]:
            cluster = LogCluster(tokens, cluster_id)
            cluster.size = size
            self._drain.id_to_cluster[cluster_id] = cluster
            self._ids[cluster_id] = tid
            self._cluster_of[tid] = cluster_id
        self._drain.clusters_counter = state["clusters_counter"]
        self._parent = {a: b for a, b in state["parent"]}
        self._members = {}
        for cluster_id in sorted(self._ids):
            self._members.setdefault(self._find(cluster_id), []).append(cluster_id)
        self._by_key = {(n, tuple(key)): root for n, key, root in state["keys"]}
        self._drain.root_node = _load_node(state["tree"])
        self._drain.paths = _leaf_paths(self._drain.root_node)


def _dump_node(node: Node) -> dict:
    return {"ids": list(node.cluster_ids),
            "children": {token: _dump_node(child) for token, child in node.key_to_child_node.items()}}


def _load_node(data: dict) -> Node:
    node = Node()
    node.cluster_ids = list(data["ids"])
    node.key_to_child_node = {token: _load_node(child) for token, child in data["children"].items()}
    return node


def _leaf_path(root: Node, cluster: LogCluster, param_str: str) -> list[str]:
    """The keys from Drain's root to the leaf that holds a cluster just added to the tree."""
    tokens = cluster.log_template_tokens
    path = [str(len(tokens))]
    node = root.key_to_child_node[path[0]]
    for token in tokens:
        if cluster.cluster_id in node.cluster_ids:
            break
        key = token if token in node.key_to_child_node else param_str
        path.append(key)
        node = node.key_to_child_node[key]
    return path


def _leaf_paths(root: Node) -> dict[int, list[str]]:
    """Every cluster's leaf path in a loaded tree."""
    out: dict[int, list[str]] = {}
    stack: list[tuple[Node, list[str]]] = [(root, [])]
    while stack:
        node, path = stack.pop()
        for cid in node.cluster_ids:
            out[cid] = path
        stack.extend((child, [*path, key]) for key, child in node.key_to_child_node.items())
    return out


def _insert(root: Node, path: list[str], cluster_id: int) -> None:
    """Put a cluster at its leaf path, making the nodes on the way (as Drain made them)."""
    node = root
    for key in path:
        child = node.key_to_child_node.get(key)
        if child is None:
            child = node.key_to_child_node[key] = Node()
        node = child
    if path == ["0"]:
        node.cluster_ids = [cluster_id]  # Drain keeps one cluster for the empty message
    elif cluster_id not in node.cluster_ids:
        node.cluster_ids.append(cluster_id)
