"""A rejected line read again at the place it was stored is no news, whatever it holds (a NUL too:
the store shows it as ␀, and the line read again must be compared as stored); a different line at
that place is (the file was rewritten), kept as `position#2`."""
from __future__ import annotations

from pipeline.ingest.events import DeadLetter
from tests.support import BOTH_BACKENDS

PLACE = "app.log@120"


def positions(engine) -> list[str]:
    return sorted(r["position"] for r in engine.records.query("SELECT position FROM dead_letters"))


@BOTH_BACKENDS
def test_a_rejected_line_holding_a_nul_read_again_at_its_place_is_stored_once(engine):
    line = DeadLetter("app.log", PLACE, "binary data (NUL byte)", '{"level": "ERROR", "msg": "a\x00b"')
    assert engine.incidents.store_batch([line], cursor=None).rejected == 1
    assert engine.incidents.store_batch([line], cursor=None).rejected == 0  # a re-read: no news
    assert positions(engine) == [PLACE]
    other = DeadLetter("app.log", PLACE, "binary data (NUL byte)", '{"level": "ERROR", "msg": "c\x00d"')
    assert engine.incidents.store_batch([other, other], cursor=None).rejected == 1
    assert positions(engine) == [PLACE, f"{PLACE}#2"]
