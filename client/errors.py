"""The client's own errors: what HudiCatalog raises for the Thrift exceptions the server answers (and
for a lost connection), so callers never see Thrift types. Each keeps the server's text (`message`),
the name of the Thrift exception it stands for (`kind`, e.g. "NoSuchObjectException") and, as its
str(), the Thrift exception's (so logs and reports read as before).
Connection failures the client retried in vain come as the OSError/EOFError they were, or as
TransportError."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from thrift.Thrift import TException
from thrift.transport.TTransport import TTransportException

from thrift_idl.hive_metastore.ttypes import (
    AlreadyExistsException,
    InvalidObjectException,
    InvalidOperationException,
    MetaException,
    NoSuchObjectException,
)
from thrift_idl.hudi_metastore.ttypes import CommitConflictException

__all__ = ["AlreadyExists", "AuthenticationError", "CommitConflict", "InvalidObject", "InvalidOperation",
           "MetastoreError", "NotFound", "ServerError", "TransportError", "converted"]


class MetastoreError(Exception):
    """The metastore refused or failed a call."""

    def __init__(self, message: str, kind: str | None = None, text: str | None = None):
        super().__init__(message if text is None else text)
        self.message = message
        self.kind = kind or type(self).__name__


class NotFound(MetastoreError):
    """No such database, table, instant, ... (NoSuchObjectException)."""


class AlreadyExists(MetastoreError):
    """AlreadyExistsException."""


class InvalidOperation(MetastoreError):
    """The call does not fit the object's state, e.g. an instant completed already (InvalidOperationException)."""


class InvalidObject(MetastoreError):
    """The server refused what was sent (InvalidObjectException)."""


class CommitConflict(MetastoreError):
    """A commit lost the server's conflict check to `conflicting` instants (CommitConflictException)."""

    def __init__(self, message: str, conflicting: list[str], kind: str | None = None, text: str | None = None):
        super().__init__(message, kind, text)
        self.conflicting = list(conflicting)


class ServerError(MetastoreError):
    """The server could not do it, e.g. a filter it cannot evaluate (MetaException)."""


class TransportError(MetastoreError):
    """The connection failed; the call may or may not have happened."""


class AuthenticationError(MetastoreError):
    """The client could not log in or secure its connection (a wrong password, no Kerberos ticket, a
    server that requires authentication or TLS the client was not given); nothing was called, and
    trying again will not help. `needs`: "authentication" or "tls" when the server requires what the
    client was not given (None otherwise)."""

    def __init__(self, message: str, needs: str | None = None):
        super().__init__(message)
        self.needs = needs


_KINDS: tuple[tuple[type[TException], type[MetastoreError]], ...] = (
    (NoSuchObjectException, NotFound), (AlreadyExistsException, AlreadyExists),
    (InvalidOperationException, InvalidOperation), (InvalidObjectException, InvalidObject),
    (MetaException, ServerError), (TTransportException, TransportError))


def from_thrift(exc: TException) -> MetastoreError:
    """The client error of a Thrift exception."""
    text = str(exc)
    message = getattr(exc, "message", None) or text
    kind = type(exc).__name__
    if isinstance(exc, CommitConflictException):
        return CommitConflict(message, list(exc.conflictingInstants or []), kind, text)
    for thrift_type, error in _KINDS:
        if isinstance(exc, thrift_type):
            return error(message, kind, text)
    return MetastoreError(message, kind, text)


@contextmanager
def converted() -> Iterator[None]:
    """Thrift exceptions raised inside become client errors (the Thrift one as their cause)."""
    try:
        yield
    except TException as exc:
        raise from_thrift(exc) from exc
