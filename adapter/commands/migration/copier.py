"""The copy: databases in name order, their tables in batches, each table's statistics and
partitions (table_sync.py); Hudi tables get their timeline imported from storage instead of their
partitions copied. Idempotent: only what is missing or different is written."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

from thrift.Thrift import TException

from adapter.commands.import_hudi import import_hudi_table
from adapter.commands.table_cli import DEFAULT_METASTORE
from client import AuthenticationError
from thrift_idl.hive_metastore.ttypes import NoSuchObjectException

from .compare import VIEW_TYPES, chunks, database_diff, for_write, is_hudi_table, table_location, table_view
from .progress import Progress
from .report import MigrationReport
from .source import Connections, MigrationError
from .table_sync import KEEP_STATS, TableSync, keep_stats
from .verify import verify_database

DEFAULT_TARGET = DEFAULT_METASTORE


class Migration:
    """One run: preflight, the copy (or, dry, its counts) and the closing verification."""

    def __init__(self, source: str, target: str = DEFAULT_TARGET, databases: str = "*", dry_run: bool = False,
                 parallel: int = 4, batch_size: int = 500, progress: bool = True, log=None, security=None):
        self.source_uri, self.target_uri = source, target
        self.pattern = databases or "*"
        self.dry_run = dry_run
        self.parallel = max(1, int(parallel))
        self.batch_size = max(1, int(batch_size))
        self.progress = progress
        self.log = log or sys.stderr
        self.security = security  # the target's log-in (client Security)
        self.conns = Connections(source, target, security)
        self.report = MigrationReport(source, target, dry_run)

    def run(self) -> MigrationReport:
        try:
            dbs = self._preflight()
            with ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="migrate") as pool:
                sync = TableSync(self.conns, self.report, pool, self.batch_size, self.progress, self.log)
                for db in dbs:
                    self._migrate_database(sync, db)
                self.report.verification = [verify_database(self.conns, sync, db) for db in dbs]
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
        except AuthenticationError:
            raise
        except (TException, OSError) as exc:
            raise MigrationError(f"cannot reach the target metastore {self.target_uri}: {exc}") from exc
        return dbs

    # ------------------------------------------------------------------ databases
    def _migrate_database(self, sync: TableSync, name: str) -> None:
        src = self.conns.source()
        self._copy_database(name, src.get_database(name))
        names = sorted(src.get_all_tables(name))
        bar = Progress(f"database {name}: tables", len(names), self.log, self.progress)
        for tables in chunks(names, 100):
            for t in src.get_table_objects_by_name(name, tables):
                try:
                    self._migrate_table(sync, t)
                except (TException, OSError) as exc:
                    self.report.errors.append(f"{name}.{t.tableName}: {getattr(exc, 'message', None) or exc}")
                bar.update()
        bar.close()

    def _copy_database(self, name: str, sdb) -> None:
        tgt = self.conns.target()
        try:
            tdb = tgt.get_database(name)
        except NoSuchObjectException:
            tdb = None
        if tdb is None:
            self.report.databases_created += 1
            if not self.dry_run:
                tgt.create_database(for_write(sdb))
        elif database_diff(sdb, tdb):
            self.report.databases_updated += 1
            if not self.dry_run:
                new = for_write(sdb)
                new.locationUri = tdb.locationUri  # an existing database keeps its location
                tgt.alter_database(name, new)

    # ------------------------------------------------------------------ tables
    def _migrate_table(self, sync: TableSync, t) -> None:
        hudi = is_hudi_table(t)
        self._copy_table(t, hudi)
        if hudi:
            self._import_hudi(t)
        if t.tableType in VIEW_TYPES:
            return
        sync.table_stats(t, apply=not self.dry_run, count=True, hudi=hudi)
        if t.partitionKeys:
            sync.partitions(t, hudi, apply=not self.dry_run)

    def _copy_table(self, t, hudi: bool) -> None:
        db, name = t.dbName.lower(), t.tableName.lower()
        tgt = self.conns.target()
        try:
            cur = tgt.get_table(db, name)
        except NoSuchObjectException:
            cur = None
        if cur is None:
            self.report.tables_created += 1
            if not self.dry_run:
                new = for_write(t)
                if t.tableType not in VIEW_TYPES and not t.partitionKeys:  # Hive drops it, keeps the stats
                    new.parameters = dict(new.parameters or {}, **KEEP_STATS)
                tgt.create_table_with_environment_context(new, keep_stats())
        elif table_view(cur) != table_view(t) and not hudi:
            self.report.tables_updated += 1
            if not self.dry_run:
                tgt.alter_table_with_environment_context(db, name, for_write(t), keep_stats())

    def _import_hudi(self, t) -> None:
        db, name = t.dbName.lower(), t.tableName.lower()
        location = table_location(t)
        try:
            if location is None:
                raise MigrationError("the table has no location")
            r = import_hudi_table(self.target_uri, location, db, name, dry_run=self.dry_run, security=self.security)
        except Exception as exc:  # reported; the rest of the migration goes on
            self.report.errors.append(f"{db}.{name}: Hudi import from {location} failed: {exc}")
            return
        self.report.hudi_imports.append(
            f"{db}.{name} from {location}: {len(r.instants_imported)} instant(s) "
            f"{'to import' if self.dry_run else 'imported'}, {r.instants_skipped} already there")
