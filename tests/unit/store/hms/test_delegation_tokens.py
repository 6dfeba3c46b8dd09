"""Delegation tokens in the store (store/hms/access/delegation_tokens.py) on every backend: Hadoop's wire
forms, renew/cancel rules, expiry and forgery; the end-to-end path with Hive's client is in
tests/test_kerberos.py."""

from __future__ import annotations

import base64

import pytest

from adapter.serve import prepare_store
from store.hms import access as dt
from store.services import open_services


@pytest.fixture
def tokens(own_backend_url, tmp_path):
    prepare_store(own_backend_url)
    services = open_services(own_backend_url, str(tmp_path / "wh"))
    clock = {"now": 1_700_000_000_000}
    svc = dt.DelegationTokens(services.store, renew_interval_ms=1000, max_lifetime_ms=5000,
                              clock_ms=lambda: clock["now"])
    try:
        yield svc, clock
    finally:
        services.close()


def test_issue_renew_cancel(tokens):
    svc, clock = tokens
    text = svc.issue("alice", "yarn", "")
    raw, password = dt.decode_token(text)
    ident = dt.TokenIdentifier.decode(raw)
    assert (ident.owner, ident.renewer, ident.issue_date, ident.max_date) == ("alice", "yarn", clock["now"],
                                                                           clock["now"] + 5000)
    assert svc.password(raw) == (ident, password)
    # the URL-safe, unpadded form Hadoop's Token.encodeToUrlString writes
    assert "=" not in text and "+" not in text and "/" not in text
    with pytest.raises(dt.TokenRefused, match="alice may not renew"):
        svc.renew(text, "alice")
    clock["now"] += 800
    assert svc.renew(text, "yarn") == clock["now"] + 1000
    clock["now"] += 1500  # past the renewed expiry
    with pytest.raises(dt.TokenRefused, match="expired"):
        svc.password(raw)
    with pytest.raises(dt.TokenRefused, match="may not cancel"):
        svc.cancel(text, "mallory")
    svc.cancel(text, "alice")
    with pytest.raises(dt.TokenRefused, match="not known"):
        svc.password(raw)


def test_renewals_stop_at_the_max_date(tokens):
    svc, clock = tokens
    text = svc.issue("bob", "bob")
    issued = clock["now"]
    for _ in range(5):
        clock["now"] += 900
        expiry = svc.renew(text, "bob")
    assert expiry == issued + 5000  # capped at issue + max lifetime
    clock["now"] += 2000
    with pytest.raises(dt.TokenRefused):
        svc.renew(text, "bob")


def test_forged_and_malformed_tokens_are_refused(tokens):
    svc, _ = tokens
    text = svc.issue("carol", "carol")
    raw, password = dt.decode_token(text)
    ident = dt.TokenIdentifier.decode(raw)
    forged = dt.encode_token(raw, bytes(20))  # the right identifier, a made-up password
    with pytest.raises(dt.TokenRefused, match="does not match"):
        svc.renew(forged, "carol")
    other = dt.TokenIdentifier("mallory", ident.renewer, "", ident.issue_date, ident.max_date, ident.seq, ident.key_id)
    with pytest.raises(dt.TokenRefused, match="not known"):  # someone else's name on a real sequence number
        svc.password(other.encode())
    for bad in ("", "x" * 9000, "!!!", base64.urlsafe_b64encode(b"\x05abc").decode()):
        with pytest.raises(dt.TokenRefused):
            svc.renew(bad, "carol")
