"""Builders for the Thrift objects the conformance tests send (shaped like Spark's / Hive's)."""

from __future__ import annotations

from thrift_idl.hive_metastore.ttypes import (
    BooleanColumnStatsData,
    ColumnStatistics,
    ColumnStatisticsData,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
    Database,
    DoubleColumnStatsData,
    FieldSchema,
    Function,
    LongColumnStatsData,
    Partition,
    PrincipalType,
    ResourceUri,
    SerDeInfo,
    SkewedInfo,
    StorageDescriptor,
    StringColumnStatsData,
    Table,
)

TEXT_IN = "org.apache.hadoop.mapred.TextInputFormat"
TEXT_OUT = "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"
LAZY_SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"
PARQUET_IN = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
PARQUET_OUT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"


def cols(*specs) -> list[FieldSchema]:
    """cols("id int", "name string comment") -> FieldSchemas."""
    out = []
    for s in specs:
        parts = s.split(" ", 2)
        out.append(FieldSchema(name=parts[0], type=parts[1], comment=parts[2] if len(parts) > 2 else None))
    return out


def sd(columns, location=None, parquet=False, full=True, serde_params=None) -> StorageDescriptor:
    """A storage descriptor as a Java client sends it (`full`), or a minimal one."""
    serde = SerDeInfo(name=None, serializationLib=PARQUET_SERDE if parquet else LAZY_SERDE,
                      parameters=dict(serde_params if serde_params is not None else {"serialization.format": "1"}))
    d = StorageDescriptor(cols=list(columns), location=location,
                          inputFormat=PARQUET_IN if parquet else TEXT_IN,
                          outputFormat=PARQUET_OUT if parquet else TEXT_OUT, serdeInfo=serde)
    if full:
        d.compressed = False
        d.numBuckets = -1
        d.bucketCols = []
        d.sortCols = []
        d.parameters = {}
        d.skewedInfo = SkewedInfo(skewedColNames=[], skewedColValues=[], skewedColValueLocationMaps={})
        d.storedAsSubDirectories = False
    return d


def table(db, name, columns, keys=(), location=None, external=False, params=None, table_type=None,
          owner="tester", parquet=False, full=True) -> Table:
    p = dict(params or {})
    if external:
        p.setdefault("EXTERNAL", "TRUE")
    if table_type is None:
        table_type = "EXTERNAL_TABLE" if external else "MANAGED_TABLE"
    return Table(tableName=name, dbName=db, owner=owner, createTime=0, lastAccessTime=0, retention=0,
                 sd=sd(columns, location, parquet=parquet, full=full), partitionKeys=list(keys),
                 parameters=p, tableType=table_type, ownerType=PrincipalType.USER if full else None)


def partition(tbl: Table, values, location=None, params=None, use_sd=True) -> Partition:
    s = None
    if use_sd:
        s = sd(tbl.sd.cols, location)
        s.inputFormat, s.outputFormat = tbl.sd.inputFormat, tbl.sd.outputFormat
        s.serdeInfo = SerDeInfo(name=tbl.sd.serdeInfo.name, serializationLib=tbl.sd.serdeInfo.serializationLib,
                                parameters=dict(tbl.sd.serdeInfo.parameters or {}))
    return Partition(values=list(values), dbName=tbl.dbName, tableName=tbl.tableName, createTime=0,
                     lastAccessTime=0, sd=s, parameters=dict(params or {}))


def database(name, description=None, params=None, location=None, owner=None) -> Database:
    return Database(name=name, description=description, locationUri=location, parameters=dict(params or {}),
                    ownerName=owner, ownerType=PrincipalType.USER if owner else None)


def function(db, name, cls="com.example.Udf", resources=()) -> Function:
    return Function(functionName=name, dbName=db, className=cls, ownerName="tester",
                    ownerType=PrincipalType.USER, createTime=0, functionType=1,
                    resourceUris=[ResourceUri(resourceType=t, uri=u) for t, u in resources])


def long_stats(col, low, high, nulls, ndv) -> ColumnStatisticsObj:
    return ColumnStatisticsObj(colName=col, colType="bigint" if col.startswith("b") else "int",
                               statsData=ColumnStatisticsData(longStats=LongColumnStatsData(
                                   lowValue=low, highValue=high, numNulls=nulls, numDVs=ndv)))


def int_stats(col, low, high, nulls, ndv, col_type="int") -> ColumnStatisticsObj:
    return ColumnStatisticsObj(colName=col, colType=col_type, statsData=ColumnStatisticsData(
        longStats=LongColumnStatsData(lowValue=low, highValue=high, numNulls=nulls, numDVs=ndv)))


def double_stats(col, low, high, nulls, ndv) -> ColumnStatisticsObj:
    return ColumnStatisticsObj(colName=col, colType="double", statsData=ColumnStatisticsData(
        doubleStats=DoubleColumnStatsData(lowValue=low, highValue=high, numNulls=nulls, numDVs=ndv)))


def string_stats(col, maxlen, avglen, nulls, ndv) -> ColumnStatisticsObj:
    return ColumnStatisticsObj(colName=col, colType="string", statsData=ColumnStatisticsData(
        stringStats=StringColumnStatsData(maxColLen=maxlen, avgColLen=avglen, numNulls=nulls, numDVs=ndv)))


def bool_stats(col, trues, falses, nulls) -> ColumnStatisticsObj:
    return ColumnStatisticsObj(colName=col, colType="boolean", statsData=ColumnStatisticsData(
        booleanStats=BooleanColumnStatsData(numTrues=trues, numFalses=falses, numNulls=nulls)))


def col_stats(db, tbl, objs, part_name=None, last_analyzed=1700000000) -> ColumnStatistics:
    return ColumnStatistics(statsDesc=ColumnStatisticsDesc(
        isTblLevel=part_name is None, dbName=db, tableName=tbl, partName=part_name, lastAnalyzed=last_analyzed),
        statsObj=list(objs))

