"""The template miner: which log lines are the same kind of event, mined online with Drain.

A message is first masked (masks.py). The masked text goes through Drain (drain3's prefix-tree
clusterer, behind drain.py), which also generalises the variable words no mask catches (user
names, file names...) into ``<*>``. A last pass joins clusters whose templates have the same
constant words and differ only in how many masked or generalised tokens they hold ("0 bytes
sent" and "1190 bytes (1.16 KB) sent").

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

import hashlib
import json
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from pipeline.incidents.fingerprints.drain import KeyedDrain, LogCluster
from pipeline.incidents.fingerprints.masks import WILDCARD, mask

STATE_FILE = "templates.json"
STATE_VERSION = 1
# (how many tokens, when the template has no constant word; its constant words): what joins clusters
JoinKey = tuple["int | None", tuple[str, ...]]

# Drain's knobs, one setting for all logs (see bench/grouping.py for how they were chosen).
SIM_TH = 0.8
# Depth 5 (Drain's tree splits on the first three tokens): chosen leave-one-system-out, each Loghub
# system's score from the depth the other seven pick (`python -m pipeline grouping --loo`). A state
# saved without a depth was made at 4 and keeps it, so its ids stay what they were.
DEPTH = 5
LEGACY_DEPTH = 4
MAX_CHILDREN = 100

_PLACEHOLDER = re.compile(r"<[A-Z]+>|<\*>")
# A token that is only placeholders and punctuation carries no constant word.
_VARIABLE_TOKEN = re.compile(r"^(?:<[A-Z]+>|<\*>|[^\w<>])*(?:<[A-Z]+>|<\*>)(?:<[A-Z]+>|<\*>|[^\w<>])*$"
                             r"|^[(\[{'\"]+[)\]}'\"]+[,;:.]?$")


# A key whose value is a placeholder ("user=<*>"): the key stays a constant word.
_KEY = re.compile(r"^[^\s=:<>]*[A-Za-z][^\s=:<>]*[=:]")


def _legacy_constant_key(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The join key as states saved before session 42 wrote it (a word holding a placeholder was
    a constant word): still looked up, so a template learnt now joins what it joined then."""
    return tuple(_PLACEHOLDER.sub(WILDCARD, t) for t in tokens if not _VARIABLE_TOKEN.match(t))


def _constant_key(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The template's constant words, in order: what joins clusters in the last pass.

    A word that holds a placeholder is a value, whatever letters it has around it (rdd_<NUM> and
    broadcast_<NUM>_piece<NUM> fill the same slot: Drain's tree splits on them when they come
    early, so only this pass joins them); a key keeps its name (user=<*>)."""
    out = []
    for token in tokens:
        if _VARIABLE_TOKEN.match(token):
            continue
        if _PLACEHOLDER.search(token):
            key = _KEY.match(token)
            if key is None:
                continue
            token = key.group() + WILDCARD
        out.append(token)
    return tuple(out)


@dataclass(frozen=True)
class Template:
    """What the miner says about one message."""

    template_id: str
    template: str
    masked: str


class TemplateMiner:
    """Online template miner; see the module docstring."""

    def __init__(self, state_dir: str | os.PathLike[str] | None = None, *, sim_th: float = SIM_TH,
                 depth: int = DEPTH, max_children: int = MAX_CHILDREN,
                 join_variable_runs: bool = True, masker: Callable[[str], str] | None = None):
        self._lock = threading.RLock()
        self._mask = masker or mask  # another masker only to measure masks (incidents.grouping)
        self._path = Path(state_dir) / STATE_FILE if state_dir is not None else None
        self._join = join_variable_runs
        self._drain = KeyedDrain(depth=depth, sim_th=sim_th, max_children=max_children,
                                 parametrize_numeric_tokens=True, param_str=WILDCARD)
        self._ids: dict[int, str] = {}        # cluster id -> template id, given at creation
        self._cluster_of: dict[str, int] = {}  # and back
        self._parent: dict[int, int] = {}     # joined cluster -> the older cluster it joined
        self._by_key: dict[JoinKey, int] = {}
        # root cluster -> every cluster that answers with its id (itself included): what
        # group_members reads, so correlating one event does not walk every template of the log
        self._members: dict[int, list[int]] = {}
        self._revision = 0
        # what changed at which add (`_tick` counts them): what `changes_since` returns
        self._tick = 0
        self._changed: dict[int, int] = {}
        self._key_changed: dict[JoinKey, int] = {}
        if self._path is not None and self._path.exists():
            self._load(self._path)

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
            legacy = _legacy_constant_key(cluster.log_template_tokens)
            if legacy != key[1]:
                other = self._by_key.get((None if legacy else key[0], legacy))
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
        if self._by_key.get(key) != root:
            self._by_key[key] = root
            self._key_changed[key] = self._tick
        return root

    @staticmethod
    def _text(cluster: LogCluster, owner: LogCluster) -> str:
        return str(owner.get_template() if owner is not cluster else cluster.get_template())

    # -- persistence -------------------------------------------------------------------------

    @property
    def mark(self) -> int:
        """Where `changes_since` starts from to give what the miner learns from now on."""
        return self._tick

    @property
    def revision(self) -> int:
        """How many times the miner has changed since it was made or loaded (a cheap change check)."""
        return self._revision

    def state(self) -> dict[str, Any]:
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
                "tree": self._drain.dump_tree(),
            }

    @classmethod
    def from_state(cls, state: dict[str, Any] | None, **options: Any) -> "TemplateMiner":
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

    def changes_since(self, mark: int | None) -> dict[str, Any]:
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

    def apply_changes(self, changes: dict[str, Any]) -> None:
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
                    cluster = drain.put(cid, tokens, path)
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
        self._drain.set_depth(depth)

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

    def _load(self, path: Path) -> None:
        self._load_state(json.loads(path.read_text(encoding="utf-8")), where=str(path))

    def _load_state(self, state: dict[str, Any], *, where: str) -> None:
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
        self._drain.load_tree(state["tree"])
