"""Storage access of executors and the driver: a base path (local path, `file:` URI or an fsspec
URL) as a pyarrow filesystem. Only named files are opened, written or deleted; nothing is listed."""

from __future__ import annotations

from urllib.parse import urlparse

import pyarrow.fs as pafs

_CACHE: dict[str, tuple] = {}


def filesystem(base_path: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, root path inside it) of a table's base path."""
    hit = _CACHE.get(base_path)
    if hit is not None:
        return hit
    parsed = urlparse(base_path)
    if parsed.scheme in ("", "file"):
        out = (pafs.LocalFileSystem(), (parsed.path if parsed.scheme else base_path).rstrip("/"))
    else:
        import fsspec

        fs, root = fsspec.core.url_to_fs(base_path)
        out = (pafs.PyFileSystem(pafs.FSSpecHandler(fs)), root.rstrip("/"))
    _CACHE[base_path] = out
    return out


def join(*parts: str) -> str:
    return "/".join(p.strip("/") if i else p.rstrip("/") for i, p in enumerate(parts) if p)


def relative_path(partition_path: str, name: str) -> str:
    return f"{partition_path}/{name}" if partition_path else name
