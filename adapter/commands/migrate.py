"""`hudi-metastore migrate`: copy a running Hive Metastore into this server, then verify.

    hudi-metastore migrate --from thrift://old-hms:9083 [--to thrift://127.0.0.1:9083]
                           [--databases PATTERN] [--dry-run] [--parallel N]

What is copied: databases, tables of every type (views included), partitions (listed with
``get_partition_names``, fetched with ``get_partitions_by_names`` in batches by N threads, each with
its own connections), table and partition parameters, and column statistics at table and
partition level. Hudi tables (``spark.sql.sources.provider=hudi``, an ``org.apache.hudi.hadoop.*``
input format, or ``.hoodie/`` at the location) get their HMS table copied and their timeline and
snapshot imported from storage (``import_hudi_table``): their partitions then follow the imported
commits instead of being copied.

Resumable by being idempotent: every object is compared with the source and only what is missing
or different is written, so a run interrupted anywhere is finished by running it again. The
source is only read (its client refuses anything but read calls). The run ends with a
verification that compares source and target again (names, counts, definitions, statistics) and
lists every difference.
"""

from __future__ import annotations

import copy
import os
import signal
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.Thrift import TException
from thrift.transport import TSocket, TTransport

from adapter.client import HudiMetastoreClient, _endpoints
from thrift_idl.hive_metastore import ThriftHiveMetastore
from thrift_idl.hive_metastore.ttypes import (
    ColumnStatistics,
    ColumnStatisticsDesc,
    EnvironmentContext,
    NoSuchObjectException,
    PartitionsStatsRequest,
    SetPartitionsStatsRequest,
    TableStatsRequest,
)

DEFAULT_TARGET = "thrift://127.0.0.1:9083"
VIEW_TYPES = ("VIRTUAL_VIEW", "MATERIALIZED_VIEW")
HUDI_INPUT_FORMAT_PREFIX = "org.apache.hudi.hadoop."
# Test hook: SIGKILL this process after that many partition batches were written (resume tests).
_ABORT_ENV = "HMS_MIGRATE_TEST_KILL_AFTER_BATCHES"

# Fields a metastore sets itself (times, ids, catalogs, grants): not compared, not copied.
_IGNORED_FIELDS = {"createTime", "lastAccessTime", "catName", "privileges", "id", "writeId",
                   "isStatsCompliant", "colStats", "accessType", "requiredReadCapabilities",
                   "requiredWriteCapabilities", "ownerType", "temporary", "creationMetadata",
                   "createType", "managedLocationUri", "fileMetadata", "lastAnalyzed",
                   "catalogName"}
_IGNORED_PARAMS = {"transient_lastDdlTime"}
# Writes carry the source's statistics parameters as they are: the target must not compute its own.
_KEEP_STATS = {"DO_NOT_UPDATE_STATS": "true"}


def _env() -> EnvironmentContext:
    return EnvironmentContext(properties=dict(_KEEP_STATS))


class MigrationError(Exception):
    """A migration that cannot start or go on (e.g. a metastore is unreachable)."""


# --------------------------------------------------------------------------- connections


class ReadOnlySource:
    """A plain ThriftHiveMetastore client on the source that only lets read calls through."""

    _READS = frozenset({"getMetaConf", "getVersion", "getName", "getStatus"})

    def __init__(self, uri: str, timeout_s: float = 120):
        host, port = _endpoints(uri)[0]
        sock = TSocket.TSocket(host, port)
        sock.setTimeout(int(timeout_s * 1000))
        self._transport = TTransport.TBufferedTransport(sock)
        self._client = ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(self._transport))
        self._transport.open()

    def __getattr__(self, name):
        if not (name.startswith("get_") or name in self._READS):
            raise PermissionError(f"migrate only reads from the source metastore; refused call {name}")
        return getattr(self._client, name)

    def close(self) -> None:
        try:
            self._transport.close()
        except Exception:  # noqa: BLE001
            pass


class _Connections:
    """One source and one target connection per thread."""

    def __init__(self, source_uri: str, target_uri: str):
        self.source_uri, self.target_uri = source_uri, target_uri
        self._local = threading.local()
        self._all: list = []
        self._lock = threading.Lock()

    def source(self) -> ReadOnlySource:
        c = getattr(self._local, "source", None)
        if c is None:
            try:
                c = ReadOnlySource(self.source_uri)
            except (TException, OSError) as exc:
                raise MigrationError(f"cannot connect to the source metastore {self.source_uri}: {exc}") from exc
            self._local.source = c
            with self._lock:
                self._all.append(c)
        return c

    def target(self) -> HudiMetastoreClient:
        c = getattr(self._local, "target", None)
        if c is None:
            c = HudiMetastoreClient(self.target_uri, timeout_s=300, retries=2)
            self._local.target = c
            with self._lock:
                self._all.append(c)
        return c

    def close(self) -> None:
        with self._lock:
            for c in self._all:
                c.close()
            self._all.clear()


# --------------------------------------------------------------------------- comparison


def plain(obj):
    """A Thrift struct as nested dicts without the fields a metastore sets itself; None and empty
    collections dropped, so that "absent" and "empty" compare equal."""
    if hasattr(obj, "thrift_spec"):
        out = {}
        for spec in obj.thrift_spec or ():
            if spec is None:
                continue
            name = spec[2]
            if name in _IGNORED_FIELDS:
                continue
            v = plain(getattr(obj, name, None))
            if v is not None and v != {} and v != []:
                out[name] = v
        return out
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items() if k not in _IGNORED_PARAMS}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    return obj


def _table_view(t) -> dict:
    d = plain(t)
    d["tableName"] = (t.tableName or "").lower()
    d["dbName"] = (t.dbName or "").lower()
    return d


def _partition_view(p) -> dict:
    d = plain(p)
    d["tableName"] = (p.tableName or "").lower()
    d["dbName"] = (p.dbName or "").lower()
    return d


def _database_view(d) -> dict:
    v = plain(d)
    v["name"] = (d.name or "").lower()
    v.pop("type", None)  # Hive 4: NATIVE, set by the metastore (Hive 2.3 has no such field)
    return v


def _stats_view(objs) -> list:
    return sorted((plain(o) for o in objs or []), key=lambda o: o.get("colName", ""))


def _differing_fields(a: dict, b: dict) -> list[str]:
    """Names of differing fields; parameters are named per key (`parameters.numRows`)."""
    out = []
    for k in sorted(set(a) | set(b)):
        x, y = a.get(k), b.get(k)
        if x == y:
            continue
        if k == "parameters" and isinstance(x or {}, dict) and isinstance(y or {}, dict):
            x, y = x or {}, y or {}
            out += [f"parameters.{p}" for p in sorted(set(x) | set(y)) if x.get(p) != y.get(p)]
        else:
            out.append(k)
    return out


def _for_write(obj):
    """A copy of a source object without the fields the target sets itself."""
    c = copy.deepcopy(obj)
    for name in ("privileges", "catName", "id", "writeId", "creationMetadata"):
        if hasattr(c, name):
            setattr(c, name, None)
    return c


def is_hudi_table(t) -> bool:
    """Hudi tables as hive-sync and Hudi's Spark catalog register them, or any table whose location
    holds a `.hoodie/` folder."""
    params = t.parameters or {}
    if (params.get("spark.sql.sources.provider") or "").lower() == "hudi":
        return True
    if t.sd is not None and (t.sd.inputFormat or "").startswith(HUDI_INPUT_FORMAT_PREFIX):
        return True
    location = table_location(t)
    if not location or t.tableType in VIEW_TYPES:
        return False
    try:
        import fsspec

        fs, root = fsspec.core.url_to_fs(location)
        return bool(fs.isdir(root.rstrip("/") + "/.hoodie"))
    except Exception:  # noqa: BLE001 - an unreadable location is just not known to be Hudi
        return False


def table_location(t) -> str | None:
    if t.sd is None:
        return None
    path = (t.sd.serdeInfo.parameters or {}).get("path") if t.sd.serdeInfo else None
    return t.sd.location or path


# --------------------------------------------------------------------------- progress


class Progress:
    """A progress bar on stderr: redrawn in place on a terminal, a few plain lines otherwise."""

    def __init__(self, label: str, total: int, stream=None, enabled: bool = True):
        self.label, self.total, self.done = label, max(0, total), 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self._lock = threading.Lock()
        self._last_step = -1
        self._t0 = time.monotonic()
        self._draw()

    def update(self, n: int = 1) -> None:
        with self._lock:
            self.done += n
            self._draw()

    def close(self) -> None:
        with self._lock:
            if self.tty:
                self.stream.write("\n")
                self.stream.flush()
            elif self.enabled and self._last_step < 10:
                self._last_step = 9
                self._draw(force=True)

    def _draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        frac = 1.0 if self.total == 0 else min(1.0, self.done / self.total)
        text = f"{self.label} {self.done}/{self.total} ({time.monotonic() - self._t0:.1f} s)"
        if self.tty:
            width = 30
            bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
            self.stream.write(f"\r[{bar}] {text}\x1b[K")
            self.stream.flush()
            return
        step = int(frac * 10)  # a line at 0 %, every 10 % and at the end
        if step > self._last_step or force:
            self._last_step = step
            self.stream.write(text + "\n")
            self.stream.flush()


# --------------------------------------------------------------------------- report


@dataclass
class TableCheck:
    name: str
    table_type: str = ""
    hudi: bool = False
    source_partitions: int = 0
    target_partitions: int = 0
    differences: list[str] = field(default_factory=list)


@dataclass
class DatabaseCheck:
    name: str
    source_tables: list[str] = field(default_factory=list)
    target_tables: list[str] = field(default_factory=list)
    tables: list[TableCheck] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)


@dataclass
class MigrationReport:
    source: str
    target: str
    dry_run: bool = False
    databases_created: int = 0
    databases_updated: int = 0
    tables_created: int = 0
    tables_updated: int = 0
    partitions_added: int = 0
    partitions_updated: int = 0
    table_stats_written: int = 0
    partition_stats_written: int = 0
    hudi_imports: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    verification: list[DatabaseCheck] = field(default_factory=list)

    @property
    def differences(self) -> list[str]:
        out = []
        for d in self.verification:
            out += [f"{d.name}: {x}" for x in d.differences]
            for t in d.tables:
                out += [f"{d.name}.{t.name}: {x}" for x in t.differences]
        return out

    def format(self) -> str:
        verb = "would be" if self.dry_run else ""
        w = (lambda s: f"{s} (dry run)") if self.dry_run else (lambda s: s)
        lines = [w(f"migrate {self.source} -> {self.target}"),
                 f"  databases created {self.databases_created}, updated {self.databases_updated}",
                 f"  tables created {self.tables_created}, updated {self.tables_updated}",
                 f"  partitions added {self.partitions_added}, updated {self.partitions_updated}",
                 f"  column statistics written: {self.table_stats_written} table(s), "
                 f"{self.partition_stats_written} partition(s)"]
        if verb:
            lines.append("  (counts are what would be written)")
        for h in self.hudi_imports:
            lines.append(f"  hudi: {h}")
        for e in self.errors:
            lines.append(f"  error: {e}")
        title = "verification (source vs target)" + (" before any write" if self.dry_run else "")
        lines.append(title)
        for d in self.verification:
            lines.append(f"  database {d.name}: {len(d.source_tables)} table(s) in source, "
                         f"{len(d.target_tables)} in target")
            for x in d.differences:
                lines.append(f"    DIFF {x}")
            for t in d.tables:
                kind = t.table_type + (" hudi" if t.hudi else "")
                state = "ok" if not t.differences else f"{len(t.differences)} difference(s)"
                lines.append(f"    {t.name:<32} {kind:<22} partitions {t.source_partitions}/{t.target_partitions}"
                             f"  {state}")
                for x in t.differences[:50]:
                    lines.append(f"      DIFF {x}")
                if len(t.differences) > 50:
                    lines.append(f"      ... {len(t.differences) - 50} more")
        diffs = self.differences
        lines.append(f"differences: {len(diffs)}" if diffs else "differences: none")
        return "\n".join(lines)


# --------------------------------------------------------------------------- migration


class Migration:
    def __init__(self, source: str, target: str = DEFAULT_TARGET, databases: str = "*", dry_run: bool = False,
                 parallel: int = 4, batch_size: int = 500, progress: bool = True, log=None):
        self.source_uri, self.target_uri = source, target
        self.pattern = databases or "*"
        self.dry_run = dry_run
        self.parallel = max(1, int(parallel))
        self.batch_size = max(1, int(batch_size))
        self.progress = progress
        self.log = log or sys.stderr
        self.conns = _Connections(source, target)
        self.report = MigrationReport(source, target, dry_run)
        self._lock = threading.Lock()
        self._batches_written = 0
        self._kill_after = int(os.environ.get(_ABORT_ENV, "0") or 0)

    # ------------------------------------------------------------------ entry
    def run(self) -> MigrationReport:
        try:
            dbs = self._preflight()
            with ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="migrate") as pool:
                self.pool = pool
                for db in dbs:
                    self._migrate_database(db)
                self.report.verification = [self._verify_database(db) for db in dbs]
        finally:
            self.conns.close()
        return self.report

    def _preflight(self) -> list[str]:
        """Reach both metastores and list the source's databases before anything is written."""
        src = self.conns.source()
        try:
            dbs = sorted(src.get_databases(self.pattern))
        except (TException, OSError) as exc:
            raise MigrationError(f"cannot list databases of the source metastore {self.source_uri}: "
                                 f"{getattr(exc, 'message', None) or exc}") from exc
        try:
            self.conns.target().get_all_databases()
        except (TException, OSError) as exc:
            raise MigrationError(f"cannot reach the target metastore {self.target_uri}: {exc}") from exc
        return dbs

    # ------------------------------------------------------------------ databases
    def _migrate_database(self, name: str) -> None:
        src, tgt = self.conns.source(), self.conns.target()
        sdb = src.get_database(name)
        try:
            tdb = tgt.get_database(name)
        except NoSuchObjectException:
            tdb = None
        if tdb is None:
            self.report.databases_created += 1
            if not self.dry_run:
                tgt.create_database(_for_write(sdb))
        elif self._db_diff(sdb, tdb):
            self.report.databases_updated += 1
            if not self.dry_run:
                new = _for_write(sdb)
                new.locationUri = tdb.locationUri  # an existing database keeps its location
                tgt.alter_database(name, new)
        names = sorted(src.get_all_tables(name))
        bar = Progress(f"database {name}: tables", len(names), self.log, self.progress)
        for tables in _chunks(names, 100):
            for t in src.get_table_objects_by_name(name, tables):
                try:
                    self._migrate_table(t)
                except (TException, OSError) as exc:
                    self.report.errors.append(f"{name}.{t.tableName}: {getattr(exc, 'message', None) or exc}")
                bar.update()
        bar.close()

    @staticmethod
    def _db_diff(sdb, tdb) -> list[str]:
        a, b = _database_view(sdb), _database_view(tdb)
        a.pop("locationUri", None)
        b.pop("locationUri", None)
        return _differing_fields(a, b)

    # ------------------------------------------------------------------ tables
    def _migrate_table(self, t) -> None:
        db, name = t.dbName.lower(), t.tableName.lower()
        tgt = self.conns.target()
        hudi = is_hudi_table(t)
        try:
            cur = tgt.get_table(db, name)
        except NoSuchObjectException:
            cur = None
        if cur is None:
            self.report.tables_created += 1
            if not self.dry_run:
                new = _for_write(t)
                if t.tableType not in VIEW_TYPES and not t.partitionKeys:  # Hive drops it, keeps the stats
                    new.parameters = dict(new.parameters or {}, **_KEEP_STATS)
                tgt.create_table_with_environment_context(new, _env())
        elif _table_view(cur) != _table_view(t) and not hudi:
            self.report.tables_updated += 1
            if not self.dry_run:
                tgt.alter_table_with_environment_context(db, name, _for_write(t), _env())
        if hudi:
            self._import_hudi(t)
        if t.tableType in VIEW_TYPES:
            return
        self._sync_table_stats(t, apply=not self.dry_run, count=True)
        if t.partitionKeys:
            self._sync_partitions(t, hudi, apply=not self.dry_run)

    def _import_hudi(self, t) -> None:
        db, name = t.dbName.lower(), t.tableName.lower()
        location = table_location(t)
        try:
            from adapter.commands.import_hudi import import_hudi_table

            r = import_hudi_table(self.target_uri, location, db, name, dry_run=self.dry_run)
        except Exception as exc:  # noqa: BLE001 - reported, the rest of the migration goes on
            self.report.errors.append(f"{db}.{name}: Hudi import from {location} failed: {exc}")
            return
        imported = getattr(r, "instants_imported", [])
        self.report.hudi_imports.append(
            f"{db}.{name} from {location}: {len(imported)} instant(s) "
            f"{'to import' if self.dry_run else 'imported'}, {getattr(r, 'instants_skipped', 0)} already there")

    # ------------------------------------------------------------------ statistics
    def _sync_table_stats(self, t, apply: bool, count: bool = False) -> list[str]:
        cols = [c.name for c in (t.sd.cols if t.sd else []) or []]
        if not cols:
            return []
        db, name = t.dbName.lower(), t.tableName.lower()
        s = self.conns.source().get_table_statistics_req(TableStatsRequest(dbName=db, tblName=name, colNames=cols))
        try:
            cur = self.conns.target().get_table_statistics_req(
                TableStatsRequest(dbName=db, tblName=name, colNames=cols)).tableStats
        except NoSuchObjectException:
            cur = []
        want = _stats_view(s.tableStats)
        if want == _stats_view(cur) or not want:
            return []
        if count:
            with self._lock:
                self.report.table_stats_written += 1
        if apply:
            self.conns.target().update_table_column_statistics(ColumnStatistics(
                statsDesc=ColumnStatisticsDesc(isTblLevel=True, dbName=db, tableName=name),
                statsObj=list(s.tableStats)))
        return [f"table column statistics differ (columns {', '.join(o.get('colName', '') for o in want)})"]

    # ------------------------------------------------------------------ partitions
    def _sync_partitions(self, t, hudi: bool, apply: bool, verify: bool = False) -> list[str]:
        """Copy (apply) or compare the table's partitions and their statistics in parallel batches;
        returns the differences found before writing."""
        db, name = t.dbName.lower(), t.tableName.lower()
        names = list(self.conns.source().get_partition_names(db, name, -1))
        bar = None
        if len(names) > self.batch_size and not verify:
            bar = Progress(f"  {db}.{name}: partitions", len(names), self.log, self.progress)
        cols = [c.name for c in (t.sd.cols if t.sd else []) or []]
        futures = [self.pool.submit(self._partition_batch, db, name, batch, cols, hudi, apply, bar)
                   for batch in _chunks(names, self.batch_size)]
        diffs: list[str] = []
        for f in futures:
            diffs += f.result()
        if bar:
            bar.close()
        return diffs

    def _partition_batch(self, db, name, names, cols, hudi, apply, bar) -> list[str]:
        src, tgt = self.conns.source(), self.conns.target()
        want = {tuple(p.values): p for p in src.get_partitions_by_names(db, name, names)}
        try:
            have = {tuple(p.values): p for p in tgt.get_partitions_by_names(db, name, names)}
        except NoSuchObjectException:
            have = {}
        name_of = {_values_of_name(n): n for n in names}
        diffs, missing, changed = [], [], []
        for values, p in want.items():
            pname = name_of.get(values, "/".join(values))
            cur = have.get(values)
            if cur is None:
                missing.append(p)
                diffs.append(f"partition {pname} missing in target")
            elif not hudi and _partition_view(cur) != _partition_view(p):
                changed.append(p)
                fields = _differing_fields(_partition_view(cur), _partition_view(p))
                diffs.append(f"partition {pname} differs ({', '.join(fields)})")
        if hudi:  # a Hudi table's partitions come from its commits; report, never write
            missing, changed = [], []
        stats_diff, stats_writes = self._partition_stats(db, name, names, cols,
                                                         set(have) | {tuple(p.values) for p in missing})
        diffs += stats_diff
        with self._lock:
            self.report.partitions_added += len(missing) if not hudi else 0
            self.report.partitions_updated += len(changed)
            self.report.partition_stats_written += len(stats_writes)
        if apply:
            if missing:
                tgt.add_partitions([_for_write(p) for p in missing])
            if changed:
                tgt.alter_partitions_with_environment_context(db, name, [_for_write(p) for p in changed], _env())
            if stats_writes:
                tgt.set_aggr_stats_for(SetPartitionsStatsRequest(colStats=stats_writes))
            self._maybe_abort()
        if bar:
            bar.update(len(names))
        return diffs

    def _partition_stats(self, db, name, names, cols, target_values):
        """Partition column statistics differing between source and target: (differences, writes)."""
        if not cols:
            return [], []
        src, tgt = self.conns.source(), self.conns.target()
        req = PartitionsStatsRequest(dbName=db, tblName=name, colNames=cols, partNames=names)
        s = src.get_partitions_statistics_req(req).partStats or {}
        if not s:
            return [], []
        try:
            cur = tgt.get_partitions_statistics_req(req).partStats or {}
        except NoSuchObjectException:
            cur = {}
        diffs, writes = [], []
        for part_name, objs in sorted(s.items()):
            if _stats_view(objs) == _stats_view(cur.get(part_name)):
                continue
            diffs.append(f"partition {part_name} column statistics differ")
            if _values_of_name(part_name) in target_values:  # else the partition itself is reported
                writes.append(ColumnStatistics(
                    statsDesc=ColumnStatisticsDesc(isTblLevel=False, dbName=db, tableName=name, partName=part_name),
                    statsObj=list(objs)))
        return diffs, writes

    def _maybe_abort(self) -> None:
        if not self._kill_after:
            return
        with self._lock:
            self._batches_written += 1
            if self._batches_written >= self._kill_after:
                os.kill(os.getpid(), signal.SIGKILL)

    # ------------------------------------------------------------------ verification
    def _verify_database(self, name: str) -> DatabaseCheck:
        src, tgt = self.conns.source(), self.conns.target()
        check = DatabaseCheck(name)
        sdb = src.get_database(name)
        try:
            tdb = tgt.get_database(name)
        except NoSuchObjectException:
            check.source_tables = sorted(src.get_all_tables(name))
            check.differences.append("database missing in target")
            return check
        for f in self._db_diff(sdb, tdb):
            check.differences.append(f"database {f} differs")
        check.source_tables = sorted(src.get_all_tables(name))
        check.target_tables = sorted(tgt.get_all_tables(name))
        for n in sorted(set(check.source_tables) - set(check.target_tables)):
            check.differences.append(f"table {n} missing in target")
        for n in sorted(set(check.target_tables) - set(check.source_tables)):
            check.differences.append(f"table {n} only in target")
        common = [n for n in check.source_tables if n in set(check.target_tables)]
        for tables in _chunks(common, 100):
            for t in src.get_table_objects_by_name(name, tables):
                check.tables.append(self._verify_table(t))
        return check

    def _verify_table(self, t) -> TableCheck:
        db, name = t.dbName.lower(), t.tableName.lower()
        tgt = self.conns.target()
        hudi = is_hudi_table(t)
        check = TableCheck(name, t.tableType or "", hudi)
        cur = tgt.get_table(db, name)
        fields = _differing_fields(_table_view(cur), _table_view(t))
        if fields:
            check.differences.append(f"table definition differs ({', '.join(fields)})")
        if t.tableType in VIEW_TYPES:
            return check
        check.differences += self._sync_table_stats(t, apply=False)
        if not t.partitionKeys:
            return check
        snames = list(self.conns.source().get_partition_names(db, name, -1))
        tnames = list(tgt.get_partition_names(db, name, -1))
        check.source_partitions, check.target_partitions = len(snames), len(tnames)
        check.differences += self._sync_partitions(t, hudi, apply=False, verify=True)
        extra = sorted(set(tnames) - set(snames))
        check.differences += [f"partition {p} only in target" for p in extra]
        return check


def _values_of_name(part_name: str) -> tuple:
    from urllib.parse import unquote

    return tuple(unquote(kv.partition("=")[2]) for kv in part_name.split("/"))


def _chunks(items: list, n: int):
    for i in range(0, len(items), n):
        yield items[i:i + n]


def migrate(source: str, target: str = DEFAULT_TARGET, databases: str = "*", dry_run: bool = False,
            parallel: int = 4, batch_size: int = 500, progress: bool = True) -> MigrationReport:
    """Run a migration; raises MigrationError when a metastore cannot be reached (nothing written)."""
    return Migration(source, target, databases, dry_run, parallel, batch_size, progress).run()


def main(args) -> int:
    """CLI entry: 0 when source and target agree at the end, 1 when differences remain, 2 on error."""
    import logging

    logging.getLogger("thrift.transport.TSocket").setLevel(logging.CRITICAL)  # we say it once, plainly
    try:
        report = migrate(args.source, args.to, args.databases, args.dry_run, args.parallel, args.batch_size,
                         progress=not args.quiet)
    except MigrationError as exc:
        print(f"migrate: {exc}", file=sys.stderr)
        return 2
    except ValueError as exc:  # a malformed URI
        print(f"migrate: {exc}", file=sys.stderr)
        return 2
    print(report.format())
    return 1 if report.differences or report.errors else 0


def add_parser(sub) -> None:
    p = sub.add_parser("migrate", help="copy a running Hive Metastore into this server and verify it")
    p.add_argument("--from", dest="source", required=True, metavar="thrift://host:port",
                   help="the Hive Metastore to copy (only read)")
    p.add_argument("--to", default=DEFAULT_TARGET, metavar="thrift://host:port",
                   help="this server (default: %(default)s)")
    p.add_argument("--databases", default="*", metavar="PATTERN",
                   help="Hive pattern of the databases to copy ('*' any text, '|' alternatives; default all)")
    p.add_argument("--dry-run", action="store_true", help="write nothing; report what would be copied")
    p.add_argument("--parallel", type=int, default=4, metavar="N",
                   help="threads (each with its own connections) copying partition batches (default 4)")
    p.add_argument("--batch-size", type=int, default=500, help="partitions per get_partitions_by_names call")
    p.add_argument("--quiet", action="store_true", help="no progress output on stderr")
    p.set_defaults(fn=main)
