"""receipts-worker: consumes paid orders from Kafka and renders PDF receipts to disk.

Receipts are kept under RECEIPTS_DIR/<store>/<date>/<order>.pdf; the e-mail service and
the store back-office read them from there.
"""
import json
import logging
import os
from datetime import datetime, timezone

from confluent_kafka import Consumer, KafkaError, TopicPartition

from receipts.render import render_pdf

log = logging.getLogger("receipts.worker")

BOOTSTRAP = os.environ.get("KAFKA_BOOTSTRAP", "kafka-0.pos.svc.cluster.local:9092")
TOPIC = os.environ.get("RECEIPTS_TOPIC", "pos.receipts")
GROUP = os.environ.get("RECEIPTS_GROUP", "receipts-worker")
RECEIPTS_DIR = os.environ.get("RECEIPTS_DIR", "/var/receipts")
LAG_WARN_THRESHOLD = int(os.environ.get("LAG_WARN_THRESHOLD", "5000"))
LAG_CHECK_EVERY = 500


def on_kafka_error(err: KafkaError) -> None:
    log.error("kafka error: %s", err.str(), extra={"kafka_error_code": err.name()})


def receipt_path(order: dict) -> str:
    day = order["paid_at"][:10]
    folder = os.path.join(RECEIPTS_DIR, str(order["store_id"]), day)
    os.makedirs(folder, exist_ok=True)
    return os.path.join(folder, f"{order['order_id']}.pdf")


def handle(raw: bytes) -> str:
    order = json.loads(raw)
    pdf = render_pdf(order)
    path = receipt_path(order)
    with open(path, "wb") as fh:
        fh.write(pdf)
    return path


def check_lag(consumer: Consumer) -> None:
    for tp in consumer.assignment():
        low, high = consumer.get_watermark_offsets(tp, timeout=5)
        committed = consumer.committed([TopicPartition(tp.topic, tp.partition)], timeout=5)[0].offset
        lag = high - max(committed, low)
        if lag > LAG_WARN_THRESHOLD:
            log.warning("consumer lag on %s partition %d is %d messages (threshold %d)",
                        tp.topic, tp.partition, lag, LAG_WARN_THRESHOLD)


def main() -> None:
    consumer = Consumer({
        "bootstrap.servers": BOOTSTRAP,
        "group.id": GROUP,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "max.poll.interval.ms": 300000,
        "error_cb": on_kafka_error,
    })
    consumer.subscribe([TOPIC])
    handled = 0
    while True:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        if msg.error():
            on_kafka_error(msg.error())
            continue
        try:
            path = handle(msg.value())
            log.info("receipt written %s", path)
        except Exception as exc:
            log.exception("failed to render receipt partition=%d offset=%d: %s",
                          msg.partition(), msg.offset(), exc)
            continue
        consumer.commit(message=msg, asynchronous=False)
        handled += 1
        if handled % LAG_CHECK_EVERY == 0:
            check_lag(consumer)


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    log.info("receipts-worker starting at %s", datetime.now(timezone.utc).isoformat())
    main()
