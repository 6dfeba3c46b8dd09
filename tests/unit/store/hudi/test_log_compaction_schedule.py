"""Log compactions the server schedules (issue 38; store/hudi/timeline/log_compaction_schedule.py):
a deltacommit of a merge-on-read table with `hoodie.log.compaction.inline=true` requests a
`logcompaction` whose plan names the latest slices with at least
`hoodie.log.compaction.blocks.threshold` log blocks (as Hudi's planner counts them: a data and a
delete block each, from the write stats; a completed log compaction's blocks stand in for those
before it), leaving out file groups a pending
compaction, clustering or log compaction plans; a compaction due comes first. It is claimed like a
compaction, retired when a write touches a planned file group, and completes as a deltacommit
with a conflict check by file group; its timeline files as Hudi names them."""

from __future__ import annotations

import json

import pytest

from hudi_format.commit_metadata import log_blocks, parse_compaction_plan
from hudi_format.config_keys import (
    COMPACT_INLINE,
    COMPACT_MAX_DELTA_COMMITS,
    LOG_COMPACT_BLOCKS_THRESHOLD,
    LOG_COMPACT_ENABLE,
    LOG_COMPACT_INLINE,
)
from hudi_format.table_config import HudiTableConfig
from store.errors import CommitConflict, InvalidOperation
from tests.unit.store.hudi.test_compaction_schedule import _stats
from tests.unit.store.hudi.test_timeline import Env

pytestmark = pytest.mark.backends("sqlite")
LC = "logcompaction"


def _table(env, tmp_path, name="m", **props) -> None:
    env.timeline.register_table(HudiTableConfig(
        db_name=env.db, table_name=name, table_type="MERGE_ON_READ", record_key_fields=["id"],
        partition_fields=["p"], precombine_field="ts", base_path=str(tmp_path / name),
        properties={LOG_COMPACT_INLINE: "true", LOG_COMPACT_BLOCKS_THRESHOLD: "3", **props}))


def _write(env, files, name="m") -> str:
    tl = env.timeline
    inst = tl.create_instant(env.db, name, None, "deltacommit", b"", 60)
    tl.transition_to_inflight(env.db, name, inst.ts, "deltacommit", b"")
    tl.complete_instant(env.db, name, inst.ts, "deltacommit", _stats(inst.ts, [(p, n(inst.ts)) for p, n in files]))
    return inst.ts


def _counted(ts: str, files) -> bytes:
    """Write stats of `files` [(partition, name, numWrites, numDeletes)]."""
    stats: dict = {}
    for partition, name, writes, deletes in files:
        stats.setdefault(partition, []).append({
            "fileId": name.lstrip(".").split("_")[0], "path": f"{partition}/{name}", "partitionPath": partition,
            "fileSizeInBytes": 100, "numWrites": writes, "numDeletes": deletes})
    return json.dumps({"partitionToWriteStats": stats, "compacted": False, "extraMetadata": {},
                       "operationType": "UPSERT"}).encode()


def _write_counted(env, files, name="m") -> str:
    """A deltacommit of `files` [(partition, name(ts), numWrites, numDeletes)]."""
    tl = env.timeline
    inst = tl.create_instant(env.db, name, None, "deltacommit", b"", 60)
    tl.transition_to_inflight(env.db, name, inst.ts, "deltacommit", b"")
    tl.complete_instant(env.db, name, inst.ts, "deltacommit",
                        _counted(inst.ts, [(p, n(inst.ts), w, d) for p, n, w, d in files]))
    return inst.ts


def _log(fid: str, base: str, version: int):
    return lambda ts: f".{fid}_{base}.log.{version}_0-1-0"


def _lcs(env, name="m", states=None) -> list:
    return [(i.ts, i.state) for i in env.timeline.list_instants(env.db, name, states=states, actions=[LC])]


def _plan(env, ts, name="m") -> list[tuple[str, list[str]]]:
    return sorted((o.file_id, o.log_files) for o in parse_compaction_plan(
        env.timeline.instant_metadata(env.db, name, ts, LC, "REQUESTED")))


def _complete(env, ts, files, name="m", operation="LOG_COMPACT"):
    tl = env.timeline
    tl.transition_to_inflight(env.db, name, ts, LC, b"")
    meta = _stats(ts, files).replace(b'"UPSERT"', f'"{operation}"'.encode())
    tl.complete_instant(env.db, name, ts, LC, meta)


def test_scheduled_at_the_blocks_threshold_and_completed_as_a_deltacommit(backend_url, tmp_path):
    env = Env(backend_url, tmp_path)
    try:
        _table(env, tmp_path)
        first = _write(env, [("p=1", lambda ts: f"f1-0_0-1-0_{ts}.parquet"),
                             ("p=1", lambda ts: f"f2-0_0-1-0_{ts}.parquet")])
        _write(env, [("p=1", _log("f1-0", first, 1)), ("p=1", _log("f2-0", first, 1))])
        _write(env, [("p=1", _log("f1-0", first, 2))])
        assert _lcs(env) == []  # f1-0: 2 log files, under 3
        third = _write(env, [("p=1", _log("f1-0", first, 3))])
        [(ts, state)] = _lcs(env)
        assert state == "REQUESTED" and ts > third
        names = [f".f1-0_{first}.log.{v}_0-1-0" for v in (1, 2, 3)]
        assert _plan(env, ts) == [("f1-0", names)]  # f2-0 has one log file
        from hudi_format.commit_metadata import _avro_record

        plan = _avro_record(env.timeline.instant_metadata(env.db, "m", ts, LC, "REQUESTED"))
        assert plan["preserveHoodieMetadata"] is True and plan["version"] == 2
        assert plan["strategy"]["compactorClassName"] == \
            "org.apache.hudi.table.action.compact.LogCompactionExecutionHelper"
        # claimed as a compaction: one executor only
        env.timeline.transition_to_inflight(env.db, "m", ts, LC, b"")
        with pytest.raises(InvalidOperation):
            env.timeline.transition_to_inflight(env.db, "m", ts, LC, b"")
        out = f".f1-0_{first}.log.4_0-1-0"
        env.timeline.complete_instant(env.db, "m", ts, LC, _stats(ts, [("p=1", out)]).replace(
            b'"UPSERT"', b'"LOG_COMPACT"'))
        [done] = [i for i in env.timeline.list_instants(env.db, "m", states=["COMPLETED"]) if i.ts == ts]
        assert done.action == "deltacommit"
        # its file stands in for the three before it: the slice counts 1 (+ new ones), not 4
        _write(env, [("p=1", _log("f1-0", first, 5))])
        assert _lcs(env, states=["REQUESTED"]) == []
        _write(env, [("p=1", _log("f1-0", first, 6))])
        [(again, _)] = _lcs(env, states=["REQUESTED"])
        assert _plan(env, again) == [("f1-0", names + [out] + [f".f1-0_{first}.log.{v}_0-1-0" for v in (5, 6)])]
    finally:
        env.dispose()


def test_not_for_tables_without_it_nor_for_groups_under_pending_services(backend_url, tmp_path):
    env = Env(backend_url, tmp_path)
    try:
        _table(env, tmp_path, "off", **{LOG_COMPACT_INLINE: "false"})
        first = _write(env, [("p=1", lambda ts: f"f1-0_0-1-0_{ts}.parquet")], "off")
        for v in (1, 2, 3, 4):
            _write(env, [("p=1", _log("f1-0", first, v))], "off")
        assert _lcs(env, "off") == []
        # a compaction due comes first (Hudi's inline order), and its file group is left out
        _table(env, tmp_path, "both", **{COMPACT_INLINE: "true", COMPACT_MAX_DELTA_COMMITS: "4"})
        first = _write(env, [("p=1", lambda ts: f"f1-0_0-1-0_{ts}.parquet"),
                             ("p=1", lambda ts: f"f2-0_0-1-0_{ts}.parquet")], "both")
        _write(env, [("p=1", _log("f1-0", first, 1)), ("p=1", _log("f2-0", first, 1))], "both")
        _write(env, [("p=1", _log("f1-0", first, 2)), ("p=1", _log("f2-0", first, 2))], "both")
        assert _lcs(env, "both") == []
        _write(env, [("p=1", _log("f1-0", first, 3)), ("p=1", _log("f2-0", first, 3))], "both")
        [compaction] = env.timeline.list_instants(env.db, "both", actions=["compaction"])
        assert _lcs(env, "both") == []  # every slice at the threshold is under the compaction
        # a pending log compaction's group is not planned again
        _table(env, tmp_path, "two")
        first = _write(env, [("p=1", lambda ts: f"f1-0_0-1-0_{ts}.parquet"),
                             ("p=2", lambda ts: f"f2-0_0-1-0_{ts}.parquet")], "two")
        for v in (1, 2, 3):
            _write(env, [("p=1", _log("f1-0", first, v))], "two")
        [(lc1, _)] = _lcs(env, "two")
        env.timeline.transition_to_inflight(env.db, "two", lc1, LC, b"")  # claimed: no write retires it
        for v in (1, 2, 3):
            _write(env, [("p=2", _log("f2-0", first, v))], "two")
        [(_, _), (lc2, _)] = _lcs(env, "two")
        assert [f for f, _ in _plan(env, lc2, "two")] == ["f2-0"]
        assert compaction.state == "REQUESTED"
    finally:
        env.dispose()


def test_a_write_to_a_planned_group_retires_it_and_a_late_completion_conflicts(backend_url, tmp_path):
    env = Env(backend_url, tmp_path)
    try:
        _table(env, tmp_path)
        first = _write(env, [("p=1", lambda ts: f"f1-0_0-1-0_{ts}.parquet")])
        for v in (1, 2, 3):
            _write(env, [("p=1", _log("f1-0", first, v))])
        [(lc, _)] = _lcs(env)
        # waiting: a write appending to its file group makes it stale (rolled back), and the
        # deltacommit schedules a new one naming the new file too
        _write(env, [("p=1", _log("f1-0", first, 4))])
        rolled = [i for i in env.timeline.list_instants(env.db, "m", actions=["rollback"])]
        assert len(rolled) == 1
        [(lc2, state)] = _lcs(env)
        assert lc2 != lc and state == "REQUESTED" and len(_plan(env, lc2)[0][1]) == 4
        # claimed, then a write to the group completes first: the log compaction loses the check
        env.timeline.transition_to_inflight(env.db, "m", lc2, LC, b"")
        _write(env, [("p=1", _log("f1-0", first, 5))])
        with pytest.raises(CommitConflict):
            env.timeline.complete_instant(env.db, "m", lc2, LC, _stats(lc2, [("p=1", _log("f1-0", first, 6)(lc2))]))
    finally:
        env.dispose()


def test_timeline_file_names_per_table_version():
    """As Hudi's HoodieTimeline names them: `<ts>.logcompaction.requested`/`.inflight`; completed as a
    deltacommit (layout 2: `<ts>_<completion>.deltacommit`)."""
    from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED
    from hudi_format.timeline_layout import timeline_layout

    for version, done in ((6, "1.deltacommit"), (8, "1_2.deltacommit"), (9, "1_2.deltacommit")):
        layout = timeline_layout(version)
        assert [layout.file_name("1", LC, s, "2") for s in (REQUESTED, INFLIGHT, COMPLETED)] == [
            "1.logcompaction.requested", "1.logcompaction.inflight", done]


def test_log_blocks_of_write_stats():
    """A data block when a stat wrote records, a delete block when it deleted keys, one when it
    says neither; a file two stats of a commit name counts both."""
    meta = _counted("1", [("p=1", ".a_0.log.1_0-1-0", 3, 2), ("p=1", ".b_0.log.1_0-1-0", 0, 4),
                          ("p=1", ".c_0.log.1_0-1-0", 5, 0), ("p=1", ".d_0.log.1_0-1-0", 0, 0),
                          ("p=1", ".a_0.log.1_0-1-0", 1, 0)])
    assert log_blocks(meta) == {("p=1", ".a_0.log.1_0-1-0"): 3, ("p=1", ".b_0.log.1_0-1-0"): 1,
                                ("p=1", ".c_0.log.1_0-1-0"): 1, ("p=1", ".d_0.log.1_0-1-0"): 1}
    doc = {"partitionToWriteStats": {"": [{"fileId": "e", "path": ".e_0.log.1_0-1-0"}]}}
    assert log_blocks(json.dumps(doc).encode()) == {("", ".e_0.log.1_0-1-0"): 1}  # no counts: one


def test_blocks_are_counted_as_hudis_planner_counts_them(backend_url, tmp_path):
    """Threshold 3: two log files holding a data and a delete block, and a data block, reach it
    (three blocks in two files); a delete-only file counts one; a completed log compaction's file
    (a delete and a data block) stands in for the blocks before it and counts two."""
    env = Env(backend_url, tmp_path)
    try:
        _table(env, tmp_path)
        first = _write(env, [("p=1", lambda ts: f"f1-0_0-1-0_{ts}.parquet"),
                             ("p=1", lambda ts: f"f2-0_0-1-0_{ts}.parquet")])
        _write_counted(env, [("p=1", _log("f1-0", first, 1), 2, 1), ("p=1", _log("f2-0", first, 1), 0, 3)])
        assert _lcs(env) == []  # f1-0: 2 blocks in 1 file; f2-0: 1
        _write_counted(env, [("p=1", _log("f1-0", first, 2), 4, 0), ("p=1", _log("f2-0", first, 2), 1, 0)])
        [(ts, _)] = _lcs(env)  # f1-0: 3 blocks in 2 files; f2-0: 2 blocks
        assert _plan(env, ts) == [("f1-0", [f".f1-0_{first}.log.{v}_0-1-0" for v in (1, 2)])]
        env.timeline.transition_to_inflight(env.db, "m", ts, LC, b"")
        meta = _counted(ts, [("p=1", f".f1-0_{first}.log.3_0-1-0", 5, 1)])
        env.timeline.complete_instant(env.db, "m", ts, LC, meta.replace(b'"UPSERT"', b'"LOG_COMPACT"'))
        # f1-0: the log compaction's 2 blocks, not the 3 before them, and 0 new: under 3
        _write_counted(env, [("p=1", _log("f2-0", first, 3), 0, 1)])
        [(again, _)] = _lcs(env, states=["REQUESTED"])  # f2-0: 3 blocks in 3 files
        assert [f for f, _ in _plan(env, again)] == ["f2-0"]
        env.timeline.transition_to_inflight(env.db, "m", again, LC, b"")  # (claimed: kept)
        _write_counted(env, [("p=1", _log("f1-0", first, 4), 1, 0)])  # f1-0: 2 + 1
        [(third, _)] = [x for x in _lcs(env, states=["REQUESTED"])]
        assert [f for f, _ in _plan(env, third)] == ["f1-0"]
    finally:
        env.dispose()


def test_a_log_compactions_completion_schedules_none(backend_url, tmp_path):
    """Threshold 2: the completed log compaction's file (a delete and a data block) brings its slice
    to the threshold, but its own completion schedules nothing (Hudi plans log compactions after
    writes); the next write, to another file group, plans the slice again (as Hudi's planner would)."""
    env = Env(backend_url, tmp_path)
    try:
        _table(env, tmp_path, **{LOG_COMPACT_BLOCKS_THRESHOLD: "2"})
        first = _write(env, [("p=1", lambda ts: f"f1-0_0-1-0_{ts}.parquet"),
                             ("p=1", lambda ts: f"f2-0_0-1-0_{ts}.parquet")])
        _write_counted(env, [("p=1", _log("f1-0", first, 1), 1, 1)])
        [(ts, _)] = _lcs(env)
        env.timeline.transition_to_inflight(env.db, "m", ts, LC, b"")
        meta = _counted(ts, [("p=1", f".f1-0_{first}.log.2_0-1-0", 1, 1)])
        env.timeline.complete_instant(env.db, "m", ts, LC, meta.replace(b'"UPSERT"', b'"LOG_COMPACT"'))
        assert _lcs(env, states=["REQUESTED"]) == []
        _write_counted(env, [("p=1", _log("f2-0", first, 1), 1, 0)])
        [(again, _)] = _lcs(env, states=["REQUESTED"])
        assert [f for f, _ in _plan(env, again)] == ["f1-0"]
    finally:
        env.dispose()

def test_hoodie_log_compaction_enable_turns_it_on_as_the_inline_key_does(backend_url, tmp_path):
    """`hoodie.log.compaction.enable=true` (what Hudi's metadata table writer reads) schedules log
    compactions as `hoodie.log.compaction.inline=true` (what its data table writers read) does;
    either one's false does not turn the other off; both false (the defaults): none."""
    env = Env(backend_url, tmp_path)
    try:
        for name, inline, enable, on in (("en", "false", "true", True), ("inl", "true", "false", True),
                                         ("both", None, "TRUE", True), ("none", "false", "false", False)):
            props = {LOG_COMPACT_INLINE: inline, LOG_COMPACT_ENABLE: enable}
            _table(env, tmp_path, name, **{k: v for k, v in props.items() if v is not None})
            first = _write(env, [("p=1", lambda ts: f"f1-0_0-1-0_{ts}.parquet")], name)
            for v in (1, 2, 3):
                _write(env, [("p=1", _log("f1-0", first, v))], name)
            assert len(_lcs(env, name)) == (1 if on else 0), name
    finally:
        env.dispose()


def test_log_compaction_options_go_to_the_table_config_and_bad_ones_fail_the_write():
    from hudi_format.table_config import log_compaction_enabled
    from pipeline.config import WriteConfig
    from pipeline.log_compaction import enabled

    opts = {LOG_COMPACT_ENABLE: "true", LOG_COMPACT_BLOCKS_THRESHOLD: "4"}
    assert WriteConfig.from_options("insert", opts).table_properties == opts
    with pytest.raises(ValueError, match=LOG_COMPACT_ENABLE):
        WriteConfig.from_options("insert", {LOG_COMPACT_ENABLE: "yes"})
    assert [log_compaction_enabled(p) for p in ({}, None, {LOG_COMPACT_ENABLE: "false"}, {LOG_COMPACT_ENABLE: "true"},
                                                 {LOG_COMPACT_INLINE: " True "})] == [False, False, False, True, True]
    mor = {"table_type": "MERGE_ON_READ", "properties": {LOG_COMPACT_ENABLE: "true"}}
    assert enabled(_info(**mor)) and not enabled(_info(**{**mor, "table_type": "COPY_ON_WRITE"}))
    assert not enabled(_info(table_type="MERGE_ON_READ", properties={}))


def test_table_services_status_reads_both_keys():
    from adapter.commands.table_services import _settings
    from hudi_format.config_keys import TIMELINE_SOURCE

    on = _settings({LOG_COMPACT_ENABLE: "true"}, "MERGE_ON_READ")["logcompaction"]
    assert on["enabled"] and (on[LOG_COMPACT_INLINE], on[LOG_COMPACT_ENABLE]) == ("false", "true")
    assert not _settings({}, "MERGE_ON_READ")["logcompaction"]["enabled"]
    assert not _settings({LOG_COMPACT_ENABLE: "true"}, "COPY_ON_WRITE")["logcompaction"]["enabled"]
    assert not _settings({LOG_COMPACT_ENABLE: "true", TIMELINE_SOURCE: "storage"}, "MERGE_ON_READ")[
        "logcompaction"]["enabled"]

def _info(table_type: str, properties: dict):
    from pipeline.table import TableInfo

    return TableInfo("d", "t", "/tmp/t", ["id"], [], None, False, False, None, properties=properties,
                     table_type=table_type)
