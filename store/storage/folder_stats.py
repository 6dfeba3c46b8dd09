"""numFiles / totalSize of existing folders (Hive's fast stats), counted with bounds.

A client names the folders (table and partition locations), so counting is bounded: one
`FolderCounter` serves one request and looks at no more than `MAX_ENTRIES` entries in
`MAX_SECONDS` seconds over all the folders it counts; symbolic links are never followed (a link
is neither counted nor entered); nothing outside its roots (the warehouse and the configured
roots, in `boundary.canonical` form) is listed. It never raises: an entry that vanishes while
counted is skipped; a folder that cannot be read, or a bound reached, makes a count incomplete,
and an incomplete count is recorded as no statistics (store/hms/stats_params.py).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from time import monotonic

from store.storage import warehouse
from store.storage.boundary import canonical

log = logging.getLogger(__name__)

MAX_ENTRIES = 10_000  # files and directories looked at per request, hidden ones included
MAX_SECONDS = 2.0  # per request


@dataclass(frozen=True)
class FolderStats:
    files: int
    size: int
    complete: bool = True
    why: str = ""  # what made it incomplete


class FolderCounter:
    """Counts folders for one request. `roots`: canonical URIs of where folders may be listed
    (None: anywhere)."""

    def __init__(self, roots: Sequence[str] | None, max_entries: int | None = None,
                 max_seconds: float | None = None):
        self.roots = None if roots is None else list(roots)
        self.entries_left = MAX_ENTRIES if max_entries is None else max_entries
        self.max_entries = self.entries_left
        self.max_seconds = MAX_SECONDS if max_seconds is None else max_seconds
        self.deadline: float | None = None  # set by the first count
        self.exhausted = ""  # why the bounds are used up (logged once)
        self.outside_logged = False
        self._reals = warehouse.RealPaths()  # this request's

    def stats(self, uri: str | None) -> FolderStats | None:
        """The data files below the local folder `uri` (hidden `.` and `_` entries skipped, as Hive
        counts them; none when it is no directory); None when it is not local or lies outside the
        roots."""
        path = warehouse.local_path(uri)
        if path is None:
            return None
        try:
            if self.roots is None and os.path.isabs(path) and os.path.normpath(path) == path:
                real = path  # no roots to check it against: the system resolves it as realpath would
            else:
                real = self._reals(path)  # (the parents the partitions of a table share: looked up once)
            if self.roots is not None and not _inside(canonical("file:" + real, self._reals), self.roots):
                if not self.outside_logged:  # once per request (add_partitions may name thousands)
                    self.outside_logged = True
                    log.info("statistics of %s not gathered: outside the warehouse and the configured roots", uri)
                return None
        except (OSError, ValueError):
            return None
        if self.deadline is None:
            self.deadline = monotonic() + self.max_seconds
        if self.exhausted:
            return FolderStats(0, 0) if not os.path.isdir(real) else FolderStats(0, 0, False, self.exhausted)
        stats = self._count(real)  # (no directory: no files; found by listing it, not asked first)
        if not stats.complete:
            log.info("statistics of %s not gathered: %s", uri, stats.why)
        return stats

    def _count(self, top: str) -> FolderStats:
        files = size = 0
        pending = [top]
        while pending:
            directory = pending.pop()
            try:
                with os.scandir(directory) as entries:
                    for entry in entries:
                        if why := self._spend():
                            return FolderStats(files, size, False, why)
                        if entry.name.startswith((".", "_")):
                            continue
                        try:
                            if entry.is_symlink():
                                continue
                            if entry.is_dir(follow_symlinks=False):
                                pending.append(entry.path)
                            elif entry.is_file(follow_symlinks=False):
                                size += entry.stat(follow_symlinks=False).st_size
                                files += 1
                        except FileNotFoundError:
                            continue  # removed while counted
                        except OSError as exc:
                            return FolderStats(files, size, False, f"cannot read {entry.path}: {exc.strerror or exc}")
            except FileNotFoundError:
                continue
            except OSError as exc:
                if directory == top and not os.path.isdir(top):  # a file, a broken link: no files
                    return FolderStats(0, 0)
                return FolderStats(files, size, False, f"cannot read {directory}: {exc.strerror or exc}")
        return FolderStats(files, size)

    def _spend(self) -> str:
        """One more entry; the reason when that is beyond the bounds."""
        self.entries_left -= 1
        if self.entries_left < 0:
            self.exhausted = f"more than {self.max_entries} entries in the folders of one request"
        elif self.entries_left % 64 == 0 and self.deadline is not None and monotonic() > self.deadline:
            self.exhausted = f"counting took more than {self.max_seconds:g} s"
        return self.exhausted


def _inside(c: str, roots: Sequence[str]) -> bool:
    return any(c == r or c.startswith(r.rstrip("/") + "/") for r in roots)
