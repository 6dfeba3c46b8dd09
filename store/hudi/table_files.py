"""What the Hudi services may do to a table's files on storage. store/services.py hands them the
server's storage boundary (store/storage/boundary.py), so store/hudi never imports store/storage."""

from __future__ import annotations

from typing import Protocol


class TableFiles(Protocol):
    def writable(self, base_path: str | None, action: str) -> bool:
        """May the server `action` (write, delete) files under the table's base path? (Logged and
        counted when not.)"""
        ...

    def delete_files(self, base_path: str, paths: list[str], action: str) -> list[str]:
        """Delete files given relative to the base path when it is writable: `paths`, or [] when the
        files stay."""
        ...
