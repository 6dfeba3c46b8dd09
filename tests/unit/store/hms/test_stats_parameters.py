"""Statistics kept in parameters. truncate_table's (store/hms/partitions/partition_writes.py,
stats_params.reset_for_truncate), as Hive 4 leaves them: the basic statistics present 0 and accurate,
the columns' no longer accurate (their statistics kept), the fast stats counted from the emptied
directories, ALTER events marked as truncations; only the partitions truncated change. And
set_aggr_stats_for's flags (store/hms/stats/hive_column_stats.py). The same against the Hive 4 reference:
test_hive4_methods.py::test_hive4_java_client (steps truncateTable*, setPartitionColumnStatistics)."""

from __future__ import annotations

import json

import pytest

from adapter.serve import prepare_store
from store.services import open_services
from thrift_idl.hive_metastore.ttypes import (
    ColumnStatistics,
    ColumnStatisticsData,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
    Database,
    FieldSchema,
    LongColumnStatsData,
    Partition,
    SerDeInfo,
    StorageDescriptor,
    Table,
)

_STATS = {"numRows": "7", "rawDataSize": "70", "numFiles": "1", "totalSize": "4",
          "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true"}}', "k": "v"}
_AFTER = {"numRows": "0", "rawDataSize": "0", "numFiles": "0", "totalSize": "0",
          "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}', "k": "v"}


def _table(name: str, keys=()) -> Table:
    sd = StorageDescriptor(cols=[FieldSchema("a", "int", None)], inputFormat="in", outputFormat="out",
                           serdeInfo=SerDeInfo(serializationLib="lib", parameters={}), parameters={})
    return Table(tableName=name, dbName="d", sd=sd, tableType="MANAGED_TABLE", parameters=dict(_STATS),
                 partitionKeys=[FieldSchema(k, "string", None) for k in keys])


def _mine(params: dict) -> dict:
    return {k: v for k, v in params.items() if k != "transient_lastDdlTime"}


@pytest.fixture
def svc(own_backend_url, tmp_path):
    prepare_store(own_backend_url)
    s = open_services(own_backend_url, str(tmp_path / "wh"))
    s.tables.create_database(Database(name="d", locationUri=str(tmp_path / "wh" / "d.db"), parameters={}))
    try:
        yield s
    finally:
        s.close()


@pytest.mark.backends("sqlite")  # plain parameter rows; the Java client's comparison runs on every backend
def test_truncate_resets_statistics(svc, tmp_path):
    svc.tables.create_table(_table("t"))
    t_dir = tmp_path / "wh" / "d.db" / "t"
    (t_dir / "data.txt").write_text("abcd")
    t = svc.tables.get_table("d", "t")
    t.parameters.update(_STATS)
    svc.tables.alter_table("d", "t", t, {"DO_NOT_UPDATE_STATS": "true"})
    obj = ColumnStatisticsObj("a", "int", ColumnStatisticsData(longStats=LongColumnStatsData(1, 9, 0, 5)))
    svc.statistics.update(ColumnStatistics(ColumnStatisticsDesc(True, "d", "t"), [obj]))
    first = svc.notifications.current_id()

    svc.partitions.truncate("d", "t", None)
    assert not (t_dir / "data.txt").exists() and t_dir.is_dir()
    assert _mine(svc.tables.get_table("d", "t").parameters) == _AFTER
    assert svc.statistics.table_column_statistics("d", "t", "a") is not None  # kept, as Hive keeps them
    (event,) = svc.notifications.next_events(first)
    assert event.eventType == "ALTER_TABLE" and json.loads(event.message)["isTruncateOp"] == "true"

    # partitions: the named ones, then all; a table without statistics gets the counted ones
    svc.tables.create_table(_table("p", keys=("k",)))
    svc.partitions.add_partitions("d", "p", [Partition(values=[v], dbName="d", tableName="p",
                                                       parameters=dict(_STATS)) for v in ("x", "y")])
    untouched = _mine(svc.partitions.get_partition("d", "p", ["y"]).parameters)
    first = svc.notifications.current_id()
    svc.partitions.truncate("d", "p", ["k=x", "k=nosuch"])
    assert _mine(svc.partitions.get_partition("d", "p", ["x"]).parameters) == _AFTER
    assert _mine(svc.partitions.get_partition("d", "p", ["y"]).parameters) == untouched
    (event,) = svc.notifications.next_events(first)
    assert event.eventType == "ALTER_PARTITION" and json.loads(event.message)["isTruncateOp"] == "true"
    svc.partitions.truncate("d", "p", None)
    assert _mine(svc.partitions.get_partition("d", "p", ["y"]).parameters) == _AFTER

    bare = _table("bare")
    bare.parameters = {}
    svc.tables.create_table(bare)
    svc.partitions.truncate("d", "bare", None)
    assert _mine(svc.tables.get_table("d", "bare").parameters) == {
        "numFiles": "0", "totalSize": "0", "COLUMN_STATS_ACCURATE": '{"BASIC_STATS":"true"}'}


@pytest.mark.backends("sqlite")
def test_batched_partition_statistics_count_basic_ones(svc):
    """set_aggr_stats_for (batch): a partition without COLUMN_STATS_ACCURATE starts from "TRUE", as Hive's
    batched update does; one with it, and the single update, keep its basic flag."""
    svc.tables.create_table(_table("p", keys=("k",)))
    svc.partitions.add_partitions("d", "p", [Partition(values=[v], dbName="d", tableName="p", parameters={})
                                             for v in ("x", "y", "z")])
    obj = ColumnStatisticsObj("a", "int", ColumnStatisticsData(longStats=LongColumnStatsData(1, 9, 0, 5)))

    def csa(value: str) -> str | None:
        return svc.partitions.get_partition("d", "p", [value]).parameters.get("COLUMN_STATS_ACCURATE")

    def update(value: str, batch: bool) -> None:
        svc.statistics.update(ColumnStatistics(ColumnStatisticsDesc(False, "d", "p", partName=f"k={value}"), [obj]),
                              batch=batch)

    assert csa("x") is None and csa("y") is None
    update("x", True)
    assert csa("x") == '{"BASIC_STATS":"true","COLUMN_STATS":{"a":"true"}}'
    update("y", False)
    assert csa("y") == '{"COLUMN_STATS":{"a":"true"}}'
    update("y", True)  # it has the parameter now: its basic flag stays
    assert csa("y") == '{"COLUMN_STATS":{"a":"true"}}'
