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


def test_a_servers_error_ending_in_an_errno_is_relayed_by_the_operation_that_met_it(engine):
    # the server's line ends with the platform's errno text (said alike by every program, no wording of its own);
    # the operation before it is the server's own words, which its client's exception field says again
    server = 'could not extend temporary segment "/pgsql_tmp.4711" by 8192 bytes: No space left on device'
    engine.incidents.store_batch([
        _event(1, 1.0, "pg-reports", "pg-reports-0", server),
        _event(2, 1.2, "reports-api", "reports-api-1", "query failed",
               exception=f"psycopg.errors.DiskFull: {server}"),
        # another program meeting the same errno on another host, in its own operation's words, is another failure
        _event(3, 1.4, "backup", "backup-0", "write of /srv/backup/2026-12-02.tar failed: No space left on device"),
    ], cursor=None)
    by_event = {e: i["incident_id"] for i in incidents_by_first_seen(engine) for e in events_of(engine, i["incident_id"])}
    assert by_event["ev-2"] == by_event["ev-1"]
    assert by_event["ev-3"] != by_event["ev-1"]


def test_clients_quoting_a_servers_short_message_are_one_incident_and_a_quoted_word_pair_is_not(engine):
    # the database is not in the log: its clients say its message, one quoting it, one after its code, one in a
    # tuple; three words that name a cause, fewer than a clause needs
    engine.incidents.store_batch([
        _event(1, 1.0, "inventory", "inventory-1", "HikariPool-1 - Exception during pool initialization.",
               stack='java.sql.SQLNonTransientConnectionException: Data source rejected establishment of connection,'
                     '  message from server: "Too many connections"\n\tat com.example.Db.open(Db.java:12)\n'),
        _event(2, 1.5, "storefront", "storefront-0", "SQLSTATE[HY000] [1040] Too many connections (Connection: mysql,"
               " SQL: select * from products limit 1)"),
        _event(3, 2.0, "pricing", "pricing-0", "giving up after 3 attempts: (1040, 'Too many connections')"),
        # a quoted pair of words naming a cause is no server's message: `"Connection refused"` of another client
        _event(4, 2.5, "mailer", "mailer-0", 'send failed: "Connection refused"'),
        _event(5, 3.0, "billing", "billing-0", 'charge failed: upstream said "Connection refused" again'),
    ], cursor=None)
    by_event = {e: i["incident_id"] for i in incidents_by_first_seen(engine) for e in events_of(engine, i["incident_id"])}
    assert by_event["ev-1"] == by_event["ev-2"] == by_event["ev-3"]
    assert len({by_event["ev-1"], by_event["ev-4"], by_event["ev-5"]}) == 3


def test_one_writers_errors_naming_its_own_numbered_pool_are_one_incident_and_its_own_host_ties_nothing(engine):
    engine.incidents.store_batch([
        _event(1, 1.0, "inventory", "inventory-7c9d5f6b8-q2xlm", "HikariPool-1 - Exception during pool initialization."),
        # eleven seconds later (no burst), no word in common but the pool its requests wait on
        _event(2, 12.0, "inventory", "inventory-7c9d5f6b8-q2xlm", "Servlet.service() threw exception",
               stack="java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, request"
                     " timed out after 10004ms.\n\tat com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:1)\n"),
        # a writer whose header writes its own host on every line: two unrelated errors of it stay apart
        _event(3, 20.0, "kernel", "node-7", "node-7 kernel: nfs: server filer-a not responding, still trying"),
        _event(4, 40.0, "kernel", "node-7", "node-7 kernel: EDAC MC0: 1 CE memory read error on DIMM_A1"),
    ], cursor=None)
    by_event = {e: i["incident_id"] for i in incidents_by_first_seen(engine) for e in events_of(engine, i["incident_id"])}
    assert by_event["ev-1"] == by_event["ev-2"]
    assert by_event["ev-3"] != by_event["ev-4"]
    # another writer naming a pool of the same name is its own process's pool
    engine.incidents.store_batch([
        _event(5, 13.0, "billing", "billing-1", "HikariPool-1 - Exception during pool initialization."),
    ], cursor=None)
    assert {i["incident_id"] for i in incidents_by_first_seen(engine) if "ev-5" in events_of(engine, i["incident_id"])} \
        != {by_event["ev-1"]}


def test_a_run_skipped_because_the_previous_one_still_holds_its_lock_opens_nothing(engine):
    engine.incidents.store_batch([
        _event(1, 0.0, "digest", "jobs-01", "previous run still holds /run/lock/digest.lock, skipping"),
        _event(2, 60.0, "reindex", "jobs-01", "Skipping run: another instance is still running"),
        # a skip that says what broke is a failure
        _event(3, 90.0, "export", "jobs-02", "disk still full, skipping write of /srv/export/day.csv"),
    ], cursor=None)
    held = {e for i in incidents_by_first_seen(engine) for e in events_of(engine, i["incident_id"])}
    assert held == {"ev-3"}
