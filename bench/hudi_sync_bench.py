"""Hudi's own writers against the server (issue 44): the catch-up of a commit written on storage, and
Hudi's hive sync of a table with many partitions, ours side by side with the reference Hive Metastore.

    python -m bench.hudi_sync_bench [--part catch-up|hive-sync|both] [--backend sqlite|postgres|both]
        [--files 1000] [--commit-partitions 100] [--rows-per-file 10] [--rounds 7]
        [--partitions 10000] [--batch 1000] [--sync-rounds 3] [--ours-only] [--json out.json]

The Hudi tables are written here in Hudi 1.2's format (table version 9, timeline layout 2: Parquet
base files with Hudi's meta columns, `.hoodie_partition_metadata`, `<ts>.commit.requested`,
`<ts>.inflight`, `<ts>_<completed>.commit` holding an Avro `HoodieCommitMetadata` in the writer
schema of a commit Hudi 1.x wrote, taken from tests/fixtures/hudi-tables/cow_v8_*.zip).

1. Catch-up (``--part catch-up``, each ``--backend``): our server (started here, fresh database) is
   told about a copy-on-write table by Hudi's hive sync (``create_table`` as sync sends it), whose
   first commit wrote ``--files`` file groups over ``--commit-partitions`` partitions: the table is
   tracked from that call. Each round then writes one more commit on storage (untimed): a new base
   file for every file group (an upsert of every record), and times the sync call that follows it,
   ``alter_table_with_environment_context`` (Hudi's ``last_commit_time_sync`` update), which
   catches the table up first: reading the timeline, parsing the commit, the new files' Parquet
   footers (column statistics) and keys (record index), and applying it all in one transaction.
   Reported beside it: the same call with nothing to catch up. Target: under 200 ms on PostgreSQL.
2. Hive sync (``--part hive-sync``, PostgreSQL; ours, then the reference Hive Metastore 2.3.10 on
   PostgreSQL unless ``--ours-only``): a Hudi table on storage with ``--partitions`` partitions (one
   file each, commits of 1,000 files). Each round replays the Thrift calls of Hudi's HiveSyncTool in
   ``hms`` mode (sync as a data source) for the table's first sync: ``get_database``, ``get_table``
   (not there), ``create_table``, ``get_table`` x2 (schema, last synced commit), ``get_partitions``
   (all), ``get_table``, ``add_partitions_req`` in batches of ``--batch`` (Hudi's
   ``hoodie.datasource.hive_sync.batch_num``, 1000; ifNotExists, no result), ``get_table`` and
   ``alter_table_with_environment_context`` (last_commit_time_sync); then a second sync with nothing
   new (``get_table``, ``get_partitions`` of all, ``alter_table``). The table is dropped between
   rounds (untimed, data kept). On ours the table is tracked from its ``create_table``: that call
   imports the table's timeline and files, its column statistics and record index, and the
   ``add_partitions`` that follow answer success without change (the commits made the partitions).
   Same client for both: the Python Thrift runtime with the accelerated binary protocol.

Processes and databases come from bench/procs.py; every answer is checked (partition counts).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import io
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
import traceback
import uuid
import zipfile
from pathlib import Path

from bench import procs
from bench.stats import summarize
from hudi_format import config_keys as K

REPO_ROOT = procs.REPO_ROOT
COMMIT_TEMPLATE = REPO_ROOT / "tests" / "fixtures" / "hudi-tables" / "cow_v8_simplekeygen_nonhivestyle.zip"
DB = "hudi_sync_bench"
HUDI_INPUT_FORMAT = "org.apache.hudi.hadoop.HoodieParquetInputFormat"
PARQUET_OUTPUT_FORMAT = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
PARQUET_SERDE = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
DATA_SCHEMA = {"type": "record", "name": "bench_record", "namespace": K.AVRO_NAMESPACE_PREFIX + "bench", "fields": [
    {"name": "id", "type": "string"}, {"name": "ts", "type": "long"},
    {"name": "value", "type": ["null", "double"], "default": None}, {"name": "part", "type": "string"}]}


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- a Hudi table on storage


def hudi_commit_schema() -> dict:
    """The Avro writer schema of HoodieCommitMetadata as Hudi 1.x writes it (from a fixture's commit)."""
    import fastavro

    with zipfile.ZipFile(COMMIT_TEMPLATE) as z:
        name = next(n for n in z.namelist() if n.endswith(".commit") and "/timeline/" in n and "MACOSX" not in n)
        return fastavro.reader(io.BytesIO(z.read(name))).writer_schema


class HudiTableOnStorage:
    """A copy-on-write table in table version 9 layout, written as Hudi 1.2's writer writes one:
    partitioned by `part` (hive style), record key `id`, meta columns populated."""

    def __init__(self, base: Path, name: str, rows_per_file: int):
        import fastavro

        self.base, self.name, self.rows_per_file = base, name, rows_per_file
        self.timeline = base / ".hoodie" / "timeline"
        self.schema = fastavro.parse_schema(hudi_commit_schema())
        self.clock = _dt.datetime(2026, 1, 1, tzinfo=_dt.timezone.utc)
        self.groups: dict[tuple[str, str], str] = {}  # (partition, file id) -> latest base file name
        self.keys: dict[tuple[str, str], list[str]] = {}
        self.next_key = 0
        self._init()

    def _tick(self) -> str:
        self.clock += _dt.timedelta(milliseconds=7)
        return self.clock.strftime("%Y%m%d%H%M%S%f")[:17]

    def _init(self) -> None:
        from hudi_format.layout import java_properties, table_checksum

        for d in (self.timeline / "history", self.base / ".hoodie" / ".aux" / ".bootstrap" / ".partitions",
                  self.base / ".hoodie" / ".aux" / ".bootstrap" / ".fileids", self.base / ".hoodie" / ".schema",
                  self.base / ".hoodie" / ".temp"):
            d.mkdir(parents=True, exist_ok=True)
        props = {
            K.TABLE_NAME: self.name, K.DATABASE_NAME: "default", K.TABLE_TYPE: "COPY_ON_WRITE",
            K.TABLE_VERSION: "9", K.TABLE_INITIAL_VERSION: "9", K.TIMELINE_LAYOUT_VERSION: "2",
            K.TIMELINE_PATH: "timeline", K.TIMELINE_HISTORY_PATH: "history",
            K.ARCHIVELOG_FOLDER: "archived", K.RECORDKEY_FIELDS: "id",
            K.PARTITION_FIELDS: "part", K.ORDERING_FIELDS: "ts",
            K.KEYGENERATOR_TYPE: "SIMPLE", K.HIVE_STYLE_PARTITIONING: "true",
            K.URL_ENCODE_PARTITIONING: "false",
            K.DROP_PARTITION_COLUMNS: "false",
            K.RECORD_MERGE_MODE: "EVENT_TIME_ORDERING",
            K.CREATE_SCHEMA: json.dumps(DATA_SCHEMA, separators=(",", ":")),
        }
        props[K.CHECKSUM] = str(table_checksum(props))
        (self.base / ".hoodie" / K.PROPERTIES_FILE).write_bytes(java_properties(props, "Properties saved by bench"))

    def _parquet(self, partition: str, file_id: str, ts: str, keys: list[str]) -> tuple[str, int]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        name = f"{file_id}_0-1-1_{ts}.parquet"
        n = len(keys)
        table = pa.table({
            "_hoodie_commit_time": [ts] * n, "_hoodie_commit_seqno": [f"{ts}_0_{i}" for i in range(n)],
            "_hoodie_record_key": keys, "_hoodie_partition_path": [partition] * n, "_hoodie_file_name": [name] * n,
            "id": keys, "ts": pa.array([int(ts)] * n, pa.int64()), "value": pa.array([float(i) for i in range(n)]),
            "part": [partition.split("=", 1)[1]] * n})
        path = self.base / partition / name
        pq.write_table(table, path)
        return name, path.stat().st_size

    def commit(self, new_partitions: list[str] | None = None, groups_per_partition: int = 1,
               only: set[tuple[str, str]] | None = None) -> str:
        """One completed commit: new file groups in `new_partitions` (an insert), or else a new base
        file of every file group (an upsert of every record; `only`: of these (partition, file id)).
        Returns the instant time."""
        import fastavro

        ts = self._tick()
        (self.timeline / f"{ts}.commit.requested").write_bytes(b"")
        stats: dict[str, list[dict]] = {}
        if new_partitions is not None:
            todo = []
            for p in new_partitions:
                (self.base / p).mkdir(parents=True, exist_ok=True)
                meta = self.base / p / ".hoodie_partition_metadata"
                if not meta.exists():
                    meta.write_text(f"#partition metadata\ncommitTime={ts}\npartitionDepth=1\n")
                for _ in range(groups_per_partition):
                    todo.append((p, f"{uuid.uuid4()}-0", None))
        else:
            todo = [(p, fid, prev) for (p, fid), prev in sorted(self.groups.items())
                    if only is None or (p, fid) in only]
        for partition, file_id, prev in todo:
            if prev is None:
                keys = [f"k{self.next_key + i:09d}" for i in range(self.rows_per_file)]
                self.next_key += self.rows_per_file
                prev_commit = "null"
            else:
                keys = self.keys[(partition, file_id)]
                prev_commit = prev.rsplit("_", 1)[1].split(".")[0]
            name, size = self._parquet(partition, file_id, ts, keys)
            self.keys[(partition, file_id)] = keys
            self.groups[(partition, file_id)] = name
            n = len(keys)
            stats.setdefault(partition, []).append({
                "fileId": file_id, "path": f"{partition}/{name}", "prevCommit": prev_commit, "numWrites": n,
                "numDeletes": 0, "numUpdateWrites": 0 if prev is None else n, "numInserts": n if prev is None else 0,
                "totalWriteBytes": size, "totalWriteErrors": 0, "partitionPath": partition, "totalLogRecords": 0,
                "totalUpdatedRecordsCompacted": 0, "totalLogBlocks": 0, "totalCorruptLogBlock": 0,
                "totalRollbackBlocks": 0, "fileSizeInBytes": size, "prevBaseFile": prev,
                "runtimeStats": {"totalScanTime": 0, "totalCreateTime": 1, "totalUpsertTime": 0},
                "totalLogFilesCompacted": 0, "totalLogReadTimeMs": 0, "totalLogSizeCompacted": 0, "numUpdates": 0})
        op = "INSERT" if new_partitions is not None else "UPSERT"
        extra = {"schema": json.dumps(DATA_SCHEMA, separators=(",", ":"))}

        def avro(record: dict) -> bytes:
            buf = io.BytesIO()
            fastavro.writer(buf, self.schema, [record], codec="null")
            return buf.getvalue()

        (self.timeline / f"{ts}.inflight").write_bytes(avro(
            {"partitionToWriteStats": {p: [] for p in stats}, "compacted": False, "extraMetadata": {},
             "operationType": op}))
        done = self._tick()
        (self.timeline / f"{ts}_{done}.commit").write_bytes(avro(
            {"partitionToWriteStats": stats, "compacted": False, "extraMetadata": extra, "operationType": op}))
        return ts


def partition_names(n: int) -> list[str]:
    return [f"part=p{i:05d}" for i in range(n)]


# --------------------------------------------------------------------------- Thrift: what Hudi's sync sends


def synced_table(name: str, base: Path):
    """The table Hudi 1.x's hive sync creates (`hms` mode, sync as a data source)."""
    from thrift_idl.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table

    cols = [FieldSchema(c, t, None) for c, t in (
        ("_hoodie_commit_time", "string"), ("_hoodie_commit_seqno", "string"), ("_hoodie_record_key", "string"),
        ("_hoodie_partition_path", "string"), ("_hoodie_file_name", "string"), ("id", "string"), ("ts", "bigint"),
        ("value", "double"))]
    location = "file:" + str(base)
    sd = StorageDescriptor(cols=cols, location=location, inputFormat=HUDI_INPUT_FORMAT,
                           outputFormat=PARQUET_OUTPUT_FORMAT, compressed=False, numBuckets=-1,
                           serdeInfo=SerDeInfo(serializationLib=PARQUET_SERDE, parameters={
                               "path": location, K.QUERY_AS_RO_TABLE: "false", "serialization.format": "1"}),
                           bucketCols=[], sortCols=[], parameters={})
    params = {"EXTERNAL": "TRUE", "spark.sql.sources.provider": "hudi", "spark.sql.sources.schema.numParts": "1",
              "spark.sql.sources.schema.part.0": json.dumps({"type": "struct", "fields": []}),
              "spark.sql.sources.schema.numPartCols": "1", "spark.sql.sources.schema.partCol.0": "part"}
    return Table(tableName=name, dbName=DB, owner="spark", sd=sd, partitionKeys=[FieldSchema("part", "string", None)],
                 tableType="EXTERNAL_TABLE", parameters=params)


def sync_partition(table, partition: str):
    """HMSDDLExecutor.addPartitionsToTable: the table's descriptor, the partition's location."""
    from thrift_idl.hive_metastore.ttypes import Partition

    sd = table.sd.__class__(**{**table.sd.__dict__, "location": f"{table.sd.location.rstrip('/')}/{partition}"})
    return Partition(values=[partition.split("=", 1)[1]], dbName=DB, tableName=table.tableName, createTime=0,
                     lastAccessTime=0, sd=sd, parameters=None)


def alter_synced(c, name: str, commit_ts: str) -> None:
    """HoodieHiveSyncClient.updateLastCommitTimeSynced: get_table, then alter_table with the time."""
    from thrift_idl.hive_metastore.ttypes import EnvironmentContext

    t = c.get_table(DB, name)
    t.parameters = {**(t.parameters or {}), "last_commit_time_sync": commit_ts,
                    "last_commit_completion_time_sync": commit_ts}
    c.alter_table_with_environment_context(DB, name, t, EnvironmentContext(properties={}))


def ensure_database(c, location: Path) -> None:
    from thrift_idl.hive_metastore.ttypes import AlreadyExistsException, Database

    try:
        c.create_database(Database(name=DB, description="", locationUri="file:" + str(location), parameters={}))
    except AlreadyExistsException:
        pass


# --------------------------------------------------------------------------- servers and databases


class Side:
    """One metastore process on a fresh database."""

    def __init__(self, name: str, backend: str, work: Path):
        self.name, self.backend, self.work = name, backend, work
        self.cleanup: list = []
        self.server: procs.Server | None = None

    def start(self) -> procs.Server:
        self.work.mkdir(parents=True, exist_ok=True)
        if self.backend == "postgres":
            dbname = procs.create_pg_database(f"hsync_{self.name[:3]}")
            self.cleanup.append(lambda: procs.drop_pg_database(dbname))
        if self.name == "reference":
            server = procs.start_reference(self.work, procs.pg_url(dbname, "jdbc") if self.backend == "postgres"
                                           else None, procs.pg_user(), heap="2g")
        else:
            url = procs.pg_url(dbname) if self.backend == "postgres" else f"sqlite:///{self.work / 'metastore.db'}"
            server = procs.start_ours(url, self.work)
        self.cleanup.append(server.stop)
        self.server = server
        return server

    def stop(self) -> None:
        procs.cleanup_all(self.cleanup)
        self.cleanup = []


class Sides:
    """The metastores of a run, each started once (the catch-up and the hive sync share ours), all
    stopped at the end."""

    def __init__(self, tmp: Path):
        self.tmp, self.started = tmp, {}

    def get(self, name: str, backend: str) -> procs.Server:
        if (name, backend) not in self.started:
            side = Side(name, backend, self.tmp / f"{name}_{backend}")
            self.started[(name, backend)] = side
            side.start()
        server = self.started[(name, backend)].server
        assert server is not None
        return server

    def stop(self, name: str, backend: str) -> None:
        side = self.started.pop((name, backend), None)
        if side is not None:
            side.stop()

    def stop_all(self) -> None:
        for key in list(self.started):
            self.stop(*key)


# --------------------------------------------------------------------------- 1. catch-up


def run_catch_up(sides: Sides, backend: str, args, tmp: Path) -> dict:
    """A tracked table, one commit of --files files per round, the sync call after it timed."""
    out: dict = {"backend": backend, "files": args.files, "partitions": args.commit_partitions,
                 "rows_per_file": args.rows_per_file}
    table = HudiTableOnStorage(tmp / f"catchup_{backend}", "trips", args.rows_per_file)
    parts = partition_names(args.commit_partitions)
    per = max(1, args.files // len(parts))
    first = table.commit(parts, groups_per_partition=per)
    server = sides.get("ours", backend)
    out["server"] = server.description
    c, transport = procs.thrift_client(server.port)
    try:
        ensure_database(c, tmp / f"dbloc_{backend}")
        t0 = time.perf_counter()
        c.create_table(synced_table("trips", table.base))
        out["register_ms"] = round((time.perf_counter() - t0) * 1000, 1)
        alter_synced(c, "trips", first)
        got = len(c.get_partition_names(DB, "trips", -1))
        if got != len(parts):
            raise AssertionError(f"tracked table has {got} partitions, its commit wrote {len(parts)}")
        samples, idle = [], []
        for i in range(-args.warmup, args.rounds):
            ts = table.commit()  # untimed: the writer's commit on storage
            t = c.get_table(DB, "trips")
            t.parameters = {**(t.parameters or {}), "last_commit_time_sync": ts}
            t0 = time.perf_counter()
            c.alter_table_with_environment_context(DB, "trips", t, _env())
            dt = time.perf_counter() - t0
            t0 = time.perf_counter()
            c.alter_table_with_environment_context(DB, "trips", t, _env())  # nothing left to catch up
            dt_idle = time.perf_counter() - t0
            if i >= 0:
                samples.append(dt)
                idle.append(dt_idle)
            log(f"[{backend}] catch-up round {i}: {dt * 1000:.1f} ms (idle call {dt_idle * 1000:.1f} ms)")
        out["catch_up"] = summarize(samples)
        out["idle_call"] = summarize(idle)
        out["check"] = _check_catch_up(c, len(parts))
    finally:
        transport.close()
    return out


def _env():
    from thrift_idl.hive_metastore.ttypes import EnvironmentContext

    return EnvironmentContext(properties={})


def _check_catch_up(c, n_parts: int) -> str:
    """The server's latest instant is storage's and the partitions are the commits'."""
    got = len(c.get_partition_names(DB, "trips", -1))
    if got != n_parts:
        return f"FAIL: {got} partitions, want {n_parts}"
    return "ok"


# --------------------------------------------------------------------------- 2. hive sync


def build_sync_table(tmp: Path, n: int, rows_per_file: int, per_commit: int = 1000) -> tuple[HudiTableOnStorage, str]:
    table = HudiTableOnStorage(tmp / "sync_table", "sync_src", rows_per_file)
    parts = partition_names(n)
    last = ""
    t0 = time.monotonic()
    for k in range(0, n, per_commit):
        last = table.commit(parts[k:k + per_commit])
    log(f"hive-sync table: {n} partitions in {(n + per_commit - 1) // per_commit} commit(s), "
        f"{time.monotonic() - t0:.1f} s")
    return table, last


def sync_round(c, name: str, base: Path, parts: list[str], batch: int, last_ts: str) -> dict:
    """Hudi's HiveSyncTool.syncHoodieTable for a new table, then a second sync with nothing new;
    milliseconds per step."""
    from thrift_idl.hive_metastore.ttypes import AddPartitionsRequest, NoSuchObjectException

    steps: dict[str, float] = {}

    def timed(step: str, fn):
        t0 = time.perf_counter()
        try:
            return fn()
        finally:
            steps[step] = steps.get(step, 0.0) + (time.perf_counter() - t0) * 1000

    t_all = time.perf_counter()
    timed("get_database", lambda: c.get_database(DB))
    try:
        timed("get_table", lambda: c.get_table(DB, name))
        raise AssertionError(f"{name} exists before its first sync")
    except NoSuchObjectException:
        pass
    timed("create_table", lambda: c.create_table(synced_table(name, base)))
    timed("get_table", lambda: c.get_table(DB, name))
    timed("get_table", lambda: c.get_table(DB, name))
    existing = timed("get_partitions", lambda: c.get_partitions(DB, name, -1))
    known = {tuple(p.values) for p in existing}
    table = timed("get_table", lambda: c.get_table(DB, name))
    new = [p for p in parts if (p.split("=", 1)[1],) not in known]
    for k in range(0, len(new), batch):
        chunk = [sync_partition(table, p) for p in new[k:k + batch]]
        timed("add_partitions", lambda chunk=chunk: c.add_partitions_req(AddPartitionsRequest(
            dbName=DB, tblName=name, parts=chunk, ifNotExists=True, needResult=False)))
    timed("alter_table", lambda: alter_synced(c, name, last_ts))
    first = (time.perf_counter() - t_all) * 1000
    t_all = time.perf_counter()
    got = timed("resync_get_partitions", lambda: c.get_partitions(DB, name, -1))
    timed("resync_alter_table", lambda: alter_synced(c, name, last_ts))
    resync = (time.perf_counter() - t_all) * 1000
    if len(got) != len(parts):
        raise AssertionError(f"{name}: {len(got)} partitions after the sync, want {len(parts)}")
    return {"first_sync_ms": first, "resync_ms": resync, "steps_ms": steps, "existing_before_add": len(existing)}


def run_hive_sync(sides: Sides, names: list[str], backend: str, args, tmp: Path) -> dict:
    table, last_ts = build_sync_table(tmp, args.partitions, args.sync_rows_per_file)
    parts = partition_names(args.partitions)
    out: dict = {"backend": backend, "partitions": args.partitions, "batch": args.batch, "sides": {}}
    for name in names:
        res: dict = {}
        out["sides"][name] = res
        try:
            server = sides.get(name, backend)
            res["server"] = server.description
            log(f"[hive-sync] {server.description} on port {server.port}")
            c, transport = procs.thrift_client(server.port)
            try:
                ensure_database(c, tmp / f"dbloc_sync_{name}")
                rounds = []
                for i in range(args.sync_rounds):
                    tname = f"sync_t{i}"
                    r = sync_round(c, tname, table.base, parts, args.batch, last_ts)
                    rounds.append(r)
                    log(f"[hive-sync] {name} round {i}: first sync {r['first_sync_ms']:.0f} ms, "
                        f"re-sync {r['resync_ms']:.0f} ms, steps "
                        + ", ".join(f"{k} {v:.0f}" for k, v in r["steps_ms"].items()))
                    c.drop_table(DB, tname, False)  # untimed; the data stays
                    if not (table.base / ".hoodie" / K.PROPERTIES_FILE).exists():
                        raise AssertionError("dropping the synced table deleted the Hudi table on storage")
                res["rounds"] = rounds
                res["first_sync"] = summarize([r["first_sync_ms"] / 1000 for r in rounds])
                res["resync"] = summarize([r["resync_ms"] / 1000 for r in rounds])
                res["steps_median_ms"] = {k: round(statistics.median(r["steps_ms"][k] for r in rounds), 1)
                                          for k in rounds[0]["steps_ms"]}
                res["check"] = "ok"
            finally:
                transport.close()
        except Exception as e:  # noqa: BLE001 - the failure is the result
            res["error"] = f"{type(e).__name__}: {str(e)[:500]}"
            log(f"[hive-sync] {name} failed: {res['error']}")
            if args.verbose:
                traceback.print_exc()
        finally:
            sides.stop(name, backend)
    ours, ref = out["sides"].get("ours", {}), out["sides"].get("reference", {})
    if "first_sync" in ours and "first_sync" in ref:
        out["ratio_first_sync"] = round(ref["first_sync"]["median_ms"] / ours["first_sync"]["median_ms"], 2)
        out["ratio_resync"] = round(ref["resync"]["median_ms"] / ours["resync"]["median_ms"], 2)
    return out


# --------------------------------------------------------------------------- report


def fmt_ms(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v / 1000:.2f} s" if v >= 1000 else f"{v:.1f} ms" if v >= 10 else f"{v:.2f} ms"


def render(results: dict) -> str:
    lines = [f"machine: {results['machine']}"]
    for r in results.get("catch_up", []):
        lines.append(f"== catch-up: {r['backend']} ==")
        if "error" in r:
            lines.append(f"error: {r['error']}")
            continue
        cu, idle = r["catch_up"], r["idle_call"]
        target = "PASS" if cu["median_ms"] < 200 else "FAIL"
        lines.append(f"catch-up of one commit ({r['files']} files, {r['partitions']} partitions): median "
                     f"{fmt_ms(cu['median_ms'])}, min {fmt_ms(cu['min_ms'])}, max {fmt_ms(cu['max_ms'])} "
                     f"({cu['iterations']} rounds; target < 200 ms on PostgreSQL: {target}) {r['check']}")
        lines.append(f"the same call with nothing to catch up: median {fmt_ms(idle['median_ms'])}")
        lines.append(f"registration at create_table ({r['files']} files): {fmt_ms(r['register_ms'])}")
        lines.append("catch-up samples in order: " + ", ".join(fmt_ms(x) for x in cu["samples_ms"]))
    hs = results.get("hive_sync")
    if hs:
        lines.append(f"== hive sync: {hs['partitions']} partitions, batches of {hs['batch']}, {hs['backend']} ==")
        for name, s in hs["sides"].items():
            if "error" in s:
                lines.append(f"{name}: error: {s['error']}")
                continue
            lines.append(f"{name} ({s['server']}): first sync median {fmt_ms(s['first_sync']['median_ms'])} "
                         f"(min {fmt_ms(s['first_sync']['min_ms'])}, max {fmt_ms(s['first_sync']['max_ms'])}), "
                         f"re-sync median {fmt_ms(s['resync']['median_ms'])}, {s['check']}")
            lines.append("  steps (median): " + ", ".join(f"{k} {fmt_ms(v)}" for k, v in s["steps_median_ms"].items()))
        if "ratio_first_sync" in hs:
            verdict = "PASS" if hs["ratio_first_sync"] >= 1 else "FAIL"
            lines.append(f"reference/ours: first sync {hs['ratio_first_sync']}x, re-sync {hs['ratio_resync']}x "
                         f"(target: ours no slower: {verdict})")
    return "\n".join(lines)


def machine_info() -> dict:
    info = {"python": platform.python_version(), "nproc": os.cpu_count(), "platform": platform.platform()}
    try:
        info["loadavg"] = [round(x, 2) for x in os.getloadavg()]
    except OSError:
        pass
    return info


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--part", choices=["catch-up", "hive-sync", "both"], default="both")
    p.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both",
                   help="catch-up: the backends; hive sync: postgres unless sqlite alone is named (ours only)")
    p.add_argument("--files", type=int, default=1000, help="files of each caught-up commit")
    p.add_argument("--commit-partitions", type=int, default=100)
    p.add_argument("--rows-per-file", type=int, default=10)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--partitions", type=int, default=10_000, help="partitions of the hive-synced table")
    p.add_argument("--batch", type=int, default=1000, help=K.HIVE_SYNC_BATCH_NUM)
    p.add_argument("--sync-rounds", type=int, default=3)
    p.add_argument("--sync-rows-per-file", type=int, default=2)
    p.add_argument("--ours-only", action="store_true", help="hive sync without the reference")
    p.add_argument("--json", type=Path)
    p.add_argument("--keep", action="store_true", help="keep the temp dir")
    p.add_argument("--verbose", action="store_true")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    backends = ["sqlite", "postgres"] if args.backend == "both" else [args.backend]
    if "postgres" in backends or args.part != "catch-up":
        ok, why = procs.pg_available()
        if not ok and "postgres" in backends:
            print(f"PostgreSQL is needed: {why}", file=sys.stderr)
            return 2
    results: dict = {"machine": machine_info(), "command": "python -m bench.hudi_sync_bench " + " ".join(
        sys.argv[1:] if argv is None else argv), "config": {k: str(v) for k, v in vars(args).items()}}
    if "postgres" in backends:
        results["machine"]["postgresql"] = procs.pg_version()
    tmp = Path(tempfile.mkdtemp(prefix="hudi-sync-bench-"))
    sides = Sides(tmp)
    rc = 0
    try:
        if args.part in ("catch-up", "both"):
            results["catch_up"] = []
            for backend in backends:
                try:
                    results["catch_up"].append(run_catch_up(sides, backend, args, tmp))
                except Exception as e:  # noqa: BLE001 - reported
                    rc = 1
                    results["catch_up"].append({"backend": backend, "error": f"{type(e).__name__}: {str(e)[:500]}"})
                    log(f"[catch-up {backend}] failed: {results['catch_up'][-1]['error']}")
                    if args.verbose:
                        traceback.print_exc()
        if args.part in ("hive-sync", "both"):
            backend = "sqlite" if backends == ["sqlite"] else "postgres"
            names = ["ours"] if args.ours_only or backend == "sqlite" else ["ours", "reference"]
            results["hive_sync"] = run_hive_sync(sides, names, backend, args, tmp)
            if any("error" in s for s in results["hive_sync"]["sides"].values()):
                rc = 1
        results["machine"]["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
        print(render(results), flush=True)
        if any(r.get("check", "ok") != "ok" for r in results.get("catch_up", [])):
            rc = 1
    finally:
        sides.stop_all()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str))
    return rc


if __name__ == "__main__":
    sys.exit(main())
