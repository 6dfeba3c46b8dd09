"""How the client logs in and protects its connection: `Security`, and the client side of the
server's TLS and SASL handshake (adapter/security/sasl.py describes the messages).

    Security(auth="password", user="alice", password="...")   # SASL PLAIN (serve --auth password)
    Security(auth="kerberos")                                  # SASL GSSAPI, the ticket cache (kinit)
    Security(tls_ca="ca.pem")                                  # TLS (serve --tls-cert), verified
    Security(auth="token", token="...")                        # a delegation token (DIGEST-MD5)

TLS comes first when set, then the SASL handshake; after it every message is framed (QOP auth).
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import secrets
import socket
import ssl
import struct
from dataclasses import dataclass, field, replace

from hudi_format import writable

from .errors import AuthenticationError

__all__ = ["AUTH_MODES", "Security", "handshake", "wrap_tls"]

AUTH_MODES = ("none", "password", "kerberos", "token")
START, OK, BAD, ERROR, COMPLETE = 1, 2, 3, 4, 5
_MAX_MESSAGE = 64 * 1024
_MAX_STEPS = 8


@dataclass(frozen=True)
class Security:
    """`auth`: none, password (SASL PLAIN: `user`, default the login name, and `password`), kerberos
    (SASL GSSAPI with the ticket cache, or `kerberos_ccache`; `kerberos_principal` is the server's,
    `_HOST` standing for the metastore's host name, as Hive's hive.metastore.kerberos.principal) or
    token (a delegation token's string form, as get_delegation_token returns it). TLS when `tls`
    or `tls_ca` (the server's CA, PEM; else the system's), with a client certificate `tls_cert`
    and `tls_key` for servers that ask for one. Picklable, so Spark tasks get it."""

    auth: str = "none"
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    kerberos_principal: str = "hive/_HOST"
    kerberos_ccache: str | None = None
    token: str | None = field(default=None, repr=False)
    tls: bool = False
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_check_hostname: bool = True

    def __post_init__(self) -> None:
        if self.auth not in AUTH_MODES:
            raise ValueError(f"auth {self.auth!r}: expected one of {', '.join(AUTH_MODES)}")
        if self.auth == "password" and self.password is None:
            raise ValueError("auth 'password' needs a password")
        if self.auth == "token" and not self.token:
            raise ValueError("auth 'token' needs a delegation token")
        if bool(self.tls_cert) != bool(self.tls_key):
            raise ValueError("a TLS client certificate needs both tls_cert and tls_key")

    @property
    def uses_tls(self) -> bool:
        return bool(self.tls or self.tls_ca or self.tls_cert)

    @property
    def sasl(self) -> bool:
        return self.auth != "none"

    @property
    def login_name(self) -> str:
        return self.user or getpass.getuser()

    def with_token(self, token: str) -> Security:
        """The same connection settings, logging in with `token` (what a Kerberos driver gives its tasks)."""
        return replace(self, auth="token", token=token, password=None)

    def describe(self) -> str:
        auth = {"none": "no authentication", "password": f"password of {self.login_name}",
                "kerberos": "Kerberos", "token": "a delegation token"}[self.auth]
        return f"{auth}, {'TLS' if self.uses_tls else 'no TLS'}"


def wrap_tls(sock: socket.socket, host: str, security: Security) -> ssl.SSLSocket:
    ctx = ssl.create_default_context(cafile=security.tls_ca)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    if not security.tls_check_hostname:
        ctx.check_hostname = False
    if security.tls_cert:
        ctx.load_cert_chain(security.tls_cert, security.tls_key)
    return ctx.wrap_socket(sock, server_hostname=host)


# --------------------------------------------------------------------------- SASL

def _send(sock: socket.socket, status: int, payload: bytes) -> None:
    sock.sendall(struct.pack(">BI", status, len(payload)) + payload)


def _read(sock: socket.socket, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("the metastore closed the connection in the SASL handshake (does it run "
                                  "with --auth? a server without authentication does not speak SASL)")
        buf += chunk
    return bytes(buf)


def _receive(sock: socket.socket) -> tuple[int, bytes]:
    head = _read(sock, 5)
    status, length = struct.unpack(">BI", head)
    if status not in (START, OK, BAD, ERROR, COMPLETE) or length > _MAX_MESSAGE:
        text = _rest(sock, head)  # a Thrift answer: the server's notice to a client it cannot serve
        if "accepts TLS connections only" in text:
            raise AuthenticationError("accepts TLS connections only and this client has no TLS "
                                      "(security=Security(tls_ca=...))", "tls")
        raise AuthenticationError("did not answer the SASL handshake (does it run with --auth?)")
    return status, _read(sock, length) if length else b""


def _rest(sock: socket.socket, head: bytes) -> str:
    data = bytearray(head)
    try:
        while len(data) < 4096 and (chunk := sock.recv(4096)):
            data += chunk
    except OSError:
        pass
    return data.decode("utf-8", "replace")


def handshake(sock: socket.socket, host: str, security: Security) -> None:
    """Log in on `sock` (TLS already started); AuthenticationError with the server's reason when refused."""
    kinds: dict[str, type[_Plain | _Gssapi | _DigestToken]] = {"password": _Plain, "kerberos": _Gssapi,
                                                               "token": _DigestToken}
    mechanism = kinds[security.auth](host, security)
    try:
        first = mechanism.first()  # (no ticket: nothing is sent)
        _send(sock, START, mechanism.name.encode())
        _send(sock, OK, first)
        for _ in range(_MAX_STEPS):
            status, payload = _receive(sock)
            if status == COMPLETE:
                return
            if status in (BAD, ERROR):
                raise AuthenticationError(f"refused the log-in: {payload.decode('utf-8', 'replace')}")
            try:
                response = mechanism.step(payload)
            except AuthenticationError as exc:  # the server hears why the client gives up
                _send(sock, ERROR, exc.message.encode())
                raise
            _send(sock, OK, response)
        raise AuthenticationError(f"SASL negotiation took more than {_MAX_STEPS} steps")
    finally:
        mechanism.close()


class _Plain:
    name = "PLAIN"

    def __init__(self, host: str, security: Security):
        self.user, self.password = security.login_name, security.password or ""

    def first(self) -> bytes:
        return b"\0" + self.user.encode() + b"\0" + self.password.encode()

    def step(self, challenge: bytes) -> bytes:
        raise AuthenticationError("the metastore asked more of a PLAIN log-in than user and password")

    def close(self) -> None:
        pass


class _Gssapi:
    """SASL GSSAPI (RFC 4752): the context tokens, then the security layer "none" (QOP auth)."""

    name = "GSSAPI"

    def __init__(self, host: str, security: Security):
        from .gss import GssError, InitiateContext

        self.error = GssError
        try:
            self.ctx = InitiateContext(security.kerberos_principal.replace("_HOST", host.lower()),
                                       security.kerberos_ccache)
        except GssError as exc:
            raise AuthenticationError(f"Kerberos: {exc}") from None

    def first(self) -> bytes:
        return self._gss(lambda: self.ctx.step(None))

    def step(self, challenge: bytes) -> bytes:
        if not self.ctx.complete:
            return self._gss(lambda: self.ctx.step(challenge))
        offer = self._gss(lambda: self.ctx.unwrap(challenge))
        if len(offer) < 4 or not offer[0] & 1:
            raise AuthenticationError("the metastore offers no SASL security layer 'none' (QOP auth)")
        return self._gss(lambda: self.ctx.wrap(bytes([1, 0, 0, 0])))

    def _gss(self, fn) -> bytes:
        try:
            return fn()
        except self.error as exc:
            raise AuthenticationError(f"Kerberos: {exc} (kinit first?)") from None

    def close(self) -> None:
        self.ctx.close()


class _DigestToken:
    """SASL DIGEST-MD5 with a delegation token, QOP auth (Hadoop's form: user name and password are
    the Base64 of the token's identifier and password)."""

    name = "DIGEST-MD5"

    def __init__(self, host: str, security: Security):
        self.identifier, self.password = decode_token(security.token or "")
        self.uri = f"hive/{host}"

    def first(self) -> bytes:
        return b""

    def step(self, challenge: bytes) -> bytes:
        d = dict(_directive(p) for p in challenge.decode("utf-8", "replace").split(",") if "=" in p)
        if "rspauth" in d:
            return b""
        realm, nonce, cnonce, nc = d.get("realm", ""), d.get("nonce", ""), secrets.token_hex(16), "00000001"
        user, secret = base64.b64encode(self.identifier).decode(), base64.b64encode(self.password).decode()
        a1 = hashlib.md5(f"{user}:{realm}:{secret}".encode()).digest() + f":{nonce}:{cnonce}".encode()
        ha1 = hashlib.md5(a1).hexdigest()
        ha2 = hashlib.md5(f"AUTHENTICATE:{self.uri}".encode()).hexdigest()
        response = hashlib.md5(f"{ha1}:{nonce}:{nc}:{cnonce}:auth:{ha2}".encode()).hexdigest()
        return (f'username="{user}",realm="{realm}",nonce="{nonce}",nc={nc},cnonce="{cnonce}",'
                f'digest-uri="{self.uri}",maxbuf=65536,response={response},qop=auth,charset=utf-8').encode()

    def close(self) -> None:
        pass


def _directive(part: str) -> tuple[str, str]:
    key, _, value = part.partition("=")
    return key.strip().lower(), value.strip().strip('"')


def decode_token(text: str) -> tuple[bytes, bytes]:
    """(identifier, password) of a delegation token's string form (Hadoop's Token, URL-safe Base64)."""
    try:
        identifier, password, _kind = writable.decode_token(text)
    except (ValueError, IndexError, UnicodeDecodeError) as exc:
        raise AuthenticationError(f"not a delegation token: {exc}") from None
    return identifier, password
