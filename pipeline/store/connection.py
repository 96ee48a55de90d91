"""The checkpoint savers' connection, opened on first use: a process that only reads records (the
CLI's `list`, a page that never shows history) never opens the checkpoint store."""
from __future__ import annotations

import threading
from typing import Any


class LazyConnection:
    """`conn` opened by the saver's `_open()` once, by whichever thread asks first, and dropped by
    `close()`. LangGraph's savers assign `conn` in their `__init__`; call `_lazy()` before that."""

    def _lazy(self) -> None:
        self._conn: Any = None
        self._open_lock = threading.Lock()

    @property
    def conn(self) -> Any:  # the saver's driver connection (sqlite3 or psycopg), as LangGraph types it
        if self._conn is None:
            with self._open_lock:
                if self._conn is None:
                    self._conn = self._open()
        return self._conn

    @conn.setter
    def conn(self, value: Any) -> None:
        self._conn = value

    @property
    def opened(self) -> bool:
        return self._conn is not None

    def close(self) -> None:
        with self._open_lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
                self._closed()

    def _open(self) -> Any:
        raise NotImplementedError

    def _closed(self) -> None:
        """What else the saver forgets with its connection (nothing unless it says)."""
