"""`hudi-metastore import-hudi`: bootstrap an existing Hudi table from storage through the server.

RFC-15 "first time initialization" of an existing dataset, done through the metastore: the active
timeline on storage (hudi_format/storage_timeline.py) is replayed with the instants' own times, states
and metadata (`import_hudi_instants`), and the files of instants archived before it are taken from
one listing of the table's partitions (hudi_format/listing.py). Every instant file is read and
parsed before anything is written, so bad input (not a Hudi table, an unsupported table version, a
corrupt commit file) changes nothing. Running it again sends only instants new on storage (or in a
later state); the server leaves what it has alone.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field

from adapter.commands.column_stats_build import build_column_stats
from adapter.commands.record_index_build import build_or_turn_off, has_index
from adapter.commands.table_cli import login_hint, security_of, split_table
from client import (
    AuthenticationError,
    HudiCatalog,
    ImportedInstant,
    MetastoreError,
    NotFound,
    Security,
    TransportError,
)
from hudi_format.config_keys import (
    CHECKSUM,
    DATABASE_NAME,
    INDEX_TYPE,
    PROPERTIES_FILE,
    RECORD_INDEX_UPDATE_PARTITION_PATH,
    TABLE_NAME,
    TIMELINE_SOURCE,
)
from hudi_format.errors import HudiStorageError, InvalidMetadata
from hudi_format.file_slice import FileInfo
from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED, STATE_NAMES, STATES, instant_key
from hudi_format.listing import list_table, storage_view
from hudi_format.storage_changes import (
    archive_unseen,
    check_partitions,
    config_from_storage,
    instant_files,
    new_instants,
    written_by,
)
from hudi_format.storage_timeline import StorageInstant, StorageTimeline
from hudi_format.table_config import HudiTableConfig

# the metastore's own: whether it keeps the table's record index (storage knows nothing of it)
INDEX_PROPERTIES = (INDEX_TYPE, RECORD_INDEX_UPDATE_PARTITION_PATH)
# ... and whether it follows the table's timeline on storage (a table Hudi's sync created)
METASTORE_PROPERTIES = (*INDEX_PROPERTIES, TIMELINE_SOURCE)
TRACKED = "storage"  # TIMELINE_SOURCE of a table whose timeline is on storage (catch_up.STORAGE)


class HudiImportError(ValueError):
    """Bad input for an import (the message says what); nothing was changed."""


@dataclass
class ImportReport:
    """What an import did (or, with dry_run, would do)."""

    db: str
    table: str
    base_path: str
    table_version: int = 0
    table_type: str = ""
    registered: bool = False            # the table was new to the server
    instants_imported: list[str] = field(default_factory=list)   # "<ts>.<action>.<STATE>"
    instants_skipped: int = 0           # already on the server in that state
    bootstrap_files: int = 0            # files recorded from the listing (archived instants)
    removed_files: int = 0              # live files marked deleted (repair)
    config_updated: bool = False        # the server's hoodie.properties were taken from storage
    resized_files: int = 0              # live files whose size was taken from the listing (repair)
    partitions: int = -1                # partitions on storage (-1: not listed, nothing needed it)
    dry_run: bool = False
    database_created: bool = False      # the database was new to the server (created, as hive-sync does)
    index_keys: int | None = None       # keys in the record index built from storage
    index_note: str | None = None       # why no record index was built
    stats_files: int = 0                # files whose column statistics were read from their footers
    stats_note: str | None = None       # why no column statistics were computed

    @property
    def changed(self) -> bool:
        return (self.database_created or self.registered or self.config_updated or bool(self.instants_imported)
                or self.bootstrap_files > 0 or self.removed_files > 0 or self.resized_files > 0)

    def lines(self) -> list[str]:
        verb = "would import" if self.dry_run else "imported"
        out = [f"{self.db}.{self.table} <- {self.base_path} (table version {self.table_version}, {self.table_type})"]
        if self.database_created:
            out.append(f"  {'would create' if self.dry_run else 'created'} the database {self.db}")
        if self.registered:
            out.append(f"  {'would register' if self.dry_run else 'registered'} the table")
        if self.config_updated:
            out.append(f"  {'would take' if self.dry_run else 'took'} the table config from {PROPERTIES_FILE}")
        out.append(f"  {verb} {len(self.instants_imported)} instant(s), {self.instants_skipped} already on the server")
        out += [f"    {i}" for i in self.instants_imported]
        if self.bootstrap_files:
            out.append(f"  {verb} {self.bootstrap_files} file(s) from the listing (no imported instant names them)")
        if self.resized_files:
            out.append(f"  {'would take' if self.dry_run else 'took'} the size of {self.resized_files} file(s) "
                       "from the listing")
        if self.removed_files:
            mark = "would mark" if self.dry_run else "marked"
            out.append(f"  {mark} {self.removed_files} file(s) missing on storage deleted")
        if self.partitions >= 0:
            out.append(f"  listed storage: {self.partitions} partition(s)")
        if self.index_keys is not None:
            out.append(f"  built the record index: {self.index_keys} key(s) ({INDEX_TYPE}=RECORD_INDEX)")
        if self.index_note:
            out.append(f"  no record index: {self.index_note}")
        if self.stats_files:
            out.append(f"  column statistics from the footers of {self.stats_files} base file(s)")
        if self.stats_note:
            out.append(f"  no column statistics: {self.stats_note}")
        if not self.changed:
            out.append("  nothing to do: the server is up to date")
        return out


# --------------------------------------------------------------------------- reading storage


def _instant_files(tl: StorageTimeline, inst: StorageInstant) -> dict[int, bytes | None]:
    """Each state's file, the completed one parsed: a corrupt file fails here, before any write."""
    try:
        return instant_files(tl, inst)
    except InvalidMetadata as exc:
        raise HudiImportError(exc.message) from None


def _check_partitions(tl: StorageTimeline, cfg: HudiTableConfig, inst: StorageInstant,
                      written: set[tuple[str, str]]) -> None:
    try:
        check_partitions(tl, cfg, inst, written)
    except InvalidMetadata as exc:
        raise HudiImportError(exc.message) from None


def read_table(base_path: str) -> StorageTimeline:
    try:
        return StorageTimeline.read(base_path)
    except HudiStorageError as exc:
        raise HudiImportError(str(exc)) from None


def table_config(tl: StorageTimeline, db: str, table: str) -> HudiTableConfig:
    try:
        return config_from_storage(tl, db, table)
    except InvalidMetadata as exc:
        raise HudiImportError(exc.message) from None


# --------------------------------------------------------------------------- import


def sync_from_storage(client: HudiCatalog, tl: StorageTimeline, db: str, table: str, report: ImportReport,
                      reconcile: bool = False, config: HudiTableConfig | None = None) -> ImportReport:
    """Bring the server's db.table up to storage: instants new on storage (or in a later state) and,
    on a first import, a reconcile (repair) or when instants were archived unseen, the listing."""
    server = {instant_key(i.ts, i.action): i for i in client.list_instants(db, table)} if not report.registered else {}
    payload, written = _instants_to_send(tl, server, report)
    listed, missing = _files_to_send(client, tl, db, table, server, written, reconcile, report)
    report.bootstrap_files = len(listed) - report.resized_files
    report.removed_files = len(missing)
    if config is not None:
        report.config_updated = True
    if report.dry_run or not (payload or listed or missing or config is not None):
        return report
    report.bootstrap_files = report.removed_files = report.resized_files = 0
    for instants, files, gone, cfg in _calls(payload, listed, missing, config):
        result = client.import_hudi_instants(db, table, instants, files, gone, cfg)
        report.bootstrap_files += result.files_added
        report.removed_files += result.files_removed
        report.resized_files += result.files_resized
    return report


def _instants_to_send(tl: StorageTimeline, server: dict, report: ImportReport
                      ) -> tuple[list[ImportedInstant], set[tuple[str, str]]]:
    """The instants new on storage (or in a later state there) as the import sends them, and the
    (partition, file name) of the files their completed metadata names."""
    todo = new_instants(tl, {key: STATES[i.state] for key, i in server.items()})
    report.instants_skipped = len(tl.instants) - len(todo)
    payload, written = [], set()
    for inst in todo:
        files = _instant_files(tl, inst)
        if inst.state == COMPLETED:
            written |= written_by(inst, files[COMPLETED])
        payload.append(ImportedInstant(
            timestamp=inst.ts, action=inst.action, state=inst.state,
            completion_time=inst.completion_ts if inst.state == COMPLETED else None,
            requested=files.get(REQUESTED), inflight=files.get(INFLIGHT), completed=files.get(COMPLETED)))
        report.instants_imported.append(f"{inst.ts}.{inst.done_action if inst.state == COMPLETED else inst.action}"
                                        f".{STATE_NAMES[inst.state]}")
    return payload, written


def _files_to_send(client: HudiCatalog, tl: StorageTimeline, db: str, table: str, server: dict,
                   written: set[tuple[str, str]], reconcile: bool, report: ImportReport
                   ) -> tuple[list[FileInfo], list[FileInfo]]:
    """(files to record from one listing of the table, live files storage no longer has). The table
    is listed on a first import, a reconcile, or when the server missed instants archived since."""
    unseen_archive = archive_unseen(tl, {key: STATES[i.state] for key, i in server.items()})
    if server and not reconcile and not unseen_archive:
        return [], []
    listing = list_table(tl)
    report.partitions = len(listing.partitions)
    view = storage_view(tl, listing)
    # files the instants sent now account for are theirs
    listed = [f for f in view.files if (f.partition_path, f.name) not in written]
    if not server:
        return listed, []
    # only what the server lacks (it skips files it has rows for)
    partitions = set(client.get_hudi_partitions(db, table)) | {f.partition_path for f in listed}
    live = {(f.partition_path, f.name): f for p in sorted(partitions) for f in client.get_all_files(db, table, p)}
    listed = [f for f in listed if (f.partition_path, f.name) not in live]
    if not reconcile:
        return listed, []
    resized = [f for f in view.files if (f.partition_path, f.name) in live  # sizes are the listing's
               and live[(f.partition_path, f.name)].size != f.size]
    report.resized_files = len(resized)
    on_storage = {(f.partition_path, f.name) for f in listing.files}
    missing = [f for key, f in live.items() if key not in on_storage and key not in written]
    return listed + resized, missing


CALL_BYTES = 16 << 20  # instant metadata per call, well below the server's message size limit
CALL_FILES = 20_000  # listed files per call


# one import_hudi_instants call: instants, listed files, missing files, config
_Call = tuple[list[ImportedInstant], list[FileInfo], list[FileInfo], HudiTableConfig | None]


def _calls(payload: list[ImportedInstant], listed: list[FileInfo], missing: list[FileInfo],
           config: HudiTableConfig | None) -> list[_Call]:
    """The import as calls of bounded size, each one transaction: listed files first, then the
    instants in timestamp order. An interrupted import is finished by running it again: the
    server skips what it has, and a table without instants gets the listing again."""
    calls: list[_Call] = [([], listed[i:i + CALL_FILES], [], None) for i in range(0, len(listed), CALL_FILES)]
    chunk: list[ImportedInstant] = []
    size = 0
    for inst in payload:
        n = sum(len(x or b"") for x in (inst.requested, inst.inflight, inst.completed))
        if chunk and size + n > CALL_BYTES:
            calls.append((chunk, [], [], None))
            chunk = []
            size = 0
        chunk.append(inst)
        size += n
    if chunk:
        calls.append((chunk, [], [], None))
    if not calls:
        calls.append(([], [], [], None))
    first = calls[0]
    calls[0] = (first[0], first[1], list(missing), config)
    return calls


def import_hudi_table(metastore: str, base_path: str, db: str, table: str,
                      dry_run: bool = False, create_database: bool = True,
                      record_index: bool = True, column_stats: bool = True,
                      security: Security | None = None, connect_retries: int | None = None) -> ImportReport:
    """Import the Hudi table at base_path as db.table into the server at metastore (thrift://host:port).
    A database the server does not have is created (as Hudi's hive-sync does) unless
    `create_database` is False; it is dropped again when the import fails.

    `record_index`: a table the import registers gets a record-level index built from storage's
    latest file slices (adapter/commands/record_index_build.py); a table keeping one has it rebuilt
    when the import changed its file slices.

    `column_stats`: the latest base files without column statistics get them from their footers
    (adapter/commands/column_stats_build.py; resumable: a rerun reads only what is missing).

    Idempotent and incremental: a second run imports only instants new on storage. Raises
    HudiImportError (a ValueError) with a clear message for bad input; nothing is changed then.
    Metastore errors (unreachable, refusals: client/errors.py) propagate as they are. `security`:
    how to log in (client/security.py).
    """
    if ":" not in base_path.split("/")[0]:  # a local path: the server must not resolve it from its own cwd
        base_path = os.path.abspath(base_path)
    tl = read_table(base_path)
    cfg = table_config(tl, db, table)
    for inst in tl.instants:  # every instant file is read and parsed before anything is written
        files = _instant_files(tl, inst)
        if inst.state == COMPLETED:
            _check_partitions(tl, cfg, inst, written_by(inst, files[COMPLETED]))
    report = ImportReport(db.lower(), table.lower(), base_path, tl.table_version, cfg.table_type, dry_run=dry_run)
    # a large import is one long call
    with HudiCatalog(metastore, timeout_s=600, security=security, connect_retries=connect_retries) as client:
        _ensure_database(client, report, create_database)
        try:
            report = _import(client, tl, cfg, report)
            if record_index and not dry_run:
                _index_after_import(client, report)
            if column_stats and not dry_run:
                report.stats_files, report.stats_note = build_column_stats(client, report.db, report.table,
                                                                           tl.base_path)
            return report
        except BaseException:
            if report.database_created and not dry_run:  # undone with the import (its files stay)
                try:
                    client.drop_database(report.db, False, False)
                except Exception:  # the original error matters
                    pass
            raise


def _ensure_database(client: HudiCatalog, report: ImportReport, create: bool) -> None:
    try:
        client.get_database(report.db)
        return
    except NotFound:
        if not create:
            raise HudiImportError(f"database {report.db} does not exist on the metastore "
                                  "(--no-create-database was given)") from None
    report.database_created = True
    if not report.dry_run:
        client.create_database(report.db)


def _index_after_import(client: HudiCatalog, report: ImportReport) -> None:
    keeps = has_index(client.get_hudi_table(report.db, report.table))
    if report.registered or (keeps and report.changed):
        report.index_keys, report.index_note = build_or_turn_off(client, report.db, report.table, keeps)


def _import(client: HudiCatalog, tl: StorageTimeline, cfg: HudiTableConfig,
            report: ImportReport) -> ImportReport:
    db, table = report.db, report.table
    try:
        have = client.get_hudi_table(db, table)
    except NotFound:
        have = None
    if have is not None:
        config = _config_update(f"{db}.{table}", have, tl, cfg)
        return sync_from_storage(client, tl, db, table, report, config=config)
    try:
        hms = client.get_table(db, table)
    except NotFound:
        hms = None
    if hms is not None and hms.location and _norm(hms.location) != _norm(tl.base_path):
        raise HudiImportError(f"{db}.{table} is not a Hudi table (a {hms.table_type or 'table'} that exists at "
                              f"{hms.location}, not {tl.base_path}): import the Hudi table under another name")
    report.registered = True
    if report.dry_run:
        return sync_from_storage(client, tl, db, table, report)
    # a copy mirrored by another metastore may name its index: this one builds its own, or none;
    # its timeline is storage's: Hudi's writers' later syncs catch it up (store/hudi/timeline/catch_up.py)
    cfg.properties = {**{k: v for k, v in cfg.properties.items() if k not in METASTORE_PROPERTIES},
                      TIMELINE_SOURCE: TRACKED}
    client.register_hudi_table(cfg, None)
    try:
        return sync_from_storage(client, tl, db, table, report)
    except BaseException:
        if hms is None:  # the registration is undone with the import
            try:
                client.drop_table(db, table, False)
            except Exception:  # the original error matters
                pass
        raise


def _config_update(where: str, have: HudiTableConfig, tl: StorageTimeline,
                   cfg: HudiTableConfig) -> HudiTableConfig | None:
    """For a table the server has: the config to take from storage (None: the server's agrees);
    HudiImportError when storage holds another table."""
    if _norm(have.base_path) != _norm(tl.base_path):
        raise HudiImportError(f"{where} is a Hudi table at {have.base_path}, not {tl.base_path}")
    served_type = have.table_type
    if served_type != cfg.table_type:
        raise HudiImportError(f"{where} is {served_type} on the server but {cfg.table_type} on storage")
    tracked = (have.properties.get(TIMELINE_SOURCE) or "").lower() == TRACKED
    if _properties(have) != _properties(cfg) or not tracked:  # e.g. adopted from HMS parameters: storage knows better
        kept = {k: v for k, v in have.properties.items() if k in INDEX_PROPERTIES}
        # the metastore's record index stays; the timeline is storage's from now on (imported earlier
        # without the mark: Hudi's later syncs catch the table up once this import marks it)
        cfg.properties = {**cfg.properties, **kept, TIMELINE_SOURCE: TRACKED}
        return cfg
    return None


def _properties(cfg: HudiTableConfig) -> dict[str, str]:
    """`hoodie.properties` of a config, apart from names and location."""
    props = cfg.hoodie_properties()
    for k in (TABLE_NAME, DATABASE_NAME, CHECKSUM, *METASTORE_PROPERTIES):
        props.pop(k, None)
    return props


def _norm(path: str | None) -> str:
    p = (path or "").rstrip("/")
    return p[len("file://"):] if p.startswith("file://") else p[len("file:"):] if p.startswith("file:") else p


# --------------------------------------------------------------------------- CLI


def run(args) -> int:
    try:
        db, tbl = split_table(args.table)
        report = import_hudi_table(args.metastore, args.base_path, db, tbl, dry_run=args.dry_run,
                                   create_database=not args.no_create_database,
                                   record_index=not args.no_record_index,
                                   column_stats=not args.no_column_stats,
                                   security=security_of(args), connect_retries=0)
    except ValueError as exc:  # HudiImportError, a malformed DB.TABLE, or e.g. not a thrift:// URI
        print(f"import-hudi: {exc}", file=sys.stderr)
        return 2
    except AuthenticationError as exc:
        print(f"import-hudi: {login_hint(exc)}", file=sys.stderr)
        return 2
    except (TransportError, OSError) as exc:
        print(f"import-hudi: {exc if args.metastore in str(exc) else f'metastore {args.metastore}: {exc}'}",
              file=sys.stderr)
        return 1
    except MetastoreError as exc:  # the server refused; nothing was changed
        print(f"import-hudi: metastore {args.metastore} refused the import: {exc.kind}: {exc.message}",
              file=sys.stderr)
        return 1
    print("\n".join(report.lines()))
    return 0
