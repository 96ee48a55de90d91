"""Fingerprints: which log lines are the same kind of event, so their events correlate into one
incident. masks.py turns the variable parts of a message into placeholders, miner.py mines
templates online with Drain (drain.py: the one module that knows drain3's internals) and keeps
their ids stable, in memory or as rows the records store saves with each batch."""
