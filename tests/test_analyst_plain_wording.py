"""Causes in other stacks' words (issue 36, session 44's outside bed): a cause's ideas are read in a
trace's exception lines too, said together (words strewn over a trace name nothing), and the
specifics a reviewer needs come from the events even when only a context line names them."""
from __future__ import annotations

import pytest

from pipeline.analyst import ideas
from tests.support import THRESHOLD, analyst_events, offline_rca


@pytest.mark.parametrize("line, category", [
    ("consumer crashed: SASL authentication failed: invalid credentials for principal svc-audit",
     "upstream_auth_failure"),
    ("forecast parse failed: error decoding response body: expected value at line 1 column 1", "serialization_error"),
    ("fetch failed: BufferOverflowException: request buffer of the client pool has filled up", "resource_exhaustion"),
    ("write failed: device has no space left", "disk_full"),
    ("TLS handshake failed: certificate signed by unknown authority", "tls_certificate"),
    ("consumer lag 120000 messages on topic orders, partition 3", "queue_backlog"),
    ("Killed process 1234 (java), out of memory", "out_of_memory"),
    ("optimistic lock failed: version mismatch on order 88", "concurrency_conflict"),
    ("could not find environment variable STRIPE_KEY", "config_missing"),
    # a remedy naming the setting's key says it is missing
    ("ReportClient failed: consider adding 'reports.api.base-url' to your application configuration", "config_missing"),
])
def test_a_cause_in_a_libraries_plain_words_is_named_below_the_code_fix_line(offline_analyst, line, category):
    rca = offline_rca(offline_analyst, line, line)
    assert rca.category == category and rca.confidence < THRESHOLD


def test_the_deepest_exception_of_a_trace_is_read_for_the_ideas_of_its_cause(offline_analyst):
    trace = {"message": "request failed, error id 3f2a", "level": "ERROR",
             "stack": "com.acme.Gateway$Failure: publish failed\n\tat com.acme.Gateway.send(Gateway.java:40)\n"
                      "Caused by: com.acme.codec.PayloadDecodingException: decoding the message body failed\n"
                      "\tat com.acme.codec.Reader.read(Reader.java:88)"}
    assert offline_rca(offline_analyst, trace, trace).category == "serialization_error"


@pytest.mark.parametrize("line, not_named", [
    # a bean's name and an unresolved placeholder, far apart, are no unresolvable host
    ("Error creating bean with name 'paymentsClient' defined in file [/srv/app/config/PaymentsConfig.class]: "
     "Injection of autowired dependencies failed; nested exception is java.lang.IllegalArgumentException: "
     "Could not resolve placeholder 'PAYMENTS_URL' in value", "dns_resolution"),
])
def test_words_strewn_over_a_line_are_not_a_causes_idea(line, not_named):
    assert not_named not in ideas.categories_worded(analyst_events(line))


def test_a_setting_named_in_the_plural_is_the_one_the_error_names(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"level": "INFO", "message": "database pool ready: max_connections=8 acquire_timeout=30s"},
                      "POST /v1/entries failed: pool timed out while waiting for an open connection",
                      "GET /v1/balances failed: pool timed out while waiting for an open connection")
    assert rca.category == "db_pool_exhausted"
    assert "max_connections=8" in {f.value for f in rca.findings if f.kind == "setting"}


def test_the_peer_a_context_line_announces_is_named_when_no_error_line_names_it(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"level": "INFO", "message": "Pika version 1.3.2 connecting to ('10.8.0.21', 5672)"},
                      "Socket failed to connect: <socket.socket fd=7, laddr=('10.8.1.4', 50522)>; error=111 (Connection refused)",
                      "AMQP connection workflow failed: ConnectionRefusedError(111, 'Connection refused')")
    assert rca.category == "connection_refused"
    addresses = [f.value for f in rca.findings if f.kind == "address"]
    assert addresses == ["('10.8.0.21', 5672)"] and "10.8.0.21" in rca.root_cause


def test_a_jdbc_connection_not_acquired_is_the_pools_and_a_refusal_behind_one_stays_a_refusal(offline_analyst):
    # a JDBC connection not acquired in time is a pool's (a DataSource is one), worded without "pool"
    line = "GenericJDBCException: Unable to acquire JDBC Connection [acquisition timeout after 5000ms]"
    assert offline_rca(offline_analyst, line, line).category == "db_pool_exhausted"
    line = ("CannotGetJdbcConnectionException: Failed to obtain JDBC Connection; nested exception is "
            "java.net.ConnectException: Connection refused (Connection refused)")
    assert offline_rca(offline_analyst, line, line).category == "connection_refused"


def test_a_python_socket_address_in_an_error_names_the_peer_not_the_local_side(offline_analyst):
    line = ("ConnectionRefusedError: [Errno 111] Connection refused: <socket.socket fd=9, "
            "laddr=('10.8.1.4', 50522), raddr=('10.8.0.21', 5672)>")
    rca = offline_rca(offline_analyst, line, line)
    assert [f.value for f in rca.findings if f.kind == "address"] == ["('10.8.0.21', 5672)"]


def test_a_deadlock_or_a_table_is_a_databases_only_when_the_clause_says_so(offline_analyst):
    assert offline_rca(offline_analyst, *["deadlock found while updating orders"] * 2).category == "db_deadlock"
    assert offline_rca(offline_analyst, *["schema mismatch: table orders has no column discount"] * 2).category == "db_schema_mismatch"
    # a runtime's deadlock names no transaction or lock; a table without rows is no schema mismatch
    assert offline_rca(offline_analyst, *["fatal error: all goroutines are asleep - deadlock!"] * 2).category == "unknown"
    assert offline_rca(offline_analyst, *["users table has no rows for id 5"] * 2).category == "unknown"


@pytest.mark.parametrize("raws, category", [
    # ActiveMQ Artemis (ActiveMQServerLogger 222212)
    (["AMQ222212: Disk Full! Blocking message production on address 'invoices'. Clients will report blocked."] * 2,
     "disk_full"),
    # the Ruby and Elixir pools' own checkout timeouts (Sequel's threaded pool, db_connection's queue)
    (["Sequel::PoolTimeout: timeout: 5.0, elapsed: 5.002, database name: billing\n  /app/vendor/bundle/ruby/3.2.0/"
      "gems/sequel-5.72.0/lib/sequel/connection_pool/threaded.rb:263:in `raise_pool_timeout'"] * 2, "db_pool_exhausted"),
    (["** (DBConnection.ConnectionError) connection not available and request was dropped from queue after 3012ms."] * 2,
     "db_pool_exhausted"),
    # mongoose's optimistic concurrency, Composer's platform check, Elixir's kernel and Jason's decode errors
    (["VersionError: No matching document found for id \"5f1d0c2e9a\" version 3 modifiedPaths \"items\"\n"
      "    at generateVersionError (/app/node_modules/mongoose/lib/model.js:4553:10)"] * 2, "concurrency_conflict"),
    (["PHP Fatal error:  Uncaught RuntimeException: Composer detected issues in your platform: Your Composer "
      "dependencies require a PHP version \">= 8.3.0\". You are running 8.2.12. in /srv/vendor/composer/"
      "platform_check.php:24"] * 2, "dependency_mismatch"),
    (["** (BadMapError) expected a map, got: nil\n    (shop 1.2.0) lib/shop/totals.ex:31: Shop.Totals.sum/1"] * 2,
     "null_reference"),
    (["** (Jason.DecodeError) unexpected byte at position 0: 0x3C (\"<\")"] * 2, "serialization_error"),
])
def test_a_librarys_own_string_names_its_cause(offline_analyst, raws, category):
    rca = offline_rca(offline_analyst, *raws)
    assert rca.category == category and rca.confidence >= THRESHOLD


@pytest.mark.parametrize("raws, category", [
    # RabbitMQ's alarm banner is the same for both resources (rabbit_alarm.erl): its first line says which
    ([{"level": "INFO", "message": "Free disk space is insufficient. Free bytes: 20480000. Limit: 50000000"},
      {"level": "WARN", "message": "disk resource limit alarm set on node 'rabbit@mq-1'.\n*** Publishers will be "
                                   "blocked until this alarm clears ***"},
      "publish to exchange 'invoices' timed out after 15000ms: connection blocked by broker"], "disk_full"),
    ([{"level": "WARN", "message": "memory resource limit alarm set on node 'rabbit@mq-1'.\n*** Publishers will be "
                                   "blocked until this alarm clears ***"},
      "publish to exchange 'invoices' timed out after 15000ms: connection blocked by broker"], "queue_backlog"),
])
def test_a_banner_said_once_names_its_cause_below_the_fix_line(offline_analyst, raws, category):
    # the alarm is one line, said once (session 57, pipeline/analyst/earned.py): named, but no second line agrees
    rca = offline_rca(offline_analyst, *raws)
    assert rca.category == category and rca.confidence < THRESHOLD
    assert any("no second, independent line agrees" in n for n in rca.notes), rca.notes


def test_a_queues_long_wait_as_horizon_words_it_is_a_backlog(offline_analyst):
    # Laravel Horizon's LongWaitDetected notification
    line = {"level": "WARN", "message": 'The "mail" queue on the "redis" connection has a wait time of 640 seconds.'}
    assert offline_rca(offline_analyst, line, line).category == "queue_backlog"
