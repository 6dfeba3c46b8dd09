"""adapter/log_format.write_info: the call log's line written without a LogRecord is the line
logging writes for the same message, in text and JSON, under the server's SafeFormatter or not;
with any other logging set-up it writes nothing and says so."""

from __future__ import annotations

import io
import logging
import time

import pytest

from adapter import log_format
from adapter.log_format import TEXT_FORMAT, JsonFormatter, write_info
from adapter.secret_text import MaskingFormatter
from adapter.server.logtext import SafeFormatter

FIELDS = {"call": "get_table", "ms": 0.61, "status": "ok", "client": "127.0.0.1:5", "object": "s.t"}
MESSAGES = [
    "call=get_table ms=0.61 status=ok client=127.0.0.1:5 object=s.t",
    'call=get_table ms=1.00 status=ok object="a b\\u00e9"',
    "object=postgresql://u:secret@h/db and line\nbreak\rreturn",
    "non-ASCII välue ☃",
]


@pytest.fixture
def root_stream():
    """The root logger with one stream handler on a StringIO, restored after. Set in the test's
    own phase: pytest adds its capture handler to the root logger at the start of each phase."""
    return _OnlyHandler()


class _OnlyHandler:
    def __init__(self):
        self.stream = io.StringIO()
        self.handler = logging.StreamHandler(self.stream)

    def __enter__(self):
        root = logging.getLogger()
        self.saved = root.handlers[:], root.level
        root.handlers[:] = [self.handler]
        root.setLevel(logging.INFO)
        return self.handler, self.stream

    def __exit__(self, *exc):
        root = logging.getLogger()
        root.handlers[:] = self.saved[0]
        root.setLevel(self.saved[1])


def _frozen(monkeypatch, at: float) -> None:
    monkeypatch.setattr(time, "time", lambda: at)
    monkeypatch.setattr(time, "time_ns", lambda: int(at * 1e9))


CHAINS = {
    "text": lambda: MaskingFormatter(logging.Formatter(TEXT_FORMAT)),
    "json": lambda: MaskingFormatter(JsonFormatter()),
    "text, safe": lambda: SafeFormatter(MaskingFormatter(logging.Formatter(TEXT_FORMAT))),
    "json, safe": lambda: SafeFormatter(MaskingFormatter(JsonFormatter())),
}


@pytest.mark.parametrize("chain", list(CHAINS))
@pytest.mark.parametrize("at", [1796544000.0, 1796544000.999, 1796547599.5004])
def test_same_line_as_logging(root_stream, monkeypatch, chain, at):
    with root_stream as (handler, stream):
        _same_lines(handler, stream, monkeypatch, chain, at)


def _same_lines(handler, stream, monkeypatch, chain, at):
    handler.setFormatter(CHAINS[chain]())
    logger = logging.getLogger("hudi_metastore.calls")
    _frozen(monkeypatch, at)
    log_format._SECOND[0] = None
    for message in MESSAGES:
        logger.info("%s", message, extra={"fields": FIELDS})
        expected = stream.getvalue()
        stream.seek(0)
        stream.truncate()
        assert write_info(logger, message, FIELDS) is True
        assert stream.getvalue() == expected
        stream.seek(0)
        stream.truncate()
    assert "secret" not in expected


def test_other_set_ups_write_nothing(root_stream):
    with root_stream as (handler, stream):
        _other_set_ups(handler, stream)


def _other_set_ups(handler, stream):
    logger = logging.getLogger("hudi_metastore.calls")
    handler.setFormatter(logging.Formatter(TEXT_FORMAT))  # no masking: not configure()'s chain
    assert write_info(logger, "m", {}) is False
    handler.setFormatter(MaskingFormatter(logging.Formatter("%(message)s")))  # another format
    assert write_info(logger, "m", {}) is False
    handler.setFormatter(MaskingFormatter(logging.Formatter(TEXT_FORMAT)))
    second = logging.StreamHandler(io.StringIO())
    logging.getLogger().addHandler(second)  # e.g. pytest's capture
    assert write_info(logger, "m", {}) is False
    logging.getLogger().removeHandler(second)
    logger.addFilter(lambda r: False)
    try:
        assert write_info(logger, "m", {}) is False
    finally:
        logger.filters.clear()
    logger.setLevel(logging.WARNING)
    try:
        assert write_info(logger, "m", {}) is False
    finally:
        logger.setLevel(logging.NOTSET)
    assert stream.getvalue() == ""
    assert write_info(logger, "m", {}) is True
    assert stream.getvalue().endswith(" INFO hudi_metastore.calls m\n")


def test_a_failing_stream_does_not_fail_the_call(root_stream, monkeypatch):
    with root_stream as (handler, _stream):
        _failing(handler, monkeypatch)


def _failing(handler, monkeypatch):
    handler.setFormatter(MaskingFormatter(logging.Formatter(TEXT_FORMAT)))

    class Broken(io.StringIO):
        def write(self, s):
            raise OSError("disk full")

    handler.setStream(Broken())
    monkeypatch.setattr(logging, "raiseExceptions", False)
    assert write_info(logging.getLogger("hudi_metastore.calls"), "m", {}) is True
