"""Issue 39, item 5: no escape sequence from log text or people's text reaches the terminal.

Log lines whose host, service, message and exception carry a clipboard write (OSC 52), a window
title (OSC 0), a clear screen, a carriage return and an 8-bit CSI, and a reviewer whose name,
comment, note and reason carry them too; then every command that prints stored text, in text,
JSON and CSV. Its output holds no control character but newline and tab, and shows the sequences
as `\\x1b…`.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from pipeline.unattended.file_ingest import ingest_path
from tests.support import cli, paused_ids, write_jsonl

ESCAPES = "\x1b]52;c;cGF5bG9hZA==\x07\x1b]0;pwned\x07\x1b[2J\r\x9b31m"
NAME = f"mallory{ESCAPES}"
CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@pytest.fixture
def hostile(paused_engine, tmp_path):
    """Incidents whose every text field carries the escapes; returns (the first incident, the second)."""
    events = [{"_time": f"2026-11-28T12:00:0{i}Z", "service": f"escape-svc{ESCAPES}", "host": f"h{ESCAPES}",
               "level": "ERROR", "message": f"HikariPool-1 - Connection is not available {ESCAPES} {i}",
               "exception": f"java.sql.SQLTransientConnectionException{ESCAPES}"} for i in range(3)]
    events += [{"_time": f"2026-11-28T12:10:0{i}Z", "service": f"other-svc{ESCAPES}", "host": f"h{ESCAPES}",
                "level": "ERROR", "message": f"AttributeError: 'NoneType' object has no attribute 'x' {ESCAPES}"}
               for i in range(3)]
    ingest_path(paused_engine, write_jsonl(tmp_path / "escapes.jsonl", events))
    (tmp_path / "broken.jsonl").write_text(f'{{"message": "{ESCAPES}\n')
    ingest_path(paused_engine, tmp_path / "broken.jsonl")
    ids = [i for i in paused_ids(paused_engine) if "svc" in paused_engine.records.incident(i)["service"]]
    assert len(ids) == 2, ids
    return ids


def test_no_command_prints_a_control_character_from_stored_or_typed_text(capsys, hostile):
    first, second = hostile
    acting = ("--as", NAME)
    commands = [
        ("whoami", *acting), ("whoami", *acting, "--json"),
        ("comment", first, "--text", f"look{ESCAPES}", *acting),
        ("assign", first, "--to", NAME, *acting),
        ("revise", first, "--feedback", f"again{ESCAPES}", *acting),
        ("reject", second, "--reason", f"no{ESCAPES}", *acting),
        ("list",), ("list", "--json"),
        ("show", first), ("show", second), ("show", first, "--json"),
        ("history", first),
        ("audit",), ("audit", first), ("audit", "--format", "csv"), ("audit", "--format", "json"),
        ("deadletters",), ("deadletters", "--json"),
        ("notifications",),
        ("unassign", first, *acting),
        ("show", f"INC-{ESCAPES}"),
    ]
    printed = {}
    for args in commands:
        code, out, err = cli(capsys, *args)
        printed[" ".join(a.replace(ESCAPES, "<esc>") for a in args)] = (code, out + err)
    leaks = {cmd: CONTROLS.findall(text) for cmd, (code, text) in printed.items() if CONTROLS.search(text)}
    assert leaks == {}
    failed = {cmd: text[-300:] for cmd, (code, text) in printed.items() if code != 0}
    assert list(failed) == ["show INC-<esc>"], failed
    shown = "\n".join(text for _, text in printed.values())
    assert r"\x1b]52;c;" in shown and r"\x9b31m" in shown  # the sequences are shown, not dropped
    assert shown.count(r"\x1b]0;pwned") >= 10
    # JSON stays JSON: the escapes survive, escaped, for a program to read
    assert ESCAPES in json.loads(printed[f"show {first} --json"][1])["service"]


def test_a_logged_warning_quoting_a_log_line_prints_no_control_character():
    # what a logger writes (a layout that could not be kept, a crashed poll) may quote a log line
    code = ("import logging, sys; from pipeline.cli import terminal; terminal.log_to_terminal();"
            " logging.getLogger('pipeline.ingest').warning('kept %s', 'a\\x1b]52;c;aGk=\\x07b\\x1b[2J')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "kept a\\x1b]52;c;aGk=\\x07b\\x1b[2J" in result.stderr


BIDI = "\u202egpj.exe\u202c \u2066x\u2069 zero\u200bwidth \ufeffbom \u200fmark"
INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\U000e0000-\U000e0fff]")


def test_direction_overrides_and_invisible_characters_are_shown_not_applied_in_the_terminal(capsys, paused_engine,
                                                                                         tmp_path):
    """A log line and a person's name carry a right-to-left override (which makes `gpj.exe` read
    `exe.jpg`), isolates, zero-width characters and a byte-order mark: the terminal shows each as
    `‹U+XXXX›` in text and CSV; JSON keeps them, escaped."""
    events = [{"_time": f"2026-11-28T12:00:0{i}Z", "service": f"bidi-svc{BIDI}", "host": f"h{BIDI}",
               "level": "ERROR", "message": f"HikariPool-1 - Connection is not available {BIDI} {i}",
               "exception": "java.sql.SQLTransientConnectionException"} for i in range(3)]
    ingest_path(paused_engine, write_jsonl(tmp_path / "bidi.jsonl", events))
    (incident,) = [i for i in paused_ids(paused_engine) if "bidi" in paused_engine.records.incident(i)["service"]]
    name = f"eve{BIDI}"
    printed = {}
    for args in [("comment", incident, "--text", f"see {BIDI}", "--as", name), ("whoami", "--as", name),
                 ("list",), ("show", incident), ("audit", incident), ("audit", "--format", "csv")]:
        code, out, err = cli(capsys, *args)
        assert code == 0, (args, err)
        printed[args[0] + " " + " ".join(args[1:2])] = out + err
    leaks = {cmd: INVISIBLE.findall(text) for cmd, text in printed.items() if INVISIBLE.search(text)}
    assert leaks == {}
    shown = "\n".join(printed.values())
    assert "\u2039U+202E\u203agpj.exe\u2039U+202C\u203a" in shown and "zero\u2039U+200B\u203awidth" in shown
    assert "eve\u2039U+202E\u203a" in printed["whoami --as"]
    code, out, _ = cli(capsys, "show", incident, "--json")
    assert code == 0 and BIDI in json.loads(out)["service"]  # a program reads the characters as they were
