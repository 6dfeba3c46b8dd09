"""HMS partition writes on Hudi tables (RFC-36): partitions appear only through commits.

Adds of partitions that all exist already are accepted as no-ops, so a legacy hive-sync job is
harmless; other adds, alters, renames and appends are refused; a drop becomes a replacecommit of
the partition's file groups followed by a clean that deletes its files.
"""

from __future__ import annotations

from typing import NoReturn

from sqlalchemy import select

from store.db import schema as S
from store.errors import InvalidOperation, MetaError, NoSuchObject
from store.hms.catalog import database_is
from store.hms.partitions import PartitionService, make_name, values_from_name
from store.hudi.snapshot.clean_service import CleanService
from store.hudi.tables import HudiTableRef
from thrift_idl.hive_metastore.ttypes import FieldSchema, Partition


class HudiPartitionRules:
    def __init__(self, partitions: PartitionService, cleaner: CleanService):
        self.partitions = partitions
        self.cleaner = cleaner
        self.timeline = cleaner.timeline

    def hudi_table(self, db: str, tbl: str) -> HudiTableRef | None:
        """The Hudi table db.tbl, or None for a plain HMS table (or a missing one)."""
        with self.partitions.store.read() as conn:
            row = conn.execute(select(S.hudi_table.c.tbl_id).select_from(
                S.hudi_table.join(S.tbl, S.tbl.c.tbl_id == S.hudi_table.c.tbl_id).join(
                    S.db, S.db.c.db_id == S.tbl.c.db_id)).where(
                database_is(db or ""), S.tbl.c.name == (tbl or "").lower())).first()
            if row is None:
                return None
            return self.timeline.table_ref(conn, db, tbl)

    @staticmethod
    def refuse(db: str, tbl: str, what: str) -> NoReturn:
        raise InvalidOperation(
            f"{what} on Hudi table {db}.{tbl} is not allowed: partitions of a Hudi table follow its "
            "commits (write through a Hudi commit; drop_partition is allowed and replaces the partition)")

    def add(self, db: str, tbl: str, parts: list[Partition], if_not_exists: bool) -> list[Partition] | None:
        """None for a plain table; for a Hudi table the existing partitions when every one of
        them exists (an idempotent add), else InvalidOperation."""
        if self.hudi_table(db, tbl) is None:
            return None
        keys = [k.name for k in self._keys(db, tbl)]
        names = [make_name(keys, list(p.values or [])) for p in parts]
        existing = self.partitions.get_partitions_by_names(db, tbl, names)
        if len(existing) != len(set(names)):
            self.refuse(db, tbl, "Adding partitions")
        return [] if if_not_exists else existing

    def _keys(self, db: str, tbl: str) -> list[FieldSchema]:
        with self.partitions.store.read() as conn:
            return self.partitions.table_ctx(conn, db, tbl).keys

    def guard(self, db: str, tbl: str, what: str) -> None:
        if self.hudi_table(db, tbl) is not None:
            self.refuse(db, tbl, what)

    def drop(self, db: str, tbl: str, names: list[str] | None = None, values_list: list[list[str]] | None = None,
             if_exists: bool = False) -> bool:
        """False for a plain table; drops the partitions of a Hudi table through its timeline."""
        ref = self.hudi_table(db, tbl)
        if ref is None:
            return False
        keys = [k.name for k in self._keys(db, tbl)]
        wanted = [make_name(keys, list(v or [])) for v in values_list or []]
        try:
            wanted += [make_name(keys, values_from_name(keys, n)) for n in names or []]
        except ValueError as exc:
            raise MetaError(str(exc)) from exc
        found = self.partitions.get_partitions_by_names(db, tbl, wanted)
        if len(found) != len(set(wanted)) and not if_exists:
            have = {make_name(keys, p.values) for p in found}
            missing = next(n for n in wanted if n not in have)
            raise NoSuchObject(f"Partition {missing} of {db}.{tbl} does not exist")
        base = ref.base_path.rstrip("/") + "/"
        paths = [(p.sd.location or "")[len(base):] if (p.sd.location or "").startswith(base)
                 else ref.config.path_of(p.values) for p in found]
        if paths:
            self.cleaner.drop_partitions(db, tbl, paths)
        return True
