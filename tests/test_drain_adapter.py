"""The miner's ids rest on drain3 internals (pipeline/incidents/fingerprints/drain.py overrides
three methods of its `Drain` and reads its tree): a drain3 release that renames, re-signs or stops
calling any of them must fail here, not quietly change which lines share an incident."""
from __future__ import annotations

import inspect

from drain3.drain import Drain, LogCluster, Node

from pipeline.incidents.fingerprints import drain as adapter
from pipeline.incidents.fingerprints.drain import KeyedDrain
from pipeline.incidents.fingerprints.masks import WILDCARD


def _keyed() -> KeyedDrain:
    return KeyedDrain(depth=5, sim_th=0.8, max_children=100, parametrize_numeric_tokens=True, param_str=WILDCARD)


def test_the_methods_we_override_keep_their_parameters_in_drain3():
    for name, parameters in adapter.OVERRIDDEN.items():
        assert tuple(inspect.signature(getattr(Drain, name)).parameters) == parameters, name
        assert tuple(inspect.signature(getattr(KeyedDrain, name)).parameters) == parameters, name


def test_the_attributes_we_read_are_still_drain3s():
    fresh = Drain(depth=5, sim_th=0.8, max_children=100, param_str=WILDCARD)
    assert [a for a in adapter.DRAIN_ATTRIBUTES if not hasattr(fresh, a)] == []
    cluster = LogCluster(["a", "b"], 7)
    assert [a for a in adapter.CLUSTER_ATTRIBUTES if not hasattr(cluster, a)] == []
    assert cluster.get_template() == "a b" and cluster.log_template_tokens == ("a", "b")
    assert [a for a in adapter.NODE_ATTRIBUTES if not hasattr(Node(), a)] == []


def test_drain3_still_calls_our_overrides_and_says_what_changed():
    drain = _keyed()
    first, change = drain.add_log_message("login from the console by user=alice")
    assert change == "cluster_created"
    assert drain.add_log_message("login from the console by user=alice")[1] == "none"
    same, change = drain.add_log_message("login from the console by user=bob")
    assert same is first and change == "cluster_template_changed"
    assert first.get_template() == "login from the console by user=<*>"  # create_template keeps the key
    # get_seq_distance: two upper-case names are two events, however alike the rest (6 of 7 words)
    get, _ = drain.add_log_message("served from the cache for method GET")
    put, _ = drain.add_log_message("served from the cache for method PUT")
    assert get is not put
    # add_seq_to_prefix_tree records each cluster's leaf path, and a reloaded tree gives the same
    assert set(drain.paths) == set(drain.id_to_cluster)
    reloaded = _keyed()
    reloaded.load_tree(drain.dump_tree())
    assert reloaded.paths == drain.paths
