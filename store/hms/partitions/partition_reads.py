"""Partition reads: one partition (by values or name), lists (all, partial specification, filter),
names, counts, partitions by names and distinct key values."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from sqlalchemy import Connection, Row, Select, func, select

from store.db import schema as S
from store.db import table_version
from store.db.database import Store
from store.db.dialect import BATCH, in_list, list_batch
from store.db.driver_cursor import driver_rows
from store.errors import MetaError, NoSuchObject
from store.hms.common import EncodedStrings, EncodedStructs
from store.hms.partitions import partition_wire
from store.hms.partitions.partition_context import TableContexts, TableCtx, check_values, name_values
from store.hms.partitions.partition_list_cache import ListEntry, PartitionListCache
from store.hms.partitions.partition_names import make_name, split_name
from store.hms.partitions.partition_queries import PartitionQueries
from thrift_idl.hive_metastore.ttypes import Partition

T = TypeVar("T")
_HINTS = 10_000  # tables remembered as having a kept list, at most
_BY_TABLE = "answer_by_table"  # ListEntry.kept: (meta_version, the whole list's answer)


class PartitionReads:
    def __init__(self, store: Store, contexts: TableContexts, queries: PartitionQueries):
        self.store = store
        self.contexts = contexts
        self.queries = queries
        self.cache = PartitionListCache()  # whole lists of unchanged tables (partition_list_cache.py)
        self._kept_names: set[tuple[str, str]] = set()  # tables whose kept list answered (names, lists)
        self._names_alone: set[tuple[str, str]] = set()  # tables whose names were kept alone
        self._has_versions: bool | None = None  # tbl.meta_version's triggers are there (asked once)

    def get_partition(self, db: str, tbl: str, values: Sequence[str]) -> Partition:
        with self.store.read() as conn:
            ctx = self.contexts.read(conn, db, tbl)
            name = make_name(ctx.key_names, check_values(ctx, values))
            part = self.get_by_name(conn, ctx, name)
            part.values = list(values)  # Hive answers with the values it was asked for
            return part

    def get_partition_by_name(self, db: str, tbl: str, name: str) -> Partition:
        with self.store.read() as conn:
            ctx = self.contexts.read(conn, db, tbl)
            values = name_values(ctx, name)
            return self.get_by_name(conn, ctx, make_name(ctx.key_names, values))

    def get_by_name(self, conn: Connection, ctx: TableCtx, name: str) -> Partition:
        """The partition with this stored name; NoSuchObject if there is none."""
        q = self.queries.select_rows(ctx, S.partitions.c.part_name == name)
        rows = conn.execute(q).all()
        if not rows:
            values = [v for _, v in split_name(name)]
            raise NoSuchObject(
                f"partition values={values} for table {ctx.db_name}.{ctx.name} not found")
        return self.queries.build(conn, ctx, rows)[0]

    def get_partitions(self, db: str, tbl: str, max_parts: int = -1, part_vals: Sequence[str] | None = None,
                       filter_text: str | None = None) -> list[Partition]:
        """The table's partitions in name order, or those of a partial specification or a filter."""
        return self._listed(self.queries.build, db, tbl, max_parts, part_vals, filter_text)

    def encoded_partitions(self, db: str, tbl: str, max_parts: int = -1, part_vals: Sequence[str] | None = None,
                           filter_text: str | None = None) -> EncodedStructs:
        """`get_partitions` as Thrift bytes, for an answer: from the table's cached list
        (partition_list_cache.py) or its rows' parts (partition_wire.py). A table whose whole list
        was answered from memory before is looked up by its key alone (`_by_key`)."""
        with self.store.read() as conn:
            whole = not filter_text and part_vals is None
            if whole and max_parts < 0:
                kept = self._by_key(conn, db, tbl)
                if kept is not None:
                    return kept
            if not whole:
                spec = None if part_vals is None else tuple(part_vals)
                return self._answered(conn, (db, tbl.lower(), "list", filter_text or None, spec, max_parts),
                                      lambda ctx: self._encoded(conn, ctx, max_parts, part_vals, filter_text))
            ctx = self.contexts.read(conn, db, tbl)
            cached = self._cached(conn, ctx, None if max_parts < 0 else lambda e: e.rows[:max_parts],
                                  lambda: self._encoded(conn, ctx, max_parts, None, None), fill=max_parts < 0)
            if cached is not None:
                if max_parts < 0:
                    self._hint(db, tbl)
                return cached
            return self._encoded(conn, ctx, max_parts, None, None)

    def _answered(self, conn: Connection, request: tuple, read: Callable[[TableCtx], Any],
                  fresh: Callable[[TableCtx], Any] | None = None) -> Any:
        """The answer of a list by filter, specification or names (`request`: db, table, form,
        filter, values or names, max_parts): the one kept for it (partition_list_cache.py) while
        the table's key (one statement) shows the versions it was read at, else `read(ctx)`, kept
        with the versions of the context read before its rows (a write between the two gives it
        newer rows under versions no later call is answered at). `fresh`: the answer read from the
        rows, which HMS_WIRE_CHECK compares a kept one with (default `read`)."""
        db, tbl = request[0], request[1]
        keeps = self.store.joined() is None and self.cache.usable(conn) and self._versioned(conn)
        got = self.cache.answer_get(request) if keeps else None
        if got is not None:
            key = self.contexts.key(conn, db, tbl)
            if (key.tbl_id, key.parts_version, key.meta_version) == got[:3]:
                out = got[3]
                if partition_wire.checking():
                    ctx = self.contexts.read(conn, db, tbl)
                    if (ctx.tbl_id, ctx.parts_version, ctx.meta_version) == got[:3]:
                        again = (fresh or read)(ctx)
                        if again is None or (again.count, again.data) != (out.count, out.data):
                            raise AssertionError(f"partition_list_cache: a stale answer {request}")
                return out
            self.cache.answer_drop(request)
        ctx = self.contexts.read(conn, db, tbl)
        out = read(ctx)
        if out is not None and keeps:
            size = 400 + len(out.data) + len(request[3] or "") + sum(64 + len(v or "") for v in request[4] or ())
            self.cache.answer_put(request, ctx.tbl_id, ctx.parts_version, ctx.meta_version, out, size)
        return out

    def _by_key(self, conn: Connection, db: str, tbl: str) -> EncodedStructs | None:
        """The whole list's answer kept with the table's list, found by the table's id and versions
        alone (no descriptor or columns read): the answer is kept with the `meta_version` of the
        table whose names and descriptor it was joined with (store/db/table_version.py). None when
        the table was not answered so before, or the answer is not kept for these versions."""
        if (db, tbl.lower()) not in self._kept_names or self.store.joined() is not None \
                or not self.cache.usable(conn) or not self._versioned(conn):
            return None
        key = self.contexts.key(conn, db, tbl)
        entry = self.cache.get(key.tbl_id, key.parts_version)
        kept = entry.kept.get(_BY_TABLE) if entry is not None else None
        if kept is None or kept[0][0] != key.meta_version:
            return None
        out: EncodedStructs = kept[0][1]
        if partition_wire.checking():
            ctx = self.contexts.read(conn, db, tbl)
            if (ctx.parts_version, ctx.meta_version) == (key.parts_version, key.meta_version):
                fresh = self._encoded(conn, ctx, -1, None, None)
                if (fresh.count, fresh.data) != (out.count, out.data):
                    raise AssertionError(f"partition_list_cache: a stale list of {db}.{tbl} (found by its key)")
        return out

    def _versioned(self, conn: Connection) -> bool:
        """Does the database keep `tbl.meta_version` (its triggers, checked once per process)?"""
        if self._has_versions is None:
            self._has_versions = table_version.installed(conn)
        return self._has_versions

    def _encoded(self, conn: Connection, ctx: TableCtx, max_parts: int, part_vals: Sequence[str] | None,
                 filter_text: str | None) -> EncodedStructs:
        where = (self.queries.filter_where(ctx, filter_text) if filter_text
                 else self.queries.partial_spec_where(ctx, part_vals))
        filtered = bool(filter_text)
        return self.queries.assembled(
            conn, ctx, [self.queries.select_wire(ctx, where, max_parts, filtered)],
            lambda: [self.queries.select_rows(ctx, where, max_parts, filtered)])

    def encoded_without_columns(self, db: str, tbl: str, max_parts: int, filter_text: str | None,
                                built: Callable[[], Sequence[Partition]]) -> EncodedStructs | None:
        """A list (by filter) whose descriptors carry no columns, from the rows' parts; None when a
        row has none (`built`: the same list as objects, which HMS_WIRE_CHECK compares)."""
        def read(ctx: TableCtx) -> EncodedStructs | None:
            where = self.queries.filter_where(ctx, filter_text)
            return partition_wire.assembled(
                conn, self.store.backend, [self.queries.select_wire(ctx, where, max_parts, bool(filter_text))],
                self.queries.encoder(ctx, skip_columns=True), ctx.schema_version)

        with self.store.read() as conn:
            out = self._answered(conn, (db, tbl.lower(), "without columns", filter_text or None, None, max_parts),
                                 read)
        if out is not None and partition_wire.checking():
            partition_wire.check(out, built())
        return out

    def _entry(self, conn: Connection, ctx: TableCtx, fill: bool) -> ListEntry | None:
        """The table's cached list, read and kept if `fill`; None when there is none (and inside a
        write transaction, whose changes are not committed yet)."""
        if self.store.joined() is not None or not self.cache.usable(conn):
            return None
        entry = self.cache.get(ctx.tbl_id, ctx.parts_version)
        if entry is None and fill:
            entry = self.cache.put(ctx.tbl_id, ctx.parts_version,
                                   partition_wire.wire_rows(conn, self.store.backend, self.queries.select_wire(ctx)))
        return entry

    def _cached(self, conn: Connection, ctx: TableCtx, pick: Callable[[ListEntry], list[Any]] | None,
                read: Callable[[], EncodedStructs], fill: bool) -> EncodedStructs | None:
        """The answer from the table's cached list (`pick`: its rows of the answer; None: all, an
        answer kept with the list); None when there is none or it cannot be joined. `read`: the
        answer from the rows (HMS_WIRE_CHECK compares)."""
        entry = self._entry(conn, ctx, fill)
        if entry is None or not entry.joinable(ctx.schema_version):
            return None
        encoder = self.queries.encoder(ctx)
        if pick is None:
            shared = (encoder.names, *encoder.sd_split(ctx.schema_version), encoder.tail)
            out = entry.answer_for(shared)
            if out is None:
                out = partition_wire.joined(entry.rows, encoder, ctx.schema_version)
                if out is not None:
                    self.cache.keep(ctx.tbl_id, ctx.parts_version, entry, "answer", (shared, out), len(out.data))
            if out is not None:  # the same bytes, found by the table's key (`_by_key`): no size of their own
                self.cache.keep(ctx.tbl_id, ctx.parts_version, entry, _BY_TABLE, (ctx.meta_version, out), 0)
        else:
            out = partition_wire.joined(pick(entry), encoder, ctx.schema_version)
        if out is not None and partition_wire.checking():
            fresh = read()
            if (fresh.count, fresh.data) != (out.count, out.data):
                raise AssertionError(f"partition_list_cache: a stale list of {ctx.db_name}.{ctx.name} (version "
                                     f"{ctx.parts_version}: {out.count} partitions cached, {fresh.count} read)")
        return out

    def _listed(self, make: Callable[[Connection, TableCtx, Sequence[Row[Any]]], T], db: str, tbl: str,
                max_parts: int, part_vals: Sequence[str] | None, filter_text: str | None) -> T:
        with self.store.read() as conn:
            ctx = self.contexts.read(conn, db, tbl)
            where = (self.queries.filter_where(ctx, filter_text) if filter_text
                     else self.queries.partial_spec_where(ctx, part_vals))
            q = self.queries.select_rows(ctx, where, max_parts, filtered=bool(filter_text))
            return make(conn, ctx, conn.execute(q).all())

    def get_partition_names(self, db: str, tbl: str, max_parts: int = -1, part_vals: Sequence[str] | None = None,
                            filter_text: str | None = None) -> list[str]:
        with self.store.read() as conn:
            ctx = self.contexts.read(conn, db, tbl)
            if not filter_text and part_vals is None:  # names fill only where the list fitted before
                entry = self._entry(conn, ctx, fill=max_parts < 0 and self.cache.holds(ctx.tbl_id))
                if entry is not None:
                    names = [r[0] for r in (entry.rows if max_parts < 0 else entry.rows[:max_parts])]
                    if partition_wire.checking() and names != self._names_read(conn, ctx, max_parts, None, None):
                        raise AssertionError(f"partition_list_cache: stale names of {db}.{tbl}")
                    return names
            return self._names_read(conn, ctx, max_parts, part_vals, filter_text)

    def encoded_partition_names(self, db: str, tbl: str, max_parts: int = -1) -> EncodedStrings | list[str]:
        """get_partition_names without a specification or filter, for an answer: a kept list's
        names encoded once (partition_list_cache.py), else as `get_partition_names`. A table whose
        list was found kept before is looked up by its id and parts version alone (`contexts.key`:
        no descriptor or columns read); on a miss its whole context is read, in a second statement."""
        with self.store.read() as conn:
            hint = (db, tbl.lower())
            hinted = hint in self._kept_names or hint in self._names_alone
            if hinted and max_parts < 0 and self.store.joined() is None and self.cache.usable(conn):
                tbl_id, version, _ = self.contexts.key(conn, db, tbl)
                entry = self.cache.get(tbl_id, version)
                out = self._encoded_names(tbl_id, version, entry) if entry is not None else \
                    self.cache.names_get(tbl_id, version)
                if out is not None:
                    if partition_wire.checking():
                        self._check_names(conn, db, tbl, version, out)
                    return out
            ctx = self.contexts.read(conn, db, tbl)
            entry = self._entry(conn, ctx, fill=max_parts < 0 and self.cache.holds(ctx.tbl_id))
            if entry is None:
                names = self._names_read(conn, ctx, max_parts, None, None)
                if max_parts >= 0 or self.store.joined() is not None or not self.cache.usable(conn):
                    return names
                # the names alone kept (the whole list is not read for them): found by the key next time
                kept = EncodedStrings.of(names)
                self.cache.names_put(ctx.tbl_id, ctx.parts_version, kept, len(kept.data) + 200)
                self._hint(db, tbl, self._names_alone)
                return kept
            self._hint(db, tbl)
            if max_parts >= 0:  # a prefix: plain names, from the entry already found
                names = [r[0] for r in entry.rows[:max_parts]]
                if partition_wire.checking() and names != self._names_read(conn, ctx, max_parts, None, None):
                    raise AssertionError(f"partition_list_cache: stale names of {db}.{tbl}")
                return names
            out = self._encoded_names(ctx.tbl_id, ctx.parts_version, entry)
            if partition_wire.checking() and out != EncodedStrings.of(self._names_read(conn, ctx, -1, None, None)):
                raise AssertionError(f"partition_list_cache: stale names of {db}.{tbl}")
            return out

    def encoded_partition_names_ps(self, db: str, tbl: str, max_parts: int,
                                   part_vals: Sequence[str]) -> EncodedStrings:
        """get_partition_names_ps for an answer: names of a partial specification, encoded, kept
        with the table's versions as lists by filter are (`_answered`)."""
        with self.store.read() as conn:
            return self._answered(
                conn, (db, tbl.lower(), "names", None, tuple(part_vals), max_parts),
                lambda ctx: EncodedStrings.of(self._names_read(conn, ctx, max_parts, part_vals, None)))

    def _encoded_names(self, tbl_id: int, version: int, entry: ListEntry) -> EncodedStrings:
        out = entry.names()
        if out is None:
            out = EncodedStrings.of([r[0] for r in entry.rows])
            self.cache.keep(tbl_id, version, entry, "names", out, len(out.data))
        return out

    def _check_names(self, conn: Connection, db: str, tbl: str, version: int, out: EncodedStrings) -> None:
        """HMS_WIRE_CHECK: names answered by the table's key equal those read from the rows (when no
        write changed the table between the two statements)."""
        ctx = self.contexts.read(conn, db, tbl)
        if ctx.parts_version == version and out != EncodedStrings.of(self._names_read(conn, ctx, -1, None, None)):
            raise AssertionError(f"partition_list_cache: stale names of {db}.{tbl} (found by its key)")

    def _hint(self, db: str, tbl: str, hints: set[tuple[str, str]] | None = None) -> None:
        """Remember that db.tbl's list (into `_names_alone`: its names alone) was found kept (a hint
        only: a stale one costs one statement)."""
        hints = self._kept_names if hints is None else hints
        if len(hints) >= _HINTS:
            hints.clear()
        hints.add((db, tbl.lower()))

    def _names_read(self, conn: Connection, ctx: TableCtx, max_parts: int, part_vals: Sequence[str] | None,
                    filter_text: str | None) -> list[str]:
        q = self._names(ctx, max_parts, part_vals, filter_text)
        if self.store.backend == "postgresql":  # thousands of rows: no SQLAlchemy work per row
            return [name for (name,) in driver_rows(conn, q)]
        return list(conn.execute(q).scalars())

    def _names(self, ctx: TableCtx, max_parts: int, part_vals: Sequence[str] | None,
               filter_text: str | None) -> Select[Any]:
        where = (self.queries.filter_where(ctx, filter_text) if filter_text
                 else self.queries.partial_spec_where(ctx, part_vals))
        p = S.partitions
        q = select(p.c.part_name).where(
            self.queries.in_table(ctx, bool(filter_text) and where is not None)).order_by(p.c.part_name)
        if where is not None:
            q = q.where(where)
        if max_parts is not None and max_parts >= 0:
            q = q.limit(max_parts)
        return q

    def count_partitions(self, db: str, tbl: str, filter_text: str | None) -> int:
        with self.store.read() as conn:
            ctx = self.contexts.read(conn, db, tbl)
            p = S.partitions
            where = self.queries.filter_where(ctx, filter_text)
            q = select(func.count()).select_from(p).where(self.queries.in_table(ctx, where is not None))
            if where is not None:
                q = q.where(where)
            return conn.execute(q).scalar_one()

    def get_partitions_by_names(self, db: str, tbl: str, names: Sequence[str] | None) -> list[Partition]:
        return self._named(self.queries.build, db, tbl, names)

    def encoded_partitions_by_names(self, db: str, tbl: str, names: Sequence[str] | None) -> EncodedStructs:
        """`get_partitions_by_names` as Thrift bytes, for an answer: from the table's cached list,
        when it has one, or its rows' parts (partition_wire.py)."""
        wanted = [n for n in names or [] if n]

        def read(ctx: TableCtx) -> EncodedStructs:
            cached = self._cached(conn, ctx, lambda e: e.named(wanted),
                                  lambda: self._encoded_by_names(conn, ctx, names), fill=False)
            return cached if cached is not None else self._encoded_by_names(conn, ctx, names)

        with self.store.read() as conn:
            return self._answered(
                conn, (db, tbl.lower(), "by names", None, tuple(names or ()), -1), read,
                lambda ctx: self._encoded_by_names(conn, ctx, names))

    def _encoded_by_names(self, conn: Connection, ctx: TableCtx, names: Sequence[str] | None) -> EncodedStructs:
        batches = self._name_batches(names)
        column = S.partitions.c.part_name
        return self.queries.assembled(
            conn, ctx, [self.queries.select_wire(ctx, in_list(self.store.backend, column, b)) for b in batches],
            lambda: [self.queries.select_rows(ctx, in_list(self.store.backend, column, b)) for b in batches])

    def _name_batches(self, names: Sequence[str] | None) -> list[list[str]]:
        """Hive matches the names exactly as written; names of no partition are ignored."""
        canonical = list(dict.fromkeys(n for n in names or [] if n))
        size = list_batch(self.store.backend)
        return [canonical[i:i + size] for i in range(0, len(canonical), size)]

    def _named(self, make: Callable[[Connection, TableCtx, Sequence[Row[Any]]], T], db: str, tbl: str,
               names: Sequence[str] | None) -> T:
        with self.store.read() as conn:
            ctx = self.contexts.read(conn, db, tbl)
            # Hive matches the names exactly as written; names of no partition are ignored
            canonical = list(dict.fromkeys(n for n in names or [] if n))
            rows: list[Row[Any]] = []
            for i in range(0, len(canonical), BATCH):
                q = self.queries.select_rows(
                    ctx, in_list(self.store.backend, S.partitions.c.part_name, canonical[i:i + BATCH]))
                rows.extend(conn.execute(q).all())
            rows.sort(key=lambda r: r.part_name)
            return make(conn, ctx, rows)

    def get_partition_values(self, db: str, tbl: str, key_names: Sequence[str], filter_text: str | None,
                             ascending: bool = True, max_parts: int = -1) -> list[list[str]]:
        """The distinct value combinations of the named keys among the (filtered) partitions."""
        with self.store.read() as conn:
            ctx = self.contexts.read(conn, db, tbl)
            lowered = ctx.key_names
            idx = []
            for k in key_names:
                if k.lower() not in lowered:
                    raise MetaError(f"{k} is not a partition key of {ctx.db_name}.{ctx.name}")
                idx.append(lowered.index(k.lower()))
            p = S.partitions
            where = self.queries.filter_where(ctx, filter_text)
            q = select(p.c.part_name).where(self.queries.in_table(ctx, where is not None))
            if where is not None:
                q = q.where(where)
            seen: dict[tuple[str, ...], None] = {}
            for (name,) in conn.execute(q):
                vals = [v for _, v in split_name(name)]
                seen[tuple(vals[i] for i in idx)] = None
            rows = sorted(seen, reverse=not ascending)
            if max_parts is not None and max_parts >= 0:
                rows = rows[:max_parts]
            return [list(r) for r in rows]
