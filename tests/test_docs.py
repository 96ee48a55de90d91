"""The docs: a short README that starts with the two commands, a reference that documents every
setting and every command, and links between them that lead somewhere."""
from __future__ import annotations

import argparse
import re

from pipeline.cli import build_parser
from pipeline.config import SETTINGS
from tests.support import ROOT

README = (ROOT / "README.md").read_text()
REFERENCE = (ROOT / "docs" / "REFERENCE.md").read_text()
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(sub.choices)


def _anchor(heading: str) -> str:
    """GitHub's anchor for a markdown heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_setting_is_in_the_reference_settings_table():
    rows = [line for line in REFERENCE.splitlines() if line.startswith("| `")]
    missing = [s.name for s in SETTINGS if not any(row.startswith(f"| `{s.name}` |") for row in rows)]
    assert missing == []


def test_every_command_is_in_the_reference():
    missing = [c for c in _commands() if f"| `{c}" not in REFERENCE]
    assert missing == []


def test_readme_opens_with_the_run_and_test_commands():
    commands = [line.strip() for line in README.splitlines() if line.startswith("    ")][:2]
    assert commands[0].endswith("streamlit run app.py")
    assert commands[1].endswith("python -m pytest -q")


def test_ci_runs_exactly_the_readme_test_command():
    test_command = [line.strip() for line in README.splitlines() if line.startswith("    ")][1]
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_the_readme_is_one_short_page_that_leads_to_the_rest():
    assert len(README.splitlines()) <= 200
    linked = set(LINK.findall(README))
    for doc in ("docs/USAGE.md", "docs/REFERENCE.md", "docs/OPERATIONS.md", "docs/BENCHMARKS.md",
                "docs/ARCHITECTURE.md", "docs/CONTRACT.md", "CHANGELOG.md"):
        assert doc in linked, doc
    assert any(target.startswith("docs/screenshots/") and target.endswith(".png") for target in linked)


def test_every_relative_link_and_anchor_in_the_docs_resolves():
    broken = []
    for doc in DOCS:
        for target in LINK.findall(doc.read_text()):
            if re.match(r"[a-z]+:", target):  # http(s):, mailto: ...
                continue
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve() if path else doc
            if not file.exists():
                broken.append(f"{doc.name}: {target}")
            elif anchor and file.suffix == ".md":
                headings = [_anchor(line.lstrip("#")) for line in file.read_text().splitlines() if line.startswith("#")]
                if anchor not in headings:
                    broken.append(f"{doc.name}: {target}")
    assert broken == []
