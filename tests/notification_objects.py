"""Thrift objects for the notification log tests: a partitioned table with characters that need
escaping (a \\x01 field delimiter, quotes, U+2028, an emoji), its partitions, a database, a function."""

from __future__ import annotations

from thrift_idl.hive_metastore.ttypes import (
    Database,
    FieldSchema,
    Function,
    Order,
    Partition,
    ResourceUri,
    SerDeInfo,
    StorageDescriptor,
    Table,
)


def make_sd(location, params=None):
    return StorageDescriptor(
        cols=[FieldSchema("id", "int", "the id"), FieldSchema("v", "string", None)], location=location,
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat", compressed=False,
        numBuckets=-1, serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                                           parameters=params if params is not None else {"field.delim": "\x01"}),
        bucketCols=[], sortCols=[Order("id", 1)], parameters={})


def make_table(db="db1", name="t", keys=(("dt", "string"), ("n", "int")), location=None):
    return Table(tableName=name, dbName=db, owner="alice", createTime=1_700_000_000, lastAccessTime=0,
                 retention=0, sd=make_sd(location or f"file:/wh/{db}.db/{name}"),
                 partitionKeys=[FieldSchema(k, t, None) for k, t in keys],
                 parameters={"comment": 'é "q" \\ \n\t/ \u2028 \U0001f600'}, tableType="MANAGED_TABLE",
                 catName="hive")


def make_part(table, values, **params):
    loc = table.sd.location + "/" + "/".join(f"{k.name}={v}" for k, v in zip(table.partitionKeys, values))
    return Partition(values=list(values), dbName=table.dbName, tableName=table.tableName, createTime=1_700_000_001,
                     lastAccessTime=0, sd=make_sd(loc), parameters=dict(params), catName="hive")


def make_db(name="db1"):
    return Database(name=name, description="d", locationUri=f"file:/wh/{name}.db", parameters={"k": "v"},
                    ownerName="alice", ownerType=1, catalogName="hive")


def make_function(db="db1"):
    return Function(functionName="f", dbName=db, className="x.F", ownerName="alice", ownerType=1,
                    createTime=1_700_000_000, functionType=1,
                    resourceUris=[ResourceUri(resourceType=1, uri="file:/f.jar")], catName="hive")


