"""Thrift client, the objects the benchmark creates, and loaders.

Shapes follow hmsbench: a table with three string partition keys (p_a, p_b, p_c) and a few data
columns; partition ``i`` of an N-partition table has values ``a<i>, b<i>, c<i>`` (as hmsbench's
``addManyPartitions`` with keys a, b, c), so ``p_a='a0'`` selects one partition and the six-term
OR selects two.  The 100,000-partition table is hierarchical instead (see :func:`big_values`).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterable

from thrift.protocol import TBinaryProtocol
from thrift.transport import TSocket, TTransport

from thrift_idl.hive_metastore import ThriftHiveMetastore
from thrift_idl.hive_metastore.ttypes import (
    AlreadyExistsException,
    Database,
    DropPartitionsRequest,
    FieldSchema,
    NoSuchObjectException,
    Partition,
    PrincipalType,
    RequestPartsSpec,
    SerDeInfo,
    SkewedInfo,
    StorageDescriptor,
    Table,
)

PARQUET_IN = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
KEYS = ("p_a", "p_b", "p_c")
BENCH_DB = "bench"
LIST_TABLES_DB = "bench_list"


class Client:
    """A plain-thrift client (TBufferedTransport + TBinaryProtocolAccelerated)."""

    def __init__(self, port: int, host: str = "127.0.0.1", timeout_s: float = 1800.0):
        sock = TSocket.TSocket(host, port)
        sock.setTimeout(int(timeout_s * 1000))
        self.transport = TTransport.TBufferedTransport(sock)
        self.client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocolAccelerated(self.transport))
        self.transport.open()

    def __getattr__(self, name):
        return getattr(self.client, name)

    def close(self) -> None:
        try:
            self.transport.close()
        except Exception:
            pass


# --------------------------------------------------------------------------- objects


def columns() -> list[FieldSchema]:
    return [FieldSchema("id", "bigint", "row id"), FieldSchema("name", "string", None),
            FieldSchema("amount", "decimal(18,2)", None), FieldSchema("ts", "timestamp", None),
            FieldSchema("payload", "string", "json")]


def storage(cols: list[FieldSchema], location: str | None = None) -> StorageDescriptor:
    return StorageDescriptor(
        cols=list(cols), location=location, inputFormat=PARQUET_IN, outputFormat=PARQUET_OUT,
        compressed=False, numBuckets=-1,
        serdeInfo=SerDeInfo(name=None, serializationLib=PARQUET_SERDE, parameters={"serialization.format": "1"}),
        bucketCols=[], sortCols=[], parameters={},
        skewedInfo=SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={}),
        storedAsSubDirectories=False)


def table(db: str, name: str) -> Table:
    return Table(tableName=name, dbName=db, owner="bench", createTime=int(time.time()), lastAccessTime=0,
                 retention=0, sd=storage(columns()),
                 partitionKeys=[FieldSchema(k, "string", None) for k in KEYS],
                 parameters={"EXTERNAL": "FALSE", "comment": "hmsbench-style table", "numFiles": "0"},
                 tableType="MANAGED_TABLE", ownerType=PrincipalType.USER)


def partition(tbl: Table, values: list[str]) -> Partition:
    """A partition as Hive's PartitionBuilder makes it: the table's sd without its location."""
    sd = copy.copy(tbl.sd)
    sd.location = None
    sd.cols = list(tbl.sd.cols)
    return Partition(values=list(values), dbName=tbl.dbName, tableName=tbl.tableName,
                     createTime=int(time.time()), lastAccessTime=0, sd=sd, parameters={})


def flat_values(i: int) -> list[str]:
    """hmsbench's values for partition i: every partition has its own value on each key."""
    return [f"a{i}", f"b{i}", f"c{i}"]


def flat_name(i: int) -> str:
    return f"p_a=a{i}/p_b=b{i}/p_c=c{i}"


# The big table: p_a has size/1000 values, p_b 40 and p_c 25 (100 x 40 x 25 = 100,000 at the default).
BIG_B, BIG_C = 40, 25
BIG_FILTER = "p_a = 'a000' and p_b = 'b17' and p_c > 'c00'"   # 24 partitions whatever the size
BIG_EXPECTED = 24


def big_values(i: int) -> list[str]:
    c = i % BIG_C
    b = (i // BIG_C) % BIG_B
    a = i // (BIG_C * BIG_B)
    return [f"a{a:03d}", f"b{b:02d}", f"c{c:02d}"]


FILTER_EQ = "p_a = 'a0'"
FILTER_OR6 = "p_a = 'a0' or p_b = 'b0' or p_c = 'c0' or p_a = 'a1' or p_b = 'b1' or p_c = 'c1'"


# --------------------------------------------------------------------------- helpers


def ensure_database(c: Client, name: str) -> None:
    try:
        c.get_database(name)
    except NoSuchObjectException:
        c.create_database(Database(name=name, description="benchmark", parameters={},
                                   ownerName="bench", ownerType=PrincipalType.USER))


def create_table(c: Client, db: str, name: str) -> Table:
    t = table(db, name)
    c.create_table(t)
    return c.get_table(db, name)


def recreate_table(c: Client, db: str, name: str) -> Table:
    drop_table(c, db, name)
    return create_table(c, db, name)


def drop_table(c: Client, db: str, name: str) -> None:
    try:
        c.drop_table(db, name, True)
    except NoSuchObjectException:
        pass


def add_partitions(c: Client, tbl: Table, indexes: Iterable[int], batch: int, values=flat_values) -> int:
    """add_partitions in batches of ``batch``; returns how many were added."""
    pending: list[Partition] = []
    n = 0
    for i in indexes:
        pending.append(partition(tbl, values(i)))
        if len(pending) >= batch:
            n += c.add_partitions(pending)
            pending = []
    if pending:
        n += c.add_partitions(pending)
    return n


def drop_partitions_by_names(c: Client, db: str, tbl: str, names: list[str]):
    req = DropPartitionsRequest(dbName=db, tblName=tbl, parts=RequestPartsSpec(names=list(names)),
                                deleteData=True, ifExists=True, needResult=True)
    return c.drop_partitions_req(req)


def create_tables(c: Client, db: str, start: int, stop: int, prefix: str = "tmp_table_") -> None:
    for i in range(start, stop):
        t = table(db, f"{prefix}{i}")
        t.partitionKeys = []
        try:
            c.create_table(t)
        except AlreadyExistsException:
            pass
