"""Log lines: text (default) or one JSON object a line (`--log-format json`). A record may carry
structured fields (`extra={"fields": {...}}`, e.g. the call log's client, user, method, object):
JSON lines hold them as keys, text lines already say them in the message."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

from adapter.secret_text import MaskingFormatter

TEXT_FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s %(message)s"


def quoted(value: Any) -> str:
    """A value for a text line's `key=value`: JSON-quoted when it holds spaces, quotes, '=' or
    control characters (client text), so one record stays one parseable line."""
    s = str(value)
    if not s or any(c in s for c in ' "=\\') or not s.isprintable():
        return json.dumps(s, ensure_ascii=True)
    return s


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
