"""Hive statistics of Hudi tables kept with each commit (no ANALYZE), through a real server on every
backend, read by a third-party client (hmsclient, Hive 2.x bindings) and ours:

* basic statistics (numFiles, totalSize, numRows, rawDataSize) of the table and of every partition
  a commit touched, of the latest file slices only (an upsert's old file versions do not count),
  and Spark's statistics properties on the table;
* column statistics derived from the files' statistics for the columns no ANALYZE gave: min, max
  and nulls of numbers, decimals, dates and timestamps; none for strings; an explicit update wins;
* a clean keeps them; a table whose files have no statistics gets sizes but no row counts.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from client import HudiMetastoreClient
from client import column_stats_struct as to_thrift
from pipeline.column_stats import footer_stats, uncompressed_size
from pipeline.file_group_writer import log_stats as log_file_stats
from thrift_idl.hive_metastore.ttypes import (
    ColumnStatistics,
    ColumnStatisticsData,
    ColumnStatisticsDesc,
    ColumnStatisticsObj,
    FieldSchema,
    LongColumnStatsData,
    TableStatsRequest,
)
from thrift_idl.hudi_metastore.ttypes import HudiTableConfig, HudiTableType

hmsclient = pytest.importorskip("hmsclient.hmsclient")
from hmsclient.genthrift.hive_metastore import ttypes as H2  # noqa: E402

COLUMNS = {"i": ("bigint", pa.int64()), "f": ("double", pa.float64()), "dec": ("decimal(10,2)", pa.decimal128(10, 2)),
           "s": ("string", pa.string()), "d": ("date", pa.date32()),
           "ts": ("timestamp", pa.timestamp("us", tz="UTC")), "bo": ("boolean", pa.bool_())}
_D0 = dt.date(2024, 1, 1)
_T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)


def _row(k: int) -> dict:
    return {"i": k, "f": k / 2, "dec": Decimal(k) / 4, "s": None if k % 3 == 0 else f"s{k}",
            "d": _D0 + dt.timedelta(days=k), "ts": _T0 + dt.timedelta(seconds=k * 1.5), "bo": None if k == 40 else True}


def _register(c: HudiMetastoreClient, table: str, base: str, properties: dict | None = None,
              table_type=HudiTableType.COPY_ON_WRITE) -> None:
    c.register_hudi_table(
        HudiTableConfig(dbName="default", tableName=table, tableType=table_type,
                        recordKeyFields=["i"], partitionFields=["p"], properties=properties or {},
                        basePath=base),
        [FieldSchema(n, t, None) for n, (t, _) in COLUMNS.items()] + [FieldSchema("p", "string", None)])


def _commit(c: HudiMetastoreClient, table: str, base: str, files: list[tuple[str, str, list[dict]]],
            with_stats: bool = True) -> dict[str, int]:
    """files: (partition, file id, rows); a new version of a file id replaces the old in the latest
    slice. Returns {partition/name: size}."""
    ts = c.new_instant_time("default", table)
    c.create_instant("default", table, ts, "commit")
    c.transition_to_inflight("default", table, ts, "commit", None)
    schema = pa.schema([(n, t) for n, (_, t) in COLUMNS.items()])
    stats, write_stats, sizes = [], {}, {}
    for part, fid, rows in files:
        name = f"{fid}_0-1-1_{ts}.parquet"
        t = pa.Table.from_pylist(rows, schema=schema)
        path = f"{base}/{part}/{name}"
        os.makedirs(f"{base}/{part}", exist_ok=True)
        pq.write_table(t, path)
        meta = pq.read_metadata(path)
        size = os.path.getsize(path)
        sizes[f"{part}/{name}"] = size
        blob = json.dumps(footer_stats(meta, t, list(COLUMNS))).encode()
        stats.append(to_thrift(part, f"{part}/{name}", size, uncompressed_size(meta), blob))
        write_stats.setdefault(part, []).append({"fileId": fid, "path": f"{part}/{name}", "partitionPath": part,
                                                 "fileSizeInBytes": size, "prevCommit": "null"})
    c.complete_instant("default", table, ts, "commit", {"partitionToWriteStats": write_stats, "compacted": False,
                                                        "extraMetadata": {}, "operationType": "UPSERT"},
                       None, stats if with_stats else None)
    return sizes


def _hms(port: int):
    return hmsclient.HMSClient(host="127.0.0.1", port=port)


def test_commits_keep_hive_statistics_of_the_latest_slices(our_server, tmp_path):
    table = f"hs_{uuid.uuid4().hex[:8]}"
    base = str(tmp_path / table)
    with HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}") as c:
        _register(c, table, base)
        s1 = _commit(c, table, base, [("p=a", "fa", [_row(k) for k in range(0, 6)]),
                                      ("p=b", "fb", [_row(k) for k in range(10, 14)])])
        # an upsert rewrites file group fa (its old version leaves the latest view) and adds fc
        s2 = _commit(c, table, base, [("p=a", "fa", [_row(k) for k in range(1, 6)] + [_row(40)]),
                                      ("p=a", "fc", [_row(20), _row(21)])])
        latest = {k: v for k, v in {**s1, **s2}.items() if not k.startswith("p=a/fa_") or k in s2}
    with _hms(our_server) as h:
        t = h.get_table("default", table)
        size_a = sum(v for k, v in latest.items() if k.startswith("p=a/"))
        size_b = sum(v for k, v in latest.items() if k.startswith("p=b/"))
        assert t.parameters["numFiles"] == "3" and t.parameters["totalSize"] == str(size_a + size_b)
        assert t.parameters["numRows"] == "12" and int(t.parameters["rawDataSize"]) > 0
        assert json.loads(t.parameters["COLUMN_STATS_ACCURATE"])["BASIC_STATS"] == "true"
        assert t.parameters["spark.sql.statistics.numRows"] == "12"
        assert t.parameters["spark.sql.statistics.totalSize"] == str(size_a + size_b)
        assert (t.parameters["spark.sql.statistics.colStats.i.min"],
                t.parameters["spark.sql.statistics.colStats.i.max"]) == ("1", "40")
        assert t.parameters["spark.sql.statistics.colStats.d.max"] == (_D0 + dt.timedelta(days=40)).isoformat()
        assert t.parameters["spark.sql.statistics.colStats.s.nullCount"] == "3"  # rows 3, 12 and 21
        assert "spark.sql.statistics.colStats.s.min" not in t.parameters
        parts = {p.values[0]: p.parameters for p in h.get_partitions("default", table, -1)}
        assert (parts["p=a"]["numFiles"], parts["p=a"]["numRows"], parts["p=a"]["totalSize"]) == ("2", "8", str(size_a))
        assert (parts["p=b"]["numFiles"], parts["p=b"]["numRows"], parts["p=b"]["totalSize"]) == ("1", "4", str(size_b))

        got = h.get_table_statistics_req(H2.TableStatsRequest(dbName="default", tblName=table,
                                                              colNames=["i", "f", "dec", "s", "d"])).tableStats
        by = {o.colName: o.statsData for o in got}
        assert sorted(by) == ["d", "dec", "f", "i"]  # strings: no lengths, no statistics
        assert (by["i"].longStats.lowValue, by["i"].longStats.highValue, by["i"].longStats.numNulls) == (1, 40, 0)
        assert (by["f"].doubleStats.lowValue, by["f"].doubleStats.highValue) == (0.5, 20.0)
        low = by["dec"].decimalStats.lowValue
        assert Decimal(int.from_bytes(low.unscaled, "big", signed=True)).scaleb(-low.scale) == Decimal("0.25")
        assert by["d"].dateStats.highValue.daysSinceEpoch == (_D0 + dt.timedelta(days=40) - dt.date(1970, 1, 1)).days

        part_stats = h.get_partitions_statistics_req(H2.PartitionsStatsRequest(
            dbName="default", tblName=table, colNames=["i"], partNames=["p=p%3Da", "p=p%3Db"])).partStats
        assert {n: (o[0].statsData.longStats.lowValue, o[0].statsData.longStats.highValue)
                for n, o in part_stats.items()} == {"p=p%3Da": (1, 40), "p=p%3Db": (10, 13)}
        aggr = h.get_aggr_stats_for(H2.PartitionsStatsRequest(dbName="default", tblName=table, colNames=["i"],
                                                              partNames=["p=p%3Da", "p=p%3Db"]))
        assert aggr.partsFound == 2
        longs = aggr.colStats[0].statsData.longStats
        assert (longs.lowValue, longs.highValue) == (1, 40)

    with HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}") as c:
        got = {o.colName: o.statsData for o in c.get_table_statistics_req(
            TableStatsRequest(dbName="default", tblName=table, colNames=["ts", "bo"])).tableStats}
        ts, bo = got["ts"].timestampStats, got["bo"].booleanStats
        assert (bo.numTrues, bo.numFalses, bo.numNulls) == (11, 0, 1)  # every value the same: counted
        assert (ts.lowValue.secondsSinceEpoch, ts.highValue.secondsSinceEpoch) == (
            int(_T0.timestamp()) + 1, int(_T0.timestamp()) + 60)
        # an explicit update (ANALYZE) wins over the derived statistics
        c.update_table_column_statistics(ColumnStatistics(
            statsDesc=ColumnStatisticsDesc(isTblLevel=True, dbName="default", tableName=table),
            statsObj=[ColumnStatisticsObj("i", "bigint", ColumnStatisticsData(
                longStats=LongColumnStatsData(lowValue=-7, highValue=7, numNulls=1, numDVs=5)))]))
        got = {o.colName: o.statsData for o in c.get_table_statistics_req(
            TableStatsRequest(dbName="default", tblName=table, colNames=["i", "f"])).tableStats}
        assert got["i"].longStats.numDVs == 5 and got["f"].doubleStats.highValue == 20.0


def test_partitions_with_log_files_give_hive_no_column_statistics(our_server, tmp_path):
    """A log file with statistics makes its slice usable for pruning, but its counts are not the
    slice's rows': Hive's derived column statistics come from the partitions without log files."""
    table = f"hs_{uuid.uuid4().hex[:8]}"
    base = str(tmp_path / table)
    with HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}") as c:
        _register(c, table, base, table_type=HudiTableType.MERGE_ON_READ)
        s1 = _commit(c, table, base, [("p=a", "fa", [_row(k) for k in range(0, 6)]),
                                      ("p=b", "fb", [_row(k) for k in range(10, 14)])])
        base_ts = next(iter(s1)).rsplit("_", 1)[1].split(".")[0]
        ts = c.new_instant_time("default", table)
        c.create_instant("default", table, ts, "deltacommit")
        c.transition_to_inflight("default", table, ts, "deltacommit", None)
        log = f"p=a/.fa_{base_ts}.log.1_0-1-1"
        with open(f"{base}/{log}", "wb") as out:
            out.write(b"#HUDI#")
        schema = pa.schema([(n, t) for n, (_, t) in COLUMNS.items()])
        stats = log_file_stats(pa.Table.from_pylist([_row(3)], schema=schema), list(COLUMNS))
        c.complete_instant("default", table, ts, "deltacommit", {
            "partitionToWriteStats": {"p=a": [{"fileId": "fa", "path": log, "partitionPath": "p=a",
                                               "fileSizeInBytes": 6, "prevCommit": base_ts}]},
            "compacted": False, "extraMetadata": {}, "operationType": "UPSERT"}, None,
            [to_thrift("p=a", log, 6, 6, stats)])
        assert [s.fileId for s in c.prune_file_slices("default", table, "i > 100").slices] == []
    with _hms(our_server) as h:
        part_stats = h.get_partitions_statistics_req(H2.PartitionsStatsRequest(
            dbName="default", tblName=table, colNames=["i"], partNames=["p=p%3Da", "p=p%3Db"])).partStats
        assert {n: (o[0].statsData.longStats.lowValue, o[0].statsData.longStats.highValue)
                for n, o in part_stats.items() if o} == {"p=p%3Db": (10, 13)}
        got = h.get_table_statistics_req(H2.TableStatsRequest(dbName="default", tblName=table,
                                                              colNames=["i"])).tableStats
        assert got == []


def test_files_without_statistics_give_sizes_but_no_row_counts(our_server, tmp_path):
    table = f"hs_{uuid.uuid4().hex[:8]}"
    base = str(tmp_path / table)
    with HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}") as c:
        _register(c, table, base)
        sizes = _commit(c, table, base, [("p=a", "fa", [_row(1)])], with_stats=False)
        t = c.get_table("default", table)
        assert t.parameters["numFiles"] == "1" and t.parameters["totalSize"] == str(sum(sizes.values()))
        assert "numRows" not in t.parameters and "spark.sql.statistics.numRows" not in t.parameters
        assert "COLUMN_STATS_ACCURATE" not in t.parameters
        assert c.get_table_statistics_req(TableStatsRequest(dbName="default", tblName=table,
                                                            colNames=["i"])).tableStats == []


def test_partitioned_plain_hive_registration_keeps_statistics_on_partitions_only(our_server, tmp_path):
    """A partitioned table registered as a plain Hive table (no Spark data source provider): the
    table carries no statistics (a Spark without Hudi's jars could not drop its partitions), its
    partitions do, and the column statistics calls still answer."""
    table = f"hs_{uuid.uuid4().hex[:8]}"
    base = str(tmp_path / table)
    with HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}") as c:
        _register(c, table, base, {"hoodie.datasource.hive_sync.sync_as_datasource": "false"})
        sizes = _commit(c, table, base, [("p=a", "fa", [_row(k) for k in range(3)])])
    with _hms(our_server) as h:
        t = h.get_table("default", table)
        assert "spark.sql.sources.provider" not in t.parameters
        assert not [k for k in t.parameters if k in ("numFiles", "totalSize", "numRows", "rawDataSize")
                    or k.startswith("spark.sql.statistics.")], t.parameters
        (part,) = h.get_partitions("default", table, -1)
        assert (part.parameters["numFiles"], part.parameters["numRows"], part.parameters["totalSize"]) == (
            "1", "3", str(sum(sizes.values())))
        got = h.get_table_statistics_req(H2.TableStatsRequest(dbName="default", tblName=table,
                                                              colNames=["i"])).tableStats
        assert (got[0].statsData.longStats.lowValue, got[0].statsData.longStats.highValue) == (0, 2)


@pytest.mark.parametrize("without_stats", [0.0, 0.15])
def test_incremental_upkeep_equals_a_full_recount(our_server_info, tmp_path, without_stats):
    """Commits keep the partitions' statistics up to date from the file groups they touch; after
    random commits (new groups, new versions whose bounds widen, shrink or stay inside, files
    without statistics) and a clean, they equal a full recount of every partition."""
    import random

    import sqlalchemy as sa


    rng = random.Random(7)
    table = f"hs_{uuid.uuid4().hex[:8]}"
    base = str(tmp_path / table)
    with HudiMetastoreClient(f"thrift://127.0.0.1:{our_server_info.port}") as c:
        _register(c, table, base)
        # anchors hold every partition's bounds (never rewritten): the other rewrites stay inside
        # them, so the upkeep is incremental (a partition is recounted only for files without
        # statistics)
        _commit_some(c, table, base, [(f"p={p}", f"anchor{p}", [_row(-1000), _row(9998)]) for p in "abc"], set())
        fids: list[tuple[str, str]] = []
        for _ in range(10):
            files, no_stats = [], set()
            for _k in range(rng.randint(1, 5)):
                if fids and rng.random() < 0.6:
                    part, fid = rng.choice(fids)
                else:
                    part, fid = f"p={rng.choice('abc')}", uuid.uuid4().hex[:8]
                    fids.append((part, fid))
                if any(f == fid for _, f, _ in files):
                    continue
                lo = rng.randint(1, 86)
                files.append((part, fid, [_row(lo + j) for j in range(rng.randint(1, 4))]))
                if rng.random() < without_stats:
                    no_stats.add(len(files) - 1)
            _commit_some(c, table, base, files, no_stats)
    eng = sa.create_engine(our_server_info.db_url)
    try:
        kept = _assert_kept_equals_recount(eng, table)
        assert kept[0] and kept[1]
    finally:
        eng.dispose()


def _assert_kept_equals_recount(eng, table: str) -> tuple[list, list]:
    """The partitions' kept statistics equal a full recount (rolled back); returns them."""
    import sqlalchemy as sa

    from store.db import schema as S
    from store.hudi.column_stats import ColumnStats

    with eng.begin() as conn:
        tbl_id = conn.execute(sa.select(S.tbl.c.tbl_id).where(S.tbl.c.name == table)).scalar_one()

        def state():
            ss = sorted(tuple(r) for r in conn.execute(sa.select(S.snapshot_stats).where(
                S.snapshot_stats.c.tbl_id == tbl_id)))
            pcs = sorted((r.partition_path, r.column_name, None if r.min_key is None else bytes(r.min_key),
                          None if r.max_key is None else bytes(r.max_key), r.null_count, r.value_count,
                          r.files_without_stats) for r in conn.execute(sa.select(S.partition_column_stats).where(
                              S.partition_column_stats.c.tbl_id == tbl_id)))
            return ss, pcs

        kept = state()
        ref = type("Ref", (), {"tbl_id": tbl_id})()  # refresh_partitions needs only the table's id
        ColumnStats().refresh_partitions(conn, ref, ["p=a", "p=b", "p=c"])  # type: ignore[arg-type]
        assert state() == kept
        conn.rollback()
    return kept


def _commit_some(c, table: str, base: str, files, no_stats: set[int]) -> None:
    """_commit with some files' statistics left out."""
    ts = c.new_instant_time("default", table)
    c.create_instant("default", table, ts, "commit")
    c.transition_to_inflight("default", table, ts, "commit", None)
    schema = pa.schema([(n, t) for n, (_, t) in COLUMNS.items()])
    stats, write_stats = [], {}
    for k, (part, fid, rows) in enumerate(files):
        name = f"{fid}_0-1-1_{ts}.parquet"
        t = pa.Table.from_pylist(rows, schema=schema)
        os.makedirs(f"{base}/{part}", exist_ok=True)
        path = f"{base}/{part}/{name}"
        pq.write_table(t, path)
        meta = pq.read_metadata(path)
        size = os.path.getsize(path)
        if k not in no_stats:
            stats.append(to_thrift(part, f"{part}/{name}", size, uncompressed_size(meta),
                                   json.dumps(footer_stats(meta, t, list(COLUMNS))).encode()))
        write_stats.setdefault(part, []).append({"fileId": fid, "path": f"{part}/{name}", "partitionPath": part,
                                                 "fileSizeInBytes": size, "prevCommit": "null"})
    c.complete_instant("default", table, ts, "commit", {"partitionToWriteStats": write_stats, "compacted": False,
                                                        "extraMetadata": {}, "operationType": "UPSERT"},
                       None, stats)


@pytest.mark.parametrize("seed,base_share,log_share", [(11, 0.85, 0.7), (5, 1.0, 1.0)])
def test_upkeep_with_log_files_compaction_and_replace_equals_a_full_recount(our_server_info, tmp_path, seed,
                                                                             base_share, log_share):
    """The incremental upkeep on a merge-on-read table: log files written to a group's slice and
    appended to again, log files on a pending compaction's base instant that the compaction commit
    then joins to its base file, new base versions, replaced groups; after each seeded random step
    the partitions' statistics equal a full recount. With every new file's statistics given, most
    log steps are the additions the upkeep makes without reading the slices (Slices.appended)."""
    import random

    import sqlalchemy as sa

    rng = random.Random(seed)
    table = f"hm_{uuid.uuid4().hex[:8]}"
    base = str(tmp_path / table)
    c = HudiMetastoreClient(f"thrift://127.0.0.1:{our_server_info.port}")
    c.register_hudi_table(
        HudiTableConfig(dbName="default", tableName=table, tableType=HudiTableType.MERGE_ON_READ,
                        recordKeyFields=["i"], partitionFields=["p"], properties={}, basePath=base),
        [FieldSchema(n, t, None) for n, (t, _) in COLUMNS.items()] + [FieldSchema("p", "string", None)])
    groups: dict[tuple[str, str], str] = {}  # (partition, file id) -> base instant of its latest slice
    logs: dict[tuple[str, str], list[str]] = {}  # log file names of the latest slice
    sizes: dict[str, int] = {}
    seen: dict[str, int] = {"appended": 0, "compacted": 0, "replaced": 0, "log statistics": 0,
                            "usable log slices": 0}

    def stat(part: str, fid: str, name: str, size: int) -> dict:
        return {"fileId": fid, "path": f"{part}/{name}", "partitionPath": part, "fileSizeInBytes": size,
                "prevCommit": "null"}

    def base_files(ts: str, picks: list[tuple[str, str]]) -> tuple[dict, list]:
        schema = pa.schema([(n, t) for n, (_, t) in COLUMNS.items()])
        write_stats: dict[str, list] = {}
        stats = []
        for part, fid in picks:
            name = f"{fid}_0-1-1_{ts}.parquet"
            lo = rng.randint(1, 86)
            t = pa.Table.from_pylist([_row(lo + j) for j in range(rng.randint(1, 4))], schema=schema)
            os.makedirs(f"{base}/{part}", exist_ok=True)
            path = f"{base}/{part}/{name}"
            pq.write_table(t, path)
            meta, size = pq.read_metadata(path), os.path.getsize(path)
            if rng.random() < base_share:
                stats.append(to_thrift(part, f"{part}/{name}", size, uncompressed_size(meta),
                                       json.dumps(footer_stats(meta, t, list(COLUMNS))).encode()))
            write_stats.setdefault(part, []).append(stat(part, fid, name, size))
            groups[(part, fid)] = ts
            logs[(part, fid)] = []
        return write_stats, stats

    def complete(ts: str, action: str, write_stats: dict, stats: list, op: str, replaced: dict | None = None) -> None:
        doc = {"partitionToWriteStats": write_stats, "compacted": action == "compaction", "extraMetadata": {},
               "operationType": op}
        if replaced:
            doc["partitionToReplaceFileIds"] = replaced
        c.complete_instant("default", table, ts, action, doc, None, stats or None)

    def log_stats(picks: list[tuple[str, str]], on: dict[tuple[str, str], str]) -> tuple[dict, list]:
        """Log files on these groups, new ones mostly with statistics (of 1-3 rows), or appended to."""
        write_stats: dict[str, list] = {}
        stats = []
        schema = pa.schema([(n, t) for n, (_, t) in COLUMNS.items()])
        for part, fid in picks:
            names = logs.setdefault((part, fid), []) if on[(part, fid)] == groups.get((part, fid)) else []
            if names and rng.random() < 0.4:
                name = rng.choice(names)  # appended to again: a bigger size (its statistics dropped)
                seen["appended"] += 1
            else:
                name = f".{fid}_{on[(part, fid)]}.log.{len(names) + 1}_0-1-1"
                names.append(name)
            fresh = name not in sizes
            sizes[name] = sizes.get(name, 0) + rng.randint(100, 900)
            write_stats.setdefault(part, []).append(stat(part, fid, name, sizes[name]))
            if fresh and rng.random() < log_share:
                lo = rng.randint(1, 86)
                t = pa.Table.from_pylist([_row(lo + j) for j in range(rng.randint(1, 3))], schema=schema)
                stats.append(to_thrift(part, f"{part}/{name}", sizes[name], sizes[name],
                                       log_file_stats(t, list(COLUMNS))))
                seen["log statistics"] += 1
        return write_stats, stats

    eng = sa.create_engine(our_server_info.db_url)

    def check() -> None:
        ss, pcs = _assert_kept_equals_recount(eng, table)
        # a partition with log files whose column `i` has statistics in every latest slice
        with_logs = {r[1] for r in ss if r[3] != r[4]}
        seen["usable log slices"] += any(p in with_logs and col == "i" and without == 0
                                         for p, col, _, _, _, _, without in pcs)

    try:
        with c:
            ts = c.new_instant_time("default", table)
            c.create_instant("default", table, ts, "deltacommit")
            c.transition_to_inflight("default", table, ts, "deltacommit", None)
            first = [(f"p={p}", f"{rng.getrandbits(32):08x}") for p in "abcab"]
            complete(ts, "deltacommit", *base_files(ts, first), "INSERT")
            check()
            pending: tuple[str, list[tuple[str, str]]] | None = None
            for _ in range(30):
                step = rng.choice(["base", "log", "log", "compaction", "replace"])
                if step == "replace" and pending is not None:
                    step = "compaction"  # a replace in its partition would conflict with it: complete it first
                live = sorted(groups)
                if step == "compaction" and pending is None:
                    # requested now; log files then go to its base instant, before it completes
                    cts = c.new_instant_time("default", table)
                    c.create_instant("default", table, cts, "compaction")
                    pending = (cts, rng.sample(live, min(2, len(live))))
                    ts = c.new_instant_time("default", table)
                    c.create_instant("default", table, ts, "deltacommit")
                    c.transition_to_inflight("default", table, ts, "deltacommit", None)
                    complete(ts, "deltacommit", *log_stats(pending[1], {g: cts for g in pending[1]}), "UPSERT")
                elif step == "compaction" and pending is not None:
                    cts, picks = pending
                    pending = None
                    c.transition_to_inflight("default", table, cts, "compaction", None)
                    complete(cts, "compaction", *base_files(cts, [g for g in picks if g in groups]), "COMPACT")
                    seen["compacted"] += 1
                elif step == "log":
                    picks = [g for g in rng.sample(live, min(3, len(live)))
                             if pending is None or g not in pending[1]]
                    ts = c.new_instant_time("default", table)
                    c.create_instant("default", table, ts, "deltacommit")
                    c.transition_to_inflight("default", table, ts, "deltacommit", None)
                    complete(ts, "deltacommit", *log_stats(picks, groups), "UPSERT")
                elif step == "base":
                    picks = [g for g in rng.sample(live, min(2, len(live)))
                             if pending is None or g not in pending[1]]
                    picks.append((f"p={rng.choice('abc')}", f"{rng.getrandbits(32):08x}"))
                    ts = c.new_instant_time("default", table)
                    c.create_instant("default", table, ts, "deltacommit")
                    c.transition_to_inflight("default", table, ts, "deltacommit", None)
                    complete(ts, "deltacommit", *base_files(ts, picks), "UPSERT")
                else:
                    old = rng.choice(live)
                    ts = c.new_instant_time("default", table)
                    c.create_instant("default", table, ts, "replacecommit")
                    c.transition_to_inflight("default", table, ts, "replacecommit", None)
                    ws, st = base_files(ts, [(old[0], f"{rng.getrandbits(32):08x}")])
                    del groups[old]
                    complete(ts, "replacecommit", ws, st, "CLUSTER", {old[0]: [old[1]]})
                    seen["replaced"] += 1
                check()
        assert min(seen.values()) >= 1, seen  # the sequence covers each case
    finally:
        eng.dispose()
