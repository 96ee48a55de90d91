"""Every numeric setting has a finite documented range and anything outside it
is refused with one line naming the setting (exit 2), before it can crash or disable something."""
from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.config import SETTINGS, Settings, _plain
from pipeline.errors import UsageError

REFERENCE = (Path(__file__).resolve().parent.parent / "docs" / "REFERENCE.md").read_text()  # its settings table
NUMERIC = [s for s in SETTINGS if s.bounds is not None]
BAD = ["inf", "-inf", "nan", "1e300", "-1e300", "9" * 5000, "abc", "0x10", "1_0e999"]


def test_every_numeric_setting_documents_its_range():
    # with INCIDENTIQ_EXPIRE_AFTER_HOURS, the model breaker's two, INCIDENTIQ_RETENTION_DAYS, the poller's two
    # batch bounds, Splunk's index delay and late events, INCIDENTIQ_REANALYSE_GROWTH and
    # INCIDENTIQ_BURST_MINUTES, INCIDENTIQ_SOURCE_LEASE_SECONDS, INCIDENTIQ_SETTLE_SECONDS: a new numeric setting is counted here on purpose, so its range is seen documented
    assert len(NUMERIC) == 21
    for setting in NUMERIC:
        row = next(line for line in REFERENCE.splitlines() if line.startswith(f"| `{setting.name}` |"))
        low, high = setting.bounds
        assert f"({_plain(low)}–{_plain(high)})" in row, setting.name


@pytest.mark.parametrize("setting", NUMERIC, ids=lambda s: s.name)
@pytest.mark.parametrize("value", BAD)
def test_out_of_range_values_are_refused_naming_the_setting(setting, value, monkeypatch):
    monkeypatch.setenv(setting.name, value)
    with pytest.raises(UsageError) as refused:
        Settings.from_env()
    assert refused.value.message.startswith(f"{setting.name} must be") and "\n" not in refused.value.message
    assert len(refused.value.message) < 160


@pytest.mark.parametrize("setting", NUMERIC, ids=lambda s: s.name)
def test_the_range_ends_are_accepted(setting, monkeypatch):
    for bound in setting.bounds:
        monkeypatch.setenv(setting.name, str(int(bound)) if setting.kind is int or bound == int(bound) else str(bound))
        Settings.from_env()


@pytest.mark.parametrize("name,value", [("CODE_FIX_MIN_CONFIDENCE", "nan"), ("SPLUNK_OVERLAP_SECONDS", "abc"),
                                        ("INCIDENTIQ_REOPEN_MINUTES", "inf"), ("INCIDENTIQ_POLL_INTERVAL", "1e300")])
def test_the_cli_exits_2_with_one_line(name, value, tmp_path):
    result = _cli_with(tmp_path, name, value)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"error: {name} must be")


def _cli_with(tmp_path, name, value):
    # the CLI's entry point in this process with the one setting changed: the exit code and the one-line
    # refusal are main's; no process property is tested (tests/test_settings_refusals.py runs a child)
    from tests.support import cli_here

    return cli_here(tmp_path / "data", "list", **{name: value})
