"""The store's errors: every service raises these, never a wire type. `adapter/errors.py` maps them
to the Thrift exceptions of the method called, in one place.

The classes follow the Hive Metastore's own vocabulary, so a service says what Hive would answer:
"""

from __future__ import annotations


class StoreError(Exception):
    """Base class; `message` is the text the client sees."""

    def __init__(self, message: str = ""):
        super().__init__(message)
        self.message = message


class NoSuchObject(StoreError):
    """A database, table, partition, function, ... that does not exist (NoSuchObjectException)."""


class AlreadyExists(StoreError):
    """Creating what exists already (AlreadyExistsException)."""


class InvalidObject(StoreError):
    """An object or argument that is malformed or refers to something missing (InvalidObjectException)."""


class InvalidOperation(StoreError):
    """A valid request the current state does not allow (InvalidOperationException)."""


class InvalidInput(StoreError):
    """Input Hive reports as InvalidInputException (column statistics)."""


class MetaError(StoreError):
    """Anything else the store refuses or fails at (MetaException)."""


class AccessDenied(MetaError):
    """The caller lacks the ownership, privilege or role a call needs (MetaException): the message
    says who lacked what on which object."""


class OwnershipConflict(MetaError):
    """A location that belongs to another object, or that no one may use (store/storage/owner_index.py):
    MetaException, or InvalidOperationException where the method declares it (adapter/errors.py)."""


class TooExpensive(MetaError):
    """A request the database gave up on at the statement timeout (MetaException): the message
    says so, never the SQL."""


class NoSuchTxn(StoreError):
    """A transaction id that is unknown or already committed (NoSuchTxnException)."""


class TxnAborted(StoreError):
    """A transaction that was aborted (TxnAbortedException)."""


class TxnOpen(StoreError):
    """An operation that needs no open transactions (TxnOpenException)."""


class NoSuchLock(StoreError):
    """A lock id that is unknown (NoSuchLockException)."""


class TableLocked(MetaError):
    """A table another writer kept locked longer than a call waits (MetaException)."""


class CommitConflict(StoreError):
    """A Hudi commit that conflicts with instants completed since it started (CommitConflictException)."""

    def __init__(self, message: str, conflicting: list[str]):
        super().__init__(message)
        self.conflicting = conflicting
