"""Settings for inventory-service, read once from the environment at import time."""
import os


def _int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    return int(raw) if raw else default


DATABASE_URL = os.environ.get(
    "DATABASE_URL",
    "postgresql+psycopg2://inventory@inventory-db.pos.svc.cluster.local:5432/inventory",
)

# Connection pool per worker process (uvicorn runs 4 workers per pod).
DB_POOL_SIZE = _int("DB_POOL_SIZE", 5)
DB_MAX_OVERFLOW = _int("DB_MAX_OVERFLOW", 10)
DB_POOL_TIMEOUT = _int("DB_POOL_TIMEOUT", 30)
DB_STATEMENT_TIMEOUT_MS = _int("DB_STATEMENT_TIMEOUT_MS", 5000)

# Reservations hold stock for a checkout in progress and expire after this many seconds.
RESERVATION_TTL_SECONDS = _int("RESERVATION_TTL_SECONDS", 900)
RELEASE_BATCH_SIZE = _int("RELEASE_BATCH_SIZE", 200)

LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")
