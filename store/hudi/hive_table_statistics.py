"""Hive statistics of a Hudi table's latest snapshot, kept with its commits (no ANALYZE needed).

Each commit, clean and rollback recomputes, for the partitions it touches, the basic statistics of
their latest file slices (column_stats.refresh_partitions -> `snapshot_stats`) and publishes them
in the same transaction as Hive keeps them: `numFiles`, `totalSize`, `numRows`, `rawDataSize` in
the parameters of those partitions and of the table, plus Spark's statistics properties on the
table (`spark.sql.statistics.*`, read by Spark's optimizer); see `_table_level` for the partitioned
tables whose table keeps none. `numRows`/`rawDataSize` are left out
where they are unknown (log files, files without statistics).

Column statistics calls answer, for the columns an ANALYZE gave none, statistics derived from the
RFC-27 partition aggregates: min, max and null count of numeric, decimal, date and timestamp
columns (booleans when every value is the same), only where every latest slice has statistics.
Distinct counts are not computed: `numDVs`, a required field of the wire contract, is 0 and no
bit vector is sent. Strings and binary get none (their statistics need lengths nobody kept).
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, delete, func, or_, select

from store.db import schema as S
from store.db.bulk import insert_rows
from store.db.dialect import BATCH
from store.errors import NoSuchObject
from store.hms.catalog import TableService
from store.hms.common import check_rows, stats_params
from store.hms.partitions import PartitionService, make_name, refresh_partition_wire, values_from_name
from store.hudi.column_stats import base_type, decode_number
from store.hudi.tables import HudiTableRef, HudiTables
from thrift_idl.hive_metastore.ttypes import (
    BooleanColumnStatsData,
    ColumnStatisticsData,
    ColumnStatisticsObj,
    Date,
    DateColumnStatsData,
    Decimal,
    DecimalColumnStatsData,
    DoubleColumnStatsData,
    LongColumnStatsData,
    Timestamp,
    TimestampColumnStatsData,
)

BASIC_KEYS = ("numFiles", "totalSize", "numRows", "rawDataSize")
SPARK_PREFIX = "spark.sql.statistics."
_INTEGERS = ("tinyint", "smallint", "int", "integer", "bigint")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


class HiveTableStatistics:
    def __init__(self, hudi_tables: HudiTables, tables: TableService, partitions: PartitionService):
        self.hudi_tables = hudi_tables
        self.tables = tables
        self.partitions = partitions

    # --- kept with each commit --------------------------------------------------------------------

    def publish(self, conn: Connection, ref: HudiTableRef, partitions: Sequence[str]) -> None:
        """Basic statistics of the touched partitions' HMS partitions and of the table (after
        refresh_partitions recomputed them, in the same transaction)."""
        ss = S.snapshot_stats
        if ref.config.partition_fields and partitions:
            ctx = self.partitions.table_ctx(conn, ref.db_name, ref.name)
            names = {make_name(ctx.key_names, ref.config.values_of(p)): p for p in set(partitions) if p}
            keys = list(names)
            for i in range(0, len(keys), BATCH):
                chunk = keys[i:i + BATCH]
                p = S.partitions
                ids = {r.part_name: r.part_id for r in conn.execute(select(p.c.part_id, p.c.part_name).where(
                    p.c.tbl_id == ref.tbl_id, p.c.part_name.in_(chunk)))}
                paths = [names[n] for n in ids]
                stats = {r.partition_path: r for r in conn.execute(select(ss).where(
                    ss.c.tbl_id == ref.tbl_id, ss.c.partition_path.in_(paths)))} if paths else {}
                by_part: dict[int, dict[str, str]] = {}
                for name, pid in ids.items():
                    row = stats.get(names[name])
                    by_part[pid] = (_basic(row.num_files, row.total_size, row.num_rows, row.raw_data_size)
                                   if row is not None else _basic(0, 0, 0, 0))
                _replace_params_many(conn, S.partition_params, "part_id", by_part, BASIC_KEYS + (stats_params.CSA,))
                refresh_partition_wire(conn, list(by_part))
        table = self.tables.get_table_in(conn, ref.db_name, ref.name)
        if not _table_level(ref, table.parameters or {}):
            _replace_params(conn, S.tbl_params, "tbl_id", ref.tbl_id, {}, BASIC_KEYS + (stats_params.CSA,),
                            prefix=SPARK_PREFIX)
            return
        totals = conn.execute(select(
            func.count(), func.sum(ss.c.num_files), func.sum(ss.c.total_size), func.count(ss.c.num_rows),
            func.sum(ss.c.num_rows), func.count(ss.c.raw_data_size), func.sum(ss.c.raw_data_size)).where(
            ss.c.tbl_id == ref.tbl_id)).one()
        n, files, size, n_rows, rows, n_raw, raw = totals
        params = _basic(int(files or 0), int(size or 0), int(rows or 0) if n_rows == n else None,
                        int(raw or 0) if n_raw == n else None)
        params.update(self._spark_properties(conn, ref, table, int(size or 0), params.get("numRows")))
        _replace_params(conn, S.tbl_params, "tbl_id", ref.tbl_id, params, BASIC_KEYS + (stats_params.CSA,),
                        prefix=SPARK_PREFIX)

    def _spark_properties(self, conn: Connection, ref: HudiTableRef, table, size: int,
                          rows: str | None) -> dict[str, str]:
        out = {SPARK_PREFIX + "totalSize": str(size)}
        if rows is not None:
            out[SPARK_PREFIX + "numRows"] = rows
        types = {c.name.lower(): c.type for c in table.sd.cols or []}
        for col, agg in _table_aggregates(conn, ref.tbl_id, list(types)).items():
            lo, hi = (_value(types[col], k) for k in (agg["min"], agg["max"]))
            prefix = f"{SPARK_PREFIX}colStats.{col}."
            out[prefix + "version"] = "2"
            out[prefix + "nullCount"] = str(agg["nulls"])
            if lo is not None and hi is not None and _spark_bounds(types[col]):
                out[prefix + "min"], out[prefix + "max"] = _spark_text(types[col], lo), _spark_text(types[col], hi)
        return out

    # --- answered by the column statistics calls ------------------------------------------------

    def table_columns(self, conn: Connection, db: str, tbl: str, columns: Sequence[str] | None,
                      have: set[str]) -> list[ColumnStatisticsObj]:
        """Derived statistics of a Hudi table's columns (not of `have`, the ones ANALYZE gave)."""
        found = self._types(conn, db, tbl, columns, have)
        if found is None:
            return []
        ref, types = found
        out = []
        for col, agg in sorted(_table_aggregates(conn, ref.tbl_id, list(types)).items()):
            obj = _stats_obj(col, types[col], agg)
            if obj is not None:
                out.append(obj)
        return out

    def partition_columns(self, conn: Connection, db: str, tbl: str, part_names: Sequence[str],
                          columns: Sequence[str] | None,
                          have: dict[str, set[str]]) -> dict[str, list[ColumnStatisticsObj]]:
        """part name -> derived statistics of its columns (not of have[part name])."""
        found = self._types(conn, db, tbl, columns, set())
        if found is None or not found[0].config.partition_fields:
            return {}
        ref, types = found
        ctx = self.partitions.table_ctx(conn, db, tbl)
        paths: dict[str, str] = {}
        for name in part_names:
            try:
                paths[ref.config.path_of(values_from_name(ctx.key_names, name))] = name
            except ValueError:
                continue
        pcs = S.partition_column_stats
        out: dict[str, list[ColumnStatisticsObj]] = {}
        keys = list(paths)
        for i in range(0, len(keys), BATCH):
            q = select(pcs).where(pcs.c.tbl_id == ref.tbl_id, pcs.c.partition_path.in_(keys[i:i + BATCH]),
                                  pcs.c.column_name.in_(list(types)), pcs.c.files_without_stats == 0,
                                  _base_files_only(pcs))
            for r in conn.execute(q.order_by(pcs.c.partition_path, pcs.c.column_name)):
                name = paths[r.partition_path]
                if r.column_name in have.get(name, set()):
                    continue
                agg = {"min": r.min_key, "max": r.max_key, "nulls": r.null_count, "values": r.value_count}
                obj = _stats_obj(r.column_name, types[r.column_name], agg) if r.null_count is not None else None
                if obj is not None:
                    out.setdefault(name, []).append(obj)
        return out

    def _types(self, conn: Connection, db: str, tbl: str, columns: Sequence[str] | None,
               have: set[str]) -> tuple[HudiTableRef, dict[str, str]] | None:
        try:
            ref = self.hudi_tables.table_ref(conn, db, tbl)
        except NoSuchObject:
            return None
        table = self.tables.get_table_in(conn, ref.db_name, ref.name)
        wanted = None if columns is None else {c.lower() for c in columns}
        types = {c.name.lower(): c.type for c in table.sd.cols or []
                 if (wanted is None or c.name.lower() in wanted) and c.name.lower() not in have}
        return ref, types


def _table_aggregates(conn: Connection, tbl_id: int, columns: list[str]) -> dict[str, dict[str, Any]]:
    """column -> {min, max, nulls, values} over every partition, for the columns whose statistics
    cover every latest slice of the table."""
    if not columns:
        return {}
    pcs, ss = S.partition_column_stats, S.snapshot_stats
    parts = conn.execute(select(func.count()).where(ss.c.tbl_id == tbl_id)).scalar() or 0
    if not parts:
        return {}
    backend = conn.dialect.name
    q = select(pcs.c.column_name, func.count(), func.sum(pcs.c.files_without_stats), func.count(pcs.c.null_count),
               func.sum(pcs.c.null_count), func.sum(pcs.c.value_count),
               _bytes_agg(backend, func.min, pcs.c.min_key), _bytes_agg(backend, func.max, pcs.c.max_key)).where(
        pcs.c.tbl_id == tbl_id, pcs.c.column_name.in_(columns), _base_files_only(pcs)).group_by(pcs.c.column_name)
    out = {}
    for col, n, missing, n_nulls, nulls, values, lo, hi in conn.execute(q):
        if n != parts or (missing or 0) > 0 or n_nulls != n:
            continue
        out[col] = {"min": _bytes_back(backend, lo), "max": _bytes_back(backend, hi), "nulls": int(nulls or 0),
                    "values": int(values or 0)}
    return out


def _base_files_only(pcs):
    """The partition of a partition_column_stats row has no latest slice with log files: the
    statistics of slices with log files bound their rows (the files' union, deleted and updated
    records counted) and are not Hive's exact counts."""
    ss = S.snapshot_stats
    return select(ss.c.partition_path).where(ss.c.tbl_id == pcs.c.tbl_id, ss.c.partition_path == pcs.c.partition_path,
                                             ss.c.num_files == ss.c.base_files).exists()


def _bytes_agg(backend: str, agg, col):
    """min/max (`agg`) of a bytes column; on PostgreSQL (no min(bytea)) of its hex text, in byte order."""
    return agg(func.encode(col, "hex").collate("C")) if backend == "postgresql" else agg(col)


def _bytes_back(backend: str, value) -> bytes | None:
    if value is None:
        return None
    return bytes.fromhex(value) if backend == "postgresql" else bytes(value)


def _replace_params(conn: Connection, table, key_col: str, owner_id: int, params: dict[str, str],
                    keys: Sequence[str], prefix: str | None = None) -> None:
    _replace_params_many(conn, table, key_col, {owner_id: params}, keys, prefix)


def _replace_params_many(conn: Connection, table, key_col: str, params: dict[int, dict[str, str]],
                         keys: Sequence[str], prefix: str | None = None) -> None:
    """Owners' parameters `keys` (and those starting with `prefix`) replaced by `params`: one delete
    and one insert for all of them."""
    if not params:
        return
    cond = [table.c.param_key.in_(list(keys))]
    if prefix:
        cond.append(table.c.param_key.like(prefix + "%"))
    conn.execute(delete(table).where(table.c[key_col].in_(list(params)), or_(*cond)))
    # the driver's bulk path (store/db/bulk.py): keys are this module's, values its numbers and texts
    insert_rows(conn, table, (key_col, "param_key", "param_value"),
                [(owner, k, v) for owner, p in params.items() for k, v in p.items()], check_rows,
                pg_types=("int8", "text", "text"))


def _table_level(ref: HudiTableRef, params: dict[str, str]) -> bool:
    """Whether the table itself carries statistics: unpartitioned tables and tables Spark loads
    through Hudi's data source do. A partitioned table registered as a plain Hive table (hive-sync's
    sync_as_datasource=false, for engines without the Hudi bundle) keeps them on its partitions only,
    as the Hive Metastore does: a Spark without the bundle rewrites a table that has statistics after
    ALTER TABLE ... DROP PARTITION, which needs Hudi's input format class it does not have."""
    return not ref.config.partition_fields or \
        (params.get("spark.sql.sources.provider") or "").lower() == "hudi"


def _basic(files: int, size: int, rows: int | None, raw: int | None) -> dict[str, str]:
    out = {"numFiles": str(files), "totalSize": str(size)}
    if rows is not None and raw is not None:
        out.update(numRows=str(rows), rawDataSize=str(raw))
        out[stats_params.CSA] = stats_params.dump_csa(True, {})
    return out


def _value(hive_type: str, key: bytes | None) -> decimal.Decimal | None:
    """A bound back as a number (dates as days, timestamps as microseconds); None when unknown."""
    if key is None or base_type(hive_type) not in _INTEGERS + ("float", "double", "decimal", "date", "timestamp",
                                                              "boolean"):
        return None
    value = decode_number(bytes(key))
    return None if value is None or not value.is_finite() else value


def _spark_bounds(hive_type: str) -> bool:
    return base_type(hive_type) in _INTEGERS + ("float", "double", "decimal", "date", "timestamp", "boolean")


def _spark_text(hive_type: str, value: decimal.Decimal) -> str:
    """A bound as Spark writes it in its column statistics properties."""
    t = base_type(hive_type)
    if t in _INTEGERS:
        return str(int(value))
    if t in ("float", "double"):
        return repr(float(value))
    if t == "date":
        return (dt.date(1970, 1, 1) + dt.timedelta(days=int(value))).isoformat()
    if t == "timestamp":
        ts = _EPOCH + dt.timedelta(microseconds=int(value))
        return ts.strftime("%Y-%m-%d %H:%M:%S.%f")
    if t == "boolean":
        return "true" if value else "false"
    return str(value)


def _stats_obj(col: str, hive_type: str, agg: dict[str, Any]) -> ColumnStatisticsObj | None:
    t = base_type(hive_type)
    lo, hi = _value(hive_type, agg["min"]), _value(hive_type, agg["max"])
    nulls = int(agg["nulls"])
    data: ColumnStatisticsData | None = None
    if t in _INTEGERS:
        data = ColumnStatisticsData(longStats=LongColumnStatsData(
            lowValue=None if lo is None else int(lo), highValue=None if hi is None else int(hi), numNulls=nulls,
            numDVs=0))
    elif t in ("float", "double"):
        data = ColumnStatisticsData(doubleStats=DoubleColumnStatsData(
            lowValue=None if lo is None else float(lo), highValue=None if hi is None else float(hi), numNulls=nulls,
            numDVs=0))
    elif t == "decimal":
        data = ColumnStatisticsData(decimalStats=DecimalColumnStatsData(
            lowValue=_thrift_decimal(lo), highValue=_thrift_decimal(hi), numNulls=nulls, numDVs=0))
    elif t == "date":
        data = ColumnStatisticsData(dateStats=DateColumnStatsData(
            lowValue=None if lo is None else Date(int(lo)), highValue=None if hi is None else Date(int(hi)),
            numNulls=nulls, numDVs=0))
    elif t == "timestamp":  # seconds: the low bound rounded down, the high one up
        data = ColumnStatisticsData(timestampStats=TimestampColumnStatsData(
            lowValue=None if lo is None else Timestamp(int(lo // 1_000_000)),
            highValue=None if hi is None else Timestamp(-int(-hi // 1_000_000)), numNulls=nulls, numDVs=0))
    elif t == "boolean" and lo is not None and lo == hi:
        non_null = int(agg["values"]) - nulls
        data = ColumnStatisticsData(booleanStats=BooleanColumnStatsData(
            numTrues=non_null if lo else 0, numFalses=0 if lo else non_null, numNulls=nulls))
    if data is None:
        return None
    return ColumnStatisticsObj(colName=col, colType=hive_type, statsData=data)


def _thrift_decimal(value: decimal.Decimal | None) -> Decimal | None:
    if value is None:
        return None
    sign, digits, exp = value.normalize().as_tuple()
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    scale = -int(exp)
    if scale < 0:
        unscaled, scale = unscaled * 10 ** -scale, 0
    return Decimal(scale=scale, unscaled=unscaled.to_bytes((unscaled.bit_length() + 8) // 8 or 1, "big", signed=True))
