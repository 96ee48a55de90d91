"""Stock look-ups and single-line reservations."""
from datetime import datetime, timedelta, timezone

import structlog
from sqlalchemy import select
from sqlalchemy.orm import Session

from inventory import settings
from inventory.db import Reservation, StockItem

log = structlog.get_logger(__name__)


class InsufficientStock(Exception):
    def __init__(self, store_id: int, sku: str, wanted: int, available: int):
        super().__init__(f"store {store_id} sku {sku}: wanted {wanted}, available {available}")
        self.available = available


def get_stock(session: Session, store_id: int, sku: str) -> int:
    item = session.execute(
        select(StockItem).where(StockItem.store_id == store_id, StockItem.sku == sku)
    ).scalar_one_or_none()
    return 0 if item is None else item.quantity - item.reserved


def reserve(session: Session, order_id: int, store_id: int, sku: str, qty: int) -> Reservation:
    """Hold `qty` units of `sku` in `store_id` for an order being checked out.

    The stock row is locked (SELECT ... FOR UPDATE) until the caller commits, so two
    registers selling the last unit cannot both succeed.
    """
    item = (
        session.execute(
            select(StockItem)
            .where(StockItem.store_id == store_id, StockItem.sku == sku)
            .with_for_update()
        )
        .scalars()
        .first()
    )
    available = item.quantity - item.reserved
    if available < qty:
        raise InsufficientStock(store_id, sku, qty, available)
    item.reserved += qty
    reservation = Reservation(
        order_id=order_id,
        stock_item_id=item.id,
        quantity=qty,
        expires_at=datetime.now(timezone.utc) + timedelta(seconds=settings.RESERVATION_TTL_SECONDS),
    )
    session.add(reservation)
    log.debug("reserved", order_id=order_id, store_id=store_id, sku=sku, qty=qty)
    return reservation
