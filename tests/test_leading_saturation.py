"""A line that states a measured quantity at or past the bound it names states the cause's state (CONTRACT §2's
leader, session 55): whatever the resource is called, a size, a duration or a count of a use written beside its bound
(`A of B`, `A/B`, `used:A allowed:B`, `A > B`, `A beyond the limit`, `97% used`, what is left near none) ranks as a
cause when a leader is chosen, and a WARN or a line below it saying so may lead the errors it precedes. The grouping
rules' `rank` does not read it. The near misses: a quantity below its bound, a count of tries or of items done, a
version, a date, a progress at 100%, a number and the same value written as a size. Wordings written here in the
manner of YARN, Linux's df, the JVM, Puma, RabbitMQ and Artemis, not copied from a bed."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.incidents.leading import CAUSE, leader_rank, rank, states_cause, states_failure
from pipeline.incidents.saturation import saturated
from pipeline.state import LogEvent
from tests.support import incidents_by_first_seen

T0 = datetime(2026, 12, 7, 11, 0, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str, **more) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=more.pop("level", "ERROR"), message=message, source=f"{service}.log",
                    position=f"{service}.log@{n}", **more)


@pytest.mark.parametrize("text", [
    "container c_31 current usage: 6.2 GB of 6 GB physical memory used",  # a pair of sizes, past
    "heap 3.9GiB/4GiB used after full collection",  # a pair of sizes at 97%, a unit each
    "pool busy: 48/50 connections",  # a pair of counts a use is said of, at 96%
    "vm_memory_high_watermark set. Memory used:2147483648 allowed:2147483648",  # a labelled use and its bound
    "request units consumed 100% for partition 3",  # a percentage of a use
    "df /srv: 12% used, inodes 100% used",  # the clause that says it (the other one is below)
    "Usage rate is 98.8% which is beyond the configured <max-disk-usage>",
    "Free space is at 1.1GB of 200GB total",  # what is left, near none
    "inodes free below 1%",
    "process 4412 is running 812345678B beyond the 'VIRTUAL' memory limit",  # a measure said past a bound
    "stop-the-world pause 9211ms > 500ms",  # a duration past a stated one
    "usage 4079121408 exceeds limit of 4080218931",
    "backlog 1024 (max 1024)",  # a measure beside its limit (as before)
    "used_memory:1073741824 maxmemory:1073741824",  # a field named for a use, one for its bound
])
def test_a_quantity_at_or_past_its_bound_is_stated(text):
    assert saturated(text)


@pytest.mark.parametrize("text", [
    "container c_32 current usage: 2.2 GB of 6 GB physical memory used",  # below its bound
    "heap 1.1GiB/4GiB used after young collection",
    "memory at 71% of limit after report 8801",
    "used_memory:1073741 maxmemory:1073741824",
    "pool busy: 4 of 50 connections",
    "Free space is at 150GB of 200GB total",  # plenty left
    "backfill: 0 of 120 partitions remaining",  # a count left is work to do, not a resource
    "0/3 nodes are available: 3 node(s) had untolerated taint",  # (an unavailability: a symptom's words)
    "<12>1 2026-03-09T09:05:07.000Z web-01 orders 4242 - - pool 7 of 10 in use",  # a syslog PRI is no comparison
    "retry 3 of 5 failed: connection reset",  # a count of tries is no resource
    "3 of 5 retries used",
    "attempt 3/3 (max 3)",
    "upgraded libfoo 1.2/1.3 (used by 4 modules)",  # a version
    "nightly report for 12/12 done",  # a date
    "downloaded 100%",  # a progress
    "rollout 100% for flag new-checkout",
    "downloaded 100MB of 100MB",
    "model 1 of 42 built",  # items done
    "segment 3/16 started, 2.1M items",
    "compacted to 1.187GiB (~98% of original)",
    "data would be larger than limit of [4080218931/3.7gb]",  # one value, written as a number and a size
    "Trying again in 2.00 seconds... (1/100)",
    "took 150ms (threshold 200ms)",
    "old gen 7812201472 -> 7701918720",  # an arrow is no comparison
    "checkpoint complete: wrote 1822 buffers (11.1%)",
])
def test_near_miss_no_quantity_at_its_bound(text):
    assert not saturated(text)


def test_a_saturation_ranks_a_leader_as_a_cause_but_not_the_grouping_rules():
    warned = _event(1, 0, "nodemanager", "wn-17", "Container container_e12_0031 is running 812345678B beyond the"
                    " 'PHYSICAL' memory limit. Current usage: 6.8 GB of 6 GB physical memory used.", level="WARN")
    assert leader_rank(warned) == CAUSE and states_cause(warned)
    assert rank(warned) != CAUSE  # (what groups errors reads the words as before)
    below = _event(2, 0, "rabbitmq", "mq-0", "vm_memory_high_watermark set. Memory used:2147483648 allowed:2147483648",
                   level="INFO")
    assert states_failure(below)
    # a queue or a buffer full behind a slow consumer is backpressure, not the cause
    assert not states_cause(_event(3, 0, "collector", "c-1", "buffer 92% full (46112/50000), applying backpressure",
                                   level="WARN"))
    # a latency over its threshold said as slowness stays a symptom
    assert leader_rank(_event(4, 0, "web", "web-1", "slow response from api: 1200ms > 1000ms")) != CAUSE


@pytest.mark.parametrize("used, leads", [("3.9GiB/4GiB", True), ("1.1GiB/4GiB", False)])
def test_a_warning_stating_its_components_saturation_leads_its_later_errors(engine, used, leads):
    engine.incidents.store_batch([
        _event(1, 0.0, "indexer", "indexer-0", f"heap {used} used after old-gen collection", level="WARN"),
        _event(2, 4.0, "indexer", "indexer-0", "bulk request 8812 failed: java.lang.OutOfMemoryError: Java heap space"),
        _event(3, 6.0, "indexer", "indexer-0", "bulk request 8813 failed: java.lang.OutOfMemoryError: Java heap space"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    # the earliest line stating a cause leads: the warning when it states one, else the heap's error
    assert outage["leader"]["event_id"] == ("ev-1" if leads else "ev-2")


@pytest.mark.parametrize("host, leads", [("wn-3", True), ("wn-4", False)])
def test_a_warning_stating_the_cause_on_a_machine_the_errors_name_leads_them(engine, host, leads):
    # a node's agent warns of a container past its memory limit; the driver, on another machine, then loses the
    # executor it ran, naming the node by its full name: the node's warning leads. Written on a node the errors do not
    # name, it does not.
    engine.incidents.store_batch([
        _event(1, 0.0, "nodemanager", host, "Container container_e4_0007 is running 412345678B beyond the 'PHYSICAL'"
               " memory limit. Current usage: 8.4 GB of 8 GB physical memory used. Killing container.", level="WARN"),
        _event(2, 1.0, "driver", "driver-0", "Lost executor 7 on wn-3.cluster.lan: Container killed by YARN for"
               " exceeding physical memory limits"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert outage["leader"]["event_id"] == ("ev-1" if leads else "ev-2")


@pytest.mark.parametrize("names, named", [
    ({"res:wn-3.cluster.lan"}, True), ({"hp:wn-3:8042"}, True), ({"host:wn-3.cluster.lan"}, True),
    ({"res:wn-30.cluster.lan"}, False), ({"res:wn-3"}, False), ({"svc:wn-3"}, False), ({"hp:10.0.0.3:8042"}, False),
])
def test_which_names_name_a_lines_machine(names, named):
    from pipeline.incidents.writers import host_named
    assert host_named(_event(1, 0, "nodemanager", "wn-3", "x", level="WARN"), names) is named
