"""Log lines that client text cannot forge.

Method names and other text from clients go through `field()`: plain identifiers as they are,
anything else quoted with every byte outside printable ASCII (and space, `"`, `\\`, `=`) written as
`\\xNN`, so a name cannot end a line or add a `key=value`. `SafeFormatter` is the net under
everything else (exception messages, tracebacks): each line after a record's first is indented, so
no text inside a record can look like the start of another.
"""

from __future__ import annotations

import logging
import re

from adapter.secret_text import mask_secrets

_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_UNSAFE = re.compile(rb'[^\x21-\x7e]|["\\=]')
LIMIT = 200  # bytes of client text kept in one log field


def field(text: str | bytes, limit: int = LIMIT) -> str:
    """`text` as one unambiguous log field."""
    if isinstance(text, str):
        if _PLAIN.fullmatch(text):
            return text
        raw = text.encode("utf-8", "surrogateescape")
    else:
        raw = bytes(text)
        if _PLAIN.fullmatch(raw.decode("ascii", "replace")):
            return raw.decode("ascii")
    cut = raw[:limit]
    quoted = _UNSAFE.sub(lambda m: f"\\x{m.group()[0]:02x}".encode(), cut).decode("ascii")
    return f'"{quoted}"' + (f"...({len(raw)} bytes)" if len(raw) > limit else "")


def one_line(text: str, limit: int = 2000) -> str:
    """Free text (an error message that may quote a client) on one line, control characters escaped."""
    text = text[:limit] + ("..." if len(text) > limit else "")
    return text.encode("unicode_escape", "backslashreplace").decode("ascii") \
        if any(ch < " " or ch == "\x7f" for ch in text) else text


class SafeFormatter(logging.Formatter):
    """Wraps a formatter: continuation lines of a record (tracebacks, messages with newlines) are
    indented with a tab, and carriage returns escaped."""

    def __init__(self, inner: logging.Formatter | None):
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        text = mask_secrets(self.inner.format(record)).replace("\r", "\\r")
        return text.replace("\n", "\n\t")


def install_safe_formatter(logger: logging.Logger | None = None) -> None:
    """Put `SafeFormatter` on the handlers of `logger` (default: the root logger), once."""
    for handler in (logger or logging.getLogger()).handlers:
        if not isinstance(handler.formatter, SafeFormatter):
            handler.setFormatter(SafeFormatter(handler.formatter))
