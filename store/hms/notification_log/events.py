"""Typed builders of notification events: one per Hive event type, plus a Hudi commit.

A write path builds its event from the Thrift objects of the change (as stored, after the change)
and hands it to `NotificationLog.record(conn, event)` inside its own transaction:

    self.notifications.record(conn, events.create_table(self.tables.get_table_in(conn, db, name)))

Builders do the costly part (serializing the objects) so that `record` holds the event id lock
only for the insert. Event types, and which object names the event's catalog, database and table,
are Hive's (DbNotificationListener).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from store.hms.notification_log import messages as M
from thrift_idl.hive_metastore.ttypes import Partition, Table

DEFAULT_CATALOG = "hive"
ADD_PARTITION_BATCH = 500  # partitions per ADD_PARTITION event (each carries the whole Partition)
DROP_PARTITION_BATCH = 5_000  # partitions per DROP_PARTITION event (each carries its key values)


@dataclass(frozen=True)
class Event:
    """One notification event before it has an id: Hive's NotificationEvent minus id and time."""

    event_type: str
    body: dict[str, Any]  # the message's fields; server, servicePrincipal, timestamp set when recorded
    db_name: str | None = None
    table_name: str | None = None
    cat_name: str | None = DEFAULT_CATALOG


def _cat(name: str | None) -> str:
    return name or DEFAULT_CATALOG


def _table_event(event_type: str, table: Table, body: dict[str, Any]) -> Event:
    return Event(event_type, body, table.dbName, table.tableName, _cat(table.catName))


# --- databases ------------------------------------------------------------------------------------

def create_database(db) -> Event:
    return Event("CREATE_DATABASE", M.create_database(db, _cat(db.catalogName)), db.name,
                 cat_name=_cat(db.catalogName))


def alter_database(before, after) -> Event:
    return Event("ALTER_DATABASE", M.alter_database(before, after), before.name, cat_name=_cat(before.catalogName))


def drop_database(db) -> Event:
    return Event("DROP_DATABASE", M.drop_database(db, _cat(db.catalogName)), db.name,
                 cat_name=_cat(db.catalogName))


# --- tables ---------------------------------------------------------------------------------------

def create_table(table: Table, files: Iterable[str] = ()) -> Event:
    """`files`: data files already in a managed table's directory (Hive lists them; usually none)."""
    return _table_event("CREATE_TABLE", table, M.create_table(table, files))


def alter_table(before: Table, after: Table, truncate: bool = False) -> Event:
    """Also a rename (before has the old name, the event the new one) and, with `truncate`, the
    truncation of an unpartitioned table."""
    return _table_event("ALTER_TABLE", after, M.alter_table(before, after, truncate))


def drop_table(table: Table) -> Event:
    return _table_event("DROP_TABLE", table, M.drop_table(table))


# --- partitions -----------------------------------------------------------------------------------

def add_partitions(table: Table, partitions: Sequence[Partition]) -> list[Event]:
    """ADD_PARTITION events for the partitions one call added: one per ADD_PARTITION_BATCH of them
    (Hive writes one for any number; a message of whole partitions is kept to a few megabytes,
    below the database's packet limits). None for none."""
    return [_table_event("ADD_PARTITION", table, M.add_partition(table, partitions[i:i + ADD_PARTITION_BATCH]))
            for i in range(0, len(partitions), ADD_PARTITION_BATCH)]


def alter_partition(table: Table, before: Partition, after: Partition, truncate: bool = False) -> Event:
    """Also a rename (before has the old values) and, with `truncate`, a truncated partition."""
    return _table_event("ALTER_PARTITION", table, M.alter_partition(table, before, after, truncate))


def alter_partitions(table: Table, pairs: Iterable[tuple[Partition, Partition]],
                     truncate: bool = False) -> list[Event]:
    """One ALTER_PARTITION event per (before, after) pair, as Hive 3 writes for alter_partitions
    (the table's JSON, the same in each, is written once)."""
    table_json = M.SharedText(M.tjson(table))
    memo: dict[Any, tuple[Any, str]] = {}
    return [_table_event("ALTER_PARTITION", table, M.alter_partition(table, before, after, truncate, table_json, memo))
            for before, after in pairs]


def drop_partitions(table: Table, partitions: Iterable[Partition | Sequence[str]]) -> list[Event]:
    """DROP_PARTITION events for the partitions one call dropped, given as Partition objects or as
    their value lists (the message carries only their key values): one per DROP_PARTITION_BATCH."""
    values = [list(p.values or []) if isinstance(p, Partition) else list(p) for p in partitions]
    return [_table_event("DROP_PARTITION", table, M.drop_partition(table, values[i:i + DROP_PARTITION_BATCH]))
            for i in range(0, len(values), DROP_PARTITION_BATCH)]


def insert(table: Table, partition: Partition | None, files: Sequence[str],
           checksums: Sequence[str] | None = None, replace: bool = True, table_json: str | None = None,
           memo: dict | None = None) -> Event:
    """Data written into a table or partition (fire_listener_event). A file with a checksum is
    named `file#checksum`, as Hive's ReplChangeManager encodes it."""
    if checksums:
        files = [f"{f}#{c}" for f, c in zip(files, checksums)]
    return _table_event("INSERT", table, M.insert(table, partition, replace, files, table_json, memo))


# --- Hudi -----------------------------------------------------------------------------------------

def hudi_commit(table: Table, written: Sequence[tuple[Partition | None, Sequence[str]]],
                replace: bool = False) -> list[Event]:
    """A completed Hudi instant that changes the files of the latest snapshot (commit, deltacommit,
    replacecommit, compaction; a rollback or restore of completed instants with no files and
    `replace`): Hive has no such event type, so it becomes what Hive writes for data written by any
    engine, one INSERT event per partition written (`written`: (partition, full paths of the files
    the instant wrote there); partition None for an unpartitioned table). `replace` for a
    replacecommit. New partitions are ADD_PARTITION events of the partition service, dropped ones
    DROP_PARTITION events, as hive-sync would have caused them."""
    table_json = M.SharedText(M.tjson(table))
    memo: dict = {}  # the parts the partitions share, written once
    return [insert(table, partition, files, replace=replace, table_json=table_json, memo=memo)
            for partition, files in written]


# --- functions ------------------------------------------------------------------------------------

def create_function(fn) -> Event:
    return Event("CREATE_FUNCTION", M.create_function(fn), fn.dbName, cat_name=_cat(fn.catName))


def drop_function(fn) -> Event:
    return Event("DROP_FUNCTION", M.drop_function(fn), fn.dbName, cat_name=_cat(fn.catName))


# --- constraints ----------------------------------------------------------------------------------

def _constraints(event_type: str, constraints: Sequence[Any], db: str, table: str) -> list[Event]:
    if not constraints:
        return []  # as Hive: no event for an empty list
    first = constraints[0]
    return [Event(event_type, M.add_constraints(event_type, constraints), getattr(first, db),
                  getattr(first, table), _cat(first.catName))]


def add_primary_keys(keys: Sequence[Any]) -> list[Event]:
    return _constraints("ADD_PRIMARYKEY", keys, "table_db", "table_name")


def add_foreign_keys(keys: Sequence[Any]) -> list[Event]:
    """Named after the referenced (primary key) table, as Hive does."""
    return _constraints("ADD_FOREIGNKEY", keys, "pktable_db", "pktable_name")


def add_unique_constraints(constraints: Sequence[Any]) -> list[Event]:
    return _constraints("ADD_UNIQUECONSTRAINT", constraints, "table_db", "table_name")


def add_not_null_constraints(constraints: Sequence[Any]) -> list[Event]:
    return _constraints("ADD_NOTNULLCONSTRAINT", constraints, "table_db", "table_name")


def add_default_constraints(constraints: Sequence[Any]) -> list[Event]:
    return _constraints("ADD_DEFAULTCONSTRAINT", constraints, "table_db", "table_name")


def add_check_constraints(constraints: Sequence[Any]) -> list[Event]:
    return _constraints("ADD_CHECKCONSTRAINT", constraints, "table_db", "table_name")


def drop_constraint(db: str, table: str, name: str, cat: str | None = None) -> Event:
    return Event("DROP_CONSTRAINT", M.drop_constraint(_cat(cat), db, table, name), db, table, _cat(cat))


# --- catalogs -------------------------------------------------------------------------------------

def create_catalog(catalog) -> Event:
    return Event("CREATE_CATALOG", M.create_catalog(catalog.name), cat_name=catalog.name)


def alter_catalog(before, after) -> Event:
    return Event("ALTER_CATALOG", M.alter_catalog(before, after), cat_name=after.name)


def drop_catalog(catalog) -> Event:
    return Event("DROP_CATALOG", M.drop_catalog(catalog.name), cat_name=catalog.name)
