"""Plans of compactions and clusterings waiting for an executor (store/hudi/timeline/service_plans.py):
a waiting plan never expires (no time-based wait: not failed, not rolled back as a failed write, and
claimed by the next executor whatever its age; of two executors claiming it at once exactly one gets
it); a plan that can no longer run (a write since it was planned touched its file groups, or they
were replaced) is rolled back once by the server, in the commit that made it stale or at the claim
of an executor, and a new one is scheduled when due. Fake clock; every backend."""

from __future__ import annotations

import threading

import pytest

from hudi_format.commit_metadata import parse_compaction_plan, parse_rollback
from hudi_format.config_keys import (
    CLIENT_HEARTBEAT_INTERVAL_MS,
    CLIENT_HEARTBEAT_TOLERABLE_MISSES,
    COMPACT_MAX_DELTA_COMMITS,
)
from store.errors import InvalidOperation, NoSuchObject
from tests.unit.store.hudi.test_compaction_schedule import _mor, _write_to
from tests.unit.store.hudi.test_timeline import Env

DAY_MS = 24 * 3600 * 1000
PROPS = {COMPACT_MAX_DELTA_COMMITS: "2", CLIENT_HEARTBEAT_INTERVAL_MS: "1000",
         CLIENT_HEARTBEAT_TOLERABLE_MISSES: "0"}


def _compactions(env, name="m") -> list[tuple[str, str]]:
    return [(i.ts, i.state) for i in env.timeline.list_instants(env.db, name, actions=["compaction"])]


def _plan(env, ts: str, name="m") -> list[tuple[str, str, int]]:
    return sorted((o.file_id, o.base_instant, len(o.log_files)) for o in parse_compaction_plan(
        env.timeline.instant_metadata(env.db, name, ts, "compaction", "REQUESTED")))


def _rollbacks_of(env, ts: str, name="m") -> list[str]:
    tl = env.timeline
    return [i.ts for i in tl.list_instants(env.db, name, actions=["rollback"])
            if ts in parse_rollback(tl.instant_metadata(env.db, name, i.ts, "rollback", "COMPLETED"))[0]]


def _race(env, ts: str, name="m") -> list[object]:
    """Two executors claim `ts` at once: what each got (an Instant or the exception)."""
    start = threading.Barrier(2)
    got: list[object] = [None, None]

    def claim(k: int) -> None:
        start.wait()
        try:
            got[k] = env.timeline.transition_to_inflight(env.db, name, ts, "compaction", b"")
        except Exception as exc:
            got[k] = exc

    threads = [threading.Thread(target=claim, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return got


def _base_and_log(env, name="m") -> str:
    """Two file groups f1, f2; a log on f1 (max.delta.commits 2: a compaction of f1 is requested)."""
    first = _write_to(env, name, [("p=1", lambda ts: f"f1-0_0-1-0_{ts}.parquet"),
                                  ("p=2", lambda ts: f"f2-0_0-1-0_{ts}.parquet")])
    _write_to(env, name, [("p=1", lambda ts: f".f1-0_{first}.log.1_0-1-0")])
    return first


def test_a_plan_waiting_for_weeks_is_no_failed_write_and_one_of_two_executors_claims_it(backend_url, tmp_path):
    now = [1_767_225_600_000]
    env = Env(backend_url, tmp_path, clock=lambda: now[0])
    try:
        _mor(env, tmp_path, "m", PROPS)
        first = _base_and_log(env)
        [(ts, state)] = _compactions(env)
        assert state == "REQUESTED"
        now[0] += 30 * DAY_MS  # nobody claimed it for a month (its scheduling writer died, no write came)
        assert env.timeline.failed_instants(env.db, "m") == []  # so no writer rolls it back
        with pytest.raises(InvalidOperation, match="a plan waiting for an executor, not a failed write"):
            env.timeline.rollback(env.db, "m", ts)
        got = _race(env, ts)
        won = [g for g in got if not isinstance(g, Exception)]
        lost = [g for g in got if isinstance(g, Exception)]
        assert len(won) == 1 and len(lost) == 1, got
        assert won[0].state == "INFLIGHT" and won[0].heartbeat_timeout_s == 1  # the claim lives by heartbeats
        assert isinstance(lost[0], InvalidOperation) and "from INFLIGHT to INFLIGHT" in str(lost[0])
        assert _compactions(env) == [(ts, "INFLIGHT")] and _rollbacks_of(env, ts) == []
        assert _plan(env, ts) == [("f1-0", first, 1)]
    finally:
        env.dispose()


def test_a_plan_a_commit_makes_stale_is_rolled_back_in_that_commit_and_scheduled_anew(backend_url, tmp_path):
    env = Env(backend_url, tmp_path)
    tl = env.timeline
    try:
        _mor(env, tmp_path, "m", PROPS)
        first = _base_and_log(env)
        [(stale, _)] = _compactions(env)
        _write_to(env, "m", [("p=2", lambda ts: f".f2-0_{first}.log.1_0-1-0")])  # a group it does not plan
        assert _compactions(env) == [(stale, "REQUESTED")]
        append = _write_to(env, "m", [("p=1", lambda ts: f".f1-0_{first}.log.2_0-1-0")])  # one it plans
        [rollback] = _rollbacks_of(env, stale)
        assert rollback > append
        [(again, state)] = _compactions(env)  # the stale one left the timeline; a new one, due
        assert state == "REQUESTED" and again > rollback
        assert _plan(env, again) == [("f1-0", first, 2), ("f2-0", first, 1)]
        # a partition drop replaces a group the plan names: rolled back, and a new plan of the rest
        drop = tl.create_instant(env.db, "m", None, "replacecommit", b"", 60).ts
        tl.transition_to_inflight(env.db, "m", drop, "replacecommit", b"")
        tl.complete_instant(env.db, "m", drop, "replacecommit", b'{"partitionToWriteStats": {}, '
                            b'"partitionToReplaceFileIds": {"p=2": ["f2-0"]}, "operationType": "DELETE_PARTITION"}')
        assert len(_rollbacks_of(env, again)) == 1
        [(third, state)] = _compactions(env)
        assert state == "REQUESTED" and _plan(env, third) == [("f1-0", first, 2)]
        assert tl.transition_to_inflight(env.db, "m", third, "compaction", b"").state == "INFLIGHT"
    finally:
        env.dispose()


def test_a_stale_plan_an_executor_claims_is_rolled_back_once(backend_url, tmp_path):
    """Stale while it was claimed (a write appended to its file group while an attempt ran), then
    back to REQUESTED (its claim expired): two executors claiming it at once are both refused, and
    the server rolls it back exactly once and schedules a new plan."""
    now = [1_767_225_600_000]
    env = Env(backend_url, tmp_path, clock=lambda: now[0])
    tl = env.timeline
    try:
        _mor(env, tmp_path, "m", PROPS)
        first = _base_and_log(env)
        [(ts, _)] = _compactions(env)
        tl.transition_to_inflight(env.db, "m", ts, "compaction", b"")  # an attempt, which then dies
        _write_to(env, "m", [("p=1", lambda t: f".f1-0_{first}.log.2_0-1-0")])
        assert _compactions(env) == [(ts, "INFLIGHT")]  # (a claimed plan is its executor's to finish)
        now[0] += 5_000  # its claim (1 s) expired
        tl.rollback(env.db, "m", ts)  # as the next executor's recover does: back to REQUESTED
        assert _compactions(env) == [(ts, "REQUESTED")] and len(_rollbacks_of(env, ts)) == 1
        got = _race(env, ts)
        assert all(isinstance(g, (InvalidOperation, NoSuchObject)) for g in got), got
        assert any("can no longer run as planned" in str(g) for g in got), got
        assert len(_rollbacks_of(env, ts)) == 2  # the attempt's, and the plan's: once
        [(again, state)] = _compactions(env)
        assert state == "REQUESTED" and _plan(env, again) == [("f1-0", first, 2)]
        with pytest.raises(NoSuchObject):
            tl.transition_to_inflight(env.db, "m", ts, "compaction", b"")
    finally:
        env.dispose()
