"""Plain helpers the tests share (fixtures live in conftest.py): paths and settings, the CLI in this
process and in a child process, small readers of the stores, driving the workbench through AppTest,
and the scripted answers of the model-path tests. Test modules import from here, never from each
other or from conftest."""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from bench.old_stores import written_as_before_schema_11  # noqa: F401  (the upgrade tests' old stores)
from pipeline.cli import main
from pipeline.clock import ManualClock
from pipeline.config import Settings
from pipeline.engine.graph import thread_config
from pipeline.ingest.events import normalize
from pipeline.knowledge.retrieval import find_similar
from pipeline.state import RCA, IncidentState, LogEvent

if TYPE_CHECKING:  # streamlit loads only for the tests that drive the app
    from streamlit.testing.v1 import AppTest

    from tests.openai_stub import Request

ROOT = Path(__file__).resolve().parent.parent
# the shared Loghub-2k logs and their ground truth (../shared beside the repo, or $INCIDENTIQ_LOGHUB_DIR);
# a test that reads them asks for conftest's `needs_loghub`
LOGHUB = Path(os.environ.get("INCIDENTIQ_LOGHUB_DIR", ROOT.parent / "shared" / "data" / "loghub-2k"))
LOGHUB_SYSTEMS = ("Apache", "HDFS", "Hadoop", "Linux", "OpenSSH", "Proxifier", "Spark", "Zookeeper")
# the PostgreSQL server the Postgres cases use (conftest's `database_url` makes a schema per test)
PG_SERVER = os.environ.get("INCIDENTIQ_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
# run a test on both stores: its `engine`, `data_dir` and `database_url` fixtures follow `backend`
BOTH_BACKENDS = pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)
# every stored event's id, as rows (an incident's events) and in context blocks (store/context_blocks.py),
# to count from: f"SELECT count(*), count(DISTINCT event_id) FROM {STORED_IDS}"
STORED_IDS = "(SELECT event_id FROM events UNION ALL SELECT event_id FROM context_ids) AS stored"


def in_ci() -> bool:
    """Whether the tests run in CI (CI set), where everything a test needs is provided."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def missing(what: str) -> NoReturn:
    """Stops a test whose input is not here: a skip with the reason locally, a failure in CI."""
    if in_ci():
        pytest.fail(f"CI: {what}")
    pytest.skip(what)


def stored_bodies(data_dir: Path) -> list[dict]:
    """Every event stored in a data dir's SQLite records store, as its JSON body (rows and context blocks)."""
    from pipeline.store.records import Records

    records = Records(Path(data_dir) / "app.sqlite3")
    try:
        return [json.loads(e.model_dump_json()) for e in records.all_events()]
    finally:
        records.close()


def count(where, sql: str) -> int:
    """One number read by a fresh connection to the records store (a SQLite file, read-only, or
    a postgresql:// URL), as another process sees it; 0 while its tables do not exist yet."""
    import sqlite3

    import psycopg

    if str(where).startswith("postgresql://"):
        try:
            with psycopg.connect(str(where), autocommit=True) as conn:
                return conn.execute(sql).fetchone()[0]
        except psycopg.errors.UndefinedTable:
            return 0
    try:
        conn = sqlite3.connect(f"file:{where}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute(sql).fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def postgres_answers() -> bool:
    import psycopg

    try:
        psycopg.connect(PG_SERVER, connect_timeout=3).close()
    except psycopg.OperationalError:
        return False
    return True
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SAMPLE_REPO = ROOT / "samples" / "pos-backend"


def make_settings(data_dir: Path, **overrides) -> Settings:
    """Settings for a temp data dir, with the repo's sample source tree."""
    # evidence merges at once in tests unless a test asks for the poller's delay
    overrides.setdefault("merge_delay", 0.0)
    return Settings.from_env(data_dir=data_dir, repo_dir=SAMPLE_REPO, **overrides)


class ChaosFigures(UserWarning):
    """The chaos suites' figures (tests/test_chaos.py, tests/test_chaos_surfaces.py), shown in the
    warnings summary (pyproject's filterwarnings lets them through)."""


# -- the CLI -------------------------------------------------------------------------------------

def cli(capsys, *args: str) -> tuple[int, str, str]:
    """Run `python -m pipeline ARGS` in this process: (exit code, stdout, stderr)."""
    capsys.readouterr()
    try:
        code = main([str(a) for a in args])
    except SystemExit as exc:  # argparse refusing the arguments, as `python -m pipeline` would exit
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def cli_here(data_dir: Path | None, *args: str, cwd: Path | None = None, clean: bool = False,
             **env: str) -> subprocess.CompletedProcess:
    """`python -m pipeline ARGS` as run_cli runs it (the data dir, if given, and the sample source tree
    set; `clean`: no INCIDENTIQ_/SPLUNK_/OPENAI_ setting but those), through the CLI's entry point
    in this process: its exit code, stdout and stderr, the settings and the working directory set for
    the call only. A child process costs ~3 s of imports; use run_cli where the process itself is
    what is tested (its exit status, a kill, its log records on stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        if clean:
            for name in [n for n in os.environ if n.startswith(("INCIDENTIQ_", "SPLUNK_", "OPENAI_"))]:
                patch.delenv(name)
        if data_dir is not None:
            patch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
            patch.setenv("INCIDENTIQ_REPO_DIR", str(SAMPLE_REPO))
        for name, value in env.items():
            patch.setenv(name, value)
        if cwd is not None:
            patch.chdir(cwd)
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse refusing the arguments, as `python -m pipeline` would exit
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return subprocess.CompletedProcess(["python", "-m", "pipeline", *map(str, args)], code, out.getvalue(),
                                       err.getvalue())


def cli_json(capsys, *args: str):
    code, out, err = cli(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def child_env(data_dir: Path) -> dict:
    return {**os.environ, "INCIDENTIQ_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}


def run_child(data_dir: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run `python -m pipeline ARGS` in a new process on the data dir."""
    return subprocess.run([sys.executable, "-m", "pipeline", *map(str, args)], cwd=ROOT, env=child_env(data_dir),
                          capture_output=True, text=True, timeout=timeout)


def run_cli(data_dir: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    """Run `python -m pipeline ARGS` in a new process on the data dir and the sample source tree."""
    env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(data_dir), "INCIDENTIQ_REPO_DIR": str(SAMPLE_REPO)}
    return subprocess.run([sys.executable, "-m", "pipeline", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=240, **kwargs)


# -- the stores ----------------------------------------------------------------------------------

def paused_ids(engine) -> list[str]:
    return [r["incident_id"] for r in engine.records.incidents(status="awaiting_approval")]


def pending(engine, incident_id: str) -> str:
    """The interrupt id the incident waits on (from the record)."""
    row = engine.records.incident(incident_id)
    assert row["status"] == "awaiting_approval", row["status"]
    return row["pending_interrupt_id"]


def checkpoint_count(engine, incident_id: str) -> int:
    return len(list(engine.graph.get_state_history(thread_config(incident_id))))


def by_category(engine, category: str) -> str:
    return next(r["incident_id"] for r in engine.records.incidents() if r["category"] == category)


def state_of(engine, incident_id) -> IncidentState:
    return IncidentState.model_validate(engine.graph.get_state(thread_config(incident_id)).values)


def write_jsonl(path: Path, events: list[dict]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


# -- the workbench through AppTest (the `app` fixture is in conftest.py) -----------------------------

APP = str(ROOT / "app.py")
INCIDENT_PAGE = "app_pages/incident.py"
TIMEOUT = 60


def as_reviewer(at: AppTest, name: str) -> AppTest:
    """Type the reviewer's name in the sidebar, as a person would."""
    return at.sidebar.text_input(key="app_reviewer_name").input(name).run()


def open_incident(at: AppTest, incident_id: str) -> AppTest:
    at.switch_page(INCIDENT_PAGE)
    at.query_params["incident"] = incident_id
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_tab(at: AppTest, incident_id: str, label: str) -> AppTest:
    """Open one of the incident page's tabs (only the open one is computed), as a click would."""
    at.session_state[f"incident_tab_{incident_id}"] = label
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def click_chart(at: AppTest, key: str, selection: dict) -> AppTest:
    """Send a Vega-Lite chart's selection (`{param: [point fields, ...]}`) as the browser does after
    clicks on its points: the chart is a widget AppTest has no setter for, so its state goes with
    the other widgets' in the next run's widget states."""
    chart = next(c for c in at.get("vega_lite_chart") if c.key == key)
    states = at._tree.get_widget_states()
    state = states.widgets.add()
    state.id = chart.proto.id
    state.string_value = json.dumps({"selection": selection})
    at._run(states)
    assert not at.exception, [e.value for e in at.exception]
    return at


def choose_decision(at: AppTest, engine, incident_id: str, label: str) -> AppTest:
    """Choose one of the decision panel's decisions (Approve, Reject, Changes, Edit), as a click would."""
    interrupt = engine.records.incident(incident_id)["pending_interrupt_id"]
    at.session_state[f"incident_{interrupt[:12]}_tab"] = label
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(at: AppTest) -> str:
    """Everything the page says in messages, text, markdown and captions, for assertions
    (markdown escapes removed: `as\\_node` reads `as_node`)."""
    parts = []
    for kind in ("success", "info", "warning", "error", "text", "markdown", "caption", "title", "code"):
        parts += [str(e.value) for e in getattr(at, kind)]
    return unescape("\n".join(parts))


def said(at: AppTest, kind: str) -> str:
    """The messages of one kind (success, info, warning, error), markdown escapes removed."""
    return unescape(" ".join(str(e.value) for e in getattr(at, kind)))


def unescape(text: str) -> str:
    """Markdown as the reader sees it: escapes undone, the invisible joiners of workbench.literal dropped."""
    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")


# -- the workbench in a real browser: `streamlit run app.py` on loopback ---------------------------

CHROMIUM = Path("/usr/bin/chromium")
# headless Chromium that asks nothing of the network on its own (no updates, sync or field trials)
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen, log: Path, timeout: float = 60) -> None:
    """Wait until `url` answers 200; a process that exits, or no answer in time, fails with its log."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not come up: {log.read_text(errors='replace')}")
        time.sleep(0.3)


@contextlib.contextmanager
def process(args: list[str], *, log: Path, env: dict | None = None, cwd: Path = ROOT):
    """A child process with its output in `log`, terminated (then killed) on exit."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def open_incident_options(page) -> list[str]:
    """The ids of the rows, in the table's order (the "Open incident" box lists them so)."""
    from playwright.sync_api import expect

    box = page.get_by_label("Open incident", exact=True).first
    for _ in range(6):  # the 5 s refresh redrawing the box as it opens closes its list: open it again
        box.click()
        try:
            expect(page.get_by_role("option").first).to_be_visible(timeout=5_000)
            break
        except AssertionError:
            page.keyboard.press("Escape")
    options = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    return options


def settle(page, timeout: float = 60) -> None:
    """Wait until Streamlit has painted a run and finished it: an element of the app is on the page
    (a page still connecting shows neither a status widget nor skeletons, and would pass the rest),
    no status widget, no skeletons."""
    page.wait_for_selector('[data-testid="stElementContainer"]', state="attached", timeout=timeout * 1000)
    page.wait_for_timeout(300)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (page.locator('[data-testid="stStatusWidget"]').count() == 0
                and page.locator('[data-testid="stSkeleton"]').count() == 0):
            page.wait_for_timeout(300)
            return
        page.wait_for_timeout(150)
    raise AssertionError("the app did not finish its run")


def select_first_row(page, frame, opened: str, tries: int = 3) -> None:
    """Click the first row's selection box of the data frame `frame` (a locator of its stDataFrame)
    until the JS condition `opened` holds. The grid is a canvas: a click that lands while a busy
    app is still laying it out selects nothing, so the box is measured again and clicked again."""
    from playwright.sync_api import TimeoutError as NotYet

    for attempt in range(tries):
        settle(page)
        frame.scroll_into_view_if_needed()
        grid = frame.locator("canvas").first.bounding_box()
        page.mouse.click(grid["x"] + 16, grid["y"] + 35 + 17)  # below the 35 px header, in the box
        try:
            page.wait_for_function(opened, timeout=30_000)
            return
        except NotYet:
            if attempt == tries - 1:
                raise


def wait_for(condition, timeout: float = 90.0, step: float = 0.05):
    """Poll `condition` until it returns something truthy (returned) or `timeout` seconds pass (AssertionError)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("timed out waiting")


def poller_env(data_dir: Path, log: Path, database_url: str) -> dict:
    """The environment of a poller process on `database_url` reading the file source `log`: nothing of
    this process's INCIDENTIQ_/OPENAI_/SPLUNK_ settings, no merge delay, one approval opens the gate."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SPLUNK_", "INCIDENTIQ_"))}
    env.update(INCIDENTIQ_DATA_DIR=str(data_dir), INCIDENTIQ_SOURCE=f"file:{log}", PYTHONPATH=str(ROOT),
               INCIDENTIQ_REPO_DIR=str(SAMPLE_REPO), INCIDENTIQ_DATABASE_URL=database_url,
               INCIDENTIQ_MERGE_DELAY="0", INCIDENTIQ_TWO_PERSON="off")
    return env


def alert(page, text):
    """In the browser: a message box's (success, error, …) text, not the toast that says it again."""
    return page.get_by_test_id(re.compile(r"^stAlertContent")).get_by_text(text)


def choose(page, label, text: str) -> None:
    """In the browser: pick the option containing `text` in the selectbox labelled `label` (a string,
    matched exactly, or a pattern); typing filters the list."""
    box = (page.get_by_label(label, exact=True) if isinstance(label, str) else page.get_by_label(label)).first
    if text in box.input_value():
        return  # already chosen (the list would not open for its own value)
    box.click()
    box.fill(text)
    page.get_by_role("option").filter(has_text=text).first.click()
    settle(page)


ARTIFACTS = ROOT / "test-artifacts"


@contextlib.contextmanager
def artifacts_on_failure(page, name: str):
    """A browser test's full-page screenshot in test-artifacts/<name>.png when the block fails."""
    try:
        yield
    except BaseException:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        raise


@contextlib.contextmanager
def streamlit_app(data_dir: Path, work_dir: Path, *, port: int | None = None, secrets: str | None = None,
                  script: Path = ROOT / "app.py"):
    """`streamlit run app.py` (or another `script`) on the data dir (poller off, demo sign-in unless `secrets` has an
    `[auth]` section, the sample source tree) on a loopback port; yields its base URL once
    /_stcore/health answers. `secrets` is a secrets.toml text (`{app_port}` is replaced by the port);
    the log is work_dir/streamlit.log. A port it chose itself that another process took before the
    app bound it (the other test worker's connections use ephemeral ports too) is chosen again."""
    env = {**os.environ, "INCIDENTIQ_DATA_DIR": str(data_dir), "INCIDENTIQ_POLLER": "off",
           "INCIDENTIQ_REPO_DIR": str(SAMPLE_REPO)}
    env.pop("INCIDENTIQ_AUTH", None)
    log = work_dir / "streamlit.log"
    attempts = 1 if port else 3
    for attempt in range(1, attempts + 1):
        chosen = port or free_port()
        args = [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true", "--server.port",
                str(chosen), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
                "--server.fileWatcherType", "none"]
        if secrets is not None:
            path = work_dir / "secrets.toml"
            path.write_text(secrets.replace("{app_port}", str(chosen)))
            args += ["--secrets.files", str(path)]
        with process(args, log=log, env=env) as proc:
            try:
                wait_http(f"http://127.0.0.1:{chosen}/_stcore/health", proc, log)
            except RuntimeError:
                said = log.read_text(errors="replace")
                if attempt < attempts and proc.poll() is not None and f"Port {chosen} is not available" in said:
                    continue
                raise
            yield f"http://127.0.0.1:{chosen}"
            return


@contextlib.contextmanager
def browser_site(work_dir: Path, log: Path = None, *, opened_at: datetime | None = None):
    """The browser tests' module setup: a data dir with `log`'s incidents (default: the small
    fixture) paused at approval (opened at `opened_at`, default now), the app on it (streamlit_app)
    and one headless Chromium. Yields {url, engine, rows, browser}; the engine stays open for
    acting in another process' place."""
    from pipeline.composition import open_engine
    from pipeline.unattended.file_ingest import ingest_path
    from pipeline.store import checkpoints
    from playwright.sync_api import sync_playwright

    engine = open_engine(make_settings(work_dir / "data"))
    clock = engine.records.clock
    if opened_at is not None:
        engine.records.clock = ManualClock(opened_at)
    ingest_path(engine, log or FIXTURES / "small.jsonl")
    engine.records.clock = clock
    rows = engine.records.incidents()
    try:
        with streamlit_app(work_dir / "data", work_dir) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            yield {"url": url, "engine": engine, "rows": rows, "browser": browser}
            browser.close()
    finally:
        engine.records.close()
        checkpoints.close_all()


# set on a test's item when its setup or call failed (tests/conftest.py's pytest_runtest_makereport)
FAILED_TEST = pytest.StashKey[bool]()


@contextlib.contextmanager
def browser_page(browser, name: str, viewport: dict | None = None, request: pytest.FixtureRequest | None = None):
    """A page of the shared browser; when the block raises, or the test of `request` (a page fixture's)
    failed, its last state is test-artifacts/<name>.png (a failure's post-mortem). A passing test takes
    no screenshot: a full-page one of a long page costs about a second on a loaded machine."""
    page = browser.new_page(viewport=viewport or {"width": 1440, "height": 1000})
    failed = True
    try:
        yield page
        failed = request is not None and request.node.stash.get(FAILED_TEST, False)
    finally:
        if failed:
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        page.close()


# -- the model path (tests/openai_stub.py is the server) -----------------------------------------

KEY = "sk-iiq-test-9f3c2a7b41d0e8KEYCANARY"

HIKARI = [
    {"_time": f"2026-11-28T10:00:0{i}Z", "service": "checkout-api", "host": "co-1", "level": "ERROR",
     "message": f"HikariPool-1 - Connection is not available, request timed out after 3000{i}ms.",
     "exception": "java.sql.SQLTransientConnectionException"}
    for i in range(1, 4)
]

RECOMMENDATION = {"action": "Raise the pool size and find the connection leak.",
                  "steps": ["Check active connections", "Raise maximumPoolSize"], "risk": "high"}


def offered(request: Request) -> tuple[list[str], list[tuple[str, str]]]:
    """The categories and (doc_id, category) pairs a prompt offers."""
    text = request.text()
    block = text.split("Categories you may answer", 1)[1].split("\n\n", 1)[0]
    categories = re.findall(r"^- (\w+)$", block, re.M)
    docs = re.findall(r"- doc_id: (\S+)\n  category: (\S+)", text)
    return categories, docs


def careful_analyst(request: Request) -> dict:
    """A scripted model that answers the best offered category and cites its doc."""
    categories, docs = offered(request)
    category = categories[0]
    return {"category": category, "root_cause": f"The pool is exhausted ({category}).", "confidence": 0.8,
            "evidence": ["HikariPool-1 - Connection is not available"],
            "doc_ids": [d for d, c in docs if c == category][:1] + ["not-a-retrieved-doc"],
            # one finding the logs show, one they do not (it is dropped and counted)
            "findings": [{"kind": "pool_name", "value": "HikariPool-1"}, {"kind": "column", "value": "gift_card_id"}]}


def ingest_one(engine, tmp_path, events=HIKARI) -> str:
    """Ingest one incident's events and return its id."""
    from pipeline.unattended.file_ingest import ingest_path

    ingest_path(engine, write_jsonl(tmp_path / "events.jsonl", events))
    rows = engine.records.incidents()
    assert len(rows) == 1
    return rows[0]["incident_id"]


# one approver process: opens the data dir once, then per round reads the round's start file and
# CLI arguments from stdin, spins until the file appears, runs the real command and reports
# [exit code, stderr]; two of these race on one incident per round
RACER = r"""
import contextlib, io, json, os, sys, time
import pipeline
from pipeline import cli
from pipeline.cli import review as cli_review
from pipeline import composition
opened = composition.open_engine(sync_knowledge=False)
cli_review.engine_from_env = lambda **kwargs: opened
print("ready", flush=True)
for line in sys.stdin:
    start, args = json.loads(line)
    while not os.path.exists(start):
        time.sleep(0.0002)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(args)
    print(json.dumps([code, err.getvalue()]), flush=True)
"""


# -- forged checkpoint rows (an edited checkpoints.sqlite) -----------------------------------------

def forged_model(name: str, data: dict):
    """A msgpack value reviving as the state class `name` of pipeline.state with `data` (unvalidated)."""
    import ormsgpack
    from langgraph.checkpoint.serde.jsonplus import EXT_PYDANTIC_V2

    return ormsgpack.Ext(EXT_PYDANTIC_V2, ormsgpack.packb(("pipeline.state", name, data, "model_validate_json")))


def forge_checkpoint(path: Path, incident_id: str, checkpoint_id: str, **values) -> None:
    """Rewrite channel values of one checkpoint row of a checkpoints.sqlite, as someone editing the file would."""
    import sqlite3

    import ormsgpack

    from pipeline.store import checkpoint_values

    conn = sqlite3.connect(path)
    try:
        kind, blob = conn.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?",
                                  (incident_id, checkpoint_id)).fetchone()
        stored = ormsgpack.unpackb(checkpoint_values.decompress(blob, kind), option=ormsgpack.OPT_NON_STR_KEYS,
                                   ext_hook=lambda code, data: ormsgpack.Ext(code, data))
        for channel, value in values.items():
            stored["channel_refs"].pop(channel, None)
            stored["channel_values"][channel] = value
        packed = checkpoint_values.compress(ormsgpack.packb(stored, option=ormsgpack.OPT_NON_STR_KEYS))
        conn.execute("UPDATE checkpoints SET checkpoint = ? WHERE thread_id = ? AND checkpoint_id = ?",
                     (packed, incident_id, checkpoint_id))
        conn.commit()
    finally:
        conn.close()


def forge_write(path: Path, incident_id: str, checkpoint_id: str, channel: str, value) -> int:
    """Rewrite the pending writes of one channel on a checkpoint; returns how many rows changed."""
    import sqlite3

    import ormsgpack

    conn = sqlite3.connect(path)
    try:
        changed = conn.execute("UPDATE writes SET type = 'msgpack', value = ? WHERE thread_id = ? AND checkpoint_id = ?"
                               " AND channel = ?", (ormsgpack.packb(value), incident_id, checkpoint_id, channel)).rowcount
        conn.commit()
        return changed
    finally:
        conn.close()


# a column's place in the inbox's grid (a canvas): its left and right edge among the header's column
# separators (the first column is the row-selection checkbox), and the rightmost text pixel of the
# column in each drawn row (-1: no text), in CSS pixels. The grid draws only the columns in view:
# `drawn` is false for one off to the side (left/right are then meaningless), `closed` whether a
# separator ends it (else its right is the canvas' edge: the last column, or one cut by that edge),
# and `scroll` the grid's scrollable width against its visible width (wider: it scrolls sideways)
GRID_COLUMN_JS = """(name) => {
  const grid = document.querySelector('[data-testid="stDataFrame"]');
  const canvas = grid.querySelector('canvas[data-testid="data-grid-canvas"]');
  const ctx = canvas.getContext('2d');
  const ratio = canvas.width / canvas.getBoundingClientRect().width;
  const headers = [...grid.querySelectorAll('[role="columnheader"]')].map(h => h.textContent.trim());
  // the header's column separators: 1-2 px runs of another colour along a line above its text
  const line = ctx.getImageData(0, Math.round(3 * ratio), canvas.width, 1).data;
  const colour = x => line.slice(4 * x, 4 * x + 3).join(',');
  const background = colour(Math.round(canvas.width / 2) - 1);
  const edges = [0];
  for (let x = 1; x < canvas.width; x++) if (colour(x) !== background && colour(x - 1) === background) edges.push(x);
  const column = headers.indexOf(name) + 1;
  const left = edges[column], right = edges[column + 1] ?? canvas.width;
  // the rightmost text pixel of the column in each row: a clipped text runs into the edge
  const rows = [];
  for (let y = 36 * ratio + 17 * ratio, r = 0; y < canvas.height && r < 15; y += 35 * ratio, r++) {
    const cells = ctx.getImageData(left, Math.round(y) - 4, right - left, 8).data;
    let last = -1;
    for (let i = 0; i < cells.length; i += 4) if (cells[i] < 140 && cells[i + 1] < 140) last = Math.max(last, (i / 4) % (right - left));
    rows.push(last);
  }
  const scroller = grid.querySelector('.dvn-scroller');
  return {headers, edges, left: left / ratio, right: right / ratio, visible: canvas.width / ratio,
          textRight: rows.map(x => x / ratio), drawn: column > 0, closed: edges[column + 1] !== undefined,
          scroll: {width: scroller.scrollWidth, visible: scroller.clientWidth}};
}"""


def grid_column(page, name: str, timeout: float = 30.0) -> dict:
    """GRID_COLUMN_JS's measure of column `name` once the grid's headers are in the page: a refresh
    (the inbox's, every 5 s) draws the grid anew, and its header cells come a moment after its canvas."""
    deadline = time.monotonic() + timeout
    while True:
        column = page.evaluate(GRID_COLUMN_JS, name)
        if column["headers"] or time.monotonic() > deadline:
            return column
        page.wait_for_timeout(200)


def cut_figure_labels(page, width: int = 1024, height: int = 768) -> list[str]:
    """The figures' (st.metric) labels the page cuts short ("Agreement, ca…") at `width` px with the
    sidebar open: an element of a label narrower than its text."""
    page.set_viewport_size({"width": width, "height": height})
    page.wait_for_timeout(500)
    return page.get_by_test_id("stMetricLabel").evaluate_all(
        "labels => labels.filter(l => [l, ...l.querySelectorAll('*')].some("
        "e => e.scrollWidth > e.clientWidth + 1)).map(l => l.textContent)")


# the end of a child script (after `records` and `cli` are imported): run the CLI, and hang for good
# right after the approval's code_fix recorded its fix, before the checkpoint says so
HANG_ONCE_THE_FIX_IS_RECORDED = r"""
original = records.Records.record_fix_once
def record_then_hang(self, **kwargs):
    result = original(self, **kwargs)
    print("fix recorded", flush=True)
    time.sleep(600)
    return result
records.Records.record_fix_once = record_then_hang
sys.exit(cli.main(sys.argv[1:]))
"""


def read_log(path: Path, **parsing) -> list:
    """The events the product's reader (`LogFile`, as `ingest` and the poller read) makes of a
    finished file; asserts none of its lines became a dead letter."""
    from pipeline.ingest.reading import LogFile, Parsing

    reader = LogFile(path, max_bytes=1 << 20, parsing=Parsing(**parsing))
    items = [item for item, _after in reader.scan(0, final=True, settled=True)]
    assert all(hasattr(item, "event_id") for item in items), "no dead letters in these files"
    return items


def read_lines(tmp_path: Path, lines: list[str]) -> list:
    """`read_log` of a file `app.log` holding `lines`, each ended by a newline."""
    path = tmp_path / "app.log"
    path.write_text("\n".join(lines) + "\n")
    return read_log(path)


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=timezone.utc)

# the code-fix line: CODE_FIX_MIN_CONFIDENCE's default, which the analyst tests' confident names reach
THRESHOLD = 0.5


def analyst_events(*raws: str | dict, leveled: bool = False) -> list[LogEvent]:
    """Events of service `svc`, one second apart: each raw a message at ERROR, a `LEVEL text` line with
    `leveled`, or a dict of fields over those defaults."""
    def fields(raw: str | dict) -> dict:
        if isinstance(raw, dict):
            return raw
        level, message = raw.split(" ", 1) if leveled else ("ERROR", raw)
        return {"level": level, "message": message}
    return [normalize({"time": f"2026-01-05T08:00:{i:02d}Z", "level": "ERROR", "service": "svc", **fields(raw)},
                      source="test", position=str(i)) for i, raw in enumerate(raws)]


def offline_rca(analyst, *raws: str | dict, leveled: bool = False) -> RCA:
    """The analyst's RCA of an incident of `analyst_events(*raws)` with its similar docs retrieved, as
    the graph's retrieval node gives them (conftest's `offline_analyst` is the usual analyst)."""
    state = IncidentState(incident_id="INC-t", service="svc", evidence=analyst_events(*raws, leveled=leveled))
    return analyst.rca(state.model_copy(update={"similar_docs": find_similar(analyst.kb, state.evidence)}))


def incidents_by_first_seen(engine) -> list[dict]:
    """Every stored incident's row, its leader decoded, earliest first (the outage tests' view)."""
    rows = engine.records.query("SELECT * FROM incidents ORDER BY first_seen")
    return [dict(r, leader=json.loads(r["leader"]) if r["leader"] else None) for r in rows]


def events_of(engine, incident_id: str) -> set[str]:
    """The ids of the events an incident holds."""
    return {r["event_id"] for r in engine.records.query("SELECT event_id FROM events WHERE incident_id = $1",
                                                        (incident_id,))}
