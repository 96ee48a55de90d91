"""The two stores' one owner: app.sqlite3's schema (versioned migrations), records, claims and
owners, the poller lease and status, the inbox queries; and the only code that knows
SqliteSaver's tables (checkpoints.py)."""
