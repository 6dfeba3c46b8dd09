"""Who is calling: the identity of the connection a call arrives on (one thread per connection).

With authentication off, the caller is the user `set_ugi` named (None until it does); with SASL
(Kerberos, password, delegation token) the transport binds the authenticated principal when the
handshake succeeds, and `set_ugi` can no longer change who the caller is.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

_local = threading.local()


@dataclass(frozen=True)
class Caller:
    user: str | None          # the authenticated principal's short name, or set_ugi's user
    groups: tuple[str, ...]   # the groups set_ugi named (authentication off)
    mechanism: str | None     # None (set_ugi or nobody), 'kerberos', 'password' or 'token'
    principal: str | None     # the full authenticated principal (Kerberos: user/host@REALM)

    @property
    def authenticated(self) -> bool:
        return self.mechanism is not None


_NOBODY = Caller(None, (), None, None)


def current() -> Caller:
    """This connection's caller."""
    return getattr(_local, "caller", _NOBODY)


def bind_authenticated(user: str, mechanism: str, principal: str | None = None) -> None:
    """The transport's SASL handshake succeeded: calls on this connection run as `user`."""
    _local.caller = Caller(user, (), mechanism, principal or user)


def apply_ugi(user: str | None, groups: list[str] | tuple[str, ...]) -> None:
    """set_ugi: names the caller when authentication is off; ignored for an authenticated one."""
    if current().authenticated:
        return
    _local.caller = Caller(user, tuple(groups), None, None)


def forget() -> None:
    """The connection closed (its thread may serve nothing else, but be exact)."""
    _local.__dict__.pop("caller", None)
