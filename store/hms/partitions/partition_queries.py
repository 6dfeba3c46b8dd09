"""Partition reads as SQL: which partitions (the table, a partial specification, a filter) and the
Partition objects their rows become.

Every read selects partitions with one WHERE clause and fetches their parameters with the same clause
as a subquery, so a call costs what its answer costs, never a scan of the table's partitions in Python.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from sqlalchemy import Connection, Row, Select, and_, select
from sqlalchemy.sql.expression import ColumnElement

from store.db import schema as S
from store.db.database import Store
from store.db.dialect import BATCH, in_list, list_batch, params_of_many
from store.errors import MetaError
from store.hms.common import EncodedStructs, PartitionEncoder, PiecesCache, build_sd, load_columns
from store.hms.partition_filter import FilterError, compile_filter
from store.hms.partitions import partition_wire
from store.hms.partitions.partition_context import TableCtx
from store.hms.partitions.partition_names import DEFAULT_PARTITION
from thrift_idl.hive_metastore.ttypes import Partition, StorageDescriptor


class _SharedDescriptors:
    """Per schema version of an answer's partitions: its columns, and the descriptor that the
    partitions without one of their own share (made once, on first use)."""

    def __init__(self, ctx: TableCtx, columns: dict[int, tuple[list, list]]):
        self.ctx = ctx
        self.columns = columns
        self._made: dict[int, StorageDescriptor] = {}

    def __call__(self, version: int) -> StorageDescriptor:
        sd = self._made.get(version)
        if sd is None:
            sd = self._made[version] = build_sd(self.ctx.sd, None, self.columns[version][0])
        return sd


class PartitionQueries:
    def __init__(self, store: Store):
        self.backend = store.backend
        # filters start from the key-value index (compile_filter's driver); MySQL keeps the plain
        # form: it runs IN (... UNION ...) as a subquery per row
        self.driven = store.backend in ("sqlite", "postgresql")
        self.pieces_cache = PiecesCache()  # encoded partitions answered before (store/hms/common/wire.py)

    def in_table(self, ctx: TableCtx, filtered: bool = False) -> ColumnElement[bool]:
        """The partitions of ctx's table. Under a driven filter (see compile_filter) the driver
        already stays within the table: `tbl_id + 0` keeps the planner from walking the table's
        index instead of starting from the driver."""
        p = S.partitions
        if filtered and self.driven:
            return (p.c.tbl_id + 0) == ctx.tbl_id
        return p.c.tbl_id == ctx.tbl_id

    def select_rows(self, ctx: TableCtx, where: ColumnElement[Any] | None = None, max_parts: int | None = None,
                    filtered: bool = False) -> Select[Any]:
        """Partition rows with their parameters (as JSON, `params_json`), in name order."""
        return self._listing(select(S.partitions, partition_wire.params_json(self.backend)), ctx, where, max_parts,
                             filtered)

    def select_wire(self, ctx: TableCtx, where: ColumnElement[Any] | None = None, max_parts: int | None = None,
                    filtered: bool = False) -> Select[Any]:
        """The rows of `select_rows` as their encoded parts (partition_wire.py), in name order."""
        p = S.partitions
        return self._listing(select(p.c.part_name, p.c.sd_id, p.c.schema_version, p.c.w_values, p.c.w_times,
                                    p.c.w_location, p.c.w_params), ctx, where, max_parts, filtered)

    def _listing(self, q: Select[Any], ctx: TableCtx, where: ColumnElement[Any] | None, max_parts: int | None,
                 filtered: bool) -> Select[Any]:
        cond = self.in_table(ctx, filtered and where is not None)
        if where is not None:
            cond = and_(cond, where)
        q = q.where(cond).order_by(S.partitions.c.part_name)
        if max_parts is not None and max_parts >= 0:
            q = q.limit(max_parts)
        return q

    @staticmethod
    def encoder(ctx: TableCtx, skip_columns: bool = False) -> PartitionEncoder:
        """The encoder of an answer of ctx's partitions (`skip_columns`: their descriptors with no
        columns, as Hive 4's get_partitions_by_filter_req answers when asked)."""
        return PartitionEncoder(ctx.db_name, ctx.name, ctx.cat_name, _SharedDescriptors(
            ctx, {ctx.schema_version: ([] if skip_columns else ctx.cols, ctx.keys)}))

    def assembled(self, conn: Connection, ctx: TableCtx, queries: Sequence[Select[Any]],
                  rows_queries: Callable[[], Sequence[Select[Any]]]) -> EncodedStructs:
        """The answer of `queries` (from `select_wire`) as the database concatenates it
        (partition_wire.py), or, where it cannot be, built from `rows_queries` (`select_rows`)."""
        out = partition_wire.assembled(conn, self.backend, queries, self.encoder(ctx), ctx.schema_version)
        if out is not None and not partition_wire.checking():
            return out

        def rows_read() -> list[Row[Any]]:
            rows: list[Row[Any]] = []
            by_rows = rows_queries()
            for q in by_rows:
                rows.extend(conn.execute(q).all())
            if len(by_rows) > 1:
                rows.sort(key=lambda r: r.part_name)
            return rows

        if out is None:
            return self.encode(conn, ctx, rows_read())
        try:
            partition_wire.check(out, self.build(conn, ctx, rows_read()))
        except AssertionError:
            # HMS_WIRE_CHECK's second read is a statement of its own (its own snapshot under READ
            # COMMITTED): a commit between the two differs them. Both again, once.
            out = partition_wire.assembled(conn, self.backend, queries, self.encoder(ctx), ctx.schema_version)
            if out is None:
                return self.encode(conn, ctx, rows_read())
            partition_wire.check(out, self.build(conn, ctx, rows_read()))
        return out

    def partial_spec_where(self, ctx: TableCtx, part_vals: Sequence[str] | None) -> ColumnElement[Any] | None:
        """Partial specification: `part_vals[i]` fixes key i unless empty."""
        if part_vals is not None and len(part_vals) == 0:  # Hive: an empty specification is an error
            raise MetaError("Invalid partition key & values; keys [], values []")
        part_vals = list(part_vals or [])
        if len(part_vals) > len(ctx.keys):
            raise MetaError(
                f"Incorrect number of partition values. numPartKeys={len(ctx.keys)}, "
                f"part_val={part_vals}")
        kv = S.partition_key_val
        conds = [
            S.partitions.c.part_id.in_(select(kv.c.part_id).where(
                kv.c.tbl_id == ctx.tbl_id, kv.c.key_idx == i, kv.c.part_key_val == v))
            for i, v in enumerate(part_vals) if v not in (None, "")
        ]
        return and_(*conds) if conds else None

    def filter_where(self, ctx: TableCtx, filter_text: str | None) -> ColumnElement[Any] | None:
        """A Hive filter (get_partitions_by_filter) as a WHERE clause; None for no filter."""
        if not filter_text or not filter_text.strip():
            return None
        try:
            return compile_filter(filter_text, ctx.tbl_id, ctx.key_types, self.backend,
                                  driven=self.driven and ("or" if self.backend == "postgresql" else True))
        except FilterError as exc:
            raise MetaError(str(exc)) from exc

    def named(self, conn: Connection, ctx: TableCtx, names: Sequence[str]) -> list[Partition]:
        """The partitions of `names` that exist (in batches)."""
        rows: list[Row[Any]] = []
        size = list_batch(self.backend)
        for i in range(0, len(names), size):
            rows.extend(conn.execute(self.select_rows(
                ctx, in_list(self.backend, S.partitions.c.part_name, list(names[i:i + size])))).all())
        return self.build(conn, ctx, rows)

    def build(self, conn: Connection, ctx: TableCtx, rows: Sequence[Row[Any]]) -> list[Partition]:
        """Partition objects for `rows` of `select_rows` (parameters come inside the rows, as JSON).

        Partitions without a descriptor of their own get a shallow copy of one descriptor built
        for the table (per schema version): their columns, SerDe and the rest are shared objects,
        which nothing modifies after this point; only the location is per partition."""
        if not rows:
            return []
        shared = self._shared_descriptors(conn, ctx, rows)
        out = []
        base = Partition(dbName=ctx.db_name, tableName=ctx.name, catName=ctx.cat_name).__dict__
        new_sd, new_part = StorageDescriptor.__new__, Partition.__new__
        templates: dict[int, dict[str, Any]] = {}
        for values, create_time, last_access, version, location, own_sd, params in self._items(conn, rows, shared):
            if own_sd is None:
                tmpl = templates.get(version)
                if tmpl is None:
                    tmpl = templates[version] = shared(version).__dict__
                sd = new_sd(StorageDescriptor)
                sd.__dict__.update(tmpl)
                sd.location = location
            else:
                sd = own_sd
            part = new_part(Partition)
            part.__dict__ = {**base, "values": values, "createTime": create_time,
                             "lastAccessTime": last_access, "sd": sd, "parameters": params}
            out.append(part)
        return out

    def encode(self, conn: Connection, ctx: TableCtx, rows: Sequence[Row[Any]]) -> EncodedStructs:
        """What `build` answers, as Thrift bytes (store/hms/common/wire.py). The pieces of a row
        answered before come from the cache (its key is the whole row)."""
        if not rows:
            return EncodedStructs(0, b"")
        shared = self._shared_descriptors(conn, ctx, rows)
        encoder = PartitionEncoder(ctx.db_name, ctx.name, ctx.cat_name, shared)
        cache = self.pieces_cache
        keys = [tuple(r) for r in rows]  # plain tuples: Row compares in Python
        found = [cache.get(k) if r.sd_id is None else None for r, k in zip(rows, keys)]
        missing = [r for r, f in zip(rows, found) if f is None]
        if missing:
            made = iter([encoder.pieces(*item) for item in self._items(conn, missing, shared)])
            for i, r in enumerate(rows):
                if found[i] is None:
                    found[i] = pieces = next(made)
                    # own descriptors and stored values come from other tables: not keyed by the row
                    if r.sd_id is None and DEFAULT_PARTITION not in r.part_name:
                        cache.put(keys[i], pieces, len(r.part_name) + len(r.location or "") + len(r.params_json or ""))
        return encoder.join(found)  # type: ignore[arg-type]

    @staticmethod
    def _shared_descriptors(conn: Connection, ctx: TableCtx, rows: Sequence[Row[Any]]) -> _SharedDescriptors:
        versions = {r.schema_version for r in rows}
        if versions == {ctx.schema_version}:
            return _SharedDescriptors(ctx, {ctx.schema_version: (ctx.cols, ctx.keys)})
        return _SharedDescriptors(ctx, load_columns(conn, ctx.tbl_id, versions))

    def _items(self, conn: Connection, rows: Sequence[Row[Any]], shared: _SharedDescriptors) -> Iterator[
            tuple[list[str], int | None, int | None, int, str | None, StorageDescriptor | None, dict[str, str]]]:
        """(values, createTime, lastAccessTime, schema version, location, own descriptor or None,
        parameters) per row."""
        cols = shared.columns
        sd_rows = self._own_descriptors(conn, rows)
        stored = partition_wire.stored_values(conn, rows)
        all_params = params_of_many(r.params_json for r in rows)
        for r, params in zip(rows, all_params):
            values = partition_wire.values_of(r.part_name, stored.get(r.part_id))
            own = None if r.sd_id is None else \
                build_sd(sd_rows[r.sd_id], r.location, list(cols[r.schema_version][0]))
            yield values, r.create_time, r.last_access_time, r.schema_version, r.location, own, params

    @staticmethod
    def _own_descriptors(conn: Connection, rows: Sequence[Row[Any]]) -> dict[int, Row[Any]]:
        """The `sds` rows of the partitions that have a descriptor of their own."""
        sd_rows = {}
        ids = list({r.sd_id for r in rows if r.sd_id is not None})
        for i in range(0, len(ids), BATCH):
            for r in conn.execute(select(S.sds).where(S.sds.c.sd_id.in_(ids[i:i + BATCH]))):
                sd_rows[r.sd_id] = r
        return sd_rows
