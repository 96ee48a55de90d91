"""Shared fixtures: a fresh engine on a temp data dir, one with a few incidents paused at approval,
and the workbench app on it. Plain helpers live in tests/support.py."""
from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import types
import uuid
from pathlib import Path

import pytest

from pipeline.store import checkpoints
from tests.openai_stub import OpenAIStub
from tests.support import (APP, FAILED_TEST, FIXTURES, KEY, LOGHUB, PG_SERVER, RECOMMENDATION, TIMEOUT,
                           careful_analyst, make_settings, missing, postgres_answers)

# tests never reach a real model endpoint or Splunk unless a test sets them itself
for _name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "INCIDENTIQ_MODEL", "SPLUNK_URL", "SPLUNK_TOKEN"):
    os.environ.pop(_name, None)
# one approval opens the gate unless a test asks for the two-person rule (tests/test_two_person.py),
# and no test tells a webhook anything unless it sets one (child processes inherit both)
os.environ["INCIDENTIQ_TWO_PERSON"] = "off"
# new evidence re-runs a paused analysis, as tests were written to see it; the product counts mere
# repeats until the incident grows INCIDENTIQ_REANALYSE_GROWTH-fold, which tests/test_repeats.py sets
os.environ["INCIDENTIQ_REANALYSE_GROWTH"] = "1"
os.environ.pop("INCIDENTIQ_NOTIFY_URLS", None)

try:  # browser assertions wait for the app's run, not Playwright's 5 s default: a run here can take longer on a busy machine
    from playwright.sync_api import expect as _expect
    _expect.set_options(timeout=60_000)
except ImportError:
    pass

_INDEX_CACHE: dict[str, Path] = {}

try:  # every AppTest scans all installed packages' metadata for Streamlit components, once per AppTest
    # (about two thirds of an AppTest's first run here); the packages do not change during a test run,
    # so the scan is done once per process, as `streamlit run` does it once per server
    import functools

    from streamlit.components.v2 import manifest_scanner as _manifest_scanner

    _manifest_scanner.scan_component_manifests = functools.cache(_manifest_scanner.scan_component_manifests)
except ImportError:  # a Streamlit without v2 components
    pass


try:  # AppTest compiles every page script anew on each run (a fresh ScriptCache a run: about a quarter of
    # a page run's CPU here, most of it rewriting the script's tree for magic), where `streamlit run`
    # compiles each script once per server; no test edits the scripts, so one cache per process
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache as _ScriptCache
    from streamlit.testing.v1 import app_test as _app_test
    from streamlit.testing.v1 import local_script_runner as _local_script_runner

    _SCRIPTS = _ScriptCache()
    _app_test.ScriptCache = _local_script_runner.ScriptCache = lambda: _SCRIPTS  # type: ignore[assignment,misc]
except ImportError:  # another Streamlit's layout: each run compiles, as before
    pass


@pytest.fixture(autouse=True)
def _collector_pace():
    """Every test starts at the collector's pace its worker started with, nothing frozen: a workbench
    opened in the test's process (AppTest) tunes it for the whole process and freezes what it
    opened (pipeline/gc_tuning.py)."""
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)
    gc.unfreeze()


@pytest.fixture(autouse=True)
def _children_closed(monkeypatch):
    """The pipes of every child process a test started and that has ended (killed mid-test, most
    of them) are closed when the test ends, not left to the garbage collector (whose unraisable
    ResourceWarnings would fail a later, unrelated test). Children still running are left alone:
    a module's server outlives the test that started it."""
    started: list[subprocess.Popen] = []
    init = subprocess.Popen.__init__

    def tracked(self, *args, **kwargs):
        init(self, *args, **kwargs)
        started.append(self)

    monkeypatch.setattr(subprocess.Popen, "__init__", tracked)
    yield
    monkeypatch.undo()
    for child in started:
        if child.poll() is not None:
            for pipe in (child.stdin, child.stdout, child.stderr):
                if pipe is not None:
                    pipe.close()


def _release_runtime() -> None:
    """Release the workbench an AppTest opened, if one is cached: st.cache_resource keeps it for the
    process, and its on_release (workbench.runtime.stop_workbench) stops its poller and closes its
    records store. Left cached, it stays open until a later test's AppTest evicts it, and a released
    runtime an AppTest still references was left to the garbage collector (on PostgreSQL an open
    psycopg session, whose ResourceWarning failed whichever later test the collector ran in)."""
    session = sys.modules.get("workbench.session")
    if session is not None:
        session._runtime.clear()


@pytest.fixture(autouse=True)
def _runtime_released():
    """Every test ends with no workbench cached (see _release_runtime)."""
    yield
    _release_runtime()


@pytest.fixture
def backend(request) -> str:
    """Where the stores live: `sqlite` (files in the data dir) unless a test is parametrised with
    `support.BOTH_BACKENDS`, which runs it on `postgres` too."""
    return getattr(request, "param", "sqlite")


@pytest.fixture
def database_url(backend, monkeypatch):
    """None on SQLite; on PostgreSQL a URL whose search_path is a fresh schema, dropped after the
    test, and set as INCIDENTIQ_DATABASE_URL (for Settings.from_env and child processes).

    Without a server on 127.0.0.1:5432 a Postgres case is skipped, except in CI (CI=true): there
    .ci/run starts the server, so a missing one is a failure."""
    if backend != "postgres":
        monkeypatch.delenv("INCIDENTIQ_DATABASE_URL", raising=False)
        yield None
        return
    import psycopg

    if not postgres_answers():
        missing(f"no PostgreSQL server answers at {PG_SERVER} (in CI .ci/run starts it)")
    schema = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(PG_SERVER, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    url = f"{PG_SERVER}?options=-csearch_path%3D{schema}"
    monkeypatch.setenv("INCIDENTIQ_DATABASE_URL", url)
    yield url
    _release_runtime()  # before its schema is dropped: its poller releases its lease there
    checkpoints.close_all()
    from pipeline.store import lease

    lease.close_sessions()
    with psycopg.connect(PG_SERVER, autocommit=True) as admin:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
def needs_loghub() -> Path:
    """The shared Loghub-2k folder (support.LOGHUB). Without it the test is skipped with the reason,
    except in CI (CI set), where the checkout provides it: there a missing folder is a failure."""
    if not LOGHUB.is_dir():
        missing(f"Loghub-2k not found at {LOGHUB} (../shared/data/loghub-2k or $INCIDENTIQ_LOGHUB_DIR)")
    return LOGHUB


@pytest.fixture(scope="session")
def knowledge_index(tmp_path_factory) -> Path:
    """The knowledge index engines open, built once per session (with the offline embedder engines
    use, so its collection is already built); a data dir takes a copy of it."""
    if "index" not in _INDEX_CACHE:
        from pipeline.knowledge.embeddings import embedder_from_setting
        from pipeline.knowledge.index import KnowledgeBase

        base = tmp_path_factory.mktemp("kb") / "knowledge-index"
        KnowledgeBase(index_dir=base, embedder=embedder_from_setting("offline")).sync()
        _INDEX_CACHE["index"] = base
    return _INDEX_CACHE["index"]


@pytest.fixture
def data_dir(tmp_path, knowledge_index, database_url) -> Path:
    """A temp data dir whose knowledge index is copied from one built once per session."""
    d = tmp_path / "data"
    shutil.copytree(knowledge_index, d / "knowledge-index")
    return d


@pytest.fixture(scope="session")
def offline_analyst():
    """The offline analyst on the bundled docs with the hashed n-gram embedder (no index on disk): the
    analyst tests read its RCA of their own lines with support.offline_rca."""
    from pipeline.analyst.offline import OfflineAnalyst
    from pipeline.knowledge.embeddings import HashedNgramEmbedder
    from pipeline.knowledge.index import KnowledgeBase

    return OfflineAnalyst(KnowledgeBase(index_dir=None, embedder=HashedNgramEmbedder()))


@pytest.fixture
def analyst_for():
    """How the `engine` fixture builds its analyst: None for the configured one (offline). A test
    swaps in another by parametrizing this name: `@pytest.mark.parametrize("analyst_for", [...])`."""
    return None


@pytest.fixture
def engine(request, data_dir, monkeypatch, analyst_for, database_url, tmp_path_factory):
    """A fresh engine (offline analyst, unless `analyst_for` says otherwise) on a temp data dir.
    Where the test asks for `paused_engine`, its data dir is a copy of one built the same way
    (`_paused_copy`)."""
    from pipeline.composition import open_engine

    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    if "paused_engine" in request.fixturenames:
        _paused_copy(data_dir, analyst_for, database_url, monkeypatch, tmp_path_factory)
    eng = open_engine(make_settings(data_dir), analyst_for=analyst_for)
    yield eng
    eng.records.close()
    checkpoints.close_all()


_PAUSED_DIRS: dict[tuple, Path] = {}


def _paused_copy(data_dir: Path, analyst_for, database_url, monkeypatch, tmp_path_factory) -> None:
    """Fill `data_dir` with a copy of a data dir where tests/fixtures/small.jsonl was ingested and its
    incidents paused at approval, built once per worker for each set of INCIDENTIQ_* settings: about
    400 tests start from it, and ingesting and analysing it for each cost each test half a second.
    Only where the result can only be the same: the offline analyst on SQLite, nothing of the product
    patched by a fixture before the engine opens (the event times are the fixture's own, so the copy's
    incidents are as old as a fresh ingest's). Elsewhere the data dir is left empty and
    `paused_engine` ingests as before."""
    if analyst_for is not None or database_url is not None or any(map(_of_the_product, monkeypatch._setattr)):
        return
    from pipeline.composition import open_engine
    from pipeline.unattended.file_ingest import ingest_path

    key = tuple(sorted((k, v) for k, v in os.environ.items()
                       if k.startswith("INCIDENTIQ_") and k != "INCIDENTIQ_DATA_DIR"))
    if key not in _PAUSED_DIRS:
        built = tmp_path_factory.mktemp("paused") / "data"
        shutil.copytree(data_dir, built)
        eng = open_engine(make_settings(built))
        try:
            ingest_path(eng, FIXTURES / "small.jsonl")
        finally:
            eng.records.close()
            checkpoints.close_all()
        _PAUSED_DIRS[key] = built
    shutil.copytree(_PAUSED_DIRS[key], data_dir, dirs_exist_ok=True)


def _of_the_product(patched: tuple) -> bool:
    target = patched[0]
    module = getattr(target, "__name__", "") if isinstance(target, types.ModuleType) else getattr(target, "__module__", "")
    return (module or "").split(".")[0] in ("pipeline", "workbench", "app_pages", "app")


@pytest.fixture
def paused_engine(engine):
    """An engine with the incidents of tests/fixtures/small.jsonl paused at approval."""
    from pipeline.unattended.file_ingest import ingest_path

    if not engine.records.incidents():  # not started from the copy (`_paused_copy`)
        ingest_path(engine, FIXTURES / "small.jsonl")
    return engine


@pytest.fixture
def app(paused_engine, monkeypatch):
    """The workbench app (AppTest from app.py) on the paused engine's data dir, first run done, poller off."""
    from streamlit.testing.v1 import AppTest

    from workbench import session

    monkeypatch.setenv("INCIDENTIQ_POLLER", "off")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, [e.value for e in at.exception]
    yield at
    session._runtime.clear()  # releases the cached runtime: stops its poller (had one started), closes its store


@pytest.fixture
def stub():
    with OpenAIStub() as server:
        server.answers["RCAAnswer"] = careful_analyst
        server.answers["RecommendationAnswer"] = RECOMMENDATION
        server.answers["FixPlanAnswer"] = {"plan": ["Set maximumPoolSize in application.yml", "Load test"]}
        yield server


@pytest.fixture
def model_engine(data_dir, stub, monkeypatch):
    """An engine whose analyst is the chat model behind the loopback server."""
    from pipeline.composition import open_engine

    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    eng = open_engine(make_settings(data_dir, model="test-model", base_url=stub.base_url))
    yield eng
    eng.records.close()
    checkpoints.close_all()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed setup or call is marked on the item (support.FAILED_TEST), for a page fixture's
    teardown to take its post-mortem screenshot (support.browser_page) only then."""
    report = yield
    if report.failed and report.when in ("setup", "call"):
        item.stash[FAILED_TEST] = True
    return report


_DURATIONS = Path(__file__).with_name("durations.json")


def pytest_collection_modifyitems(config, items):
    """The longest files first (their seconds in tests/durations.json, tools/test_durations.py), so
    the workers, each taking whole files in this order (`--no-loadscope-reorder`), end together
    instead of one running a late slow file alone. A file not listed counts as the median one; the
    tests inside a file keep their order."""
    try:
        seconds = json.loads(_DURATIONS.read_text())
    except (OSError, ValueError):
        return
    known = sorted(seconds.values())
    median = known[len(known) // 2] if known else 0.0
    rank = {}
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        rank.setdefault(path, (-seconds.get(path, median), len(rank)))
    items.sort(key=lambda item: rank[item.nodeid.split("::", 1)[0]])
