"""One Thrift service, many handlers: routes each method name to the area handler that serves it."""

from __future__ import annotations

import logging
import threading

from thrift.Thrift import TApplicationException, TException, TType

from thrift_idl.fb303 import FacebookService
from thrift_idl.hive_metastore import ThriftHiveMetastore
from thrift_idl.hive_metastore.ttypes import MetaException
from thrift_idl.hudi_metastore import HudiMetastore

log = logging.getLogger("hudi_metastore.calls")
_outcome = threading.local()  # one thread per connection: the error of this thread's last call


def take_error() -> str | None:
    """Name of the exception the last call on this thread raised (None if it succeeded); clears it."""
    name = getattr(_outcome, "error", None)
    _outcome.error = None
    return name


class HandlerRouter:
    """Looks like one handler to the generated Processor; methods no handler has stay unknown."""

    def __init__(self, *handlers):
        self._methods: dict[str, object] = {}
        for handler in handlers:
            for name in dir(handler):
                if name.startswith("_"):
                    continue
                fn = getattr(handler, name)
                if callable(fn) and name not in self._methods:
                    self._methods[name] = _guard(name, fn)

    def serves(self, method: str) -> bool:
        return method in self._methods

    def methods(self) -> list[str]:
        return sorted(self._methods)

    def __getattr__(self, name):
        try:
            return self._methods[name]
        except KeyError:
            raise AttributeError(name) from None


def declared_exceptions(method: str) -> tuple[type, ...]:
    """Exception classes a method declares, read from its generated result struct."""
    for module in (HudiMetastore, ThriftHiveMetastore, FacebookService):
        result = getattr(module, f"{method}_result", None)
        if result is not None:
            return tuple(s[3][0] for s in result.thrift_spec or () if s and s[0] > 0 and s[1] == TType.STRUCT)
    return ()


def _guard(name, fn):
    """Declared Thrift exceptions pass through; a Thrift exception the method does not declare
    becomes a MetaException with its text (when MetaException is declared), and anything else a
    MetaException that says what went wrong, instead of an opaque internal error."""
    declared = declared_exceptions(name)
    meta_ok = MetaException in declared

    def call(*args):
        try:
            return fn(*args)
        except TException as exc:
            if meta_ok and not isinstance(exc, declared + (TApplicationException,)):
                _outcome.error = "MetaException"
                text = getattr(exc, "message", None) or str(exc)
                raise MetaException(f"{type(exc).__name__}: {text}") from exc
            _outcome.error = type(exc).__name__
            raise
        except Exception as exc:  # noqa: BLE001
            _outcome.error = "MetaException"
            log.exception("%s failed", name)
            raise MetaException(f"{name} failed: {type(exc).__name__}: {exc}") from exc

    call.__name__ = name
    return call
