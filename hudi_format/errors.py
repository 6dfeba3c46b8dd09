"""Errors of Hudi's on-storage format: metadata or a table that Hudi's own writer would not produce.
The server answers them as InvalidObjectException (`adapter/errors.py`)."""

from __future__ import annotations


class HudiFormatError(ValueError):
    """Base class; `message` is the text the client sees."""

    def __init__(self, message: str = ""):
        super().__init__(message)
        self.message = message


class InvalidMetadata(HudiFormatError):
    """Instant metadata or a table config that cannot be read or is incomplete."""


class HudiStorageError(HudiFormatError):
    """The path does not hold a Hudi table this server can import."""


class NotAHudiTable(HudiStorageError):
    """No `.hoodie/hoodie.properties` under the path."""


class UnsupportedTableVersion(HudiStorageError):
    """A table version other than 6, 8 or 9."""


class CorruptTimeline(HudiStorageError):
    """Timeline files that contradict each other."""
