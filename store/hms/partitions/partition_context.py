"""What a partition call knows about its table (`TableCtx`, read in one statement), and the checks
of partition values and names against the table's partition keys."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from sqlalchemy import Connection, Select, select

from store.db import schema as S
from store.db.dialect import json_rows
from store.db.driver_cursor import DriverStatement
from store.errors import MetaError, NoSuchObject, StoreError
from store.hms.common import SdView, columns_of, named_table, same_sd, split_db_name
from store.hms.partitions.partition_names import IncompleteName, values_from_name
from thrift_idl.hive_metastore.ttypes import FieldSchema, StorageDescriptor


@dataclass
class TableCtx:
    """What partition calls need to know about their table."""

    tbl_id: int
    cat_name: str
    db_name: str
    name: str
    tbl_type: str
    location: str | None
    sd_id: int
    sd: SdView  # the table's `sds` row
    schema_version: int
    cols: list[FieldSchema]  # data columns of the current schema
    keys: list[FieldSchema]  # partition keys
    parts_version: int = 0  # changes with any of its partition rows (store/db/parts_version.py)
    meta_version: int = 0  # changes with its row, columns, parameters (store/db/table_version.py)

    @property
    def key_names(self) -> list[str]:
        return [k.name for k in self.keys]

    @property
    def key_types(self) -> list[tuple[str, str]]:
        return [(k.name.lower(), k.type.lower()) for k in self.keys]


class TableKey(NamedTuple):
    """What kept answers of a table are found by."""

    tbl_id: int
    parts_version: int
    meta_version: int


class TableContexts:
    """Reads a table's TableCtx: its row, descriptor and current columns in one statement."""

    def __init__(self, backend: str):
        self.backend = backend
        self._query: Select[Any] | None = None  # built once
        self._key_query: Select[Any] | None = None
        self._key_driver: DriverStatement | None = None

    def key(self, conn: Connection, db_name: str, tbl_name: str) -> TableKey:
        """The table's id and versions alone (what kept lists and answers are found by), NoSuchObject
        when there is no such table: a statement without the descriptor and columns, on the
        driver's own cursor."""
        cat, db = split_db_name(db_name)
        if self._key_query is None:
            self._key_query = select(S.tbl.c.tbl_id, S.tbl.c.parts_version, S.tbl.c.meta_version).select_from(
                S.tbl.join(S.db, S.tbl.c.db_id == S.db.c.db_id)).where(*named_table())
        params = {"cat_name": cat, "db_name": db, "tbl_name": (tbl_name or "").lower()}
        if self._key_driver is None:
            self._key_driver = DriverStatement(self._key_query, conn)
        row = self._key_driver.first(conn, params)
        if row is None:
            raise NoSuchObject(f"{cat}.{db}.{(tbl_name or '').lower()} table not found")
        return TableKey(int(row[0]), int(row[1]), int(row[2]))

    def read(self, conn: Connection, db_name: str, tbl_name: str,
             missing: type[StoreError] = NoSuchObject) -> TableCtx:
        """The table's context; `missing` is raised when there is no such table."""
        cat, db = split_db_name(db_name)
        row = conn.execute(self._statement(), {"cat_name": cat, "db_name": db,
                                               "tbl_name": (tbl_name or "").lower()}).first()
        if row is None:
            raise missing(f"{cat}.{db}.{(tbl_name or '').lower()} table not found")
        cols, keys = columns_of(row.cols_json)
        return TableCtx(row.tbl_id, cat, row.db_name, row.name, row.tbl_type, row.location, row.sd_id,
                        SdView(row), row.schema_version, cols, keys, row.parts_version, row.meta_version)

    def _statement(self) -> Select[Any]:
        if self._query is None:
            self._query = self._build_statement()
        return self._query

    def _build_statement(self) -> Select[Any]:
        sc = S.schema
        cols = select(json_rows(self.backend, sc.c.is_partition_col, sc.c.position, sc.c.name,
                                sc.c.type, sc.c.comment)).where(
            sc.c.tbl_id == S.tbl.c.tbl_id, sc.c.version == S.tbl.c.schema_version).scalar_subquery()
        return select(
            S.tbl.c.tbl_id, S.tbl.c.name, S.tbl.c.tbl_type, S.tbl.c.location, S.tbl.c.sd_id,
            S.tbl.c.schema_version, S.tbl.c.parts_version, S.tbl.c.meta_version, S.db.c.name.label("db_name"),
            *[c.label("sd_" + c.name) for c in S.sds.c], cols.label("cols_json")).select_from(
            S.tbl.join(S.db, S.tbl.c.db_id == S.db.c.db_id).outerjoin(S.sds, S.tbl.c.sd_id == S.sds.c.sd_id)
        ).where(*named_table())


def check_values(ctx: TableCtx, values: Sequence[str] | None) -> list[str]:
    """The values of one partition: one per partition key."""
    checked = list(values or [])
    if len(checked) != len(ctx.keys):
        raise MetaError(
            f"Incorrect number of partition values: {checked} for keys {ctx.key_names}")
    return checked


def name_values(ctx: TableCtx, name: str) -> list[str]:
    """The key values a partition name gives (Hive's getPartValsFromName)."""
    try:
        return values_from_name(ctx.key_names, name)
    except IncompleteName as exc:
        raise NoSuchObject(str(exc)) from exc
    except ValueError as exc:
        raise MetaError(str(exc)) from exc


_NOT_SHARED = ("location", "cols")  # what a partition's descriptor may differ in and still share the table's


class SharesTableSd:
    """same_sd(table's descriptor, sd), answered again without a look when sd equals the previous
    descriptor asked about (but for location and columns): a client sends each new partition a
    copy of one descriptor."""

    def __init__(self, ctx: TableCtx):
        self.ctx = ctx
        self.last: tuple[dict[str, Any], bool] | None = None

    def __call__(self, sd: StorageDescriptor) -> bool:
        fields = {k: v for k, v in sd.__dict__.items() if k not in _NOT_SHARED}
        if self.last is not None and self.last[0] == fields:
            return self.last[1]
        same = same_sd(self.ctx.sd, sd)
        self.last = (fields, same)
        return same
