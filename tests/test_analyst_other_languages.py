"""Causes as other languages' runtimes and libraries word them (issue 36.1, session 46's outside bed of
Dart, Perl, Lua, Swift, R, Crystal, .NET, Erlang, Haskell and cloud SDK errors): a null read as an object,
an allocation of a stated size refused, a pool whose connections are all in use, a write refused by
its precondition, a resolver finding no version, and the SQL standard's SQLSTATE codes. Named by the
ideas of their cause, below the code-fix line; a near miss (a not-null constraint, PHP's undefined
method, an ambiguous SQLSTATE) stays with its own category or with none."""
from __future__ import annotations

import pytest

from pipeline.analyst import ideas
from tests.support import THRESHOLD, analyst_events, offline_rca


@pytest.mark.parametrize("line, category", [
    # a null read as an object, in the words of Dart, Lua, Swift, Ruby and Perl
    ("Unhandled exception: Null check operator used on a null value", "null_reference"),
    ("worker.lua:42: attempt to index a nil value (field 'profile')", "null_reference"),
    ("Fatal error: Unexpectedly found nil while unwrapping an Optional value", "null_reference"),
    ("Can't call method \"email\" on an undefined value at /srv/app/lib/Mailer.pm line 71.", "null_reference"),
    # an allocation of a stated size refused (R, C runtimes)
    ("Error: cannot allocate vector of size 6.2 Gb", "out_of_memory"),
    ("fatal: failed to allocate 268435456 bytes for the frame buffer", "out_of_memory"),
    # a pool whose connections are all taken, or one not checked out in time
    ("MySqlException: Connect Timeout expired. All pooled connections are in use.", "db_pool_exhausted"),
    ("Could not check out a connection in 2.0 seconds (PoolTimeout)", "db_pool_exhausted"),
    # a TLS peer whose issuer is not trusted
    ("TLS client: generated CLIENT ALERT: Fatal - Unknown CA", "tls_certificate"),
    # a login by key refused
    ("ssh: deploy@10.1.2.3: Permission denied (publickey).", "upstream_auth_failure"),
    # a write guarded by an ETag refused: another writer came first
    ("PUT /blobs/cfg.json failed: 412 the condition specified using HTTP conditional header(s) is not met",
     "concurrency_conflict"),
    # what a reader expected of a payload's field
    ("decoding the invoice failed: parsing Int failed, expected Number, but encountered String", "serialization_error"),
    # a server's process limit exceeded
    ("ORA-00020: maximum number of processes (150) exceeded", "resource_exhaustion"),
    # a version resolver finding none
    ("no available releases match the given constraints >= 3.0, < 2.0", "dependency_mismatch"),
    ("Because app depends on http ^2.0.0 which requires SDK version >=3.5.0, version solving failed.",
     "dependency_mismatch"),
    # the SQL standard's codes, whatever the server's words
    ("SqlSyntaxErrorException: DB2 SQL Error: SQLCODE=-204, SQLSTATE=42704, SQLERRMC=SALES.REGIONS", "db_schema_mismatch"),
    ("SQL error [SQLSTATE 42S02] ODBC driver: object 'dbo.Regions' unavailable", "db_schema_mismatch"),
])
def test_a_cause_in_another_languages_words_is_named_below_the_code_fix_line(offline_analyst, line, category):
    rca = offline_rca(offline_analyst, line, line)
    assert rca.category == category and rca.confidence < THRESHOLD


@pytest.mark.parametrize("said, near_miss, category", [
    # a not-null constraint's null is data, not a null read
    ("attempt to index a nil value (local 'cart')",
     'ERROR: null value in column "email" of relation "users" violates not-null constraint', "null_reference"),
    # PHP's undefined method names no value: a missing method, not a null
    ('Can\'t call method "total" on an undefined value at Cart.pm line 9.',
     "PHP Fatal error: Uncaught Error: Call to undefined method Cart::totals()", "null_reference"),
    # an unset value warned about is no failure of a read
    ('Can\'t call method "total" on an undefined value at Cart.pm line 9.',
     'Use of uninitialized value $ENV{"LOCALE"} in sprintf at /srv/app/lib/Format.pm line 19.', "null_reference"),
    # a code two categories share (MySQL's and DB2's deadlock, PostgreSQL's serialization failure) names neither
    ("statement failed, SQLSTATE 40P01", "transaction rolled back, SQLSTATE 40001", "db_deadlock"),
])
def test_the_cause_is_read_and_its_near_miss_is_not(said, near_miss, category):
    assert category in ideas.categories_worded(analyst_events(said))
    assert not set(ideas.categories_worded(analyst_events(near_miss))) & {category, "null_reference", "db_deadlock",
                                                                          "concurrency_conflict"}


def test_a_frame_of_another_language_is_a_file_and_line_not_a_host_and_port(offline_analyst):
    line = {"message": "Could not check out a connection in 3.0 seconds (DB::PoolTimeout)",
            "stack": "  from lib/db/src/db/pool.cr:224:9 in 'wait_for_available'\n"
                     "  from src/orders/store.cr:57:5 in 'recent'"}
    rca = offline_rca(offline_analyst, line, line)
    assert not {f.value for f in rca.findings if f.kind == "host"} & {"pool.cr", "store.cr"}
    assert "src/orders/store.cr:57" in {f.value for f in rca.findings if f.kind == "file_line"}
    dart = {"message": "Unhandled exception:\nNull check operator used on a null value",
            "stack": "#0      CartHandler._owner (package:shop_api/handlers/cart_handler.dart:61:20)"}
    rca = offline_rca(offline_analyst, dart, dart)
    assert "shop_api/handlers/cart_handler.dart:61" in rca.root_cause
    # a header announcing what follows is quoted with it, not alone
    assert "Unhandled exception: Null check operator used on a null value" in rca.root_cause


def test_the_settings_the_error_points_at_are_named_first(offline_analyst):
    rca = offline_rca(offline_analyst,
                      {"level": "INFO", "message": "db pool: initial_pool_size=4 max_idle_pool_size=8 "
                                                   "max_pool_size=20 checkout_timeout=3.0"},
                      "Could not check out a connection in 3.0 seconds (DB::PoolTimeout)",
                      "Could not check out a connection in 3.0 seconds (DB::PoolTimeout)")
    settings = [f.value for f in rca.findings if f.kind == "setting"]
    assert settings[0] == "checkout_timeout=3.0" and "initial_pool_size=4" not in settings
    # a connection string's `Key Name=value` is a setting too
    rca = offline_rca(offline_analyst,
                      {"level": "WARN", "message": "Connection string: Server=sql-7.internal;Database=orders;"
                                                   "Max Pool Size=40;Connect Timeout=15"},
                      "MySqlException: Connect Timeout expired. All pooled connections are in use.")
    assert "Max Pool Size=40" in {f.value for f in rca.findings if f.kind == "setting"}


def test_a_line_announcing_what_follows_is_quoted_with_it_and_a_cc_file_is_no_host(offline_analyst):
    r_error = "Error in `req_perform()`:\n! HTTP 429 Too Many Requests.\nBacktrace:\n  1. httr2::req_perform(req)"
    rca = offline_rca(offline_analyst, r_error, r_error)
    assert "HTTP 429 Too Many Requests" in rca.root_cause
    dart_tls = ("HandshakeException: Handshake error in client (OS Error: \n\tCERTIFICATE_VERIFY_FAILED: "
                "certificate has expired(handshake.cc:393))")
    rca = offline_rca(offline_analyst, dart_tls, "POST https://api.vendor.example/v2/sync failed; will retry")
    assert "certificate has expired" in rca.root_cause
    assert "handshake.cc" not in {f.value for f in rca.findings if f.kind in ("host", "address")}


def test_a_connection_the_peer_closed_is_not_said_to_be_refused(offline_analyst):
    line = ('2026/07/25 17:20:00 [error] 22#22: *88 upstream prematurely closed connection while reading response '
            'header from upstream, client: 10.2.0.8, server: api.example.com, request: "GET /v1/pdf HTTP/1.1", '
            'upstream: "http://10.9.0.7:5000/v1/pdf"')
    rca = offline_rca(offline_analyst, line, line)
    # ... nor named a refusal at all: why the peer closed it is not in the events (session 56), an evidence report
    assert rca.category == "unknown" and "refused" not in rca.root_cause.split(". ")[0]
    assert any("closed an accepted connection" in note for note in rca.notes)
