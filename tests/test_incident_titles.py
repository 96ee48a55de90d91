"""An incident's title keeps, in a bounded length, what tells it from another (pipeline/incidents/titles.py):
the failure before the context wrapping it, no field without a value, no colon over nothing, no
placeholder. Walkthrough s51 on Loghub: `… rhost=21…` cut, Zookeeper's `Unexpected Exception:`, Hadoop's
exception after its task id. Hand-made lines, none of Loghub's."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pipeline.incidents.correlation import title
from pipeline.state import LogEvent
from workbench.inbox_view import told_apart


def event(message: str, *, service: str = "gateway", exception: str | None = None, stack: str | None = None):
    return LogEvent(event_id="e1", time=datetime(2026, 5, 1, tzinfo=timezone.utc), message=message, service=service,
                    exception=exception, stack=stack)


@pytest.mark.parametrize("message, service, exception, stack, expected", [
    # a key with no value says nothing: what differs comes sooner
    ("login refused; account= tries=3 tty=console proxy= origin=10.9.8.7", "authd", None, None,
     "login refused; tries=3 tty=console origin=10.9.8.7"),
    ("login refused; tries=3 origin=", "authd", None, None, "login refused; tries=3"),
    # a colon over nothing: what followed it, else which part of the program wrote it
    ("Worker crashed: ", "QueueConsumer", None, None, "Worker crashed in QueueConsumer"),
    ("Worker crashed:", "unknown", None, None, "Worker crashed"),
    ("Worker crashed:\nIllegalStateException: pool closed", "QueueConsumer", None, None,
     "IllegalStateException: pool closed · Worker crashed"),
    ("Worker crashed:", "QueueConsumer", None, "org.acme.PoolClosedError: pool closed\n\tat org.acme.Pool.get",
     "PoolClosedError: pool closed · Worker crashed"),
    # the exception's own message first, the context after, the chain's repeat not said twice
    ("Job job_77_0003 - failed : org.acme.io.ChannelClosedException: peer went away from node-4 : "
     "org.acme.io.ChannelClosedException: closed", "Scheduler", "org.acme.io.ChannelClosedException", None,
     "ChannelClosedException: peer went away from node-4 · Job job_77_0003 - failed"),
    # an exception named inside a bracket its context opened (`[root cause: X: msg]`): its message ends at the
    # bracket's close, and the context is said without the bracket's lead-in (walkthrough s55: the demo's
    # `... Read timed out] · POST ...`, a stray `]` in three of its inbox titles)
    ("GET /v2/cart failed: upstream read failed [cause: SocketReadException: connection reset by peer]", "cart-api",
     "org.acme.web.GatewayException", None,
     "GatewayException: SocketReadException: connection reset by peer · GET /v2/cart failed: upstream read failed"),
    ("sync aborted (reason: LockTimeoutError: lock held by job 7) after 3 tries", "sync", None, None,
     "LockTimeoutError: lock held by job 7 · sync aborted after 3 tries"),
    # where the line was written (a source file's path and line, `pkg/…/watch.go:88:`) says nothing of what
    # failed: left out, so the first words are the failure's (walkthrough s55: the demo's coredns title read
    # `plugin/kubernetes: pkg/mod/k8s.io/client-go@v` in the inbox's 45 characters); an address stays
    ("[ERROR] plugin/dns: vendor/acme.dev/watch@v1.2.0/cache/watch.go:88: Failed to sync *v2.Zone: dial tcp "
     "db.example.com:5432: i/o timeout", "dns", None, None,
     "plugin/dns: Failed to sync *v2.Zone: dial tcp db.example.com:5432: i/o timeout"),
    # a line that wraps its exception's own message in the request it failed (`POST /v2/… failed: <message>`):
    # the message its stack gives the exception is the failure, said first, the request after it (walkthrough
    # s55: the demo's `AttributeError: POST /v1/orders/88410472/rese…` in the inbox's 45 characters, where
    # USAGE promises `AttributeError: 'NoneType' object has no attribute 'quantity'`)
    ("POST /v2/basket/77/items failed: 'NoneType' object has no attribute 'sku'", "basket", "AttributeError",
     "Traceback (most recent call last):\n  File \"/app/basket.py\", line 3, in add\n    item.sku\n"
     "AttributeError: 'NoneType' object has no attribute 'sku'",
     "AttributeError: 'NoneType' object has no attribute 'sku' · POST /v2/basket/77/items failed"),
    ('GET /api/v3/cart failed: Cannot invoke "Cart.total()" because "cart" is null', "cart", "java.lang.NullPointerException",
     'java.lang.NullPointerException: Cannot invoke "Cart.total()" because "cart" is null\n\tat com.acme.Cart.get(Cart.java:9)',
     'NullPointerException: Cannot invoke "Cart.total()" because "cart" is null · GET /api/v3/cart failed'),
    # the line saying the exception's name before the message is as it was; after a context, the name goes
    ("AttributeError: 'NoneType' object has no attribute 'sku'", "basket", "AttributeError",
     "Traceback (most recent call last):\nAttributeError: 'NoneType' object has no attribute 'sku'",
     "AttributeError: 'NoneType' object has no attribute 'sku'"),
    ("add item failed: KeyError: 'sku' missing", "basket", "KeyError", "Traceback:\nKeyError: 'sku' missing",
     "KeyError: 'sku' missing · add item failed"),
    # a stack whose exception says something else than the line leaves the line as it is
    ("GET /api/v3/cart failed: upstream said no", "cart", "org.acme.CartException",
     "org.acme.CartException: quota exceeded\n\tat org.acme.Cart.get(Cart.java:9)",
     "CartException: GET /api/v3/cart failed: upstream said no"),
    # a line that starts with its exception is as it was
    ("TimeoutError: read timed out after 30s", "billing", "TimeoutError", None, "TimeoutError: read timed out after 30s"),
    # no placeholder of the template miner reaches a title
    ("retry <NUM> of <NUM> failed at <TS> for <HEX>", "billing", None, None, "retry … of … failed at … for …"),
])
def test_a_title_says_the_failure_and_what_tells_it_apart(message, service, exception, stack, expected):
    assert title(event(message, service=service, exception=exception, stack=stack)) == expected


def test_a_long_title_is_cut_at_a_word_not_inside_an_address():
    said = title(event("upstream call failed " + "while reading the reply of a slow peer " * 3 +
                       "from host-aaaaaaaa.bbbbbbbb.example.internal:8443"))
    assert len(said) <= 120 and said.endswith("…") and not said.endswith("host-…"), said
    assert said.rsplit(" ", 1)[-1] in ("peer…", "slow…", "of…", "the…", "reply…", "a…", "from…"), said


def test_titles_alike_in_view_are_each_told_from_the_one_most_like_it():
    """Three titles alike until their last words and a fourth that differs earlier: the fourth cut the
    others' common start short (`… tty=NODEVssh ruser= rho` in view); each is told from its nearest."""
    head = "session refused; mode=batch shell=none queue=main tty=remote lane=7 "
    titles = [head + "peer=10.1.1.1 user=ops", head + "peer=10.2.2.2 user=dev", head + "peer=10.3.3.3",
              "session refused; mode=batch shell=none queue=main tty=local lane=7 peer=local"]
    said = told_apart(titles)
    assert said[:3] == ["session refused; … peer=10.1.1.1 user=ops", "session refused; … peer=10.2.2.2 user=dev",
                        "session refused; … peer=10.3.3.3"], said
    assert said[3] == "session refused; … tty=local lane=7 peer=local"
