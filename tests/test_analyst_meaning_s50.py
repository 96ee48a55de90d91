"""Causes in still other words (issue 36, session 50's blind bed): a reader refusing a value it has no
variant for, a property read before it was set, code built against one version of a library and run
against another, and a process killed by the kernel's OOM killer before its callers are refused, or a
pool counted full in the service its callers time out on; and the near misses of those readings."""
from __future__ import annotations

import pytest

from pipeline.analyst import capacity, ideas
from tests.support import THRESHOLD, analyst_events, offline_rca


@pytest.mark.parametrize("line, category", [
    # a decoder naming the value it has no variant for, and what it expected instead
    ("import row 12 refused: unknown variant `ON_HOLD`, expected one of `OPEN`, `CLOSED` at line 3 column 17",
     "serialization_error"),
    ("event dropped: unknown field `discount_pct`, expected one of `id`, `amount`", "serialization_error"),
    # a property or field read before anything set it (a late-initialised member)
    ("request failed: UninitializedPropertyAccessException: lateinit property mailer has not been initialized",
     "null_reference"),
    ("handler crashed: field 'auditSink' was read before it was initialized", "null_reference"),
    # a broker or server unable to validate the user it was given (its credentials)
    ("session closed: the broker could not validate user 'billing-bot' from 10.1.2.3", "upstream_auth_failure"),
    # access to a requested resource, or for a user, denied by what was called
    ("upload failed: requested access to the bucket resource is denied", "upstream_auth_failure"),
    # a quota of things (pods, volumes, CPUs) used up, not of calls
    ("create rejected: exceeded quota ns-batch-quota, used: cpu=64, limited: cpu=64", "resource_exhaustion"),
    # a setting a configuration's validation says must not be empty
    ("startup aborted: settings.yaml is invalid: smtp.relay must not be empty (configuration check)", "config_missing"),
])
def test_a_cause_in_other_words_is_named_below_the_code_fix_line(offline_analyst, line, category):
    rca = offline_rca(offline_analyst, line)
    assert rca.category == category and rca.confidence < THRESHOLD


@pytest.mark.parametrize("change, error", [
    ("release 7.1 rolled out (bumped protobuf-java 3.25.1 -> 4.28.0)",
     "java.lang.NoSuchMethodError: 'void com.google.protobuf.GeneratedMessageV3.makeExtensionsImmutable()'"),
    ("plugin host started; reports-addin built against Grpc.Core 2.46.0, runtime has 2.60.1",
     "System.MissingMethodException: Method not found: 'Void Grpc.Core.Channel..ctor(System.String)'"),
    ("package install: monolog/monolog (2.9.1 => 3.5.0)",
     "PHP Fatal error: Declaration of App\\Log\\JsonHandler::write(array $record): void must be compatible "
     "with Monolog\\Handler\\AbstractProcessingHandler::write(Monolog\\LogRecord $record): void"),
    ("deploy 3.0.2 (Serilog 3.1.1 replaced by 2.12.0 through a transitive pin)",
     "System.IO.FileLoadException: Could not load file or assembly 'Serilog, Version=3.0.0.0, Culture=neutral'. "
     "The located assembly's manifest definition does not match the assembly reference."),
])
def test_code_built_against_another_version_is_a_dependency_mismatch(offline_analyst, change, error):
    rca = offline_rca(offline_analyst, {"level": "INFO", "message": change}, error)
    assert rca.category == "dependency_mismatch"  # (Java's NoSuchMethodError has its doc's signature too)


@pytest.mark.parametrize("line, category", [
    ("json parse error at line 1 column 40: unknown token", "db_schema_mismatch"),  # a position, not a column
    # a version-free binary mismatch names no versions that do not fit: not said without a change line
    ("java.lang.NoSuchMethodError: 'void com.acme.Cart.clear()'", "dependency_mismatch"),
    ("Declaration of App\\Foo::bar() must be compatible with App\\Base::bar(int $x)", "dependency_mismatch"),
    # a setting's field read before it was set is a setting missing, not code reading a null
    ("startup: configuration property 'smtp.host' has not been initialized", "null_reference"),
    # an unknown variant in a request's route, or unknown field of a form a user filled in, expects nothing
    ("router: unknown variant of the route /v2/ping", "serialization_error"),
    ("signup refused: could not validate user input: email is malformed", "upstream_auth_failure"),  # data, not a login
    ("Access to the path '/srv/reports/q3.csv' is denied.", "upstream_auth_failure"),  # a file's, no dependency's
    ("Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute'", "resource_exhaustion"),
    ("write failed: disk quota exceeded on /home", "resource_exhaustion"),  # a disk's quota: its space
    ("order 42 rejected: field qty must not be empty", "config_missing"),  # a record's field, no configuration's
])
def test_a_near_miss_is_not_that_cause(line, category):
    assert category not in ideas.categories_worded(analyst_events(line))


def test_a_process_oom_killed_before_its_callers_are_refused_is_their_cause(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"level": "WARN", "service": "systemd", "message": "ledger-api.service: Failed with result 'oom-kill'."},
                      {"service": "edge", "time": "2026-01-05T08:00:04Z",
                       "message": "upstream connect error or disconnect/reset before headers. reset reason: connection failure"},
                      {"service": "edge", "time": "2026-01-05T08:00:05Z",
                       "message": "upstream connect error or disconnect/reset before headers. reset reason: connection failure"})
    assert rca.category == "out_of_memory" and rca.confidence < THRESHOLD


def test_a_process_oom_killed_after_the_refusals_began_is_not_taken_for_their_cause(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"service": "edge", "message": "upstream connect error or disconnect/reset before headers. "
                                                     "reset reason: connection failure"},
                      {"level": "WARN", "service": "systemd", "time": "2026-01-05T08:00:04Z",
                       "message": "ledger-api.service: Failed with result 'oom-kill'."},
                      {"service": "edge", "time": "2026-01-05T08:00:05Z",
                       "message": "upstream connect error or disconnect/reset before headers. reset reason: connection failure"})
    assert rca.category == "connection_refused"


def test_a_pool_counted_full_where_its_callers_time_out_is_their_cause(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"service": "gw", "level": "WARN", "message": "upstream request timeout: GET http://stock-svc:8080/v1/level took 5001ms"},
                      {"service": "stock-svc", "message": "could not get a database client: timed out waiting for a free slot"},
                      {"service": "stock-svc", "level": "WARN", "message": "pool state: max 24, size 24, idle: 0, waiting: 31"},
                      {"service": "gw", "message": "504 Gateway Timeout for GET /v1/level"})
    assert rca.category == "db_pool_exhausted" and rca.confidence < THRESHOLD


def test_a_pool_counted_full_is_a_database_pool_when_a_line_gets_a_database_client_from_it():
    events = analyst_events("could not get a database client: timed out waiting for a free slot",
                            {"level": "WARN", "message": "pool state: max 24, size 24, idle: 0, waiting: 31"})
    assert "db_pool_exhausted" in capacity.categories_at_capacity(events)
    # ... and not when nothing the incident says takes a database's connection from it
    events = analyst_events("render failed: timed out waiting for a free slot",
                            {"level": "WARN", "message": "pool state: max 24, size 24, idle: 0, waiting: 31"})
    assert "db_pool_exhausted" not in capacity.categories_at_capacity(events)


def test_a_process_oom_killed_before_refusals_of_another_named_peer_is_not_their_cause(offline_analyst):
    oom = {"level": "WARN", "service": "systemd", "message": "ledger-api.service: Failed with result 'oom-kill'."}
    refused = {"service": "edge", "time": "2026-01-05T08:00:04Z",
               "message": "dial tcp fx-rates.internal:9400: connect: connection refused"}
    assert offline_rca(offline_analyst, oom, refused, {**refused, "time": "2026-01-05T08:00:05Z"}).category \
        == "connection_refused"


def test_a_peer_closing_accepted_connections_mid_request_is_not_named_confidently(offline_analyst):
    line = ("2027/01/05 08:00:00 [error] 7#7: *88 upstream prematurely closed connection while reading response header "
            "from upstream, client: 10.0.0.9, server: shop, request: \"GET /cart HTTP/1.1\", upstream: "
            "\"http://10.2.0.5:7000/cart\"")
    rca = offline_rca(offline_analyst, line, line.replace("*88", "*91"))
    assert rca.confidence < THRESHOLD
    assert any("mid-request" in note for note in rca.notes)
    # ... while a refusal is a refusal, named as before
    refused = ("2027/01/05 08:00:00 [error] 7#7: *88 connect() failed (111: Connection refused) while connecting to "
               "upstream, client: 10.0.0.9, server: shop, request: \"GET /cart HTTP/1.1\", upstream: \"http://10.2.0.5:7000/cart\"")
    assert offline_rca(offline_analyst, refused, refused.replace("*88", "*91")).confidence >= THRESHOLD
