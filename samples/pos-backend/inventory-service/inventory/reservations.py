"""Order-level reservations: hold every line of a checkout, release expired holds."""
from datetime import datetime, timezone

import structlog
from sqlalchemy import select

from inventory import settings
from inventory.db import Reservation, SessionLocal, StockItem
from inventory.stock import reserve

log = structlog.get_logger(__name__)


def reserve_order(order_id: int, store_id: int, lines: list[dict]) -> list[int]:
    """Reserve all lines of an order in one transaction (all or nothing).

    `lines` arrive in the order the cashier scanned them: [{"sku": "...", "qty": 2}, ...].
    """
    with SessionLocal() as session:
        with session.begin():
            held = []
            for line in lines:
                reservation = reserve(session, order_id, store_id, line["sku"], line["qty"])
                held.append(reservation)
            session.flush()
            ids = [r.id for r in held]
    log.info("order reserved", order_id=order_id, store_id=store_id, lines=len(lines))
    return ids


def release_expired(now: datetime | None = None) -> int:
    """Give back stock held by checkouts that never completed. Runs every minute."""
    now = now or datetime.now(timezone.utc)
    released = 0
    with SessionLocal() as session:
        expired = session.execute(
            select(Reservation)
            .where(Reservation.released.is_(False), Reservation.expires_at < now)
            .limit(settings.RELEASE_BATCH_SIZE)
        ).scalars().all()
        for reservation in expired:
            item = session.get(StockItem, reservation.stock_item_id)
            item.reserved -= reservation.quantity
            reservation.released = True
            released += 1
        session.commit()
    log.info("released expired reservations", count=released)
    return released
