"""Modules import without circles and packages in one direction, read from the source's AST, so
a new circle fails here rather than as an ImportError that depends on which module loads first.

For the direction of packages every import counts, including those inside functions: a deferred
import still makes the packages depend on each other.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from tests.support import ROOT

PACKAGE = ROOT / "pipeline"
# Every package and top-level module of pipeline/, lowest first: each may import only what stands
# before it (deferred imports count). A new package or module takes its place here.
ORDER = (
    "errors", "clock", "gc_tuning", "state", "storable",
    "store",            # the records and checkpoint stores: a leaf, below everything that decides
    "ingest",           # lines into events: formats, levels, multi-line, templates
    "config", "redaction", "openai_endpoint",
    "knowledge", "analyst",
    "incidents",        # events into incidents: correlation, the opening rule, the SLA
    "sources", "notifications",
    "engine",           # the graph, its nodes and the runner
    "review", "backtest",
    "composition",      # the one place the parts are built and wired
    "evaluation",
    "unattended",       # the poller and what it runs each poll, the `ingest PATH` driver
    "operations",       # what the Operations page reads
    "services", "cli", "__main__",
)
# Known upward imports, each a debt, not a rule (the set may only shrink):
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


def test_every_package_and_top_level_module_has_its_place_in_the_order():
    present = {_package(_module(path)) for path in PACKAGE.rglob("*.py")} - {"pipeline"}
    assert present - set(ORDER) == set(), "give the new package its place in ORDER"
    assert set(ORDER) - present == set(), "a package in ORDER is gone: drop it"


def test_no_package_imports_one_above_it():
    rank = {name: i for i, name in enumerate(ORDER)}
    upward = {(module, target) for package, targets in package_edges().items()
              for target, modules in targets.items() if rank[target] > rank[package] for module in modules}
    assert upward - KNOWN_UPWARD == set()
    assert KNOWN_UPWARD <= upward, "a known upward import was removed: drop it from KNOWN_UPWARD"


def test_the_store_imports_nothing_above_errors_clock_and_state():
    assert set(package_edges()["store"]) <= {"errors", "clock", "state"}


def test_the_engine_is_driven_from_above_it_only():
    # reading lines, turning them into incidents and storing them never run the engine
    for lower in ("store", "ingest", "incidents", "sources", "notifications"):
        assert "engine" not in package_edges()[lower], lower


def test_no_module_is_part_of_an_import_cycle():
    # top-level imports only: a circle of them fails at import time; a deferred import inside a
    # function (a registry such as sources.open_source) loads after its module is complete
    graph = imports(deferred=False)
    cyclic = [(module, target) for module, targets in graph.items() for target in targets
              if target != module and target in graph and _reaches(graph, target, module)]
    assert cyclic == []


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


def test_commands_that_read_records_start_without_the_graph_or_chroma(tmp_path):
    # `list`, `show` and `deadletters` are what scripts call most; LangGraph, LangChain and Chroma
    # cost about a second of imports a process, and these commands need none of them
    code = ("import sys; from pipeline.cli import main\n"
            "for argv in (['list', '--json'], ['deadletters', '--json'], ['show', 'INC-none', '--json']):\n"
            "    main(argv)\n"
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'langgraph', 'langchain_core', 'chromadb'})\n"
            "print('HEAVY', heavy)")
    env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(tmp_path / "data")}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                            env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "HEAVY []" in result.stdout, result.stdout[-500:]
