"""Each file group's latest files kept between a server's write commits (store/hudi/column_stats/
latest_files.py): what a plain write changes, the bound, and on PostgreSQL (the only backend that
keeps them) that a commit reads no group it kept, that another server's commit or a failed commit
leaves nothing stale behind (the test suite's HMS_WIRE_CHECK compares every kept group with the
table), and that the statistics stay those of the table."""

from __future__ import annotations

import pytest
from sqlalchemy import event

from store.errors import InvalidObject
from store.hudi.column_stats import LatestFiles, plain_change
from store.hudi.timeline import commits_running
from tests.harness import ci_mode
from tests.unit.store.hudi.test_timeline import Env, commit_json


def test_plain_change_is_one_newer_base_file_per_group():
    written = {("p=1", "a-0_0-1-1_002.parquet"): ("a-0", "002", False, None, 7),
               ("p=1", "b-0_0-1-1_002.parquet"): ("b-0", "002", False, None, 9)}
    ids = {("p=1", "a-0_0-1-1_002.parquet"): 11, ("p=1", "b-0_0-1-1_002.parquet"): 12}
    before = {("p=1", "a-0"): ((3, "p=1", "a-0", "001", False, 5),)}
    assert plain_change("002", before, written, ids, set()) == {
        ("p=1", "a-0"): ((11, "p=1", "a-0", "002", False, 7),),
        ("p=1", "b-0"): ((12, "p=1", "b-0", "002", False, 9),)}
    # a group whose slice is as new, a replaced group, a log file, a file without an id: not plain
    assert plain_change("002", {("p=1", "a-0"): ((3, "p=1", "a-0", "002", False, 5),)}, written, ids, set()) is None
    assert plain_change("002", before, written, ids, {("p=1", "b-0")}) is None
    log = {("p=1", ".a-0_001.log.1_0-1-1"): ("a-0", "001", True, 1, 3)}
    assert plain_change("002", before, log, {("p=1", ".a-0_001.log.1_0-1-1"): 13}, set()) is None
    assert plain_change("002", before, written, {}, set()) is None


def test_kept_rows_follow_the_version_and_the_bound():
    kept = LatestFiles(limit=3)
    a, b, c = ("p", "a"), ("p", "b"), ("p", "c")
    kept.advance(1, 0, 1, {a: ((1, "p", "a", "001", False, 1),)})
    assert kept.rows(1, 1, [a, b]) == ({a: ((1, "p", "a", "001", False, 1),)}, [b])
    assert kept.rows(1, 2, [a]) == ({}, [a])  # the table moved on without this server
    kept.advance(1, 1, 2, {b: ((2, "p", "b", "002", False, 1),)})
    assert set(kept.rows(1, 2, [a, b])[0]) == {a, b}
    kept.advance(1, 5, 6, {c: ((3, "p", "c", "006", False, 1),)})  # from another version: only its groups
    assert kept.rows(1, 6, [a, c]) == ({c: ((3, "p", "c", "006", False, 1),)}, [a])
    kept.advance(2, 0, 1, {a: (), b: (), c: ()})  # over the bound with table 1: the older table leaves
    assert kept.rows(1, 6, [c]) == ({}, [c]) and set(kept.rows(2, 1, [a, b, c])[0]) == {a, b, c}
    kept.advance(3, 0, 1, {a: (), b: (), c: (), ("p", "d"): ()})  # alone over the bound: not kept
    assert kept.rows(3, 1, [a]) == ({}, [a])
    kept.forget(2)
    assert kept.rows(2, 1, [a]) == ({}, [a])


@pytest.fixture
def pg_url(backend_specs, tmp_path):
    from tests.conftest import _fresh_url

    spec = backend_specs["postgresql"]
    if not spec.available:
        (pytest.fail if ci_mode() else pytest.skip)(f"postgresql backend unavailable: {spec.reason}")
    yield from _fresh_url(spec, tmp_path / "pg")


def _stats(env: Env) -> list[tuple]:
    from sqlalchemy import select

    from store.db import schema as S

    ss = S.snapshot_stats
    with env.store.read() as conn:
        return [tuple(r) for r in conn.execute(
            select(ss.c.partition_path, ss.c.num_slices, ss.c.num_files, ss.c.base_files, ss.c.total_size)
            .order_by(ss.c.partition_path))]


def _count_probes(env: Env, probed: list[int]) -> None:
    """Each latest-version probe on env's store: the number of groups it asks for."""
    def before(_conn, _cursor, statement, parameters, _context, _many):
        if "CROSS JOIN LATERAL" in statement and isinstance(parameters, dict):
            fids = parameters.get("fids")
            probed.append(len(fids) if isinstance(fids, list) else fids.count(chr(31)))

    event.listen(env.store.engine, "before_cursor_execute", before)


def test_commits_read_no_kept_group_and_never_a_stale_one(pg_url, tmp_path, monkeypatch):
    monkeypatch.setenv("HMS_WIRE_CHECK", "1")
    probed: list[int] = []
    one = Env(pg_url, tmp_path / "one")
    _count_probes(one, probed)
    other = None
    try:
        other = Env.__new__(Env)  # a second server over the same database and table
        from store.db.database import Store
        from store.services import build_services
        other.store = Store(pg_url, str(tmp_path / "one" / "wh"))
        other.services = build_services(other.store)
        _count_probes(other, probed)
        other.timeline, other.db = other.services.timeline, one.db
        groups = [(f"p={i % 3}", f"g{i}-0") for i in range(12)]

        one.write(files=groups)
        assert probed == [12]  # nothing kept yet: every group probed (none has files)
        probed.clear()
        one.write(files=groups)
        one.write(files=groups[:5])
        # kept: no group probed by the commits themselves (HMS_WIRE_CHECK probes the kept ones again)
        assert probed == [12, 5]

        probed.clear()
        other.write(files=groups[3:8])  # another server's commit: its own probe
        assert probed == [5]
        probed.clear()
        one.write(files=groups[:4])  # this server's rows are of an older version: probed, none kept
        assert probed == [4]

        # a commit that fails after its files went in leaves nothing kept of it
        probed.clear()
        ts = one.timeline.create_instant(one.db, "t", None, "commit", b"", 60).ts
        one.timeline.transition_to_inflight(one.db, "t", ts, "commit", b"")
        from store.hudi.column_stats import FileColumnStats
        with pytest.raises(InvalidObject):
            one.timeline.complete_instant(one.db, "t", ts, "commit", commit_json(ts, groups[:4]),
                                          column_stats=[FileColumnStats("p=0", "nope_0-1-1_1.parquet", 1, 1, [])])
        one.write(files=groups[:4])
        assert probed == [4, 4]  # the check's, at each: had the failed one left its rows kept, it fails
        assert [r[1:] for r in _stats(one)] == [(4, 4, 4, 400)] * 3  # 12 groups, one 100-byte file each
    finally:
        one.dispose()
        if other is not None:
            other.store.dispose()


def test_the_collector_is_paused_while_commits_run_and_left_as_it_was(backend_url, tmp_path):
    import gc

    env = Env(backend_url, tmp_path)
    seen: list[tuple[bool, int]] = []

    def before(_conn, _cursor, statement, _parameters, _context, _many):
        if statement.lstrip().upper().startswith("UPDATE INSTANT ") and "completion_ts" in statement:
            # the completion's update of its instant's row
            seen.append((gc.isenabled(), commits_running()))

    event.listen(env.store.engine, "before_cursor_execute", before)
    try:
        assert gc.isenabled()
        env.write(files=[("p=1", "a-0")])
        assert seen and set(seen) == {(False, 1)} and gc.isenabled() and commits_running() == 0
        seen.clear()
        gc.disable()  # off before: stays off
        env.write(files=[("p=1", "a-0")])
        assert seen and set(seen) == {(False, 1)} and not gc.isenabled()
    finally:
        gc.enable()
        env.dispose()
