"""The PostgreSQL backend's own promises: a database URL's password never reaches a message or
stored text, and the poller lease is one session's lock, freed when that session ends."""
from __future__ import annotations

import pytest

from pipeline.errors import StorageError
from pipeline.redaction import MASK, redact
from pipeline.store import lease
from pipeline.store.records import Records

PASSWORD = "s3cret-Pw-9931"


def test_a_password_in_the_url_is_masked_in_the_error_of_a_store_that_cannot_open():
    url = f"postgresql://iq:{PASSWORD}@127.0.0.1:1/incidentiq"  # nothing listens on port 1
    with pytest.raises(StorageError) as caught:
        Records(url)
    assert PASSWORD not in str(caught.value)
    assert f"iq:{MASK}@127.0.0.1:1" in str(caught.value)


def test_the_redaction_masks_the_configured_database_password(monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_DATABASE_URL", f"postgresql://iq:{PASSWORD}@db:5432/incidentiq")
    assert redact(f"upstream said: password {PASSWORD} rejected") == f"upstream said: password {MASK} rejected"


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_one_owner_holds_the_poller_lease_until_it_releases_it(database_url):
    records = Records(database_url)
    try:
        assert lease.acquire(records, "host-a:1:1:a", source="demo", ttl=30)
        assert lease.acquire(records, "host-a:1:1:a", source="demo", ttl=30)  # renewing is holding
        assert not lease.acquire(records, "host-b:2:2:b", source="demo", ttl=30)
        assert lease.holder(records)["owner"] == "host-a:1:1:a" and lease.holder(records)["live"]
        lease.release(records, "host-a:1:1:a")
        assert lease.acquire(records, "host-b:2:2:b", source="demo", ttl=30)
        assert not lease.acquire(records, "host-a:1:1:a", source="demo", ttl=30)
    finally:
        lease.close_sessions()
        records.close()


def schema_bytes(url: str) -> int:
    """Every table of the test's schema, with its indexes and TOAST, as the server counts it."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return int(conn.execute("SELECT coalesce(sum(pg_total_relation_size(format('%I.%I', schemaname, tablename))), 0)"
                                " FROM pg_tables WHERE schemaname = current_schema()").fetchone()[0])


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_storage_sizes_are_the_schemas_tables_of_records_and_checkpoints(paused_engine, database_url, tmp_path):
    from pipeline.services import OperationsService
    from tests.support import HIKARI, write_jsonl
    from pipeline.unattended.file_ingest import ingest_path

    operations = OperationsService(paused_engine)
    before = operations.storage_sizes()
    assert set(before) == {"records (PostgreSQL)", "checkpoints (PostgreSQL)", "knowledge-index"}
    assert before["records (PostgreSQL)"] > 0 and before["checkpoints (PostgreSQL)"] > 0
    assert before["knowledge-index"] > 0
    assert before["records (PostgreSQL)"] + before["checkpoints (PostgreSQL)"] == schema_bytes(database_url)
    # one more incident analysed to its gate: its checkpoints are where most of its bytes go
    more = [{**e, "service": "gift-card-api", "_time": e["_time"].replace("10:", "11:")} for e in HIKARI * 20]
    ingest_path(paused_engine, write_jsonl(tmp_path / "more.jsonl", more))
    after = operations.storage_sizes()
    assert after["checkpoints (PostgreSQL)"] > before["checkpoints (PostgreSQL)"]
    assert after["records (PostgreSQL)"] >= before["records (PostgreSQL)"]
    schema = database_url.split("%3D")[-1]
    assert f"schema {schema}" in operations.storage_location()


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_the_operations_page_shows_the_postgres_sizes_and_where_they_are(app, database_url):
    from tests.support import texts

    app.switch_page("app_pages/operations.py").run()
    assert not app.exception, [e.value for e in app.exception]
    metrics = {m.label: m.value for m in app.metric}
    assert "app.sqlite3" not in metrics and "checkpoints.sqlite" not in metrics
    for name in ("records (PostgreSQL)", "checkpoints (PostgreSQL)"):
        amount, unit = metrics[name].split()
        assert float(amount) > 0 and unit in ("KiB", "MiB")
    assert f"schema {database_url.split('%3D')[-1]}" in texts(app)


def records_sessions() -> int:
    """The records sessions open on the server (every test schema's: compare before and after)."""
    import psycopg

    from pipeline.store.postgres import application_name
    from tests.support import PG_SERVER

    with psycopg.connect(PG_SERVER, autocommit=True) as probe:
        row = probe.execute("SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
                            (application_name("records"),)).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_releasing_the_workbench_closes_its_records_session(app, database_url):
    """The runtime st.cache_resource keeps is released on a new data dir or the menu's "Clear
    caches": its records session ends then, not when the garbage collector finds the runtime (an
    AppTest, or a page still running, references it), whose ResourceWarning, warnings being
    errors, failed whichever later test it landed in."""
    import gc

    from tests.support import wait_for
    from workbench import session

    gc.disable()  # a store left open stays open until the collector runs: keep it from running here
    try:
        workbench = session.workbench()
        before = records_sessions()
        session._runtime.clear()
        wait_for(lambda: records_sessions() == before - 1, timeout=30)  # the server ends it just after
        assert session.workbench() is not workbench  # the next run opens a new one
        assert records_sessions() == before
    finally:
        gc.enable()


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_cli_command_closes_the_records_session_it_opened(database_url, data_dir, monkeypatch):
    """`main` runs in-process too (these tests call it): the records store a command opened is
    closed when it returns, not left to the collector (whose ResourceWarning, warnings being
    errors, fails whichever later test it lands in)."""
    import gc

    from pipeline.cli import main

    monkeypatch.setenv("INCIDENTIQ_DATA_DIR", str(data_dir))
    gc.disable()  # a store left open stays open until the collector runs: keep it from running here
    try:
        before = records_sessions()
        assert main(["list", "--json"]) == 0
        assert main(["deadletters", "--json"]) == 0
        assert main(["prune", "--days", "30", "--json"]) == 0  # an engine_from_env command
        assert records_sessions() == before
    finally:
        gc.enable()


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_standby_gives_an_owner_that_dropped_again_the_whole_grace_not_what_is_left_of_an_old_one(database_url,
                                                                                                   monkeypatch):
    """The grace a standby gives an owner whose lock went with its sessions counts from when it last
    found it gone: an owner that came back (took its lock again) and drops again later is not taken
    over at once on the strength of the first drop, long ago (it may be in the middle of a step)."""
    from types import SimpleNamespace

    now = [1000.0]
    monkeypatch.setattr(lease, "time", SimpleNamespace(monotonic=lambda: now[0]))
    a, b = "host-a:1:1:a", "host-b:2:2:b"  # another host's owners: alive, and never a session of ours
    records = Records(database_url)

    def drop_sessions_of(owner: str) -> None:  # a restart ends the owner's lock session
        lease._sessions[(records.path, owner)].drop()

    try:
        assert lease.acquire(records, a, source="demo", ttl=300)
        drop_sessions_of(a)
        assert not lease.acquire(records, b, source="demo", ttl=300)  # a may be mid-step: the grace starts
        assert lease.acquire(records, a, source="demo", ttl=300)  # a comes back, takes its lock again
        now[0] += 60
        assert not lease.acquire(records, b, source="demo", ttl=300)  # a holds it
        drop_sessions_of(a)  # the next restart, a minute later
        assert not lease.acquire(records, b, source="demo", ttl=300)  # a new grace, not the old one's end
        now[0] += lease.TAKEOVER_GRACE_SECONDS / 2
        assert not lease.acquire(records, b, source="demo", ttl=300)
        now[0] += lease.TAKEOVER_GRACE_SECONDS
        assert lease.acquire(records, b, source="demo", ttl=300)  # gone for the whole grace: taken over
        assert lease.holder(records)["owner"] == b
    finally:
        lease.close_sessions()
        lease._gone_since.clear()
        records.close()
