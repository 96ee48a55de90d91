"""Old records stores for upgrade tests and the chaos bench: today's write path writing a store
kept at an earlier schema, as that schema's code wrote it (shared by tests/ and bench/, which
must not import the tests)."""
from __future__ import annotations

import contextlib
import json


# what each migration from 11 on adds, taken away again after the block (see below)
UNDO = {
    12: ("ALTER TABLE incidents DROP COLUMN approvals_floor",),
    13: ("ALTER TABLE incidents DROP COLUMN backfilled",),
    14: ("DROP TABLE incident_members", "DROP TABLE pattern_days", "ALTER TABLE incidents DROP COLUMN pattern_count",
         "ALTER TABLE incidents DROP COLUMN service_count"),
    15: ("ALTER TABLE incidents DROP COLUMN analysed_events", "DROP INDEX incidents_to_announce",
         "CREATE INDEX incidents_to_announce ON incidents(created_at)"
         " WHERE severity = 'critical' AND announced_at IS NULL"),
    16: ("DROP INDEX incidents_linked", "DROP INDEX pattern_days_day", "DROP INDEX dead_letters_created",
         "ALTER TABLE incidents DROP COLUMN linked_to",
         "ALTER TABLE incidents DROP COLUMN link_kind", "ALTER TABLE incidents DROP COLUMN link_status"),
    17: ("DROP INDEX incident_members_member", "ALTER TABLE incidents DROP COLUMN leader"),
    18: ("DROP TABLE source_leases", "DROP TABLE source_workers"),
    19: ("DROP TABLE backtest_judgments", "DROP INDEX incidents_first_seen"),
}


@contextlib.contextmanager
def written_as_before_schema_11(records):
    """Let today's write path (store_batch) write a store kept at an earlier schema (before 11, or
    any later one) as that schema's code wrote it: what the later migrations add exists while the
    block runs, then it goes (before 11: the miner's state is saved whole, as schema 10 saved it,
    and schema 11's tables dropped), so the migrations find what they would find. The block must
    store no context events (they would be lost with schema 11's tables)."""
    from pipeline.incidents.fingerprints.miner import TemplateMiner
    from pipeline.store import incident_rows
    from pipeline.store.schema import MIGRATIONS, TYPES, _v11_context_blocks

    version = records.conn.schema_version()
    # those that add what the write path writes (UNDO's): 20 adds only an index, which a store
    # older than 5 could not have (its column comes with 5)
    later = [m for m in MIGRATIONS if m.version > max(version, 11) and m.version in UNDO]
    tables = ("context_blocks", "context_keys", "context_ids", "template_clusters", "template_keys")
    with records.transaction() as conn:
        if version < 11:
            for statement in _v11_context_blocks(TYPES[conn.dialect]):
                conn.execute(statement)
        for migration in later:
            for statement in migration.statements_for(conn.dialect):
                conn.execute(statement)
    yield records
    with records.transaction() as conn:
        for migration in reversed(later):
            for statement in UNDO[migration.version]:
                conn.execute(statement)
        if version >= 11:
            return
        assert conn.execute("SELECT count(*) AS n FROM context_ids").fetchone()["n"] == 0
        revision = incident_rows.template_revision(conn)
        if revision:
            header = json.loads(incident_rows.template_state(conn))
            whole = TemplateMiner.from_state(incident_rows.template_changes(conn, header, 0)).state()
            conn.execute("UPDATE template_state SET state = $1 WHERE id = 1", (json.dumps(whole),))
        for table in tables:
            conn.execute(f"DROP TABLE {table}")

