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


def locate(location: str) -> tuple[pafs.FileSystem, str]:
    """(filesystem, path inside it) of a file's full path (local path, `file:` URI or fsspec URL);
    one filesystem per scheme and bucket/host."""
    parsed = urlparse(location)
    if parsed.scheme in ("", "file"):
        return filesystem("/")[0], (parsed.path if parsed.scheme else location)
    fs, root = filesystem(f"{parsed.scheme}://{parsed.netloc}")
    return fs, join(root, parsed.path) if parsed.path.strip("/") else root


class FileLayout:
    """Where a table's data files are (its storage strategy, RFC-60): full path of a file given
    its path relative to the table (`<partition path>/<file name>`). Picklable, for executors."""

    def __init__(self, strategy):
        self.strategy = strategy

    def location(self, rel_path: str) -> str:
        from hudi_format.storage_strategy import file_location

        partition, _, name = rel_path.rpartition("/")
        return file_location(self.strategy, partition, name)


def join(*parts: str) -> str:
    return "/".join(p.strip("/") if i else p.rstrip("/") for i, p in enumerate(parts) if p)


def relative_path(partition_path: str, name: str) -> str:
    return f"{partition_path}/{name}" if partition_path else name
