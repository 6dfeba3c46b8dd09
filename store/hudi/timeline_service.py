"""RFC-36 timeline service: Hudi tables' instants, instant times, heartbeats, commits and rollbacks.

Completing a write instant is one database transaction: the instant becomes COMPLETED with its
metadata, the snapshot (`files`, replaced file groups) takes the commit's changes, the table's
HMS partitions are created, and the table version is bumped. Either all of it happens or none.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from sqlalchemy import Connection, delete, func, or_, select, update
from sqlalchemy.exc import IntegrityError

from hudi_format.commit_metadata import (
    WRITE_ACTIONS,
    parse_clean,
    parse_commit,
    parse_rollback,
    rollback_metadata,
    rollback_plan,
)
from hudi_format.file_slice import parse_file_name, split_path
from hudi_format.instant import (
    ACTIONS,
    COMPLETED,
    COMPLETED_AS,
    INFLIGHT,
    REQUESTED,
    STATE_NAMES,
    STATES,
    Instant,
    format_instant,
    parse_instant,
)
from hudi_format.table_config import (
    COW,
    INPUT_FORMAT,
    META_COLUMNS,
    OUTPUT_FORMAT,
    SERDE,
    HudiTableConfig,
    avro_to_hive_type,
    spark_schema_properties,
)
from store.db import schema as S
from store.db.database import Store, now_ms
from store.errors import (
    AlreadyExists,
    CommitConflict,
    InvalidObject,
    InvalidOperation,
    NoSuchObject,
)
from store.hms.database_service import database_is
from store.hms.partition_names import make_name
from store.hms.partition_service import PartitionService
from store.hms.table_service import TableService
from store.storage import warehouse
from thrift_idl.hive_metastore.ttypes import (
    FieldSchema,
    Partition,
    SerDeInfo,
    StorageDescriptor,
    Table,
)

log = logging.getLogger(__name__)

DEFAULT_HEARTBEAT_TIMEOUT_S = 120
NEVER = "0" * 17  # deleted_ts of files that were never part of the table (rolled back)
def check_instant_time(ts: str) -> str:
    if not ts or not ts.isdigit() or len(ts) not in (14, 17):
        raise InvalidObject(f"Instant time must be 17 digits yyyyMMddHHmmssSSS: {ts!r}")
    try:
        parse_instant(ts)
    except ValueError:
        raise InvalidObject(f"Instant time is not a valid date: {ts!r}")
    return ts


@dataclass
class HudiTableRef:
    tbl_id: int
    db_name: str
    name: str
    config: HudiTableConfig


def _instant(row) -> Instant:
    return Instant(ts=row.ts, action=row.action, state=STATE_NAMES[row.state], completion_ts=row.completion_ts,
                   requested_ms=row.requested_ms, heartbeat_ms=row.start_ts, heartbeat_timeout_s=row.duration)


class TimelineService:
    def __init__(self, store: Store, tables: TableService, partitions: PartitionService, clock_ms=now_ms):
        self.store = store
        self.tables = tables
        self.partitions = partitions
        self.clock_ms = clock_ms
        self.on_commit = []  # callbacks(db, tbl) after a completed instant (storage mirror, metrics)

    # --- tables ---------------------------------------------------------------------------------

    def table_ref(self, conn: Connection, db: str, tbl: str, lock: bool = False) -> HudiTableRef:
        q = select(S.tbl.c.tbl_id, S.tbl.c.name, S.db.c.name.label("db_name"), S.hudi_table).select_from(
            S.tbl.join(S.db, S.tbl.c.db_id == S.db.c.db_id).join(S.hudi_table, S.hudi_table.c.tbl_id == S.tbl.c.tbl_id)
        ).where(database_is(db or ""), S.tbl.c.name == (tbl or "").lower())
        if lock and self.store.backend != "sqlite":
            q = q.with_for_update(of=S.hudi_table)
        row = conn.execute(q).first()
        if row is None:
            raise NoSuchObject(f"Hudi table {(db or '').lower()}.{(tbl or '').lower()} not found")
        cfg = HudiTableConfig.from_properties(row.db_name, row.name, json.loads(row.properties), row.base_path)
        return HudiTableRef(row.tbl_id, row.db_name, row.name, cfg)

    def is_hudi(self, conn: Connection, tbl_id: int) -> bool:
        return conn.execute(select(S.hudi_table.c.tbl_id).where(S.hudi_table.c.tbl_id == tbl_id)).first() is not None

    def get_table_config(self, db: str, tbl: str) -> HudiTableConfig:
        with self.store.read() as conn:
            return self.table_ref(conn, db, tbl).config

    def register_table(self, cfg: HudiTableConfig, columns: list[FieldSchema] | None = None) -> None:
        """Make db.tbl a Hudi table: creates its HMS table (as hive-sync would) when absent."""
        cfg.db_name, cfg.table_name = (cfg.db_name or "").lower(), (cfg.table_name or "").lower()
        cfg.validate()
        try:
            existing = self.tables.get_table(cfg.db_name, cfg.table_name)
        except NoSuchObject:
            existing = None
        created = False
        if existing is None:
            self.tables.create_table(self.hms_table(cfg, columns))
            created = True
            existing = self.tables.get_table(cfg.db_name, cfg.table_name)
        if not cfg.base_path:
            cfg.base_path = existing.sd.location

        def tx(conn: Connection):
            tbl_id = conn.execute(select(S.tbl.c.tbl_id).select_from(S.tbl.join(S.db, S.db.c.db_id == S.tbl.c.db_id)).where(
                database_is(cfg.db_name), S.tbl.c.name == cfg.table_name)).scalar_one()
            if self.is_hudi(conn, tbl_id):
                raise AlreadyExists(f"Hudi table {cfg.db_name}.{cfg.table_name} already exists")
            conn.execute(S.hudi_table.insert().values(
                tbl_id=tbl_id, table_type=cfg.table_type, table_version=cfg.table_version,
                base_path=cfg.base_path, properties=cfg.to_json()))

        try:
            self.store.run_write(tx)
        except Exception:
            if created:  # registration is all or nothing
                self.tables.drop_table(cfg.db_name, cfg.table_name, False)
            raise

    def adopt_hms_table(self, table: Table) -> bool:
        """A table created over plain HMS with `spark.sql.sources.provider=hudi` and `hoodie.*`
        properties (Hudi's Spark catalog, hive-sync) becomes Hudi-managed; True when it did."""
        params = {k: v for k, v in (table.parameters or {}).items() if v is not None}
        if params.get("spark.sql.sources.provider", "").lower() != "hudi" or \
                not any(k.startswith("hoodie.") for k in params):
            return False
        hoodie = {k: v for k, v in params.items() if k.startswith("hoodie.")}
        kind = (hoodie.get("hoodie.table.type") or params.get("type") or "cow").upper()
        hoodie["hoodie.table.type"] = {"COW": COW, "MOR": "MERGE_ON_READ"}.get(kind, kind)
        keys = hoodie.get("hoodie.table.recordkey.fields") or hoodie.get("hoodie.datasource.write.recordkey.field") \
            or params.get("primaryKey") or ""
        hoodie["hoodie.table.recordkey.fields"] = keys
        hoodie.setdefault("hoodie.table.partition.fields", ",".join(k.name for k in table.partitionKeys or []))
        if "hoodie.table.precombine.field" not in hoodie and params.get("preCombineField"):
            hoodie["hoodie.table.precombine.field"] = params["preCombineField"]
        cfg = HudiTableConfig.from_properties(table.dbName, table.tableName, hoodie,
                                              table.sd.location if table.sd else None)
        cfg.validate()
        self.register_table(cfg)
        return True

    @staticmethod
    def hms_table(cfg: HudiTableConfig, columns: list[FieldSchema] | None) -> Table:
        """The HMS table hive-sync would create for a Hudi table."""
        if columns is None and cfg.avro_schema:
            try:
                fields = json.loads(cfg.avro_schema)["fields"]
            except (ValueError, KeyError, TypeError) as exc:
                raise InvalidObject(f"avroSchema is not an Avro record schema: {exc}")
            columns = [FieldSchema(f["name"], avro_to_hive_type(f["type"]), f.get("doc")) for f in fields]
        columns = list(columns or [])
        by_name = {c.name.lower(): c for c in columns}
        part_keys = [FieldSchema(f.lower(), by_name[f.lower()].type if f.lower() in by_name else "string", None)
                     for f in cfg.partition_fields]
        part_names = {k.name for k in part_keys}
        data_cols = [FieldSchema(m, "string", None) for m in META_COLUMNS] + [
            c for c in columns if c.name.lower() not in part_names and c.name not in META_COLUMNS]
        params = {"EXTERNAL": "TRUE", "hoodie.table.type": cfg.table_type,
                  "type": "cow" if cfg.table_type == COW else "mor", "primaryKey": ",".join(cfg.record_key_fields)}
        # hive-sync's sync_as_datasource (default true): Spark then needs the Hudi bundle for the table;
        # false registers a Hive table with Hudi's input formats, which any Spark can list and describe
        if cfg.properties.get("hoodie.datasource.hive_sync.sync_as_datasource", "true").lower() != "false":
            try:
                params.update(spark_schema_properties(data_cols, part_keys))
            except (ValueError, IndexError):
                params["spark.sql.sources.provider"] = "hudi"
        if cfg.precombine_field:
            params["preCombineField"] = cfg.precombine_field
        serde_params = {"serialization.format": "1"}
        if cfg.base_path:
            serde_params["path"] = cfg.base_path
        sd = StorageDescriptor(
            cols=data_cols, location=cfg.base_path, inputFormat=INPUT_FORMAT[cfg.table_type],
            outputFormat=OUTPUT_FORMAT, compressed=False, numBuckets=-1,
            serdeInfo=SerDeInfo(serializationLib=SERDE, parameters=serde_params),
            bucketCols=[], sortCols=[], parameters={})
        return Table(tableName=cfg.table_name, dbName=cfg.db_name, sd=sd, partitionKeys=part_keys,
                     parameters=params, tableType="EXTERNAL_TABLE", owner="hudi")

    # --- instant times ----------------------------------------------------------------------------

    def _advance(self, conn: Connection, tbl_id: int, at_least: str | None = None) -> str:
        """Next instant time of the table, strictly above every one handed out (compare-and-set)."""
        t = S.tbl_timestamp
        for _ in range(100):
            cur = conn.execute(select(t.c.ts).where(t.c.tbl_id == tbl_id)).scalar()
            cand = format_instant(self.clock_ms())
            if cur is not None and cand <= cur:
                cand = format_instant(parse_instant(cur) + 1)
            if at_least and cand < at_least:
                cand = at_least
            if cur is None:
                try:
                    with conn.begin_nested():
                        conn.execute(t.insert().values(tbl_id=tbl_id, ts=cand))
                    return cand
                except IntegrityError:
                    continue
            if conn.execute(update(t).where(t.c.tbl_id == tbl_id, t.c.ts == cur).values(ts=cand)).rowcount == 1:
                return cand
        raise InvalidOperation("Could not allocate an instant time (too much contention)")

    def _bump_to(self, conn: Connection, tbl_id: int, ts: str) -> None:
        """Make sure no later instant time is handed out at or below `ts` (client-chosen times)."""
        t = S.tbl_timestamp
        cur = conn.execute(select(t.c.ts).where(t.c.tbl_id == tbl_id)).scalar()
        if cur is None:
            try:
                with conn.begin_nested():
                    conn.execute(t.insert().values(tbl_id=tbl_id, ts=ts))
                return
            except IntegrityError:
                cur = conn.execute(select(t.c.ts).where(t.c.tbl_id == tbl_id)).scalar()
        conn.execute(update(t).where(t.c.tbl_id == tbl_id, t.c.ts < ts).values(ts=ts))

    def new_instant_time(self, db: str, tbl: str) -> str:
        def tx(conn: Connection):
            return self._advance(conn, self.table_ref(conn, db, tbl).tbl_id)

        return self.store.run_write(tx)

    # --- instants ---------------------------------------------------------------------------------

    def _row(self, conn: Connection, tbl_id: int, ts: str, action: str | None = None, lock: bool = False):
        q = select(S.instant).where(S.instant.c.tbl_id == tbl_id, S.instant.c.ts == ts)
        if action:
            q = q.where(or_(S.instant.c.action == action, S.instant.c.action == COMPLETED_AS.get(action, action)))
        if lock and self.store.backend != "sqlite":
            q = q.with_for_update()
        rows = conn.execute(q).all()
        if not rows:
            raise NoSuchObject(f"Instant {ts}{'.' + action if action else ''} not found")
        return rows[0]

    def _put_meta(self, conn: Connection, tbl_id: int, ts: str, action: str, state: int, data: bytes | None):
        m = S.instant_meta
        conn.execute(delete(m).where(m.c.tbl_id == tbl_id, m.c.ts == ts, m.c.action == action, m.c.state == state))
        conn.execute(m.insert().values(tbl_id=tbl_id, ts=ts, action=action, state=state, data=data or b""))

    def create_instant(self, db: str, tbl: str, ts: str | None, action: str, plan: bytes | None,
                       heartbeat_timeout_s: int = 0) -> Instant:
        if action not in ACTIONS:
            raise InvalidObject(f"Unknown Hudi action {action!r}; one of {', '.join(ACTIONS)}")
        if ts:
            check_instant_time(ts)
        timeout = heartbeat_timeout_s if heartbeat_timeout_s and heartbeat_timeout_s > 0 else DEFAULT_HEARTBEAT_TIMEOUT_S

        def tx(conn: Connection):
            ref = self.table_ref(conn, db, tbl)
            requested_ts = self._advance(conn, ref.tbl_id, at_least=ts)
            instant_ts = ts or requested_ts
            if conn.execute(select(S.instant.c.instant_id).where(
                    S.instant.c.tbl_id == ref.tbl_id, S.instant.c.ts == instant_ts)).first():
                raise AlreadyExists(f"Instant {instant_ts} already exists on {ref.db_name}.{ref.name}")
            now = self.clock_ms()
            conn.execute(S.instant.insert().values(
                tbl_id=ref.tbl_id, ts=instant_ts, action=action, state=REQUESTED, requested_ms=now,
                requested_ts=requested_ts, duration=timeout, start_ts=now))
            self._put_meta(conn, ref.tbl_id, instant_ts, action, REQUESTED, plan)
            return Instant(instant_ts, action, "REQUESTED", None, now, now, timeout)

        return self.store.run_write(tx)

    def transition_to_inflight(self, db: str, tbl: str, ts: str, action: str, profile: bytes | None) -> Instant:
        def tx(conn: Connection):
            ref = self.table_ref(conn, db, tbl)
            row = self._row(conn, ref.tbl_id, ts, action, lock=True)
            if row.state != REQUESTED:
                raise InvalidOperation(
                    f"Cannot move instant {ts}.{row.action} from {STATE_NAMES[row.state]} to INFLIGHT")
            now = self.clock_ms()
            conn.execute(update(S.instant).where(S.instant.c.instant_id == row.instant_id).values(
                state=INFLIGHT, start_ts=now))
            self._put_meta(conn, ref.tbl_id, ts, row.action, INFLIGHT, profile)
            return Instant(ts, row.action, "INFLIGHT", None, row.requested_ms, now, row.duration)

        return self.store.run_write(tx)

    def heartbeat(self, db: str, tbl: str, ts: str) -> None:
        def tx(conn: Connection):
            ref = self.table_ref(conn, db, tbl)
            row = self._row(conn, ref.tbl_id, ts)
            if row.state == COMPLETED:
                raise InvalidOperation(f"Instant {ts} is already completed")
            if row.start_ts == 0:  # see _expire
                raise InvalidOperation(f"Instant {ts} lost a commit conflict and is to be rolled back")
            conn.execute(update(S.instant).where(S.instant.c.instant_id == row.instant_id).values(
                start_ts=self.clock_ms()))

        self.store.run_write(tx)

    def add_markers(self, db: str, tbl: str, ts: str, paths: list[str]) -> None:
        def tx(conn: Connection):
            ref = self.table_ref(conn, db, tbl)
            row = self._row(conn, ref.tbl_id, ts)
            if row.state == COMPLETED:
                raise InvalidOperation(f"Instant {ts} is already completed")
            have = set(conn.execute(select(S.instant_markers.c.path).where(
                S.instant_markers.c.tbl_id == ref.tbl_id, S.instant_markers.c.ts == ts)).scalars())
            new = [p.strip("/") for p in dict.fromkeys(paths or []) if p.strip("/") not in have]
            if new:
                conn.execute(S.instant_markers.insert(), [{"tbl_id": ref.tbl_id, "ts": ts, "path": p} for p in new])

        self.store.run_write(tx)

    def list_instants(self, db: str, tbl: str, states=None, actions=None, min_ts=None, max_ts=None) -> list[Instant]:
        with self.store.read() as conn:
            ref = self.table_ref(conn, db, tbl)
            i = S.instant
            q = select(i).where(i.c.tbl_id == ref.tbl_id)
            if states:
                q = q.where(i.c.state.in_([STATES[s] if isinstance(s, str) else int(s) for s in states]))
            if actions:
                q = q.where(i.c.action.in_(list(actions)))
            if min_ts:
                q = q.where(i.c.ts >= min_ts)
            if max_ts:
                q = q.where(i.c.ts <= max_ts)
            return [_instant(r) for r in conn.execute(q.order_by(i.c.ts, i.c.action))]

    def instant_metadata(self, db: str, tbl: str, ts: str, action: str, state: str) -> bytes:
        with self.store.read() as conn:
            ref = self.table_ref(conn, db, tbl)
            m = S.instant_meta
            code = STATES[state] if isinstance(state, str) else int(state)
            data = conn.execute(select(m.c.data).where(
                m.c.tbl_id == ref.tbl_id, m.c.ts == ts, m.c.state == code,
                m.c.action.in_([action, COMPLETED_AS.get(action, action)]))).scalar()
            if data is None:
                raise NoSuchObject(f"No {STATE_NAMES.get(code, state)} metadata for instant {ts}.{action}")
            return bytes(data)

    def failed_instants(self, db: str, tbl: str) -> list[Instant]:
        """Pending instants whose writer stopped heartbeating."""
        now = self.clock_ms()
        return [i for i in self.list_instants(db, tbl, states=["REQUESTED", "INFLIGHT"])
                if i.heartbeat_ms + i.heartbeat_timeout_s * 1000 < now]

    # --- completion -------------------------------------------------------------------------------

    def complete_instant(self, db: str, tbl: str, ts: str, action: str, metadata: bytes,
                         drop_partitions: list[str] | None = None) -> tuple[Instant, int]:
        """Complete an inflight instant; `drop_partitions` (partition paths) also removes those HMS
        partitions in the same transaction (a partition drop's replacecommit)."""

        def tx(conn: Connection):
            ref = self.table_ref(conn, db, tbl, lock=True)  # completions of one table are serialized
            row = self._row(conn, ref.tbl_id, ts, action, lock=True)
            if row.state != INFLIGHT:
                raise InvalidOperation(
                    f"Cannot complete instant {ts}.{row.action}: it is {STATE_NAMES[row.state]}, not INFLIGHT")
            done_action = COMPLETED_AS.get(row.action, row.action)
            completion_ts = self._advance(conn, ref.tbl_id)
            version = self._apply(conn, ref, row, done_action, metadata)
            drops = drop_partitions
            if drops is None and done_action == "replacecommit":
                meta = parse_commit(metadata)
                if (meta.operation_type or "").upper() == "DELETE_PARTITION":  # as hive-sync drops them
                    drops = sorted(set(meta.replaced) - {s.partition_path for s in meta.write_stats})
            if drops:
                self._drop_hms_partitions(conn, ref, drops)
            conn.execute(update(S.instant).where(S.instant.c.instant_id == row.instant_id).values(
                state=COMPLETED, action=done_action, completion_ts=completion_ts, start_ts=self.clock_ms()))
            self._put_meta(conn, ref.tbl_id, ts, done_action, COMPLETED, metadata)
            conn.execute(delete(S.instant_markers).where(
                S.instant_markers.c.tbl_id == ref.tbl_id, S.instant_markers.c.ts == ts))
            v = self._bump_version(conn, ref.tbl_id, row.instant_id)
            return Instant(ts, done_action, "COMPLETED", completion_ts, row.requested_ms, self.clock_ms(),
                           row.duration), v, version

        try:
            instant, version, _ = self.store.run_write(tx)
        except CommitConflict:
            self._expire(db, tbl, ts)
            raise
        for cb in self.on_commit:
            try:
                cb(db, tbl)
            except Exception:  # noqa: BLE001 - a mirror failure never undoes a commit
                log.exception("post-commit hook failed for %s.%s", db, tbl)
        return instant, version

    def _expire(self, db: str, tbl: str, ts: str) -> None:
        """An instant that lost a conflict can never complete: its heartbeat is expired so that its
        writer (or the next one) rolls it back at once."""
        def tx(conn: Connection):
            ref = self.table_ref(conn, db, tbl)
            conn.execute(update(S.instant).where(
                S.instant.c.tbl_id == ref.tbl_id, S.instant.c.ts == ts, S.instant.c.state != COMPLETED
            ).values(start_ts=0))

        self.store.run_write(tx)

    def _bump_version(self, conn: Connection, tbl_id: int, instant_id: int) -> int:
        v = S.tbl_version
        top = conn.execute(select(func.max(v.c.version)).where(v.c.tbl_id == tbl_id)).scalar() or 0
        now = self.clock_ms()
        conn.execute(v.insert().values(tbl_id=tbl_id, version=top + 1, instant_id=instant_id,
                                       snapshot_status=0, create_time=now))
        return top + 1

    def _apply(self, conn: Connection, ref: HudiTableRef, row, action: str, metadata: bytes) -> None:
        """Snapshot and partition changes of a completed instant."""
        ts = row.ts
        if action in WRITE_ACTIONS:
            meta = parse_commit(metadata)
            self._check_conflicts(conn, ref, row, action, meta)
            self._add_files(conn, ref, ts, meta)
            self._ensure_partitions(conn, ref, sorted({s.partition_path for s in meta.write_stats if s.partition_path}))
        elif action == "clean":
            self._mark_deleted(conn, ref, ts, parse_clean(metadata))
        elif action == "rollback":
            rolled, deleted, written = parse_rollback(metadata)
            self._mark_deleted(conn, ref, ts, deleted)
            self._forget_instants(conn, ref, rolled)
            self._add_files(conn, ref, ts, written)

    def _check_conflicts(self, conn: Connection, ref: HudiTableRef, row, action: str, meta) -> None:
        """Optimistic concurrency: a write instant that completed after this one was requested must
        not have touched the same file groups (for replace actions: the same partitions)."""
        i = S.instant
        ts = row.ts
        others = conn.execute(select(i.c.ts, i.c.action).where(
            i.c.tbl_id == ref.tbl_id, i.c.state == COMPLETED, i.c.completion_ts > row.requested_ts,
            i.c.ts != ts, i.c.action.in_(WRITE_ACTIONS))).all()
        if not others:
            return
        other_ts = [o.ts for o in others]
        touched: dict[str, set[tuple[str, str]]] = {t: set() for t in other_ts}
        f = S.files
        for r in conn.execute(select(f.c.created_ts, f.c.partition_path, f.c.file_id).where(
                f.c.tbl_id == ref.tbl_id, f.c.created_ts.in_(other_ts))):
            touched[r.created_ts].add((r.partition_path, r.file_id))
        rg = S.replaced_file_groups
        for r in conn.execute(select(rg.c.replace_ts, rg.c.partition_path, rg.c.file_id).where(
                rg.c.tbl_id == ref.tbl_id, rg.c.replace_ts.in_(other_ts))):
            touched[r.replace_ts].add((r.partition_path, r.file_id))
        mine = {(s.partition_path, s.file_id) for s in meta.write_stats}
        mine |= {(p, fid) for p, ids in meta.replaced.items() for fid in ids}
        my_parts = {p for p, _ in mine}
        conflicts = []
        for o in others:
            theirs = touched[o.ts]
            if "replacecommit" in (action, o.action):
                hit = my_parts & {p for p, _ in theirs}
            else:
                hit = mine & theirs
            if hit:
                conflicts.append(o.ts)
        if conflicts:
            raise CommitConflict(
                f"Instant {ts}.{action} of {ref.db_name}.{ref.name} conflicts with instant(s) "
                f"{', '.join(sorted(conflicts))} that completed after it started and wrote the same "
                f"{'partitions' if 'replacecommit' in [action] + [o.action for o in others] else 'file groups'}",
                sorted(conflicts))

    def _add_files(self, conn: Connection, ref: HudiTableRef, ts: str, meta) -> None:
        f = S.files
        now = self.clock_ms()
        version = (conn.execute(select(func.max(S.tbl_version.c.version)).where(
            S.tbl_version.c.tbl_id == ref.tbl_id)).scalar() or 0) + 1
        by_key = {}
        for s in meta.write_stats:
            partition, name = split_path(s.path)
            try:
                file_id, base_instant, is_log, log_version = parse_file_name(name)
            except ValueError as exc:
                raise InvalidObject(str(exc))
            by_key[(s.partition_path if s.partition_path is not None else partition, name)] = (
                file_id, base_instant, is_log, log_version, s.size)
        if by_key:
            # Only log files can be recorded already (appended to by a later deltacommit): a base file's
            # name carries the instant that wrote it, which commits once.
            by_partition: dict[str, list[str]] = {}
            for (partition, name), entry in by_key.items():
                if entry[2]:
                    by_partition.setdefault(partition, []).append(name)
            existing = {}
            for partition, names in by_partition.items():  # through the (tbl_id, partition_path, name) index
                for i in range(0, len(names), 500):
                    for r in conn.execute(select(f.c.id, f.c.partition_path, f.c.name).where(
                            f.c.tbl_id == ref.tbl_id, f.c.partition_path == partition,
                            f.c.name.in_(names[i:i + 500]))):
                        existing[(r.partition_path, r.name)] = r.id
            inserts = []
            for (partition, name), (file_id, base, is_log, ver, size) in by_key.items():
                if (partition, name) in existing:  # a log file appended to again
                    conn.execute(update(f).where(f.c.id == existing[(partition, name)]).values(
                        size=size, version=version, update_time=now, is_deleted=False, deleted_ts=None))
                else:
                    inserts.append({"tbl_id": ref.tbl_id, "partition_path": partition, "name": name,
                                    "file_id": file_id, "base_instant": base, "is_log": is_log,
                                    "log_version": ver, "size": size, "version": version, "created_ts": ts,
                                    "deleted_ts": None, "is_deleted": False, "create_time": now,
                                    "update_time": now})
            for i in range(0, len(inserts), 1000):
                conn.execute(f.insert(), inserts[i:i + 1000])
        if meta.replaced:
            rg = S.replaced_file_groups
            rows = [{"tbl_id": ref.tbl_id, "partition_path": p, "file_id": fid, "replace_ts": ts}
                    for p, ids in meta.replaced.items() for fid in dict.fromkeys(ids)]
            for p, ids in meta.replaced.items():
                ids = list(dict.fromkeys(ids))
                for i in range(0, len(ids), 500):
                    conn.execute(delete(rg).where(rg.c.tbl_id == ref.tbl_id, rg.c.partition_path == p,
                                                  rg.c.file_id.in_(ids[i:i + 500])))
            conn.execute(rg.insert(), rows)

    def _mark_deleted(self, conn: Connection, ref: HudiTableRef, ts: str, deleted: dict[str, list[str]]) -> None:
        f = S.files
        now = self.clock_ms()
        for partition, names in deleted.items():
            for i in range(0, len(names), 500):
                conn.execute(update(f).where(
                    f.c.tbl_id == ref.tbl_id, f.c.partition_path == partition, f.c.name.in_(names[i:i + 500]),
                    f.c.is_deleted.is_(False)).values(is_deleted=True, deleted_ts=ts, update_time=now))

    def _forget_instants(self, conn: Connection, ref: HudiTableRef, instants: list[str]) -> None:
        """A rolled-back instant leaves the timeline (Hudi deletes its instant files)."""
        if not instants:
            return
        i, m = S.instant, S.instant_meta
        conn.execute(delete(m).where(m.c.tbl_id == ref.tbl_id, m.c.ts.in_(instants)))
        conn.execute(delete(S.instant_markers).where(
            S.instant_markers.c.tbl_id == ref.tbl_id, S.instant_markers.c.ts.in_(instants)))
        conn.execute(delete(S.replaced_file_groups).where(
            S.replaced_file_groups.c.tbl_id == ref.tbl_id, S.replaced_file_groups.c.replace_ts.in_(instants)))
        # never visible at any time: deleted as of the instant that wrote them
        conn.execute(update(S.files).where(
            S.files.c.tbl_id == ref.tbl_id, S.files.c.created_ts.in_(instants)
        ).values(is_deleted=True, deleted_ts=NEVER, update_time=self.clock_ms()))
        conn.execute(delete(i).where(i.c.tbl_id == ref.tbl_id, i.c.ts.in_(instants),
                                     i.c.action != "rollback"))

    def _ensure_partitions(self, conn: Connection, ref: HudiTableRef, paths: list[str]) -> None:
        """HMS partitions for the partition paths a commit wrote (so engines see them at once)."""
        if not paths or not ref.config.partition_fields:
            return
        table_sd = self.tables.get_table_in(conn, ref.db_name, ref.name).sd
        parts = []
        for p in paths:
            try:
                values = ref.config.values_of(p)
            except ValueError as exc:
                raise InvalidObject(str(exc))
            sd = StorageDescriptor(**{**table_sd.__dict__, "location": warehouse.join(ref.config.base_path, p)})
            parts.append(Partition(values=values, dbName=ref.db_name, tableName=ref.name, sd=sd, parameters={}))
        self.partitions.add_partitions(ref.db_name, ref.name, parts, if_not_exists=True, conn=conn)

    def _drop_hms_partitions(self, conn: Connection, ref: HudiTableRef, paths: list[str]) -> None:
        if not ref.config.partition_fields:
            return
        ctx = self.partitions.table_ctx(conn, ref.db_name, ref.name)
        names = [make_name(ctx.key_names, ref.config.values_of(p)) for p in paths]
        p = S.partitions
        rows = conn.execute(select(p.c.part_id, p.c.sd_id).where(
            p.c.tbl_id == ref.tbl_id, p.c.part_name.in_(names))).all()
        self.partitions._delete_rows(conn, [r.part_id for r in rows], [r.sd_id for r in rows if r.sd_id])

    # --- rollback ---------------------------------------------------------------------------------

    def rollback(self, db: str, tbl: str, ts: str, force: bool = False) -> tuple[Instant, list[str]]:
        """Roll back a failed (pending, heartbeat expired) instant: a completed rollback instant
        records the files its writer left, which are deleted from storage."""
        base_path = [None]

        def tx(conn: Connection):
            ref = self.table_ref(conn, db, tbl, lock=True)
            base_path[0] = ref.config.base_path
            row = self._row(conn, ref.tbl_id, ts, lock=True)
            if row.state == COMPLETED:
                raise InvalidOperation(f"Instant {ts}.{row.action} is completed; only failed "
                                                "(pending) instants are rolled back")
            if not force and row.start_ts + row.duration * 1000 >= self.clock_ms():
                raise InvalidOperation(
                    f"Instant {ts}.{row.action} is still heartbeating; it is rolled back only after "
                    f"its heartbeat expires ({row.duration} s)")
            markers = list(conn.execute(select(S.instant_markers.c.path).where(
                S.instant_markers.c.tbl_id == ref.tbl_id, S.instant_markers.c.ts == ts)).scalars())
            deleted: dict[str, list[str]] = {}
            for path in markers:
                partition, name = split_path(path)
                deleted.setdefault(partition, []).append(name)
            rb_ts = self._advance(conn, ref.tbl_id)
            now = self.clock_ms()
            inserted = conn.execute(S.instant.insert().values(
                tbl_id=ref.tbl_id, ts=rb_ts, action="rollback", state=COMPLETED, requested_ms=now,
                requested_ts=rb_ts,
                completion_ts=self._advance(conn, ref.tbl_id), duration=row.duration, start_ts=now))
            # Avro, as Hudi writes them, so Java readers of the mirrored timeline parse them
            meta = rollback_metadata(rb_ts, ts, row.action, deleted, ref.config.base_path)
            plan = rollback_plan(ts, row.action, deleted, ref.config.base_path)
            self._put_meta(conn, ref.tbl_id, rb_ts, "rollback", REQUESTED, plan)
            self._put_meta(conn, ref.tbl_id, rb_ts, "rollback", INFLIGHT, b"")
            self._put_meta(conn, ref.tbl_id, rb_ts, "rollback", COMPLETED, meta)
            self._forget_instants(conn, ref, [ts])
            self._bump_version(conn, ref.tbl_id, inserted.inserted_primary_key[0])
            rb = self._row(conn, ref.tbl_id, rb_ts, "rollback")
            return _instant(rb), markers

        instant, paths = self.store.run_write(tx)
        for p in paths:
            warehouse.delete_file(warehouse.join(base_path[0], p))
        for cb in self.on_commit:
            try:
                cb(db, tbl)
            except Exception:  # noqa: BLE001
                log.exception("post-commit hook failed for %s.%s", db, tbl)
        return instant, paths

