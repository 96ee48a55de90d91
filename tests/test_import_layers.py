"""Modules import without circles and packages in one direction, read from the source's AST, so
a new circle fails here rather than as an ImportError that depends on which module loads first.

For the direction of packages every import counts, including those inside functions: a deferred
import still makes the packages depend on each other.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from tests.support import ROOT

PACKAGE = ROOT / "pipeline"
# What the engine is built from: none of it may reach up to what drives the engine.
LOWER = ("sources", "store", "knowledge", "analyst", "state", "errors", "config", "openai_endpoint", "sla", "clock",
         "redaction")
UPPER = ("engine", "review", "cli", "operations")
# Known upward imports, each a debt, not a rule (the list may only shrink):
KNOWN_UPWARD: set[tuple[str, str]] = set()


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "pipeline"


def imports(*, deferred: bool = True) -> dict[str, set[str]]:
    """module -> the pipeline modules it imports anywhere in its file (or only at its top level)."""
    graph: dict[str, set[str]] = defaultdict(set)
    known = {_module(path) for path in PACKAGE.rglob("*.py")}
    for path in PACKAGE.rglob("*.py"):
        module = _module(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree) if deferred else tree.body:
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("pipeline"):
                # `from pipeline.engine import nodes` imports the submodule; other names come from the module
                submodules = {f"{node.module}.{a.name}" for a in node.names} & known
                graph[module].update(submodules)
                if len(submodules) < len(node.names):
                    graph[module].add(node.module)
            elif isinstance(node, ast.Import):
                graph[module].update(a.name for a in node.names if a.name.startswith("pipeline"))
    return graph


def package_edges() -> dict[str, dict[str, set[str]]]:
    """package -> imported package -> the modules that import it."""
    edges: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for module, targets in imports().items():
        for target in targets:
            a, b = _package(module), _package(target)
            if a != b and b != "pipeline":
                edges[a][b].add(module)
    return edges


def test_the_graph_sees_the_imports_it_checks():
    graph = imports()
    assert "pipeline.analyst.offline" in graph["pipeline.engine.nodes"]
    assert "pipeline.openai_endpoint" in graph["pipeline.knowledge.openai_embeddings"]  # a deferred user too


def test_the_knowledge_base_does_not_import_the_analyst():
    assert "analyst" not in package_edges()["knowledge"]


def test_lower_packages_do_not_import_what_drives_the_engine():
    upward = {(module, upper) for lower in LOWER for upper, modules in package_edges()[lower].items()
              if upper in UPPER for module in modules}
    assert upward - KNOWN_UPWARD == set()
    assert KNOWN_UPWARD <= upward, "a known upward import was removed: drop it from KNOWN_UPWARD"


def test_no_module_is_part_of_an_import_cycle():
    # top-level imports only: a circle of them fails at import time; a deferred import inside a
    # function (a registry such as sources.open_source) loads after its module is complete
    graph = imports(deferred=False)
    cyclic = [(module, target) for module, targets in graph.items() for target in targets
              if target != module and target in graph and _reaches(graph, target, module)]
    assert cyclic == []


def test_in_ingest_only_the_ingest_command_drives_the_engine():
    modules = {m for upper, ms in package_edges()["ingest"].items() if upper in UPPER for m in ms}
    assert modules == {"pipeline.ingest.files"}  # ingest_path stores a file's lines, then runs incidents


def _reaches(graph, start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(graph.get(node, ()))
    return False


def test_the_openai_embeddings_import_first_in_a_fresh_interpreter():
    # the order that used to close the circle: embeddings -> openai_embeddings -> analyst -> knowledge
    code = "import pipeline.knowledge.openai_embeddings, pipeline.knowledge.embeddings, pipeline.analyst.model"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
