"""Server-side parts of the pipeline's commit protocol (store.hudi.timeline): an instant that loses
a conflict is expired at once, so its writer rolls it back (its files deleted) without waiting for
the heartbeat timeout; a DELETE_PARTITION replacecommit drops the HMS partitions it empties."""

from __future__ import annotations

import json
import os

import pytest

from hudi_format.table_config import COW, HudiTableConfig
from store.errors import CommitConflict, InvalidOperation
from tests.test_hudi_fixtures import services
from thrift_idl.hive_metastore.ttypes import Database


def _table(tmp_path):
    tables, timeline, snapshot = services(tmp_path)
    tables.create_database(Database(name="db"))
    base = str(tmp_path / "t")
    timeline.register_table(HudiTableConfig(db_name="db", table_name="t", table_type=COW, record_key_fields=["id"],
                                            partition_fields=["dt"], hive_style_partitioning=True, base_path=base))
    return base, tables, timeline, snapshot


def _stat(ts, part, fid):
    return {"fileId": fid, "path": f"{part}/{fid}_0-1-0_{ts}.parquet", "partitionPath": part,
            "fileSizeInBytes": 1, "prevCommit": "null"}


def _meta(op, stats, replaced=None):
    out = {"partitionToWriteStats": {}, "operationType": op, "extraMetadata": {}}
    for s in stats:
        out["partitionToWriteStats"].setdefault(s["partitionPath"], []).append(s)
    if replaced is not None:
        out["partitionToReplaceFileIds"] = replaced
    return json.dumps(out).encode()


def test_conflict_loser_is_expired_and_rolled_back_at_once(tmp_path):
    base, _, timeline, snapshot = _table(tmp_path)
    a = timeline.create_instant("db", "t", None, "commit", b"", 600)
    b = timeline.create_instant("db", "t", None, "commit", b"", 600)
    for i in (a, b):
        timeline.transition_to_inflight("db", "t", i.ts, "commit", b"")
    os.makedirs(os.path.join(base, "dt=1"))
    loser_file = f"dt=1/f1-0_0-1-0_{a.ts}.parquet"
    open(os.path.join(base, loser_file), "wb").close()
    timeline.add_markers("db", "t", a.ts, [loser_file])
    timeline.complete_instant("db", "t", b.ts, "commit", _meta("UPSERT", [_stat(b.ts, "dt=1", "f1-0")]))
    assert [i.ts for i in timeline.failed_instants("db", "t")] == []
    with pytest.raises(CommitConflict):
        timeline.complete_instant("db", "t", a.ts, "commit", _meta("UPSERT", [_stat(a.ts, "dt=1", "f1-0")]))
    assert [i.ts for i in timeline.failed_instants("db", "t")] == [a.ts]
    with pytest.raises(InvalidOperation, match="lost a commit conflict"):
        timeline.heartbeat("db", "t", a.ts)
    _, deleted = timeline.rollback("db", "t", a.ts)  # no force: the instant is expired
    assert deleted == [loser_file] and not os.path.exists(os.path.join(base, loser_file))
    assert [i.ts for i in timeline.list_instants("db", "t", actions=["commit"])] == [b.ts]


def test_delete_partition_replacecommit_drops_hms_partitions(tmp_path):
    _, tables, timeline, snapshot = _table(tmp_path)
    c = timeline.create_instant("db", "t", None, "commit", b"", 60)
    timeline.transition_to_inflight("db", "t", c.ts, "commit", b"")
    timeline.complete_instant("db", "t", c.ts, "commit", _meta("INSERT", [_stat(c.ts, "dt=1", "f1-0"),
                                                                       _stat(c.ts, "dt=2", "f2-0")]))
    assert snapshot.partitions("db", "t") == ["dt=1", "dt=2"]
    # insert_overwrite keeps the partition (it has new files); delete_partition drops it
    r = timeline.create_instant("db", "t", None, "replacecommit", b"", 60)
    timeline.transition_to_inflight("db", "t", r.ts, "replacecommit", b"")
    timeline.complete_instant("db", "t", r.ts, "replacecommit",
                              _meta("INSERT_OVERWRITE", [_stat(r.ts, "dt=2", "f3-0")], {"dt=2": ["f2-0"]}))
    assert snapshot.partitions("db", "t") == ["dt=1", "dt=2"]
    d = timeline.create_instant("db", "t", None, "replacecommit", b"", 60)
    timeline.transition_to_inflight("db", "t", d.ts, "replacecommit", b"")
    timeline.complete_instant("db", "t", d.ts, "replacecommit", _meta("DELETE_PARTITION", [], {"dt=1": ["f1-0"]}))
    assert snapshot.partitions("db", "t") == ["dt=2"]
    assert [(s.partition_path, s.file_id) for s in snapshot.latest_file_slices("db", "t")] == [("dt=2", "f3-0")]
