#!/usr/bin/env python3
"""Generate samples/pos-day.jsonl: one day (2026-11-28 UTC) of the POS backend's logs.

Deterministic (random.Random(SEED), no network, no clock): running it again rewrites the
same bytes. Stack traces point at real files and lines of samples/pos-backend/; the lines
are looked up in those files (by a unique snippet) when the day is generated, so the two
cannot drift apart silently.

    python samples/make_pos_day.py            # writes samples/pos-day.jsonl
    python samples/make_pos_day.py --table    # also prints the incident table (README)
"""
from __future__ import annotations

import argparse
import json
import random
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

SEED = 20261128
HERE = Path(__file__).resolve().parent
TREE = HERE / "pos-backend"
OUT = HERE / "pos-day.jsonl"
DAY = datetime(2026, 11, 28, tzinfo=timezone.utc)
CET = timezone(timedelta(hours=1))  # the edge proxy logs in store-local time

rng = random.Random(SEED)

# --------------------------------------------------------------------------- source tree

_SRC_CACHE: dict[str, list[str]] = {}


def src(rel: str) -> list[str]:
    if rel not in _SRC_CACHE:
        _SRC_CACHE[rel] = (TREE / rel).read_text().splitlines()
    return _SRC_CACHE[rel]


def line_of(rel: str, needle: str) -> int:
    hits = [i + 1 for i, text in enumerate(src(rel)) if needle in text]
    if len(hits) != 1:
        raise SystemExit(f"{rel}: expected exactly one line containing {needle!r}, found {hits}")
    return hits[0]


CHK = "checkout-api/src/main/java/com/keele/pos/checkout/"
INV = "inventory-service/inventory/"
LOY = "loyalty-service/src/"
GW = "payments-gateway/"
RCP = "receipts-worker/receipts/"

L = {
    "cart_load": line_of(CHK + "CartService.java", "cartCache.opsForValue().get("),
    "cart_tax": line_of(CHK + "CartService.java", "taxRestTemplate.postForObject("),
    "cart_npe": line_of(CHK + "CartService.java", "cart.getCustomer().getLoyaltyTier()"),
    "ctl_load": line_of(CHK + "CheckoutController.java", "cartService.loadCart("),
    "ctl_discount": line_of(CHK + "CheckoutController.java", "cartService.applyDiscount("),
    "ctl_tax": line_of(CHK + "CheckoutController.java", "cartService.quoteTax("),
    "ctl_tx": line_of(CHK + "CheckoutController.java", "tx.execute(status ->"),
    "ctl_insert": line_of(CHK + "CheckoutController.java", "orders.insertOrder("),
    "ctl_pay": line_of(CHK + "CheckoutController.java", "paymentClient.authorize("),
    "pay_post": line_of(CHK + "PaymentClient.java", "restTemplate.postForEntity("),
    "repo_insert": line_of(CHK + "OrderRepository.java", "jdbc.queryForObject(INSERT_ORDER"),
    "gw_wrap": line_of(GW + "internal/psp/client.go", 'errors.Wrapf(err, "psp authorize'),
    "gw_handler": line_of(GW + "cmd/gateway/main.go", "s.psp.Authorize("),
    "gw_main_load": line_of(GW + "cmd/gateway/main.go", "config.Load()"),
    "gw_cfg_errorf": line_of(GW + "internal/config/config.go", "required environment variable"),
    "gw_cfg_merchant": line_of(GW + "internal/config/config.go", 'required("PSP_MERCHANT_ID")'),
    "inv_api_stock": line_of(INV + "api.py", "get_stock(session, store_id, sku)"),
    "inv_api_reserve": line_of(INV + "api.py", "ids = reserve_order("),
    "inv_api_release": line_of(INV + "api.py", "asyncio.to_thread(release_expired)"),
    "inv_api_import_db": line_of(INV + "api.py", "from inventory.db import"),
    "inv_db_import": line_of(INV + "db.py", "DeclarativeBase,"),
    "inv_stock_get": line_of(INV + "stock.py", "item = session.execute("),
    "inv_stock_lock": line_of(INV + "stock.py", "        session.execute("),
    "inv_stock_npe": line_of(INV + "stock.py", "available = item.quantity"),
    "inv_res_reserve": line_of(INV + "reservations.py", "reservation = reserve(session"),
    "inv_res_commit": line_of(INV + "reservations.py", "session.commit()"),
    "loy_npe": line_of(LOY + "points.js", "member.profile.tier"),
    "loy_push_call": line_of(LOY + "points.js", "await pushAccrual("),
    "loy_partner_post": line_of(LOY + "points.js", "await partner.post("),
    "loy_publish_call": line_of(LOY + "points.js", "await publish("),
    "srv_award": line_of(LOY + "server.js", "await awardPoints(req.body"),
    "srv_nacked": line_of(LOY + "server.js", "nacked: messages="),
    "rcp_loads": line_of(RCP + "worker.py", "json.loads(raw)"),
    "rcp_write": line_of(RCP + "worker.py", "fh.write(pdf)"),
    "rcp_handle": line_of(RCP + "worker.py", "path = handle(msg.value())"),
}

# Where each service's files live inside its container image.
CONTAINER_ROOTS = {
    "/app/inventory/": "inventory-service/inventory/",
    "/app/receipts/": "receipts-worker/receipts/",
    "/srv/loyalty-service/src/": "loyalty-service/src/",
    "/src/payments-gateway/": "payments-gateway/",
}


def tree_path(container_path: str) -> str:
    for prefix, rel in CONTAINER_ROOTS.items():
        if container_path.startswith(prefix):
            return rel + container_path[len(prefix):]
    raise KeyError(container_path)


# --------------------------------------------------------------------------- randomness

def hexid(bits: int) -> str:
    return f"{rng.getrandbits(bits):0{bits // 4}x}"


def uid() -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


STORES = sorted(rng.sample(range(101, 499), 64))


def store() -> int:
    return rng.choice(STORES)


def register(store_id: int) -> str:
    return f"{store_id}-{rng.randint(1, 8):02d}"


def register_ip(store_id: int) -> str:
    return f"10.20.{store_id % 250}.{rng.randint(21, 28)}"


def order_id(dt: datetime) -> int:
    minute = int((dt - DAY).total_seconds() // 60)
    return 88_400_000 + minute * 23 + rng.randint(0, 22)


def sku() -> str:
    return str(rng.randint(400_000_000, 409_999_999))


def pick(seq):
    return rng.choice(seq)


def pod(app: str, rs: str, n: int) -> list[str]:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    return [f"{app}-{rs}-{''.join(rng.choice(alphabet) for _ in range(5))}" for _ in range(n)]


CHECKOUT_PODS = pod("checkout-api", "7f9c6b8d94", 4)
GATEWAY_PODS = pod("payments-gateway", "6d5f8c7b9", 3)
GATEWAY_NEW_POD = pod("payments-gateway", "5b7d9f6c48", 1)[0]
INVENTORY_PODS = pod("inventory-service", "5c8d7f6b4", 3)
INVENTORY_NEW_PODS = pod("inventory-service", "8f4c6d9b7", 2)
LOYALTY_PODS = pod("loyalty-service", "64b9c8d7f5", 2)
RECEIPTS_POD = pod("receipts-worker", "7c9f6d5b48", 1)[0]
COREDNS_PODS = pod("coredns", "5d78c9869d", 2)
EDGE_PODS = ["edge-nginx-0", "edge-nginx-1"]
NODES = [f"ip-10-20-{a}-{b}.eu-west-1.compute.internal" for a, b in ((31, 17), (33, 142), (35, 8), (37, 201))]

# --------------------------------------------------------------------------- time

def at(h: int, m: int, s: float = 0.0) -> datetime:
    return DAY + timedelta(hours=h, minutes=m, seconds=s)


def times(start: datetime, end: datetime, n: int) -> list[datetime]:
    span = (end - start).total_seconds()
    out = [start + timedelta(seconds=rng.uniform(0, span)) for _ in range(n)]
    return sorted(out)


def iso_ms(dt: datetime) -> str:  # logback / pino / event exporter
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def iso_ns(dt: datetime) -> str:  # Go's RFC 3339 with nanoseconds
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond:06d}{rng.randint(0, 999):03d}Z"


def iso_py(dt: datetime) -> str:  # Python isoformat with offset
    return dt.isoformat(timespec="microseconds")


def iso_local(dt: datetime) -> str:  # nginx $time_iso8601 in CET
    return dt.astimezone(CET).isoformat(timespec="seconds")


def iso_s(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def epoch(dt: datetime) -> float:
    return int(dt.timestamp() * 1000) / 1000


def nginx_clock(dt: datetime) -> str:
    return dt.astimezone(CET).strftime("%Y/%m/%d %H:%M:%S")


# --------------------------------------------------------------------------- output

EVENTS: list[tuple[datetime, int, object]] = []
INCIDENTS: list[dict] = []
ORIGIN: dict[int, dict] = {}  # event seq -> the incident that emitted it (for checks, not written)
_current: dict | None = None


def emit(dt: datetime, event) -> None:
    """event: a dict (written as JSON) or a str (written verbatim, for malformed lines)."""
    EVENTS.append((dt, len(EVENTS), event))
    if _current is not None and isinstance(event, dict):
        ORIGIN[len(EVENTS) - 1] = _current
        _current["count"] += 1
        _current["first"] = min(_current["first"], dt)
        _current["last"] = max(_current["last"], dt)


def incident(service: str, category: str, what: str):
    def wrap(fn):
        def run():
            global _current
            _current = {"service": service, "category": category, "what": what,
                        "count": 0, "first": DAY + timedelta(days=2), "last": DAY}
            fn()
            INCIDENTS.append(_current)
            _current = None
        run.__name__ = fn.__name__
        REGISTRY.append(run)
        return run
    return wrap


REGISTRY: list = []

# --------------------------------------------------------------------------- stack builders

SPRING_MVC = [
    "java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke0(Native Method)",
    "java.base/jdk.internal.reflect.NativeMethodAccessorImpl.invoke(NativeMethodAccessorImpl.java:77)",
    "java.base/jdk.internal.reflect.DelegatingMethodAccessorImpl.invoke(DelegatingMethodAccessorImpl.java:43)",
    "java.base/java.lang.reflect.Method.invoke(Method.java:568)",
    "org.springframework.web.method.support.InvocableHandlerMethod.doInvoke(InvocableHandlerMethod.java:255)",
    "org.springframework.web.method.support.InvocableHandlerMethod.invokeForRequest(InvocableHandlerMethod.java:188)",
    "org.springframework.web.servlet.mvc.method.annotation.ServletInvocableHandlerMethod.invokeAndHandle(ServletInvocableHandlerMethod.java:118)",
    "org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter.invokeHandlerMethod(RequestMappingHandlerAdapter.java:926)",
    "org.springframework.web.servlet.mvc.method.annotation.RequestMappingHandlerAdapter.handleInternal(RequestMappingHandlerAdapter.java:831)",
    "org.springframework.web.servlet.mvc.method.AbstractHandlerMethodAdapter.handle(AbstractHandlerMethodAdapter.java:87)",
    "org.springframework.web.servlet.DispatcherServlet.doDispatch(DispatcherServlet.java:1089)",
]
SPRING_MVC_TRUNCATED = 52  # logstash-logback-encoder ShortenedThrowableConverter


def jat(frames: list[str]) -> str:
    return "".join(f"\tat {f}\n" for f in frames)


def jstack(header: str, frames: list[str], causes=(), truncated: int | None = SPRING_MVC_TRUNCATED) -> str:
    out = header + "\n" + jat(frames)
    if truncated:
        out += f"\t... {truncated} frames truncated\n"
    for cause_header, cause_frames, more in causes:
        out += f"Caused by: {cause_header}\n" + jat(cause_frames)
        if more:
            out += f"\t... {more} more\n"
    return out.rstrip("\n")


def chk(cls: str, method: str, key: str) -> str:
    return f"com.keele.pos.checkout.{cls}.{method}({cls}.java:{L[key]})"


def checkout_frames() -> list[str]:
    return [chk("CheckoutController", "checkout", "ctl_tx")] + SPRING_MVC


SITE = "/usr/local/lib/python3.12/site-packages"


def pf(path: str, line: int, func: str, code: str | None = None) -> str:
    """One Python traceback frame; code of the sample tree's own files is read from them."""
    if code is None and not path.startswith("<"):
        code = src(tree_path(path))[line - 1].strip()
    text = f'  File "{path}", line {line}, in {func}\n'
    return text + (f"    {code}\n" if code else "")


def pytb(frames: list[str], last: str, cause: tuple[list[str], str] | None = None) -> str:
    out = ""
    if cause:
        out += "Traceback (most recent call last):\n" + "".join(cause[0]) + cause[1] + "\n\n"
        out += "The above exception was the direct cause of the following exception:\n\n"
    return out + "Traceback (most recent call last):\n" + "".join(frames) + last


STARLETTE = [
    pf(f"{SITE}/starlette/routing.py", 73, "app", "response = await f(request)"),
    pf(f"{SITE}/fastapi/routing.py", 301, "app", "raw_response = await run_endpoint_function("),
    pf(f"{SITE}/fastapi/routing.py", 214, "run_endpoint_function", "return await run_in_threadpool(dependant.call, **values)"),
    pf(f"{SITE}/starlette/concurrency.py", 39, "run_in_threadpool", "return await anyio.to_thread.run_sync(func)"),
    pf(f"{SITE}/anyio/_backends/_asyncio.py", 943, "run", "result = context.run(func, *args)"),
]

SA_EXEC = [
    pf(f"{SITE}/sqlalchemy/orm/session.py", 2362, "execute", "return self._execute_internal("),
    pf(f"{SITE}/sqlalchemy/orm/session.py", 2247, "_execute_internal", "result: Result[Any] = compile_state_cls.orm_execute_statement("),
    pf(f"{SITE}/sqlalchemy/orm/context.py", 305, "orm_execute_statement", "result = conn.execute("),
    pf(f"{SITE}/sqlalchemy/engine/base.py", 1418, "execute", "return meth("),
    pf(f"{SITE}/sqlalchemy/engine/base.py", 1640, "_execute_clauseelement", "ret = self._execute_context("),
    pf(f"{SITE}/sqlalchemy/engine/base.py", 1846, "_execute_context", "return self._exec_single_context("),
    pf(f"{SITE}/sqlalchemy/engine/base.py", 1986, "_exec_single_context", "self._handle_dbapi_exception("),
    pf(f"{SITE}/sqlalchemy/engine/base.py", 2355, "_handle_dbapi_exception", "raise sqlalchemy_exception.with_traceback(exc_info[2]) from e"),
    pf(f"{SITE}/sqlalchemy/engine/base.py", 1967, "_exec_single_context", "self.dialect.do_execute("),
    pf(f"{SITE}/sqlalchemy/engine/default.py", 941, "do_execute", "cursor.execute(statement, parameters)"),
]

SA_CONNECT = [
    pf(f"{SITE}/sqlalchemy/orm/session.py", 2362, "execute", "return self._execute_internal("),
    pf(f"{SITE}/sqlalchemy/orm/session.py", 2237, "_execute_internal", "conn = self._connection_for_bind(bind)"),
    pf(f"{SITE}/sqlalchemy/orm/session.py", 1189, "_connection_for_bind", "conn = bind.connect()"),
    pf(f"{SITE}/sqlalchemy/engine/base.py", 3276, "connect", "return self._connection_cls(self)"),
    pf(f"{SITE}/sqlalchemy/engine/base.py", 148, "__init__", "Connection._handle_dbapi_exception_noconnection("),
    pf(f"{SITE}/sqlalchemy/engine/base.py", 2440, "_handle_dbapi_exception_noconnection", "raise sqlalchemy_exception.with_traceback(exc_info[2]) from e"),
    pf(f"{SITE}/sqlalchemy/engine/base.py", 146, "__init__", "self._dbapi_connection = engine.raw_connection()"),
    pf(f"{SITE}/sqlalchemy/engine/base.py", 3300, "raw_connection", "return self.pool.connect()"),
    pf(f"{SITE}/sqlalchemy/pool/base.py", 449, "connect", "return _ConnectionFairy._checkout(self)"),
    pf(f"{SITE}/sqlalchemy/pool/base.py", 896, "__connect", "self.dbapi_connection = connection = pool._invoke_creator(self)"),
    pf(f"{SITE}/sqlalchemy/engine/create.py", 646, "connect", "return dialect.connect(*cargs, **cparams)"),
    pf(f"{SITE}/sqlalchemy/engine/default.py", 625, "connect", "return self.loaded_dbapi.connect(*cargs, **cparams)"),
    pf(f"{SITE}/psycopg2/__init__.py", 122, "connect", "conn = _connect(dsn, connection_factory=connection_factory, **kwasync)"),
]


def node_at(func: str | None, path: str, line: int, col: int, is_async: bool = False) -> str:
    where = f"{path}:{line}:{col}"
    prefix = "async " if is_async else ""
    return f"    at {prefix}{func} ({where})" if func else f"    at {prefix}{where}"


LOY_ROOT = "/srv/loyalty-service/src/"
NODE_TICKS = "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)"


def go_frames(frames: list[tuple[str, str, int]]) -> str:
    return "\n".join(f"{fn}\n\t{path}:{line}" for fn, path, line in frames)


GO_HTTP_TAIL = [
    ("net/http.HandlerFunc.ServeHTTP", "/usr/local/go/src/net/http/server.go", 2171),
    ("net/http.(*ServeMux).ServeHTTP", "/usr/local/go/src/net/http/server.go", 2688),
    ("net/http.serverHandler.ServeHTTP", "/usr/local/go/src/net/http/server.go", 3142),
    ("net/http.(*conn).serve", "/usr/local/go/src/net/http/server.go", 2044),
    ("runtime.goexit", "/usr/local/go/src/runtime/asm_amd64.s", 1695),
]


def gw_authorize_stack(cause: str, oid: int) -> str:
    return (cause + f"\npsp authorize order={oid}\n" + go_frames([
        ("github.com/keele/pos/payments-gateway/internal/psp.(*Client).Authorize",
         "/src/payments-gateway/internal/psp/client.go", L["gw_wrap"]),
        ("main.(*server).handlePayment", "/src/payments-gateway/cmd/gateway/main.go", L["gw_handler"]),
    ] + GO_HTTP_TAIL))


# --------------------------------------------------------------------------- event makers

def java_event(dt, level, logger, message, *, exception=None, stack=None, pod=None, **fields):
    ev = {"_time": iso_ms(dt), "service": "checkout-api", "host": pod or pick(CHECKOUT_PODS),
          "level": level, "logger": logger, "thread": f"http-nio-8080-exec-{rng.randint(1, 200)}",
          "message": message}
    if exception:
        ev["exception"] = exception
    if stack:
        ev["stack"] = stack
    ev.update(fields)
    return ev


def checkout_ctx(dt, path="/api/v1/checkout", method="POST", status=500, duration=None, store_id=None):
    s = store_id or store()
    return {"trace_id": hexid(128), "span_id": hexid(64), "store_id": s, "register_id": register(s),
            "method": method, "path": path, "http_status": status,
            "duration_ms": duration if duration is not None else rng.randint(40, 400)}


def api_error(dt, top_cls, top_msg, stack, root=None, ctx=None, level="ERROR", **extra):
    """What checkout-api's @RestControllerAdvice logs for an unhandled exception."""
    ctx = ctx or checkout_ctx(dt)
    msg = f"{ctx['method']} {ctx['path']} failed: {top_msg}"
    if root:
        msg += f" [root cause: {root}]"
    return java_event(dt, level, "com.keele.pos.checkout.web.ApiExceptionHandler", msg,
                      exception=top_cls, stack=stack, **ctx, **extra)


def py_event(dt, service, host, level, logger, message, *, exception=None, stack=None, **fields):
    ev = {"_time": iso_py(dt), "service": service, "host": host, "level": level,
          "logger": logger, "message": message}
    if exception:
        ev["exception"] = exception
    if stack:
        ev["stack"] = stack
    ev.update(fields)
    return ev


def node_event(dt, level, message, *, exception=None, stack=None, **fields):
    ev = {"_time": iso_ms(dt), "service": "loyalty-service", "host": pick(LOYALTY_PODS),
          "level": level, "message": message}
    if exception:
        ev["exception"] = exception
    if stack:
        ev["stack"] = stack
    ev.update(fields)
    return ev


def go_event(dt, level, message, *, host=None, exception=None, stack=None, **fields):
    ev = {"_time": iso_ns(dt), "service": "payments-gateway", "host": host or pick(GATEWAY_PODS),
          "level": level, "message": message}
    if exception:
        ev["exception"] = exception
    if stack:
        ev["stack"] = stack
    ev.update(fields)
    return ev


def k8s_event(dt, service, level, reason, message, obj, count):
    """Kubernetes events as shipped by the event exporter (`@timestamp`, `log_level`)."""
    return {"@timestamp": iso_ms(dt), "service": service, "host": pick(NODES), "log_level": level,
            "message": message, "source": "kubernetes", "namespace": "pos", "reason": reason,
            "involved_object": obj, "count": count}


def nginx_error(dt, severity, text, client, request, upstream, **fields):
    worker = rng.choice((29, 30, 31))
    msg = (f"{nginx_clock(dt)} [{severity}] {worker}#{worker}: *{rng.randint(100000, 2999999)} "
           f"{text}, client: {client}, server: pos-api.keele.example, request: \"{request}\", "
           f"upstream: \"{upstream}\", host: \"pos-api.keele.example\"")
    ev = {"_time": iso_local(dt), "service": "edge-nginx", "host": pick(EDGE_PODS),
          "level": "ERROR", "message": msg, "nginx_severity": severity}
    ev.update(fields)
    return ev


# =========================================================================== incidents
# Each incident is one fingerprint: same service, exception and message shape.


@incident("store-sync", "db_deadlock",
          "nightly price sync hits MySQL `Lock wait timeout exceeded` on the catalogue DB")
def store_sync_lock_wait():
    for start, end, n in ((at(1, 12), at(1, 19), 9), (at(1, 27), at(1, 33), 8), (at(1, 41), at(1, 45), 7)):
        run = rng.randint(8800, 8899)
        for dt in times(start, end, n):
            s = store()
            batch = rng.randint(1, 40)
            emit(dt, {"time": epoch(dt), "app": "store-sync", "host": "store-sync-29404920-h7kqz",
                      "level": "ERROR",
                      "exception": "com.mysql.cj.jdbc.exceptions.MySQLTransactionRollbackException",
                      "message": f"Price sync failed for store {s} batch {batch}/40: "
                                 "Lock wait timeout exceeded; try restarting transaction",
                      "job": "price-sync", "run_id": run, "store_id": s, "sql_state": "40001",
                      "error_code": 1205, "db": "catalogue-mysql"})


@incident("store-sync", "unknown",
          "store sync runs end PARTIAL, a few stores never acknowledge, no error anywhere")
def store_sync_partial():
    for dt in times(at(2, 40), at(3, 35), 6):
        emit(dt, {"time": epoch(dt), "app": "store-sync", "host": "store-sync-29404950-m2xw8",
                  "level": "WARN",
                  "message": f"Store sync run {rng.randint(8900, 8999)} finished with status PARTIAL: "
                             f"{rng.randint(2, 7)} of 412 stores did not acknowledge the catalogue (no error reported)",
                  "job": "catalogue-push", "duration_ms": rng.randint(180000, 260000)})


@incident("checkout-api", "db_schema_mismatch",
          "checkout-api 2026.11.28-1 inserts `orders.gift_card_id`, a column no migration creates")
def checkout_schema_mismatch():
    sql = ("INSERT INTO orders (store_id, register_id, idempotency_key, amount, gift_card_id, status, created_at) "
           "VALUES (?, ?, ?, ?, ?, 'PENDING', now()) RETURNING id")
    for start, end, n in ((at(3, 4), at(3, 20), 14), (at(3, 21), at(3, 47), 22)):
        for dt in times(start, end, n):
            pos = rng.randint(60, 90)
            top = f"PreparedStatementCallback; bad SQL grammar [{sql}]"
            root = f'ERROR: column "gift_card_id" of relation "orders" does not exist\n  Position: {pos}'
            stack = jstack(
                f"org.springframework.jdbc.BadSqlGrammarException: {top}",
                [
                    "org.springframework.jdbc.support.SQLStateSQLExceptionTranslator.doTranslate(SQLStateSQLExceptionTranslator.java:112)",
                    "org.springframework.jdbc.support.AbstractFallbackSQLExceptionTranslator.translate(AbstractFallbackSQLExceptionTranslator.java:70)",
                    "org.springframework.jdbc.core.JdbcTemplate.translateException(JdbcTemplate.java:1548)",
                    "org.springframework.jdbc.core.JdbcTemplate.execute(JdbcTemplate.java:677)",
                    "org.springframework.jdbc.core.JdbcTemplate.query(JdbcTemplate.java:723)",
                    "org.springframework.jdbc.core.JdbcTemplate.queryForObject(JdbcTemplate.java:892)",
                    chk("OrderRepository", "insertOrder", "repo_insert"),
                    chk("CheckoutController", "lambda$checkout$0", "ctl_insert"),
                    "org.springframework.transaction.support.TransactionTemplate.execute(TransactionTemplate.java:140)",
                ] + checkout_frames()[:6],
                causes=[(f"org.postgresql.util.PSQLException: {root}", [
                    "org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2725)",
                    "org.postgresql.core.v3.QueryExecutorImpl.processResults(QueryExecutorImpl.java:2412)",
                    "org.postgresql.core.v3.QueryExecutorImpl.execute(QueryExecutorImpl.java:371)",
                    "org.postgresql.jdbc.PgStatement.executeInternal(PgStatement.java:502)",
                    "org.postgresql.jdbc.PgPreparedStatement.executeQuery(PgPreparedStatement.java:134)",
                    "com.zaxxer.hikari.pool.HikariProxyPreparedStatement.executeQuery(HikariProxyPreparedStatement.java)",
                    "org.springframework.jdbc.core.JdbcTemplate.lambda$query$3(JdbcTemplate.java:728)",
                    "org.springframework.jdbc.core.JdbcTemplate.execute(JdbcTemplate.java:658)",
                ], 64)])
            ctx = checkout_ctx(dt, duration=rng.randint(60, 180))
            emit(dt, api_error(dt, "org.springframework.jdbc.BadSqlGrammarException", top, stack,
                               root='PSQLException: ERROR: column "gift_card_id" of relation "orders" does not exist',
                               ctx=ctx, app_version="2026.11.28-1"))


@incident("payments-gateway", "config_missing",
          "payments-gateway 2.14.0 reads `PSP_MERCHANT_ID`; the manifest still sets `MERCHANT_ID`; new pod exits at start")
def gateway_config_missing():
    stack = ("config: required environment variable PSP_MERCHANT_ID is not set\n" + go_frames([
        ("github.com/keele/pos/payments-gateway/internal/config.required",
         "/src/payments-gateway/internal/config/config.go", L["gw_cfg_errorf"]),
        ("github.com/keele/pos/payments-gateway/internal/config.Load",
         "/src/payments-gateway/internal/config/config.go", L["gw_cfg_merchant"]),
        ("main.main", "/src/payments-gateway/cmd/gateway/main.go", L["gw_main_load"]),
        ("runtime.main", "/usr/local/go/src/runtime/proc.go", 271),
        ("runtime.goexit", "/usr/local/go/src/runtime/asm_amd64.s", 1695),
    ]))
    # restarts with back-off 10s, 20s, 40s, 80s, 160s, 300s, 300s
    dt = at(5, 31, 12.4)
    for delay in (0, 11, 22, 43, 84, 165, 305, 306):
        dt = dt + timedelta(seconds=delay + rng.uniform(0.1, 1.5))
        emit(dt, go_event(dt, "FATAL",
                          "invalid configuration: config: required environment variable PSP_MERCHANT_ID is not set",
                          host=GATEWAY_NEW_POD, stack=stack, version="2.14.0"))


@incident("payments-gateway", "config_missing",
          "Kubernetes back-off events for the crash-looping new payments-gateway pod (same cause as the FATAL start-up lines)")
def gateway_crashloop():
    uid_ = uid()
    for i, dt in enumerate(times(at(5, 31, 40), at(5, 50, 30), 12)):
        emit(dt, k8s_event(dt, "payments-gateway", "warning", "BackOff",
                           f"Back-off restarting failed container gateway in pod {GATEWAY_NEW_POD}_pos({uid_})",
                           f"pod/{GATEWAY_NEW_POD}", i + 1))


@incident("inventory-service", "dns_resolution",
          "inventory-service cannot resolve `inventory-db.pos.svc.cluster.local` while CoreDNS is unhealthy")
def inventory_dns():
    host_msg = ('could not translate host name "inventory-db.pos.svc.cluster.local" to address: '
                "Temporary failure in name resolution")
    sa_msg = f"(psycopg2.OperationalError) {host_msg}\n\n(Background on this error at: https://sqlalche.me/e/20/e3q8)"
    for start, end, n in ((at(6, 8), at(6, 19), 18), (at(6, 21), at(6, 31), 14)):
        for dt in times(start, end, n):
            s, k = store(), sku()
            path = f"/v1/stock/{s}/{k}"
            stack = pytb(
                STARLETTE + [
                    pf("/app/inventory/api.py", L["inv_api_stock"], "stock"),
                    pf("/app/inventory/stock.py", L["inv_stock_get"], "get_stock"),
                ] + SA_CONNECT,
                f"sqlalchemy.exc.OperationalError: {sa_msg}",
                cause=([pf(f"{SITE}/psycopg2/__init__.py", 122, "connect",
                           "conn = _connect(dsn, connection_factory=connection_factory, **kwasync)")],
                       f"psycopg2.OperationalError: {host_msg}"))
            emit(dt, py_event(dt, "inventory-service", pick(INVENTORY_PODS), "ERROR", "inventory.api",
                              f"GET {path} failed: {sa_msg}", exception="sqlalchemy.exc.OperationalError",
                              stack=stack, trace_id=hexid(128), path=path, method="GET", http_status=500,
                              store_id=s, duration_ms=rng.randint(5000, 10020)))


@incident("coredns", "dns_resolution",
          "CoreDNS loses its watch on the API server; cluster names stop resolving (shipped with `timestamp`/`msg`/`app`)")
def coredns_errors():
    for dt in times(at(6, 7, 30), at(6, 30), 14):
        emit(dt, {"timestamp": iso_ms(dt), "app": "coredns", "host": pick(COREDNS_PODS), "level": "ERROR",
                  "msg": "[ERROR] plugin/kubernetes: pkg/mod/k8s.io/client-go@v0.29.3/tools/cache/reflector.go:229: "
                         "Failed to watch *v1.EndpointSlice: failed to list *v1.EndpointSlice: "
                         f"Get \"https://10.43.0.1:443/apis/discovery.k8s.io/v1/endpointslices?limit=500&resourceVersion={rng.randint(31000000, 31999999)}\": "
                         "dial tcp 10.43.0.1:443: i/o timeout",
                  "namespace": "kube-system"})


@incident("checkout-api", "connection_refused",
          "Redis cart cache `redis-cart` refuses connections while its pod is rescheduled during a node drain")
def checkout_redis_refused():
    for start, end, n in ((at(7, 2), at(7, 9), 24), (at(7, 11), at(7, 18), 21)):
        for dt in times(start, end, n):
            stack = jstack(
                "org.springframework.data.redis.RedisConnectionFailureException: Unable to connect to Redis",
                [
                    "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory$ExceptionTranslatingConnectionProvider.translateException(LettuceConnectionFactory.java:1847)",
                    "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory$ExceptionTranslatingConnectionProvider.getConnection(LettuceConnectionFactory.java:1778)",
                    "org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory.getConnection(LettuceConnectionFactory.java:1055)",
                    "org.springframework.data.redis.core.RedisConnectionUtils.fetchConnection(RedisConnectionUtils.java:195)",
                    "org.springframework.data.redis.core.RedisTemplate.execute(RedisTemplate.java:398)",
                    "org.springframework.data.redis.core.AbstractOperations.execute(AbstractOperations.java:117)",
                    "org.springframework.data.redis.core.DefaultValueOperations.get(DefaultValueOperations.java:54)",
                    chk("CartService", "loadCart", "cart_load"),
                    chk("CheckoutController", "checkout", "ctl_load"),
                ] + SPRING_MVC[:6],
                causes=[
                    ("io.lettuce.core.RedisConnectionException: Unable to connect to redis-cart.pos.svc.cluster.local/<unresolved>:6379", [
                        "io.lettuce.core.RedisConnectionException.create(RedisConnectionException.java:78)",
                        "io.lettuce.core.RedisConnectionException.create(RedisConnectionException.java:56)",
                        "io.lettuce.core.AbstractRedisClient.getConnection(AbstractRedisClient.java:350)",
                        "io.lettuce.core.RedisClient.connect(RedisClient.java:216)",
                    ], 71),
                    ("io.netty.channel.AbstractChannel$AnnotatedConnectException: Connection refused: redis-cart.pos.svc.cluster.local/10.43.12.7:6379", [], None),
                    ("java.net.ConnectException: Connection refused", [
                        "java.base/sun.nio.ch.Net.pollConnect(Native Method)",
                        "java.base/sun.nio.ch.Net.pollConnectNow(Net.java:672)",
                        "java.base/sun.nio.ch.SocketChannelImpl.finishConnect(SocketChannelImpl.java:946)",
                        "io.netty.channel.socket.nio.NioSocketChannel.doFinishConnect(NioSocketChannel.java:337)",
                        "io.netty.channel.nio.AbstractNioChannel$AbstractNioUnsafe.finishConnect(AbstractNioChannel.java:335)",
                    ], 9),
                ])
            ctx = checkout_ctx(dt, duration=rng.randint(2000, 2090))
            emit(dt, api_error(dt, "org.springframework.data.redis.RedisConnectionFailureException",
                               "Unable to connect to Redis", stack,
                               root="ConnectException: Connection refused", ctx=ctx))


@incident("inventory-service", "null_reference",
          "`stock.reserve` dereferences a missing stock row (SKU not stocked in that store) - stock.py:42")
def inventory_none_quantity():
    for start, end, n in ((at(7, 35), at(7, 52), 13), (at(10, 18), at(10, 31), 10),
                          (at(13, 40), at(13, 58), 15), (at(17, 8), at(17, 22), 11), (at(21, 2), at(21, 9), 5)):
        for dt in times(start, end, n):
            s, oid = store(), order_id(dt)
            path = f"/v1/orders/{oid}/reservations"
            stack = pytb(STARLETTE + [
                pf("/app/inventory/api.py", L["inv_api_reserve"], "reserve"),
                pf("/app/inventory/reservations.py", L["inv_res_reserve"], "reserve_order"),
                pf("/app/inventory/stock.py", L["inv_stock_npe"], "reserve"),
            ], "AttributeError: 'NoneType' object has no attribute 'quantity'")
            emit(dt, py_event(dt, "inventory-service", pick(INVENTORY_PODS), "ERROR", "inventory.api",
                              f"POST {path} failed: 'NoneType' object has no attribute 'quantity'",
                              exception="AttributeError", stack=stack, trace_id=hexid(128), path=path,
                              method="POST", http_status=500, store_id=s, order_id=oid, sku=sku(),
                              duration_ms=rng.randint(8, 40)))


def axios_429_stack():
    return "\n".join([
        "AxiosError: Request failed with status code 429",
        "    at settle (/srv/loyalty-service/node_modules/axios/dist/node/axios.cjs:2019:12)",
        "    at IncomingMessage.handleStreamEnd (/srv/loyalty-service/node_modules/axios/dist/node/axios.cjs:3135:11)",
        "    at IncomingMessage.emit (node:events:531:35)",
        "    at endReadableNT (node:internal/streams/readable:1698:12)",
        "    at process.processTicksAndRejections (node:internal/process/task_queues:82:21)",
        "    at Axios.request (/srv/loyalty-service/node_modules/axios/dist/node/axios.cjs:4287:41)",
        NODE_TICKS,
        node_at("pushAccrual", LOY_ROOT + "points.js", L["loy_partner_post"], 3, True),
        node_at("awardPoints", LOY_ROOT + "points.js", L["loy_push_call"], 3, True),
        node_at(None, LOY_ROOT + "server.js", L["srv_award"], 20, True),
    ])


@incident("loyalty-service", "upstream_rate_limited",
          "loyalty partner API answers 429 at the morning, lunch and evening peaks; accruals are not retried")
def loyalty_429():
    for start, end, n in ((at(8, 10), at(8, 34), 32), (at(12, 14), at(12, 41), 40),
                          (at(17, 44), at(18, 6), 38), (at(19, 50), at(19, 58), 12)):
        for dt in times(start, end, n):
            member = rng.randint(1_000_000, 4_999_999)
            oid = order_id(dt)
            emit(dt, node_event(dt, "ERROR", "Request failed with status code 429", exception="AxiosError",
                                stack=axios_429_stack(), trace_id=hexid(128), path="/v1/points/award",
                                http_status=502, orderId=oid, store_id=store(),
                                upstream_url=f"https://api.loyaltypartner.example/v2/members/{member}/accruals",
                                upstream_status=429, retry_after=str(rng.choice((15, 30, 30, 60))),
                                ratelimit_limit="50/s", response_time_ms=rng.randint(40, 160)))


@incident("payments-gateway", "tls_certificate",
          "card processor chain fails verification at 09:00: the pinned PSP CA bundle holds an intermediate that expired")
def gateway_tls_expired():
    for start, end, n in ((at(9, 0, 4), at(9, 12), 34), (at(9, 13), at(9, 27), 28), (at(9, 29), at(9, 41), 20)):
        for dt in times(start, end, n):
            oid, s, trace, took = order_id(dt), store(), hexid(128), rng.randint(18, 60)
            cause = ('Post "https://psp.cardproc.example/v1/authorizations": tls: failed to verify certificate: '
                     f"x509: certificate has expired or is not yet valid: current time {iso_s(dt)} is after 2026-11-28T09:00:00Z")
            emit(dt, go_event(dt, "ERROR", f"psp authorize order={oid}: {cause}",
                              exception="*tls.CertificateVerificationError", stack=gw_authorize_stack(cause, oid),
                              trace_id=trace, order_id=oid, store_id=str(s), duration_ms=took, http_status=502))
            TLS_FAILURES.append({"dt": dt, "trace_id": trace, "order_id": oid, "store_id": s, "duration_ms": took})


TLS_FAILURES: list[dict] = []


@incident("checkout-api", "tls_certificate",
          "checkout-api gets 502 from payments-gateway during the PSP certificate outage (same trace ids as the x509 errors)")
def checkout_gateway_502():
    body = '{"status":"ERROR","declineReason":"processor_unavailable"}'
    top = f'502 Bad Gateway: "{body}<EOL>"'
    stack = jstack(f"org.springframework.web.client.HttpServerErrorException$BadGateway: {top}", [
        "org.springframework.web.client.HttpServerErrorException.create(HttpServerErrorException.java:110)",
        "org.springframework.web.client.DefaultResponseErrorHandler.handleError(DefaultResponseErrorHandler.java:186)",
        "org.springframework.web.client.DefaultResponseErrorHandler.handleError(DefaultResponseErrorHandler.java:137)",
        "org.springframework.web.client.RestTemplate.handleResponse(RestTemplate.java:915)",
        "org.springframework.web.client.RestTemplate.doExecute(RestTemplate.java:864)",
        "org.springframework.web.client.RestTemplate.execute(RestTemplate.java:781)",
        "org.springframework.web.client.RestTemplate.postForEntity(RestTemplate.java:529)",
        chk("PaymentClient", "authorize", "pay_post"),
        chk("CheckoutController", "lambda$checkout$0", "ctl_pay"),
        "org.springframework.transaction.support.TransactionTemplate.execute(TransactionTemplate.java:140)",
    ] + checkout_frames())
    for g in TLS_FAILURES[::2]:
        dt = g["dt"] + timedelta(milliseconds=rng.randint(2, 15))
        ctx = {"trace_id": g["trace_id"], "span_id": hexid(64), "store_id": g["store_id"],
               "register_id": register(g["store_id"]), "method": "POST", "path": "/api/v1/checkout",
               "http_status": 502, "duration_ms": g["duration_ms"] + rng.randint(20, 90)}
        emit(dt, api_error(dt, "org.springframework.web.client.HttpServerErrorException$BadGateway", top, stack,
                           ctx=ctx, order_id=g["order_id"], upstream="payments-gateway", upstream_status=502))


@incident("checkout-api", "null_reference",
          "`CartService.applyDiscount` NPE on carts without a customer (coupon scanned, no loyalty card) - CartService.java:87")
def checkout_npe():
    top = ('Cannot invoke "com.keele.pos.checkout.model.Customer.getLoyaltyTier()" because the return value of '
           '"com.keele.pos.checkout.model.Cart.getCustomer()" is null')
    stack = jstack(f"java.lang.NullPointerException: {top}", [
        chk("CartService", "applyDiscount", "cart_npe"),
        chk("CheckoutController", "checkout", "ctl_discount"),
    ] + SPRING_MVC)
    for start, end, n in ((at(9, 44), at(10, 2), 26), (at(14, 3), at(14, 21), 19), (at(19, 18), at(19, 31), 13),
                          (at(22, 40), at(22, 44), 4)):
        for dt in times(start, end, n):
            emit(dt, api_error(dt, "java.lang.NullPointerException", top, stack,
                               ctx=checkout_ctx(dt, duration=rng.randint(4, 30)),
                               cart_id=uid(), coupon_code=f"BF26-{rng.randint(1000, 9999)}"))


@incident("receipts-worker", "serialization_error",
          "click-and-collect publishes receipts truncated at 1 KiB; `json.loads` fails on them")
def receipts_bad_json():
    for start, end, n in ((at(10, 27), at(10, 39), 12), (at(10, 44), at(10, 52), 10)):
        for dt in times(start, end, n):
            part, off = rng.randint(0, 5), rng.randint(1_880_000, 1_890_000)
            col = rng.randint(1005, 1024)
            exc = f"Unterminated string starting at: line 1 column {col} (char {col - 1})"
            stack = pytb([
                pf("/app/receipts/worker.py", L["rcp_handle"], "main"),
                pf("/app/receipts/worker.py", L["rcp_loads"], "handle"),
                pf("/usr/local/lib/python3.12/json/__init__.py", 346, "loads", "return _default_decoder.decode(s)"),
                pf("/usr/local/lib/python3.12/json/decoder.py", 337, "decode", "obj, end = self.raw_decode(s, idx=_w(s, 0).end())"),
                pf("/usr/local/lib/python3.12/json/decoder.py", 353, "raw_decode", "obj, end = self.scan_once(s, idx)"),
            ], f"json.decoder.JSONDecodeError: {exc}")
            emit(dt, py_event(dt, "receipts-worker", RECEIPTS_POD, "ERROR", "receipts.worker",
                              f"failed to render receipt partition={part} offset={off}: {exc}",
                              exception="json.decoder.JSONDecodeError", stack=stack, topic="pos.receipts",
                              partition=part, offset=off, message_bytes=1024, producer="click-collect-api"))


@incident("checkout-api", "upstream_auth_failure",
          "tax service returns 401: the long-lived `TAX_API_TOKEN` expired at 11:00; rotated at 11:24")
def checkout_tax_401():
    body = '{"error":"invalid_token","error_description":"The access token expired"}'
    top = f'401 Unauthorized: "{body}"'
    stack = jstack(f"org.springframework.web.client.HttpClientErrorException$Unauthorized: {top}", [
        "org.springframework.web.client.HttpClientErrorException.create(HttpClientErrorException.java:106)",
        "org.springframework.web.client.DefaultResponseErrorHandler.handleError(DefaultResponseErrorHandler.java:183)",
        "org.springframework.web.client.DefaultResponseErrorHandler.handleError(DefaultResponseErrorHandler.java:137)",
        "org.springframework.web.client.RestTemplate.handleResponse(RestTemplate.java:915)",
        "org.springframework.web.client.RestTemplate.doExecute(RestTemplate.java:864)",
        "org.springframework.web.client.RestTemplate.execute(RestTemplate.java:764)",
        "org.springframework.web.client.RestTemplate.postForObject(RestTemplate.java:481)",
        chk("CartService", "quoteTax", "cart_tax"),
        chk("CheckoutController", "checkout", "ctl_tax"),
    ] + SPRING_MVC)
    for start, end, n in ((at(11, 0, 2), at(11, 9), 30), (at(11, 10), at(11, 24), 38)):
        for dt in times(start, end, n):
            emit(dt, api_error(dt, "org.springframework.web.client.HttpClientErrorException$Unauthorized", top, stack,
                               ctx=checkout_ctx(dt, duration=rng.randint(30, 90)),
                               upstream="tax-service", upstream_url="https://tax.keele-internal.example/v2/quote",
                               upstream_status=401))


# --- the lunch-time cascade: slow card processor -> checkout read timeouts -> pool held by
# --- open transactions -> Hikari timeouts -> nginx 504s -> registers retry -> duplicate keys

CASCADE: list[dict] = []


def cascade_requests():
    """Requests hitting checkout-api 12:05-12:42 while the processor is slow."""
    for start, end, n in ((at(12, 5), at(12, 17), 86), (at(12, 19), at(12, 42), 94)):
        for dt in times(start, end, n):
            s = store()
            CASCADE.append({"t0": dt, "trace_id": hexid(128), "store_id": s, "register_id": register(s),
                            "order_id": order_id(dt), "key": uid(), "client": register_ip(s),
                            "upstream": f"10.42.{rng.choice((3, 4, 6))}.{rng.randint(10, 60)}:8080"})


@incident("payments-gateway", "upstream_timeout",
          "card processor slow at lunch peak: gateway calls hit the 8 s `PSP_TIMEOUT` (client.go)")
def gateway_psp_timeout():
    cause = ('Post "https://psp.cardproc.example/v1/authorizations": context deadline exceeded '
             "(Client.Timeout exceeded while awaiting headers)")
    for r in CASCADE[0::2][:80]:
        dt = r["t0"] + timedelta(seconds=8.0 + rng.uniform(0.6, 1.2))
        oid = r["order_id"]
        emit(dt, go_event(dt, "ERROR", f"psp authorize order={oid}: {cause}", exception="*url.Error",
                          stack=gw_authorize_stack(cause, oid), trace_id=r["trace_id"], order_id=oid,
                          store_id=str(r["store_id"]), duration_ms=rng.randint(8000, 8012), http_status=502))


@incident("checkout-api", "upstream_timeout",
          "checkout-api gives up on payments-gateway after its 5 s read timeout (PaymentClient.java)")
def checkout_payment_timeout():
    url = "http://payments-gateway.pos.svc.cluster.local:8080/v1/payments"
    top = f'I/O error on POST request for "{url}": Read timed out'
    stack = jstack(f"org.springframework.web.client.ResourceAccessException: {top}", [
        "org.springframework.web.client.RestTemplate.createResourceAccessException(RestTemplate.java:905)",
        "org.springframework.web.client.RestTemplate.doExecute(RestTemplate.java:885)",
        "org.springframework.web.client.RestTemplate.execute(RestTemplate.java:781)",
        "org.springframework.web.client.RestTemplate.postForEntity(RestTemplate.java:529)",
        chk("PaymentClient", "authorize", "pay_post"),
        chk("CheckoutController", "lambda$checkout$0", "ctl_pay"),
        "org.springframework.transaction.support.TransactionTemplate.execute(TransactionTemplate.java:140)",
    ] + checkout_frames(), causes=[("java.net.SocketTimeoutException: Read timed out", [
        "java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:278)",
        "java.base/sun.nio.ch.NioSocketImpl.implRead(NioSocketImpl.java:304)",
        "java.base/sun.nio.ch.NioSocketImpl.read(NioSocketImpl.java:346)",
        "java.base/java.io.BufferedInputStream.fill(BufferedInputStream.java:244)",
        "java.base/sun.net.www.http.HttpClient.parseHTTPHeader(HttpClient.java:789)",
        "java.base/sun.net.www.protocol.http.HttpURLConnection.getInputStream0(HttpURLConnection.java:1615)",
        "java.base/java.net.HttpURLConnection.getResponseCode(HttpURLConnection.java:529)",
        "org.springframework.http.client.SimpleClientHttpResponse.getStatusCode(SimpleClientHttpResponse.java:55)",
    ], 72)])
    for r in CASCADE[0::2][:80]:
        dt = r["t0"] + timedelta(seconds=5.0 + rng.uniform(0.05, 0.4))
        ctx = {"trace_id": r["trace_id"], "span_id": hexid(64), "store_id": r["store_id"],
               "register_id": r["register_id"], "method": "POST", "path": "/api/v1/checkout",
               "http_status": 500, "duration_ms": rng.randint(5060, 5420)}
        emit(dt, api_error(dt, "org.springframework.web.client.ResourceAccessException", top, stack,
                           root="SocketTimeoutException: Read timed out", ctx=ctx, order_id=r["order_id"]))


@incident("checkout-api", "db_pool_exhausted",
          "Hikari pool (10 connections) drained: every checkout holds a connection across the payment call")
def checkout_hikari():
    for r in CASCADE[1::2][:76]:
        waiting = rng.randint(18, 64)
        hikari = (f"HikariPool-1 - Connection is not available, request timed out after 30000ms "
                  f"(total=10, active=10, idle=0, waiting={waiting})")
        stack = jstack("org.springframework.transaction.CannotCreateTransactionException: Could not open JDBC Connection for transaction", [
            "org.springframework.jdbc.datasource.DataSourceTransactionManager.doBegin(DataSourceTransactionManager.java:309)",
            "org.springframework.transaction.support.AbstractPlatformTransactionManager.startTransaction(AbstractPlatformTransactionManager.java:531)",
            "org.springframework.transaction.support.AbstractPlatformTransactionManager.getTransaction(AbstractPlatformTransactionManager.java:405)",
            "org.springframework.transaction.support.TransactionTemplate.execute(TransactionTemplate.java:137)",
        ] + checkout_frames(), causes=[(f"java.sql.SQLTransientConnectionException: {hikari}", [
            "com.zaxxer.hikari.pool.HikariPool.createTimeoutException(HikariPool.java:686)",
            "com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:179)",
            "com.zaxxer.hikari.pool.HikariPool.getConnection(HikariPool.java:144)",
            "com.zaxxer.hikari.HikariDataSource.getConnection(HikariDataSource.java:127)",
            "org.springframework.jdbc.datasource.DataSourceTransactionManager.doBegin(DataSourceTransactionManager.java:265)",
        ], 62)])
        dt = r["t0"] + timedelta(seconds=30.0 + rng.uniform(0.01, 0.3))
        ctx = {"trace_id": r["trace_id"], "span_id": hexid(64), "store_id": r["store_id"],
               "register_id": r["register_id"], "method": "POST", "path": "/api/v1/checkout",
               "http_status": 500, "duration_ms": rng.randint(30010, 30300)}
        emit(dt, api_error(dt, "org.springframework.transaction.CannotCreateTransactionException",
                           "Could not open JDBC Connection for transaction", stack,
                           root=f"SQLTransientConnectionException: {hikari}", ctx=ctx))


@incident("edge-nginx", "upstream_timeout",
          "edge nginx returns 504: checkout-api does not answer within `proxy_read_timeout 10s`")
def nginx_upstream_timeout():
    for r in CASCADE[1::2][:48] + CASCADE[1::2][76:]:
        dt = r["t0"] + timedelta(seconds=10.0 + rng.uniform(0.0, 0.05))
        emit(dt, nginx_error(dt, "error",
                             "upstream timed out (110: Connection timed out) while reading response header from upstream",
                             r["client"], "POST /api/v1/checkout HTTP/1.1",
                             f"http://{r['upstream']}/api/v1/checkout",
                             trace_id=r["trace_id"], http_status=504, store_id=r["store_id"]))


@incident("checkout-api", "data_integrity",
          "registers retry after a 504 with the same idempotency key; the retry's INSERT violates `orders_idempotency_key_key`")
def checkout_duplicate_key():
    sql = ("INSERT INTO orders (store_id, register_id, idempotency_key, amount, gift_card_id, status, created_at) "
           "VALUES (?, ?, ?, ?, ?, 'PENDING', now()) RETURNING id")
    # requests that nginx gave up on but that got a connection and committed later
    retried = CASCADE[1::2][76:] + [None] * 8

    def one(dt, key, ctx):
        pg = (f'ERROR: duplicate key value violates unique constraint "orders_idempotency_key_key"\n'
              f"  Detail: Key (idempotency_key)=({key}) already exists.")
        top = f"PreparedStatementCallback; SQL [{sql}]; {pg}"
        stack = jstack(f"org.springframework.dao.DuplicateKeyException: {top}", [
            "org.springframework.jdbc.support.SQLErrorCodeSQLExceptionTranslator.doTranslate(SQLErrorCodeSQLExceptionTranslator.java:243)",
            "org.springframework.jdbc.support.AbstractFallbackSQLExceptionTranslator.translate(AbstractFallbackSQLExceptionTranslator.java:107)",
            "org.springframework.jdbc.core.JdbcTemplate.translateException(JdbcTemplate.java:1548)",
            "org.springframework.jdbc.core.JdbcTemplate.execute(JdbcTemplate.java:677)",
            "org.springframework.jdbc.core.JdbcTemplate.queryForObject(JdbcTemplate.java:892)",
            chk("OrderRepository", "insertOrder", "repo_insert"),
            chk("CheckoutController", "lambda$checkout$0", "ctl_insert"),
            "org.springframework.transaction.support.TransactionTemplate.execute(TransactionTemplate.java:140)",
        ] + checkout_frames(), causes=[(f"org.postgresql.util.PSQLException: {pg}", [
            "org.postgresql.core.v3.QueryExecutorImpl.receiveErrorResponse(QueryExecutorImpl.java:2725)",
            "org.postgresql.core.v3.QueryExecutorImpl.processResults(QueryExecutorImpl.java:2412)",
            "org.postgresql.jdbc.PgPreparedStatement.executeQuery(PgPreparedStatement.java:134)",
        ], 70)])
        emit(dt, api_error(dt, "org.springframework.dao.DuplicateKeyException",
                           'PreparedStatementCallback; ERROR: duplicate key value violates unique constraint '
                           f'"orders_idempotency_key_key" (Key (idempotency_key)=({key}) already exists.)',
                           stack, ctx=ctx, idempotency_key=key))

    late = times(at(17, 48), at(17, 56), 8)
    for r in retried:
        if r is not None:
            dt = r["t0"] + timedelta(seconds=rng.uniform(31, 45))
            ctx = {"trace_id": hexid(128), "span_id": hexid(64), "store_id": r["store_id"],
                   "register_id": r["register_id"], "method": "POST", "path": "/api/v1/checkout",
                   "http_status": 500, "duration_ms": rng.randint(900, 9000)}
            one(dt, r["key"], ctx)
        else:
            dt = late.pop(0)
            one(dt, uid(), checkout_ctx(dt, duration=rng.randint(20, 80)))


@incident("inventory-service", "db_deadlock",
          "two checkouts lock the same stock rows in scan order, opposite orders -> Postgres deadlock (reservations.py)")
def inventory_deadlock():
    for start, end, n in ((at(13, 9), at(13, 21), 20), (at(13, 23), at(13, 35), 17)):
        for dt in times(start, end, n):
            s, oid = store(), order_id(dt)
            p1, p2 = rng.randint(2000, 9000), rng.randint(2000, 9000)
            x1 = rng.randint(99_800_000, 99_899_999)
            pg = ("deadlock detected\n"
                  f"DETAIL:  Process {p1} waits for ShareLock on transaction {x1 + 1}; blocked by process {p2}.\n"
                  f"Process {p2} waits for ShareLock on transaction {x1}; blocked by process {p1}.\n"
                  "HINT:  See server log for query details.\n"
                  f"CONTEXT:  while locking tuple ({rng.randint(10, 900)},{rng.randint(1, 60)}) in relation \"stock_items\"")
            sql = ("SELECT stock_items.id, stock_items.store_id, stock_items.sku, stock_items.quantity, "
                   "stock_items.reserved, stock_items.version \nFROM stock_items \n"
                   "WHERE stock_items.store_id = %(store_id_1)s AND stock_items.sku = %(sku_1)s FOR UPDATE")
            sa_msg = (f"(psycopg2.errors.DeadlockDetected) {pg}\n\n[SQL: {sql}]\n"
                      f"[parameters: {{'store_id_1': {s}, 'sku_1': '{sku()}'}}]\n"
                      "(Background on this error at: https://sqlalche.me/e/20/e3q8)")
            path = f"/v1/orders/{oid}/reservations"
            stack = pytb(STARLETTE + [
                pf("/app/inventory/api.py", L["inv_api_reserve"], "reserve"),
                pf("/app/inventory/reservations.py", L["inv_res_reserve"], "reserve_order"),
                pf("/app/inventory/stock.py", L["inv_stock_lock"], "reserve"),
            ] + SA_EXEC, f"sqlalchemy.exc.OperationalError: {sa_msg}",
                cause=([pf(f"{SITE}/sqlalchemy/engine/default.py", 941, "do_execute",
                           "cursor.execute(statement, parameters)")], f"psycopg2.errors.DeadlockDetected: {pg}"))
            emit(dt, py_event(dt, "inventory-service", pick(INVENTORY_PODS), "ERROR", "inventory.api",
                              f"POST {path} failed: {sa_msg}", exception="sqlalchemy.exc.OperationalError",
                              stack=stack, trace_id=hexid(128), path=path, method="POST", http_status=500,
                              store_id=s, order_id=oid, lines=rng.randint(2, 14),
                              duration_ms=rng.randint(1000, 1100)))
            # the database's own view of the same deadlock, a few ms earlier
            pdt = dt - timedelta(milliseconds=rng.randint(3, 30))
            PG_DEADLOCKS.append((pdt, p1, p2, x1, s))


PG_DEADLOCKS: list = []


@incident("inventory-db", "db_deadlock",
          "PostgreSQL server log of the same deadlocks (`deadlock detected`, SQLSTATE 40P01)")
def postgres_deadlock():
    for pdt, p1, p2, x1, s in PG_DEADLOCKS:
        emit(pdt, {"_time": iso_ms(pdt), "service": "inventory-db", "host": "inventory-db-0", "level": "ERROR",
                   "message": "deadlock detected", "error_severity": "ERROR", "sql_state_code": "40P01",
                   "pid": p1, "user": "inventory", "dbname": "inventory", "application_name": "inventory-service",
                   "detail": (f"Process {p1} waits for ShareLock on transaction {x1 + 1}; blocked by process {p2}. "
                              f"Process {p2} waits for ShareLock on transaction {x1}; blocked by process {p1}."),
                   "hint": "See server log for query details.",
                   "context": "while locking tuple in relation \"stock_items\"",
                   "statement": "SELECT stock_items.id, stock_items.store_id, stock_items.sku, stock_items.quantity, "
                                "stock_items.reserved, stock_items.version FROM stock_items WHERE "
                                "stock_items.store_id = $1 AND stock_items.sku = $2 FOR UPDATE"})


@incident("inventory-service", "concurrency_conflict",
          "`release_expired` updates versioned stock rows without locking; concurrent reservations make it fail with StaleDataError")
def inventory_stale_data():
    for dt in times(at(14, 29), at(14, 58), 26):
        dt = dt.replace(second=rng.randint(0, 2))
        n = rng.randint(2, 9)
        msg = f"UPDATE statement on table 'stock_items' expected to update {n} row(s); {n - rng.randint(1, 2)} were matched."
        stack = pytb([
            pf("/app/inventory/api.py", L["inv_api_release"], "loop"),
            pf("/usr/local/lib/python3.12/asyncio/threads.py", 25, "to_thread", "return await loop.run_in_executor(None, func_call)"),
            pf("/usr/local/lib/python3.12/concurrent/futures/thread.py", 58, "run", "result = self.fn(*self.args, **self.kwargs)"),
            pf("/app/inventory/reservations.py", L["inv_res_commit"], "release_expired"),
            pf(f"{SITE}/sqlalchemy/orm/session.py", 2028, "commit", "trans.commit(_to_root=True)"),
            pf(f"{SITE}/sqlalchemy/orm/session.py", 1313, "commit", "self._prepare_impl()"),
            pf(f"{SITE}/sqlalchemy/orm/session.py", 1288, "_prepare_impl", "self.session.flush()"),
            pf(f"{SITE}/sqlalchemy/orm/session.py", 4352, "flush", "self._flush(objects)"),
            pf(f"{SITE}/sqlalchemy/orm/unitofwork.py", 466, "execute", "rec.execute(self)"),
            pf(f"{SITE}/sqlalchemy/orm/persistence.py", 85, "save_obj", "_emit_update_statements("),
            pf(f"{SITE}/sqlalchemy/orm/persistence.py", 948, "_emit_update_statements", "raise orm_exc.StaleDataError("),
        ], f"sqlalchemy.orm.exc.StaleDataError: {msg}")
        emit(dt, py_event(dt, "inventory-service", pick(INVENTORY_PODS), "ERROR", "inventory.api",
                          f"release_expired failed: {msg}", exception="sqlalchemy.orm.exc.StaleDataError",
                          stack=stack, job="release_expired", batch_size=200))


@incident("loyalty-service", "null_reference",
          "`awardPoints` reads `member.profile` for a card number with no member row - points.js:31")
def loyalty_undefined():
    stack = "\n".join([
        "TypeError: Cannot read properties of undefined (reading 'profile')",
        node_at("awardPoints", LOY_ROOT + "points.js", L["loy_npe"], 23),
        NODE_TICKS,
        node_at(None, LOY_ROOT + "server.js", L["srv_award"], 20, True),
    ])
    for start, end, n in ((at(14, 38), at(14, 55), 21), (at(18, 27), at(18, 41), 16)):
        for dt in times(start, end, n):
            emit(dt, node_event(dt, "ERROR", "Cannot read properties of undefined (reading 'profile')",
                                exception="TypeError", stack=stack, trace_id=hexid(128), path="/v1/points/award",
                                http_status=500, orderId=order_id(dt), store_id=store(),
                                cardNumber=f"6034{rng.randint(10**11, 10**12 - 1)}"))


@incident("receipts-worker", "queue_backlog",
          "receipts consumer falls behind on `pos.receipts` (afternoon volume); lag grows past 60k")
def receipts_lag():
    lag = 5400
    for dt in times(at(14, 58), at(16, 12), 36):
        lag += rng.randint(800, 2200)
        part = rng.randint(0, 5)
        emit(dt, py_event(dt, "receipts-worker", RECEIPTS_POD, "WARNING", "receipts.worker",
                          f"consumer lag on pos.receipts partition {part} is {lag + rng.randint(-400, 400)} messages "
                          "(threshold 5000)", topic="pos.receipts", partition=part, consumer_group="receipts-worker"))


@incident("receipts-worker", "disk_full",
          "receipts volume (5 Gi PVC) fills up: `[Errno 28] No space left on device` writing PDFs")
def receipts_disk_full():
    for start, end, n in ((at(15, 39), at(15, 52), 26), (at(15, 54), at(16, 4), 22)):
        for dt in times(start, end, n):
            s, oid = store(), order_id(dt - timedelta(minutes=40))
            part, off = rng.randint(0, 5), rng.randint(1_900_000, 1_960_000)
            path = f"/var/receipts/{s}/2026-11-28/{oid}.pdf"
            exc = f"[Errno 28] No space left on device: '{path}'"
            stack = pytb([
                pf("/app/receipts/worker.py", L["rcp_handle"], "main"),
                pf("/app/receipts/worker.py", L["rcp_write"], "handle"),
            ], f"OSError: {exc}")
            emit(dt, py_event(dt, "receipts-worker", RECEIPTS_POD, "ERROR", "receipts.worker",
                              f"failed to render receipt partition={part} offset={off}: {exc}",
                              exception="OSError", stack=stack, topic="pos.receipts", partition=part,
                              offset=off, store_id=s, order_id=oid, volume="receipts-data"))


@incident("receipts-worker", "out_of_memory",
          "after the disk clean-up the worker replays the backlog and is OOMKilled at its 256Mi limit")
def receipts_oom():
    for i, dt in enumerate([at(16, 24, 7.3)] + times(at(16, 26), at(16, 52), 6)):
        emit(dt, k8s_event(dt, "receipts-worker", "error", "OOMKilled",
                           f"Container receipts-worker in pod pos/{RECEIPTS_POD} was OOMKilled "
                           "(exit code 137); memory limit 256Mi, last usage 268Mi",
                           f"pod/{RECEIPTS_POD}", i + 1))


@incident("receipts-worker", "out_of_memory",
          "Kubernetes back-off events for the OOM-looping receipts-worker (same cause as the OOMKilled events)")
def receipts_crashloop():
    uid_ = uid()
    for i, dt in enumerate(times(at(16, 24, 40), at(16, 56), 12)):
        emit(dt, k8s_event(dt, "receipts-worker", "warning", "BackOff",
                           f"Back-off restarting failed container receipts-worker in pod {RECEIPTS_POD}_pos({uid_})",
                           f"pod/{RECEIPTS_POD}", i + 1))


@incident("edge-nginx", "resource_exhaustion",
          "evening peak: `1024 worker_connections are not enough` on the edge proxy")
def nginx_worker_connections():
    for start, end, n in ((at(17, 19), at(17, 31), 20), (at(17, 33), at(17, 44), 16)):
        for dt in times(start, end, n):
            s = store()
            target = pick((f"GET /v1/stock/{s}/{sku()} HTTP/1.1", "POST /api/v1/checkout HTTP/1.1",
                           "POST /v1/points/award HTTP/1.1"))
            path = target.split()[1]
            emit(dt, nginx_error(dt, "alert", "1024 worker_connections are not enough while connecting to upstream",
                                 register_ip(s), target,
                                 f"http://10.42.{rng.choice((3, 4, 6))}.{rng.randint(10, 60)}:8080{path}",
                                 http_status=502, store_id=s))


@incident("loyalty-service", "queue_backlog",
          "`loyalty.points-awarded` queue at its 100k max-length with no consumer (crm-sync down); publishes are nacked")
def loyalty_queue_full():
    for start, end, n in ((at(18, 2), at(18, 19), 26), (at(18, 22), at(18, 40), 22)):
        for dt in times(start, end, n):
            stack = "\n".join([
                "Error: publish to loyalty.points-awarded nacked: messages=100000 consumers=0",
                node_at("publish", LOY_ROOT + "server.js", L["srv_nacked"], 11),
                NODE_TICKS,
                node_at("awardPoints", LOY_ROOT + "points.js", L["loy_publish_call"], 3, True),
                node_at(None, LOY_ROOT + "server.js", L["srv_award"], 20, True),
            ])
            emit(dt, node_event(dt, "ERROR", "publish to loyalty.points-awarded nacked: messages=100000 consumers=0",
                                exception="Error", stack=stack, trace_id=hexid(128), path="/v1/points/award",
                                http_status=500, orderId=order_id(dt), store_id=store(), queue="loyalty.points-awarded",
                                broker="rabbitmq.pos.svc.cluster.local"))


@incident("loyalty-service", "out_of_memory",
          "redis-loyalty hits `maxmemory` (noeviction): balance keys are written without a TTL")
def loyalty_redis_oom():
    stack = "\n".join([
        "ReplyError: OOM command not allowed when used memory > 'maxmemory'.",
        "    at parseError (/srv/loyalty-service/node_modules/redis-parser/lib/parser.js:179:12)",
        "    at parseType (/srv/loyalty-service/node_modules/redis-parser/lib/parser.js:302:14)",
    ])
    for start, end, n in ((at(19, 4), at(19, 16), 24), (at(19, 17), at(19, 31), 20)):
        for dt in times(start, end, n):
            member = rng.randint(1_000_000, 4_999_999)
            emit(dt, node_event(dt, "ERROR", "OOM command not allowed when used memory > 'maxmemory'.",
                                exception="ReplyError", stack=stack, trace_id=hexid(128), path="/v1/points/award",
                                http_status=500, orderId=order_id(dt), store_id=store(),
                                command={"name": "set", "args": [f"balance:{member}", str(rng.randint(10, 90000))]}))


@incident("inventory-service", "dependency_mismatch",
          "inventory-service 5.3.0 image built with SQLAlchemy 1.4 (requirements.txt pin) but code uses the 2.0 API; workers fail to boot")
def inventory_import_error():
    exc = ("ImportError: cannot import name 'DeclarativeBase' from 'sqlalchemy.orm' "
           "(/usr/local/lib/python3.12/site-packages/sqlalchemy/orm/__init__.py)")
    stack = pytb([
        pf("/usr/local/lib/python3.12/multiprocessing/process.py", 314, "_bootstrap", "self.run()"),
        pf("/usr/local/lib/python3.12/multiprocessing/process.py", 108, "run", "self._target(*self._args, **self._kwargs)"),
        pf(f"{SITE}/uvicorn/_subprocess.py", 80, "subprocess_started", "target(sockets=sockets)"),
        pf(f"{SITE}/uvicorn/server.py", 65, "run", "return asyncio.run(self.serve(sockets=sockets))"),
        pf(f"{SITE}/uvicorn/config.py", 435, "load", "self.loaded_app = import_from_string(self.app)"),
        pf(f"{SITE}/uvicorn/importer.py", 19, "import_from_string", "module = importlib.import_module(module_str)"),
        pf("/usr/local/lib/python3.12/importlib/__init__.py", 90, "import_module", "return _bootstrap._gcd_import(name[level:], package, level)"),
        pf("<frozen importlib._bootstrap>", 1387, "_gcd_import"),
        pf("<frozen importlib._bootstrap>", 1360, "_find_and_load"),
        pf("<frozen importlib._bootstrap>", 1331, "_find_and_load_unlocked"),
        pf("<frozen importlib._bootstrap>", 935, "_load_unlocked"),
        pf("<frozen importlib._bootstrap_external>", 995, "exec_module"),
        pf("<frozen importlib._bootstrap>", 488, "_call_with_frames_removed"),
        pf("/app/inventory/api.py", L["inv_api_import_db"], "<module>"),
        pf("/app/inventory/db.py", L["inv_db_import"], "<module>"),
    ], exc)
    for i, dt in enumerate(times(at(20, 14), at(20, 25), 14)):
        emit(dt, py_event(dt, "inventory-service", pick(INVENTORY_NEW_PODS), "CRITICAL", "uvicorn.error",
                          f"Process SpawnProcess-{rng.randint(1, 4)}: {exc}", exception="ImportError", stack=stack,
                          version="5.3.0"))


@incident("loyalty-service", "unknown",
          "`Unhandled promise rejection: [object Object]` - no stack, no error details, nothing else failing")
def loyalty_unhandled():
    for dt in times(at(21, 10), at(21, 41), 9):
        emit(dt, node_event(dt, "ERROR", "Unhandled promise rejection: [object Object]", reason={},
                            pid=rng.choice((1, 1, 7))))


@incident("receipts-worker", "connection_refused",
          "Kafka broker kafka-1 restarts (rolling upgrade); librdkafka connections refused")
def receipts_kafka_refused():
    for dt in times(at(22, 4), at(22, 19), 26):
        b = pick((1, 1, 1, 2))
        ip = {1: "10.42.5.21", 2: "10.42.6.33"}[b]
        emit(dt, py_event(dt, "receipts-worker", RECEIPTS_POD, "ERROR", "receipts.worker",
                          f"kafka error: kafka-{b}.pos.svc.cluster.local:9092/{b}: Connect to ipv4#{ip}:9092 failed: "
                          f"Connection refused (after 0ms in state CONNECT, {rng.randint(1, 30)} identical error(s) suppressed)",
                          kafka_error_code="_TRANSPORT", topic="pos.receipts"))


@incident("checkout-api", "serialization_error",
          "register firmware 7.3 (de-AT locale) sends `tipAmount` as \"12,50\"; Jackson rejects it (400)")
def checkout_bad_decimal():
    for start, end, n in ((at(9, 11), at(9, 19), 8), (at(15, 18), at(15, 27), 11), (at(19, 38), at(19, 44), 7)):
        for dt in times(start, end, n):
            value = f"{rng.randint(1, 25)},{pick(('00', '50', '20', '90'))}"
            msg = ("Resolved [org.springframework.http.converter.HttpMessageNotReadableException: JSON parse error: "
                   f"Cannot deserialize value of type `java.math.BigDecimal` from String \"{value}\": "
                   "not a valid representation]")
            ctx = checkout_ctx(dt, status=400, duration=rng.randint(2, 9), store_id=pick((214, 218, 231)))
            emit(dt, java_event(dt, "WARN", "org.springframework.web.servlet.mvc.support.DefaultHandlerExceptionResolver",
                                msg, exception="org.springframework.http.converter.HttpMessageNotReadableException",
                                user_agent="KeelePOS/7.3.0 (register; de-AT)", **ctx))


# =========================================================================== noise

def noise():
    def hours_weight(h):  # store traffic, UTC (stores open 07:00-20:00 UTC)
        return 1 if h < 6 or h >= 22 else 3 if h < 7 or h >= 20 else 8

    slots = [h for h in range(24) for _ in range(hours_weight(h))]

    def daytime(n, avoid=()):
        """n instants weighted by store traffic, none inside the `avoid` outages."""
        out = []
        while len(out) < n:
            h = pick(slots)
            dt = DAY + timedelta(hours=h, seconds=rng.uniform(0, 3599))
            if not any(a <= dt <= b for a, b in avoid):
                out.append(dt)
        return sorted(out)

    checkout_down = [(at(3, 4), at(3, 47)), (at(7, 2), at(7, 18)), (at(9, 0), at(9, 41)), (at(11, 0), at(11, 24))]

    for dt in daytime(70, checkout_down):
        s = store()
        emit(dt, java_event(dt, "INFO", "com.keele.pos.checkout.CheckoutController",
                            f"checkout ok order={order_id(dt)} store={s} register={register(s)} "
                            f"amount={rng.randint(3, 240)}.{rng.randint(0, 99):02d}",
                            trace_id=hexid(128), store_id=s, duration_ms=rng.randint(180, 1400)))
    for dt in daytime(22, [(at(9, 0), at(9, 41))]):
        emit(dt, go_event(dt, "INFO", "payment authorised", trace_id=hexid(128), order_id=order_id(dt),
                          store_id=str(store()), duration_ms=rng.randint(150, 900), psp_status="APPROVED"))
    for dt in daytime(22, [(at(6, 8), at(6, 31))]):
        s = store()
        emit(dt, py_event(dt, "inventory-service", pick(INVENTORY_PODS), "INFO", "inventory.reservations",
                          "order reserved", order_id=order_id(dt), store_id=s, lines=rng.randint(1, 12)))
    for dt in daytime(10):
        emit(dt, py_event(dt, "inventory-service", pick(INVENTORY_PODS), "DEBUG", "inventory.stock", "reserved",
                          order_id=order_id(dt), store_id=store(), sku=sku(), qty=rng.randint(1, 3)))
    for dt in daytime(18):
        emit(dt, node_event(dt, "INFO", "request completed", path="/v1/points/award", http_status=201,
                            response_time_ms=rng.randint(35, 260), store_id=store()))
    for dt in daytime(22, [(at(15, 39), at(16, 56)), (at(22, 4), at(22, 19))]):
        s = store()
        emit(dt, py_event(dt, "receipts-worker", RECEIPTS_POD, "INFO", "receipts.worker",
                          f"receipt written /var/receipts/{s}/2026-11-28/{order_id(dt)}.pdf"))
    for dt in daytime(24):
        s = store()
        req = pick(("POST /api/v1/checkout", f"GET /v1/stock/{s}/{sku()}", "POST /v1/points/award"))
        status = 201 if req.startswith("POST") else 200
        emit(dt, {"_time": iso_local(dt), "service": "edge-nginx", "host": pick(EDGE_PODS), "level": "INFO",
                  "message": f"{register_ip(s)} - \"{req} HTTP/1.1\" {status} {rng.randint(80, 2400)} "
                             f"rt={rng.uniform(0.02, 1.4):.3f}",
                  "http_status": status, "store_id": s})
    for dt in daytime(16):
        pod_ = pick(CHECKOUT_PODS)
        emit(dt, java_event(dt, "DEBUG", "org.springframework.web.servlet.DispatcherServlet",
                            "GET \"/actuator/health/readiness\", parameters={}", pod=pod_, user_agent="kube-probe/1.29"))
    for dt in daytime(8):
        emit(dt, py_event(dt, "inventory-service", pick(INVENTORY_PODS), "DEBUG", "uvicorn.access",
                          f"10.42.{rng.randint(0, 6)}.1:{rng.randint(30000, 60000)} - \"GET /healthz HTTP/1.1\" 200"))
    for dt in times(at(0, 0), at(23, 59), 12):
        emit(dt, {"_time": iso_ms(dt), "service": "orders-db", "host": "orders-db-0", "level": "INFO",
                  "message": f"checkpoint complete: wrote {rng.randint(400, 9000)} buffers ({rng.uniform(1, 30):.1f}%); "
                             f"0 WAL file(s) added, 0 removed, {rng.randint(1, 6)} recycled; "
                             f"write={rng.uniform(20, 270):.3f} s, sync={rng.uniform(0, 0.2):.3f} s, "
                             f"total={rng.uniform(20, 270):.3f} s",
                  "error_severity": "LOG"})
    for dt in times(at(6, 55), at(7, 5), 3) + times(at(17, 58), at(18, 1), 3):
        emit(dt, {"@timestamp": iso_ms(dt), "service": "rabbitmq", "host": "rabbitmq-0", "log_level": "info",
                  "message": f"accepting AMQP connection <0.{rng.randint(1000, 30000)}.0> "
                             f"(10.42.{rng.randint(2, 7)}.{rng.randint(10, 60)}:{rng.randint(30000, 60000)} -> 10.42.2.8:5672)"})
    for dt in times(at(22, 3), at(22, 21), 5):
        emit(dt, {"_time": iso_ms(dt), "service": "kafka", "host": "kafka-0", "level": "INFO",
                  "message": f"[GroupCoordinator 0]: Preparing to rebalance group receipts-worker in state "
                             f"PreparingRebalance with old generation {rng.randint(40, 60)} (__consumer_offsets-12) "
                             "(reason: Leader kafka-1 changed)"})
    for dt in times(at(0, 55), at(1, 5), 2) + times(at(2, 30), at(2, 38), 2):
        emit(dt, {"time": epoch(dt), "app": "store-sync", "host": "store-sync-29404920-h7kqz", "level": "INFO",
                  "message": f"Store sync run {rng.randint(8800, 8999)} started (412 stores)"})

    def deploy(dt, app, version):
        emit(dt, {"_time": iso_ms(dt), "service": "argocd", "host": "argocd-application-controller-0",
                  "level": "INFO", "message": f"Sync operation to {version} succeeded for application {app}",
                  "application": app, "revision": version})

    deploy(at(3, 1, 3.2), "checkout-api", "2026.11.28-1")
    for i, p in enumerate(CHECKOUT_PODS):
        dt = at(3, 1, 40 + 9 * i + rng.uniform(0, 3))
        emit(dt, java_event(dt, "INFO", "com.keele.pos.checkout.CheckoutApplication",
                            f"Started CheckoutApplication in {rng.uniform(8, 12):.3f} seconds "
                            f"(process running for {rng.uniform(12, 15):.3f})", pod=p, app_version="2026.11.28-1"))
    deploy(at(3, 47, 40.1), "checkout-api", "2026.11.27-3")
    deploy(at(5, 30, 55.0), "payments-gateway", "2.14.0")
    deploy(at(5, 51, 20.4), "payments-gateway", "2.13.2")
    deploy(at(11, 24, 5.0), "checkout-api", "2026.11.27-3")  # restart to pick up the rotated tax token
    deploy(at(16, 6, 10.0), "receipts-worker", "1.9.3")
    deploy(at(20, 13, 30.0), "inventory-service", "5.3.0")
    deploy(at(20, 25, 45.0), "inventory-service", "5.2.0")
    for p in GATEWAY_PODS:
        dt = at(5, 52) + timedelta(seconds=rng.uniform(5, 40))
        emit(dt, go_event(dt, "INFO", "listening", host=p, addr=":8080", psp="https://psp.cardproc.example",
                          psp_timeout="8s", version="2.13.2"))
    for dt in times(at(9, 41, 30), at(9, 44), 3):
        emit(dt, go_event(dt, "INFO", "psp-ca-bundle reloaded", certificates=3, source="/etc/psp/ca-bundle.pem"))
    for dt in times(at(7, 18, 30), at(7, 20), 2):
        emit(dt, k8s_event(dt, "redis-cart", "info", "Started", "Started container redis", "pod/redis-cart-0", 1))


# =========================================================================== malformed lines

def malformed():
    # 1. plain text from the JVM on stderr, not JSON
    emit(at(3, 1, 38.7), "Picked up JAVA_TOOL_OPTIONS: -XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError")
    # 2. missing `message` (the shipper dropped an empty msg field)
    dt = at(8, 21, 17.25)
    emit(dt, {"_time": iso_ms(dt), "service": "loyalty-service", "host": LOYALTY_PODS[0], "level": "ERROR",
              "exception": "AxiosError", "path": "/v1/points/award", "http_status": 502})
    # 3. a line truncated by the shipper's 16 KiB buffer during the lunch cascade
    dt = at(12, 20, 41.503)
    full = json.dumps(separators=(",", ":"), obj=api_error(dt, "org.springframework.transaction.CannotCreateTransactionException",
                                "Could not open JDBC Connection for transaction", "java.sql.SQLTransientConnectionException",
                                root="SQLTransientConnectionException: HikariPool-1 - Connection is not available"))
    emit(dt, full[:231])
    # 4. time nginx-style, not ISO 8601
    dt = at(13, 14, 3)
    emit(dt, {"_time": "28/Nov/2026:14:14:03 +0100", "service": "edge-nginx", "host": EDGE_PODS[1], "level": "INFO",
              "message": "10.20.168.24 - \"GET /v1/stock/168/401877312 HTTP/1.1\" 200 412 rt=0.031"})
    # 5. message empty after trimming
    dt = at(16, 7, 2.118)
    emit(dt, {"_time": iso_py(dt), "service": "receipts-worker", "host": RECEIPTS_POD, "level": "INFO",
              "message": "   "})


# =========================================================================== main

def rendered_time(event, dt: datetime) -> datetime:
    """The instant a reader sees (formats truncate to s/ms), so the file is in time order as written."""
    if isinstance(event, dict):
        for key in ("_time", "time", "timestamp", "@timestamp"):
            value = event.get(key)
            if isinstance(value, (int, float)):
                return datetime.fromtimestamp(value, timezone.utc)
            if isinstance(value, str):
                try:
                    return datetime.fromisoformat(value[:26] + value[29:] if len(value) == 30 else value)
                except ValueError:
                    return dt
    return dt


def build() -> list[str]:
    cascade_requests()
    for fn in REGISTRY:
        fn()
    global _current
    _current = None
    noise()
    malformed()
    EVENTS.sort(key=lambda e: (rendered_time(e[2], e[0]), e[1]))
    lines = []
    for _, _, ev in EVENTS:
        lines.append(ev if isinstance(ev, str) else json.dumps(ev, ensure_ascii=False, separators=(",", ":")))
    return lines


def table() -> str:
    rows = ["| # | first – last (UTC) | service | events | what happened | expected category |",
            "|---|---|---|---|---|---|"]
    for n, inc in enumerate(sorted(INCIDENTS, key=lambda i: i["first"]), 1):
        span = f"{inc['first']:%H:%M} – {inc['last']:%H:%M}"
        rows.append(f"| {n} | {span} | {inc['service']} | {inc['count']} | {inc['what']} | `{inc['category']}` |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--table", action="store_true", help="print the incident table (markdown)")
    args = ap.parse_args()
    lines = build()
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if args.table:
        print(table())
    size = args.out.stat().st_size
    print(f"wrote {len(lines)} lines ({size / 1e6:.2f} MB) to {args.out}; {len(INCIDENTS)} incidents")


if __name__ == "__main__":
    main()
