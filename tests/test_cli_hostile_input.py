"""Hostile command-line input is a one-line refusal with exit 2, never a traceback."""
from __future__ import annotations

import json

import pytest

from pipeline.errors import InvalidEdit
from pipeline.review.service import ReviewService
from tests.support import FIXTURES, paused_ids
from tests.support import cli_here as cli


def one_line_refusal(result, code: int = 2) -> str:
    assert result.returncode == code, (result.returncode, result.stderr[-500:])
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr[-500:]
    assert "Traceback" not in result.stderr
    return result.stderr


@pytest.fixture(scope="module")
def paused_dir(tmp_path_factory):
    data = tmp_path_factory.mktemp("cli") / "data"
    assert cli(data, "ingest", str(FIXTURES / "small.jsonl")).returncode == 0
    return data


def first_paused(data) -> str:
    return json.loads(cli(data, "list", "--status", "awaiting_approval", "--json").stdout)[0]["incident_id"]


def test_edit_with_60k_deep_json_is_refused(paused_dir):
    inc = first_paused(paused_dir)
    deep = "[" * 60_000 + "]" * 60_000
    assert "nested too deeply" in one_line_refusal(
        cli(paused_dir, "edit", inc, "--reviewer", "ann", "--set", f"recommendation.steps={deep}"))
    deep = "[" * 500 + "]" * 500  # parses, but too deep to store
    assert "nested deeper than 64" in one_line_refusal(
        cli(paused_dir, "edit", inc, "--reviewer", "ann", "--set", f"recommendation.steps={deep}"))
    assert json.loads(cli(paused_dir, "audit", inc, "--format", "json").stdout) == []


@pytest.mark.parametrize("limit", ["1e23", "100000000000000000000000", "0", "-5", "nan"])
def test_history_limit_out_of_range_is_refused(paused_dir, limit):
    one_line_refusal(cli(paused_dir, "history", first_paused(paused_dir), "--limit", limit))


def test_a_data_dir_that_is_a_regular_file_is_refused(tmp_path):
    not_a_dir = tmp_path / "data"
    not_a_dir.write_text("x")
    for command in (["list"], ["ingest", str(FIXTURES / "small.jsonl")], ["audit"]):
        assert "is not a folder" in one_line_refusal(cli(not_a_dir, *command))


def test_review_service_refuses_unstorable_edits_before_writing(paused_engine):
    review = ReviewService(paused_engine)
    inc = paused_ids(paused_engine)[0]
    before = review.history(inc, limit=100)
    for value in (_deep_list(100), ["ok", "bad \ud800"], {"\udfff": 1}):
        with pytest.raises(InvalidEdit):
            review.edit(inc, reviewer="ann", edits={"recommendation.steps": value})
    assert review.history(inc, limit=100) == before
    assert paused_engine.records.audit(inc) == []


def _deep_list(depth: int):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value
