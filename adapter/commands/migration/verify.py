"""The verification that closes a migration: source and target compared again, every difference
listed (names, counts, definitions, statistics); nothing is written."""

from __future__ import annotations

from thrift_idl.hive_metastore.ttypes import NoSuchObjectException

from .compare import VIEW_TYPES, chunks, database_diff, differing_fields, is_hudi_table, table_view
from .report import DatabaseCheck, TableCheck
from .source import Connections
from .table_sync import TableSync


def verify_database(conns: Connections, sync: TableSync, name: str) -> DatabaseCheck:
    src, tgt = conns.source(), conns.target()
    check = DatabaseCheck(name)
    sdb = src.get_database(name)
    try:
        tdb = tgt.get_database(name)
    except NoSuchObjectException:
        check.source_tables = sorted(src.get_all_tables(name))
        check.differences.append("database missing in target")
        return check
    for f in database_diff(sdb, tdb):
        check.differences.append(f"database {f} differs")
    check.source_tables = sorted(src.get_all_tables(name))
    check.target_tables = sorted(tgt.get_all_tables(name))
    for n in sorted(set(check.source_tables) - set(check.target_tables)):
        check.differences.append(f"table {n} missing in target")
    for n in sorted(set(check.target_tables) - set(check.source_tables)):
        check.differences.append(f"table {n} only in target")
    common = [n for n in check.source_tables if n in set(check.target_tables)]
    for tables in chunks(common, 100):
        for t in src.get_table_objects_by_name(name, tables):
            check.tables.append(verify_table(conns, sync, t))
    return check


def verify_table(conns: Connections, sync: TableSync, t) -> TableCheck:
    db, name = t.dbName.lower(), t.tableName.lower()
    tgt = conns.target()
    hudi = is_hudi_table(t)
    check = TableCheck(name, t.tableType or "", hudi)
    cur = tgt.get_table(db, name)
    fields = differing_fields(table_view(cur, hudi), table_view(t, hudi))
    if fields:
        check.differences.append(f"table definition differs ({', '.join(fields)})")
    if t.tableType in VIEW_TYPES:
        return check
    check.differences += sync.table_stats(t, apply=False, hudi=hudi)
    if not t.partitionKeys:
        return check
    snames = list(conns.source().get_partition_names(db, name, -1))
    tnames = list(tgt.get_partition_names(db, name, -1))
    check.source_partitions, check.target_partitions = len(snames), len(tnames)
    check.differences += sync.partitions(t, hudi, apply=False, verify=True)
    extra = sorted(set(tnames) - set(snames))
    check.differences += [f"partition {p} only in target" for p in extra]
    return check
