"""Notifications: new critical incidents, escalations, expiries and decisions, told to the
configured incoming webhooks (INCIDENTIQ_NOTIFY_URLS) through a durable outbox.

`targets.py` reads the URLs (a secret: only hosts leave it), `messages.py` makes the outbox rows
of an event, `sender.py` delivers them with retries and backoff (on the delivery thread the
poller wakes: unattended/delivery.py).
"""
