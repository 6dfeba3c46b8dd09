"""What the Hudi services may do to a table's files on storage. store/services.py hands them the
server's storage boundary (store/storage/boundary.py), so store/hudi never imports store/storage."""

from __future__ import annotations

from typing import Protocol


class TableFiles(Protocol):
    def writable(self, base_path: str | None, action: str, tbl_id: int | None = None) -> bool:
        """May the server `action` (write, delete) files under the table's base path (with the
        table's `tbl_id`: where no other object's location covers it)? Logged and counted when not."""
        ...

    def delete_files(self, base_path: str, paths: list[str], action: str, tbl_id: int) -> list[str]:
        """Delete files given relative to the base path when it is writable, only the table's own
        (none under another object's location): the deleted ones, [] when the files stay."""
        ...
