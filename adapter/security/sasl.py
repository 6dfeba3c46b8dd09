"""The server side of Thrift's SASL transport (TSaslServerTransport, what Hive's clients speak with
`hive.metastore.sasl.enabled` or a PLAIN/CONFIG authentication mode).

Negotiation messages are a status byte, a 4-byte big-endian length and the payload: the client
sends START with the mechanism's name, then OK (or COMPLETE) with its initial response; the server
answers OK with a challenge while more steps are needed, COMPLETE when it accepts, and BAD or ERROR
with a reason when it refuses (clients show that reason). Afterwards every message is a 4-byte
length and the payload, which for the QOP `auth` (all that is offered here) is the plain Thrift
message, i.e. Thrift's framed transport.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from thrift.transport import TTransport

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
MAX_NEGOTIATION_MESSAGE = 64 * 1024
MAX_STEPS = 8


class HandshakeRefused(Exception):
    """The handshake failed; str() is the reason sent to the client and logged."""


class CredentialsRefused(HandshakeRefused):
    """The client's credentials were wrong (a password, a delegation token): a failed log-in
    (adapter/security/login_backoff.py)."""


class NotSasl(HandshakeRefused):
    """The client sent a Thrift message instead (no SASL configured): it cannot read a SASL
    status, so the caller answers it in Thrift (`framed`: its first byte was a frame length's)."""

    def __init__(self, message: str, framed: bool):
        super().__init__(message)
        self.framed = framed


@dataclass(frozen=True)
class Authenticated:
    user: str        # the short name calls run as
    mechanism: str   # 'password', 'kerberos' or 'token' (adapter/identity.py)
    principal: str


class Exchange(Protocol):
    """One client's run of a mechanism: step() takes the client's response and returns the next
    challenge, or None once the client is accepted (then `result` is set); it raises
    HandshakeRefused to refuse."""

    result: Authenticated | None

    def step(self, response: bytes) -> bytes | None: ...


class PlainExchange:
    """SASL PLAIN (RFC 4616): authzid NUL authcid NUL password, checked against the password file."""

    def __init__(self, check_password):
        self.check_password = check_password
        self.result: Authenticated | None = None

    def step(self, response: bytes) -> bytes | None:
        parts = response.split(b"\0")
        if len(parts) != 3:
            raise HandshakeRefused("malformed PLAIN response (expected authzid NUL user NUL password)")
        authzid, user, password = (p.decode("utf-8", "replace") for p in parts)
        if authzid and authzid != user:
            raise HandshakeRefused(f"user {user} may not act as {authzid} (impersonation is not supported)")
        if not user or not self.check_password(user, password):
            raise CredentialsRefused(f"authentication failed for user {user}: wrong user name or password")
        self.result = Authenticated(user, "password", user)
        return None


class GssapiExchange:
    """SASL GSSAPI (RFC 4752) over Kerberos V5, as Hive's clients speak it with
    `hive.metastore.sasl.enabled`: the context tokens, then the security-layer negotiation, wrapped.
    Only the layer "none" (QOP auth) is offered; an authorization id other than the client's own
    name is refused (no impersonation)."""

    LAYER_NONE = 1
    MAX_BUFFER = 65536

    def __init__(self, creds):
        from client import AcceptContext

        self.ctx = AcceptContext(creds)
        self.state = "context"
        self.result: Authenticated | None = None

    def step(self, response: bytes) -> bytes | None:
        from client import GssError

        try:
            if self.state == "context":
                token = self.ctx.step(response)
                if not self.ctx.complete:
                    return token
                if token:  # the client checks the server (mutual authentication), then answers empty
                    self.state = "mutual"
                    return token
                return self._offer()
            if self.state == "mutual":
                return self._offer()
            self._choose(self.ctx.unwrap(response))
            return None
        except GssError as exc:
            raise HandshakeRefused(str(exc)) from None

    def _offer(self) -> bytes:
        self.state = "layer"
        return self.ctx.wrap(bytes([self.LAYER_NONE]) + self.MAX_BUFFER.to_bytes(3, "big"))

    def _choose(self, message: bytes) -> None:
        if len(message) < 4 or message[0] != self.LAYER_NONE:
            raise HandshakeRefused("the client asked for a SASL security layer (integrity or privacy): only QOP auth "
                                   "is offered (use TLS for privacy; hadoop.rpc.protection=authentication)")
        principal = self.ctx.initiator or ""
        user = short_name(principal)
        authzid = message[4:].decode("utf-8", "replace")
        if authzid and authzid not in (user, principal):
            raise HandshakeRefused(f"{principal} may not act as {authzid} (impersonation is not supported)")
        self.ctx.close()
        self.result = Authenticated(user, "kerberos", principal)


class DigestTokenExchange:
    """SASL DIGEST-MD5 (RFC 2831, QOP auth) with a Hive delegation token, as Hive's clients speak it
    with a token in their UGI: the user name is the Base64 of the token's identifier, the password
    the Base64 of its password, the realm Hadoop's `default`. `password_of(identifier)` returns
    (identifier facts, password) of a live token or raises with the reason."""

    REALM = "default"

    def __init__(self, password_of):
        self.password_of = password_of
        self.nonce = base64.b64encode(secrets.token_bytes(24)).decode()
        self.challenged = False
        self.result: Authenticated | None = None

    def step(self, response: bytes) -> bytes | None:
        if not self.challenged:
            self.challenged = True
            return (f'realm="{self.REALM}",nonce="{self.nonce}",qop="auth",charset=utf-8,'
                    'algorithm=md5-sess').encode()
        d = _directives(response)
        for key in ("username", "nonce", "cnonce", "nc", "digest-uri", "response"):
            if key not in d:
                raise HandshakeRefused(f"DIGEST-MD5: the client's response has no {key}")
        if d["nonce"] != self.nonce:
            raise HandshakeRefused("DIGEST-MD5: the client answered another nonce")
        qop = d.get("qop", "auth")
        if qop != "auth":
            raise HandshakeRefused(f"DIGEST-MD5: QOP {qop} is not offered (only auth)")
        try:
            identifier = base64.b64decode(d["username"], validate=True)
        except (binascii.Error, ValueError):
            raise HandshakeRefused("DIGEST-MD5: the user name is not a delegation token identifier") from None
        try:
            ident, password = self.password_of(identifier)
        except Exception as exc:  # noqa: BLE001 - the token service says why (unknown, expired, ...)
            raise CredentialsRefused(f"delegation token refused: {exc}") from None
        secret = base64.b64encode(password).decode()
        authzid = d.get("authzid")
        a1 = hashlib.md5(f'{d["username"]}:{d.get("realm", "")}:{secret}'.encode()).digest() + \
            f':{self.nonce}:{d["cnonce"]}'.encode() + (f":{authzid}".encode() if authzid else b"")
        ha1 = hashlib.md5(a1).hexdigest()

        def digest(a2: str) -> str:
            tail = f'{self.nonce}:{d["nc"]}:{d["cnonce"]}:{qop}:{hashlib.md5(a2.encode()).hexdigest()}'
            return hashlib.md5(f"{ha1}:{tail}".encode()).hexdigest()

        if not hmac.compare_digest(digest(f'AUTHENTICATE:{d["digest-uri"]}'), d["response"].lower()):
            raise CredentialsRefused(f"delegation token refused: the password of {ident.owner}'s token does not match")
        if authzid and authzid != ident.owner:
            raise HandshakeRefused(f"{ident.owner} may not act as {authzid} (impersonation is not supported)")
        self.result = Authenticated(short_name(ident.owner), "token", ident.owner)
        return f'rspauth={digest(":" + d["digest-uri"])}'.encode()


_DIRECTIVE = re.compile(r'\s*([A-Za-z0-9-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^,]*)\s*(?:,|$)')


def _directives(data: bytes) -> dict[str, str]:
    """RFC 2831 `key=value` / `key="quoted"` directives."""
    text = data.decode("utf-8", "replace")
    out: dict[str, str] = {}
    pos = 0
    while pos < len(text):
        m = _DIRECTIVE.match(text, pos)
        if not m or m.end() == pos:
            raise HandshakeRefused("DIGEST-MD5: malformed response")
        value = m.group(2)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        out.setdefault(m.group(1).lower(), value)
        pos = m.end()
    return out


def short_name(principal: str) -> str:
    """A Kerberos principal's short name, as Hadoop's default auth_to_local rule gives it:
    `alice@REALM` -> alice, `hive/host@REALM` -> hive."""
    return principal.split("@", 1)[0].split("/", 1)[0]


def send(sock, status: int, payload: bytes) -> None:
    sock.write(struct.pack(">BI", status, len(payload)) + payload)
    sock.flush()


def receive(sock) -> tuple[int, bytes]:
    status, length = struct.unpack(">BI", sock.read_exactly(5))
    if status not in (START, OK, BAD, ERROR, COMPLETE):
        raise NotSasl("expected a SASL handshake: this metastore requires authentication (configure the "
                      "client's SASL settings, e.g. hive.metastore.sasl.enabled; docs/security.md)", status == 0)
    if length > MAX_NEGOTIATION_MESSAGE:
        raise HandshakeRefused(f"SASL negotiation message of {length} bytes exceeds {MAX_NEGOTIATION_MESSAGE}")
    return status, sock.read_exactly(length) if length else b""


def negotiate(sock, exchanges: dict[str, object],
              on_refusal: Callable[[HandshakeRefused], None] | None = None) -> Authenticated:
    """Run the handshake on `sock` (adapter.server.transport.ClientSocket: the read timeout and the
    size limit apply). `exchanges`: mechanism name -> factory of an Exchange. On refusal
    `on_refusal` is called, then the reason is sent to the client (BAD) and HandshakeRefused
    raised."""
    try:
        try:
            return _negotiate(sock, exchanges)
        except TTransport.TTransportException as exc:
            if exc.type == TTransport.TTransportException.TIMED_OUT:
                raise HandshakeRefused("the client stalled in the SASL handshake (--read-timeout)") from None
            raise HandshakeRefused(f"SASL handshake: {exc}") from None
    except NotSasl:
        raise
    except HandshakeRefused as exc:
        if on_refusal is not None:  # before the client hears it (and may try again)
            on_refusal(exc)
        _tell(sock, BAD, str(exc))
        raise


def _negotiate(sock, exchanges) -> Authenticated:
    status, mechanism = receive(sock)
    name = mechanism.decode("ascii", "replace")
    if status != START:
        raise HandshakeRefused(f"expected a SASL START message, got status {status}")
    if name not in exchanges:
        raise HandshakeRefused(f"SASL mechanism {name} is not offered here (offered: {', '.join(sorted(exchanges))})")
    exchange = exchanges[name]()
    for _ in range(MAX_STEPS):
        status, response = receive(sock)
        if status in (BAD, ERROR):
            raise HandshakeRefused(f"the client gave up: {response.decode('utf-8', 'replace')}")
        challenge = exchange.step(response)
        if exchange.result is not None:  # accepted; a last challenge (DIGEST-MD5's rspauth) rides along
            send(sock, COMPLETE, challenge or b"")
            return exchange.result
        send(sock, OK, challenge or b"")
    raise HandshakeRefused(f"SASL negotiation took more than {MAX_STEPS} steps")


def refuse(sock, reason: str) -> None:
    """Refuse a client before its handshake is read (it reads this answer to its first message)."""
    _tell(sock, BAD, reason)


def _tell(sock, status: int, reason: str) -> None:
    try:
        send(sock, status, reason.encode())
    except (OSError, TTransport.TTransportException):
        pass
