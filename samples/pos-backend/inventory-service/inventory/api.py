"""HTTP API used by checkout-api and the registers (FastAPI, served by uvicorn)."""
import asyncio

import structlog
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from inventory.db import SessionLocal
from inventory.reservations import release_expired, reserve_order
from inventory.stock import InsufficientStock, get_stock

log = structlog.get_logger(__name__)
app = FastAPI(title="inventory-service")


class OrderLines(BaseModel):
    store_id: int
    lines: list[dict]


@app.get("/healthz")
def healthz() -> dict:
    return {"status": "ok"}


@app.get("/v1/stock/{store_id}/{sku}")
def stock(store_id: int, sku: str) -> dict:
    with SessionLocal() as session:
        return {"store_id": store_id, "sku": sku, "available": get_stock(session, store_id, sku)}


@app.post("/v1/orders/{order_id}/reservations")
def reserve(order_id: int, body: OrderLines) -> dict:
    try:
        ids = reserve_order(order_id, body.store_id, body.lines)
    except InsufficientStock as exc:
        raise HTTPException(status_code=409, detail=str(exc)) from exc
    return {"order_id": order_id, "reservations": ids}


@app.exception_handler(Exception)
async def log_unhandled(request: Request, exc: Exception) -> JSONResponse:
    log.exception(f"{request.method} {request.url.path} failed: {exc}")
    return JSONResponse(status_code=500, content={"error": "internal"})


@app.on_event("startup")
async def start_release_loop() -> None:
    async def loop() -> None:
        while True:
            try:
                await asyncio.to_thread(release_expired)
            except Exception as exc:
                log.exception(f"release_expired failed: {exc}")
            await asyncio.sleep(60)

    asyncio.create_task(loop())
