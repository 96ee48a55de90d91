"""Every third-party module the product imports (pipeline/, workbench/, app.py and the pages; deferred
imports too) comes from a distribution pinned with `==` in requirements.txt: an install from it
gets the versions the tests ran against, not whatever a dependency of a dependency brings."""
from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import distribution, distributions, packages_distributions

from tests.support import ROOT

PRODUCT = [*sorted((ROOT / "pipeline").rglob("*.py")), *sorted((ROOT / "workbench").rglob("*.py")), ROOT / "app.py",
           *sorted((ROOT / "app_pages").glob("*.py"))]
FIRST_PARTY = {"pipeline", "workbench", "app_pages"}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pinned() -> dict[str, str]:
    """requirements.txt's distributions pinned with ==, by normalised name: their versions."""
    found = {}
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*==\s*(\S+)\s*(?:#.*)?", line)
        if match:
            found[_normal(match.group(1))] = match.group(2)
    return found


def imported() -> dict[str, set[str]]:
    """Each third-party module the product imports (as written: `langgraph.checkpoint.sqlite`) -> its importers."""
    found: dict[str, set[str]] = {}
    for path in PRODUCT:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in FIRST_PARTY:
                    found.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    return found


def owners(tops: set[str]) -> dict[str, set[str]]:
    """Installed module (dotted) under these top-level names -> the distributions whose RECORD holds it."""
    found: dict[str, set[str]] = {}
    by_top = packages_distributions()
    for name in sorted({dist for top in tops for dist in by_top.get(top, ())}):
        for line in (distribution(name).read_text("RECORD") or "").splitlines():
            path = line.split(",", 1)[0]
            parts = path.split("/")
            if parts[0].split(".")[0] not in tops or not path.endswith((".py", ".so", ".pyd", ".pyi")):
                continue
            module = [*parts[:-1], parts[-1].split(".")[0]]
            found.setdefault(".".join(module[:-1] if module[-1] == "__init__" else module), set()).add(_normal(name))
    return found


def owner(module: str, known: dict[str, set[str]]) -> set[str]:
    """The distributions that provide `module`, or its nearest parent that one provides."""
    parts = module.split(".")
    while parts:
        if ".".join(parts) in known:
            return known[".".join(parts)]
        parts.pop()
    return set()


def test_every_imported_package_is_pinned_in_requirements():
    pins, modules = pinned(), imported()
    known = owners({module.split(".")[0] for module in modules})
    assert {"streamlit", "pydantic", "langgraph.checkpoint.sqlite"} <= set(modules)  # the reader sees the imports
    unpinned = {module: sorted(by) for module, by in modules.items()
                if not owner(module, known) & set(pins)}
    assert not unpinned, f"imported but not pinned in requirements.txt: {unpinned}"


def test_the_reader_maps_a_namespace_packages_module_to_its_own_distribution():
    # langgraph is one import name over several distributions: each module is the one's that ships it
    known = owners({"langgraph", "yaml", "no_such_module_anywhere"})
    assert owner("langgraph.checkpoint.sqlite", known) == {"langgraph-checkpoint-sqlite"}
    assert owner("langgraph.checkpoint.postgres", known) == {"langgraph-checkpoint-postgres"}
    assert owner("langgraph.graph", known) == {"langgraph"}
    assert owner("yaml", known) == {"pyyaml"}
    assert owner("no_such_module_anywhere", known) == set()


def test_a_pin_is_read_with_its_extras_and_comments():
    pins = pinned()
    assert pins["psycopg"] and pins["streamlit"] and "python-dateutil" in pins
    assert all(re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", version) for version in pins.values()), pins


def test_requirements_name_only_installed_versions():
    installed = {_normal(d.metadata["Name"]): d.version for d in distributions()}
    assert {name: version for name, version in pinned().items() if installed.get(name) != version} == {}
