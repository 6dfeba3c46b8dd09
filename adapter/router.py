"""One Thrift service, many handlers: routes each method name to the area handler that serves it."""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, NoReturn

from thrift.Thrift import TApplicationException

from adapter.call_names import record_arguments
from adapter.errors import answer, declared_exceptions, unexpected
from adapter.request_text import refusal
from store import metrics
from store.db.database import call_begins, read_may_be_retried
from store.errors import AccessDenied

if TYPE_CHECKING:
    from adapter.authorization import Authorizer
    from store.hms.access import DelegationTokens

log = logging.getLogger("hudi_metastore.calls")
_outcome = threading.local()  # one thread per connection: the error of this thread's last call
READ_RETRIES = 2  # a call that only read and lost its database connection runs again, this often


class _NoTracebackForRefusals(logging.Filter):
    """The generated processor logs every TApplicationException a handler raises with its
    traceback (on the root logger). Each is a deliberate answer (a RefusedCall: a client's mistake;
    UNKNOWN_METHOD for a variant not served): one line, no traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, TApplicationException) and record.msg == "TApplication exception in handler":
            record.msg, record.args = "refused a call: %r", (exc.message,)  # %r: client text on one line
            record.exc_info, record.exc_text = None, None
            record.levelno, record.levelname = logging.INFO, "INFO"
        return True


logging.getLogger().addFilter(_NoTracebackForRefusals())


def take_error() -> str | None:
    """Name of the exception the last call on this thread raised (None if it succeeded); clears it."""
    name = getattr(_outcome, "error", None)
    _outcome.error = None
    return name


class HandlerRouter:
    """Looks like one handler to the generated Processor; methods no handler has stay unknown."""

    def __init__(self, *handlers: object, authorizer: Authorizer | None = None):
        """`authorizer`: asked before every call; None: authorization off."""
        self._methods: dict[str, object] = {}
        self.delegation_tokens: DelegationTokens | None = None  # adapter/app.py sets it
        for handler in handlers:
            for name in dir(handler):
                if name.startswith("_"):
                    continue
                fn = getattr(handler, name)
                if callable(fn) and name not in self._methods:
                    self._methods[name] = _guard(name, fn, authorizer)

    def serves(self, method: str) -> bool:
        return method in self._methods

    def methods(self) -> list[str]:
        return sorted(self._methods)

    def __getattr__(self, name):
        try:
            return self._methods[name]
        except KeyError:
            raise AttributeError(name) from None


def _guard(name, fn, authorizer=None):
    """Refuses text no request may carry (adapter/request_text.py), admits the call (authorization),
    answers errors as `adapter.errors.answer` says; records the outcome for the call log."""
    declared = declared_exceptions(name)

    def call(*args):
        record_arguments(name, args)
        bad_text = refusal(name, args, declared)  # NUL, no UTF-8: before anything runs
        if bad_text is not None:
            _answer_error(name, bad_text, declared)
        if authorizer is not None:
            try:
                args = authorizer.admit(name, args)
            except Exception as exc:
                _answer_error(name, exc, declared)
        for retry in range(READ_RETRIES + 1):
            call_begins()
            try:
                return fn(*args)
            except Exception as exc:
                if retry == READ_RETRIES or not read_may_be_retried(exc):
                    _answer_error(name, exc, declared)
                log.info("%s lost its database connection; running it again on a fresh one", name)
                metrics.incr("hms_read_retries")

    call.__name__ = name
    return call


def _answer_error(name: str, exc: Exception, declared: tuple[type, ...]) -> NoReturn:
    """Raise the Thrift answer for `exc` (every error gets one) and record it for the call log."""
    thrift = answer(exc, declared)
    if thrift is None:
        thrift = unexpected(name, exc, declared)
    _outcome.error = "denied" if isinstance(exc, AccessDenied) else type(thrift).__name__
    if thrift is exc:
        raise exc
    raise thrift from exc
