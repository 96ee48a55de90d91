"""Settings: clear errors for bad values, and secrets read without Streamlit."""
from __future__ import annotations

import pytest

from pipeline import config
from pipeline.config import Settings
from pipeline.errors import UsageError
from pipeline.sources.splunk import _verify_setting


@pytest.mark.parametrize("name,value", [("CODE_FIX_MIN_CONFIDENCE", "abc"), ("CODE_FIX_MIN_CONFIDENCE", "1.5"),
                                        ("INCIDENTIQ_POLL_INTERVAL", "-1"), ("INCIDENTIQ_MODEL_OUTPUT", "xml"),
                                        ("INCIDENTIQ_EMBEDDINGS", "bogus"), ("INCIDENTIQ_EMBEDDINGS", "openai:"),
                                        ("INCIDENTIQ_SLA_HOURS", "critical=inf"), ("INCIDENTIQ_SLA_HOURS", "high=nan"),
                                        ("INCIDENTIQ_OPEN_SIGNATURES", "yes"), ("INCIDENTIQ_AUTH", "OIDC")])
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


def test_each_field_is_declared_once_and_its_default_is_what_an_empty_environment_gives(monkeypatch):
    """The declaration on the field is the only place a setting is written: the dataclass default
    and from_env agree (outside the demo, whose own defaults are declared beside them)."""
    for declared in config.SETTINGS:
        monkeypatch.delenv(declared.name, raising=False)
    monkeypatch.setenv("INCIDENTIQ_SOURCE", "splunk")
    fields = [name for name in Settings.model_fields if name != "extra"]
    assert sorted(fields) == sorted(config.SETTING_OF)
    assert Settings.from_env() == Settings(source="splunk")
    monkeypatch.setenv("INCIDENTIQ_SOURCE", "demo")
    demo = Settings.from_env()
    assert demo.sla_from == "opened" and demo.critical_services[0] == "checkout*"


def test_the_field_is_the_declaration_pydantic_checks_and_the_docs_show(monkeypatch):
    """Type, default, bounds and help are declared once, in `setting(...)` on the field: pydantic-settings
    holds them (a value out of range is refused even when code passes it), the table shows them."""
    import pydantic

    field = Settings.model_fields["poll_interval"]
    declared = config.SETTING_OF["poll_interval"]
    assert field.description == declared.help and field.annotation is float
    assert declared.bounds == (0.05, 3600) and f"{declared.help} (0.05–3600)" in config.markdown_table()
    with pytest.raises(pydantic.ValidationError):
        Settings(poll_interval=1e9)
    monkeypatch.setenv("INCIDENTIQ_POLL_INTERVAL", "7")
    assert Settings().poll_interval == 7.0 == Settings.from_env().poll_interval  # read from the environment
    assert Settings(poll_interval=3).poll_interval == 3.0  # keyword arguments first
    with pytest.raises(pydantic.ValidationError):  # frozen: a changed copy is model_copy(update=...)
        Settings().poll_interval = 9  # type: ignore[misc]
