"""One Thrift service, many handlers: routes each method name to the area handler that serves it."""

from __future__ import annotations

import logging
import threading

from adapter.call_log import record_arguments
from adapter.errors import answer, declared_exceptions
from thrift_idl.hive_metastore.ttypes import MetaException

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


def _guard(name, fn):
    """Answers errors as `adapter.errors.answer` says; records the outcome for the call log."""
    declared = declared_exceptions(name)

    def call(*args):
        record_arguments(name, args)
        try:
            return fn(*args)
        except Exception as exc:  # every error gets a Thrift answer
            thrift = answer(exc, declared)
            if thrift is None:
                log.exception("%s failed", name)
                thrift = MetaException(f"{name} failed: {type(exc).__name__}: {exc}")
            _outcome.error = type(thrift).__name__
            if thrift is exc:
                raise
            raise thrift from exc

    call.__name__ = name
    return call
