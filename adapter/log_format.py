"""Log lines: text (default) or one JSON object a line (`--log-format json`). A record may carry
structured fields (`extra={"fields": {...}}`, e.g. the call log's client, user, method, object):
JSON lines hold them as keys, text lines already say them in the message."""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Any

from adapter.secret_text import MaskingFormatter, mask_secrets

TEXT_FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s %(message)s"


def quoted(value: Any) -> str:
    """A value for a text line's `key=value`: JSON-quoted when it holds spaces, quotes, '=' or
    control characters (client text), so one record stays one parseable line."""
    s = value if type(value) is str else str(value)
    if s and " " not in s and '"' not in s and "=" not in s and "\\" not in s and s.isprintable():
        return s
    return json.dumps(s, ensure_ascii=True)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc = {"time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
               + f".{int(record.msecs):03d}Z",
               "level": record.levelname, "logger": record.name, "pid": record.process,
               "message": record.getMessage()}
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            doc.update(fields)
        if record.exc_info:
            doc["exception"] = self.formatException(record.exc_info)
        return json.dumps(doc, ensure_ascii=False, default=str)


def configure(level: str, fmt: str = "text") -> None:
    handler = logging.StreamHandler(sys.stderr)
    inner = JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT)
    handler.setFormatter(MaskingFormatter(inner))  # no URL password in any line
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(level.upper())


# --- one INFO line without a LogRecord (the call log's line, written for every call) ------------
# logging's own path (a LogRecord, the formatter chain, the handler) was a fifth of a worker's
# interpreter time under 8 clients' getTable calls (docs/performance.md, round three, part five).

_SECOND: list[Any] = [None, ""]  # [whole second, its "%Y-%m-%d %H:%M:%S" in local time]


def _asctime(created: float) -> str:
    """logging.Formatter's default asctime of `created` (local time, ",mmm")."""
    whole = int(created)
    if _SECOND[0] != whole:
        _SECOND[1] = time.strftime(logging.Formatter.default_time_format, time.localtime(created))
        _SECOND[0] = whole
    return f"{_SECOND[1]},{int((created - whole) * 1000):03d}"


def _chain(formatter: logging.Formatter | None) -> tuple[str, bool] | None:
    """("text" | "json", is a SafeFormatter in the chain) when `formatter` is configure()'s chain
    (MaskingFormatter over the text or JSON formatter, maybe under SafeFormatter: both mask
    secrets); else None."""
    from adapter.server.logtext import SafeFormatter

    safe = masked = False
    while True:
        if type(formatter) is SafeFormatter:
            safe, masked, formatter = True, True, formatter.inner
        elif type(formatter) is MaskingFormatter:
            masked, formatter = True, formatter.inner
        else:
            break
    if not masked:
        return None
    if type(formatter) is JsonFormatter:
        return "json", safe
    if (type(formatter) is logging.Formatter and formatter._fmt == TEXT_FORMAT and formatter.datefmt is None
            and type(formatter._style) is logging.PercentStyle):
        return "text", safe
    return None


def write_info(logger: logging.Logger, message: str, fields: dict[str, Any]) -> bool:
    """`message` at INFO through `logger`, as `logger.info("%s", message, extra={"fields":
    fields})` writes it, when the only handler on the way is configure()'s (a plain stream handler
    with its formatter chain, no filters): the same bytes, without a LogRecord. False, having written
    nothing, when logging is set up otherwise (tests' capture, another handler): log it as usual."""
    return write_info_many(logger, [(message, fields)])


def write_info_many(logger: logging.Logger, messages: list[tuple[str, dict[str, Any]]]) -> bool:
    """write_info of each (message, fields), in one write and one flush (a call's audit lines:
    thousands for a drop of partitions)."""
    found = _plain_handler(logger)
    if found is None:
        return False
    handler, kind, safe = found
    created = time.time()
    text = "".join(_line(logger.name, kind, safe, created, m, f) + handler.terminator for m, f in messages)
    write_lines(handler, logger.name, text, messages[0][0])
    return True


def write_lines(handler: logging.StreamHandler, name: str, text: str, message: str) -> None:
    """`text` (whole lines) to the handler's stream in one write and a flush, under its lock; a
    failure goes where StreamHandler.emit sends it (`message`: the first line's, for its report):
    logging never fails the call."""
    handler.acquire()
    try:
        handler.stream.write(text)
        handler.flush()
    except Exception:  # noqa: BLE001 - as StreamHandler.emit
        handler.handleError(logging.LogRecord(name, logging.INFO, "", 0, message, None, None))
    finally:
        handler.release()


def _plain_handler(logger: logging.Logger) -> tuple[logging.StreamHandler, str, bool] | None:
    """(configure()'s handler, "text" | "json", under SafeFormatter) when it is the only handler
    `logger`'s INFO lines reach, with no filters on the way; else None."""
    if logger.filters or logger.disabled or not logger.isEnabledFor(logging.INFO):
        return None  # (filters apply where a record is made; a parent's do not)
    node: logging.Logger | None = logger
    root = logging.getLogger()
    while node is not None and node is not root:
        if node.handlers or not node.propagate:
            return None
        node = node.parent
    if node is None or len(root.handlers) != 1:
        return None
    handler = root.handlers[0]
    if type(handler) is not logging.StreamHandler or handler.filters or handler.level > logging.INFO:
        return None
    chain = _chain(handler.formatter)
    if chain is None:
        return None
    return handler, chain[0], chain[1]


def _line(name: str, kind: str, safe: bool, created: float, message: str, fields: dict[str, Any]) -> str:
    """The line configure()'s chain writes for `message` at INFO from logger `name`."""
    if kind == "text":
        line = f"{_asctime(created)} {os.getpid()} INFO {name} {message}"
    else:
        doc = {"time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
               + f".{int((created - int(created)) * 1000):03d}Z",
               "level": "INFO", "logger": name, "pid": os.getpid(), "message": message}
        doc.update(fields)
        line = json.dumps(doc, ensure_ascii=False, default=str)
    line = mask_secrets(line)
    if safe:
        line = line.replace("\r", "\\r").replace("\n", "\n\t")
    return line
