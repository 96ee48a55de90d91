"""Settings, options and files that are wrong are refused with one clear line and exit 2, naming
what is wrong: never accepted silently, never a traceback."""
from __future__ import annotations

import pytest

from pipeline.review.identity import new_token
from tests.support import cli


@pytest.mark.parametrize("name,value,says", [
    ("SPLUNK_VERIFY_TLS", "maybe", "SPLUNK_VERIFY_TLS must be true, false or a CA bundle file"),
    ("INCIDENTIQ_EMBEDDINGS", "bogus", "INCIDENTIQ_EMBEDDINGS must be 'offline' or 'openai:MODEL'"),
    ("INCIDENTIQ_EMBEDDINGS", "openai:", "INCIDENTIQ_EMBEDDINGS must be 'offline' or 'openai:MODEL'"),
    ("INCIDENTIQ_SLA_HOURS", "critical=inf", "INCIDENTIQ_SLA_HOURS: critical must be a positive number"),
    ("INCIDENTIQ_SLA_HOURS", "high=1e300", "INCIDENTIQ_SLA_HOURS: high must be a positive number"),
    ("INCIDENTIQ_SLA_HOURS", "low=nan", "INCIDENTIQ_SLA_HOURS: low must be a positive number"),
])
def test_a_bad_setting_is_refused_at_start(data_dir, capsys, monkeypatch, name, value, says):
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    monkeypatch.setenv(name, value)
    code, out, err = cli(capsys, "list")
    assert code == 2 and says in err and err.count("\n") == 1 and "Traceback" not in err, err


def test_good_values_of_those_settings_still_work(data_dir, capsys, monkeypatch, tmp_path):
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    for name, value in (("SPLUNK_VERIFY_TLS", "false"), ("SPLUNK_VERIFY_TLS", str(bundle)),
                        ("INCIDENTIQ_EMBEDDINGS", "offline"), ("INCIDENTIQ_SLA_HOURS", "critical=0.5,low=8760")):
        monkeypatch.setenv(name, value)
        code, _, err = cli(capsys, "list")
        assert code == 0, (name, value, err)


@pytest.mark.parametrize("interval", ["inf", "1e300", "nan", "0", "-1"])
def test_poll_interval_goes_through_the_settings_range(data_dir, capsys, monkeypatch, interval):
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    code, _, err = cli(capsys, "poll", "--once", "--interval", interval)
    assert code == 2 and "--interval must be between 0.05 and 3600" in err and "Traceback" not in err, err


def test_an_empty_token_is_an_error_not_the_local_operator(data_dir, capsys, monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    code, out, err = cli(capsys, "whoami", "--token", "")
    assert code == 2 and "--token needs a token" in err and out == "", (out, err)


@pytest.mark.parametrize("expires", ["2026-13-45", "tomorrow", "2026-02-30T00:00:00Z", "99999-01-01"])
def test_a_token_whose_expiry_is_not_a_date_names_the_file_and_line(data_dir, capsys, monkeypatch, tmp_path,
                                                                     expires):
    token, digest = new_token()
    path = tmp_path / "tokens.toml"
    path.write_text(f'[[tokens]]\nname = "ci"\nrole = "reviewer"\nsha256 = "{digest}"\nexpires = "{expires}"\n')
    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    monkeypatch.setenv("INCIDENTIQ_TOKENS_FILE", str(path))
    code, _, err = cli(capsys, "whoami", "--token", token)
    assert code == 2 and f"{path}:5" in err and "is not a date" in err and err.count("\n") == 1, err
    assert token not in err
