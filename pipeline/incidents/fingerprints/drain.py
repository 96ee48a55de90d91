"""The one module that knows drain3's internals (named in docs/ARCHITECTURE.md).

drain3's `Drain` (the prefix-tree clusterer) is subclassed, not only called: three of its methods
are overridden (`OVERRIDDEN`, with the parameters we take), its tree is saved and rebuilt node by
node, and the miner reads the attributes in `DRAIN_ATTRIBUTES`, `CLUSTER_ATTRIBUTES` and
`NODE_ATTRIBUTES`. None of that is drain3's public API: tests/test_drain_adapter.py fails when a
drain3 release changes any of it, before the miner's ids quietly change.
"""
from __future__ import annotations

import functools
import re
from typing import Any, Sequence

from drain3.drain import Drain, LogCluster, Node

__all__ = ["KeyedDrain", "LogCluster", "Node"]

# method -> its parameters as drain3 declares them (what our overrides take and its callers pass)
OVERRIDDEN = {
    "get_seq_distance": ("self", "seq1", "seq2", "include_params"),
    "add_seq_to_prefix_tree": ("self", "root_node", "cluster"),
    "create_template": ("self", "seq1", "seq2"),
    "has_numbers": ("s",),
}
DRAIN_ATTRIBUTES = ("id_to_cluster", "clusters_counter", "root_node", "log_cluster_depth", "max_node_depth",
                    "param_str")
CLUSTER_ATTRIBUTES = ("cluster_id", "log_template_tokens", "size")
NODE_ATTRIBUTES = ("key_to_child_node", "cluster_ids")

# "user=<*>": a key that stays when its value is generalised.
_KEY_PREFIX = re.compile(r"^[^\s=:<>]*[A-Za-z][^\s=:<>]*[=:]")
# Upper-case words are names of states, protocols, verbs (ERROR, HTTPS, SOCKS5, GET, a quoted
# request's "GET): two messages that differ in one are different events, however alike the rest.
# So are camel-case words, names of components, clients, classes (WindowsUpdateAgent, SPP: a
# masked id beside them matches any other id, so only the name tells the two events apart), and
# HTTP status codes, the only bare three-digit numbers the masks leave (200, 404).
_ENUM_WORD = re.compile(r"^[\"'(\[]?[A-Z][A-Z0-9_]{2,}[,;:.)\]]?$|^[1-5][0-9][0-9][,;:.]?$"
                        r"|^[\"'(\[]?(?=[A-Za-z]*[a-z][A-Z])[A-Za-z]+[,;:.)\]]?$")
# A number inside a word the masks leave (IRQ11, [CPU0], alignment.....0, slot J13): two tokens that
# differ only in their digit runs are one word with a variable number, by shape, wherever seen.
# A bare number the masks leave is a word on purpose (an HTTP status code): it needs a letter.
_DIGITS = re.compile(r"\d+")
_WORD_AND_DIGIT = re.compile(r"(?=.*[A-Za-z]).*\d")
# A path of one segment the masks leave (/index.html, /login; two or more segments are <PATH>):
# two of them in one place are one variable, by shape, as a number inside a word is.
_PATH_WORD = re.compile(r"/[\w.@%+=-]*\w[\w.@%+=-]*")


def same_shape(t1: str, t2: str) -> bool:
    """Two different tokens that are the same word but for their numbers (IRQ11, IRQ9)."""
    shape = _shape(t1)
    return shape is not None and shape == _shape(t2)


@functools.lru_cache(maxsize=8192)
def _shape(token: str) -> str | None:
    """The token with each digit run as 0, "/" for a one-segment path, or None when it holds no
    digit or no letter (tokens repeat, so the answer is cached: the similarity is Drain's inner loop)."""
    if token[:1] == "/" and _PATH_WORD.fullmatch(token):
        return "/"
    return _DIGITS.sub("0", token) if _WORD_AND_DIGIT.match(token) else None


def _shape_prefix(t1: str, t2: str) -> str:
    """What two same-shape tokens share before their first differing digit run (IRQ11, IRQ9 -> IRQ);
    "/" for two paths (/login, /logout -> /: the whole segment is the variable)."""
    if t1[:1] == "/" and _shape(t1) == "/":
        return "/"
    i = 0
    while i < len(t1) and i < len(t2) and t1[i] == t2[i]:
        i += 1
    while i and t1[i - 1].isdigit():
        i -= 1
    return t1[:i]


class KeyedDrain(Drain):  # type: ignore[misc]  # drain3 ships no type information
    """Drain that keeps a token's key when it generalises the value (user=a, user=b -> user=<*>),
    never joins two names (ERROR, GET, WindowsUpdateAgent), and records each cluster's leaf path (`paths`)."""

    def __init__(self, **options: Any):
        super().__init__(**options)
        self.paths: dict[int, list[str]] = {}  # cluster id -> its leaf's keys from the root

    def set_depth(self, depth: int) -> None:
        """The depth an empty tree splits at (a saved state keeps the depth it was made with)."""
        self.log_cluster_depth, self.max_node_depth = depth, depth - 2

    def put(self, cluster_id: int, tokens: list[str], path: list[str]) -> LogCluster:
        """A cluster saved by another miner, at the leaf path it had there."""
        cluster = self.id_to_cluster[cluster_id] = LogCluster(tokens, cluster_id)
        _insert(self.root_node, path, cluster_id)
        self.paths[cluster_id] = list(path)
        return cluster

    def dump_tree(self) -> dict[str, Any]:
        """The prefix tree as plain JSON-able data (`load_tree` reads it)."""
        return _dump_node(self.root_node)

    def load_tree(self, data: dict[str, Any]) -> None:
        self.root_node = _load_node(data)
        self.paths = _leaf_paths(self.root_node)

    def get_seq_distance(self, seq1: Sequence[str], seq2: Sequence[str], include_params: bool) -> tuple[float, int]:
        if not seq1:
            return 1.0, 0
        sim = params = 0
        for t1, t2 in zip(seq1, seq2):
            if t1 == self.param_str:
                params += 1
            elif t1 == t2:
                sim += 1
            elif t1.endswith(self.param_str) and t2.startswith(t1[:-len(self.param_str)]):
                # a kept key (user=<*>) is a parameter; a word whose number varies (IRQ<*>) is
                # the same word when the token goes on with a number (IRQ5)
                if _word_with_number(t1, t2, self.param_str):
                    sim += 1
                else:
                    params += 1
            elif (t1[0] == t2[0] or t1[0].isdigit()) and same_shape(t1, t2):  # (a cheap first sieve)
                sim += 1
            elif _ENUM_WORD.match(t1) and _ENUM_WORD.match(t2):
                return 0.0, 0
        if include_params:
            sim += params
        return sim / len(seq1), params

    @staticmethod
    def has_numbers(s: str) -> bool:
        """Whether a token takes the tree's <*> branch (drain3: when it holds a digit). A one-segment
        path is a variable by its shape too: an early one (GET /login, GET /about) must not split
        the tree into a branch per value, where no similarity ever compares them."""
        return any(char.isdigit() for char in s) or (s[:1] == "/" and _shape(s) == "/")

    def add_seq_to_prefix_tree(self, root_node: Node, cluster: LogCluster) -> None:
        super().add_seq_to_prefix_tree(root_node, cluster)
        if root_node is self.root_node:
            self.paths[cluster.cluster_id] = _leaf_path(root_node, cluster, self.param_str)

    def create_template(self, seq1: Sequence[str], seq2: Sequence[str]) -> list[str]:
        out = list(seq2)
        for i, (t1, t2) in enumerate(zip(seq1, seq2)):
            if t1 == t2 or t2 == self.param_str or _word_with_number(t2, t1, self.param_str):
                continue
            key = _KEY_PREFIX.match(t2)
            if key and t1.startswith(key.group()):
                out[i] = key.group() + self.param_str
            elif same_shape(t1, t2) and (prefix := _shape_prefix(t1, t2)):
                out[i] = prefix + self.param_str
            else:
                out[i] = self.param_str
        return out


def _word_with_number(template: str, token: str, param_str: str) -> bool:
    """A template's word with a variable number (IRQ<*>, from IRQ11 and IRQ9) and a token that is
    that word with a number (IRQ5). A kept key (user=<*>) is not such a word: its value is a parameter."""
    if not template.endswith(param_str) or len(template) == len(param_str):
        return False
    prefix = len(template) - len(param_str)
    if prefix == 1 and template[0] == "/":  # a one-segment path's variable (/<*>)
        return _shape(token) == "/"
    return (len(token) > prefix and token[prefix].isdigit() and token.startswith(template[:prefix])
            and not _KEY_PREFIX.match(template))


def _dump_node(node: Node) -> dict[str, Any]:
    return {"ids": list(node.cluster_ids),
            "children": {token: _dump_node(child) for token, child in node.key_to_child_node.items()}}


def _load_node(data: dict[str, Any]) -> Node:
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
