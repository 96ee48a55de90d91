"""What the workbench's Backtests page goes through: the backtests and their reports (read only)."""
from __future__ import annotations

from pipeline.backtest.report import report
from pipeline.engine import Engine
from pipeline.store import backtests


class BacktestService:
    def __init__(self, engine: Engine):
        self.engine = engine

    def backtests(self, *, limit: int = 50) -> list[dict]:
        """Backtests newest first: id, candidate, status, done/total, started/finished."""
        return backtests.backtests(self.engine.records, limit=limit)

    def report(self, backtest_id: str) -> dict:
        """The report of one backtest (see pipeline/backtest/report.py)."""
        return report(self.engine, backtest_id)
