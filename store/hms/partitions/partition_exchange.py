"""exchange_partition(s): move partitions from one table to another of the same schema, as Hive's
HMSHandler.exchange_partitions does, in one transaction.

The partitions of the source table matching the (partial) specification are added to the
destination table, each at `<destination location>/<partition name>`, and dropped from the source
(without their data); the directory `<source location>/<specified keys>` moves to the same place
under the destination. Refused with MetaException (Hive's texts): a missing table, tables in
different catalogs, no matching partition, different columns or partition keys (names and types),
a partition the destination already has. Hudi tables' partitions follow their commits: refused.
The directory moves first (when the server may move it: docs/security.md, Storage boundaries); a
failed write moves it back. A partition whose files did not move (no such directory, a location
outside it, storage the server may not touch) keeps its location. The partitions keep their
parameters (Hive's store adds them as they are: no quick statistics are counted).
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import Connection, select

from store.db import schema as S
from store.errors import MetaError, NoSuchObject
from store.hms.common import split_db_name
from store.hms.partitions.partition_context import TableContexts, TableCtx
from store.hms.partitions.partition_names import make_name
from store.hms.partitions.partition_queries import PartitionQueries
from store.hms.partitions.partition_writes import PartitionWrites
from store.storage import warehouse
from thrift_idl.hive_metastore.ttypes import Partition


def _java_map(spec: Mapping[str, str]) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in spec.items()) + "}"


def _under(location: str | None, directory: str) -> bool:
    if not location:
        return False
    return location == directory or location.startswith(directory.rstrip("/") + "/")


class PartitionExchange:
    def __init__(self, contexts: TableContexts, queries: PartitionQueries, writes: PartitionWrites):
        self.contexts = contexts
        self.queries = queries
        self.writes = writes
        self.store = writes.store
        self.boundary = writes.tables.boundary

    def exchange(self, spec: Mapping[str, str] | None, src_db: str | None, src_tbl: str | None,
                 dst_db: str | None, dst_tbl: str | None) -> list[Partition]:
        if spec is None or not src_db or not src_tbl or not dst_db or not dst_tbl:
            raise MetaError("The DB and table name for the source and destination tables, and the partition "
                            "specs must not be null.")
        if split_db_name(src_db)[0] != split_db_name(dst_db)[0]:
            raise MetaError("You cannot move a partition across catalogs")
        return self.store.run_write(self._exchange, dict(spec), src_db, src_tbl, dst_db, dst_tbl)

    def _table(self, conn: Connection, db: str, tbl: str, which: str) -> TableCtx:
        try:
            ctx = self.contexts.read(conn, db, tbl)
        except NoSuchObject:
            cat, name = split_db_name(db)
            raise MetaError(f"The {which} table {cat}.{name}.{tbl} not found") from None
        if conn.execute(select(S.hudi_table.c.tbl_id).where(S.hudi_table.c.tbl_id == ctx.tbl_id)).first():
            raise MetaError(f"exchange_partition: {ctx.db_name}.{ctx.name} is a Hudi table: its partitions "
                            "follow its commits")
        return ctx

    def _exchange(self, conn: Connection, spec: dict[str, str], src_db: str, src_tbl: str, dst_db: str,
                  dst_tbl: str) -> list[Partition]:
        dst = self._table(conn, dst_db, dst_tbl, "destination")
        src = self._table(conn, src_db, src_tbl, "source")
        values = [spec.get(k.name) or "" for k in src.keys]
        present = [(k.name, v) for k, v in zip(src.keys, values) if v]
        rows = conn.execute(self.queries.select_rows(src, self.queries.partial_spec_where(src, values))).all()
        if not rows:
            raise MetaError(f"No partition is found with the values {_java_map(spec)} for the table {src_tbl}")
        same = [(c.name, c.type) for c in src.cols] == [(c.name, c.type) for c in dst.cols] and \
            [(c.name, c.type) for c in src.keys] == [(c.name, c.type) for c in dst.keys]
        if not same:
            raise MetaError("The tables have different schemas. Their partitions cannot be exchanged.")
        parts = self.queries.build(conn, src, rows)
        names = [make_name(dst.key_names, p.values) for p in parts]
        taken: set[str] = set()
        for i in range(0, len(names), 1000):
            taken.update(conn.execute(select(S.partitions.c.part_name).where(
                S.partitions.c.tbl_id == dst.tbl_id, S.partitions.c.part_name.in_(names[i:i + 1000]))).scalars())
        first = next((n for n in names if n in taken), None)  # Hive names the first in the source's order
        if first is not None:
            raise MetaError(f"The partition {first} already exists in the table {dst_tbl}")
        move = None
        dst_root = dst.location or ""
        if src.location and dst.location and present:
            prefix = make_name([k for k, _ in present], [v for _, v in present])
            src_dir, dst_dir = warehouse.join(src.location, prefix), warehouse.join(dst.location, prefix)
            if self.boundary.may(src_dir) and self.boundary.may(dst_dir):
                self.boundary.check_move(conn, src_dir, src.tbl_id, f"partitions {prefix} of {src.db_name}.{src.name}")
                try:
                    if warehouse.move_dir(src_dir, dst_dir):
                        move = (src_dir, dst_dir)
                except OSError as exc:
                    raise MetaError(f"Unable to move {src_dir} to {dst_dir}: {exc}") from exc
        try:
            for part, name in zip(parts, names):
                part.dbName, part.tableName, part.catName = dst.db_name, dst.name, dst.cat_name
                # a partition whose directory moved lives under the destination; one whose data did
                # not move (outside the moved directory, or storage the server may not touch) keeps
                # its location, so that no partition points at a directory without its files
                if part.sd is not None and move is not None and _under(part.sd.location, move[0]):
                    part.sd.location = warehouse.join(dst_root, name)
            self.writes.drop_in(conn, src_db, src_tbl, [r.part_name for r in rows])
            out = self.writes.add_in(conn, dst_db, dst_tbl, parts)
        except BaseException:
            if move is not None:
                warehouse.move_dir(move[1], move[0])
            raise
        return out
