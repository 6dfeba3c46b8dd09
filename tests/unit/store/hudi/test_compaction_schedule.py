"""Compactions the server schedules (issue 38): a merge-on-read table's deltacommit that makes
`hoodie.compact.inline.max.delta.commits` since the last compaction requests one, in its own
transaction, whose plan names the latest slices with log files; none while one is pending; counting
starts again after it completes (as a commit), by instant time. Only tables compacted inline
(`hoodie.compact.inline=true`, the pipeline's) get them. Copy-on-write tables never get one."""

from __future__ import annotations

import json

import pytest

from hudi_format.commit_metadata import parse_compaction_plan
from hudi_format.config_keys import (
    COMPACT_INLINE,
    COMPACT_LOGFILE_SIZE_THRESHOLD,
    COMPACT_MAX_DELTA_COMMITS,
    COMPACT_MAX_DELTA_SECONDS,
    COMPACT_TRIGGER_STRATEGY,
)
from hudi_format.table_config import HudiTableConfig
from tests.unit.store.hudi.test_timeline import Env

pytestmark = pytest.mark.backends("sqlite")


def _stats(ts: str, files) -> bytes:
    """Write stats of `files` [(partition, name)]."""
    stats: dict = {}
    for partition, name in files:
        fid = name.lstrip(".").split("_")[0]
        stats.setdefault(partition, []).append({"fileId": fid, "path": f"{partition}/{name}",
                                                "partitionPath": partition, "fileSizeInBytes": 100, "numWrites": 1})
    return json.dumps({"partitionToWriteStats": stats, "compacted": False, "extraMetadata": {},
                       "operationType": "UPSERT"}).encode()


def _write(env, action: str, files) -> str:
    tl = env.timeline
    inst = tl.create_instant(env.db, "m", None, action, b"", 60)
    tl.transition_to_inflight(env.db, "m", inst.ts, action, b"")
    tl.complete_instant(env.db, "m", inst.ts, action, _stats(inst.ts, [(p, n(inst.ts)) for p, n in files]))
    return inst.ts


def _compactions(env) -> list:
    return [(i.ts, i.state) for i in env.timeline.list_instants(env.db, "m", actions=["compaction"])]


def test_compaction_is_scheduled_after_max_delta_commits(backend_url, tmp_path):
    env = Env(backend_url, tmp_path)
    try:
        env.timeline.register_table(HudiTableConfig(
            db_name=env.db, table_name="m", table_type="MERGE_ON_READ", record_key_fields=["id"],
            partition_fields=["p"], precombine_field="ts", base_path=str(tmp_path / "m"),
            properties={COMPACT_MAX_DELTA_COMMITS: "2", COMPACT_INLINE: "true"}))
        first = _write(env, "deltacommit", [("p=1", lambda ts: f"f1-0_0-1-0_{ts}.parquet"),
                                            ("p=1", lambda ts: f"f2-0_0-1-0_{ts}.parquet")])
        assert _compactions(env) == []
        second = _write(env, "deltacommit", [("p=1", lambda ts: f".f1-0_{first}.log.1_0-1-0")])
        [(ts, state)] = _compactions(env)
        assert state == "REQUESTED" and ts > second
        plan = parse_compaction_plan(env.timeline.instant_metadata(env.db, "m", ts, "compaction", "REQUESTED"))
        assert [(o.partition_path, o.file_id, o.base_instant, o.base_file, o.log_files) for o in plan] == [
            ("p=1", "f1-0", first, f"f1-0_0-1-0_{first}.parquet", [f".f1-0_{first}.log.1_0-1-0"])]
        _write(env, "deltacommit", [("p=1", lambda t: f".f2-0_{first}.log.1_0-1-0")])
        assert len(_compactions(env)) == 1  # one is pending: no second
        tl = env.timeline
        tl.transition_to_inflight(env.db, "m", ts, "compaction", b"")
        tl.complete_instant(env.db, "m", ts, "compaction", _stats(ts, [("p=1", f"f1-0_0-1-0_{ts}.parquet")]))
        assert [i.action for i in tl.list_instants(env.db, "m", states=["COMPLETED"]) if i.ts == ts] == ["commit"]
        # counted by instant time, as Hudi does: the deltacommit written while it was pending is after it
        _write(env, "deltacommit", [("p=1", lambda t: f".f1-0_{ts}.log.1_0-1-0")])
        [(again, _)] = _compactions(env)
        plan = parse_compaction_plan(env.timeline.instant_metadata(env.db, "m", again, "compaction", "REQUESTED"))
        assert sorted((o.file_id, o.base_instant, len(o.log_files)) for o in plan) == [
            ("f1-0", ts, 1), ("f2-0", first, 1)]
        # copy-on-write: commits never schedule one
        for _ in range(3):
            env.write("commit", [("p=1", "c1-0")])
        assert env.timeline.list_instants(env.db, "t", actions=["compaction"]) == []
        # nor merge-on-read tables not compacted inline (Hudi's writers' own: nobody would run the plans)
        env.timeline.register_table(HudiTableConfig(
            db_name=env.db, table_name="o", table_type="MERGE_ON_READ", record_key_fields=["id"],
            partition_fields=["p"], base_path=str(tmp_path / "o"), properties={COMPACT_MAX_DELTA_COMMITS: "1"}))
        tl.transition_to_inflight(env.db, "o", tl.create_instant(env.db, "o", None, "deltacommit", b"", 60).ts,
                                  "deltacommit", b"")
        [pending] = tl.list_instants(env.db, "o")
        tl.complete_instant(env.db, "o", pending.ts, "deltacommit",
                            _stats(pending.ts, [("p=1", f"f9-0_0-1-0_{pending.ts}.parquet")]))
        assert tl.list_instants(env.db, "o", actions=["compaction"]) == []
    finally:
        env.dispose()


def test_file_groups_under_pending_clustering_are_not_compacted(backend_url, tmp_path):
    """A compaction plan leaves out the file groups a pending clustering replaces (and the reverse:
    tests/unit/store/hudi/test_clustering_schedule.py), so the two never rewrite one file group."""
    from hudi_format.config_keys import CLUSTERING_INLINE, CLUSTERING_MAX_COMMITS, CLUSTERING_SORT_COLUMNS

    env = Env(backend_url, tmp_path)
    try:
        env.timeline.register_table(HudiTableConfig(
            db_name=env.db, table_name="m", table_type="MERGE_ON_READ", record_key_fields=["id"],
            partition_fields=["p"], precombine_field="ts", base_path=str(tmp_path / "m"),
            properties={COMPACT_MAX_DELTA_COMMITS: "2", COMPACT_INLINE: "true", CLUSTERING_INLINE: "true",
                        CLUSTERING_MAX_COMMITS: "1", CLUSTERING_SORT_COLUMNS: "id"}))
        first = _write(env, "deltacommit", [("p=1", lambda ts: f"f1-0_0-1-0_{ts}.parquet"),
                                            ("p=2", lambda ts: f"f2-0_0-1-0_{ts}.parquet")])
        [clustering] = env.timeline.list_instants(env.db, "m", actions=["clustering"])
        assert clustering.state == "REQUESTED"
        env.timeline.transition_to_inflight(env.db, "m", clustering.ts, "clustering", b"")
        _write(env, "deltacommit", [("p=1", lambda ts: f".f1-0_{first}.log.1_0-1-0"),
                                    ("p=2", lambda ts: f".f2-0_{first}.log.1_0-1-0")])
        assert _compactions(env) == []  # both file groups are under the pending clustering
    finally:
        env.dispose()


def _mor(env, tmp_path, name: str, props: dict[str, str]) -> None:
    env.timeline.register_table(HudiTableConfig(
        db_name=env.db, table_name=name, table_type="MERGE_ON_READ", record_key_fields=["id"],
        partition_fields=["p"], precombine_field="ts", base_path=str(tmp_path / name),
        properties={COMPACT_INLINE: "true", **props}))


def _write_to(env, name: str, files) -> str:
    tl = env.timeline
    inst = tl.create_instant(env.db, name, None, "deltacommit", b"", 60)
    tl.transition_to_inflight(env.db, name, inst.ts, "deltacommit", b"")
    tl.complete_instant(env.db, name, inst.ts, "deltacommit", _stats(inst.ts, [(p, n(inst.ts)) for p, n in files]))
    return inst.ts


def _plans(env, name: str) -> list[list[tuple[str, int]]]:
    """Per compaction of `name`: its plan's (file id, log files)."""
    tl = env.timeline
    return [sorted((o.file_id, len(o.log_files)) for o in parse_compaction_plan(
        tl.instant_metadata(env.db, name, i.ts, "compaction", "REQUESTED")))
        for i in tl.list_instants(env.db, name, actions=["compaction"])]


def test_time_triggers_and_the_log_size_threshold(backend_url, tmp_path):
    """`hoodie.compact.inline.trigger.strategy` TIME_ELAPSED / NUM_AND_TIME / NUM_OR_TIME with
    `hoodie.compact.inline.max.delta.seconds`, and `hoodie.compaction.logfile.size.threshold`: the
    plan takes the slices whose log files hold that many bytes (each file here is 100 bytes)."""
    now = [1_767_225_600_000]
    env = Env(backend_url, tmp_path, clock=lambda: now[0])
    base = [("p=1", lambda ts: f"f1-0_0-1-0_{ts}.parquet"), ("p=1", lambda ts: f"f2-0_0-1-0_{ts}.parquet")]
    try:
        _mor(env, tmp_path, "time", {COMPACT_TRIGGER_STRATEGY: "TIME_ELAPSED", COMPACT_MAX_DELTA_SECONDS: "600",
                                     COMPACT_MAX_DELTA_COMMITS: "1"})
        _mor(env, tmp_path, "both", {COMPACT_TRIGGER_STRATEGY: "num_and_time", COMPACT_MAX_DELTA_SECONDS: "600",
                                     COMPACT_MAX_DELTA_COMMITS: "2"})
        _mor(env, tmp_path, "either", {COMPACT_TRIGGER_STRATEGY: "NUM_OR_TIME", COMPACT_MAX_DELTA_SECONDS: "600",
                                       COMPACT_MAX_DELTA_COMMITS: "2", COMPACT_LOGFILE_SIZE_THRESHOLD: "150"})
        first = {name: _write_to(env, name, base) for name in ("time", "both", "either")}
        now[0] += 1000
        for name in ("time", "both"):  # enough deltacommits, not enough time
            _write_to(env, name, [("p=1", lambda ts, f=first[name]: f".f1-0_{f}.log.1_0-1-0")])
            assert _plans(env, name) == [], name
        # either: the count is met; only f2's logs (200 bytes) reach the threshold
        _write_to(env, "either", [("p=1", lambda ts: f".f1-0_{first['either']}.log.1_0-1-0"),
                                  ("p=1", lambda ts: f".f2-0_{first['either']}.log.1_0-1-0"),
                                  ("p=1", lambda ts: f".f2-0_{first['either']}.log.2_0-1-0")])
        assert _plans(env, "either") == [[("f2-0", 2)]]
        now[0] += 600_000  # ten minutes after each table's first deltacommit
        for name in ("time", "both"):
            _write_to(env, name, [("p=1", lambda ts, f=first[name]: f".f2-0_{f}.log.1_0-1-0")])
            assert _plans(env, name) == [[("f1-0", 1), ("f2-0", 1)]], name
    finally:
        env.dispose()


def test_bad_compaction_trigger_settings_fail_the_write():
    from pipeline.config import WriteConfig

    for key, bad in ((COMPACT_TRIGGER_STRATEGY, "WHEN_IT_RAINS"), (COMPACT_MAX_DELTA_SECONDS, "soon"),
                     (COMPACT_LOGFILE_SIZE_THRESHOLD, "-1")):
        with pytest.raises(ValueError, match=key.replace(".", r"\.")):
            WriteConfig.from_options("upsert", {key: bad})
    cfg = WriteConfig.from_options("upsert", {COMPACT_TRIGGER_STRATEGY: "NUM_OR_TIME", COMPACT_MAX_DELTA_SECONDS: "60"})
    assert cfg.table_properties[COMPACT_TRIGGER_STRATEGY] == "NUM_OR_TIME"
