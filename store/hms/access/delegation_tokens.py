"""Hive delegation tokens: what a Kerberos user hands to its tasks (Spark executors, MapReduce
tasks) so they reach the metastore without a ticket, over SASL DIGEST-MD5.

The wire forms are Hadoop's, which Hive's clients decode: a token is the URL-safe Base64 of
(identifier, password, kind `HIVE_DELEGATION_TOKEN`, service) in Hadoop's Writable encoding; the
identifier is (version 0, owner, renewer, real user, issue date, max date, sequence number, master
key id); the password is HMAC-SHA1 of the identifier under the master key. Tokens live in the store
(so every worker and a restart know them): renewing pushes the expiry by the renew interval up to
the max date; cancelling deletes the token. Expired tokens are removed when new ones are issued.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import secrets
import time
from dataclasses import dataclass

from sqlalchemy import Connection, delete, select, update

from hudi_format import writable
from store.db import schema as S
from store.db.database import Store
from store.errors import MetaError

KIND = "HIVE_DELEGATION_TOKEN"
RENEW_INTERVAL_MS = 24 * 3600 * 1000      # Hive's hive.cluster.delegation.token.renew-interval
MAX_LIFETIME_MS = 7 * 24 * 3600 * 1000    # Hive's hive.cluster.delegation.token.max-lifetime
_MAX_TOKEN_TEXT = 8192


class TokenRefused(MetaError):
    """A token is unknown, cancelled, expired or malformed, or the caller may not use it so."""


@dataclass(frozen=True)
class TokenIdentifier:
    owner: str
    renewer: str
    real_user: str
    issue_date: int
    max_date: int
    seq: int
    key_id: int

    def encode(self) -> bytes:
        out = io.BytesIO()
        out.write(b"\x00")  # version
        for text in (self.owner, self.renewer, self.real_user):
            writable.write_text(out, text)
        for n in (self.issue_date, self.max_date, self.seq, self.key_id):
            out.write(writable.vlong(n))
        return out.getvalue()

    @classmethod
    def decode(cls, data: bytes) -> TokenIdentifier:
        inp = io.BytesIO(data)
        try:
            if inp.read(1) != b"\x00":
                raise ValueError("unknown identifier version")
            owner, renewer, real_user = (writable.read_text(inp) for _ in range(3))
            issue, max_date, seq, key_id = (writable.read_vlong(inp) for _ in range(4))
        except (ValueError, IndexError, UnicodeDecodeError) as exc:
            raise TokenRefused(f"not a Hive delegation token identifier: {exc}") from None
        return cls(owner, renewer, real_user, issue, max_date, seq, key_id)


class DelegationTokens:
    def __init__(self, store: Store, renew_interval_ms: int = RENEW_INTERVAL_MS,
                 max_lifetime_ms: int = MAX_LIFETIME_MS, clock_ms=None):
        self.store = store
        self.renew_interval_ms = renew_interval_ms
        self.max_lifetime_ms = max_lifetime_ms
        self.clock_ms = clock_ms or (lambda: int(time.time() * 1000))

    # --- the Thrift calls ---------------------------------------------------------------------------

    def issue(self, owner: str, renewer: str, real_user: str = "") -> str:
        """A new token for `owner`, renewable by `renewer` (short names); its URL-safe string form."""
        if not owner:
            raise MetaError("get_delegation_token: the token owner is empty")
        return self.store.run_write(self._issue, owner, renewer or "", real_user or "")

    def _issue(self, conn: Connection, owner: str, renewer: str, real_user: str) -> str:
        now = self.clock_ms()
        conn.execute(delete(S.delegation_tokens).where(S.delegation_tokens.c.expiry_date < now))
        key_id, secret = self._key(conn, now)
        max_date = now + self.max_lifetime_ms
        seq = conn.execute(S.delegation_tokens.insert().values(
            key_id=key_id, owner=owner, renewer=renewer, real_user=real_user, issue_date=now, max_date=max_date,
            expiry_date=min(max_date, now + self.renew_interval_ms))).inserted_primary_key
        assert seq is not None
        seq = seq[0]
        ident = TokenIdentifier(owner, renewer, real_user, now, max_date, int(seq), key_id)
        raw = ident.encode()
        return encode_token(raw, _password(secret, raw))

    def renew(self, token_text: str, caller: str) -> int:
        """The token's new expiry (ms since the epoch); only its renewer may renew it."""
        ident, _ = self._parse(token_text)
        if not ident.renewer or caller != ident.renewer.split("@")[0].split("/")[0]:
            raise TokenRefused(f"user {caller} may not renew the token of {ident.owner} "
                               f"(its renewer is {ident.renewer or 'nobody'})")
        return self.store.run_write(self._renew, ident)

    def _renew(self, conn: Connection, ident: TokenIdentifier) -> int:
        now = self.clock_ms()
        self._live(conn, ident, now)
        if now > ident.max_date:
            raise TokenRefused(f"the token of {ident.owner} is past its maximum lifetime")
        expiry = min(ident.max_date, now + self.renew_interval_ms)
        conn.execute(update(S.delegation_tokens).where(S.delegation_tokens.c.seq == ident.seq)
                     .values(expiry_date=expiry))
        return expiry

    def cancel(self, token_text: str, caller: str) -> None:
        """Only its owner or renewer may cancel a token."""
        ident, _ = self._parse(token_text, expired_ok=True)
        allowed = {ident.owner.split("@")[0].split("/")[0], ident.renewer.split("@")[0].split("/")[0]}
        if caller not in allowed:
            raise TokenRefused(f"user {caller} may not cancel the token of {ident.owner}")
        self.store.run_write(self._cancel, ident)

    def _cancel(self, conn: Connection, ident: TokenIdentifier) -> None:
        if conn.execute(delete(S.delegation_tokens).where(S.delegation_tokens.c.seq == ident.seq)).rowcount == 0:
            raise TokenRefused(f"the token of {ident.owner} (sequence {ident.seq}) is not known: cancelled or expired")

    # --- SASL DIGEST-MD5 --------------------------------------------------------------------------

    def password(self, identifier: bytes) -> tuple[TokenIdentifier, bytes]:
        """The password of a live token, from its identifier (what a DIGEST-MD5 client sends)."""
        ident = TokenIdentifier.decode(identifier)
        with self.store.read() as conn:
            secret = self._live(conn, ident, self.clock_ms())
        return ident, _password(secret, identifier)

    # --- internals --------------------------------------------------------------------------------

    def _parse(self, token_text: str, expired_ok: bool = False) -> tuple[TokenIdentifier, bytes]:
        raw, password = decode_token(token_text)
        ident = TokenIdentifier.decode(raw)
        with self.store.read() as conn:
            secret = self._live(conn, ident, None if expired_ok else self.clock_ms())
        if not hmac.compare_digest(_password(secret, raw), password):
            raise TokenRefused("the delegation token's password does not match (forged or altered)")
        return ident, password

    def _live(self, conn: Connection, ident: TokenIdentifier, now: int | None) -> bytes:
        """The secret of a known token whose stored facts match its identifier, unexpired at `now`
        (None: expired is fine)."""
        t, k = S.delegation_tokens, S.delegation_keys
        row = conn.execute(select(t, k.c.secret).join(k, k.c.key_id == t.c.key_id)
                           .where(t.c.seq == ident.seq)).first()
        if row is None or (row.owner, row.renewer, row.issue_date, row.max_date, row.key_id) != (
                ident.owner, ident.renewer, ident.issue_date, ident.max_date, ident.key_id):
            raise TokenRefused(f"the delegation token of {ident.owner} (sequence {ident.seq}) is not known: "
                               "cancelled, expired or never issued here")
        if now is not None and now > row.expiry_date:
            when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(row.expiry_date / 1000))
            raise TokenRefused(f"the delegation token of {ident.owner} expired at {when} (tokens must be renewed "
                               "within the renew interval)")
        return bytes(row.secret)

    def _key(self, conn: Connection, now: int) -> tuple[int, bytes]:
        k = S.delegation_keys
        row = conn.execute(select(k.c.key_id, k.c.secret).order_by(k.c.key_id.desc()).limit(1)).first()
        if row is not None:
            return int(row.key_id), bytes(row.secret)
        secret = secrets.token_bytes(64)
        conn.execute(k.insert().values(key_id=1, secret=secret, create_time=now))
        return 1, secret


def _password(secret: bytes, identifier: bytes) -> bytes:
    return hmac.new(secret, identifier, hashlib.sha1).digest()


def encode_token(identifier: bytes, password: bytes, service: str = "") -> str:
    return writable.encode_token(identifier, password, KIND, service)


def decode_token(text: str) -> tuple[bytes, bytes]:
    """(identifier, password) of a token's string form."""
    if not text or len(text) > _MAX_TOKEN_TEXT:
        raise TokenRefused("not a delegation token (empty or too long)")
    try:
        identifier, password, kind = writable.decode_token(text)
    except (ValueError, IndexError, UnicodeDecodeError) as exc:
        raise TokenRefused(f"not a delegation token: {exc}") from None
    if kind != KIND:
        raise TokenRefused(f"not a Hive delegation token (kind {kind!r})")
    return identifier, password
