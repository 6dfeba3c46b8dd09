"""`tbl.meta_version` (store/db/table_version.py): triggers change it with anything a get_table
answer is built from, so a server finds a kept answer by the table's id and that value alone
(store/hms/catalog/table_rows.py). Run on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

from store.db import table_version
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


def _table(c, db: str, name: str = "t") -> None:
    sd = StorageDescriptor(cols=[FieldSchema("id", "bigint", None)], inputFormat="in", outputFormat="out",
                           serdeInfo=SerDeInfo(name="s", serializationLib="lib", parameters={}), parameters={})
    c.create_table(Table(tableName=name, dbName=db, sd=sd, owner="o", partitionKeys=[FieldSchema("p", "string", None)],
                         parameters={"k": "v"}, tableType="EXTERNAL_TABLE"))


@pytest.fixture
def env(our_server_info, thrift_client):
    """(client of the server, database, in-process services over the same database: a second
    server whose answers are kept)."""
    c = thrift_client(our_server_info.port)
    db = f"tv_{uuid.uuid4().hex[:8]}"
    c.create_database(Database(name=db, description="", parameters={}))
    _table(c, db)
    services = open_services(our_server_info.db_url, str(our_server_info.warehouse))
    try:
        yield c, db, services
    finally:
        services.close()
        c.drop_database(db, True, True)


def _version(services, db: str, table: str = "t") -> int:
    with services.store.read() as conn:
        return conn.execute(text(
            "SELECT t.meta_version FROM tbl t JOIN db d ON d.db_id = t.db_id WHERE d.name = :d AND t.name = :t"),
            {"d": db, "t": table}).scalar_one()


def _kept(services, db: str, table: str = "t") -> bytes:
    """The answer a kept table gives (found by its version when kept)."""
    return bytes(services.tables.get_table_encoded_flagged(db, table)[0].data)


def _built(services, db: str, table: str = "t") -> bytes:
    from store.hms.common import encode_struct
    return encode_struct(services.tables.get_table(db, table))


def test_the_triggers_are_there(env):
    _c, _db, services = env
    with services.store.read() as conn:
        assert table_version.installed(conn)


def test_every_change_of_the_answer_changes_the_version(env):
    """Each kind of table write changes meta_version, and the kept answer follows it at once;
    partition writes (parts_version) and reads leave it."""
    c, db, services = env
    seen = {_version(services, db)}
    assert _kept(services, db) == _built(services, db)

    def changed(what: str) -> None:
        v = _version(services, db)
        assert v not in seen, what
        seen.add(v)
        assert _kept(services, db) == _built(services, db), what

    t = c.get_table(db, "t")
    c.alter_table(db, "t", Table(**{**t.__dict__, "parameters": {**t.parameters, "k": "w"}}))
    changed("a parameter")
    t = c.get_table(db, "t")
    t.sd.cols = [*t.sd.cols, FieldSchema("name", "string", "a comment")]
    c.alter_table(db, "t", t)
    changed("a column")
    t = c.get_table(db, "t")
    t.sd.serdeInfo.parameters = {"field.delim": ","}
    t.sd.inputFormat = "in2"
    c.alter_table(db, "t", t)
    changed("the descriptor")
    c.update_table_column_statistics(ColumnStatistics(
        statsDesc=ColumnStatisticsDesc(isTblLevel=True, dbName=db, tableName="t"),
        statsObj=[ColumnStatisticsObj("id", "bigint", ColumnStatisticsData(
            longStats=LongColumnStatsData(numNulls=0, numDVs=1, lowValue=1, highValue=1)))]))
    changed("column statistics (COLUMN_STATS_ACCURATE)")
    before = _version(services, db)
    sd = c.get_table(db, "t").sd
    c.add_partitions([Partition(values=["a"], dbName=db, tableName="t", sd=StorageDescriptor(**{
        **sd.__dict__, "location": None}), parameters={})])
    c.get_partitions(db, "t", -1)
    assert _version(services, db) == before  # partition writes change parts_version only
    t = c.get_table(db, "t")
    c.alter_table(db, "t", Table(**{**t.__dict__, "tableName": "t2"}))
    assert _kept(services, db, "t2") == _built(services, db, "t2")
    assert b"t2" in _kept(services, db, "t2")
    _table(c, db)  # another table under the old name
    assert _kept(services, db) == _built(services, db)
    c.drop_table(db, "t", True)
    _table(c, db)  # made again: a new id (or the same, on SQLite) and a new version
    assert _version(services, db) not in seen
    assert _kept(services, db) == _built(services, db)


def test_a_stale_answer_fails_the_check(env, monkeypatch):
    """A write that the triggers do not see (the table's descriptor row alone, which no write path
    changes without the table's row) would leave the kept answer stale: HMS_WIRE_CHECK finds it."""
    monkeypatch.setenv("HMS_WIRE_CHECK", "1")
    _c, db, services = env
    _kept(services, db)
    with services.store.write() as conn:
        conn.execute(text("UPDATE sds SET input_format = 'changed' WHERE sd_id = (SELECT t.sd_id FROM tbl t "
                          "JOIN db d ON d.db_id = t.db_id WHERE d.name = :d AND t.name = 't')"), {"d": db})
    with pytest.raises(AssertionError, match="stale"):
        _kept(services, db)
    monkeypatch.setenv("HMS_WIRE_CHECK", "0")
    assert b"changed" not in _kept(services, db)  # kept: what the check is there to catch
