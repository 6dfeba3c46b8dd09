"""Snapshot semantics equal Hudi's: the commit metadata of real Hudi tables (written by Apache Hudi's
Spark writer), fed through our timeline service, gives the file slices hudi-rs reads from storage,
after every instant and as of every instant (time travel)."""

from __future__ import annotations

import glob
import os
import zipfile

import pytest

from hudi_format.commit_metadata import WRITE_ACTIONS, parse_commit, parse_rollback
from hudi_format.instant import ACTIONS
from hudi_format.table_config import HudiTableConfig, read_properties
from store.db.database import Store
from store.db.migrations import upgrade
from store.services import build_services
from thrift_idl.hive_metastore.ttypes import Database

hudi = pytest.importorskip("hudi")

FIXTURE_DIR = os.path.join(os.path.dirname(__file__), "fixtures", "hudi-tables")
V6 = sorted(glob.glob(os.path.join(FIXTURE_DIR, "*_v6_*.zip")))


def unzip_table(zip_path: str, dest) -> str:
    with zipfile.ZipFile(zip_path) as z:
        z.extractall(dest)
    for root, dirs, _ in os.walk(dest):
        if "__MACOSX" in root:
            continue
        if ".hoodie" in dirs:
            return root
    raise AssertionError(f"no .hoodie in {zip_path}")


def completed_instants(base: str) -> list[tuple[str, str]]:
    out = []
    for name in os.listdir(os.path.join(base, ".hoodie")):
        ts, _, action = name.partition(".")
        if ts.isdigit() and action in ACTIONS:
            out.append((ts, action))
    return sorted(out)


def _read(path: str) -> bytes:
    return open(path, "rb").read() if os.path.exists(path) else b""


def services(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'm.db'}", str(tmp_path / "wh"))
    upgrade(store.engine)
    s = build_services(store)
    return s.tables, s.timeline, s.snapshot


def ours_norm(slices) -> dict:
    return {(s.partition_path, s.file_id): (s.base_instant, s.base_file.name if s.base_file else None,
                                            tuple(f.name for f in s.log_files)) for s in slices}


def theirs_norm(table, as_of: str | None, known: set[str] | None = None) -> dict:
    """hudi-rs's slices; with `known`, only files committed so far (storage already holds later ones)."""
    opts = hudi.HudiReadOptions().with_as_of_timestamp(as_of) if as_of else None
    out = {}
    for s in table.get_file_slices(options=opts):
        logs = tuple(n for n in s.log_file_names if known is None or n in known)
        out[(s.partition_path, s.file_id)] = (s.creation_instant_time, s.base_file_name or None, logs)
    return out


def replay(tmp_path, zip_path):
    base = unzip_table(zip_path, tmp_path / "table")
    props = read_properties(open(os.path.join(base, ".hoodie", "hoodie.properties")).read())
    tables, timeline, snapshot = services(tmp_path)
    tables.create_database(Database(name="fx"))
    name = props["hoodie.table.name"].lower()
    timeline.register_table(HudiTableConfig.from_properties("fx", name, props, base))
    return base, name, timeline, snapshot


@pytest.mark.parametrize("zip_path", V6, ids=lambda p: os.path.basename(p)[:-4])
def test_file_slices_equal_hudi_rs(tmp_path, zip_path):
    base, name, timeline, snapshot = replay(tmp_path, zip_path)
    table = hudi.HudiTable(base)
    hoodie = os.path.join(base, ".hoodie")
    done, known = [], set()
    for ts, action in completed_instants(base):
        requested = _read(os.path.join(hoodie, f"{ts}.{action}.requested"))
        inflight = _read(os.path.join(hoodie, f"{ts}.{action}.inflight")) or \
            _read(os.path.join(hoodie, f"{ts}.inflight"))
        timeline.create_instant("fx", name, ts, action, requested, 60)
        timeline.transition_to_inflight("fx", name, ts, action, inflight)
        metadata = _read(os.path.join(hoodie, f"{ts}.{action}"))
        timeline.complete_instant("fx", name, ts, action, metadata)
        done.append(ts)
        written = parse_commit(metadata) if action in WRITE_ACTIONS else \
            parse_rollback(metadata)[2] if action == "rollback" else None
        known |= {os.path.basename(w.path) for w in written.write_stats} if written else set()
        assert ours_norm(snapshot.latest_file_slices("fx", name)) == theirs_norm(table, ts, known), ts
    assert ours_norm(snapshot.latest_file_slices("fx", name)) == theirs_norm(table, None)
    for ts in done:  # time travel to every instant after the whole timeline is in
        if timeline.list_instants("fx", name, min_ts=ts, max_ts=ts):
            assert ours_norm(snapshot.latest_file_slices("fx", name, None, ts)) == theirs_norm(table, ts), ts


def test_partitions_follow_commits(tmp_path):
    zip_path = next(p for p in V6 if "cow_v6_complexkeygen_hivestyle" in p)
    base, name, timeline, snapshot = replay(tmp_path, zip_path)
    hoodie = os.path.join(base, ".hoodie")
    for ts, action in completed_instants(base):
        timeline.create_instant("fx", name, ts, action, b"", 60)
        timeline.transition_to_inflight("fx", name, ts, action, b"")
        timeline.complete_instant("fx", name, ts, action, _read(os.path.join(hoodie, f"{ts}.{action}")))
    table = hudi.HudiTable(base)
    theirs = sorted({s.partition_path for s in table.get_file_slices()})
    assert snapshot.partitions("fx", name) == theirs
    assert all(snapshot.latest_file_slices("fx", name, [p]) for p in theirs)
