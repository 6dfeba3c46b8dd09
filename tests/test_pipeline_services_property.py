"""Property test of table types and table services (issue 38; hypothesis, a new seed every run):
random sequences of inserts, upserts, deletes, partition moves, table services and failed writes
on merge-on-read and copy-on-write tables whose first write sets a random cleaning policy
(`KEEP_LATEST_COMMITS` or `KEEP_LATEST_FILE_VERSIONS`, a few retained), compaction after 2 or 3
delta commits, on half of the tables inline clustering (after 2 commits, sorted by `name`) and
archival after 5 commits. The server schedules the compactions and clusterings and runs the cleans
and archival after the commits; the pipeline runs compactions and clusterings (inline before a
write, or as a step the way `table-services run` does); a failed write (its completion fails after
its files were written) is rolled back by the next writer once its heartbeat expired.

After every step:
* our reader (snapshot) and hudi-rs reading storage hold exactly the model's rows;
* the server's latest file slices (base and log files) are hudi-rs's (which also lists the log
  files of a failed write until its rollback deletes them);
* with no failed write waiting for its rollback, the data files on storage are exactly the files
  the server lists (every version it keeps): a clean deleted what the server forgot, a rollback
  the failed write's files;
* `KEEP_LATEST_FILE_VERSIONS` n: no file group keeps more than n base-file versions;
* the incremental read of a write gives the records it wrote; with `KEEP_LATEST_COMMITS`, time
  travel (ours and hudi-rs) to an earlier write the last commits retained gives that write's model.

Keys choose their partition on insert; `move` upserts existing keys into another partition (the
record index moves them).
"""

from __future__ import annotations

import itertools
import os
import time
import uuid
from unittest import mock

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from client import HudiCatalog, HudiMetastoreClient
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
)
from hudi_format.file_slice import parse_file_name
from pipeline import table_services, write
from pipeline.commit import WriteTransaction
from pipeline.errors import HudiWriteError
from pipeline.table import load
from tests.harness.properties import examples
from tests.pipeline_helpers import base_dir, hudi_rs, hudi_rs_slices, ours, uri

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCHEMA = "id long, name string, ts long, dt string"
COLS = ["id", "name", "ts", "dt"]
KEYS = range(10)
PARTS = ("p0", "p1", "p2")
OPS = ["insert", "upsert", "upsert", "delete", "move", "services", "fail"]
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


def _await_expired(c: HudiMetastoreClient, db: str, name: str, ts: str) -> None:
    """Until the failed write's heartbeat expired (the server lists it as failed)."""
    deadline = time.monotonic() + 60
    while ts not in {i.timestamp for i in c.get_failed_instants(db, name)}:
        assert time.monotonic() < deadline, f"{ts} not failed after 60 s"
        time.sleep(0.2)


# per backend; a new seed every run (tests/harness/properties.py); a failure is printed as drawn,
# not shrunk (a step is a Spark job: shrinking took minutes)
@settings(max_examples=examples(1, 10), phases=(Phase.explicit, Phase.reuse, Phase.generate))
@given(data=st.data(), table_type=st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]),
       policy=st.sampled_from(POLICIES), delta_commits=st.integers(2, 3), clustering=st.booleans())
def test_random_sequences_with_table_services(spark, our_server, data, table_type, policy, delta_commits,
                                               clustering):
    db, name = f"svc_{uuid.uuid4().hex[:8]}", "t"
    table = f"{db}.{name}"
    clean_policy, retained = policy
    options = {CLEANER_POLICY: clean_policy, ARCHIVE_MIN_COMMITS: "4", ARCHIVE_MAX_COMMITS: "5",
               CLIENT_HEARTBEAT_INTERVAL_MS: "500", CLIENT_HEARTBEAT_TOLERABLE_MISSES: "1",
               COMPACT_MAX_DELTA_COMMITS: str(delta_commits),
               CLEANER_COMMITS_RETAINED if clean_policy == "KEEP_LATEST_COMMITS" else CLEANER_FILE_VERSIONS_RETAINED:
               str(retained)}
    if clustering:  # every file is small (Hudi's 300 MB limit), and sorted: a plan takes every partition
        options.update({CLUSTERING_INLINE: "true", CLUSTERING_MAX_COMMITS: "2", CLUSTERING_SORT_COLUMNS: "name"})
    ts = itertools.count(1)
    names = st.text(alphabet="ab", min_size=0, max_size=2)
    model: dict = {}
    history: list[tuple[str, dict]] = []  # (write instant, model after it)
    failed: str | None = None  # a failed write the next writer rolls back
    c = HudiMetastoreClient(uri(our_server))
    try:
        steps = data.draw(st.integers(min_value=3, max_value=7), label="steps")
        for step in range(steps):
            op = data.draw(st.sampled_from(OPS), label=f"op{step}") if model else "insert"
            free = [k for k in KEYS if str(k) not in model]
            if op == "insert" and not free or op in ("delete", "move") and not model:
                op = "upsert"
            if op == "insert":
                keys = data.draw(st.lists(st.sampled_from(free), min_size=1, max_size=4, unique=True), label="keys")
                rows = [(k, data.draw(names), next(ts), data.draw(st.sampled_from(PARTS))) for k in keys]
            elif op in ("upsert", "fail"):
                keys = data.draw(st.lists(st.sampled_from(list(KEYS)), min_size=1, max_size=5), label="keys")
                rows = [(k, data.draw(names), next(ts),
                         model[str(k)][3] if str(k) in model else data.draw(st.sampled_from(PARTS))) for k in keys]
            elif op == "move":
                keys = data.draw(st.lists(st.sampled_from(sorted(int(k) for k in model)), min_size=1, max_size=3,
                                          unique=True), label="keys")
                rows = [(k, data.draw(names), next(ts),
                         data.draw(st.sampled_from([p for p in PARTS if p != model[str(k)][3]]))) for k in keys]
            elif op == "delete":
                keys = data.draw(st.lists(st.sampled_from(sorted(int(k) for k in model)), min_size=1, max_size=3,
                                          unique=True), label="keys")
                rows = [(k, None, next(ts), model[str(k)][3]) for k in keys]
            else:
                rows = []
            where = f"step {step} ({table_type}, {policy}, {delta_commits}, {clustering}): {op} {rows}"

            if op == "services":  # what `table-services run` runs: the pending compactions and clusterings
                with HudiCatalog(uri(our_server)) as catalog:
                    ran = table_services.run(spark, catalog, load(catalog, db, name), uri(our_server))
                assert all(o.result == "completed" for o in ran), (where, ran)
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
                instant = write(spark.createDataFrame(rows, SCHEMA), table, "delete" if op == "delete" else "upsert",
                                record_key="id", precombine_field="ts", partition_by="dt",
                                metastore=uri(our_server), table_type=table_type, options=options)
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
                assert ours(spark, our_server, table, COLS, since=before, until=instant) == \
                    {k: v for k, v in model.items() if k in written}, where

            base = base_dir(our_server, table)
            assert ours(spark, our_server, table, COLS) == model, where
            assert hudi_rs(base, COLS) == model, where
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
                then, then_model = kept[data.draw(st.integers(0, len(kept) - 1), label="as_of")]
                assert ours(spark, our_server, table, COLS, as_of=then) == then_model, where
                assert hudi_rs(base, COLS, as_of=then) == then_model, where
    finally:
        c.close()
