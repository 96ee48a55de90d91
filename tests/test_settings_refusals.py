"""A setting the product cannot use is refused at start with one line naming it (exit 2, no
traceback, never the secret it holds), and no command creates a store where the user named
another: each case here was accepted, or crashed, before."""
from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import MutableMapping
from pathlib import Path

import pytest

from pipeline import config
from pipeline.backtest.candidate import candidate_for
from pipeline.config import Settings
from pipeline.errors import UsageError
from tests.support import BOTH_BACKENDS, FIXTURES, ROOT, SAMPLE_REPO, cli_here

NBSP = "\u00a0"


def run(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`python -m pipeline ARGS` through its entry point in this process, in `cwd`, with `env` over a
    clean set of settings (a child process costs ~3 s of imports; `run_child` is the process itself)."""
    return cli_here(cwd / "data", *args, cwd=cwd, clean=True, **env)


def run_child(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`python -m pipeline ARGS` in a new process, in `cwd`, with `env` over a clean set of settings."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("INCIDENTIQ_", "SPLUNK_", "OPENAI_"))}
    base.update({"INCIDENTIQ_DATA_DIR": str(cwd / "data"), "INCIDENTIQ_REPO_DIR": str(SAMPLE_REPO),
                 "PYTHONPATH": str(ROOT), **env})
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=cwd, env=base, capture_output=True,
                          text=True, timeout=120)


def refused(result: subprocess.CompletedProcess, name: str) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout[-300:], result.stderr[-500:])
    assert result.stderr.startswith(f"error: {name}") and result.stderr.count("\n") == 1, result.stderr[-500:]
    assert "Traceback" not in result.stderr and len(result.stderr) < 300
    return result.stderr


@pytest.mark.parametrize("url", ["POSTGRESQL://ann:hunter2@db:5432/iq", " postgresql://ann:hunter2@db/iq",
                                 "postgresql+psycopg://ann:hunter2@db/iq", "mysql://ann:hunter2@db/iq", "abc",
                                 "sqlite:///hunter2.db", "postgresql://ann:hunter2@db:port/iq"])
@pytest.mark.parametrize("command", [["list"], ["ingest", str(FIXTURES / "small.jsonl")]])
def test_a_database_url_that_is_not_postgresql_is_refused_and_creates_no_store(tmp_path, url, command):
    message = refused(run(tmp_path, *command, INCIDENTIQ_DATABASE_URL=url), "INCIDENTIQ_DATABASE_URL")
    assert "hunter2" not in message  # the URL's password (or path) is never shown
    assert list(tmp_path.iterdir()) == []  # no SQLite file in the working directory, no data dir


@pytest.mark.parametrize("command, env, name", [
    (["ingest", str(FIXTURES / "small.jsonl")], {"INCIDENTIQ_DATABASE_URL": "mysql://ann:hunter2@db/iq"},
     "INCIDENTIQ_DATABASE_URL"),
    (["poll", "--once"], {"INCIDENTIQ_SOURCE": "splunk", "SPLUNK_URL": "https://127.0.0.1:9",
                          "SPLUNK_TOKEN": f"eyJhbGciOi{NBSP}Jsecret"}, "SPLUNK_TOKEN")])
def test_a_refusal_is_the_process_exit_status_2_and_one_stderr_line(tmp_path, command, env, name):
    """The cases above run the CLI's entry point in this process; here the real `python -m pipeline`
    (its interpreter start, logging to the terminal, exit status) refuses end to end."""
    message = refused(run_child(tmp_path, *command, **env), name)
    assert "hunter2" not in message and "secret" not in message
    assert list(tmp_path.iterdir()) == []


def test_a_token_with_a_pasted_non_breaking_space_is_refused_at_start_and_at_use(tmp_path, monkeypatch):
    token = f"eyJhbGciOi{NBSP}Jsecret"
    splunk = dict(INCIDENTIQ_SOURCE="splunk", SPLUNK_URL="https://127.0.0.1:9", SPLUNK_TOKEN=token)
    for command in (["poll", "--once"], ["list"]):
        message = refused(run(tmp_path, *command, **splunk), "SPLUNK_TOKEN")
        assert "position 11" in message and "secret" not in message
    refused(run(tmp_path, "list", OPENAI_API_KEY=f"sk-{NBSP}abc"), "OPENAI_API_KEY")
    # read again when it is used (a poller that started before the secrets file changed)
    monkeypatch.setenv("SPLUNK_TOKEN", "tok\nen")
    with pytest.raises(UsageError, match="SPLUNK_TOKEN holds .* at position 4"):
        config.secret("SPLUNK_TOKEN")


@pytest.mark.parametrize("name", ["INCIDENTIQ_SOURCE_TZ", "INCIDENTIQ_REPO_DIR", "SPLUNK_VERIFY_TLS",
                                  "INCIDENTIQ_LOG_PATTERN", "SPLUNK_QUERY", "INCIDENTIQ_DATA_DIR"])
@pytest.mark.parametrize("length", [300, 100_000])  # one path component too long; a whole value too long
def test_an_overlong_setting_is_one_line_naming_it(tmp_path, name, length):
    value = "x" * length if name != "INCIDENTIQ_LOG_PATTERN" else "(?P<message>" + "x" * length + ")"
    result = run(tmp_path, "list", **{name: value})
    if length == 300 and name in ("INCIDENTIQ_LOG_PATTERN", "SPLUNK_QUERY"):  # a usable value
        assert result.returncode == 0, result.stderr[-500:]
    else:
        refused(result, name)


@pytest.mark.parametrize("urls", ["file:///etc/passwd", "https://hooks.example/a,file:///etc/passwd",
                                  "http://", "gopher://hooks.example/x", "https://hooks.example:port/x"])
@pytest.mark.parametrize("command", [["list"], ["ingest", str(FIXTURES / "small.jsonl")]])
def test_notify_urls_other_than_http_are_refused_by_every_command(tmp_path, urls, command):
    message = refused(run(tmp_path, *command, INCIDENTIQ_NOTIFY_URLS=urls), "INCIDENTIQ_NOTIFY_URLS")
    assert "passwd" not in message and "hooks.example" not in message  # a webhook URL is a secret


def test_http_notify_urls_are_accepted(tmp_path):
    assert run(tmp_path, "list", INCIDENTIQ_NOTIFY_URLS="https://hooks.example/a, http://10.0.0.1:8080/b"
               ).returncode == 0


def test_the_parsing_measure_needs_a_folder_of_yours(tmp_path):
    result = run(tmp_path, "parsing")
    assert result.returncode == 2 and result.stderr.startswith("error: parsing needs --fixtures DIR or --loghub DIR")
    assert "Filebeat fixtures" not in result.stdout  # nothing measured on the test bed by default


class _WriteRecording(MutableMapping):
    """os.environ that notes every write (the settings file must be read without any)."""

    def __init__(self, real):
        self.real, self.writes = real, []

    def __getitem__(self, key):
        return self.real[key]

    def __setitem__(self, key, value):
        self.writes.append(key)
        self.real[key] = value

    def __delitem__(self, key):
        self.writes.append(key)
        del self.real[key]

    def __iter__(self):
        return iter(self.real)

    def __len__(self):
        return len(self.real)


@BOTH_BACKENDS
def test_a_backtest_settings_file_is_read_without_touching_the_environment(paused_engine, tmp_path, monkeypatch):
    monkeypatch.delenv("INCIDENTIQ_OPEN_SIGNATURES", raising=False)
    settings_file = tmp_path / "candidate.toml"
    settings_file.write_text("CODE_FIX_MIN_CONFIDENCE = 0.9\nINCIDENTIQ_OPEN_SIGNATURES = false\n")
    recording = _WriteRecording(os.environ)
    monkeypatch.setattr(os, "environ", recording)
    candidate = candidate_for(paused_engine, settings_file=settings_file)
    assert recording.writes == []
    assert candidate.deps.code_fix_min_confidence == 0.9
    assert "INCIDENTIQ_OPEN_SIGNATURES" not in os.environ and Settings.from_env().open_signatures is True
    read = Settings.from_texts({"INCIDENTIQ_OPEN_SIGNATURES": "off", "INCIDENTIQ_SOURCE": "splunk"})
    assert read.open_signatures is False and read.source == "splunk"
    bad = tmp_path / "bad.toml"
    bad.write_text("SPLUNK_OVERLAP_SECONDS = 10\n")  # read by the Splunk source, not the analyst
    with pytest.raises(UsageError, match="cannot be set for a backtest"):
        candidate_for(paused_engine, settings_file=bad)
