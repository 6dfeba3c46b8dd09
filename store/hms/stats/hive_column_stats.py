"""Column statistics of tables and partitions (Hive's ColumnStatistics, kept as Thrift binary).

Columns an update (ANALYZE) gave no statistics may get derived ones from a `DerivedStatistics`
source (Hudi tables: store/hudi/table_statistics.py) for the default engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from sqlalchemy import Connection, delete, select
from thrift.protocol.TBinaryProtocol import TBinaryProtocolAcceleratedFactory
from thrift.TSerialization import deserialize, serialize

from store.db import schema as S
from store.db.database import Store
from store.db.dialect import BATCH
from store.errors import InvalidInput, InvalidObject, MetaError, NoSuchObject
from store.hms.common import stats_params
from store.hms.partitions import PartitionService, make_name, refresh_partition_wire, values_from_name
from thrift_idl.hive_metastore.ttypes import (
    ColumnStatistics,
    ColumnStatisticsData,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
)

DEFAULT_ENGINE = "hive"
_PROTO = TBinaryProtocolAcceleratedFactory()


def _enc(data: ColumnStatisticsData) -> bytes:
    return serialize(data, _PROTO)


def _dec(blob: bytes) -> ColumnStatisticsData:
    return deserialize(ColumnStatisticsData(), bytes(blob), _PROTO)


def _obj(row) -> ColumnStatisticsObj:
    return ColumnStatisticsObj(colName=row.column_name, colType=row.column_type, statsData=_dec(row.stats))


def _mark_accurate(conn: Connection, params_table, key_col: str, owner_id: int, columns: list[str],
                   batch: bool = False) -> None:
    """Record the columns in the owner's COLUMN_STATS_ACCURATE parameter, as Hive does. `batch`: Hive's
    batched update of partitions' statistics (set_aggr_stats_for), which starts a partition without the
    parameter from "TRUE": its basic statistics count as accurate too."""
    if not columns:
        return
    key = params_table.c[key_col]
    old = conn.execute(select(params_table.c.param_value).where(
        key == owner_id, params_table.c.param_key == stats_params.CSA)).first()
    params = ({stats_params.CSA: "TRUE"} if batch else {}) if old is None else {stats_params.CSA: old[0]}
    stats_params.set_column_stats_state(params, columns)
    if old is None:
        conn.execute(params_table.insert().values(
            **{key_col: owner_id, "param_key": stats_params.CSA, "param_value": params[stats_params.CSA]}))
    else:
        conn.execute(params_table.update().where(key == owner_id, params_table.c.param_key == stats_params.CSA)
                     .values(param_value=params[stats_params.CSA]))


class DerivedStatistics(Protocol):
    def table_columns(self, conn: Connection, db: str, tbl: str, columns: Sequence[str] | None,
                      have: set[str]) -> list[ColumnStatisticsObj]: ...

    def partition_columns(self, conn: Connection, db: str, tbl: str, part_names: Sequence[str],
                          columns: Sequence[str] | None,
                          have: dict[str, set[str]]) -> dict[str, list[ColumnStatisticsObj]]: ...


class StatisticsService:
    def __init__(self, store: Store, partitions: PartitionService, derived: DerivedStatistics | None = None):
        self.store = store
        self.partitions = partitions
        self.derived = derived

    def update(self, stats: ColumnStatistics, engine: str | None = None, batch: bool = False) -> bool:
        """`batch`: set_aggr_stats_for's update (_mark_accurate)."""
        desc = stats.statsDesc
        if desc is None or not desc.dbName or not desc.tableName:
            raise InvalidInput("Column statistics need a database and table name")
        engine = engine or getattr(stats, "engine", None) or DEFAULT_ENGINE

        def tx(conn: Connection):
            try:
                ctx = self.partitions.table_ctx(conn, desc.dbName, desc.tableName)
            except NoSuchObject as exc:
                raise NoSuchObject(f"Table {desc.dbName}.{desc.tableName} for which stats is gathered "
                                   f"doesn't exist: {exc.message}") from exc
            known = {c.name.lower(): c.type for c in ctx.cols}
            objs = stats.statsObj or []
            for o in objs:
                if (o.colName or "").lower() not in known:  # Hive's text and exception type
                    raise MetaError(f"Column {o.colName} doesn't exist in table {ctx.name} in database "
                                        f"{ctx.db_name}")
                if o.statsData is None:
                    raise InvalidObject(f"No statistics data for column {o.colName}")
            names = [o.colName.lower() for o in objs]
            if desc.isTblLevel or not desc.partName:
                t = S.tab_col_stats
                conn.execute(delete(t).where(t.c.tbl_id == ctx.tbl_id, t.c.engine == engine,
                                             t.c.column_name.in_(names)))
                if objs:
                    conn.execute(t.insert(), [
                        {"tbl_id": ctx.tbl_id, "column_name": o.colName.lower(), "engine": engine,
                         "column_type": o.colType, "stats": _enc(o.statsData), "last_analyzed": desc.lastAnalyzed}
                        for o in objs])
                _mark_accurate(conn, S.tbl_params, "tbl_id", ctx.tbl_id, names)
                return True
            try:
                name = make_name(ctx.key_names, values_from_name(ctx.key_names, desc.partName))
            except ValueError as exc:
                raise MetaError(f"Partition name is invalid. {exc}") from exc  # Hive: MetaError
            pid = conn.execute(select(S.partitions.c.part_id).where(
                S.partitions.c.tbl_id == ctx.tbl_id, S.partitions.c.part_name == name)).scalar()
            if pid is None:
                raise NoSuchObject(f"Partition {desc.partName} of {ctx.db_name}.{ctx.name} does not exist")
            t = S.part_col_stats
            conn.execute(delete(t).where(t.c.part_id == pid, t.c.engine == engine, t.c.column_name.in_(names)))
            if objs:
                conn.execute(t.insert(), [
                    {"part_id": pid, "tbl_id": ctx.tbl_id, "column_name": o.colName.lower(), "engine": engine,
                     "column_type": o.colType, "stats": _enc(o.statsData), "last_analyzed": desc.lastAnalyzed}
                    for o in objs])
            _mark_accurate(conn, S.partition_params, "part_id", pid, names, batch)
            refresh_partition_wire(conn, [pid])
            return True

        return self.store.run_write(tx)

    def table_stats(self, db: str, tbl: str, col_names: list[str] | None,
                    engine: str | None = None) -> tuple[ColumnStatisticsDesc, list[ColumnStatisticsObj]]:
        """(desc, [ColumnStatisticsObj]) for the named columns that have statistics."""
        with self.store.read() as conn:
            ctx = self.partitions.table_ctx(conn, db, tbl)
            t = S.tab_col_stats
            q = select(t).where(t.c.tbl_id == ctx.tbl_id, t.c.engine == (engine or DEFAULT_ENGINE))
            if col_names is not None:
                q = q.where(t.c.column_name.in_([c.lower() for c in col_names]))
            rows = conn.execute(q.order_by(t.c.column_name)).all()
            objs = [_obj(r) for r in rows]
            if self.derived is not None and (engine or DEFAULT_ENGINE) == DEFAULT_ENGINE:
                objs += self.derived.table_columns(conn, ctx.db_name, ctx.name, col_names,
                                                   {r.column_name for r in rows})
        last = max((r.last_analyzed or 0 for r in rows), default=0)
        desc = ColumnStatisticsDesc(isTblLevel=True, dbName=ctx.db_name, tableName=ctx.name,
                                    lastAnalyzed=last, catName=ctx.cat_name)
        return desc, objs

    def table_column_statistics(self, db: str, tbl: str, col_name: str) -> ColumnStatistics | None:
        """get_table_column_statistics: None when the column has no statistics (Hive answers no result)."""
        desc, objs = self.table_stats(db, tbl, [col_name])
        return ColumnStatistics(statsDesc=desc, statsObj=objs, engine=DEFAULT_ENGINE) if objs else None

    def partition_column_statistics(self, db: str, tbl: str, part_name: str, col_name: str) -> ColumnStatistics | None:
        """get_partition_column_statistics: None when there are none (Hive answers no result)."""
        objs = self.partition_stats(db, tbl, [part_name], [col_name]).get(part_name)
        if not objs:
            return None
        with self.store.read() as conn:
            ctx = self.partitions.table_ctx(conn, db, tbl)
            t, p = S.part_col_stats, S.partitions
            analyzed = conn.execute(select(t.c.last_analyzed).select_from(t.join(p, p.c.part_id == t.c.part_id)).where(
                p.c.tbl_id == ctx.tbl_id, p.c.part_name == part_name,
                t.c.column_name == col_name.lower())).scalars().all()
        desc = ColumnStatisticsDesc(isTblLevel=False, dbName=ctx.db_name, tableName=ctx.name, partName=part_name,
                                    catName=ctx.cat_name, lastAnalyzed=max((a or 0 for a in analyzed), default=0))
        return ColumnStatistics(statsDesc=desc, statsObj=objs, engine=DEFAULT_ENGINE)

    def partition_stats(self, db: str, tbl: str, part_names: list[str], col_names: list[str] | None,
                        engine: str | None = None) -> dict[str, list[ColumnStatisticsObj]]:
        with self.store.read() as conn:
            ctx = self.partitions.table_ctx(conn, db, tbl)
            canonical = {}
            for n in part_names or []:
                try:
                    canonical[make_name(ctx.key_names, values_from_name(ctx.key_names, n))] = n
                except ValueError:
                    continue
            t, p = S.part_col_stats, S.partitions
            out: dict[str, list] = {}
            names = list(canonical)
            for i in range(0, len(names), BATCH):
                q = select(p.c.part_name, t).select_from(t.join(p, p.c.part_id == t.c.part_id)).where(
                    p.c.tbl_id == ctx.tbl_id, p.c.part_name.in_(names[i:i + BATCH]),
                    t.c.engine == (engine or DEFAULT_ENGINE))
                if col_names is not None:
                    q = q.where(t.c.column_name.in_([c.lower() for c in col_names]))
                for r in conn.execute(q.order_by(p.c.part_name, t.c.column_name)):
                    out.setdefault(canonical[r.part_name], []).append(_obj(r))
            if self.derived is not None and (engine or DEFAULT_ENGINE) == DEFAULT_ENGINE:
                have = {n: {o.colName.lower() for o in objs} for n, objs in out.items()}
                derived = self.derived.partition_columns(conn, ctx.db_name, ctx.name, list(canonical.values()),
                                                         col_names, have)
                for n, objs in derived.items():
                    out.setdefault(n, []).extend(objs)
        return out

    def delete(self, db: str, tbl: str, part_name: str | None, col_name: str | None,
               engine: str | None = None) -> bool:
        def tx(conn: Connection):
            ctx = self.partitions.table_ctx(conn, db, tbl)
            if part_name is None:
                t = S.tab_col_stats
                cond = [t.c.tbl_id == ctx.tbl_id]
            else:
                try:
                    name = make_name(ctx.key_names, values_from_name(ctx.key_names, part_name))
                except ValueError as exc:
                    raise InvalidInput(str(exc)) from exc
                pid = conn.execute(select(S.partitions.c.part_id).where(
                    S.partitions.c.tbl_id == ctx.tbl_id, S.partitions.c.part_name == name)).scalar()
                if pid is None:
                    raise NoSuchObject(f"Partition {part_name} of {ctx.db_name}.{ctx.name} does not exist")
                t = S.part_col_stats
                cond = [t.c.part_id == pid]
            if engine:
                cond.append(t.c.engine == engine)
            if col_name:
                cond.append(t.c.column_name == col_name.lower())
            n = conn.execute(delete(t).where(*cond)).rowcount
            if n == 0 and col_name:
                raise NoSuchObject(f"Column stats doesn't exist for db={db} table={tbl} col={col_name}")
            return True

        return self.store.run_write(tx)
