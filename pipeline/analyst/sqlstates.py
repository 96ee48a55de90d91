"""The SQL standard's SQLSTATE codes that say one category whatever the server's wording
(pipeline/analyst/ideas.py reads them before the ideas of a cause)."""
from __future__ import annotations

import re

# the SQL standard's SQLSTATE codes (class 23, 28, 42, 53; PostgreSQL's appendix "PostgreSQL Error Codes" names
# them, and DB2, Oracle's JDBC, MySQL and SQL Server print the same) that say one category whatever the server's
# wording (`DB2 SQL Error: SQLCODE=-204, SQLSTATE=42704`). A code two categories share (40001: MySQL's and DB2's
# deadlock, PostgreSQL's serialization failure; 57014: a statement timeout or a cancel) is left out.
SQLSTATES: dict[str, tuple[str, str]] = {
    "23000": ("data_integrity", "integrity constraint violation"),
    "23502": ("data_integrity", "not-null violation"),
    "23503": ("data_integrity", "foreign key violation"),
    "23505": ("data_integrity", "unique violation"),
    "23514": ("data_integrity", "check violation"),
    "28000": ("upstream_auth_failure", "invalid authorization specification"),
    "28P01": ("upstream_auth_failure", "invalid password"),
    "40P01": ("db_deadlock", "deadlock detected"),
    "55P03": ("db_deadlock", "lock not available"),
    "42P01": ("db_schema_mismatch", "undefined table"),
    "42703": ("db_schema_mismatch", "undefined column"),
    "42704": ("db_schema_mismatch", "undefined object"),
    "42S02": ("db_schema_mismatch", "base table or view not found"),
    "42S22": ("db_schema_mismatch", "column not found"),
    "53100": ("disk_full", "disk full"),
    "53200": ("out_of_memory", "out of memory"),
    "53300": ("db_pool_exhausted", "too many connections"),
}
SQLSTATE = re.compile(r"\bSQLSTATE\b[\s:=\[(\"']*([0-9A-Z]{5})\b", re.I)


def coded(text: str) -> tuple[str, str] | None:
    """(category, what the code means) of the first SQLSTATE a text names that says one category, or None."""
    return next((SQLSTATES[m.group(1).upper()] for m in SQLSTATE.finditer(text) if m.group(1).upper() in SQLSTATES),
                None)
