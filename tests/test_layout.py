"""The workbench reaches the engine only through its services: pages and components import
`pipeline.services`, `pipeline.errors`, `pipeline.state` and `pipeline.config`, nothing deeper,
and no storage or graph library, so what lies behind the services can change under them."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UI_FILES = [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py")), *sorted((ROOT / "workbench").glob("*.py"))]
ALLOWED_PIPELINE = {"pipeline", "pipeline.services", "pipeline.errors", "pipeline.state", "pipeline.config"}
FORBIDDEN_LIBRARIES = {"sqlite3", "langgraph", "chromadb", "langchain_openai", "openai", "httpx"}


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, at any depth of the file (function-level imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            if node.module == "pipeline":  # `from pipeline import X` names the submodule X
                found |= {f"pipeline.{alias.name}" for alias in node.names}
    return found


def test_ui_files_are_found():
    names = {p.name for p in UI_FILES}
    assert {"app.py", "inbox.py", "incident.py", "knowledge.py", "operations.py", "runtime.py"} <= names


def test_pages_and_components_import_only_the_services_errors_state_and_config():
    offenders = {}
    for path in UI_FILES:
        bad = sorted(m for m in imports_of(path) if m.split(".")[0] == "pipeline" and m not in ALLOWED_PIPELINE)
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert offenders == {}


def test_pages_and_components_open_no_store_graph_or_model_directly():
    offenders = {}
    for path in UI_FILES:
        bad = sorted(m for m in imports_of(path) if m.split(".")[0] in FORBIDDEN_LIBRARIES)
        if bad:
            offenders[str(path.relative_to(ROOT))] = bad
    assert offenders == {}


def test_the_import_reader_sees_function_level_and_from_imports(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from pipeline import records\n\ndef f():\n    import sqlite3\n    from pipeline.store.records import Records\n")
    assert {"pipeline.records", "sqlite3", "pipeline.store.records"} <= imports_of(probe)
