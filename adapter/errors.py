"""Errors on the wire: the one place where the store's errors (`store/errors.py`, `hudi_format/errors.py`)
become the Thrift exceptions of the method called.

A mapped exception the method does not declare, and any Thrift exception a handler raises that the
method does not declare, is answered as MetaException with its text when the method declares
MetaException: the generated processor would otherwise turn it into an opaque "Internal error".
A method that declares neither (open_txns, lock, heartbeat_txn_range, ...) answers a
`RefusedCall`: a TApplicationException(INTERNAL_ERROR) carrying the reason, logged without a
traceback (it is the client's mistake, not the server's).

Anything else unexpected (a bug, a database error) is answered with a generic reason and an error
id; the full detail, SQL included, goes to the server log under that id only (`unexpected`).
"""

from __future__ import annotations

import logging
import uuid

from sqlalchemy.exc import SQLAlchemyError
from thrift.Thrift import TApplicationException, TException, TType

from hudi_format.errors import HudiFormatError
from store import errors as E
from store.db.connection_loss import CommitOutcomeUnknown, connection_lost, database_unavailable
from store.db.database import call_committed
from thrift_idl.fb303 import FacebookService
from thrift_idl.hive_metastore import ThriftHiveMetastore
from thrift_idl.hive_metastore import ttypes as H
from thrift_idl.hudi_metaserver import ThriftHoodieMetaserver
from thrift_idl.hudi_metaserver import ttypes as M
from thrift_idl.hudi_metastore import HudiMetastore
from thrift_idl.hudi_metastore.ttypes import CommitConflictException

# The reason of an answer after which a client may run the call again on another server: the database
# could not be used and the call changed nothing (client/connection.py recognizes this text).
DATABASE_UNAVAILABLE = "the metastore database is unavailable"

_THRIFT: dict[type, type] = {
    E.NoSuchObject: H.NoSuchObjectException,
    E.AlreadyExists: H.AlreadyExistsException,
    E.InvalidObject: H.InvalidObjectException,
    E.InvalidOperation: H.InvalidOperationException,
    E.InvalidInput: H.InvalidInputException,
    E.MetaError: H.MetaException,
    E.TooExpensive: H.MetaException,
    E.NoSuchTxn: H.NoSuchTxnException,
    E.TxnAborted: H.TxnAbortedException,
    E.TxnOpen: H.TxnOpenException,
    E.NoSuchLock: H.NoSuchLockException,
    HudiFormatError: H.InvalidObjectException,
}


def declared_exceptions(method: str) -> tuple[type, ...]:
    """Exception classes a method declares, read from its generated result struct."""
    for module in (HudiMetastore, ThriftHiveMetastore, FacebookService, ThriftHoodieMetaserver):
        result = getattr(module, f"{method}_result", None)
        if result is not None:
            return tuple(s[3][0] for s in result.thrift_spec or () if s and s[0] > 0 and s[1] == TType.STRUCT)
    return ()


def to_thrift(exc: BaseException) -> TException | None:
    """The Thrift exception a store or format error stands for; None for anything else."""
    if isinstance(exc, E.CommitConflict):
        return CommitConflictException(message=exc.message, conflictingInstants=list(exc.conflicting))
    for cls in type(exc).__mro__:
        thrift = _THRIFT.get(cls)
        if thrift is not None:
            return thrift(message=getattr(exc, "message", None) or str(exc))
    return None


log = logging.getLogger("hudi_metastore.errors")


class RefusedCall(TApplicationException):
    """A client error answered to a method that declares no exception fitting it."""

    def __init__(self, message: str):
        super().__init__(TApplicationException.INTERNAL_ERROR, message)


# Hudi's metaserver protocol (thrift_idl/hudi_metaserver.thrift) has its own exceptions: what an HMS
# exception stands for there; MetaserverException for the rest
_METASERVER: dict[type, type] = {
    H.NoSuchObjectException: M.MetaserverNoSuchObjectException,
    H.AlreadyExistsException: M.AlreadyExistException,
}


def _for_metaserver(thrift: TException, declared: tuple[type, ...]) -> TException:
    text = getattr(thrift, "message", None) or str(thrift)
    kind = _METASERVER.get(type(thrift), M.MetaserverException)
    if kind in declared:
        return kind(message=text)
    if M.MetaserverException in declared:
        return M.MetaserverException(message=f"{type(thrift).__name__}: {text}")
    return M.MetaserverStorageException(message=f"{type(thrift).__name__}: {text}")


def answer(exc: BaseException, declared: tuple[type, ...]) -> TException | None:
    """What a method declaring `declared` answers for `exc`; None when `exc` is no error the store
    or a handler meant (the caller answers `unexpected(...)`)."""
    thrift = exc if isinstance(exc, TException) else to_thrift(exc)
    if thrift is None:
        return None
    if isinstance(exc, E.OwnershipConflict) and H.InvalidOperationException in declared:
        return H.InvalidOperationException(message=exc.message)
    if M.MetaserverStorageException in declared and not isinstance(thrift, declared + (TApplicationException,)):
        return _for_metaserver(thrift, declared)
    if isinstance(thrift, declared + (TApplicationException,)):
        return thrift
    text = getattr(thrift, "message", None) or str(thrift)
    if H.MetaException in declared:
        return H.MetaException(f"{type(thrift).__name__}: {text}")
    return RefusedCall(f"{type(thrift).__name__}: {text}")


def unexpected(method: str, exc: BaseException, declared: tuple[type, ...]) -> TException:
    """The answer to an error nobody meant: a generic reason and an id; the detail (a driver's
    message may quote SQL and data) is logged under that id, never sent."""
    error_id = uuid.uuid4().hex[:12]
    log.error("%s failed (error id %s)", method, error_id, exc_info=exc)
    if isinstance(exc, CommitOutcomeUnknown):
        text = (f"{method}: the metastore database connection was lost while committing and the "
                f"outcome is unknown; read the object back before retrying (error id {error_id})")
    elif database_unavailable(exc) and not call_committed():
        # the client may run any call again, on another server (client/connection.py)
        text = (f"{method} failed: {DATABASE_UNAVAILABLE} from this metastore server; nothing was changed "
                f"(error id {error_id})")
    elif connection_lost(exc):
        text = f"{method} failed: the metastore database connection was lost (error id {error_id})"
    elif isinstance(exc, SQLAlchemyError):
        text = f"{method} failed: the metastore database reported an error (error id {error_id})"
    else:
        text = f"{method} failed: internal error {type(exc).__name__} (error id {error_id})"
    if M.MetaserverStorageException in declared:
        return M.MetaserverStorageException(message=text)
    return H.MetaException(text) if H.MetaException in declared else RefusedCall(text)
