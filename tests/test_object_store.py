"""Hudi tables on an S3-compatible object store (moto on loopback, found through the AWS
environment): pipeline.write / pipeline.read of `s3://` and `s3a://` tables through each operation,
the storage mirror's timeline on the store, hudi-rs and Apache Hudi's Spark reader (with Hadoop's
S3A) reading the same rows, the store's request log showing that planning a read lists nothing, the
server's answers carrying physical paths, and validate / repair / import-hudi on the object-store
layout."""

from __future__ import annotations

import json
import os
import uuid

import pytest

from client import HudiCatalog, HudiMetastoreClient
from hudi_format.config_keys import STORAGE_PATH, STORAGE_STRATEGY_CLASS
from hudi_format.storage_strategy import file_id_of, hash_prefix
from pipeline import write
from pipeline.reader import plan
from tests.cli_helpers import run_cli
from tests.harness import start_our_server, stop_process
from tests.pipeline_helpers import hudi_rs, ours, uri

pytestmark = [pytest.mark.spark]

SCHEMA = "id long, name string, ts long, dt string"
COLS = ["id", "name", "ts", "dt"]
HIVE = {"hoodie.datasource.write.hive_style_partitioning": "true"}


@pytest.fixture
def store_server(own_backend_url, object_store, tmp_path):
    """(port, bucket): our server with a new bucket among its storage roots, so that it writes the
    timeline of the tables there (docs/security.md: the server writes only inside its boundary)."""
    bucket = object_store.bucket()
    port, proc = start_our_server(own_backend_url, tmp_path / "server", warehouse=tmp_path / "wh",
                                  extra_args=["--storage-roots", f"s3://{bucket}/,s3a://{bucket}/"])
    try:
        yield port, bucket
    finally:
        stop_process(proc)


def _expect(rows) -> dict:
    return {str(r[0]): tuple(r) for r in rows}


def _objects(bucket: str) -> set[str]:
    import s3fs

    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    return {p.split("/", 1)[1] for p in fs.find(bucket)}


@pytest.mark.backends_in_turn("postgresql", "mysql")  # storage is the subject: a backend each
@pytest.mark.parametrize("scheme,strategy", [("s3", "hive"), ("s3a", "object-store")])
def test_pipeline_on_object_store(spark, store_server, object_store, scheme, strategy, tmp_path, own_backend_url):
    our_server, bucket = store_server
    table = f"os_{uuid.uuid4().hex[:8]}.t"
    base = f"{scheme}://{bucket}/warehouse/t"
    df = lambda rows: spark.createDataFrame(rows, SCHEMA)  # noqa: E731
    r1 = [(1, "a", 1, "d1"), (2, "b", 1, "d1"), (3, "c", 1, "d2")]
    opts = dict(HIVE)
    if strategy == "object-store":
        opts |= {STORAGE_STRATEGY_CLASS: "object-store", STORAGE_PATH: f"{scheme}://{bucket}/data"}
    ts1 = write(df(r1), table, "insert", record_key="id", precombine_field="ts", partition_by=["dt"],
                metastore=uri(our_server), options=opts, path=base)
    ts2 = write(df([(1, "a2", 5, "d1"), (4, "d", 1, "d2")]), table, "upsert", metastore=uri(our_server))
    write(df([(2, None, None, "d1")]), table, "delete", metastore=uri(our_server))
    exp = _expect([(1, "a2", 5, "d1"), (3, "c", 1, "d2"), (4, "d", 1, "d2")])

    assert ours(spark, our_server, table, COLS) == exp
    assert ours(spark, our_server, table, COLS, as_of=ts1) == _expect(r1)
    assert ours(spark, our_server, table, COLS, since=ts1, until=ts2) == {"1": exp["1"], "4": exp["4"]}

    # planning a read: the server answers, the object store is not listed
    db, name = table.split(".")
    before = len(object_store.requests())
    with HudiCatalog(uri(our_server)) as c:
        p = plan(c, table)
    lists = [r for r in object_store.requests()[before:] if r[0] == "GET" and _is_list(r)]
    assert lists == []
    # ... and answers where each file is (the table's storage strategy): the reader opens those paths
    under = f"{scheme}://{bucket}/" + ("data/" if strategy == "object-store" else "warehouse/t/")
    assert len(p.paths) == len(p.files) == 2 and all(x.startswith(under) for x in p.paths), p.paths

    # the mirror wrote the timeline and partition metadata on the store (hudi-rs needs both)
    objects = _objects(bucket)
    assert "warehouse/t/.hoodie/hoodie.properties" in objects
    assert "warehouse/t/dt=d1/.hoodie_partition_metadata" in objects
    assert not [o for o in objects if o.endswith(".tmp")]  # PUT, no temp file and rename
    assert [r for r in object_store.requests()[before:] if _is_list(r)], "the request log sees LISTs"
    if strategy == "object-store":
        _check_object_store_layout(spark, our_server, table, bucket, objects, exp, tmp_path)
        return
    s3_base = f"s3://{bucket}/warehouse/t"  # hudi-rs knows s3:// (s3a:// is Hadoop's name)
    assert hudi_rs(s3_base, COLS, storage_options=object_store.storage_options()) == exp
    assert hudi_rs(s3_base, COLS, ts1, object_store.storage_options()) == _expect(r1)
    if own_backend_url.startswith("sqlite"):  # the reader reads storage only: once is enough (a JVM each)
        _check_hudi_spark_reader(our_server, f"s3a://{bucket}/warehouse/t", [ts1, ts2], exp, r1, tmp_path)


def _check_hudi_spark_reader(port, base, stamps, exp, r1, tmp_path):
    """Apache Hudi's Spark reader (its Spark 3.5 bundle with Hadoop's S3A) reads the table from the
    object store: snapshot, time travel and incremental give our pipeline's rows."""
    from tests.harness.hudi_spark import hudi_spark_env, hudi_spark_python
    from tests.harness.spark import run_spark_script

    script = os.path.join(os.path.dirname(__file__), "spark", "hudi_spark_jobs.py")
    out = run_spark_script(script, port, tmp_path / "hudi-wh", tmp_path / "hudi-read.json", timeout=900,
                           python=hudi_spark_python(), env=hudi_spark_env(s3a=True),
                           extra_args=["--read-only", "--read", json.dumps(
                               {"s3": {"base": base, "instants": stamps, "columns": COLS}})])
    got = out["read"]["s3"]
    assert "error" not in got, got
    as_rows = lambda by_key: sorted(list(v) for v in by_key.values())  # noqa: E731
    assert got["snapshot"] == as_rows(exp)
    assert got["as_of"][stamps[0]] == as_rows(_expect(r1))
    assert got["incremental"][stamps[0]] == as_rows({k: exp[k] for k in ("1", "4")})


def _check_object_store_layout(spark, port, table, bucket, objects, exp, tmp_path):
    """Data files under `data/<hash prefix>/<table>/<partition>/`, a base file's prefix the hash of
    its file id; the timeline and partition metadata under the table path; no switching strategy."""
    data = sorted(o for o in objects if o.endswith(".parquet"))
    assert data and all(o.startswith("data/") for o in data)
    for o in data:
        _, prefix, tbl, part, name = o.split("/")
        assert (prefix, tbl, part) == (hash_prefix(file_id_of(name)), "t", part) and part.startswith("dt=")
    listed = json.loads(run_cli("list-files", table, "--json", "--metastore", uri(port)).stdout)
    assert sorted(d["base_file_path"] for d in listed) == sorted(f"s3a://{bucket}/{o}" for o in _latest(listed, data))
    props = _read(bucket, "warehouse/t/.hoodie/hoodie.properties")
    assert "hoodie.storage.strategy.class=object-store" in props
    assert f"hoodie.storage.path=s3a\\://{bucket}/data" in props
    with pytest.raises(ValueError, match="cannot switch storage strategy"):
        write(spark.createDataFrame([(9, "z", 1, "d1")], SCHEMA), table, "upsert", metastore=uri(port),
              options={STORAGE_STRATEGY_CLASS: "hive"})
    assert ours(spark, port, table, COLS) == exp  # nothing written by the refused job
    _check_repair_tools(spark, port, table, bucket, exp, tmp_path)


def _check_repair_tools(spark, port, table, bucket, exp, tmp_path):
    """The server answers physical paths; validate / repair / import-hudi walk the storage path's
    prefixes (RFC-60's fallback listing) and agree with the server."""
    import s3fs

    db, name = table.split(".")
    with HudiMetastoreClient(uri(port)) as c:
        slices = c.get_latest_file_slices(db, name, None, None)
        changed = c.get_files_changed(db, name, None, None)
    assert slices and all(
        s.baseFile.path == f"s3a://{bucket}/data/{hash_prefix(s.fileId)}/t/{s.partitionPath}/{s.baseFile.name}"
        for s in slices)
    assert all(f.path.startswith(f"s3a://{bucket}/data/{hash_prefix(f.fileId)}/t/") for f in changed)

    r = run_cli("validate", table, "--metastore", uri(port))
    assert r.returncode == 0 and "agrees" in r.stdout, r.stdout + r.stderr
    fs = s3fs.S3FileSystem(skip_instance_cache=True)
    stray = f"{bucket}/data/{hash_prefix('x')}/t/dt=d1/part-00000-x.parquet"  # a plain INSERT's file
    misplaced = f"{bucket}/data/00000000/t/dt=d1/{slices[0].baseFile.name}"  # Hudi-named, wrong prefix
    fs.pipe_file(stray, b"not hudi")
    fs.pipe_file(misplaced, b"not here")
    r = run_cli("validate", table, "--metastore", uri(port))
    assert r.returncode == 1 and r.stdout.count("stray-file") == 2, r.stdout + r.stderr
    r = run_cli("repair", table, "--yes", "--metastore", uri(port))
    assert r.returncode == 0, r.stdout + r.stderr
    assert not fs.exists(stray) and not fs.exists(misplaced)
    kept = [o for o in _objects(bucket) if o.startswith("warehouse/t/.hoodie/.quarantine/")]
    assert len(kept) == 2 and any(o.endswith("part-00000-x.parquet") for o in kept), kept
    assert run_cli("validate", table, "--metastore", uri(port)).returncode == 0
    assert ours(spark, port, table, COLS) == exp

    # into another metastore: import-hudi adopts the table only under its own name; migrate copies
    # the database, importing the Hudi table from the object store
    other, proc = start_our_server(f"sqlite:///{tmp_path}/other.db", tmp_path / "server2", warehouse=tmp_path / "wh2",
                                   extra_args=["--storage-roots", f"s3://{bucket}/,s3a://{bucket}/"])
    try:
        base = f"s3a://{bucket}/warehouse/t"
        r = run_cli("import-hudi", base, "--table", f"{db}.renamed", "--metastore", uri(other))
        assert r.returncode == 2 and "import it as" in r.stderr, r.stdout + r.stderr
        r = run_cli("migrate", "--from", uri(port), "--to", uri(other), "--databases", db, "--quiet")
        assert r.returncode == 0, r.stdout + r.stderr
        with HudiMetastoreClient(uri(other)) as c:
            assert c.get_hudi_table(db, name).properties[STORAGE_STRATEGY_CLASS] == "object-store"
        assert run_cli("validate", table, "--metastore", uri(other)).returncode == 0
        assert ours(spark, other, table, COLS) == exp
    finally:
        stop_process(proc)


def _latest(listed: list[dict], data: list[str]) -> list[str]:
    """The objects of `data` that are the listed slices' base files."""
    names = {d["base_file"] for d in listed}
    return [o for o in data if o.rsplit("/", 1)[1] in names]


def _read(bucket: str, key: str) -> str:
    import s3fs

    return s3fs.S3FileSystem(skip_instance_cache=True).cat_file(f"{bucket}/{key}").decode()


def _is_list(request: tuple[str, str, str]) -> bool:
    """A ListObjects(V2) / ListBuckets request: a GET of a bucket (or of /) rather than of a key."""
    method, path, query = request
    parts = [p for p in path.split("/") if p]
    return method == "GET" and len(parts) <= 1 and "uploads" not in query


class Custom:
    """A custom storage strategy (named by import path): one folder per partition under the storage path."""

    def __init__(self, base_path, storage_path, table_name):
        self.root = storage_path

    def storage_location(self, partition_path, file_id):
        return f"{self.root}/custom/{partition_path}"


def test_storage_strategies_resolve_and_spread():
    """Short names, an import path, clear errors; 10,000 file ids spread over the first hex
    character of the prefix (where an object store splits a busy prefix) within 1.3x of the mean."""
    import random
    from collections import Counter

    from hudi_format.storage_strategy import file_location, load_strategy

    hive = load_strategy(None, "s3://b/wh/t", None, "t")
    assert file_location(hive, "dt=1", "f1-0_1-2-3_20240101.parquet") == "s3://b/wh/t/dt=1/f1-0_1-2-3_20240101.parquet"
    obj = load_strategy("object-store", "s3://b/wh/t", "s3://b/data/", "t")
    loc = file_location(obj, "dt=1", "f1-0_1-2-3_20240101.parquet")
    assert loc == f"s3://b/data/{hash_prefix('f1-0')}/t/dt=1/f1-0_1-2-3_20240101.parquet"
    assert file_location(obj, "dt=1", ".f1-0_20240101.log.1_1-2-3").startswith(loc.rsplit("/", 1)[0])
    custom = load_strategy(f"{__name__}.Custom", "s3://b/wh/t", "s3://c", "t")
    assert custom.storage_location("dt=1", "x") == "s3://c/custom/dt=1"
    for bad, msg in [("object-store", "needs hoodie.storage.path"), ("nosuch", "an import path"),
                     ("no.such.Module", "cannot import"), ("uuid.UUID", "cannot import|storage_location")]:
        with pytest.raises(ValueError, match=msg):
            load_strategy(bad, "s3://b/t", None, "t")
    rnd = random.Random(15)
    ids = [f"{uuid.UUID(int=rnd.getrandbits(128))}-0" for _ in range(10_000)]
    counts = Counter(hash_prefix(i)[0] for i in ids)
    assert len(counts) == 16 and max(counts.values()) <= 1.3 * (len(ids) / 16)


def test_sync_storage_on_object_store(object_store, tmp_path):
    """On the object store too, a version the mirror could not write (its bucket does not exist
    yet) waits, and sync_storage writes it once the store takes it."""
    import s3fs

    from tests.test_hudi_client import _commit_metadata, _register

    bucket = f"t-{uuid.uuid4().hex[:12]}"  # not created yet
    port, proc = start_our_server(f"sqlite:///{tmp_path}/store.db", tmp_path / "server", warehouse=tmp_path / "wh",
                                  extra_args=["--mirror-interval", "0", "--storage-roots", f"s3://{bucket}/"])
    try:
        with HudiMetastoreClient(uri(port)) as c:
            _register(c, "t_sync", f"s3://{bucket}/wh/t_sync")
            ts = c.create_instant("default", "t_sync", None, "commit").timestamp
            c.transition_to_inflight("default", "t_sync", ts, "commit")
            c.complete_instant("default", "t_sync", ts, "commit", _commit_metadata(ts))
            assert c.get_hudi_table_stats("default", "t_sync").mirrorLagVersions >= 1
            fs = s3fs.S3FileSystem(skip_instance_cache=True)
            fs.mkdir(bucket)
            assert c.sync_storage("default", "t_sync") >= 1
            assert c.get_hudi_table_stats("default", "t_sync").mirrorLagVersions == 0
            assert fs.exists(f"{bucket}/wh/t_sync/.hoodie/{ts}.commit")
            assert fs.exists(f"{bucket}/wh/t_sync/.hoodie/hoodie.properties")
            assert c.sync_storage("default", "t_sync") == 0
    finally:
        stop_process(proc)
