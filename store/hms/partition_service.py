"""RFC-36 partition service: partitions of a table, their key values (`partition_key_val`) and pruning.

Every read selects partitions with one WHERE clause and fetches their parameters with the same clause
as a subquery, so a call costs what its answer costs, never a scan of the table's partitions in Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy import Connection, and_, bindparam, delete, func, select, update

from store.db import schema as S
from store.db.database import Store, now_s
from store.db.dialect import as_text, in_list, json_rows, params_of_many
from store.errors import (
    AlreadyExists,
    InvalidObject,
    InvalidOperation,
    MetaError,
    NoSuchObject,
)
from store.hms import stats_params
from store.hms.descriptors import (
    build_sd,
    col_tuples,
    columns_of,
    insert_sd,
    load_columns,
    same_sd,
    sd_row,
    version_for_columns,
)
from store.hms.partition_names import (
    DEFAULT_PARTITION,
    IncompleteName,
    make_name,
    split_name,
    values_from_name,
)
from store.hms.table_service import (
    CATALOG,
    DDL_TIME,
    MANAGED,
    TableService,
    _params,
    _SdView,
)
from store.storage import warehouse
from thrift_idl.hive_metastore.ttypes import Partition, StorageDescriptor

_INT = re.compile(r"^-?\d{1,18}$")
BATCH = 500


@dataclass
class TableCtx:
    """What partition calls need to know about their table."""

    tbl_id: int
    db_name: str
    name: str
    tbl_type: str
    location: str | None
    sd_id: int
    sd: object  # the table's `sds` row
    schema_version: int
    cols: list  # FieldSchema data columns of the current schema
    keys: list  # FieldSchema partition keys

    @property
    def key_names(self) -> list[str]:
        return [k.name for k in self.keys]

    @property
    def key_types(self) -> list[tuple[str, str]]:
        return [(k.name.lower(), k.type.lower()) for k in self.keys]


def _num(value: str) -> int | None:
    return int(value) if value and _INT.match(value) else None


class PartitionService:
    def __init__(self, store: Store, tables: TableService):
        self.store = store
        self.tables = tables
        self._ctx_query = None  # table_ctx's statement, built once
        # filters start from the key-value index (compile_filter's driver); MySQL keeps the plain
        # form: it runs IN (... UNION ...) as a subquery per row
        self._driven = store.backend in ("sqlite", "postgresql")

    # --- helpers --------------------------------------------------------------------------------

    def table_ctx(self, conn: Connection, db_name: str, tbl_name: str, missing=NoSuchObject) -> TableCtx:
        if self._ctx_query is None:
            sc = S.schema
            cols = select(json_rows(self.store.backend, sc.c.is_partition_col, sc.c.position, sc.c.name,
                                    sc.c.type, sc.c.comment)).where(
                sc.c.tbl_id == S.tbl.c.tbl_id, sc.c.version == S.tbl.c.schema_version).scalar_subquery()
            self._ctx_query = select(
                S.tbl.c.tbl_id, S.tbl.c.name, S.tbl.c.tbl_type, S.tbl.c.location, S.tbl.c.sd_id,
                S.tbl.c.schema_version, S.db.c.name.label("db_name"),
                *[c.label("sd_" + c.name) for c in S.sds.c], cols.label("cols_json")).select_from(
                S.tbl.join(S.db, S.tbl.c.db_id == S.db.c.db_id).outerjoin(S.sds, S.tbl.c.sd_id == S.sds.c.sd_id)
            ).where(S.db.c.name == bindparam("db_name"), S.tbl.c.name == bindparam("tbl_name"))
        row = conn.execute(self._ctx_query, {"db_name": (db_name or "").lower(),
                                             "tbl_name": (tbl_name or "").lower()}).first()
        if row is None:
            raise missing(f"{(db_name or '').lower()}.{(tbl_name or '').lower()} table not found")
        cols, keys = columns_of(row.cols_json)
        return TableCtx(row.tbl_id, row.db_name, row.name, row.tbl_type, row.location, row.sd_id,
                        _SdView(row), row.schema_version, cols, keys)

    def _check_values(self, ctx: TableCtx, values) -> list[str]:
        values = list(values or [])
        if len(values) != len(ctx.keys):
            raise MetaError(
                f"Incorrect number of partition values: {values} for keys {ctx.key_names}")
        return values

    def _build(self, conn: Connection, ctx: TableCtx, rows) -> list[Partition]:
        """Partition objects for `rows` of `_select` (parameters come inside the rows, as JSON).

        Partitions without a descriptor of their own get a shallow copy of one descriptor built
        for the table (per schema version): their columns, SerDe and the rest are shared objects,
        which nothing modifies after this point; only the location is per partition."""
        if not rows:
            return []
        versions = {r.schema_version for r in rows}
        if versions == {ctx.schema_version}:
            cols = {ctx.schema_version: (ctx.cols, ctx.keys)}
        else:
            cols = load_columns(conn, ctx.tbl_id, versions)
        templates = {}
        own_sds = {r.sd_id for r in rows if r.sd_id is not None}
        sd_rows = {}
        if own_sds:
            ids = list(own_sds)
            for i in range(0, len(ids), BATCH):
                for r in conn.execute(select(S.sds).where(S.sds.c.sd_id.in_(ids[i:i + BATCH]))):
                    sd_rows[r.sd_id] = r
        # `__HIVE_DEFAULT_PARTITION__` in a name stands for an empty value or for that literal
        # value: the stored key values tell which (the only names that do not give the values back)
        stored: dict[int, dict[int, str]] = {}
        ambiguous = [r.part_id for r in rows if DEFAULT_PARTITION in r.part_name]
        kv = S.partition_key_val
        for i in range(0, len(ambiguous), BATCH):
            for r in conn.execute(select(kv.c.part_id, kv.c.key_idx, kv.c.part_key_val).where(
                    kv.c.part_id.in_(ambiguous[i:i + BATCH]))):
                stored.setdefault(r.part_id, {})[r.key_idx] = r.part_key_val
        out = []
        base = Partition(dbName=ctx.db_name, tableName=ctx.name, catName=CATALOG).__dict__
        new_sd, new_part = StorageDescriptor.__new__, Partition.__new__
        all_params = params_of_many(r.params_json for r in rows)
        for r, params in zip(rows, all_params):
            name = r.part_name
            if "%" in name:
                values = [v for _, v in split_name(name)]
            else:  # stored names are well formed: nothing to unescape
                values = [piece.partition("=")[2] for piece in name.split("/")]
            if r.part_id in stored:
                values = [stored[r.part_id].get(i, v) for i, v in enumerate(values)]
            if r.sd_id is None:
                tmpl = templates.get(r.schema_version)
                if tmpl is None:
                    tmpl = templates[r.schema_version] = build_sd(ctx.sd, None, cols[r.schema_version][0]).__dict__
                sd = new_sd(StorageDescriptor)
                sd.__dict__.update(tmpl)
                sd.location = r.location
            else:
                sd = build_sd(sd_rows[r.sd_id], r.location, list(cols[r.schema_version][0]))
            part = new_part(Partition)
            part.__dict__ = {**base, "values": values, "createTime": r.create_time,
                             "lastAccessTime": r.last_access_time, "sd": sd,
                             "parameters": params}
            out.append(part)
        return out

    def _in_table(self, ctx: TableCtx, filtered: bool = False):
        """The partitions of ctx's table. Under a driven filter (see compile_filter) the driver
        already stays within the table: `tbl_id + 0` keeps the planner from walking the table's
        index instead of starting from the driver."""
        p = S.partitions
        if filtered and self._driven:
            return (p.c.tbl_id + 0) == ctx.tbl_id
        return p.c.tbl_id == ctx.tbl_id

    def _select(self, ctx: TableCtx, where=None, max_parts: int | None = None, filtered: bool = False):
        p, pp = S.partitions, S.partition_params
        cond = self._in_table(ctx, filtered and where is not None)
        if where is not None:
            cond = and_(cond, where)
        params = select(as_text(self.store.backend, json_rows(self.store.backend, pp.c.param_key,
                                                               pp.c.param_value))).where(
            pp.c.part_id == p.c.part_id).scalar_subquery()
        q = select(p, params.label("params_json")).where(cond).order_by(p.c.part_name)
        if max_parts is not None and max_parts >= 0:
            q = q.limit(max_parts)
        return q, cond

    def _ps_where(self, ctx: TableCtx, part_vals):
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

    def _filter_where(self, ctx: TableCtx, filter_text: str | None):
        if not filter_text or not filter_text.strip():
            return None
        from store.hms.partition_filter import FilterError, compile_filter

        try:
            return compile_filter(filter_text, ctx.tbl_id, ctx.key_types,
                                  driven=self._driven and ("or" if self.store.backend == "postgresql" else True))
        except FilterError as exc:
            raise MetaError(str(exc))

    # --- reads ----------------------------------------------------------------------------------

    def get_partition(self, db: str, tbl: str, values) -> Partition:
        with self.store.read() as conn:
            ctx = self.table_ctx(conn, db, tbl)
            name = make_name(ctx.key_names, self._check_values(ctx, values))
            part = self._get_by_name(conn, ctx, name)
            part.values = list(values)  # Hive answers with the values it was asked for
            return part

    def get_partition_by_name(self, db: str, tbl: str, name: str) -> Partition:
        with self.store.read() as conn:
            ctx = self.table_ctx(conn, db, tbl)
            values = _name_values(ctx, name)
            return self._get_by_name(conn, ctx, make_name(ctx.key_names, values))

    def _get_by_name(self, conn: Connection, ctx: TableCtx, name: str) -> Partition:
        q, _ = self._select(ctx, S.partitions.c.part_name == name)
        rows = conn.execute(q).all()
        if not rows:
            values = [v for _, v in split_name(name)]
            raise NoSuchObject(
                f"partition values={values} for table {ctx.db_name}.{ctx.name} not found")
        return self._build(conn, ctx, rows)[0]

    def get_partitions(self, db: str, tbl: str, max_parts: int = -1, part_vals=None,
                       filter_text: str | None = None) -> list[Partition]:
        with self.store.read() as conn:
            ctx = self.table_ctx(conn, db, tbl)
            where = self._filter_where(ctx, filter_text) if filter_text else self._ps_where(ctx, part_vals)
            q, cond = self._select(ctx, where, max_parts, filtered=bool(filter_text))
            return self._build(conn, ctx, conn.execute(q).all())

    def get_partition_names(self, db: str, tbl: str, max_parts: int = -1, part_vals=None,
                            filter_text: str | None = None) -> list[str]:
        with self.store.read() as conn:
            ctx = self.table_ctx(conn, db, tbl)
            where = self._filter_where(ctx, filter_text) if filter_text else self._ps_where(ctx, part_vals)
            p = S.partitions
            q = select(p.c.part_name).where(
                self._in_table(ctx, bool(filter_text) and where is not None)).order_by(p.c.part_name)
            if where is not None:
                q = q.where(where)
            if max_parts is not None and max_parts >= 0:
                q = q.limit(max_parts)
            return list(conn.execute(q).scalars())

    def count_partitions(self, db: str, tbl: str, filter_text: str | None) -> int:
        with self.store.read() as conn:
            ctx = self.table_ctx(conn, db, tbl)
            p = S.partitions
            where = self._filter_where(ctx, filter_text)
            q = select(func.count()).select_from(p).where(self._in_table(ctx, where is not None))
            if where is not None:
                q = q.where(where)
            return conn.execute(q).scalar_one()

    def get_partitions_by_names(self, db: str, tbl: str, names) -> list[Partition]:
        with self.store.read() as conn:
            ctx = self.table_ctx(conn, db, tbl)
            # Hive matches the names exactly as written; names of no partition are ignored
            canonical = list(dict.fromkeys(n for n in names or [] if n))
            rows = []
            for i in range(0, len(canonical), BATCH):
                q, _ = self._select(ctx, in_list(self.store.backend, S.partitions.c.part_name, canonical[i:i + BATCH]))
                rows.extend(conn.execute(q).all())
            rows.sort(key=lambda r: r.part_name)
            return self._build(conn, ctx, rows)

    def get_partition_values(self, db: str, tbl: str, key_names: list[str], filter_text: str | None,
                             ascending: bool = True, max_parts: int = -1) -> list[list[str]]:
        with self.store.read() as conn:
            ctx = self.table_ctx(conn, db, tbl)
            lowered = ctx.key_names
            idx = []
            for k in key_names:
                if k.lower() not in lowered:
                    raise MetaError(f"{k} is not a partition key of {ctx.db_name}.{ctx.name}")
                idx.append(lowered.index(k.lower()))
            p = S.partitions
            where = self._filter_where(ctx, filter_text)
            q = select(p.c.part_name).where(self._in_table(ctx, where is not None))
            if where is not None:
                q = q.where(where)
            seen = {}
            for (name,) in conn.execute(q):
                vals = [v for _, v in split_name(name)]
                seen[tuple(vals[i] for i in idx)] = None
            rows = sorted(seen, reverse=not ascending)
            if max_parts is not None and max_parts >= 0:
                rows = rows[:max_parts]
            return [list(r) for r in rows]

    # --- writes ---------------------------------------------------------------------------------

    def add_partitions(self, db: str, tbl: str, parts: list[Partition], if_not_exists: bool = False,
                       env: dict | None = None, missing=InvalidObject,
                       conn: Connection | None = None) -> list[Partition]:
        """Add partitions in one transaction (the caller's, when `conn` is given); returns the ones
        added (existing ones are skipped with if_not_exists, else AlreadyExists)."""
        if not parts:
            return []
        made: list[str] = []

        def tx(conn: Connection) -> list[Partition]:
            made.clear()
            try:
                ctx = self.table_ctx(conn, db, tbl)
            except NoSuchObject:
                raise missing(f"Unable to add partitions because table or database do not exist: {db}.{tbl}")
            now = now_s()
            rows, by_name = [], {}
            for part in parts:
                if (part.dbName and part.dbName.lower() != ctx.db_name) or \
                        (part.tableName and part.tableName.lower() != ctx.name):
                    raise MetaError("Partition does not belong to target table "
                                        f"{ctx.db_name}.{ctx.name}: {part}")
                values = list(part.values or [])
                if len(values) != len(ctx.keys):
                    raise MetaError(f"Incorrect number of partition values: {values} for keys {ctx.key_names}")
                if any(v is None for v in values):
                    raise MetaError(f"Partition values must not be null: {values}")
                name = make_name(ctx.key_names, values)
                if name in by_name:
                    raise MetaError(f"Duplicate partitions in the list: {name}")
                by_name[name] = part
            names = list(by_name)
            existing = set()
            for i in range(0, len(names), BATCH):
                existing.update(conn.execute(select(S.partitions.c.part_name).where(
                    S.partitions.c.tbl_id == ctx.tbl_id,
                    in_list(self.store.backend, S.partitions.c.part_name, names[i:i + BATCH]))).scalars())
            if existing and not if_not_exists:
                first = sorted(existing)[0]
                raise AlreadyExists(
                    f"Partition already exists: {ctx.db_name}.{ctx.name} {first}")
            added = [(n, p) for n, p in by_name.items() if n not in existing]
            if not added:
                return []
            versions = {}
            results = []
            for name, part in added:
                sd = part.sd
                location = (sd.location if sd is not None else None) or (
                    warehouse.join(ctx.location, name) if ctx.location else None)
                own_sd = None
                if sd is not None and not same_sd(ctx.sd, sd):
                    own_sd = insert_sd(conn, sd)
                cols = sd.cols if sd is not None and sd.cols is not None else None
                key = tuple((c.name, c.type, c.comment) for c in cols) if cols is not None else None
                if key not in versions:
                    versions[key] = ctx.schema_version if cols is None else version_for_columns(
                        conn, ctx.tbl_id, ctx.schema_version, cols, ctx.keys)
                params = dict(part.parameters or {})
                stats_params.on_add_partition(params, location)  # numFiles/totalSize of existing data
                if not params.get(DDL_TIME):
                    params[DDL_TIME] = str(now)
                rows.append({
                    "tbl_id": ctx.tbl_id, "part_name": name, "create_time": now,
                    "last_access_time": part.lastAccessTime or 0, "update_time": now,
                    "location": location, "sd_id": own_sd, "schema_version": versions[key],
                })
                results.append((name, part, params, location))
                if location:
                    made.append(location)
            conn.execute(S.partitions.insert(), rows)
            ids = {}
            added_names = [n for n, _ in added]
            for i in range(0, len(added_names), BATCH):
                ids.update(conn.execute(select(S.partitions.c.part_name, S.partitions.c.part_id).where(
                    S.partitions.c.tbl_id == ctx.tbl_id,
                    in_list(self.store.backend, S.partitions.c.part_name, added_names[i:i + BATCH]))).all())
            kv_rows, param_rows, out = [], [], []
            for name, part, params, location in results:
                pid = ids[name]
                for i, (k, v) in enumerate(zip(ctx.key_names, part.values)):
                    kv_rows.append({"part_id": pid, "key_idx": i, "tbl_id": ctx.tbl_id, "part_key_name": k,
                                    "part_key_val": v, "part_key_num": _num(v)})
                param_rows.extend({"part_id": pid, "param_key": k, "param_value": v} for k, v in params.items())
                out.append(Partition(
                    values=list(part.values), dbName=ctx.db_name, tableName=ctx.name, createTime=now,
                    lastAccessTime=part.lastAccessTime or 0,
                    sd=_with_location(part.sd, location, ctx), parameters=params, catName=CATALOG))
            conn.execute(S.partition_key_val.insert(), kv_rows)
            if param_rows:
                conn.execute(S.partition_params.insert(), param_rows)
            return out

        out = tx(conn) if conn is not None else self.store.run_write(tx)
        self.store.note_changes(len(out))
        for loc in made:
            warehouse.make_dirs(loc)
        return out

    def append_partition(self, db: str, tbl: str, values) -> Partition:
        return self.add_partitions(db, tbl, [Partition(values=list(values or []), dbName=db, tableName=tbl)])[0]

    def append_partition_by_name(self, db: str, tbl: str, name: str) -> Partition:
        with self.store.read() as conn:
            ctx = self.table_ctx(conn, db, tbl, missing=InvalidObject)
        try:
            values = _name_values(ctx, name)
        except NoSuchObject as exc:
            raise InvalidObject(exc.message)
        return self.append_partition(db, tbl, values)

    def alter_partitions(self, db: str, tbl: str, parts: list[Partition], env: dict | None = None) -> None:
        if not parts:
            return

        def tx(conn: Connection):
            try:
                ctx = self.table_ctx(conn, db, tbl)
            except NoSuchObject as exc:
                raise InvalidOperation(f"alter is not possible: {exc.message}")
            now = now_s()
            names = []
            for part in parts:
                values = list(part.values or [])
                if len(values) != len(ctx.keys):
                    raise InvalidOperation(f"alter is not possible: partition values {values} "
                                                    f"do not match keys {ctx.key_names}")
                names.append(make_name(ctx.key_names, values))
            if len(set(names)) == len(names) > 1:
                return self._alter_many(conn, ctx, names, parts, now, env)
            for name, part in zip(names, parts):  # one, or one named twice (each alter sees the last)
                self._alter_one(conn, ctx, name, part, now, env=env)

        self.store.run_write(tx)

    def _alter_many(self, conn: Connection, ctx: TableCtx, names: list[str], parts: list[Partition],
                    now: int, env: dict | None) -> None:
        """_alter_one for many partitions with a few statements in all: rows and parameters read in
        batches, partition rows updated and parameters replaced with one executemany each."""
        p, pp = S.partitions, S.partition_params
        b = self.store.backend
        rows = {}
        wanted = list(dict.fromkeys(names))
        for i in range(0, len(wanted), BATCH):
            q, _ = self._select(ctx, in_list(b, p.c.part_name, wanted[i:i + BATCH]))
            rows.update((r.part_name, r) for r in conn.execute(q))
        for name in names:
            if name not in rows:
                raise InvalidOperation(f"alter is not possible: partition {name} of "
                                                f"{ctx.db_name}.{ctx.name} does not exist")
        old_params = dict(zip(wanted, params_of_many(rows[n].params_json for n in wanted)))
        versions: dict[tuple, int] = {}
        updates, new_params, touched, dropped_sds = [], [], [], []
        for name, part in zip(names, parts):
            row = rows[name]
            sd = part.sd
            up = {"pid": row.part_id, "update_time": now,
                  "last_access_time": part.lastAccessTime or row.last_access_time,
                  "location": row.location, "sd_id": row.sd_id, "schema_version": row.schema_version}
            if sd is not None:
                up["location"] = sd.location or row.location
                if same_sd(ctx.sd, sd):
                    up["sd_id"] = None
                    if row.sd_id is not None:
                        dropped_sds.append(row.sd_id)
                elif row.sd_id is not None:
                    conn.execute(update(S.sds).where(S.sds.c.sd_id == row.sd_id).values(**sd_row(sd)))
                else:
                    up["sd_id"] = insert_sd(conn, sd)
                if sd.cols is not None:
                    key = tuple(col_tuples(sd.cols))
                    if key not in versions:
                        versions[key] = version_for_columns(conn, ctx.tbl_id, ctx.schema_version, sd.cols, ctx.keys)
                    up["schema_version"] = versions[key]
            updates.append(up)
            params = dict(part.parameters or {})
            stats_params.on_alter_partition(dict(old_params[name]), params, ctx.tbl_type, up["location"], env)
            if not params.get(DDL_TIME) or params.get(DDL_TIME) == "0":
                params[DDL_TIME] = str(now)
            touched.append(row.part_id)
            new_params.extend({"part_id": row.part_id, "param_key": k, "param_value": v} for k, v in params.items())
        conn.execute(update(p).where(p.c.part_id == bindparam("pid")).values(
            update_time=bindparam("b_update_time"), last_access_time=bindparam("b_last_access_time"),
            location=bindparam("b_location"), sd_id=bindparam("b_sd_id"),
            schema_version=bindparam("b_schema_version")),
            [{"pid": u["pid"], **{"b_" + k: v for k, v in u.items() if k != "pid"}} for u in updates])
        for i in range(0, len(dropped_sds), BATCH):
            conn.execute(delete(S.sds).where(in_list(b, S.sds.c.sd_id, dropped_sds[i:i + BATCH])))
        for i in range(0, len(touched), BATCH):
            conn.execute(delete(pp).where(in_list(b, pp.c.part_id, touched[i:i + BATCH])))
        if new_params:
            conn.execute(pp.insert(), new_params)

    def _alter_one(self, conn: Connection, ctx: TableCtx, old_name: str, part: Partition, now: int,
                   new_name: str | None = None, location: str | None = None, env: dict | None = None) -> None:
        p = S.partitions
        row = conn.execute(select(p).where(p.c.tbl_id == ctx.tbl_id, p.c.part_name == old_name)).first()
        if row is None:
            raise InvalidOperation(f"alter is not possible: partition {old_name} of "
                                            f"{ctx.db_name}.{ctx.name} does not exist")
        sd = part.sd
        values = {"update_time": now, "last_access_time": part.lastAccessTime or row.last_access_time}
        if sd is not None:
            values["location"] = location or sd.location or row.location
            if same_sd(ctx.sd, sd):
                values["sd_id"] = None
            elif row.sd_id is not None:
                conn.execute(update(S.sds).where(S.sds.c.sd_id == row.sd_id).values(**sd_row(sd)))
            else:
                values["sd_id"] = insert_sd(conn, sd)
            if sd.cols is not None:
                values["schema_version"] = version_for_columns(conn, ctx.tbl_id, ctx.schema_version, sd.cols, ctx.keys)
        elif location:
            values["location"] = location
        if new_name:
            values["part_name"] = new_name
        conn.execute(update(p).where(p.c.part_id == row.part_id).values(**values))
        if sd is not None and "sd_id" in values and values["sd_id"] is None and row.sd_id is not None:
            conn.execute(delete(S.sds).where(S.sds.c.sd_id == row.sd_id))
        params = dict(part.parameters or {})
        old_params = _params(conn, S.partition_params, "part_id", [row.part_id])[row.part_id]
        stats_params.on_alter_partition(old_params, params, ctx.tbl_type, values.get("location", row.location), env)
        if not params.get(DDL_TIME) or params.get(DDL_TIME) == "0":
            params[DDL_TIME] = str(now)
        conn.execute(delete(S.partition_params).where(S.partition_params.c.part_id == row.part_id))
        conn.execute(S.partition_params.insert(), [
            {"part_id": row.part_id, "param_key": k, "param_value": v} for k, v in params.items()])
        if new_name:
            kv = S.partition_key_val
            for i, v in enumerate(part.values):
                conn.execute(update(kv).where(kv.c.part_id == row.part_id, kv.c.key_idx == i).values(
                    part_key_val=v, part_key_num=_num(v)))

    def rename_partition(self, db: str, tbl: str, old_values, new_part: Partition) -> None:
        moves: list[tuple[str, str]] = []

        def tx(conn: Connection):
            moves.clear()
            try:
                ctx = self.table_ctx(conn, db, tbl)
            except NoSuchObject as exc:
                raise InvalidOperation(f"Unable to rename partition: {exc.message}")
            if not old_values:  # Hive: empty old values means a plain alter
                return self._alter_one(conn, ctx, make_name(ctx.key_names, new_part.values), new_part, now_s())
            old_name = make_name(ctx.key_names, self._check_values(ctx, old_values))
            new_name = make_name(ctx.key_names, self._check_values(ctx, new_part.values))
            p = S.partitions
            old = conn.execute(select(p).where(p.c.tbl_id == ctx.tbl_id, p.c.part_name == old_name)).first()
            if old is None:
                raise InvalidOperation(f"Unable to rename partition: {old_name} does not exist")
            if conn.execute(select(p.c.part_id).where(p.c.tbl_id == ctx.tbl_id, p.c.part_name == new_name)).first():
                raise InvalidOperation(
                    f"Partition already exists:{ctx.db_name}.{ctx.name}.[{', '.join(new_part.values)}]")
            location = None
            if ctx.tbl_type == MANAGED and ctx.location:
                location = warehouse.join(ctx.location, new_name)
                if old.location and old.location != location:
                    moves.append((old.location, location))
            self._alter_one(conn, ctx, old_name, new_part, now_s(), new_name=new_name, location=location)
            for src, dst in moves:
                warehouse.move_dir(src, dst)

        self.store.run_write(tx)

    def drop_partitions(self, db: str, tbl: str, names: list[str] | None = None, values_list=None,
                        delete_data: bool = True, if_exists: bool = False, need_result: bool = False,
                        exact_names: bool = False):
        """Drop partitions named by `names` or by value lists; missing ones are an error unless if_exists.
        `exact_names`: names match stored names as written (drop_partitions_req), else they are read
        as key=value specs (drop_partition_by_name)."""
        doomed: list[str] = []
        dropped = [0]

        def tx(conn: Connection):
            doomed.clear()
            dropped[0] = 0
            ctx = self.table_ctx(conn, db, tbl)
            wanted = []
            for n in names or []:
                wanted.append(n if exact_names else make_name(ctx.key_names, _name_values(ctx, n)))
            for vals in values_list or []:
                wanted.append(make_name(ctx.key_names, self._check_values(ctx, vals)))
            wanted = list(dict.fromkeys(wanted))
            p = S.partitions
            rows = []
            for i in range(0, len(wanted), BATCH):
                rows.extend(conn.execute(self._select(ctx, in_list(self.store.backend, p.c.part_name, wanted[i:i + BATCH]))[0]).all())
            if len(rows) != len(wanted) and not if_exists:
                found = {r.part_name for r in rows}
                missing = [n for n in wanted if n not in found]
                raise NoSuchObject(f"partition {missing[0]} of {ctx.db_name}.{ctx.name} does not exist")
            result = self._build(conn, ctx, rows) if need_result else None
            self._delete_rows(conn, [r.part_id for r in rows], [r.sd_id for r in rows if r.sd_id])
            if delete_data and ctx.tbl_type == MANAGED:
                doomed.extend(r.location for r in rows if r.location)
            dropped[0] = len(rows)
            return result

        result = self.store.run_write(tx)
        self.store.note_changes(dropped[0])
        warehouse.delete_dirs(doomed)
        return result

    def _delete_rows(self, conn: Connection, part_ids: list[int], sd_ids: list[int]) -> None:
        b = self.store.backend
        for i in range(0, len(part_ids), BATCH):
            chunk = part_ids[i:i + BATCH]
            conn.execute(delete(S.part_col_stats).where(in_list(b, S.part_col_stats.c.part_id, chunk)))
            conn.execute(delete(S.partition_key_val).where(in_list(b, S.partition_key_val.c.part_id, chunk)))
            conn.execute(delete(S.partition_params).where(in_list(b, S.partition_params.c.part_id, chunk)))
            conn.execute(delete(S.partitions).where(in_list(b, S.partitions.c.part_id, chunk)))
        for i in range(0, len(sd_ids), BATCH):
            conn.execute(delete(S.sds).where(in_list(b, S.sds.c.sd_id, sd_ids[i:i + BATCH])))

    def truncate(self, db: str, tbl: str, part_names: list[str] | None) -> None:
        with self.store.read() as conn:
            ctx = self.table_ctx(conn, db, tbl)
            if part_names:
                locs = [p.sd.location for p in self.get_partitions_by_names(db, tbl, part_names)]
            elif ctx.keys:
                locs = [r[0] for r in conn.execute(select(S.partitions.c.location).where(
                    S.partitions.c.tbl_id == ctx.tbl_id))]
            else:
                locs = [ctx.location]
        for loc in locs:
            warehouse.empty_dir(loc)


def _name_values(ctx: TableCtx, name: str) -> list[str]:
    """The key values a partition name gives (Hive's getPartValsFromName)."""
    try:
        return values_from_name(ctx.key_names, name)
    except IncompleteName as exc:
        raise NoSuchObject(str(exc))
    except ValueError as exc:
        raise MetaError(str(exc))


def _with_location(sd, location, ctx: TableCtx):
    if sd is None:
        return build_sd(ctx.sd, location, list(ctx.cols))
    sd.location = location
    return sd
