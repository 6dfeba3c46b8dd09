"""Errors on the wire: the one place where the store's errors (`store/errors.py`, `hudi_format/errors.py`)
become the Thrift exceptions of the method called.

A mapped exception the method does not declare, and any Thrift exception a handler raises that the
method does not declare, is answered as MetaException with its text when the method declares
MetaException: the generated processor would otherwise turn it into an opaque "Internal error".
Anything else unexpected becomes a MetaException that says what went wrong.
"""

from __future__ import annotations

from thrift.Thrift import TApplicationException, TException, TType

from hudi_format.errors import HudiFormatError
from store import errors as E
from thrift_idl.fb303 import FacebookService
from thrift_idl.hive_metastore import ThriftHiveMetastore
from thrift_idl.hive_metastore import ttypes as H
from thrift_idl.hudi_metastore import HudiMetastore
from thrift_idl.hudi_metastore.ttypes import CommitConflictException

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
    for module in (HudiMetastore, ThriftHiveMetastore, FacebookService):
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


def answer(exc: BaseException, declared: tuple[type, ...]) -> TException | None:
    """What a method declaring `declared` answers for `exc`; None when `exc` is no error the store
    or a handler meant (the caller logs it and answers a MetaException naming it)."""
    thrift = exc if isinstance(exc, TException) else to_thrift(exc)
    if thrift is None:
        return None
    if H.MetaException in declared and not isinstance(thrift, declared + (TApplicationException,)):
        text = getattr(thrift, "message", None) or str(thrift)
        return H.MetaException(f"{type(thrift).__name__}: {text}")
    return thrift
