"""The client's side of the log-in (client/security.py) against the server's own code
(adapter/security/sasl.py) over a socket pair, in this process: PLAIN and DIGEST-MD5 with a
delegation token, the refusals, and how the CLI's options become a Security (table_cli.security_of).
Kerberos and TLS against real servers: tests/test_client_login.py."""

from __future__ import annotations

import socket
import threading

import pytest
from thrift.transport.TTransport import TTransportException

from adapter.cli import build_parser
from adapter.commands.table_cli import BadArgument, security_of
from adapter.security.sasl import DigestTokenExchange, HandshakeRefused, PlainExchange, negotiate
from client import AuthenticationError, Security, decode_token, handshake
from store.hms.access import TokenIdentifier, encode_token


class _ServerEnd:
    """What sasl.negotiate reads and writes (a ClientSocket's read_exactly, write, flush)."""

    def __init__(self, sock: socket.socket):
        self.sock = sock

    def read_exactly(self, n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise TTransportException(TTransportException.END_OF_FILE, "peer closed")
            buf += chunk
        return buf

    def write(self, data: bytes) -> None:
        self.sock.sendall(data)

    def flush(self) -> None:
        pass


def _log_in(security: Security, exchanges: dict):
    """(the client's error or None, the server's result or refusal)."""
    ours, theirs = socket.socketpair()
    ours.settimeout(10)
    theirs.settimeout(10)
    server: list = []

    def serve():
        try:
            server.append(negotiate(_ServerEnd(theirs), exchanges))
        except HandshakeRefused as exc:
            server.append(exc)

    t = threading.Thread(target=serve)
    t.start()
    try:
        handshake(ours, "localhost", security)
        error = None
    except AuthenticationError as exc:
        error = exc
    t.join(10)
    ours.close()
    theirs.close()
    return error, server[0]


def _plain():
    return {"PLAIN": lambda: PlainExchange(lambda user, password: (user, password) == ("alice", "correct horse"))}


def test_password_log_in_and_refusal():
    error, who = _log_in(Security(auth="password", user="alice", password="correct horse"), _plain())
    assert error is None and (who.user, who.mechanism) == ("alice", "password")
    error, refused = _log_in(Security(auth="password", user="alice", password="wrong"), _plain())
    assert isinstance(refused, HandshakeRefused)
    assert error.message == "refused the log-in: authentication failed for user alice: wrong user name or password"
    error, _ = _log_in(Security(auth="token", token=encode_token(b"id", b"pw")), _plain())
    assert "SASL mechanism DIGEST-MD5 is not offered here (offered: PLAIN)" in error.message


def test_delegation_token_log_in():
    ident = TokenIdentifier("bob", "bob", "", 1, 2, 3, 4)
    identifier, password = ident.encode(), b"\x01secret\xff"
    token = encode_token(identifier, password)
    assert decode_token(token) == (identifier, password)

    def password_of(seen: bytes):
        if seen != identifier:
            raise KeyError("not known")
        return ident, password

    exchanges = {"DIGEST-MD5": lambda: DigestTokenExchange(password_of)}
    error, who = _log_in(Security(auth="token", token=token), exchanges)
    assert error is None and (who.user, who.mechanism) == ("bob", "token")
    forged = encode_token(identifier, b"another password")
    error, _ = _log_in(Security(auth="token", token=forged), exchanges)
    assert "delegation token refused" in error.message and "does not match" in error.message
    with pytest.raises(AuthenticationError, match="not a delegation token"):
        decode_token("%%% not base64")


def test_security_settings_are_checked():
    with pytest.raises(ValueError, match="needs a password"):
        Security(auth="password")
    with pytest.raises(ValueError, match="needs a delegation token"):
        Security(auth="token")
    with pytest.raises(ValueError, match="both tls_cert and tls_key"):
        Security(tls_cert="c.pem")
    with pytest.raises(ValueError, match="expected one of"):
        Security(auth="ldap")
    assert Security(tls_ca="ca.pem").uses_tls and not Security().uses_tls and not Security().sasl
    secret = Security(auth="password", user="alice", password="correct horse")
    assert "correct horse" not in repr(secret)
    assert secret.with_token("t").auth == "token" and secret.with_token("t").password is None


def _security(monkeypatch, *argv: str, password: str | None = None) -> Security:
    monkeypatch.delenv("HUDI_METASTORE_PASSWORD", raising=False)
    if password is not None:
        monkeypatch.setenv("HUDI_METASTORE_PASSWORD", password)
    return security_of(build_parser().parse_args(["stats", "a.b", *argv]))


def test_cli_options_become_a_security(monkeypatch, tmp_path):
    secret = tmp_path / "password"
    secret.write_text("correct horse\n")
    s = _security(monkeypatch, "--user", "alice", "--password-file", str(secret))
    assert (s.auth, s.user, s.password, s.uses_tls) == ("password", "alice", "correct horse", False)
    s = _security(monkeypatch, "--tls-ca", str(secret), password="from the environment")
    assert (s.auth, s.password, s.tls_ca) == ("password", "from the environment", str(secret))
    s = _security(monkeypatch, "--auth", "kerberos", "--kerberos-principal", "hive/_HOST@EXAMPLE.COM")
    assert (s.auth, s.kerberos_principal, s.password) == ("kerberos", "hive/_HOST@EXAMPLE.COM", None)
    assert _security(monkeypatch).auth == "none"
    for argv, password, words in (
            (["--auth", "password"], None, "--auth password needs the password"),
            (["--user", "alice"], None, "--user is the user of --auth password"),
            (["--password-file", str(secret)], "twice", "the password is given twice"),
            (["--password-file", str(tmp_path / "none")], None, "password file"),
            (["--tls-client-cert", str(secret)], None, "both --tls-client-cert and --tls-client-key"),
            (["--tls-ca", str(tmp_path / "none")], None, "cannot read")):
        with pytest.raises(BadArgument, match=words):
            _security(monkeypatch, *argv, password=password)
