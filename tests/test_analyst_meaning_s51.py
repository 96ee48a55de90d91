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
