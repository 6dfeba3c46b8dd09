"""Apache Hudi's own Spark reader (its Spark 3.5 bundle, tests/harness/hudi_spark.py) as a third oracle
for what our pipeline writes: seeded random operation sequences (the property test's operations and
layouts: hive-style, plain, plain multi-level, non-partitioned) are written through our server, then
one Hudi Spark job reads every table from storage. Its snapshot, its time travel to each instant
and its incremental read from each instant must equal the model (tests/test_pipeline_property.py
checks our reader and hudi-rs against the same model after every step).

The tables carry the metadata table the server writes (`hoodie.metadata.enable=true`, issue 45) and
Hudi's reader reads with it on: it lists files from our `files` partition, not from storage (a stray
copy of a data file the metadata table does not name, put there after the writes, is not read), and
with `hoodie.enable.data.skipping=true` it skips files by our `column_stats` partition (and, on the
partitioned tables of version 8 and 9, partitions first by our `partition_stats` partition; a
version-9 table listing `partition_stats` without `column_stats` is read from the one partition a
predicate can match; on a merge-on-read table a slice is skipped by its base file's and its log
file's records, `_mor_skipping_table`; on a merge-on-read table of version 9 partitions are pruned
by `partition_stats` records over base files and log files, `_mor_partition_stats_tables`): on a
predicate over a data column it reads as many files as the server's pruning keeps (`list-files
--where`), fewer than without skipping, and the same rows; with `hoodie.metadata.record.index.enable=true`
it looks record keys up in our `record_index` partition: `id = k` reads the one slice holding k,
none for a key the table lacks; also on the version-9 table of two partition fields, keyed by the
complex key generator as Hudi keys them (`id:k`; below version 9 Hudi's reader does not look such
keys up).

Besides the version-6 tables of the four layouts, two tables of Hudi 1.x's versions (8: hive-style,
9: plain multi-level; `hoodie.table.version` given at creation) are mirrored in their own
layout (timeline layout 2, the metadata table of their version, `column_stats` in index version 1
for 8 and 2 for 9) and read the same way, data skipping included.

Hudi 1.x reads incrementally by completion time: from a begin instant T of a version 8/9 table it
returns the commit at T too (it completed after T), where version 6 starts after T.

Tables the mirror archived (`hoodie.keep.max.commits` 3: version 9 with a metadata table, version
6; tests/unit/store/hudi/test_mirror_v8.py writes them) are read in the same job: Hudi's snapshot
equals hudi-rs's, and Hudi's own archived-timeline reader (HoodieTableMetaClient's) loads the
instants the mirror archived, with their metadata.

Runs on SQLite (since 2026-12-03, for CI's time; Hudi's reader reads what the server commits on
PostgreSQL in tests/test_hudi_sync_spark.py and tests/test_pipeline_types.py). The same job also
reads a merge-on-read table (tests/pipeline_mor.py: base files and logs with Avro data and delete
blocks, a compaction the server scheduled and the next write ran, another one pending): snapshot,
read-optimized, time travel and incremental; the pending one runs after (through `hudi-metastore
table-services run`), and a table the pipeline clustered inline (tests/pipeline_clustering.py:
snapshot, time travel to every instant and incremental from every instant, the clustering's
included). The version 8/9 and archived tables, and data skipping, are checked there too.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import uuid

import pytest

from client import HudiCatalog
from hudi_format.config_keys import (
    COMPLEX_KEYGEN_NEW_ENCODING,
    KEYGENERATOR_CLASS,
    METADATA_ENABLE,
    METADATA_PARTITIONS,
    ORDERING_FIELDS,
    PARTITION_FIELDS,
    PAYLOAD_CLASS,
    RECORD_INDEX_ENABLE,
    RECORD_MERGE_MODE,
    RECORD_MERGE_STRATEGY_ID,
    TABLE_VERSION,
)
from hudi_format.instant import COMPLETED
from hudi_format.metadata_table_layout import metadata_table_layout
from hudi_format.table_config import COMMIT_TIME_ORDERING, EVENT_TIME_ORDERING, MERGE_STRATEGY_IDS, read_properties
from pipeline import write
from tests.harness.hudi_spark import hudi_spark_env, hudi_spark_python
from tests.harness.properties import thorough
from tests.harness.spark import run_spark_script
from tests.pipeline_clustering import COLS as CLUSTERED_COLS
from tests.pipeline_clustering import clustered_sequence
from tests.pipeline_helpers import base_dir, hudi_rs, ours, uri
from tests.pipeline_mor import COLS as MOR_COLS
from tests.pipeline_mor import compact_and_check, mor_sequence
from tests.test_pipeline_property import COLS, KEYS, LAYOUTS, OPS, SCHEMA, _apply, _row

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.backends("sqlite")]

SCRIPT = os.path.join(os.path.dirname(__file__), "spark", "hudi_spark_jobs.py")
STEPS = 5 if thorough() else 4  # writes per table before its last upsert


def _sequence(spark, port: int, layout: str, rng: random.Random, version: int = 6) -> dict:
    """Writes one random sequence (into a table of `version`); what Hudi's reader must give back."""
    fields, hive = LAYOUTS[layout]
    table = f"hr_{uuid.uuid4().hex[:8]}.t"
    ts = itertools.count(1)
    model: dict = {}
    last_write: dict[str, str] = {}  # key -> the instant that last wrote its row
    history: list[tuple[str, dict]] = []
    for step in range(STEPS + 1):
        # the last step upserts, so every table ends with rows for the snapshot and incremental reads
        op = "upsert" if step == STEPS else rng.choice(OPS if model else ["insert", "upsert", "bulk_insert"])
        free = [k for k in KEYS if str(k) not in model]
        if op in ("insert", "bulk_insert") and not free:
            op = "upsert"
        if op in ("insert", "bulk_insert"):
            keys = rng.sample(free, rng.randint(1, min(4, len(free))))
        elif op == "upsert":
            keys = [rng.choice(list(KEYS)) for _ in range(rng.randint(1, 5))]
        elif op in ("insert_overwrite", "insert_overwrite_table"):
            keys = rng.sample(list(KEYS), rng.randint(1, 4))
        else:
            pool = sorted({int(k) for k in model} | {KEYS[-1]})
            keys = rng.sample(pool, rng.randint(1, min(3, len(pool))))
        if op == "delete_partition" and not fields:
            op = "delete"
        rows = [_row(k, rng.choice(["", "a", "bc"]), next(ts)) for k in keys]
        instant = write(spark.createDataFrame(rows, SCHEMA), table, op, record_key="id", precombine_field="ts",
                        partition_by=fields, metastore=uri(port),
                        options={"hoodie.datasource.write.hive_style_partitioning": str(hive).lower(),
                                 METADATA_ENABLE: "true", TABLE_VERSION: str(version)})
        model = _apply(model, op, rows, fields)
        if op not in ("delete", "delete_partition"):
            last_write.update({str(r[0]): instant for r in rows})
        history.append((instant, model))
    # the sequence is sound (test_pipeline_property checks our reader after every step; here Hudi's
    # reader checks every instant below)
    assert ours(spark, port, table, COLS) == model, layout
    base = base_dir(port, table)
    assert hudi_rs(base, COLS) == model
    _check_key_format(base, len(fields) > 1)
    _stray_copy(base, version)
    return {"table": table, "base": base, "model": model, "history": history, "last_write": last_write,
            "version": version}


def _check_key_format(base: str, complex_keys: bool) -> None:
    """The pipeline keys a table of two partition fields (ComplexKeyGenerator, one key field) as
    Hudi does, `id:k`, and its config says so; the others by the value alone."""
    import pyarrow.parquet as pq

    props = read_properties(open(os.path.join(base, ".hoodie", "hoodie.properties")).read())
    assert props.get(COMPLEX_KEYGEN_NEW_ENCODING) == ("false" if complex_keys else None), props
    assert ("Complex" in props[KEYGENERATOR_CLASS]) == complex_keys, props
    for root, dirs, names in os.walk(base):
        dirs[:] = [d for d in dirs if d != ".hoodie"]
        for n in names:
            if n.endswith(".parquet"):
                keys = pq.read_table(os.path.join(root, n), columns=["_hoodie_record_key"]).column(0).to_pylist()
                assert all(k.startswith("id:") == complex_keys for k in keys), (n, keys)


def _stray_copy(base: str, version: int) -> None:
    """The server wrote the metadata table; a copy of a live data file under a file id nobody
    committed is put beside it (a reader listing storage would read its rows twice)."""
    props = read_properties(open(os.path.join(base, ".hoodie", "hoodie.properties")).read())
    # the pipeline's: RECORD_INDEX; partition_stats for partitioned tables of version 8 and 9
    stats = ",partition_stats" if version >= 8 and props.get(PARTITION_FIELDS) else ""
    assert props.get(METADATA_PARTITIONS) == f"column_stats,files{stats},record_index", props
    assert props[TABLE_VERSION] == str(version), props
    lay = metadata_table_layout(version)
    done = os.listdir(os.path.join(base, lay.timeline_dir))
    assert lay.init_instant in lay.completed(done), done
    if version >= 8:
        assert lay.timeline.file_name(lay.init_instant, "deltacommit", COMPLETED, "x").startswith(
            f"{lay.init_instant}_") and any(n.startswith(f"{lay.init_instant}_") for n in done)
    for root, dirs, names in os.walk(base):
        dirs[:] = [d for d in dirs if d != ".hoodie"]
        live = sorted(n for n in names if n.endswith(".parquet"))
        if live:
            shutil.copy(os.path.join(root, live[-1]), os.path.join(root, "99999999-" + live[-1][9:]))
            return


def _predicates(model: dict) -> dict[str, tuple[list[str], object]]:
    """Spark SQL (also the server's grammar) -> (data skipping on/off to read it with, the rows'
    test) of predicates on `id`: one that keeps some files, one no file can match."""
    top = max(int(k) for k in model)
    some = sorted(int(k) for k in model)[len(model) // 2]
    return {f"id <= {some}": (["true"], lambda r: r[0] <= some),
            f"id > {top}": (["true", "false"], lambda r: r[0] > top)}


def _key_predicates(model: dict) -> dict[str, tuple[list[str], object, int]]:
    """Predicates on the record key that Hudi's reader answers from our `record_index` partition
    (with `hoodie.metadata.record.index.enable=true`): (skipping values, the rows' test, the files
    it reads: the one slice holding the key, none for a key the table lacks)."""
    have = sorted(int(k) for k in model)
    some = have[len(have) // 2]
    # a key the table lacks within the range of its keys (column statistics alone would keep files)
    absent = next((k for k in KEYS if have[0] < k < have[-1] and str(k) not in model), have[-1] + 100)
    return {f"id = {some}": (["true"], lambda r: r[0] == some, 1),
            f"id = {absent}": (["true"], lambda r: False, 0)}


def _as_rows(by_key: dict) -> list:
    return sorted(list(v) for v in by_key.values())


def test_hudi_spark_reader_reads_random_pipeline_sequences(spark, our_server, backend_url, tmp_path):
    rng = random.Random(20261127)
    skipping = backend_url.startswith("sqlite")
    written = {layout: _sequence(spark, our_server, layout, rng) for layout in sorted(LAYOUTS)}
    # the version 8/9 and archived tables on one backend (the layout does not depend on it)
    newer = skipping
    for layout, version in (("hive", 8), ("plain_multi", 9)) if newer else ():
        written[f"{layout}_v{version}"] = _sequence(spark, our_server, layout, rng, version)
    read = {layout: {"base": w["base"], "instants": [i for i, _ in w["history"]], "columns": COLS,
                     "options": {METADATA_ENABLE: "true", RECORD_INDEX_ENABLE: "true"},
                     # data skipping (on one backend: what storage holds does not depend on it)
                     "where": {p: on for p, (on, *_) in {**_predicates(w["model"]),
                                                         **_key_predicates(w["model"])}.items()} if skipping else {}}
            for layout, w in written.items()}
    mor = mor_sequence(spark, our_server) if backend_url.startswith("sqlite") else None
    if mor is not None:
        read["mor"] = {"base": mor["base"], "instants": [i for i, _ in mor["history"]], "columns": MOR_COLS,
                       "read_optimized": True}
    mor_skip = _mor_skipping_table(spark, our_server) if skipping else None
    if mor_skip is not None:
        read["mor_skip"] = {"base": mor_skip["base"], "instants": [], "columns": MOR_COLS,
                            "options": {METADATA_ENABLE: "true"},
                            "where": {p: on for p, (on, _rows, _kept) in MOR_SKIP_PREDICATES.items()}}
    mor_ps = _mor_partition_stats_tables(spark, our_server, tmp_path / "mor_partition_stats") if skipping else {}
    read.update({name: {"base": t["base"], "instants": [], "columns": MOR_COLS, "options": MOR_PS_READ,
                        "where": {p: on if name == "mor_v9" else ["true"] for p, (on, _r, _n) in
                                  MOR_PS_PREDICATES.items()}} for name, t in mor_ps.items()})
    mor_v8 = _mor_commit_time_table(spark, our_server) if skipping else None
    if mor_v8 is not None:
        read["mor_v8_commit_time"] = {"base": mor_v8["base"], "instants": [], "columns": MOR_COLS}
    clustered = clustered_sequence(spark, our_server) if backend_url.startswith("sqlite") else None
    if clustered is not None:
        read["clustered"] = {"base": clustered["base"], "instants": [i for i, _ in clustered["history"]],
                             "columns": CLUSTERED_COLS}
    archived = _archived_tables(tmp_path / "archived") if newer else {}
    stats_tables = _partition_stats_tables(tmp_path / "partition_stats") if newer else {}
    read.update({name: {"base": t["base"], "instants": [], "columns": ARCHIVED_COLS,
                        "options": {METADATA_ENABLE: "true"}, "where": {PRUNED: ["true"]}}
                 for name, t in stats_tables.items()})
    read.update({name: {"base": a["base"], "columns": ARCHIVED_COLS, "options": {METADATA_ENABLE: "true"},
                        "archived": True} for name, a in archived.items()})
    out = run_spark_script(SCRIPT, our_server, tmp_path / "hudi-wh", tmp_path / "hudi-read.json", timeout=1200,
                           python=hudi_spark_python(), env=hudi_spark_env(),
                           extra_args=["--read-only", "--read", json.dumps(read)])
    for layout, w in written.items():
        got = out["read"][layout]
        assert "error" not in got, (layout, got)
        final = w["model"]
        assert got["snapshot"] == _as_rows(final), layout
        for instant, then in w["history"]:
            assert got["as_of"][instant] == _as_rows(then), (layout, instant)
            later = {k: v for k, v in final.items() if w["last_write"].get(k, "") > instant or
                     (w["version"] >= 8 and w["last_write"].get(k, "") == instant)}
            assert got["incremental"][instant] == _as_rows(later), (layout, instant)
        if not skipping:
            continue
        # data skipping by our column_stats: the files the server's pruning keeps, the same rows
        db, name = w["table"].split(".")
        with HudiCatalog(uri(our_server)) as catalog:
            for predicate, (_on, keep) in _predicates(final).items():
                rows_on, files_on = got["where"][predicate]["true"]
                assert rows_on == [r for r in _as_rows(final) if keep(r)], (layout, predicate)
                kept = len(catalog.prune_file_slices(db, name, predicate).slices)
                assert files_on == kept, (layout, predicate, files_on, kept)
        # record keys: Hudi's reader finds them in our record_index partition, reading one slice;
        # on tables of two partition fields (ComplexKeyGenerator, keys `id:k` as Hudi's) from table
        # version 9 only: below 9 the format of such keys may be either, and Hudi 1.2's reader skips
        # by column_stats instead (the files the server's pruning keeps)
        by_column_stats = len(LAYOUTS[layout.split("_v")[0]][0]) > 1 and w["version"] < 9
        for predicate, (_on, keep, files) in _key_predicates(final).items():
            rows_on, files_on = got["where"][predicate]["true"]
            assert rows_on == [r for r in _as_rows(final) if keep(r)], (layout, predicate)
            if by_column_stats:
                with HudiCatalog(uri(our_server)) as catalog:
                    files = len(catalog.prune_file_slices(db, name, predicate).slices)
            assert files_on == files, (layout, predicate, files_on)
        nothing = got["where"][f"id > {max(int(k) for k in final)}"]
        assert nothing["true"] == [[], 0] and nothing["false"][0] == [] and nothing["false"][1] > 0, (layout, nothing)
    if mor is not None:
        got = out["read"]["mor"]
        assert "error" not in got, got
        assert got["snapshot"] == _as_rows(mor["model"])
        assert got["read_optimized"] == mor["read_optimized"]
        for instant, then in mor["history"]:
            assert got["as_of"][instant] == _as_rows(then), instant
            later = {k: v for k, v in mor["model"].items() if mor["last_write"].get(k, "") > instant}
            assert got["incremental"][instant] == _as_rows(later), instant
        compact_and_check(spark, our_server, mor)
    if mor_skip is not None:  # merge-on-read with our metadata table: log files with statistics
        got = out["read"]["mor_skip"]
        assert "error" not in got and got["snapshot"] == mor_skip["rows"], got
        db, name = mor_skip["table"].split(".")
        with HudiCatalog(uri(our_server)) as catalog:
            for predicate, (on, rows, want) in MOR_SKIP_PREDICATES.items():
                kept = len(catalog.prune_file_slices(db, name, predicate).slices)
                assert kept == want, (predicate, kept)
                for skip in on:
                    rows_read, files = got["where"][predicate][skip]
                    assert rows_read == rows, (predicate, skip, rows_read)
                    assert files == (kept if skip == "true" else 2), (predicate, skip, files)
    if mor_ps:
        _check_mor_partition_stats(out["read"], mor_ps, our_server)
    if mor_v8 is not None:  # no merge mode among the reader's options: the table's own
        got = out["read"]["mor_v8_commit_time"]
        assert "error" not in got and got["snapshot"] == mor_v8["rows"], got
    if clustered is not None:  # clustered inline by the pipeline (tests/pipeline_clustering.py)
        got = out["read"]["clustered"]
        assert "error" not in got, got
        assert got["snapshot"] == _as_rows(clustered["model"])
        for instant, then in clustered["history"]:
            assert got["as_of"][instant] == _as_rows(then), instant
            later = {k: v for k, v in clustered["model"].items() if clustered["last_write"].get(k, "") > instant}
            assert got["incremental"][instant] == _as_rows(later), instant
    for name, t in stats_tables.items():  # partitions pruned by our partition_stats alone
        got = out["read"][name]
        assert "error" not in got and got["snapshot"] == t["rows"], (name, got)
        rows_on, files_on = got["where"][PRUNED]["true"]
        assert rows_on == [r for r in t["rows"] if r[0] <= 2], name
        assert files_on == (1 if name == "ps_only" else 3), (name, files_on)
    for name, a in archived.items():
        got = out["read"][name]
        assert "error" not in got, (name, got)
        assert got["snapshot"] == a["rows"], name
        done = sorted([ts, action] for ts, action in {(ts, action) for ts, action, state in got["archived"]
                                                     if state == "COMPLETED"})
        assert done == a["archived"], name


# predicate -> (data skipping values, the rows, the slices kept) on _mor_skipping_table: `ts` is 1
# in both base files, 100 for key 2 in p0's log file only
MOR_SKIP_PREDICATES = {"ts >= 50": (["true", "false"], [[2, "zz", 100, "p0"]], 1),
                       "ts > 500": (["true", "false"], [], 0)}


def _mor_skipping_table(spark, port: int) -> dict:
    """A merge-on-read table with the metadata table on: two file groups (p0, p1) of base files
    with `ts` 1, then an upsert of key 2 to `ts` 100, which goes to a log file of p0's group. The
    pipeline sends the log file's statistics and the mirror writes its `column_stats` records
    (docs/hudi.md, "Statistics of log files"), so Hudi's reader keeps p0's slice for `ts >= 50` by
    its log file's bounds and skips p1's by its base file's; `ts > 500` reads no slice."""
    from tests.pipeline_mor import MOR
    from tests.pipeline_mor import SCHEMA as MOR_SCHEMA

    table = f"ms_{uuid.uuid4().hex[:8]}.t"
    opts = {METADATA_ENABLE: "true"}
    for op, rows in (("insert", [(1, "a", 1, "p0"), (2, "a", 1, "p0"), (3, "a", 1, "p1"), (4, "a", 1, "p1")]),
                     ("upsert", [(2, "zz", 100, "p0")])):
        write(spark.createDataFrame(rows, MOR_SCHEMA), table, op, record_key="id", precombine_field="ts",
              partition_by="dt", metastore=uri(port), table_type=MOR, options=opts)
    base = base_dir(port, table)
    logs = [os.path.join(root, n) for root, _dirs, names in os.walk(base) if ".hoodie" not in root
            for n in names if ".log." in n]
    assert len(logs) == 1 and os.path.basename(os.path.dirname(logs[0])).endswith("p0"), logs
    return {"table": table, "base": base,
            "rows": [[1, "a", 1, "p0"], [2, "zz", 100, "p0"], [3, "a", 1, "p1"], [4, "a", 1, "p1"]]}


# predicate -> (data skipping values, the rows, the slices read with skipping) on
# _mor_partition_stats_tables' table: only p0's log file holds a `ts` that high
MOR_PS_PREDICATES = {"ts >= 50": (["true", "false"], [[2, "zz", 100, "p0"]], 1), "ts > 500": (["true"], [], 0)}
# no record merge mode among the reader's options: Hudi 1.2's merge-on-read reader takes it from the
# table's hoodie.properties (without one there: NullPointerException, "mergeMode is null")
MOR_PS_READ = {METADATA_ENABLE: "true"}


def _mor_partition_stats_tables(spark, port: int, tmp_path) -> dict:
    """_mor_skipping_table's writes into a merge-on-read table of version 9, which gets our
    `partition_stats` partition, and a delete of key 4, which goes to a log file of p1's group
    holding deletes alone (statistics without bounds and with 0 values, as Hudi's: p1 keeps its
    bounds): p0's record covers its base file and its log file (`ts` 1..100), p1's its base file
    and its log file (`ts` 1). Beside it two copies whose `hoodie.properties` lists
    `files,partition_stats` and `files` alone: with partition_stats alone Hudi's reader prunes by it,
    reading for `ts >= 50` p0's slice alone, whose row with `ts` 100 is in the log file only (a
    record of the base file's bounds would prune p0 and lose the row)."""
    from hudi_format.metadata_partition_stats import PARTITION_STATS
    from tests.pipeline_mor import MOR
    from tests.pipeline_mor import SCHEMA as MOR_SCHEMA

    table = f"mp_{uuid.uuid4().hex[:8]}.t"
    opts = {METADATA_ENABLE: "true", TABLE_VERSION: "9"}
    for op, rows in (("insert", [(1, "a", 1, "p0"), (2, "a", 1, "p0"), (3, "a", 1, "p1"), (4, "a", 1, "p1")]),
                     ("upsert", [(2, "zz", 100, "p0")]), ("delete", [(4, "a", 1, "p1")])):
        write(spark.createDataFrame(rows, MOR_SCHEMA), table, op, record_key="id", precombine_field="ts",
              partition_by="dt", metastore=uri(port), table_type=MOR, options=opts)
    base = base_dir(port, table)
    logs = sorted(os.path.basename(root)[-2:] for root, _dirs, names in os.walk(base) if ".hoodie" not in root
                  for n in names if ".log." in n)
    assert logs == ["p0", "p1"], logs
    props = read_properties(open(os.path.join(base, ".hoodie", "hoodie.properties")).read())
    listed = props[METADATA_PARTITIONS]
    assert props[TABLE_VERSION] == "9" and PARTITION_STATS in listed.split(","), props
    # as Hudi 1.2 writes a version-9 table with an ordering field: the mode, no merger id or payload
    assert props[RECORD_MERGE_MODE] == EVENT_TIME_ORDERING and props[ORDERING_FIELDS] == "ts", props
    assert RECORD_MERGE_STRATEGY_ID not in props and PAYLOAD_CLASS not in props, props
    rows = [[1, "a", 1, "p0"], [2, "zz", 100, "p0"], [3, "a", 1, "p1"]]
    out = {"mor_v9": {"table": table, "base": base, "rows": rows}}
    for name, only in (("mor_v9_ps_only", f"files,{PARTITION_STATS}"), ("mor_v9_files_only", "files")):
        copy = str(tmp_path / name)
        shutil.copytree(base, copy)
        path = os.path.join(copy, ".hoodie", "hoodie.properties")
        text = open(path).read().replace(f"{METADATA_PARTITIONS}={listed}", f"{METADATA_PARTITIONS}={only}")
        open(path, "w").write(text)
        out[name] = {"base": copy, "rows": rows}
    return out


def _mor_commit_time_table(spark, port: int) -> dict:
    """A merge-on-read table of version 8 without a precombine field: its hoodie.properties say
    COMMIT_TIME_ORDERING (with the mode's merger id and payload class, as Hudi 1.2 writes them), so
    Hudi's reader merges key 2's log record over its base record although its `ts` is smaller."""
    from tests.pipeline_mor import MOR
    from tests.pipeline_mor import SCHEMA as MOR_SCHEMA

    table = f"mc_{uuid.uuid4().hex[:8]}.t"
    for op, rows in (("insert", [(1, "a", 5, "p0"), (2, "a", 5, "p0")]), ("upsert", [(2, "zz", 1, "p0")])):
        write(spark.createDataFrame(rows, MOR_SCHEMA), table, op, record_key="id", partition_by="dt",
              metastore=uri(port), table_type=MOR, options={TABLE_VERSION: "8"})
    base = base_dir(port, table)
    assert any(".log." in n for _root, _dirs, names in os.walk(base) for n in names), base
    props = read_properties(open(os.path.join(base, ".hoodie", "hoodie.properties")).read())
    assert props[RECORD_MERGE_MODE] == COMMIT_TIME_ORDERING and ORDERING_FIELDS not in props, props
    assert props[RECORD_MERGE_STRATEGY_ID] == MERGE_STRATEGY_IDS[COMMIT_TIME_ORDERING], props
    assert props[PAYLOAD_CLASS].endswith(".OverwriteWithLatestAvroPayload"), props
    return {"table": table, "base": base, "rows": [[1, "a", 5, "p0"], [2, "zz", 1, "p0"]]}


def _check_mor_partition_stats(read: dict, tables: dict, port: int) -> None:
    """What Hudi's reader read of _mor_partition_stats_tables: the model's rows; with skipping the
    slices the server's pruning keeps (p0's alone for `ts >= 50`, none for `ts > 500`), two without;
    p0's alone by partition_stats alone, both with `files` alone."""
    for name, t in tables.items():
        got = read[name]
        assert "error" not in got and got["snapshot"] == t["rows"], (name, got)
        for predicate, (on, rows, want) in MOR_PS_PREDICATES.items():
            for skip in on if name == "mor_v9" else ["true"]:
                rows_read, files = got["where"][predicate][skip]
                assert rows_read == rows, (name, predicate, skip, rows_read)
                if skip == "false" or name == "mor_v9_files_only":
                    want = 2
                assert files == want, (name, predicate, skip, files)
    db, tbl = tables["mor_v9"]["table"].split(".")
    with HudiCatalog(uri(port)) as catalog:
        for predicate, (_on, _rows, want) in MOR_PS_PREDICATES.items():
            assert len(catalog.prune_file_slices(db, tbl, predicate).slices) == want, predicate


ARCHIVED_COLS = ["id", "name", "ts", "dt"]
PRUNED = "id <= 2"  # only the first of _partition_stats_tables' three partitions holds such ids


def _partition_stats_tables(tmp_path) -> dict:
    """A version-9 table of three partitions, one base file each (ids 1-3, 11-13, 21-23), its
    statistics committed with the files (in-process services: Spark reads storage only); beside it
    two copies whose `hoodie.properties` lists `files,partition_stats` and `files` alone: with
    partition_stats alone Hudi's reader prunes the partitions by it, reading one file of three."""
    from hudi_format.metadata_partition_stats import PARTITION_STATS
    from store.hudi.column_stats import ColumnBounds, FileColumnStats, encode_key
    from tests.test_storage_mirror import commit_json, write_base_file
    from tests.unit.store.hudi.test_mirror_v8 import _archiving_table

    base, timeline, _snapshot, _mirror = _archiving_table(tmp_path, 9, True)
    rows = []
    for n, dt in enumerate(("2024-01-01", "2024-01-02", "2024-01-03")):
        part = [{"id": 10 * n + i, "name": f"n{n}", "ts": i} for i in (1, 2, 3)]
        ts = timeline.create_instant("db1", "t1", None, "commit", b"", 60).ts
        fid, rel, size = write_base_file(base, dt, ts, part)
        bounds = [ColumnBounds(c, encode_key(t, min(r[c] for r in part)), encode_key(t, max(r[c] for r in part)),
                               0, 3, 10, 10) for c, t in (("id", "int"), ("name", "string"), ("ts", "bigint"))]
        timeline.transition_to_inflight("db1", "t1", ts, "commit", b"")
        timeline.complete_instant("db1", "t1", ts, "commit", commit_json(dt, fid, rel, size, 3),
                                  column_stats=[FileColumnStats(dt, rel.rsplit("/", 1)[1], size, size, bounds)])
        rows += [[r["id"], r["name"], r["ts"], dt] for r in part]
    props = read_properties(open(os.path.join(base, ".hoodie", "hoodie.properties")).read())
    assert props[METADATA_PARTITIONS] == f"column_stats,files,{PARTITION_STATS}", props
    out = {}
    for name, listed in (("ps_only", f"files,{PARTITION_STATS}"), ("files_only", "files")):
        copy = str(tmp_path / name)
        shutil.copytree(base, copy)
        path = os.path.join(copy, ".hoodie", "hoodie.properties")
        text = open(path).read().replace(f"{METADATA_PARTITIONS}={props[METADATA_PARTITIONS]}",
                                         f"{METADATA_PARTITIONS}={listed}")
        open(path, "w").write(text)
        out[name] = {"base": copy, "rows": sorted(rows)}
    return out


def _archived_tables(tmp_path) -> dict:
    """Tables of nine commits the mirror archived down to two or three (in-process services: Spark
    reads storage only), every other commit a new version of one file group, which the server
    cleans (its cleans archived too); their rows as hudi-rs reads them and the archived (instant,
    action)s."""
    from hudi_format.storage_timeline import StorageTimeline
    from tests.test_storage_mirror import ROWS, commit
    from tests.unit.store.hudi.test_mirror_v8 import _archiving_table

    out = {}
    for version, mdt in ((9, True), (6, False)):
        base, timeline, _snapshot, _mirror = _archiving_table(tmp_path / f"v{version}", version, mdt, clean=True)
        for n in range(9):
            rows = [{**r, "id": r["id"] + 10 * n} for r in ROWS]
            if n % 2:
                commit(timeline, base, "2024-01-01", rows, fid="00000000-0000-0000-0000-000000000001-0")
            else:
                commit(timeline, base, f"2024-01-0{n % 3 + 1}", rows)
        assert timeline.list_instants("db1", "t1", actions=["clean"]), version
        active = {i.ts for i in StorageTimeline.read(base).instants}
        gone = sorted((i.ts, i.action) for i in timeline.list_instants("db1", "t1") if i.ts not in active)
        assert gone, version
        rows = sorted([r[c] for c in ARCHIVED_COLS] for r in hudi_rs_rows(base))
        out[f"archived_v{version}"] = {"base": base, "rows": rows, "archived": [list(g) for g in gone]}
    return out


def hudi_rs_rows(base: str) -> list[dict]:
    import hudi

    from tests.test_storage_mirror import rows_of

    return rows_of(hudi.HudiTable(base))
