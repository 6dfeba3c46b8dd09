"""The one error of partition filters."""

from __future__ import annotations


class FilterError(ValueError):
    """An invalid partition filter; `str(err)` is a complete message for a MetaException."""

    def __init__(self, message: str, text: str | None = None, pos: int | None = None):
        self.reason = message
        self.text = text
        self.pos = pos
        if text is not None and pos is not None:
            message = f'Error parsing partition filter "{text}" at position {pos}: {message}'
        elif text is not None:
            message = f'Error parsing partition filter "{text}": {message}'
        super().__init__(message)
