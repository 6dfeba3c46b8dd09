"""Property test of table types and table services (issue 38; hypothesis, a new seed every run):
random sequences of inserts, upserts, deletes, partition moves, table services and failed writes
on merge-on-read and copy-on-write tables whose first write sets a random cleaning policy
(`KEEP_LATEST_COMMITS` or `KEEP_LATEST_FILE_VERSIONS`, a few retained), compaction after 2 or 3
delta commits, on half of the tables inline clustering (after 2 commits, sorted by `name`) and
archival after 5 commits. The server schedules the compactions and clusterings and runs the cleans
and archival after the commits; the pipeline runs compactions and clusterings (inline before a
write, or as a step the way `table-services run` does); a failed write (its completion fails after
its files were written) is rolled back by the next writer once its heartbeat expired; a failed
service run (`fail_services`: the pending compactions and clusterings fail after their files were
written) leaves them INFLIGHT until their claims expire, and the next step (a write inline, or
`services`) rolls them back and runs them again.

After every step:
* our reader (snapshot) and hudi-rs reading storage hold exactly the model's rows;
* the server's latest file slices (base and log files) are hudi-rs's (which also lists the log
  files of a failed write until its rollback deletes them);
* with no failed write or service waiting for its rollback, the data files on storage are exactly
  the files the server lists (every version it keeps): a clean deleted what the server forgot, a rollback
  the failed write's files;
* `KEEP_LATEST_FILE_VERSIONS` n: no file group keeps more than n base-file versions;
* the incremental read of a write gives the records it wrote; with `KEEP_LATEST_COMMITS`, time
  travel (ours and hudi-rs) to an earlier write the last commits retained gives that write's model.

Seeded variants (`test_seeded_sequences_read_by_hudis_spark_reader`, SQLite): fixed-seed sequences
of the same steps on a merge-on-read and a copy-on-write table (four in the thorough run), whose
settings make them compact and cluster; after every step our reader and hudi-rs equal the model,
and a copy of the table on storage is taken, which Hudi 1.2's Spark reader reads at the end (one
Spark 3.5 job for all): its snapshot equals the model after that step, its read-optimized query
(merge-on-read) our read-optimized read.

`test_random_sequences_with_log_compaction`: the same on merge-on-read tables that also log-compact
(blocks threshold 2 or 3, compaction and clustering later), so that log compactions interleave
with compactions, clusterings, failed services and failed writes.

Keys choose their partition on insert; `move` upserts existing keys into another partition (the
record index moves them).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import shutil
import time
import uuid
from unittest import mock

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from client import HudiCatalog, HudiMetastoreClient
from hudi_format.commit_metadata import parse_rollback
from hudi_format.config_keys import (
    ARCHIVE_MAX_COMMITS,
    ARCHIVE_MIN_COMMITS,
    CLEANER_COMMITS_RETAINED,
    CLEANER_FILE_VERSIONS_RETAINED,
    CLEANER_POLICY,
    CLIENT_HEARTBEAT_INTERVAL_MS,
    CLIENT_HEARTBEAT_TOLERABLE_MISSES,
    CLUSTERING_INLINE,
    CLUSTERING_MAX_COMMITS,
    CLUSTERING_SORT_COLUMNS,
    COMPACT_MAX_DELTA_COMMITS,
    DRIVER_WRITE_MAX_RECORDS,
    LOG_COMPACT_BLOCKS_THRESHOLD,
    LOG_COMPACT_INLINE,
    METADATA_ENABLE,
)
from hudi_format.file_slice import parse_file_name
from pipeline import table_services, write
from pipeline.commit import WriteTransaction
from pipeline.errors import HudiWriteError
from pipeline.table import load
from tests.harness.properties import examples
from tests.pipeline_helpers import base_dir, hudi_rs, hudi_rs_slices, ours, uri

pytestmark = [pytest.mark.spark, pytest.mark.slow]

HUDI_JOBS = os.path.join(os.path.dirname(__file__), "spark", "hudi_spark_jobs.py")

SCHEMA = "id long, name string, ts long, dt string"
COLS = ["id", "name", "ts", "dt"]
KEYS = range(10)
PARTS = ("p0", "p1", "p2")
OPS = ["insert", "upsert", "upsert", "delete", "move", "services", "fail", "fail_services"]
SERVICES = ("compaction", "logcompaction", "clustering")
POLICIES = [("KEEP_LATEST_COMMITS", 2), ("KEEP_LATEST_COMMITS", 3), ("KEEP_LATEST_FILE_VERSIONS", 1),
            ("KEEP_LATEST_FILE_VERSIONS", 2)]
WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")


def _server_slices(c: HudiMetastoreClient, db: str, name: str) -> dict:
    return {(s.partitionPath, s.fileId): (s.baseInstant, s.baseFile.name if s.baseFile else None,
                                          tuple(f.name for f in s.logFiles or []))
            for s in c.get_latest_file_slices(db, name)}


def _listed(c: HudiMetastoreClient, db: str, name: str) -> set[str]:
    return {f"{p}/{f.name}" for p in c.get_hudi_partitions(db, name) for f in c.get_all_files(db, name, p)}


def _on_storage(base: str) -> set[str]:
    """Base and log files under the table's partitions (relative paths)."""
    out = set()
    for root, dirs, names in os.walk(base):
        dirs[:] = [d for d in dirs if d != ".hoodie"]
        for n in names:
            if n.endswith(".parquet") or ".log." in n:
                out.add(os.path.relpath(os.path.join(root, n), base))
    return out


def _failing_services():
    """Completions of compactions, log compactions and clusterings fail (after their executors wrote their files)."""
    real = HudiCatalog.complete_instant

    def complete(self, db, table, ts, action, *args, **kwargs):
        if action in SERVICES:
            raise RuntimeError(f"injected: {action} {ts} dies before it completes")
        return real(self, db, table, ts, action, *args, **kwargs)

    return mock.patch.object(HudiCatalog, "complete_instant", complete)


def _await_expired(c: HudiMetastoreClient, db: str, name: str, ts: str) -> None:
    """Until the failed write's heartbeat expired (the server lists it as failed)."""
    deadline = time.monotonic() + 60
    while ts not in {i.timestamp for i in c.get_failed_instants(db, name)}:
        assert time.monotonic() < deadline, f"{ts} not failed after 60 s"
        time.sleep(0.2)


class _Hypothesis:
    """The sequence's choices drawn by hypothesis."""

    def __init__(self, data):
        self.data = data

    def integer(self, lo: int, hi: int, label: str | None = None) -> int:
        return self.data.draw(st.integers(lo, hi), label=label)

    def choice(self, seq, label: str | None = None):
        return self.data.draw(st.sampled_from(list(seq)), label=label)

    def sublist(self, seq, lo: int, hi: int, unique: bool, label: str | None = None) -> list:
        return self.data.draw(st.lists(st.sampled_from(list(seq)), min_size=lo, max_size=hi, unique=unique),
                              label=label)

    def name(self) -> str:
        return self.data.draw(st.text(alphabet="ab", min_size=0, max_size=2))


class Seeded:
    """The same choices from a seeded random generator (the seeded variants)."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def integer(self, lo: int, hi: int, label: str | None = None) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, seq, label: str | None = None):
        return self.rng.choice(list(seq))

    def sublist(self, seq, lo: int, hi: int, unique: bool, label: str | None = None) -> list:
        seq = list(seq)
        n = self.rng.randint(lo, min(hi, len(seq)) if unique else hi)
        return self.rng.sample(seq, n) if unique else [self.rng.choice(seq) for _ in range(n)]

    def name(self) -> str:
        return "".join(self.rng.choice("ab") for _ in range(self.rng.randint(0, 2)))


def options_of(table_type: str, policy: tuple[str, int], delta_commits: int, clustering: bool) -> dict[str, str]:
    clean_policy, retained = policy
    options = {CLEANER_POLICY: clean_policy, ARCHIVE_MIN_COMMITS: "4", ARCHIVE_MAX_COMMITS: "5",
               CLIENT_HEARTBEAT_INTERVAL_MS: "500", CLIENT_HEARTBEAT_TOLERABLE_MISSES: "1",
               COMPACT_MAX_DELTA_COMMITS: str(delta_commits),
               CLEANER_COMMITS_RETAINED if clean_policy == "KEEP_LATEST_COMMITS" else CLEANER_FILE_VERSIONS_RETAINED:
               str(retained)}
    if clustering:  # every file is small (Hudi's 300 MB limit), and sorted: a plan takes every partition
        options.update({CLUSTERING_INLINE: "true", CLUSTERING_MAX_COMMITS: "2", CLUSTERING_SORT_COLUMNS: "name"})
    return options


def run_sequence(spark, our_server, draw, steps: int, table_type: str, policy: tuple[str, int], delta_commits: int,
                 clustering: bool, after_step=None, full_checks: bool = True,
                 extra_options: dict[str, str] | None = None) -> str:
    """Writes one sequence of `steps` steps, checking after each (module docstring; `full_checks`
    False: our reader and hudi-rs against the model only); `after_step(table, step, op, model)` after
    the checks. The table's name."""
    db, name = f"svc_{uuid.uuid4().hex[:8]}", "t"
    table = f"{db}.{name}"
    clean_policy, retained = policy
    options = {**options_of(table_type, policy, delta_commits, clustering), **(extra_options or {})}
    ts = itertools.count(1)
    model: dict = {}
    history: list[tuple[str, dict]] = []  # (write instant, model after it)
    failed: str | None = None  # a failed write the next writer rolls back
    failed_services: list[str] = []  # compactions and clusterings whose attempt failed (INFLIGHT)
    c = HudiMetastoreClient(uri(our_server))
    try:
        for step in range(steps):
            for f in failed_services:  # their claims expire: the next step rolls them back, runs them again
                _await_expired(c, db, name, f)
            op = draw.choice(OPS, label=f"op{step}") if model else "insert"
            free = [k for k in KEYS if str(k) not in model]
            if op == "insert" and not free or op in ("delete", "move") and not model:
                op = "upsert"
            if op == "insert":
                keys = draw.sublist(free, 1, 4, True, label="keys")
                rows = [(k, draw.name(), next(ts), draw.choice(PARTS)) for k in keys]
            elif op in ("upsert", "fail"):
                keys = draw.sublist(KEYS, 1, 5, False, label="keys")
                rows = [(k, draw.name(), next(ts),
                         model[str(k)][3] if str(k) in model else draw.choice(PARTS)) for k in keys]
            elif op == "move":
                keys = draw.sublist(sorted(int(k) for k in model), 1, 3, True, label="keys")
                rows = [(k, draw.name(), next(ts),
                         draw.choice([p for p in PARTS if p != model[str(k)][3]])) for k in keys]
            elif op == "delete":
                keys = draw.sublist(sorted(int(k) for k in model), 1, 3, True, label="keys")
                rows = [(k, None, next(ts), model[str(k)][3]) for k in keys]
            else:
                rows = []
            where = f"step {step} ({table_type}, {policy}, {delta_commits}, {clustering}): {op} {rows}"

            if op == "services":  # what `table-services run` runs: the pending compactions and clusterings
                with HudiCatalog(uri(our_server)) as catalog:
                    ran = table_services.run(spark, catalog, load(catalog, db, name), uri(our_server))
                assert all(o.result in ("completed", "rolled back") for o in ran), (where, ran)
                assert {o.instant for o in ran if o.result == "rolled back"} == set(failed_services), (where, ran)
            elif op == "fail_services":  # the same, failing after the executors wrote their files
                with HudiCatalog(uri(our_server)) as catalog, _failing_services():
                    ran = table_services.run(spark, catalog, load(catalog, db, name), uri(our_server))
                assert all(o.result in ("failed", "rolled back") for o in ran), (where, ran)
            elif op == "fail":
                with mock.patch.object(WriteTransaction, "complete", side_effect=HudiWriteError("injected")), \
                        pytest.raises(HudiWriteError, match="injected"):
                    write(spark.createDataFrame(rows, SCHEMA), table, "upsert", metastore=uri(our_server),
                          options=options)  # its heartbeat's settings
                pending = [i.timestamp for i in c.list_instants(db, name, states=["INFLIGHT"])
                           if i.action in WRITE_ACTIONS]
                assert pending, where
                failed = max(pending)
            else:
                if failed is not None:
                    _await_expired(c, db, name, failed)
                # every other write by Spark's tasks alone: a small merge-on-read batch is tagged and
                # appended by the driver otherwise (pipeline/writer.py `_on_driver`)
                by_spark = {DRIVER_WRITE_MAX_RECORDS: "0"} if step % 2 else {}
                instant = write(spark.createDataFrame(rows, SCHEMA), table, "delete" if op == "delete" else "upsert",
                                record_key="id", precombine_field="ts", partition_by="dt",
                                metastore=uri(our_server), table_type=table_type, options={**options, **by_spark})
                if failed is not None:
                    assert failed not in {i.timestamp for i in c.list_instants(db, name)}, where
                    failed = None
                before = history[-1][0] if history else None
                model = dict(model)
                for r in sorted(rows, key=lambda r: r[2]):
                    if op == "delete":
                        model.pop(str(r[0]), None)
                    else:
                        model[str(r[0])] = r
                written = set() if op == "delete" else {str(r[0]) for r in rows}
                history.append((instant, model))
                if full_checks:
                    assert ours(spark, our_server, table, COLS, since=before, until=instant) == \
                        {k: v for k, v in model.items() if k in written}, where

            failed_services = [i.timestamp for i in c.list_instants(db, name, states=["INFLIGHT"])
                               if i.action in SERVICES]  # (no executor runs between the steps)
            assert op == "fail_services" or not failed_services, (where, failed_services)
            base = base_dir(our_server, table)
            assert ours(spark, our_server, table, COLS) == model, where
            assert hudi_rs(base, COLS) == model, where
            if after_step is not None:
                after_step(table, step, op, model)
            if not full_checks:
                continue
            if failed_services:  # (their files on storage, before their rollback: readers skip them)
                continue
            ours_slices, theirs = _server_slices(c, db, name), hudi_rs_slices(base)
            if failed is None:
                assert ours_slices == theirs, where
            else:  # Hudi's view lists the failed write's log files too (its reader skips their blocks)
                assert {k: v[:2] for k, v in ours_slices.items()} == {k: v[:2] for k, v in theirs.items()}, where
                assert all(set(v[2]) <= set(theirs[k][2]) for k, v in ours_slices.items()), where
            listed = _listed(c, db, name)
            if failed is None:
                assert _on_storage(base) == listed, where
            if clean_policy == "KEEP_LATEST_FILE_VERSIONS":
                versions: dict[tuple[str, str], set[str]] = {}
                for path in listed:
                    part, _, file = path.rpartition("/")
                    if file.endswith(".parquet"):
                        fid, instant_of = parse_file_name(file)[:2]
                        versions.setdefault((part, fid), set()).add(instant_of)
                assert all(len(v) <= retained for v in versions.values()), (where, versions)
            elif history:
                done = sorted(i.timestamp for i in c.list_instants(db, name, states=["COMPLETED"])
                              if i.action in WRITE_ACTIONS)
                earliest = done[-retained] if len(done) >= retained else done[0]
                kept = [h for h in history if h[0] >= earliest]
                if not kept:  # the retained commits are all services' (a log compaction, compaction,
                    # clustering): as of the earliest, the model of the last write before it
                    kept = [(earliest, max((h for h in history if h[0] < earliest), key=lambda h: h[0])[1])]
                then, then_model = kept[draw.integer(0, len(kept) - 1, label="as_of")]
                assert ours(spark, our_server, table, COLS, as_of=then) == then_model, where
                assert hudi_rs(base, COLS, as_of=then) == then_model, where
    finally:
        c.close()
    return table


# per backend; a new seed every run (tests/harness/properties.py); a failure is printed as drawn,
# not shrunk (a step is a Spark job: shrinking took minutes)
@settings(max_examples=examples(1, 10), phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(data=st.data(), table_type=st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]),
       policy=st.sampled_from(POLICIES), delta_commits=st.integers(2, 3), clustering=st.booleans())
def test_random_sequences_with_table_services(spark, our_server, data, table_type, policy, delta_commits,
                                               clustering):
    draw = _Hypothesis(data)
    run_sequence(spark, our_server, draw, draw.integer(3, 7, label="steps"), table_type, policy, delta_commits,
                 clustering)


@settings(max_examples=examples(1, 6), phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(data=st.data(), policy=st.sampled_from(POLICIES), delta_commits=st.integers(4, 7), clustering=st.booleans(),
       threshold=st.sampled_from([2, 2, 3]))
def test_random_sequences_with_log_compaction(spark, our_server, data, policy, delta_commits, clustering, threshold):
    """The same steps on merge-on-read tables that also log-compact (`hoodie.log.compaction.inline`,
    blocks threshold 2 or 3; compaction after 4 to 7 deltacommits and clustering after 5 commits, so
    that slices gather log files first): log compactions, compactions and clusterings the server
    schedules run inline, as a step or fail and run again, and after every step the checks above
    hold."""
    draw = _Hypothesis(data)
    run_sequence(spark, our_server, draw, draw.integer(5, 9, label="steps"), "MERGE_ON_READ", policy, delta_commits,
                 clustering, extra_options={LOG_COMPACT_INLINE: "true", LOG_COMPACT_BLOCKS_THRESHOLD: str(threshold),
                                            CLUSTERING_MAX_COMMITS: "5"})


# seeded variants read by Hudi 1.2's Spark reader: (table type, cleaning policy, seed); compaction
# after 2 deltacommits and clustering after 2 commits, so that each sequence compacts (merge-on-read)
# and clusters (the test checks that it did), and the first two have a service fail and run again
# (the last: the table has the metadata table the server writes, which Hudi's reader lists files from;
# without it, Hudi's reader lists storage)
SEEDED = [("MERGE_ON_READ", ("KEEP_LATEST_COMMITS", 2), 3813, True),  # delete, insert, move, fail_services, ...
          ("COPY_ON_WRITE", ("KEEP_LATEST_FILE_VERSIONS", 1), 3833, False),  # fail, move, fail_services, upsert, ...
          ("MERGE_ON_READ", ("KEEP_LATEST_FILE_VERSIONS", 2), 3801, False),  # fail_services, move, fail_services, ...
          ("COPY_ON_WRITE", ("KEEP_LATEST_COMMITS", 3), 3827, True)]
SEEDED_STEPS = 6


def _footer_stats(base: str, records: list[list]) -> list[list]:
    """The records `column_stats_of` (tests/spark/hudi_spark_jobs.py) answered, recomputed from the
    files' Parquet footers: min and max over the row groups, null and value counts summed."""
    import pyarrow.parquet as pq

    out = []
    for part, name, column, *_ in records:
        meta = pq.ParquetFile(os.path.join(base, part, name)).metadata
        i = meta.schema.names.index(column)
        groups = [meta.row_group(g).column(i) for g in range(meta.num_row_groups)]
        stats = [g.statistics for g in groups if g.statistics is not None and g.statistics.has_min_max]
        out.append([part, name, column, min(s.min for s in stats) if stats else None,
                    max(s.max for s in stats) if stats else None,
                    sum(g.statistics.null_count for g in groups), sum(g.num_values for g in groups)])
    return out


@pytest.mark.backends("sqlite")
def test_seeded_sequences_read_by_hudis_spark_reader(spark, our_server, tmp_path):
    """Seeded sequences of the property test (its model and steps; 2 in CI, 4 in the thorough run),
    checked after every step by our reader and hudi-rs, and by Hudi 1.2's Spark reader (its Spark
    3.5 bundle, tests/harness/hudi_spark.py): a copy of the table's base path is taken after every
    step, and one Hudi Spark job reads every copy at the end: its snapshot equals the model after
    that step, and on merge-on-read tables its read-optimized query equals ours (base files only);
    on the tables with the server's metadata table it lists files from there, and after every step
    that leaves no instant in flight Hudi's metadata-table reader lists the same partitions and files
    (with the same sizes) as storage (`validate_metadata_table_files`'s check), Hudi's reader of
    the record index finds every key where its snapshot read finds it and its reader of column
    statistics gives each base file's footer statistics (the validator's record-index and
    column-stats checks; Hudi's
    HoodieMetadataTableValidator, in its utilities bundle, is not served here). A copy with a stray
    data file shows that check sees the metadata table, not a storage listing."""
    from pipeline import read
    from tests.harness.hudi_spark import hudi_spark_env, hudi_spark_python
    from tests.harness.spark import run_spark_script

    to_read: dict[str, dict] = {}
    retried: dict[str, bool] = {}
    expected: dict[str, tuple[list, list | None]] = {}
    validated: list[str] = []
    indexed: list[str] = []
    stats_checked: list[str] = []
    stray: dict = {}

    def copy(table: str, step: int, op: str, model: dict) -> None:
        name = f"{table}-{step}"
        target = tmp_path / "copies" / name
        shutil.copytree(base_dir(our_server, table), target)
        mor = table_type == "MERGE_ON_READ"
        read_optimized = sorted([list(r) for r in read(spark, table, metastore=uri(our_server),
                                                        query_type="read_optimized").select(*COLS).collect()]) \
            if mor else None
        assert (target / ".hoodie" / "metadata").exists() == metadata, name
        to_read[name] = {"base": str(target), "columns": COLS, "read_optimized": mor, "step": f"{step} {op}",
                         "options": {METADATA_ENABLE: str(metadata).lower()}}
        expected[name] = (sorted(list(v) for v in model.values()), read_optimized)
        with HudiMetastoreClient(uri(our_server)) as c:
            in_flight = c.list_instants(*table.split("."), states=["INFLIGHT"])
        if metadata and not in_flight:
            to_read[name]["validate_files"] = True
            validated.append(name)
            data = sorted(target.rglob("*.parquet"))
            data = [f for f in data if ".hoodie" not in f.relative_to(target).parts]
            if not stray and data:  # the same table, one data file more than its metadata table names
                other = tmp_path / "copies" / f"{name}-stray"
                shutil.copytree(target, other)
                src = other / data[0].relative_to(target)
                extra = src.with_name(f"{uuid.uuid4()}-0_0-1-1_{src.name.split('_')[-1]}")
                shutil.copyfile(src, extra)
                part = str(src.parent.relative_to(other)) if src.parent != other else ""
                stray.update(name=other.name, row=[part, extra.name, True, False, extra.stat().st_size, None])
                to_read[other.name] = {"base": str(other), "columns": COLS, "validate_files": True,
                                       "options": {METADATA_ENABLE: "true"}}

    for table_type, policy, seed, metadata in SEEDED[:examples(2, len(SEEDED))]:
        table = run_sequence(spark, our_server, Seeded(seed), SEEDED_STEPS, table_type, policy, 2, True,
                             after_step=copy, full_checks=False,
                             extra_options={METADATA_ENABLE: "true"} if metadata else None)
        with HudiCatalog(uri(our_server)) as c:  # the settings forced a compaction and a clustering
            meta = [json.loads(c.get_instant_metadata(*table.split("."), i.ts, i.action))
                    for i in c.list_instants(*table.split("."), states=["COMPLETED"])
                    if i.action in ("commit", "replacecommit")]
        done = {m.get("operationType") for m in meta}
        assert "CLUSTER" in done and ("COMPACT" in done or table_type == "COPY_ON_WRITE"), (table_type, seed, done)
        with HudiCatalog(uri(our_server)) as c:  # and a failed service attempt rolled back, then completed
            services = {i.ts for i in c.list_instants(*table.split("."), states=["COMPLETED"])
                        if i.action in ("commit", "replacecommit")}
            rolled = {t for i in c.list_instants(*table.split("."), actions=["rollback"])
                      for t in parse_rollback(c.get_instant_metadata(*table.split("."), i.ts, "rollback"))[0]}
        retried[table_type] = retried.get(table_type, False) or bool(rolled & services)
    assert retried == {"MERGE_ON_READ": True, "COPY_ON_WRITE": True}, retried
    out = run_spark_script(HUDI_JOBS, our_server, tmp_path / "hudi-wh", tmp_path / "hudi-read.json", timeout=1200,
                           python=hudi_spark_python(), env=hudi_spark_env(),
                           extra_args=["--read-only", "--read", json.dumps(to_read)])
    for name, (rows, read_optimized) in expected.items():
        got = out["read"][name]
        where = (name, to_read[name]["step"])
        assert "error" not in got, (where, got)
        assert got["snapshot"] == rows, where
        if read_optimized is not None:
            assert got["read_optimized"] == read_optimized, where
        if name in validated:
            check = got["files_check"]
            assert check["partitions_md"] == check["partitions_fs"] and check["files"] > 0, (where, check)
            assert check["mismatches"] == [], (where, check)
            if check.get("column_stats") is not None:  # the validator's column-stats check
                assert check["column_stats"] == _footer_stats(to_read[name]["base"], check["column_stats"]), where
                stats_checked += [name] if check["column_stats"] else []
            index = check.get("record_index")
            if index is not None:  # every key where Hudi reads it, no other (the validator's record-index check)
                indexed += [name] if index["storage"] else []
                assert index["index"] == index["storage"], where
    assert len(validated) >= 2 and stray and indexed and stats_checked, (validated, indexed, stats_checked)
    check = out["read"][stray["name"]]["files_check"]
    assert check["mismatches"] == [stray["row"]], check
