"""Whole partition lists kept in memory per table, so that an unchanged table's list, names and
partitions by name are answered without reading its rows again (issue 43).

An entry is the rows of the table's full `select_wire` query (name order), keyed by `(tbl_id,
parts_version)`. `parts_version` is read with the table's context in the call's own statement and
changes, in the writing transaction, with any change of the table's partition rows (triggers:
store/db/parts_version.py), so an entry is never stale: a changed table is a new key. The parts a
list shares with its table (names, descriptor) are joined per call, from the context just read.
Servers over one database each keep their own entries; the key keeps them coherent.

A table whose names or whole list were answered from an entry before is looked up by its key alone
the next time (`TableContexts.key`: its id, `parts_version` and `meta_version`, no descriptor or
columns): names need the entry, a whole list the answer kept with it for the table's `meta_version`
(store/db/table_version.py), which changes with anything the joined parts come from.

Whole lists fill it (partition names too, for a table whose list is kept, of an older version);
a table only ever asked for its names keeps just them, encoded (`names_get`/`names_put`, by the
same key: its whole list is never read for names).

Lists by filter, partial specification or names keep their answers too (`answer_get`/`answer_put`):
by table name and request, each with the table's id, `parts_version` and `meta_version` it was read
at, answered again only while the table's key (`TableContexts.key`, one statement) still shows those
(planners send the same few filters and batches of names again and again).

At most `budget` bytes (an estimate), least recently used first out: such answers first, then names
alone, then whole lists. With `HMS_WIRE_CHECK=1` (the test suite) every answer from it is compared
with the one read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection

from store.db import parts_version

BUDGET = 64 << 20  # bytes of rows per server process
_ROW_OVERHEAD = 400  # a row's tuple, its objects' headers and its place in the names index, roughly
ANSWERS_MAX = 4096  # answers by filter, specification or names kept, at most


class ListEntry:
    __slots__ = ("rows", "size", "versions", "kept", "_index")

    def __init__(self, rows: list[Any], size: int):
        self.rows = rows
        self.size = size
        # the schema versions of its rows; None when a row has no parts (it is built when answered)
        self.versions: set[int] | None = {r[2] for r in rows}
        if any(r[1] is not None or r[3] is None for r in rows):
            self.versions = None
        self._index: dict[str, int] | None = None
        # answers made from it, by name, with their sizes: "answer" the whole list's, with the
        # shared parts it was joined with (a table's names may change while its rows do not),
        # "names" its names encoded
        self.kept: dict[str, tuple[Any, int]] = {}

    def answer_for(self, shared: tuple[bytes, ...]) -> Any:
        kept = self.kept.get("answer")
        return kept[0][1] if kept is not None and kept[0][0] == shared else None

    def names(self) -> Any:
        kept = self.kept.get("names")
        return kept[0] if kept is not None else None

    def joinable(self, schema_version: int) -> bool:
        """Can its rows be joined with the table's descriptor of `schema_version`?"""
        return self.versions is not None and self.versions <= {schema_version}

    def index(self) -> dict[str, int]:
        """name -> position (made on first use: lists by names)."""
        if self._index is None:
            self._index = {r[0]: i for i, r in enumerate(self.rows)}
        return self._index

    def named(self, names: Sequence[str]) -> list[Any]:
        """The rows of `names` that exist, in the list's (name) order."""
        index = self.index()
        at = sorted({index[n] for n in names if n in index})
        return [self.rows[i] for i in at]


class PartitionListCache:
    def __init__(self, budget: int = BUDGET, answers_max: int = ANSWERS_MAX):
        self.budget = budget
        self.answers_max = answers_max
        self._entries: OrderedDict[tuple[int, int], ListEntry] = OrderedDict()
        self._latest: dict[int, int] = {}  # tbl_id -> the version of its entry
        self._size = 0
        self._lock = threading.Lock()
        self._usable: bool | None = None  # the triggers are there (asked once)
        # names alone of tables whose list is not kept: (tbl_id, version) -> (answer, size)
        self._names: OrderedDict[tuple[int, int], tuple[Any, int]] = OrderedDict()
        self._names_latest: dict[int, int] = {}
        # lists by filter, specification or names: request -> (tbl_id, parts_version, meta_version, answer, size)
        self._answers: OrderedDict[tuple, tuple[int, int, int, Any, int]] = OrderedDict()

    def usable(self, conn: Connection) -> bool:
        if self._usable is None:
            self._usable = self.budget > 0 and parts_version.installed(conn)
        return self._usable

    def get(self, tbl_id: int, version: int) -> ListEntry | None:
        with self._lock:
            entry = self._entries.get((tbl_id, version))
            if entry is not None:
                self._entries.move_to_end((tbl_id, version))
            return entry

    def put(self, tbl_id: int, version: int, rows: list[Any]) -> ListEntry:
        size = sum(_ROW_OVERHEAD + sum(len(v) for v in r if isinstance(v, (bytes, str))) for r in rows)
        entry = ListEntry(rows, size)
        if size > self.budget // 4:  # a list that would crowd out the rest is not kept
            return entry
        with self._lock:
            for old_key in {(tbl_id, version), (tbl_id, self._latest.get(tbl_id))}:  # one entry per table
                old = self._entries.pop(old_key, None)  # type: ignore[arg-type]
                if old is not None:
                    self._size -= old.size
            self._entries[(tbl_id, version)] = entry
            self._latest[tbl_id] = version
            self._size += size
            self._evict()
        return entry

    def names_get(self, tbl_id: int, version: int) -> Any | None:
        """The names answer kept alone for the table at `version`, or None."""
        with self._lock:
            got = self._names.get((tbl_id, version))
            if got is None:
                return None
            self._names.move_to_end((tbl_id, version))
            return got[0]

    def names_put(self, tbl_id: int, version: int, value: Any, size: int) -> None:
        """Keep the table's names answer (`size` bytes) alone, replacing an older one."""
        if size > self.budget // 4:
            return
        with self._lock:
            for key in {(tbl_id, version), (tbl_id, self._names_latest.get(tbl_id))}:  # one per table
                old = self._names.pop(key, None)  # type: ignore[arg-type]
                if old is not None:
                    self._size -= old[1]
            self._names[(tbl_id, version)] = (value, size)
            self._names_latest[tbl_id] = version
            self._size += size
            self._evict()

    def answer_get(self, request: tuple) -> tuple[int, int, int, Any] | None:
        """(tbl_id, parts_version, meta_version, answer) kept for `request`, or None."""
        with self._lock:
            got = self._answers.get(request)
            if got is None:
                return None
            self._answers.move_to_end(request)
            return got[:4]

    def answer_put(self, request: tuple, tbl_id: int, parts: int, meta: int, value: Any, size: int) -> None:
        """Keep `request`'s answer (`size` bytes), read with the table at these versions."""
        if size > self.budget // 16:  # a large part of a table: not kept
            return
        with self._lock:
            old = self._answers.pop(request, None)
            if old is not None:
                self._size -= old[4]
            self._answers[request] = (tbl_id, parts, meta, value, size)
            self._size += size
            while len(self._answers) > self.answers_max:
                self._size -= self._answers.popitem(last=False)[1][4]
            self._evict()

    def answer_drop(self, request: tuple) -> None:
        with self._lock:
            old = self._answers.pop(request, None)
            if old is not None:
                self._size -= old[4]

    def keep(self, tbl_id: int, version: int, entry: ListEntry, name: str, value: Any, size: int) -> None:
        """Keep an answer made from `entry` (`size` bytes) with it, while it is kept."""
        with self._lock:
            if self._entries.get((tbl_id, version)) is not entry:
                return
            old = entry.kept.get(name)
            grown = size - (old[1] if old is not None else 0)
            entry.kept[name] = (value, size)
            entry.size += grown
            self._size += grown
            self._evict()

    def _evict(self) -> None:
        """Least recently used entries out until the rest fit (under the lock)."""
        while self._size > self.budget and self._answers:
            self._size -= self._answers.popitem(last=False)[1][4]
        while self._size > self.budget and self._names:
            (gone, _), (_, size) = self._names.popitem(last=False)
            self._size -= size
            self._names_latest.pop(gone, None)
        while self._size > self.budget and self._entries:
            (gone, _), dropped = self._entries.popitem(last=False)
            self._size -= dropped.size
            self._latest.pop(gone, None)

    def holds(self, tbl_id: int) -> bool:
        """Is a list of the table kept (of any version)?"""
        return tbl_id in self._latest

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._latest.clear()
            self._names.clear()
            self._names_latest.clear()
            self._answers.clear()
            self._size = 0
