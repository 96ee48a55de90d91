"""The PostgreSQL backend's own promises: a database URL's password never reaches a message or
stored text, and the poller lease is one session's lock, freed when that session ends."""
from __future__ import annotations

import pytest

from pipeline.errors import StorageError
from pipeline.redaction import MASK, redact
from pipeline.store import lease
from pipeline.store.records import Records

PASSWORD = "s3cret-Pw-9931"


def test_a_password_in_the_url_is_masked_in_the_error_of_a_store_that_cannot_open():
    url = f"postgresql://iq:{PASSWORD}@127.0.0.1:1/incidentiq"  # nothing listens on port 1
    with pytest.raises(StorageError) as caught:
        Records(url)
    assert PASSWORD not in str(caught.value)
    assert f"iq:{MASK}@127.0.0.1:1" in str(caught.value)


def test_the_redaction_masks_the_configured_database_password(monkeypatch):
    monkeypatch.setenv("INCIDENTIQ_DATABASE_URL", f"postgresql://iq:{PASSWORD}@db:5432/incidentiq")
    assert redact(f"upstream said: password {PASSWORD} rejected") == f"upstream said: password {MASK} rejected"


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_one_owner_holds_the_poller_lease_until_it_releases_it(database_url):
    records = Records(database_url)
    try:
        assert lease.acquire(records, "host-a:1:1:a", source="demo", ttl=30)
        assert lease.acquire(records, "host-a:1:1:a", source="demo", ttl=30)  # renewing is holding
        assert not lease.acquire(records, "host-b:2:2:b", source="demo", ttl=30)
        assert lease.holder(records)["owner"] == "host-a:1:1:a" and lease.holder(records)["live"]
        lease.release(records, "host-a:1:1:a")
        assert lease.acquire(records, "host-b:2:2:b", source="demo", ttl=30)
        assert not lease.acquire(records, "host-a:1:1:a", source="demo", ttl=30)
    finally:
        lease.close_sessions()
        records.close()
