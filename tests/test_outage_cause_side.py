"""The cause side of an outage, read in more of the ways programs say it (issue 35.1, session 50): a store
that takes no writes, a lock another holder keeps and a device failing its I/O name a cause; a line whose own
exception's class says nothing leads by what its stack's exception lines say; and a method called in a message
(`Servlet.service()`) is code, no resource that would tell one failure from another. The wordings are written
here in the manner of those programs (MySQL, Liquibase, the Linux kernel, Spring), not copied from a bed."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from pipeline.incidents.leading import CAUSE, NEUTRAL, rank
from pipeline.incidents.line_names import named_things
from pipeline.state import LogEvent
from tests.support import events_of, incidents_by_first_seen

T0 = datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)


def _event(n: int, seconds: float, service: str, host: str, message: str, **more) -> LogEvent:
    return LogEvent(event_id=f"ev-{n}", time=T0 + timedelta(seconds=seconds), service=service, host=host,
                    level=more.pop("level", "ERROR"), message=message, source=f"{service}.log",
                    position=f"{service}.log@{n}", **more)


@pytest.mark.parametrize("message", [
    "Write rejected: the database server is running with the --read-only option, statement not executed",
    "READONLY You can't write against a read only replica.",
    "EXT4-fs (sdb1): Remounting filesystem read-only",
    "Could not get the schema lock; currently locked by deploy-7 (10.2.0.9) since 08:14",
    "blk_update_request: I/O error, dev sdb, sector 4096 op 0x1:(WRITE)",
])
def test_a_store_refusing_writes_a_lock_held_elsewhere_and_a_failing_device_name_a_cause(message):
    assert rank(_event(1, 0, "svc", "h", message)) == CAUSE


def test_a_line_whose_exception_class_says_nothing_leads_by_its_stacks_caused_by():
    boot = _event(1, 0, "accounts", "accounts-1", "Application run failed",
                  exception="org.springframework.beans.factory.BeanCreationException",
                  stack="org.springframework.beans.factory.BeanCreationException: Error creating bean 'migrator'\n"
                        "\tat org.springframework.beans.factory.support.Factory.create(Factory.java:12)\n"
                        "Caused by: org.example.migrate.LockException: Could not get the lock. Currently locked by"
                        " accounts-2 (10.8.5.21)\n")
    assert rank(boot) == CAUSE
    # a stack whose exception lines say no cause leaves it neutral
    plain = boot.model_copy(update={"stack": "org.springframework.beans.factory.BeanCreationException: Error creating"
                                             " bean 'migrator'\n\tat org.example.Factory.create(Factory.java:12)\n"})
    assert rank(plain) == NEUTRAL


def test_a_method_called_in_a_message_is_no_resource():
    names = named_things(_event(1, 0, "orders", "orders-1", "Servlet.service() for servlet [dispatcherServlet] threw"
                                " exception; see orders.events for the rest"))
    assert "res:servlet.service" not in names
    assert "res:orders.events" in names  # a dotted resource not called stays one


def test_a_read_only_store_leads_the_errors_that_wrap_it_and_a_called_method_does_not_split_them(engine):
    # the driver's own line (the store refuses the write) is the cause; the framework's wrapper of it, written
    # 10 ms later, names an `Invalid…Exception` class and calls `Servlet.service()`: no second resource
    engine.incidents.store_batch([
        _event(1, 1.0, "stock", "stock-1", 'msg="apply delta" err="Error 1290: The database server is running with'
               ' the --read-only option so it cannot execute this statement"'),
        _event(2, 1.5, "web", "web-1", "General error: 1290 The database server is running with the --read-only"
               " option so it cannot execute this statement (SQL: update `carts` set `updated_at` = now())"),
        _event(3, 2.0, "orders", "orders-1", "The database server is running with the --read-only option so it cannot"
               " execute this statement"),
        _event(4, 2.01, "orders", "orders-1", "Servlet.service() for servlet [dispatcherServlet] threw exception"
               " [Request processing failed: org.example.dao.InvalidDataAccessResourceUsageException: could not"
               " execute statement [The database server is running with the --read-only option so it cannot execute"
               " this statement]]"),
    ], cursor=None)
    (outage,) = incidents_by_first_seen(engine)
    assert events_of(engine, outage["incident_id"]) == {"ev-1", "ev-2", "ev-3", "ev-4"}
    assert outage["leader"]["event_id"] == "ev-1"
