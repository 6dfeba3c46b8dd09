"""Each file group's latest files, kept per table between one server's write commits (issue 43), so
that a commit finds the slices its file groups had before it without probing `files` once per group.

An entry is a table's version (`tbl_version`) and, per file group it knows, the rows the probe
(`index._latest_rows_pg`) reads for it: (id, partition, file id, base instant, is log, size) of the
group's live files of its newest base instant. It is used only by a transaction that holds the
table's lock and finds the entry's version the table's latest: every change of the file listing
adds a version in its transaction (store/hudi/file_listing.py add_version), so the rows are what
the table holds. A write commit that gives each of its groups one new base file, newer than the
group's slice, and nothing else (`plain_change`) moves the entry to the version it added, once its
transaction has committed; any other change leaves the entry behind its table, so it is not used
again. Groups the entry does not know are probed. Servers over one database each keep their own.

PostgreSQL only: there the new rows' ids come from their sequence before the COPY. At most `LIMIT`
groups per server process (least recently used tables leave first). With `HMS_WIRE_CHECK=1` (the
test suite) every group found here is probed too and compared (index.ColumnStats._latest_pg).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

Group = tuple[str, str]  # (partition, file id)
FileRow = tuple  # (id, partition, file id, base instant, is log, size)
# (partition, name) -> (file id, base instant, is log, log version, size): file_listing.WrittenFiles
Written = dict[tuple[str, str], tuple[str, str, bool, "int | None", int]]

LIMIT = 200_000  # groups kept per server process (about 250 bytes each)


class _Entry:
    __slots__ = ("version", "groups")

    def __init__(self, version: int, groups: dict[Group, tuple[FileRow, ...]]):
        self.version = version
        self.groups = groups


class LatestFiles:
    def __init__(self, limit: int = LIMIT):
        self.limit = limit
        self._lock = threading.Lock()
        self._tables: OrderedDict[int, _Entry] = OrderedDict()

    def rows(self, tbl_id: int, version: int, groups: Iterable[Group]
             ) -> tuple[dict[Group, tuple[FileRow, ...]], list[Group]]:
        """(the kept rows of the groups the table's entry of `version` knows, the other groups)."""
        with self._lock:
            entry = self._tables.get(tbl_id)
            if entry is None or entry.version != version:
                return {}, list(groups)
            self._tables.move_to_end(tbl_id)
            known = entry.groups
        kept: dict[Group, tuple[FileRow, ...]] = {}
        missing: list[Group] = []
        for g in groups:
            rows = known.get(g)
            if rows is None:
                missing.append(g)
            else:
                kept[g] = rows
        return kept, missing

    def advance(self, tbl_id: int, before: int, after: int, change: dict[Group, tuple[FileRow, ...]]) -> None:
        """After a commit: the table went from version `before` to `after`, its groups in `change`
        to these rows, the others unchanged. An entry of another version is replaced by one of
        these groups alone."""
        with self._lock:
            entry = self._tables.pop(tbl_id, None)
            if entry is not None and entry.version == before:
                entry.groups.update(change)
                entry.version = after
            else:
                entry = _Entry(after, dict(change))
            if len(entry.groups) > self.limit:
                return  # too large to keep
            self._tables[tbl_id] = entry
            total = sum(len(e.groups) for e in self._tables.values())
            while total > self.limit and len(self._tables) > 1:
                _, old = self._tables.popitem(last=False)
                total -= len(old.groups)

    def forget(self, tbl_id: int) -> None:
        with self._lock:
            self._tables.pop(tbl_id, None)


def plain_change(ts: str, before: dict[Group, tuple[FileRow, ...]], written: Written,
                 ids: dict[tuple[str, str], int], replaced: set[Group]) -> dict[Group, tuple[FileRow, ...]] | None:
    """The rows of the groups write instant `ts` wrote, when its change is plain: one new base file
    per group (inserted with the row id `ids` gives), newer than the group's rows `before` (none:
    a new group), no group replaced. None otherwise (log files, several files of a group, ...)."""
    out: dict[Group, tuple[FileRow, ...]] = {}
    for (partition, name), (fid, base, is_log, _ver, size) in written.items():
        g = (partition, fid)
        row_id = ids.get((partition, name))
        if is_log or base != ts or row_id is None or g in out or g in replaced:
            return None
        old = before.get(g)
        if old and old[0][3] >= ts:
            return None
        out[g] = ((row_id, partition, fid, base, False, size),)
    return out
