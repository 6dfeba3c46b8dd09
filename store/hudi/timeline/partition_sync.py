"""HMS partitions of a Hudi table follow its commits (what Hudi's hive-sync does after a commit,
done here in the commit's own transaction): a partition path a commit wrote gets its HMS partition,
a dropped partition (DELETE_PARTITION replacecommit) loses it."""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, Row, select

from hudi_format.commit_metadata import CommitMetadata
from hudi_format.file_slice import full_path
from store.db import schema as S
from store.errors import InvalidObject
from store.hms.catalog import TableService
from store.hms.notification_log import events as EV
from store.hms.partitions import PartitionService, make_name
from store.hudi.tables import HudiTableRef
from thrift_idl.hive_metastore.ttypes import Partition, StorageDescriptor, Table

BATCH = 500


class PartitionSync:
    def __init__(self, tables: TableService, partitions: PartitionService):
        self.tables = tables
        self.partitions = partitions

    def ensure_partitions(self, conn: Connection, ref: HudiTableRef, paths: list[str]) -> None:
        """HMS partitions for the partition paths a commit wrote (so engines see them at once)."""
        if not paths or not ref.config.partition_fields:
            return
        table_sd = self.tables.get_table_in(conn, ref.db_name, ref.name).sd
        parts = []
        for p in paths:
            try:
                values = ref.config.values_of(p)
            except ValueError as exc:
                raise InvalidObject(str(exc)) from exc
            sd = StorageDescriptor(**{**table_sd.__dict__, "location": full_path(ref.base_path, p)})
            parts.append(Partition(values=values, dbName=ref.db_name, tableName=ref.name, sd=sd, parameters={}))
        self.partitions.add_partitions(ref.db_name, ref.name, parts, if_not_exists=True, conn=conn)

    def drop_partitions(self, conn: Connection, ref: HudiTableRef, paths: list[str]) -> None:
        """Remove the HMS partitions of these partition paths (those that exist)."""
        if not paths or not ref.config.partition_fields:
            return
        ctx = self.partitions.table_ctx(conn, ref.db_name, ref.name)
        names = [make_name(ctx.key_names, ref.config.values_of(p)) for p in paths]
        p = S.partitions
        rows: list[Row] = []
        for k in range(0, len(names), BATCH):
            rows.extend(conn.execute(select(p.c.part_id, p.c.sd_id, p.c.part_name).where(
                p.c.tbl_id == ref.tbl_id, p.c.part_name.in_(names[k:k + BATCH]))).all())
        if rows:
            self.partitions.delete_rows_in(conn, [r.part_id for r in rows], [r.sd_id for r in rows if r.sd_id])
            table = self.tables.get_table_in(conn, ref.db_name, ref.name)
            found = {r.part_name for r in rows}
            dropped = [ref.config.values_of(p) for p, n in zip(paths, names) if n in found]
            self.tables.notifications.record(conn, *EV.drop_partitions(table, dropped))

    def record_restore(self, conn: Connection, ref: HudiTableRef, paths: list[str]) -> None:
        """The notification events of a restore: an INSERT with `replace` and no files per partition
        whose files it changed (docs/notifications.md)."""
        if not paths:
            return
        table = self.tables.get_table_in(conn, ref.db_name, ref.name)
        by_path = self._partitions_by_path(conn, ref, paths)
        self.tables.notifications.record(conn, *EV.hudi_commit(table, [(by_path[p], []) for p in sorted(paths)],
                                                              replace=True))

    def record_commit(self, conn: Connection, ref: HudiTableRef, action: str, meta: CommitMetadata) -> None:
        """The notification events of a completed write: one INSERT per partition written, with the
        files written there (replace for a replacecommit); see notification_log.events.hudi_commit."""
        self.record_events(conn, self.commit_events(conn, ref, meta).build(action))

    def commit_events(self, conn: Connection, ref: HudiTableRef, meta: CommitMetadata) -> CommitEvents:
        """What `record_commit` reads (the table, the partitions written: they exist by now), for
        events built later without a statement."""
        paths = {s.partition_path or "" for s in meta.write_stats}
        if not paths:
            return CommitEvents(ref.base_path, meta, None, {})
        table = self.tables.get_table_in(conn, ref.db_name, ref.name)
        return CommitEvents(ref.base_path, meta, table, self._partitions_by_path(conn, ref, paths))

    def _partitions_by_path(self, conn: Connection, ref: HudiTableRef,
                            paths: Iterable[str]) -> dict[str, Partition | None]:
        """The HMS partition of each partition path (None: an unpartitioned table's "", or none)."""
        by_path: dict[str, Partition | None] = dict.fromkeys(paths)
        if ref.config.partition_fields:
            ctx = self.partitions.table_ctx(conn, ref.db_name, ref.name)
            names = {make_name(ctx.key_names, ref.config.values_of(p)): p for p in by_path if p}
            for part in self.partitions.get_partitions_by_names_in(conn, ctx, list(names)):
                by_path[names[make_name(ctx.key_names, part.values)]] = part
        return by_path

    def record_events(self, conn: Connection, events: list[EV.Event]) -> None:
        if events:
            self.tables.notifications.record(conn, *events)


class CommitEvents:
    """A completed write's notification events, from what `PartitionSync.commit_events` read."""

    def __init__(self, base_path: str, meta: CommitMetadata, table: Table | None,
                 by_path: dict[str, Partition | None]):
        self.base_path, self.meta, self.table, self.by_path = base_path, meta, table, by_path

    def build(self, action: str) -> list[EV.Event]:
        files: dict[str, list[str]] = {}
        base = full_path(self.base_path, "")  # full_path(base, path) is base + path
        for partition, path, _fid, _size, _prev in self.meta.write_stats:
            paths = files.get(partition or "")
            if paths is None:
                files[partition or ""] = [base + path]
            else:
                paths.append(base + path)
        if not files or self.table is None:
            return []
        written = [(self.by_path[p], sorted(f)) for p, f in sorted(files.items())]
        return EV.hudi_commit(self.table, written, replace=action == "replacecommit")
