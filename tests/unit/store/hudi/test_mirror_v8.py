"""The storage mirror writes tables of versions 8 and 9 in Hudi 1.x's layout (timeline layout 2,
hudi_format/timeline_layout.py): a fixture Hudi wrote, replayed through the server onto a fresh
base path (data files only), reads in hudi-rs like the original; a commit the server got as JSON
lands on storage as Hudi 1.x's Avro."""

from __future__ import annotations

import json
import os
import time

import pytest

from hudi_format.avro_metadata import COMMIT_METADATA_SCHEMA
from hudi_format.commit_metadata import AVRO_MAGIC
from hudi_format.config_keys import METADATA_ENABLE, TABLE_VERSION
from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED
from hudi_format.storage import TableStorage
from hudi_format.storage_timeline import StorageTimeline
from hudi_format.table_config import HudiTableConfig, read_properties
from hudi_format.timeline_layout import timeline_layout
from tests.test_hudi_fixtures import FIXTURE_DIR, services, unzip_table
from tests.test_storage_mirror import attach, commit_json, copy_data_files, rows_of
from thrift_idl.hive_metastore.ttypes import Database

hudi = pytest.importorskip("hudi")
fastavro = pytest.importorskip("fastavro")

# hudi-rs reads these (the v9 savepoint stages need the savepoint service; tests/test_pipeline_* cover those)
V8 = ["cow_v8_complexkeygen_hivestyle", "cow_v8_nonpartitioned", "cow_v8_simplekeygen_nonhivestyle",
      "mor_v8_delete_blocks"]


def replay_v8(tmp_path, fixture: str, version: int | None = None, enable_mdt: bool = False,
              compact_after: int | None = None):
    """The fixture's instants through the server (requested, inflight, completed with Hudi's own
    metadata), mirrored after each onto a copy holding only its data files."""
    orig = unzip_table(os.path.join(FIXTURE_DIR, f"{fixture}.zip"), tmp_path / "orig")
    new = str(tmp_path / "new" / os.path.basename(orig))
    copy_data_files(orig, new)
    props = read_properties(open(os.path.join(orig, ".hoodie", "hoodie.properties")).read())
    if version is not None:
        props[TABLE_VERSION] = str(version)
    if enable_mdt:
        props[METADATA_ENABLE] = "true"
    tables, timeline, snapshot = services(tmp_path)
    tables.create_database(Database(name="fx"))
    name = props["hoodie.table.name"].lower()
    timeline.register_table(HudiTableConfig.from_properties("fx", name, props, new))
    mirror = attach(timeline)
    if compact_after is not None:
        mirror.metadata_table.compact_after = compact_after
    tl = StorageTimeline.read(orig)
    for inst in tl.instants:
        timeline.create_instant("fx", name, inst.ts, inst.action, tl.metadata(inst, REQUESTED) or b"", 60)
        timeline.transition_to_inflight("fx", name, inst.ts, inst.action, tl.metadata(inst, INFLIGHT) or b"")
        timeline.complete_instant("fx", name, inst.ts, inst.action, tl.metadata(inst, COMPLETED) or b"")
        assert mirror.lag("fx", name) == 0
    return orig, new, name, timeline, snapshot


def theirs(base: str) -> tuple[dict, list]:
    t = hudi.HudiTable(base)
    slices = {(s.partition_path, s.file_id): (s.base_file_name, tuple(s.log_file_names)) for s in t.get_file_slices()}
    return slices, rows_of(t)


@pytest.mark.parametrize("fixture", V8)
def test_v8_fixture_replayed_and_mirrored_reads_like_the_original(tmp_path, fixture):
    orig, new, name, timeline, snapshot = replay_v8(tmp_path, fixture)
    assert theirs(new) == theirs(orig)
    layout = timeline_layout(8)
    ours = StorageTimeline.read(new)
    assert ours.timeline_dir == layout.timeline_dir and ours.table_version == StorageTimeline.read(orig).table_version
    server = {i.ts: i for i in timeline.list_instants("fx", name)}
    assert [(i.ts, i.action, i.state) for i in ours.instants] == \
        [(i.ts, i.action, i.state) for i in StorageTimeline.read(orig).instants]
    for inst in ours.instants:  # completed files named with the server's completion times
        assert inst.completion_ts == server[inst.ts].completion_ts
    assert not os.listdir(os.path.join(new, layout.timeline_dir))[0].endswith(".tmp")
    for d in layout.dirs:
        assert os.path.isdir(os.path.join(new, ".hoodie", d)), d


def test_v9_table_commit_sent_as_json_is_written_as_avro(tmp_path):
    """A commit the server got as JSON (our pipeline's, version-6 style) is Hudi 1.x's Avro
    HoodieCommitMetadata on a version-9 table's storage, and hudi-rs reads the new rows."""
    orig, new, name, timeline, snapshot = replay_v8(tmp_path, "cow_v8_simplekeygen_nonhivestyle", version=9)
    inst = timeline.create_instant("fx", name, None, "commit", b"", 60)
    partition = sorted(d for d in os.listdir(new) if not d.startswith("."))[0]
    folder = os.path.join(new, partition)
    source = next(n for n in sorted(os.listdir(folder)) if n.endswith(".parquet"))
    fid, rel, size = _copy_base_file(new, partition, source, inst.ts)
    timeline.transition_to_inflight("fx", name, inst.ts, "commit", b"")
    doc = json.loads(commit_json(partition, fid, rel, size, 1))
    doc["extraMetadata"]["schema"] = _writer_schema(orig)
    timeline.complete_instant("fx", name, inst.ts, "commit", json.dumps(doc).encode())
    done = timeline.list_instants("fx", name, min_ts=inst.ts, max_ts=inst.ts)[0]
    path = os.path.join(new, ".hoodie", "timeline", f"{inst.ts}_{done.completion_ts}.commit")
    data = open(path, "rb").read()
    assert data[:4] == AVRO_MAGIC
    reader = fastavro.reader(open(path, "rb"))
    assert reader.writer_schema["name"].endswith(COMMIT_METADATA_SCHEMA["name"])
    rec = next(reader)
    assert rec["partitionToWriteStats"][partition][0]["path"] == rel and rec["operationType"] == "INSERT"
    assert read_properties(open(os.path.join(new, ".hoodie", "hoodie.properties")).read())[TABLE_VERSION] == "9"
    slices, rows = theirs(new)
    assert (partition, fid) in slices
    assert len(rows) == len(theirs(orig)[1]) + len([r for r in rows if r["_hoodie_file_name"] == os.path.basename(rel)])


def _writer_schema(base: str) -> str:
    from hudi_format.commit_metadata import _load

    tl = StorageTimeline.read(base)
    return _load(tl.metadata(tl.completed[-1], COMPLETED), "commit")["extraMetadata"]["schema"]


def _copy_base_file(base: str, partition: str, source: str, ts: str) -> tuple[str, str, int]:
    """A new file group: a copy of `source`'s rows rewritten with the new file's meta columns."""
    import uuid

    import pyarrow.parquet as pq

    t = pq.read_table(os.path.join(base, partition, source))
    fid = f"{uuid.uuid4()}-0"
    name = f"{fid}_0-1-0_{ts}.parquet"
    import pyarrow as pa

    n = t.num_rows
    t = t.set_column(t.schema.get_field_index("_hoodie_commit_time"), "_hoodie_commit_time", pa.array([ts] * n))
    t = t.set_column(t.schema.get_field_index("_hoodie_file_name"), "_hoodie_file_name", pa.array([name] * n))
    keys = [f"new-{k}" for k in t.column("_hoodie_record_key").to_pylist()]
    t = t.set_column(t.schema.get_field_index("_hoodie_record_key"), "_hoodie_record_key", pa.array(keys))
    pq.write_table(t, os.path.join(base, partition, name))
    return fid, f"{partition}/{name}", os.path.getsize(os.path.join(base, partition, name))




# --- the metadata table (its `files` partition) in Hudi 1.x's layout ----------------------------


def mdt_listing_v2(base: str) -> dict[str, dict[str, int]]:
    """The files partition as a reader of a version-8+ metadata table merges it (Hudi 1.x's
    HoodieFileGroup): the newest base file whose deltacommit completed, then, in instant order, the
    log files whose deltacommit completed at or after that base's instant (a log block only when
    its instant completed on the data table too; the mirror keeps every instant of the current
    slice in the active timeline, so no block counts only as a metadata table deltacommit)."""
    from hudi_format import metadata_table as M

    files = os.path.join(base, ".hoodie", "metadata", "files")
    timeline = os.path.join(base, ".hoodie", "metadata", ".hoodie", "timeline")
    completion = {n.split(".")[0].split("_")[0]: n.split(".")[0].split("_")[-1] for n in os.listdir(timeline)
                  if n.endswith((".deltacommit", ".commit"))}
    data_done = {i.ts for i in StorageTimeline.read(base).completed}
    parsed = {n: p for n in os.listdir(files) if (p := M.parse_files_partition_name(n))}
    latest = max(p[1] for p in parsed.values() if p[0] == "base" and p[1] in completion)
    batches = [M.read_base_file(open(os.path.join(files, M.base_file_name(latest)), "rb").read())]
    for n in sorted((n for n, p in parsed.items() if p[0] == "log" and completion.get(p[1], "") >= latest),
                    key=lambda n: parsed[n][1]):
        for instant, records in M.read_log_file(open(os.path.join(files, n), "rb").read()):
            if instant in completion and instant in data_done:
                batches.append(records)
    return M.merge_files_records(batches)


def storage_listing(base: str) -> dict[str, dict[str, int]]:
    """What storage holds (one listing of the data files, hudi_format/listing.py): the listing
    HoodieMetadataTableValidator compares the metadata table's `files` partition with."""
    from hudi_format.listing import list_table

    out: dict[str, dict[str, int]] = {}
    for f in list_table(StorageTimeline.read(base)).files:
        out.setdefault(f.partition_path, {})[f.name] = f.size
    return out


MDT_CASES = [("cow_v8_complexkeygen_hivestyle", None), ("mor_v8_delete_blocks", None),
             ("mor_v8_delete_blocks", 1), ("cow_v8_nonpartitioned", None)]


@pytest.mark.parametrize(("fixture", "compact_after"), MDT_CASES,
                         ids=[f + ("-compacted" if c else "") for f, c in MDT_CASES])
def test_v8_metadata_table_lists_the_servers_files_and_hudi_rs_uses_it(tmp_path, fixture, compact_after):
    """The mirrored metadata table (version 8/9 layout: its timeline in `.hoodie/metadata/.hoodie/
    timeline` with completion times, Avro deltacommits, one log file per deltacommit) lists the
    server's latest file slices after the whole timeline (`compacted`: every second instant writes
    a new base file); hudi-rs reads the table from it: like the original, and a stray data file the
    metadata table does not name is not read."""
    from hudi_format.config_keys import METADATA_PARTITIONS

    orig, new, name, timeline, snapshot = replay_v8(tmp_path, fixture, enable_mdt=True, compact_after=compact_after)
    props = read_properties(open(os.path.join(new, ".hoodie", "hoodie.properties")).read())
    # column_stats too (empty here: the replay sends no statistics), and partition_stats for a
    # partitioned table (no records: no column has statistics in every partition)
    stats = ",partition_stats" if "nonpartitioned" not in fixture else ""
    assert props[METADATA_PARTITIONS] == "column_stats,files" + stats and props[METADATA_ENABLE] == "true"
    version = props[TABLE_VERSION]
    mdt_props = read_properties(open(os.path.join(new, ".hoodie", "metadata", ".hoodie", "hoodie.properties")).read())
    assert mdt_props[TABLE_VERSION] == version and mdt_props["hoodie.timeline.layout.version"] == "2"
    timeline_dir = os.path.join(new, ".hoodie", "metadata", ".hoodie", "timeline")
    done = sorted(n for n in os.listdir(timeline_dir) if n.endswith(".deltacommit"))
    assert done[0].startswith("00000000000000000_")
    assert open(os.path.join(timeline_dir, done[-1]), "rb").read()[:4] == AVRO_MAGIC
    from tests.unit.store.hudi.test_metadata_table import server_listing

    want = server_listing(timeline.store, "fx", name)
    assert {p: fs for p, fs in mdt_listing_v2(new).items() if fs} == want
    # the validator's file-listing check (a stand-in for Hudi's HoodieMetadataTableValidator): the
    # metadata table names exactly the data files storage holds, with their sizes
    assert {p: fs for p, fs in mdt_listing_v2(new).items() if fs} == storage_listing(new)
    if compact_after:
        bases = [n for n in os.listdir(os.path.join(new, ".hoodie", "metadata", "files")) if n.endswith(".hfile")]
        assert len(bases) == 2  # the current slice and the one before it
    assert theirs(new) == theirs(orig)
    partition = next(iter(want))
    folder = os.path.join(new, partition)
    source = next(n for n in sorted(os.listdir(folder)) if n.endswith(".parquet"))
    stray = "22222222-3768-4e87-b12c-8d33efd22b55-0_0-1-1_" + source.rsplit("_", 1)[1]
    import shutil

    shutil.copy(os.path.join(folder, source), os.path.join(folder, stray))
    assert stray not in {s[0] for s in theirs(new)[0].values()}


@pytest.mark.parametrize("version", [9, 6])
def test_instants_completed_out_of_order_keep_their_files_across_compactions(tmp_path, version):
    """Instants that complete in another order than they were requested, with a compaction after
    every log file: Hudi 1.x (version 8+) puts a log file into the slice of the newest base file at
    or before its deltacommit's completion, so the log file of an instant that completed after a
    later instant's compaction belongs to that compaction's slice: the mirror counts and merges it
    there. An instant older than the current base file never compacts (its base file would not be
    the newest slice): it writes a log file. The metadata table's listing equals the server's after
    every step (hudi-rs reads version 9's as the server's slices); the old rules lost the first
    instant's files at the next compaction."""
    from functools import partial

    from tests.test_storage_mirror import ROWS, commit_json, write_base_file
    from tests.unit.store.hudi.test_metadata_table import mdt_listing, server_listing

    base, timeline, snapshot, mirror = _archiving_table(tmp_path, version, True)
    mirror.metadata_table.compact_after = 1
    # version 6: the block of an instant that completed out of order sits in the current slice's
    # log file while the data table archives the instant (Hudi's reader takes it: its deltacommit
    # completed on the metadata table, which is never archived)
    listing = mdt_listing_v2 if version >= 8 else partial(mdt_listing, archived=True)

    def start(partition: str):
        inst = timeline.create_instant("db1", "t1", None, "commit", b"", 60)
        fid, rel, size = write_base_file(base, partition, inst.ts, ROWS)
        timeline.transition_to_inflight("db1", "t1", inst.ts, "commit", b"")
        return inst.ts, commit_json(partition, fid, rel, size, len(ROWS))

    def done(started):
        timeline.complete_instant("db1", "t1", started[0], "commit", started[1])
        assert mirror.lag("db1", "t1") == 0
        assert {p: fs for p, fs in listing(base).items() if fs} == server_listing(timeline.store, "db1", "t1")

    t1, t2, t3, t4 = (start(f"2024-01-0{n}") for n in range(1, 5))
    for t in (t2, t3, t4, t1):  # t1 completes after the base files of t3 and t4 were written
        done(t)
    for p in ("2024-01-05", "2024-01-06", "2024-01-07"):  # compactions merge it
        done(start(p))
    if version >= 8:
        assert theirs(base)[0].keys() == {(s.partition_path, s.file_id)
                                          for s in snapshot.latest_file_slices("db1", "t1")}


# --- archival of the mirrored timeline --------------------------------------------------------------


def _archiving_table(tmp_path, version: int, mdt: bool, clean: bool = False):
    """`clean`: the server cleans it too (KEEP_LATEST_COMMITS, 2 retained)."""
    from hudi_format.config_keys import (
        ARCHIVE_MAX_COMMITS,
        ARCHIVE_MIN_COMMITS,
        CLEAN_AUTOMATIC,
        CLEANER_COMMITS_RETAINED,
    )
    from hudi_format.table_config import COW
    from tests.test_storage_mirror import AVRO_SCHEMA

    base = str(tmp_path / "wh" / "t1")
    tables, timeline, snapshot = services(tmp_path)
    tables.create_database(Database(name="db1"))
    props = {ARCHIVE_MIN_COMMITS: "2", ARCHIVE_MAX_COMMITS: "3"}
    if mdt:
        props[METADATA_ENABLE] = "true"
    if clean:
        props.update({CLEAN_AUTOMATIC: "true", CLEANER_COMMITS_RETAINED: "2"})
    timeline.register_table(HudiTableConfig(
        db_name="db1", table_name="t1", table_type=COW, record_key_fields=["id"], partition_fields=["dt"],
        precombine_field="ts", key_generator="org.apache.hudi.keygen.SimpleKeyGenerator", table_version=version,
        base_path=base, avro_schema=json.dumps(AVRO_SCHEMA), properties=props))
    mirror = attach(timeline)
    mirror.metadata_table.compact_after = 2
    return base, timeline, snapshot, mirror


# (version, metadata table, encoded in the encoder process: store/hudi/encoder_process.py)
ARCHIVE_CASES = [(9, True, False), (8, False, False), (6, True, False), (6, False, False), (9, True, True),
                 (6, False, True)]


@pytest.mark.parametrize(("version", "mdt", "apart"), ARCHIVE_CASES,
                         ids=[f"v{v}" + ("-mdt" if m else "") + ("-apart" if a else "") for v, m, a in ARCHIVE_CASES])
def test_old_instants_are_archived_as_hudi_archives_them(tmp_path, monkeypatch, version, mdt, apart):
    """With hoodie.keep.max.commits=3 and min 2, the mirror moves older completed instants out of
    the active timeline into the archived one (versions 8/9: the LSM timeline's Parquet files,
    manifest and _version_; version 6: `.commits_.archive.<n>` log files), keeping the bytes the
    active files had; hudi-rs still reads what the server serves (with the metadata table: its
    base file holds the archived instants' files); a second sync archives nothing twice. The same
    with the archive encoded in the encoder process (`apart`, every size)."""
    from hudi_format import archived_timeline as A
    from hudi_format.layout import HOODIE
    from store.hudi import encoder_process
    from tests.test_storage_mirror import ROWS, commit

    encoded = []
    if apart:
        monkeypatch.setattr(encoder_process, "APART_BYTES", 1)
        real_call = encoder_process.EncoderProcess._call
        monkeypatch.setattr(encoder_process.EncoderProcess, "_call",
                            lambda self, fn, args: encoded.append(fn.__name__) or real_call(self, fn, args))

    base, timeline, snapshot, mirror = _archiving_table(tmp_path, version, mdt)
    before: dict[str, bytes] = {}
    stamps = []
    lay = timeline_layout(version)
    for n in range(9):
        stamps.append(commit(timeline, base, f"2024-01-0{n % 3 + 1}", [{**r, "id": r["id"] + 10 * n} for r in ROWS]))
        folder = os.path.join(base, lay.timeline_dir)
        before.update({n: open(os.path.join(folder, n), "rb").read() for n in os.listdir(folder)
                       if lay.instant_of(n)})
    active = StorageTimeline.read(base)
    kept = [i.ts for i in active.instants]
    assert 2 <= len(kept) <= 3 and kept == stamps[-len(kept):]
    archived_ts = stamps[:-len(kept)]
    history = os.path.join(base, lay.archive_dir)
    if version >= 8:
        current = open(os.path.join(history, A.VERSION_FILE)).read()
        files = A.parse_manifest(open(os.path.join(history, A.MANIFEST_PREFIX + current), "rb").read())
        rows = [r for name, size in files for r in A.read_lsm_file(open(os.path.join(history, name), "rb").read())]
        assert all(os.path.getsize(os.path.join(history, name)) == size for name, size in files)
        assert [r["instantTime"] for r in rows] == archived_ts
        server = {i.ts: i.completion_ts for i in timeline.list_instants("db1", "t1")}
        for r in rows:
            assert r["completionTime"] == server[r["instantTime"]] and r["action"] == "commit"
            assert r["metadata"] == before[f"{r['instantTime']}_{r['completionTime']}.commit"]
    else:
        logs = sorted(n for n in os.listdir(history) if A.archive_log_version(n))
        entries = [e for n in logs for e in A.read_archive_log(open(os.path.join(history, n), "rb").read())]
        assert sorted(t for n in logs for t in A.archived_times(open(os.path.join(history, n), "rb").read())) \
            == sorted(e["commitTime"] for e in entries)  # what the archiver reads of its last file
        assert sorted({e["commitTime"] for e in entries}) == archived_ts
        done = [e for e in entries if e["actionState"] == "COMPLETED"]
        assert all(e["hoodieCommitMetadata"]["partitionToWriteStats"] for e in done)
        assert not any(os.path.exists(os.path.join(base, HOODIE, f"{ts}.commit")) for ts in archived_ts)
    if mdt:  # archived only up to the metadata table's base file
        assert archived_ts[-1] < mirror.metadata_table.base_instant(TableStorage(base), version)
    slices, rows_rs = theirs(base)
    ours = {(s.partition_path, s.file_id): (s.base_file.name, ()) for s in snapshot.latest_file_slices("db1", "t1")}
    assert slices == ours and len(rows_rs) == 9 * len(ROWS)
    state = sorted(os.listdir(history))
    mirror.sync("db1", "t1")
    assert sorted(os.listdir(history)) == state
    if apart:  # every archive was encoded there
        assert encoded and set(encoded) == {"lsm_file" if version >= 8 else "archive_log_block"}, encoded
        encoder_process.ENCODER.close()


def _archived_in_the_background(base: str, stamps: list[str]) -> None:
    """Within 30 s the background thread archived all but the last two or three commits."""
    deadline = time.monotonic() + 30
    while len(StorageTimeline.read(base).instants) > 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    kept = [i.ts for i in StorageTimeline.read(base).instants]
    assert 2 <= len(kept) <= 3 and kept == stamps[-len(kept):]


def test_with_the_background_thread_a_commit_leaves_archiving_to_it(tmp_path, monkeypatch):
    """A server's mirror (its background thread running): the commit's hook does not archive (ten
    commits of 10,000 files take seconds), it hands the table to the background thread, which
    archives as Hudi's archiver would; without the thread the hook archives itself (the test above)."""
    import threading

    from store.hudi import storage_mirror
    from tests.test_storage_mirror import ROWS, commit

    real, release, calls = storage_mirror.archive, threading.Event(), []

    def held_archive(*args, **kwargs):
        calls.append(threading.current_thread().name)
        assert release.wait(30), "never released"
        return real(*args, **kwargs)

    monkeypatch.setattr(storage_mirror, "archive", held_archive)
    base, timeline, _snapshot, mirror = _archiving_table(tmp_path, 6, False)
    mirror.start_background(3600)  # it runs when a hook wakes it
    try:
        stamps = [commit(timeline, base, "2024-01-01", [{**r, "id": r["id"] + 10 * n} for r in ROWS])
                  for n in range(5)]  # each completed while the archive is held
        assert not release.is_set() and calls and set(calls) == {"hudi-storage-mirror"}
        assert len(StorageTimeline.read(base).instants) == 5  # nothing archived yet
        release.set()
        _archived_in_the_background(base, stamps)
    finally:
        release.set()
        mirror.stop()


def test_a_commits_mirror_hook_counts_as_the_commit_running_but_not_its_wait(tmp_path, monkeypatch):
    """The background archive gives way to a commit's mirror hook as to its transaction (the hook's
    statements waited for the interpreter behind it otherwise); not while the hook waits for
    another mirror's lease, which may be the archiving thread's."""
    from store.hudi.timeline import commits_running
    from tests.test_storage_mirror import ROWS, commit

    base, timeline, _snapshot, mirror = _archiving_table(tmp_path, 6, False)
    seen: dict[str, list[int]] = {"sync": [], "wait": []}
    real_sync, busy = mirror._sync, [True]

    def sync(db, tbl, force, done):
        seen["sync"].append(commits_running())
        if busy[0]:  # another mirror holds the table's lease, once
            busy[0] = False
            return 0, True
        return real_sync(db, tbl, force, done)

    def lease_age_ms(_tbl_id):
        seen["wait"].append(commits_running())
        return 0  # a fresh lease: the hook waits for it

    monkeypatch.setattr(mirror, "_sync", sync)
    monkeypatch.setattr(mirror.queue, "lease_age_ms", lease_age_ms)
    commit(timeline, base, "2024-01-01", ROWS)
    assert seen == {"sync": [1, 1], "wait": [0]} and commits_running() == 0
    assert len(StorageTimeline.read(base).instants) == 1  # mirrored at the second try


def test_the_background_archive_waits_while_commits_run(tmp_path, monkeypatch):
    """The background thread's archive gives way to commits of the process: it pauses between its
    entries (and within a commit's write stats) while one runs, at most ARCHIVE_YIELD_S at a time;
    the same files as without pauses (the archive log's bytes are checked in test_archived_timeline)."""
    from store.hudi import storage_mirror
    from tests.test_storage_mirror import ROWS, commit

    running = [1]
    monkeypatch.setattr(storage_mirror, "commits_running", lambda: running[0])
    monkeypatch.setattr(storage_mirror, "ARCHIVE_YIELD_S", 60.0)
    base, timeline, _snapshot, mirror = _archiving_table(tmp_path, 6, False)
    mirror.start_background(3600)  # it runs when a hook wakes it
    try:
        stamps = [commit(timeline, base, "2024-01-01", [{**r, "id": r["id"] + 10 * n} for r in ROWS])
                  for n in range(5)]
        time.sleep(1.0)  # the background thread is woken, and waits
        assert len(StorageTimeline.read(base).instants) == 5
        running[0] = 0
        _archived_in_the_background(base, stamps)
    finally:
        running[0] = 0
        mirror.stop()
