"""One Hudi table's base path through fsspec: listing, reading, atomic writes, deletes."""

from __future__ import annotations

import os
import uuid

# Object stores: a PUT is atomic and there is no rename; everything else gets temp file + rename.
OBJECT_STORES = {"s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "az", "adl", "oss", "cos", "cosn",
                 "obs", "r2", "memory", "http", "https"}


class TableStorage:
    """One table's base path through fsspec."""

    def __init__(self, base_path: str):
        import fsspec

        self.fs, root = fsspec.core.url_to_fs(base_path)
        self.root = root.rstrip("/") or "/"
        protocols = self.fs.protocol if isinstance(self.fs.protocol, (tuple, list)) else (self.fs.protocol,)
        self.object_store = bool(set(protocols) & OBJECT_STORES)
        self.local = "file" in protocols or "local" in protocols

    def path(self, *parts: str) -> str:
        rel = "/".join(p.strip("/") for p in parts if p and p.strip("/"))
        return f"{self.root.rstrip('/')}/{rel}" if rel else self.root

    def listing(self, rel: str) -> dict[str, int | None]:
        """Name -> size (None for folders) of what is directly in a folder; {} when it is absent."""
        try:
            self.fs.invalidate_cache(self.path(rel))  # other processes write here too
        except Exception:  # a filesystem without a listing cache
            pass
        try:
            entries = self.fs.ls(self.path(rel), detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return {}
        out = {}
        for e in entries:
            name = e["name"].rstrip("/").rsplit("/", 1)[-1]
            out[name] = None if e.get("type") == "directory" else int(e.get("size") or 0)
        return out

    def exists(self, rel: str) -> bool:
        return self.fs.exists(self.path(rel))

    def read(self, rel: str) -> bytes | None:
        try:
            return self.fs.cat_file(self.path(rel))
        except FileNotFoundError:
            return None

    def makedirs(self, rel: str) -> None:
        self.fs.makedirs(self.path(rel), exist_ok=True)

    def put(self, rel: str, data: bytes, tmp_name: str | None = None) -> None:
        """Write a file atomically: readers see the old content or the new, never a part."""
        target = self.path(rel)
        parent, _, name = target.rpartition("/")
        if self.object_store:
            self.fs.pipe_file(target, data)
            return
        if not self.fs.exists(parent):
            self.fs.makedirs(parent, exist_ok=True)
        # hidden and with an extension no reader takes for an instant or a data file
        tmp = f"{parent}/{tmp_name or f'.{name}.{uuid.uuid4().hex}.tmp'}"
        self.fs.pipe_file(tmp, data)
        # Hadoop's checksum of the old content (`.<name>.crc`, written by Java writers on local
        # file systems) would make Java readers refuse the new content: it goes first
        try:
            self.fs.rm(f"{parent}/.{name}.crc")
        except (FileNotFoundError, OSError):
            pass
        try:
            if self.local:
                os.replace(tmp, target)
            else:
                self.fs.mv(tmp, target)
        except BaseException:
            try:
                self.fs.rm(tmp)
            except OSError:
                pass
            raise

    def delete(self, rel: str) -> None:
        try:
            self.fs.rm(self.path(rel))
        except FileNotFoundError:
            pass
