"""Tables as rows: the one statement that reads whole tables (row, descriptor, parameters, columns),
the Table objects it gives, and the deletion of a table's rows."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Row, Select, bindparam, delete, select, tuple_
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport.TTransport import TMemoryBuffer

from store.db import schema as S
from store.db import table_version
from store.db.dialect import BATCH, as_text, in_list, json_rows, params_of
from store.db.driver_cursor import DriverStatement
from store.errors import NoSuchObject
from store.hms.common import (
    EncodedCache,
    SdView,
    build_sd,
    columns_of,
    encode_struct,
    is_insert_only,
    may_be_insert_only,
    named_table,
    split_db_name,
    wire_checking,
)
from thrift_idl.hive_metastore.ttypes import PrincipalType, Table


class VersionedAnswers:
    """get_table's answers by (tbl_id, meta_version), at most `budget` bytes (an estimate); when full
    it starts over. Thread-safe as dict operations are."""

    def __init__(self, budget: int):
        self.budget = budget
        self._entries: dict[tuple, tuple[bytes, bool]] = {}
        self._size = 0

    def get(self, key: tuple) -> tuple[bytes, bool] | None:
        return self._entries.get(key)

    def put(self, key: tuple, answer: tuple[bytes, bool]) -> None:
        size = 100 + len(answer[0])
        if self._size + size > self.budget:
            self._entries = {}
            self._size = 0
        self._entries[key] = answer
        self._size += size


class TableRows:
    def __init__(self, backend: str):
        self.backend = backend
        self._one_table: Select[Any] | None = None  # the one-table statement, built once
        self._key_query: Select[Any] | None = None  # the table's id and meta_version alone
        self._keys_queries: dict[int, Select[Any]] = {}  # those of n tables, by n (keys)
        self._drivers: dict[str, DriverStatement] = {}  # the two, on the driver's cursor (PostgreSQL)
        self._row_type: Any = None
        self._encoded = EncodedCache(16 << 20)  # by the whole row
        self._by_version = VersionedAnswers(16 << 20)  # by (tbl_id, meta_version)
        self._has_versions: bool | None = None

    def statement(self) -> Select[Any]:
        """One statement for whole tables: the row, its descriptor, and (aggregated as JSON) its
        parameters and the columns of its current schema version."""
        t, d, sd, tp, sc = S.tbl, S.db, S.sds, S.tbl_params, S.schema
        # as text: every value of a row is hashable (the key of TableRows.encoded's cache)
        params = select(as_text(self.backend, json_rows(self.backend, tp.c.param_key, tp.c.param_value))).where(
            tp.c.tbl_id == t.c.tbl_id).scalar_subquery()
        cols = select(as_text(self.backend, json_rows(self.backend, sc.c.is_partition_col, sc.c.position, sc.c.name,
                                                      sc.c.type, sc.c.comment))).where(
            sc.c.tbl_id == t.c.tbl_id, sc.c.version == t.c.schema_version).scalar_subquery()
        return select(t, d.c.cat_name, d.c.name.label("db_name"), *[c.label("sd_" + c.name) for c in sd.c],
                      params.label("params_json"), cols.label("cols_json")).select_from(
            t.join(d, t.c.db_id == d.c.db_id).outerjoin(sd, t.c.sd_id == sd.c.sd_id))

    def _one(self) -> Select[Any]:
        if self._one_table is None:
            self._one_table = self.statement().where(*named_table())
        return self._one_table

    def row(self, conn: Connection, db_name: str, name: str) -> Row[Any]:
        """The table's row of `statement`; NoSuchObject if there is no such table."""
        cat, db = split_db_name(db_name)
        row = conn.execute(self._one(), {"cat_name": cat, "db_name": db, "tbl_name": name.lower()}).first()
        if row is None:
            raise NoSuchObject(f"{cat}.{db}.{name.lower()} table not found")
        return row

    def encoded(self, conn: Connection, db_name: str, name: str) -> tuple[bytes, bool]:
        """The table as Thrift binary (the Table struct `build` makes, encoded), for get_table's
        answer, and whether the table is insert-only (hive_rules.is_insert_only, read off the same
        row). Encodings are kept per process keyed by the table's whole row (every column, its
        parameters and columns included): a table that changed in any way is a new key, so nothing
        is invalidated and nothing can be served stale. Where the database keeps `tbl.meta_version`
        (store/db/table_version.py: triggers change it with anything the answer is built from), a
        kept answer is found by the table's id and that value, read alone; only a miss reads the
        whole row. Keys are read on the driver's own cursor, and on PostgreSQL whole rows too
        (SQLAlchemy's work per call was half of get_table's time in the server)."""
        cat, db = split_db_name(db_name)
        params = {"cat_name": cat, "db_name": db, "tbl_name": name.lower()}
        versioned = self._versioned(conn)
        if versioned:
            key = self._first(conn, "key", params)
            if key is None:
                raise NoSuchObject(f"{cat}.{db}.{name.lower()} table not found")
            kept = self._by_version.get(key)
            if kept is not None:
                if wire_checking():
                    self._check(conn, params, key, kept)
                return kept
        values = self._first(conn, "one", params)
        if values is None:
            raise NoSuchObject(f"{cat}.{db}.{name.lower()} table not found")
        answer = self._answer(values)
        if versioned:
            fields = self._row_type._fields
            self._by_version.put((values[fields.index("tbl_id")], values[fields.index("meta_version")]), answer)
        return answer

    def kept(self, key: tuple) -> tuple[bytes, bool] | None:
        """The answer kept for the table's key (tbl_id, meta_version), if any."""
        return self._by_version.get(key)

    @property
    def versioned(self) -> bool | None:
        """Does the database keep `tbl.meta_version` (None: not known yet, before the first read)."""
        return self._has_versions

    def keys(self, conn: Connection, wanted: Sequence[tuple[str, str, str]]) -> dict[tuple, tuple[int, int]]:
        """{(cat, db, lower-case table): (tbl_id, meta_version)} of the tables found among `wanted`,
        in one statement."""
        params: dict[str, Any] = {}
        for i, (cat, db, name) in enumerate(wanted):
            params.update({f"c{i}": cat, f"d{i}": db, f"t{i}": name})
        statement = self._keys_queries.get(len(wanted))
        if statement is None:
            t, d = S.tbl, S.db
            statement = self._keys_queries[len(wanted)] = select(
                d.c.cat_name, d.c.name, t.c.name, t.c.tbl_id, t.c.meta_version).select_from(
                t.join(d, t.c.db_id == d.c.db_id)).where(tuple_(d.c.cat_name, d.c.name, t.c.name).in_(
                    [tuple_(bindparam(f"c{i}"), bindparam(f"d{i}"), bindparam(f"t{i}"))
                     for i in range(len(wanted))]))
        if self.backend == "postgresql":
            driver = self._drivers.get(f"keys{len(wanted)}")
            if driver is None:
                driver = self._drivers[f"keys{len(wanted)}"] = DriverStatement(statement, conn)
            rows = driver.all(conn, params, few=True)
        else:
            rows = [tuple(r) for r in conn.execute(statement, params)]
        return {(r[0], r[1], r[2]): (r[3], r[4]) for r in rows}

    def check_kept(self, conn: Connection, db_name: str, name: str, key: tuple, kept: tuple[bytes, bool]) -> None:
        """HMS_WIRE_CHECK: `_check` for an answer found by a key read apart."""
        cat, db = split_db_name(db_name)
        self._check(conn, {"cat_name": cat, "db_name": db, "tbl_name": name.lower()}, key, kept)

    def _answer(self, values: tuple) -> tuple[bytes, bool]:
        data = self._encoded.get(values)
        if data is None:
            data = encode_struct(self.build([self._row_type(*values)])[0])
            self._encoded.put(values, data)
        params_text = values[self._row_type._fields.index("params_json")]
        return data, may_be_insert_only(params_text) and is_insert_only(params_of(params_text))

    def _check(self, conn: Connection, params: dict[str, Any], key: tuple, kept: tuple[bytes, bool]) -> None:
        """HMS_WIRE_CHECK: an answer found by the table's version decodes to the Table built from its
        whole row (when no write changed the table between the two statements). Decoded, not byte
        for byte: the database aggregates the parameters in no set order, so two reads of one row
        may encode its map in two orders."""
        values = self._first(conn, "one", params)
        fields = self._row_type._fields
        if values is None or (values[fields.index("tbl_id")], values[fields.index("meta_version")]) != key:
            return
        answer = Table()
        answer.read(TBinaryProtocol(TMemoryBuffer(kept[0])))
        if answer != self.build([self._row_type(*values)])[0]:
            raise AssertionError(f"table_version: a stale answer of {params['db_name']}.{params['tbl_name']}")

    def _first(self, conn: Connection, which: str, params: dict[str, Any]) -> tuple | None:
        """The first row of the one-table statement (`one`) or of the table's key (`key`)."""
        if self._row_type is None:
            self._row_type = namedtuple("TableRow", self._one().selected_columns.keys())  # type: ignore[misc]
        statement = self._one() if which == "one" else self._key()
        if self.backend == "postgresql" or which == "key":  # (a key is two integers: no conversions)
            driver = self._drivers.get(which)
            if driver is None:
                driver = self._drivers[which] = DriverStatement(statement, conn)
            return driver.first(conn, params)
        row = conn.execute(statement, params).first()
        return None if row is None else tuple(row)

    def _key(self) -> Select[Any]:
        if self._key_query is None:
            q: Select[Any] = select(S.tbl.c.tbl_id, S.tbl.c.meta_version).select_from(
                S.tbl.join(S.db, S.tbl.c.db_id == S.db.c.db_id)).where(*named_table())
            self._key_query = q
        return self._key_query

    def _versioned(self, conn: Connection) -> bool:
        """Does the database keep `tbl.meta_version` (its triggers, checked once per process)?"""
        if self._has_versions is None:
            self._has_versions = table_version.installed(conn)
        return self._has_versions

    @staticmethod
    def build(rows: Sequence[Row[Any]]) -> list[Table]:
        """Table objects for rows of `statement`."""
        out = []
        for r in rows:
            data_cols, part_keys = columns_of(r.cols_json)
            sd_view = SdView(r)
            out.append(Table(
                tableName=r.name, dbName=r.db_name, owner=r.owner, createTime=r.create_time,
                lastAccessTime=r.last_access_time, retention=r.retention,
                sd=build_sd(sd_view, r.location, data_cols), partitionKeys=part_keys,
                parameters=params_of(r.params_json), viewOriginalText=r.view_original_text,
                viewExpandedText=r.view_expanded_text, tableType=r.tbl_type,
                temporary=bool(r.temporary), rewriteEnabled=bool(r.rewrite_enabled),
                catName=r.cat_name, id=r.tbl_id, writeId=0,  # not transactional
                ownerType=r.owner_type if r.owner_type is not None else PrincipalType.USER,
            ))
        return out


def partition_dirs_outside(conn: Connection, tbl_id: int, table_location: str | None) -> list[str]:
    """Locations of the table's partitions that are not under its own directory."""
    prefix = (table_location or "").rstrip("/") + "/"
    p = S.partitions
    q = select(p.c.location).where(p.c.tbl_id == tbl_id, p.c.location.is_not(None))
    if table_location:
        q = q.where(~p.c.location.startswith(prefix, autoescape=True))
    return [r[0] for r in conn.execute(q)]


def delete_table_rows(conn: Connection, tbl_id: int) -> None:
    """Delete a table with its partitions, parameters, columns, statistics and descriptors."""
    p = S.partitions
    rows = conn.execute(select(p.c.part_id, p.c.sd_id).where(p.c.tbl_id == tbl_id)).all()
    sd_ids = [r.sd_id for r in rows if r.sd_id is not None]
    part_ids = [r.part_id for r in rows]
    conn.execute(delete(S.part_col_stats).where(S.part_col_stats.c.tbl_id == tbl_id))
    conn.execute(delete(S.partition_key_val).where(S.partition_key_val.c.tbl_id == tbl_id))
    # by the ids read (index lookups): `IN (SELECT ...)` makes PostgreSQL, without statistics of a
    # freshly filled table, scan the partitions once per parameter row (10,000 partitions: minutes)
    pp = S.partition_params
    for i in range(0, len(part_ids), BATCH):
        conn.execute(delete(pp).where(in_list(conn.dialect.name, pp.c.part_id, part_ids[i:i + BATCH])))
    conn.execute(delete(p).where(p.c.tbl_id == tbl_id))
    tsd = conn.execute(select(S.tbl.c.sd_id).where(S.tbl.c.tbl_id == tbl_id)).scalar()
    conn.execute(delete(S.tab_col_stats).where(S.tab_col_stats.c.tbl_id == tbl_id))
    conn.execute(delete(S.tbl_params).where(S.tbl_params.c.tbl_id == tbl_id))
    conn.execute(delete(S.schema).where(S.schema.c.tbl_id == tbl_id))
    conn.execute(delete(S.record_index).where(S.record_index.c.tbl_id == tbl_id))  # no foreign key (schema.py)
    conn.execute(delete(S.files).where(S.files.c.tbl_id == tbl_id))  # no foreign key either
    conn.execute(delete(S.record_index_deletes).where(S.record_index_deletes.c.tbl_id == tbl_id))
    conn.execute(delete(S.tbl).where(S.tbl.c.tbl_id == tbl_id))
    sd_ids.append(tsd)
    for i in range(0, len(sd_ids), BATCH):
        conn.execute(delete(S.sds).where(S.sds.c.sd_id.in_([s for s in sd_ids[i:i + BATCH] if s])))
