"""Secrets kept out of text: a password inside a URL (`scheme://user:password@host`) is replaced by
*** in every log line (`MaskingFormatter`, installed by adapter/log_format.py and under the server's
SafeFormatter) and in every error the CLI prints (docs/security.md, "Secrets")."""

from __future__ import annotations

import logging
import re

MASK = "***"
# scheme://user:password@ - the password may hold anything but '@', '/' and whitespace
_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@]*:)(?P<secret>[^\s@/]+)(?P<at>@)")


def mask_secrets(text: str) -> str:
    """`text` with every password inside a URL replaced by ***."""
    if "://" not in text or "@" not in text:
        return text
    return _URL_PASSWORD.sub(lambda m: m["head"] + MASK + m["at"], text)


class MaskingFormatter(logging.Formatter):
    """Wraps a formatter: its lines with URL passwords masked (messages, arguments, tracebacks)."""

    def __init__(self, inner: logging.Formatter):
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        return mask_secrets(self.inner.format(record))


__all__ = ["MASK", "MaskingFormatter", "mask_secrets"]
