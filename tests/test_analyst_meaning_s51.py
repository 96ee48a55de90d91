"""Causes in still other words (issue 36, session 51's blind bed): a settings object's own validation
failing at start-up (a configuration left out, not a record's data), and a package manager's package (a
Ruby gem) not installed where the release runs; and the near misses of those readings."""
from __future__ import annotations

import pytest

from pipeline.analyst import ideas
from tests.support import THRESHOLD, analyst_events, offline_rca


@pytest.mark.parametrize("line, category", [
    # a settings (options) object validated at start-up, a member of it required and not given: its configuration
    ("Hosting failed to start: Microsoft.Extensions.Options.OptionsValidationException: DataAnnotation validation "
     "failed for 'MailOptions' members: 'Server' with the error: 'The Server field is required.'.", "config_missing"),
    ("startup: settings validation failed: Endpoint is required", "config_missing"),
    # a package of the release's bundle not installed where it runs (Bundler's own words)
    ("Could not find pg-1.5.4 in locally installed gems (Bundler::GemNotFound)", "dependency_mismatch"),
    ("Could not find gem 'sidekiq (~> 7.2)' in locally installed gems.", "dependency_mismatch"),
])
def test_a_cause_in_other_words_is_named_below_the_code_fix_line(offline_analyst, line, category):
    rca = offline_rca(offline_analyst, line)
    assert rca.category == category and rca.confidence < THRESHOLD


@pytest.mark.parametrize("line, category", [
    # a request's or a record's validation is its data's, whatever options it carries
    ("POST /orders: validation failed for request body: field 'email' is required", "config_missing"),
    ("order 77 rejected: validation failed (shipping options: carrier is required)", "config_missing"),
])
def test_a_near_miss_is_not_that_cause(line, category):
    assert category not in ideas.categories_worded(analyst_events(line))


def _nginx_timeout(at: str, upstream: str) -> dict:
    return {"service": "edge", "time": f"2026-01-05T08:00:{at}Z", "level": "ERROR",
            "message": f"2026/01/05 08:00:{at} [error] 31#31: *8812 upstream timed out (110: Connection timed out) while "
                       f"reading response header from upstream, client: 10.0.0.7, server: shop, request: \"GET /cart "
                       f"HTTP/1.1\", upstream: \"{upstream}\""}


def _limit(at: str) -> dict:
    return {"service": "app-fpm", "time": f"2026-01-05T08:00:{at}Z", "level": "WARN",
            "message": "[pool www] server reached pm.max_children setting (24), consider raising it"}


def test_a_callees_limit_said_first_is_the_cause_of_timeouts_naming_their_upstream_by_address_only(offline_analyst):
    # the callers name their upstream by an address alone (no service's name) and their own server beside their
    # client: the worker limit another service said first (and again while it held) is what they time out on
    rca = offline_rca(offline_analyst, _limit("01"), _nginx_timeout("02", "fastcgi://127.0.0.1:9000"), _limit("20"))
    assert rca.category == "resource_exhaustion" and rca.confidence < THRESHOLD


@pytest.mark.parametrize("events", [
    # the callers name another peer by its name: their timeouts are that peer's
    (_limit("01"), _nginx_timeout("02", "http://billing.internal:8080")),
    # the limit said only after the callers' first timeout: not what started them
    (_nginx_timeout("02", "fastcgi://127.0.0.1:9000"), _limit("05")),
])
def test_a_callees_limit_is_not_taken_when_the_callers_name_another_peer_or_it_came_after(offline_analyst, events):
    assert offline_rca(offline_analyst, *events).category == "upstream_timeout"


def _job(at: str, level: str, text: str, service: str = "worker") -> dict:
    return {"service": service, "time": f"2026-01-05T08:00:{at}Z", "level": level, "message": text}


def test_a_job_retried_and_then_done_is_no_cause(offline_analyst):
    rca = offline_rca(offline_analyst,
                      _job("01", "WARN", "class=ExportJob jid=4f2e9c81ab07 Faraday::TimeoutError: Net::ReadTimeout; retry 1 in 12s"),
                      _job("14", "INFO", "class=ExportJob jid=4f2e9c81ab07 start"),
                      _job("16", "INFO", "class=ExportJob jid=4f2e9c81ab07 elapsed=1.2 done"))
    assert rca.category == "unknown"


@pytest.mark.parametrize("events", [
    # another job done: the failed one was not
    (_job("01", "WARN", "class=ExportJob jid=4f2e9c81ab07 Net::ReadTimeout; retry 1 in 12s"),
     _job("16", "INFO", "class=ExportJob jid=77aa01bc93de elapsed=1.2 done")),
    # its retries are over: nothing was tried again
    (_job("01", "ERROR", "class=ExportJob jid=4f2e9c81ab07 Net::ReadTimeout; retries exhausted, moved to the dead set"),
     _job("16", "INFO", "class=ExportJob jid=4f2e9c81ab07 elapsed=1.2 done")),
    # the same thread, not the same job (a thread's id is reused by the next job)
    (_job("01", "WARN", "tid=ab12cd34ef class=ExportJob Net::ReadTimeout; retry 1 in 12s"),
     _job("16", "INFO", "tid=ab12cd34ef class=OtherJob elapsed=1.2 done")),
])
def test_a_retried_job_not_shown_done_still_names_its_cause(offline_analyst, events):
    assert offline_rca(offline_analyst, *events).category == "upstream_timeout"


def _window_rca(analyst, evidence: list[dict], window: list[dict]):
    from pipeline.knowledge.retrieval import find_similar
    from pipeline.state import IncidentState
    events = analyst_events(*evidence, *window)
    state = IncidentState(incident_id="INC-t", service="edge", evidence=events[:len(evidence)], log_window=events)
    return analyst.rca(state.model_copy(update={"similar_docs": find_similar(analyst.kb, state.evidence)}))


def _proxy_refused(at: str) -> dict:
    return {"service": "edge", "time": f"2026-01-05T08:00:{at}Z", "level": "ERROR",
            "message": f"2026/01/05 08:00:{at} [error] 7#7: *3301 upstream timed out (110: Connection timed out) while "
                       "reading response header from upstream, client: 10.2.0.4, server: thumbs, request: \"GET /t/9 "
                       "HTTP/1.1\", upstream: \"fastcgi://unix:/run/thumbs-fpm.sock:\""}


def _callee_limit(at: str, service: str) -> dict:
    return {"service": service, "time": f"2026-01-05T08:00:{at}Z", "level": "WARN",
            "message": "[pool thumbs] server reached max_children setting (16), consider raising it"}


def test_the_callees_own_line_in_the_window_is_read_beside_its_callers(offline_analyst):
    # the incident holds the proxy's timeouts only; the service its lines name said its worker limit first, in the
    # window retrieval brought
    rca = _window_rca(offline_analyst, [_proxy_refused("02"), _proxy_refused("04")], [_callee_limit("01", "thumbs-fpm")])
    assert rca.category == "resource_exhaustion" and rca.confidence < THRESHOLD


def test_a_window_line_of_a_service_the_callers_do_not_name_is_not_read(offline_analyst):
    rca = _window_rca(offline_analyst, [_proxy_refused("02"), _proxy_refused("04")], [_callee_limit("01", "billing-fpm")])
    assert rca.category == "upstream_timeout"


def test_a_pool_drained_after_its_logins_began_failing_is_not_named_confidently(offline_analyst):
    # the logins failing began before the pool had no connection to give, and go on between its timeouts: the
    # drained pool may be their symptom (a state holds while it is said again), so it is not named confidently
    login = {"service": "pg", "level": "ERROR", "message": 'FATAL:  password authentication failed for user "svc_orders"'}
    pool = {"service": "orders", "level": "ERROR",
            "message": "HikariPool-1 - Connection is not available, request timed out after 30000ms "
                       "(total=0, active=0, idle=0, waiting=5)"}
    start = {"service": "orders", "level": "ERROR", "message": "HikariPool-1 - Exception during pool initialization."}
    rca = offline_rca(offline_analyst, {**login, "time": "2026-01-05T08:00:01Z"}, {**start, "time": "2026-01-05T08:00:02Z"},
                      {**pool, "time": "2026-01-05T08:00:03Z"}, {**login, "time": "2026-01-05T08:00:05Z"},
                      {**pool, "time": "2026-01-05T08:00:07Z"})
    assert rca.confidence < THRESHOLD


def _refused(at: str) -> dict:
    return {"service": "orders", "time": f"2026-01-05T08:00:{at}Z", "level": "ERROR",
            "message": 'pricing call failed: Post "http://pricing.internal:7000/quote": dial tcp 10.4.0.3:7000: '
                       "connect: connection refused"}


def _callee_error(at: str) -> dict:
    return {"service": "pricing", "time": f"2026-01-05T08:00:{at}Z", "level": "ERROR",
            "message": "Startup aborted: could not open /srv/pricing/tables/zones.bin"}


def test_a_refusal_of_a_callee_that_failed_first_is_not_named_confidently(offline_analyst):
    # the service the callers' refusals name logged its own failure (no category's) before them: the refusal is what
    # its failure left, not why it failed; that failure names the file it could not open, a cause no category reads,
    # so none is named and the file is cited (session 56: tests/test_analyst_abstain_s56.py)
    rca = offline_rca(offline_analyst, _callee_error("01"), _refused("03"), _refused("05"), _refused("08"))
    assert rca.category == "unknown" and rca.confidence < THRESHOLD
    assert any("/srv/pricing/tables/zones.bin" in note for note in rca.notes)


def test_a_refusal_whose_callee_failed_only_after_it_keeps_its_confidence(offline_analyst):
    assert offline_rca(offline_analyst, _refused("03"), _refused("05"), _refused("08"),
                       _callee_error("09")).confidence >= THRESHOLD


def test_a_refusal_said_first_by_the_named_service_itself_is_a_fellow_callers_not_its_failure(offline_analyst):
    # the named service was refused too (by what it calls), before its callers: no failure of its own to defer to
    refused_too = {"service": "pricing", "time": "2026-01-05T08:00:01Z", "level": "ERROR",
                   "message": "rates load failed: Error 111 connecting to rates-db:5432. Connection refused."}
    assert offline_rca(offline_analyst, refused_too, _refused("03"), _refused("05"), _refused("08")).confidence >= THRESHOLD
