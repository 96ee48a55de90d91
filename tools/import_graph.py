"""The import graph of pipeline/, read from the source with `ast` (nothing is imported).

    python tools/import_graph.py [ROOT]

Prints the package graph (package -> the packages it imports, with how many of those imports
are deferred, i.e. inside a function), the module-level cycles (strongly connected components
of the module graph, deferred imports counted), and modules and lines per package. ROOT is a
checkout (default: this one), so two commits can be compared from worktrees.
"""
from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path


def module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "pipeline"


def module_imports(root: Path) -> tuple[dict[str, dict[str, bool]], dict[str, int]]:
    """module -> {imported pipeline module: whether every import of it is deferred}, and module -> lines."""
    paths = sorted((root / "pipeline").rglob("*.py"))
    known = {module_name(root, p) for p in paths}
    graph: dict[str, dict[str, bool]] = {}
    lines: dict[str, int] = {}
    for path in paths:
        module = module_name(root, path)
        text = path.read_text(encoding="utf-8")
        lines[module] = text.count("\n")
        tree = ast.parse(text)
        top = {id(node) for node in tree.body}
        # a TYPE_CHECKING block or a try at the top is still the module's top level
        for node in tree.body:
            if isinstance(node, (ast.If, ast.Try)):
                top |= {id(n) for n in ast.walk(node)}
        found: dict[str, bool] = {}
        for node in ast.walk(tree):
            targets: set[str] = set()
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("pipeline"):
                submodules = {f"{node.module}.{a.name}" for a in node.names} & known
                targets |= submodules
                if len(submodules) < len(node.names):
                    targets.add(node.module or "")
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name.startswith("pipeline")}
            for target in targets - {module}:
                deferred = id(node) not in top
                found[target] = found.get(target, True) and deferred
        graph[module] = found
    return graph, lines


def cycles(graph: dict[str, dict[str, bool]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in graph:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(out)


def report(root: Path) -> str:
    graph, lines = module_imports(root)
    edges: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for module, targets in graph.items():
        for target, deferred in targets.items():
            a, b = package_of(module), package_of(target)
            if a != b:
                edges[a][b][0] += 1
                edges[a][b][1] += deferred
    out = ["package graph (package -> imported package: module imports, of which deferred)"]
    for package in sorted(edges):
        parts = [f"{b} {n}" + (f" ({d} deferred)" if d else "") for b, (n, d) in sorted(edges[package].items())]
        out.append(f"  {package} -> " + ", ".join(parts))
    deferred_total = sum(d for targets in graph.values() for d in targets.values())
    out.append(f"module imports: {sum(len(t) for t in graph.values())}, deferred: {deferred_total}")
    found = cycles(graph)
    out.append(f"module cycles (deferred imports counted): {len(found)}")
    out += [f"  {' <-> '.join(component)}" for component in found]
    out.append("modules and lines per package")
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for module, n in lines.items():
        per[package_of(module)][0] += 1
        per[package_of(module)][1] += n
    for package, (modules, n) in sorted(per.items()):
        out.append(f"  {package:<16}{modules:>4} modules {n:>6} lines")
    out.append(f"  {'total':<16}{len(lines):>4} modules {sum(lines.values()):>6} lines")
    return "\n".join(out)


if __name__ == "__main__":
    print(report(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent))
