"""Modules import without circles and packages in one direction, read from the source's AST, so
a new circle fails here rather than as an ImportError that depends on which module loads first.

Every import counts, including those inside functions and under TYPE_CHECKING: a deferred import
still makes the packages (and the modules) depend on each other. The source is parsed once per
session (tools/import_graph.py reads it; `python tools/import_graph.py` prints the same graph).
"""
from __future__ import annotations

import functools
from collections import defaultdict

from tests.support import ROOT
from tools.import_graph import cycles, module_imports, package_of

# Every package and top-level module of pipeline/, lowest first: each may import only what stands
# before it (deferred imports count). A new package or module takes its place here.
ORDER = (
    "errors", "clock", "gc_tuning",
    "prevalidated",     # pydantic models built and copied without validation (the slots adapter)
    "state", "storable",
    "store",            # the records and checkpoint stores: a leaf, below everything that decides
    "ingest",           # lines into events: formats, levels, multi-line, layouts
    "config", "redaction", "openai_endpoint",
    "knowledge",        # error docs, their index, retrieval (signature matching, severity)
    "analyst",
    "incidents",        # events into incidents: fingerprints, correlation, the opening rule, the SLA
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


@functools.cache
def module_graph() -> dict[str, dict[str, bool]]:
    """module -> {pipeline module it imports anywhere in its file: whether only deferred}, parsed once."""
    return module_imports(ROOT)[0]


def imports() -> dict[str, set[str]]:
    """module -> the pipeline modules it imports anywhere in its file."""
    return {module: set(targets) for module, targets in module_graph().items()}


@functools.cache
def package_edges() -> dict[str, dict[str, set[str]]]:
    """package -> imported package -> the modules that import it."""
    edges: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for module, targets in imports().items():
        for target in targets:
            a, b = package_of(module), package_of(target)
            if a != b and b != "pipeline":
                edges[a][b].add(module)
    return edges


def test_the_graph_sees_the_imports_it_checks():
    graph = imports()
    assert "pipeline.knowledge.retrieval" in graph["pipeline.engine.nodes"]
    assert "pipeline.openai_endpoint" in graph["pipeline.knowledge.openai_embeddings"]  # a deferred user too


def test_the_knowledge_base_does_not_import_the_analyst():
    assert "analyst" not in package_edges()["knowledge"]


def test_every_package_and_top_level_module_has_its_place_in_the_order():
    present = {package_of(module) for module in module_graph()} - {"pipeline"}
    assert present - set(ORDER) == set(), "give the new package its place in ORDER"
    assert set(ORDER) - present == set(), "a package in ORDER is gone: drop it"


def test_no_package_imports_one_above_it():
    rank = {name: i for i, name in enumerate(ORDER)}
    upward = {(module, target) for package, targets in package_edges().items()
              for target, modules in targets.items() if rank[target] > rank[package] for module in modules}
    assert upward - KNOWN_UPWARD == set()
    assert KNOWN_UPWARD <= upward, "a known upward import was removed: drop it from KNOWN_UPWARD"


def test_the_store_imports_nothing_above_errors_clock_and_state():
    # (prevalidated: the event copies its cache hands out are built as pydantic builds them)
    assert set(package_edges()["store"]) <= {"errors", "clock", "prevalidated", "state"}


def test_the_engine_is_driven_from_above_it_only():
    # reading lines, turning them into incidents and storing them never run the engine
    for lower in ("store", "ingest", "incidents", "sources", "notifications"):
        assert "engine" not in package_edges()[lower], lower


def test_no_module_is_part_of_an_import_cycle():
    # deferred imports too: a circle closed inside a function still ties the modules together
    # (and fails, or not, depending on which of them a process loads first)
    assert cycles(module_graph()) == []


def test_the_cycle_check_sees_a_cycle_closed_by_a_deferred_import():
    # the shape the layers had before: offline imported reading at the top, reading offline in a function
    graph = {"a.offline": {"a.reading": False}, "a.reading": {"a.offline": True}, "a.other": {"a.reading": False}}
    assert cycles(graph) == [["a.offline", "a.reading"]]
