"""Apache Hudi's metaserver protocol (RFC-36 `ThriftHoodieMetaserver`, thrift_idl/hudi_metaserver.thrift)
on the server's port, backed by the same table and timeline services as the HudiMetastore calls.

Hudi's client registers a table (createTable: with its hoodie.properties as parameters, or, as Hudi
0.13-0.15's client does, with names, type and base path only: the config is then read from the
`.hoodie/hoodie.properties` the writer has just written there), asks for
instant times, creates instants and moves them REQUESTED -> INFLIGHT -> COMPLETED with the bytes
Hudi writes to the timeline files (commit metadata on completion: one transaction, as
complete_instant), reads the timeline (listInstants, getInstantMetadata) and deletes instants that
never completed (deleteInstant: a rollback; of a savepoint: its deletion). Errors: adapter/errors.py.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from adapter import identity
from hudi_format.config_keys import PREFIX, PROPERTIES_FILE, TABLE_TYPE
from hudi_format.layout import HOODIE
from hudi_format.storage import TableStorage
from hudi_format.table_config import HudiTableConfig, read_properties
from store.errors import InvalidOperation
from store.hms.catalog import TableService
from store.hms.common import check_location
from store.hudi.timeline import DEFAULT_HEARTBEAT_TIMEOUT_S, TimelineService
from store.storage import boundary, ownership, warehouse
from thrift_idl.hive_metastore.ttypes import Database
from thrift_idl.hudi_metaserver.ttypes import (
    HoodieInstantChangeResult,
    MetaserverFieldSchema,
    MetaserverTable,
    TAction,
    THoodieInstant,
    TState,
)

_ACTIONS = {TAction.COMMIT: "commit", TAction.DELTACOMMIT: "deltacommit", TAction.CLEAN: "clean",
            TAction.ROLLBACK: "rollback", TAction.SAVEPOINT: "savepoint", TAction.REPLACECOMMIT: "replacecommit",
            TAction.COMPACTION: "compaction", TAction.RESTORE: "restore"}
_TACTIONS = {name: code for code, name in _ACTIONS.items()}
_STATES = {TState.REQUESTED: "REQUESTED", TState.INFLIGHT: "INFLIGHT", TState.COMPLETED: "COMPLETED"}
_TSTATES = {name: code for code, name in _STATES.items()}


def _action(instant: THoodieInstant | None) -> str:
    if instant is None or instant.action not in _ACTIONS:
        raise InvalidOperation(f"unknown instant action {getattr(instant, 'action', None)!r}")
    return _ACTIONS[instant.action]


def _state(instant: THoodieInstant) -> str:
    if instant.state not in _STATES:
        raise InvalidOperation(f"unknown instant state {instant.state!r}")
    return _STATES[instant.state]


def _storage_properties(location: str, listing_roots: list[str]) -> dict[str, str]:
    """hoodie.properties at a base path the server may open (local, or the warehouse's scheme) and,
    with authorization on, the caller may use without being an admin (inside the warehouse or the
    external locations: docs/security.md; nothing is read from a location the caller may not use)."""
    check_location(location, "Hudi table base path", "hudi_table", "base_path")
    scheme = urlsplit(location).scheme.lower()
    if scheme not in ("", "file") and not warehouse.opened(scheme):
        raise InvalidOperation(f"createTable without {PROPERTIES_FILE}: the server does not open {location}")
    caller = ownership.claimant()
    if caller is not None and not caller.admin:
        c = boundary.canonical(location)
        if not any(c == r or c.startswith(r.rstrip("/") + "/") for r in listing_roots):
            raise InvalidOperation(f"createTable without {PROPERTIES_FILE}: {location} is outside the warehouse "
                                   f"and the external locations; give the table's {PROPERTIES_FILE} as parameters")
    try:
        raw = TableStorage(location).read(f"{HOODIE}/{PROPERTIES_FILE}")
    except Exception as exc:  # noqa: BLE001 - unreadable storage is the caller's error
        raise InvalidOperation(f"createTable: cannot read {location}/{HOODIE}/{PROPERTIES_FILE}: {exc}") from exc
    if raw is None:
        raise InvalidOperation(f"createTable without {PROPERTIES_FILE}: {location} has no {HOODIE}/{PROPERTIES_FILE}")
    return read_properties(raw.decode("latin-1"))


def _to_thrift(i) -> THoodieInstant:
    return THoodieInstant(timestamp=i.ts, action=_TACTIONS.get(i.action), state=_TSTATES.get(i.state, TState.NIL))


class MetaserverHandler:
    def __init__(self, tables: TableService, timeline: TimelineService):
        self._tables = tables
        self._timeline = timeline

    # --- tables -----------------------------------------------------------------------------------

    def createDatabase(self, db):
        self._tables.create_database(Database(name=(db or "").lower(), parameters={},
                                              ownerName=identity.current().user))

    def createTable(self, table):
        if table is None or not table.tableName or not table.databaseName:
            raise InvalidOperation("createTable needs a table with tableName and databaseName")
        props = dict(table.parameters or {})
        if table.location and not any(k.startswith(PREFIX) for k in props):
            props = {**_storage_properties(table.location, self._tables.boundary.listing_roots), **props}
        if table.tableType and TABLE_TYPE not in props:
            props[TABLE_TYPE] = table.tableType
        cfg = HudiTableConfig.from_properties(table.databaseName.lower(), table.tableName.lower(), props,
                                              table.location or None)
        cfg.validate()
        self._timeline.register_table(cfg, None, owner=identity.current().user)  # the caller's, as every created object

    def getTable(self, db, tb):
        cfg = self._timeline.get_table_config(db, tb)
        return MetaserverTable(
            tableName=cfg.table_name, databaseName=cfg.db_name, owner=self._tables.get_table(db, tb).owner,
            createTime=0, location=cfg.base_path, tableType=cfg.table_type,
            partitionKeys=[MetaserverFieldSchema(name=f, type="string", comments="") for f in cfg.partition_fields],
            parameters=cfg.hoodie_properties())

    # --- timeline ---------------------------------------------------------------------------------

    def listInstants(self, db, tb, num):
        instants = [_to_thrift(i) for i in self._timeline.list_instants(db, tb)]
        return instants[-num:] if num and num > 0 else instants

    def getInstantMetadata(self, db, tb, instant):
        return bytes(self._timeline.instant_metadata(db, tb, instant.timestamp, _action(instant), _state(instant)))

    def createNewInstantTime(self, db, tb):
        return self._timeline.new_instant_time(db, tb)

    def createNewInstantWithTime(self, db, tb, instant, content):
        created = self._timeline.create_instant(db, tb, instant.timestamp or None, _action(instant), content or None,
                                                DEFAULT_HEARTBEAT_TIMEOUT_S)
        return HoodieInstantChangeResult(success=True, instant=_to_thrift(created))

    def transitionInstantState(self, db, tb, fromInstant, toInstant, metadata):
        action, to = _action(toInstant), _state(toInstant)
        if fromInstant is None or fromInstant.timestamp != toInstant.timestamp:
            raise InvalidOperation("transitionInstantState: both instants must name the same instant time")
        if to == "INFLIGHT":
            done = self._timeline.transition_to_inflight(db, tb, toInstant.timestamp, action, metadata or None)
        elif to == "COMPLETED":
            done, _version = self._timeline.complete_instant(db, tb, toInstant.timestamp, action, metadata or b"")
        else:
            raise InvalidOperation(f"an instant cannot move to {to}")
        return HoodieInstantChangeResult(success=True, instant=_to_thrift(done))

    def deleteInstant(self, db, tb, instant):
        if instant is not None and instant.action == TAction.SAVEPOINT:  # Hudi's deleteSavepoint
            self._timeline.delete_savepoint(db, tb, instant.timestamp)
            return HoodieInstantChangeResult(success=True, instant=instant)
        # Hudi's client deletes its own instants (an empty or failed write): no heartbeat wait
        self._timeline.rollback(db, tb, instant.timestamp, force=True)
        return HoodieInstantChangeResult(success=True, instant=instant)
