"""The work nobody starts by hand: the poller and what it runs each poll (reading a source,
escalation and expiry, outbox delivery, retention), and the `ingest PATH` driver that stores a
file's lines and runs what needs running. Nothing here waits for a person; what a person reads
about it is in operations/ (the Operations page) and review/ (the decisions).
"""
