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

import struct
from dataclasses import dataclass
from typing import Protocol

from thrift.transport import TTransport

START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
MAX_NEGOTIATION_MESSAGE = 64 * 1024
MAX_STEPS = 8


class HandshakeRefused(Exception):
    """The handshake failed; str() is the reason sent to the client and logged."""


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
            raise HandshakeRefused(f"authentication failed for user {user}: wrong user name or password")
        self.result = Authenticated(user, "password", user)
        return None


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


def negotiate(sock, exchanges: dict[str, object]) -> Authenticated:
    """Run the handshake on `sock` (adapter.server.transport.ClientSocket: the read timeout and the
    size limit apply). `exchanges`: mechanism name -> factory of an Exchange. On refusal the reason
    is sent to the client (BAD) and HandshakeRefused raised."""
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
        if challenge is None and exchange.result is not None:
            send(sock, COMPLETE, b"")
            return exchange.result
        send(sock, OK, challenge or b"")
    raise HandshakeRefused(f"SASL negotiation took more than {MAX_STEPS} steps")


def _tell(sock, status: int, reason: str) -> None:
    try:
        send(sock, status, reason.encode())
    except (OSError, TTransport.TTransportException):
        pass
