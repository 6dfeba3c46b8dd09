"""Partitions whose descriptor answers as their table's share the table's `sds` row (no row of their
own): what Hive's Java client sends when it copies its table's descriptor (an empty SkewedInfo and
storedAsSubDirectories false where the table was created without them)."""

from __future__ import annotations

import uuid

from sqlalchemy import func, select

from store.db import schema as S
from store.db.engine import make_engine
from thrift_idl.hive_metastore.ttypes import (
    Database,
    FieldSchema,
    Partition,
    SerDeInfo,
    SkewedInfo,
    StorageDescriptor,
    Table,
)


def _own_descriptors(db_url: str, db: str) -> int:
    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            p, t, d = S.partitions, S.tbl, S.db
            return conn.execute(select(func.count()).select_from(p.join(t, t.c.tbl_id == p.c.tbl_id).join(
                d, d.c.db_id == t.c.db_id)).where(d.c.name == db, p.c.sd_id.is_not(None))).scalar_one()
    finally:
        engine.dispose()


def test_a_java_clients_copy_of_the_table_descriptor_is_shared(our_server_info, thrift_client):
    c = thrift_client(our_server_info.port)
    db = f"pd_{uuid.uuid4().hex[:8]}"
    c.create_database(Database(name=db, description="", parameters={}))
    sd = StorageDescriptor(cols=[FieldSchema("id", "bigint", None)], inputFormat="in", outputFormat="out",
                           compressed=False, numBuckets=-1, serdeInfo=SerDeInfo(serializationLib="lib", parameters={}),
                           bucketCols=[], sortCols=[], parameters={})  # no skewedInfo, no storedAsSubDirectories
    c.create_table(Table(tableName="t", dbName=db, sd=sd, partitionKeys=[FieldSchema("p", "string", None)],
                         parameters={}, tableType="MANAGED_TABLE"))
    table_sd = c.get_table(db, "t").sd
    assert table_sd.skewedInfo == SkewedInfo([], [], {}) and table_sd.storedAsSubDirectories is False
    copied = StorageDescriptor(**{**table_sd.__dict__, "location": None})
    other = StorageDescriptor(**{**table_sd.__dict__, "location": None, "inputFormat": "other"})
    # each partition its own copy, as the Java client sends them; the answer for one copy is reused
    # for the next equal one only (store/hms/partitions/partition_writes.py _SharesTableSd)
    c.add_partitions([Partition(values=[v], dbName=db, tableName="t", parameters={},
                                sd=StorageDescriptor(**(other if v in "bd" else copied).__dict__))
                      for v in "abcd"])
    assert _own_descriptors(our_server_info.db_url, db) == 2  # only the ones that differ
    got = {p.values[0]: p.sd for p in c.get_partitions(db, "t", -1)}
    assert got["a"].skewedInfo == SkewedInfo([], [], {}) and got["a"].storedAsSubDirectories is False
    assert [got[v].inputFormat for v in "abcd"] == ["in", "other", "in", "other"]
    c.drop_database(db, True, True)
