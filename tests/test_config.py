"""Settings: clear errors for bad values, and secrets read without Streamlit."""
from __future__ import annotations

import pytest

from pipeline import config
from pipeline.config import Settings
from pipeline.errors import UsageError
from pipeline.sources.splunk import _verify_setting


@pytest.mark.parametrize("name,value", [("CODE_FIX_MIN_CONFIDENCE", "abc"), ("CODE_FIX_MIN_CONFIDENCE", "1.5"),
                                        ("INCIDENTIQ_POLL_INTERVAL", "-1"), ("INCIDENTIQ_MODEL_OUTPUT", "xml")])
def test_a_bad_setting_names_itself(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(UsageError, match=name):
        Settings.from_env()


def test_secrets_come_from_the_secrets_file_when_not_in_the_environment(tmp_path, monkeypatch):
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "secrets.toml").write_text('SPLUNK_TOKEN = "tok-from-file"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SPLUNK_TOKEN", raising=False)
    monkeypatch.setattr(config, "SECRETS_FILES", (tmp_path / ".streamlit" / "secrets.toml",))
    assert config.secret("SPLUNK_TOKEN") == "tok-from-file"
    monkeypatch.setenv("SPLUNK_TOKEN", "tok-from-env")
    assert config.secret("SPLUNK_TOKEN") == "tok-from-env"


def test_secrets_are_not_readable_as_plain_settings():
    with pytest.raises(KeyError):
        config.raw("OPENAI_API_KEY")


def test_splunk_tls_verification_setting(tmp_path):
    bundle = tmp_path / "ca.pem"
    bundle.write_text("-----BEGIN CERTIFICATE-----\n")
    assert _verify_setting("true") is True and _verify_setting("false") is False
    assert _verify_setting(str(bundle)) == str(bundle)
    with pytest.raises(UsageError, match="SPLUNK_VERIFY_TLS"):
        _verify_setting("/nope/ca.pem")
