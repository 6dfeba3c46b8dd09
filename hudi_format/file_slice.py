"""Hudi file groups and file slices: data file naming, and the slices a file listing forms.

Base file: `<fileId>_<writeToken>_<instant>.<ext>`; log file: `.<fileId>_<baseInstant>.log.<version>_<writeToken>`.
A file slice is one file group's base file (if any) and the log files that share its base instant.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LOG = re.compile(r"^\.(?P<fid>.+)_(?P<base>\d{14,17})\.(?:log|archive)\.(?P<ver>\d+)(?:_[\w-]+)?(?:\.cdc)?$")
_BASE = re.compile(r"^(?P<fid>[^_]+)_(?P<token>[^_]+)_(?P<instant>\d{14,17})\.(?P<ext>[A-Za-z0-9]+)$")


@dataclass
class FileInfo:
    partition_path: str
    file_id: str
    name: str
    size: int
    base_instant: str
    is_log: bool
    log_version: int | None
    commit_ts: str  # the instant that wrote it
    path: str | None = None  # full path (URL) on storage, where the table's storage strategy puts it


@dataclass
class FileSlice:
    partition_path: str
    file_id: str
    base_instant: str
    base_file: FileInfo | None
    log_files: list[FileInfo] = field(default_factory=list)


def parse_file_name(name: str) -> tuple[str, str, bool, int | None]:
    """(file_id, base_instant, is_log, log_version) of a Hudi data file name; ValueError otherwise."""
    if name[:1] == ".":  # a log file's name starts with a dot
        m = _LOG.match(name)
        if m:
            fid, base, ver = m.group("fid", "base", "ver")
            return fid, base, True, int(ver)
    else:  # without the regular expression, a base file name that plainly is one (as _BASE takes it)
        parts = name.split("_")
        if len(parts) == 3 and parts[0] and parts[1]:
            instant, dot, ext = parts[2].partition(".")
            if (dot and 14 <= len(instant) <= 17 and instant.isascii() and instant.isdigit()
                    and ext.isascii() and ext.isalnum()):
                return parts[0], instant, False, None
    m = _BASE.match(name)
    if m:
        fid, instant = m.group("fid", "instant")
        return fid, instant, False, None
    raise ValueError(f"not a Hudi data file name: {name}")


def split_path(path: str) -> tuple[str, str]:
    """`p1/p2/name` -> ("p1/p2", "name"); relative to the table's base path."""
    path = path.strip("/")
    head, _, tail = path.rpartition("/")
    return head, tail


def full_path(base_path: str, path: str) -> str:
    """The location of `path` (relative to the table's base path) under `base_path`."""
    return base_path.rstrip("/") + "/" + path


def build_slices(files: list[FileInfo]) -> list[FileSlice]:
    """Latest slice of each file group among `files` (one partition or several)."""
    groups: dict[tuple[str, str], list[FileInfo]] = {}
    for f in files:
        groups.setdefault((f.partition_path, f.file_id), []).append(f)
    out = []
    for (partition, fid), members in sorted(groups.items()):
        latest = max(f.base_instant for f in members)
        base = next((f for f in members if not f.is_log and f.base_instant == latest), None)
        logs = sorted((f for f in members if f.is_log and f.base_instant == latest),
                      key=lambda f: (f.log_version or 0, f.name))
        out.append(FileSlice(partition, fid, latest, base, logs))
    return out
