"""serve's authentication and TLS settings (`--auth`, `--auth-password-file`, `--kerberos-principal`,
`--kerberos-keytab`, `--tls-cert`, `--tls-key`, `--tls-client-ca`), checked at start and turned into
what each connection needs."""

from __future__ import annotations

import os
import socket
import ssl
from dataclasses import dataclass
from functools import partial

from adapter.security import password_file
from adapter.security.sasl import DigestTokenExchange, GssapiExchange, PlainExchange

AUTH_MODES = ("none", "password", "kerberos")


class SecuritySettingsError(ValueError):
    pass


@dataclass(frozen=True)
class ConnectionSecurity:
    auth: str = "none"
    password_file: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_client_ca: str | None = None  # given: clients must present a certificate signed by it
    kerberos_principal: str | None = None  # the service principal; _HOST is this machine's name
    kerberos_keytab: str | None = None

    @classmethod
    def from_args(cls, args) -> ConnectionSecurity:
        s = cls(getattr(args, "auth", None) or "none", getattr(args, "auth_password_file", None),
                getattr(args, "tls_cert", None), getattr(args, "tls_key", None),
                getattr(args, "tls_client_ca", None), getattr(args, "kerberos_principal", None),
                getattr(args, "kerberos_keytab", None))
        s.check()
        return s

    def check(self) -> None:
        if self.auth not in AUTH_MODES:
            raise SecuritySettingsError(f"--auth {self.auth}: expected one of {', '.join(AUTH_MODES)}")
        if self.auth == "password":
            if not self.password_file:
                raise SecuritySettingsError("--auth password needs --auth-password-file "
                                            "(add users with: hudi-metastore users add --file FILE USER)")
            if not password_file.read(self.password_file):
                raise SecuritySettingsError(f"the password file {self.password_file} has no users")
        if self.auth == "kerberos":
            if not self.kerberos_principal or not self.kerberos_keytab:
                raise SecuritySettingsError("--auth kerberos needs --kerberos-principal (e.g. hive/_HOST@REALM) "
                                            "and --kerberos-keytab (the service's keytab)")
            if not os.access(self.kerberos_keytab, os.R_OK):
                raise SecuritySettingsError(f"cannot read the keytab {self.kerberos_keytab}")
            from client import AcceptorCredentials, GssError

            try:  # a wrong principal or keytab fails the start, not every connection
                AcceptorCredentials(self.service_principal, self.kerberos_keytab).close()
            except GssError as exc:
                raise SecuritySettingsError(f"Kerberos: {exc}") from None
        elif self.kerberos_principal or self.kerberos_keytab:
            raise SecuritySettingsError("--kerberos-principal and --kerberos-keytab need --auth kerberos")
        if bool(self.tls_cert) != bool(self.tls_key):
            raise SecuritySettingsError("TLS needs both --tls-cert and --tls-key")
        if self.tls_client_ca and not self.tls_cert:
            raise SecuritySettingsError("--tls-client-ca needs --tls-cert and --tls-key")
        for path in (self.tls_cert, self.tls_key, self.tls_client_ca):
            if path and not os.access(path, os.R_OK):
                raise SecuritySettingsError(f"cannot read {path}")
        if self.tls_cert:
            self.ssl_context()  # a bad certificate or key fails the start, not every connection

    @property
    def sasl(self) -> bool:
        return self.auth != "none"

    def exchanges(self, delegation_tokens=None) -> dict[str, object]:
        """SASL mechanism name -> a factory of its server exchange. With Kerberos, delegation tokens
        (store.hms.delegation_tokens, when given) log in over DIGEST-MD5, as with Hive."""
        if self.auth == "password":
            assert self.password_file is not None
            return {"PLAIN": partial(PlainExchange, partial(password_file.verify, self.password_file))}
        if self.auth == "kerberos":
            assert self.kerberos_keytab is not None
            principal, keytab = self.service_principal, self.kerberos_keytab
            out: dict[str, object] = {"GSSAPI": lambda: GssapiExchange(_acceptor(principal, keytab))}
            if delegation_tokens is not None:
                out["DIGEST-MD5"] = partial(DigestTokenExchange, delegation_tokens.password)
            return out
        return {}

    @property
    def service_principal(self) -> str:
        """--kerberos-principal with `_HOST` replaced by this machine's name, as Hive does."""
        return (self.kerberos_principal or "").replace("_HOST", socket.getfqdn().lower())

    def ssl_context(self) -> ssl.SSLContext | None:
        if not self.tls_cert:
            return None
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        try:
            ctx.load_cert_chain(self.tls_cert, self.tls_key)
            if self.tls_client_ca:
                ctx.load_verify_locations(self.tls_client_ca)
                ctx.verify_mode = ssl.CERT_REQUIRED
        except (ssl.SSLError, OSError) as exc:
            raise SecuritySettingsError(f"cannot load the TLS certificate, key or CA: {exc}") from None
        return ctx

    def describe(self) -> str:
        auth = "no authentication" if self.auth == "none" else f"{self.auth} authentication (SASL)"
        if self.auth == "kerberos":
            auth += f" as {self.service_principal}"
        tls = "TLS" + (" with client certificates" if self.tls_client_ca else "") if self.tls_cert else "no TLS"
        return f"{auth}, {tls}"


_acceptors: dict[tuple[int, str, str], object] = {}


def _acceptor(principal: str, keytab: str):
    """The service's acceptor credentials, acquired once per process (workers may be forked)."""
    from client import AcceptorCredentials

    key = (os.getpid(), principal, keytab)
    if key not in _acceptors:
        _acceptors[key] = AcceptorCredentials(principal, keytab)
    return _acceptors[key]
