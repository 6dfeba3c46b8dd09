"""import-hudi (RFC-15 first time initialization through the metastore): every fixture table imported
from storage gives the partitions, latest file slices and rows hudi-rs reads from storage;
re-importing is a no-op; instants added on storage later are picked up; archived instants are
covered by the listing; bad input changes nothing. Against a real server process on each backend."""

from __future__ import annotations

import glob
import os
import uuid
from pathlib import Path

import pytest

from adapter.commands.import_hudi import HudiImportError, import_hudi_table
from client import Column, HudiCatalog, HudiMetastoreClient, state_name
from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED
from hudi_format.storage_timeline import StorageTimeline, parse_timeline_name
from tests.harness.hudi_tables import (
    hive_synced_table,
    hold_back,
    ours_slices,
    put_back,
    rows_of_slices,
    run_cli,
    table_copy,
    theirs_partitions,
    theirs_rows,
    theirs_slices,
    timeline_dir,
    tree_digest,
)
from tests.test_hudi_fixtures import FIXTURE_DIR
from thrift_idl.hive_metastore.ttypes import Database, NoSuchObjectException, TableStatsRequest
from thrift_idl.hudi_metastore.ttypes import ImportedInstant, InstantState

hudi = pytest.importorskip("hudi")

# every fixture table but the one with version-2 (Kryo) delete blocks, whose rows hudi-rs, the oracle
# here, refuses to read (tests/fixtures/hudi-tables/README.md; tests/test_record_index_adoption.py
# imports it and reads it with our own decoder), and the last stage of the savepoint tables (its
# timeline is the restored stage's and one commit: tests/unit/store/hudi/test_hudi_sync.py follows it)
FIXTURES = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(FIXTURE_DIR, "*.zip"))
                  if "kryo" not in os.path.basename(p) and not p.endswith("_v9_deleted.zip"))


@pytest.fixture
def metastore(our_server_info):
    """(uri, db, client): a fresh database on our server."""
    uri = f"thrift://127.0.0.1:{our_server_info.port}"
    db = f"imp_{uuid.uuid4().hex[:8]}"
    with HudiMetastoreClient(uri) as c:
        c.create_database(Database(name=db, description="", locationUri=None, parameters={}))
        yield uri, db, c


def server_state(c, db, tbl) -> tuple:
    """Everything an import could change, to show that nothing did."""
    try:
        instants = [(i.timestamp, i.action, i.state, i.completionTime) for i in c.list_instants(db, tbl)]
    except NoSuchObjectException:
        return ("absent",)
    return (instants, ours_slices(c.get_latest_file_slices(db, tbl)), c.get_hudi_partitions(db, tbl),
            c.get_hudi_table_stats(db, tbl).tableVersion)


def assert_matches_storage(c, db, tbl, base):
    cfg = c.get_hudi_table(db, tbl)
    slices = c.get_latest_file_slices(db, tbl)
    assert ours_slices(slices) == theirs_slices(base)
    if cfg.partitionFields:
        assert c.get_hudi_partitions(db, tbl) == theirs_partitions(base)
        hms = sorted(c.get_partition_names(db, tbl, -1))
        assert len(hms) == len(theirs_partitions(base))
    else:
        assert c.get_hudi_partitions(db, tbl) == [""]
    assert rows_of_slices(base, slices) == theirs_rows(base)


# --------------------------------------------------------------------------- every fixture


@pytest.mark.parametrize("name", FIXTURES)
def test_import_equals_hudi_rs(metastore, tmp_path, name):
    uri, db, c = metastore
    base = table_copy(name, tmp_path)
    before = tree_digest(base)
    tl = StorageTimeline.read(base)

    report = import_hudi_table(uri, base, db, "t", dry_run=True)  # dry run: a plan, no change
    assert report.registered and len(report.instants_imported) == len(tl.instants)
    with pytest.raises(NoSuchObjectException):
        c.get_table(db, "t")

    report = import_hudi_table(uri, base, db, "t")
    assert report.registered and len(report.instants_imported) == len(tl.instants)
    cfg = c.get_hudi_table(db, "t")
    assert cfg.tableVersion == tl.table_version and cfg.basePath == base
    instants = c.list_instants(db, "t")
    assert [(i.timestamp, state_name(i.state)) for i in instants] == \
        [(i.ts, ("", "REQUESTED", "INFLIGHT", "COMPLETED")[i.state]) for i in tl.instants]
    assert [i.completionTime for i in instants] == [i.completion_ts for i in tl.instants]
    assert_matches_storage(c, db, "t", base)

    state = server_state(c, db, "t")
    again = import_hudi_table(uri, base, db, "t")  # re-import: nothing new on storage, no change
    assert not again.changed and again.instants_skipped == len(tl.instants)
    assert server_state(c, db, "t") == state
    # imported versions count as mirrored: the server does not rewrite the imported table's storage
    stats = c.get_hudi_table_stats(db, "t")
    assert stats.mirrorLagVersions == 0 and stats.mirrored
    assert tree_digest(base) == before


@pytest.mark.parametrize("name", ["cow_v8_simplekeygen_nonhivestyle", "cow_v8_nonpartitioned"])
def test_table_version_9(metastore, tmp_path, name):
    """Version 9 (Hudi 1.1) keeps version 8's timeline layout: a v8 fixture relabelled 9 (hudi-rs reads it)."""
    uri, db, c = metastore
    base = table_copy(name, tmp_path)
    props = os.path.join(base, ".hoodie", "hoodie.properties")
    text = open(props).read().replace("hoodie.table.version=8", "hoodie.table.version=9")
    open(props, "w").write(text)
    report = import_hudi_table(uri, base, db, "t")
    assert report.table_version == 9 and c.get_hudi_table(db, "t").tableVersion == 9
    assert_matches_storage(c, db, "t", base)
    assert not import_hudi_table(uri, base, db, "t").changed


def test_import_cli_subprocess(metastore, tmp_path):
    uri, db, c = metastore
    base = table_copy("mor_v6_trips_8i1u", tmp_path)
    dry = run_cli("import-hudi", base, "--table", f"{db}.trips", "--dry-run", "--metastore", uri, own_process=True)
    assert dry.returncode == 0, dry.stderr
    assert "would register" in dry.stdout and "would import 2 instant(s)" in dry.stdout
    with pytest.raises(NoSuchObjectException):
        c.get_table(db, "trips")
    done = run_cli("import-hudi", base, "--table", f"{db}.trips", "--metastore", uri, own_process=True)
    assert done.returncode == 0, done.stderr
    assert "imported 2 instant(s)" in done.stdout
    assert_matches_storage(c, db, "trips", base)
    again = run_cli("import-hudi", base, "--table", f"{db}.trips", "--metastore", uri, own_process=True)
    assert again.returncode == 0 and "nothing to do" in again.stdout
    from tests.harness.procs import REPO_ROOT

    rel = os.path.relpath(table_copy("cow_v6_nonpartitioned", tmp_path / "rel"), REPO_ROOT)
    # relative to the CLI's cwd
    done = run_cli("import-hudi", rel, "--table", f"{db}.rel", "--metastore", uri, own_process=True)
    assert done.returncode == 0, done.stderr
    absolute = os.path.normpath(os.path.join(str(REPO_ROOT), rel))
    assert c.get_hudi_table(db, "rel").basePath == absolute
    assert_matches_storage(c, db, "rel", absolute)


# --------------------------------------------------------------------------- incremental


@pytest.mark.parametrize("name", ["cow_v8_complexkeygen_hivestyle", "mor_v6_trips_8i1u",
                                  "mor_v6_nonpartitioned_rollback", "cow_v6_nonpartitioned"])
def test_instants_added_on_storage_are_picked_up(metastore, tmp_path, name):
    uri, db, c = metastore
    base = table_copy(name, tmp_path)
    last = StorageTimeline.read(base).instants[-1]
    held = tmp_path / "held"
    assert hold_back(base, last.ts, held)
    first = import_hudi_table(uri, base, db, "t")
    assert last.ts not in {i.timestamp for i in c.list_instants(db, "t")}
    assert_matches_storage(c, db, "t", base)  # storage without the instant: its files are not the table's
    assert not any(i.startswith(last.ts) for i in first.instants_imported)

    put_back(base, held)
    report = import_hudi_table(uri, base, db, "t")
    assert report.instants_imported == [f"{last.ts}.{last.done_action}.COMPLETED"]
    assert report.bootstrap_files == 0  # no listing: the new instant's metadata names its files
    assert_matches_storage(c, db, "t", base)


def test_import_of_a_table_hudis_sync_tracks_keeps_it_tracked(metastore, tmp_path):
    """A table Hudi's hive sync created is tracked from that call (store/hudi/timeline/catch_up.py):
    import-hudi then finds it up to date and leaves it tracked."""
    uri, db, c = metastore
    base = table_copy("cow_v8_complexkeygen_hivestyle", tmp_path)
    c.create_table(hive_synced_table(db, "t", base))
    assert c.get_hudi_table(db, "t").properties["hoodie.metastore.timeline.source"] == "storage"
    assert_matches_storage(c, db, "t", base)
    report = import_hudi_table(uri, base, db, "t", record_index=False)
    assert report.instants_imported == [] and not report.registered and not report.config_updated
    assert c.get_hudi_table(db, "t").properties["hoodie.metastore.timeline.source"] == "storage"


def test_an_imported_table_is_tracked_and_hudis_later_syncs_catch_it_up(metastore, tmp_path):
    """import-hudi of a table whose savepoint shares its commit's time (Hudi's create_savepoint)
    imports both and marks the table tracked: after Hudi's rollback_to_savepoint its next write's
    sync (an alter_table) catches the server up (store/hudi/timeline/catch_up.py)."""
    import shutil

    uri, db, c = metastore
    base = table_copy("cow_v9_savepoint", tmp_path)
    assert import_hudi_table(uri, base, db, "t").registered
    assert c.get_hudi_table(db, "t").properties["hoodie.metastore.timeline.source"] == "storage"
    [saved] = [i for i in StorageTimeline.read(base).instants if i.action == "savepoint"]
    at_saved = sorted((i.action, state_name(i.state)) for i in c.list_instants(db, "t") if i.timestamp == saved.ts)
    assert at_saved == [("commit", "COMPLETED"), ("savepoint", "COMPLETED")]
    assert_matches_storage(c, db, "t", base)

    restored = table_copy("cow_v9_restored", tmp_path / "later")  # Hudi's writer restored the table
    shutil.rmtree(base)
    shutil.copytree(restored, base)
    c.alter_table(db, "t", c.get_table(db, "t"))
    assert_matches_storage(c, db, "t", base)
    assert [i.timestamp for i in c.list_instants(db, "t")] == [i.ts for i in StorageTimeline.read(base).instants]


def test_a_table_imported_without_the_tracking_mark_gets_it_from_its_next_import(metastore, tmp_path):
    """Tables import-hudi adopted before it marked them tracked: the next import-hudi marks them, and
    from then on Hudi's syncs catch them up."""
    uri, db, c = metastore
    base = table_copy("cow_v8_complexkeygen_hivestyle", tmp_path)
    last = StorageTimeline.read(base).instants[-1]
    held = tmp_path / "held"
    hold_back(base, last.ts, held)
    import_hudi_table(uri, base, db, "t", record_index=False, column_stats=False)
    with HudiCatalog(uri) as cat:  # as an earlier import-hudi left it: no mark
        cfg = cat.get_hudi_table(db, "t")
        cfg.properties.pop("hoodie.metastore.timeline.source")
        cat.import_hudi_instants(db, "t", [], config=cfg)
    assert "hoodie.metastore.timeline.source" not in c.get_hudi_table(db, "t").properties

    report = import_hudi_table(uri, base, db, "t", record_index=False, column_stats=False)
    assert report.config_updated and not report.instants_imported
    assert c.get_hudi_table(db, "t").properties["hoodie.metastore.timeline.source"] == "storage"
    put_back(base, held)  # Hudi's writer commits; its sync's alter_table catches the server up
    c.alter_table(db, "t", c.get_table(db, "t"))
    assert last.ts in {i.timestamp for i in c.list_instants(db, "t")}
    assert_matches_storage(c, db, "t", base)


def test_pending_instant_imported_as_pending_then_completed(metastore, tmp_path):
    uri, db, c = metastore
    base = table_copy("cow_v8_simplekeygen_nonhivestyle", tmp_path)
    last = StorageTimeline.read(base).instants[-1]
    held = tmp_path / "held"
    assert len(hold_back(base, last.ts, held, completed_only=True)) == 1
    import_hudi_table(uri, base, db, "t")
    pending = [i for i in c.list_instants(db, "t") if i.timestamp == last.ts]
    assert [(state_name(i.state), i.action) for i in pending] == [("INFLIGHT", "commit")]
    assert c.get_instant_metadata(db, "t", last.ts, "commit", "INFLIGHT") == \
        open(os.path.join(timeline_dir(base), f"{last.ts}.inflight"), "rb").read()
    assert_matches_storage(c, db, "t", base)

    put_back(base, held)
    report = import_hudi_table(uri, base, db, "t")
    assert report.instants_imported == [f"{last.ts}.commit.COMPLETED"]
    done = [i for i in c.list_instants(db, "t") if i.timestamp == last.ts]
    assert [(state_name(i.state), i.completionTime) for i in done] == [("COMPLETED", last.completion_ts)]
    assert_matches_storage(c, db, "t", base)


def test_new_instant_times_follow_the_imported_ones(metastore, tmp_path):
    uri, db, c = metastore
    base = table_copy("cow_v8_nonpartitioned", tmp_path)
    import_hudi_table(uri, base, db, "t")
    top = max(max(i.timestamp, i.completionTime or "") for i in c.list_instants(db, "t"))
    assert c.new_instant_time(db, "t") > top


# --------------------------------------------------------------------------- archived instants


@pytest.mark.parametrize("name", ["cow_v6_simplekeygen_nonhivestyle", "cow_v8_complexkeygen_hivestyle",
                                  "mor_v6_complexkeygen_hivestyle"])
def test_archived_instants_are_covered_by_the_listing(metastore, tmp_path, name):
    """The first instant leaves the active timeline (as Hudi's archiver does): its files, still the
    table's, come from one listing of the partitions."""
    uri, db, c = metastore
    base = table_copy(name, tmp_path)
    expected = theirs_slices(base)
    tl = StorageTimeline.read(base)
    first = tl.instants[0]
    for n in first.files.values():
        os.remove(os.path.join(timeline_dir(base), n))
    os.makedirs(os.path.join(base, tl.archive_dir), exist_ok=True)
    with open(os.path.join(base, tl.archive_dir, ".commits_.archive.1_1-0-1"), "wb") as f:
        f.write(b"archived")
    assert theirs_slices(base) == expected  # hudi-rs: files before the timeline starts are committed

    report = import_hudi_table(uri, base, db, "t")
    assert report.bootstrap_files > 0
    assert [i.timestamp for i in c.list_instants(db, "t")] == [i.ts for i in tl.instants[1:]]
    assert_matches_storage(c, db, "t", base)
    assert not import_hudi_table(uri, base, db, "t").changed


# --------------------------------------------------------------------------- adopted tables


def test_table_adopted_from_hms_takes_storage_config(metastore, tmp_path):
    """A table registered from HMS parameters (as hive-sync leaves them, defaults for the rest) gets
    storage's hoodie.properties with its first import."""
    uri, db, c = metastore
    base = table_copy("cow_v8_nonpartitioned", tmp_path)
    from hudi_format.table_config import HudiTableConfig

    c.register_hudi_table(HudiTableConfig(db_name=db, table_name="t", table_type="COPY_ON_WRITE",
                                          record_key_fields=["id"], partition_fields=[], base_path=base),
                          [("id", "int"), ("name", "string")])
    assert c.get_hudi_table(db, "t").tableVersion == 6
    report = import_hudi_table(uri, base, db, "t")
    assert report.config_updated and not report.registered
    cfg = c.get_hudi_table(db, "t")
    assert cfg.tableVersion == 8 and cfg.properties.get("hoodie.timeline.layout.version") == "2"
    assert c.get_hudi_table_stats(db, "t").mirrored
    assert_matches_storage(c, db, "t", base)
    assert not import_hudi_table(uri, base, db, "t").changed


# --------------------------------------------------------------------------- bad input


def test_not_a_hudi_table(metastore, tmp_path):
    uri, db, c = metastore
    empty = tmp_path / "plain"
    empty.mkdir()
    (empty / "part-0.parquet").write_bytes(b"PAR1")
    with pytest.raises(HudiImportError, match="is not a Hudi table: it has no .hoodie/hoodie.properties"):
        import_hudi_table(uri, str(empty), db, "t")
    with pytest.raises(HudiImportError, match="does not exist"):
        import_hudi_table(uri, str(tmp_path / "nowhere"), db, "t")
    r = run_cli("import-hudi", str(empty), "--table", f"{db}.t", "--metastore", uri)
    assert r.returncode == 2 and "is not a Hudi table" in r.stderr
    r = run_cli("import-hudi", str(empty), "--table", "no_dot", "--metastore", uri)
    assert r.returncode == 2 and "expected <db>.<table>" in r.stderr
    assert c.get_all_tables(db) == []


@pytest.mark.parametrize("version", ["5", "7", "10", ""])
def test_unsupported_table_version(metastore, tmp_path, version):
    uri, db, c = metastore
    base = table_copy("cow_v6_nonpartitioned", tmp_path)
    props = os.path.join(base, ".hoodie", "hoodie.properties")
    text = open(props).read().replace("hoodie.table.version=6", f"hoodie.table.version={version}")
    open(props, "w").write(text)
    with pytest.raises(HudiImportError, match="table version .* is not supported"):
        import_hudi_table(uri, base, db, "t")
    r = run_cli("import-hudi", base, "--table", f"{db}.t", "--metastore", uri)
    assert r.returncode == 2 and "is not supported (supported: 6, 8, 9)" in r.stderr
    assert c.get_all_tables(db) == []


@pytest.mark.parametrize("name", ["cow_v6_simplekeygen_nonhivestyle", "cow_v8_simplekeygen_nonhivestyle"])
def test_corrupt_commit_file_changes_nothing(metastore, tmp_path, name):
    uri, db, c = metastore
    base = table_copy(name, tmp_path)
    last = StorageTimeline.read(base).instants[-1]
    path = os.path.join(timeline_dir(base), last.files[COMPLETED])
    good = open(path, "rb").read()
    open(path, "wb").write(good[: len(good) // 2])  # truncated: neither JSON nor a whole Avro file
    with pytest.raises(HudiImportError, match=f"corrupt instant file .*{last.files[COMPLETED]}"):
        import_hudi_table(uri, base, db, "t")
    assert c.get_all_tables(db) == []  # not even registered

    # an imported table: a corrupt new instant leaves it as it was
    open(path, "wb").write(good)
    held = tmp_path / "held"
    hold_back(base, last.ts, held)
    import_hudi_table(uri, base, db, "t")
    before = server_state(c, db, "t")
    put_back(base, held)
    open(path, "wb").write(b"{not json")
    r = run_cli("import-hudi", base, "--table", f"{db}.t", "--metastore", uri)
    assert r.returncode == 2 and "corrupt instant file" in r.stderr
    assert server_state(c, db, "t") == before


def test_server_refuses_bad_import_atomically(metastore, tmp_path):
    """import_hudi_instants itself: a corrupt instant anywhere in the call leaves nothing written."""
    uri, db, c = metastore
    base = table_copy("cow_v6_simplekeygen_nonhivestyle", tmp_path)
    tl = StorageTimeline.read(base)
    from hudi_format.table_config import HudiTableConfig
    from thrift_idl.hive_metastore.ttypes import InvalidObjectException

    c.register_hudi_table(HudiTableConfig(db_name=db, table_name="t", table_type="COPY_ON_WRITE",
                                          record_key_fields=["id"], partition_fields=["intField"],
                                          base_path=base), [("id", "int"), ("intField", "int")])
    good = tl.instants[0]
    payload = [ImportedInstant(timestamp=good.ts, action="commit", state=InstantState.COMPLETED,
                               completedMetadata=tl.metadata(good, COMPLETED)),
               ImportedInstant(timestamp=tl.instants[1].ts, action="commit", state=InstantState.COMPLETED,
                               completedMetadata=b"{\"partitionToWriteStats\": 7}")]
    with pytest.raises(InvalidObjectException, match="partitionToWriteStats"):
        c.import_hudi_instants(db, "t", payload)
    bad_time = [ImportedInstant(timestamp="2024-01-01", action="commit", state=InstantState.REQUESTED)]
    with pytest.raises(InvalidObjectException, match="17 digits"):
        c.import_hudi_instants(db, "t", bad_time)
    bad_action = [ImportedInstant(timestamp=good.ts, action="merge", state=InstantState.REQUESTED)]
    with pytest.raises(InvalidObjectException, match="Unknown Hudi action"):
        c.import_hudi_instants(db, "t", bad_action)
    assert c.list_instants(db, "t") == [] and c.get_latest_file_slices(db, "t") == []
    assert c.get_partition_names(db, "t", -1) == []
    with pytest.raises(NoSuchObjectException):
        c.import_hudi_instants(db, "nope", payload[:1])


def test_unreachable_metastore(tmp_path):
    from tests.harness import free_port

    base = table_copy("cow_v6_nonpartitioned", tmp_path)
    r = run_cli("import-hudi", base, "--table", "db.t", "--metastore", f"thrift://127.0.0.1:{free_port()}")
    assert r.returncode == 1 and "metastore thrift://127.0.0.1:" in r.stderr


# --------------------------------------------------------------------------- timeline layouts


@pytest.mark.parametrize("name,layout,expected", [
    ("20240101000000000.commit", 1, ("20240101000000000", "commit", COMPLETED, None)),
    ("20240101000000000.inflight", 1, ("20240101000000000", "commit", INFLIGHT, None)),
    ("20240101000000000.compaction.requested", 1, ("20240101000000000", "compaction", REQUESTED, None)),
    ("20240101000000000.replacecommit.inflight", 1, ("20240101000000000", "replacecommit", INFLIGHT, None)),
    ("20240101000000000_20240101000001000.deltacommit", 2,
     ("20240101000000000", "deltacommit", COMPLETED, "20240101000001000")),
    ("20240101000000000_20240101000001000.commit", 1, None),  # completion times are layout 2's
    ("20240101000000000.clustering.requested", 2, ("20240101000000000", "clustering", REQUESTED, None)),
    ("20240101000000000.compaction", 1, None),  # a compaction completes as a commit
    ("hoodie.properties", 1, None),
    ("20240101000000000.commit.crc", 1, None),
])
def test_timeline_file_names(name, layout, expected):
    assert parse_timeline_name(name, layout) == expected


def test_compaction_completes_as_commit(tmp_path):
    """A completed compaction (requested as compaction, completed as commit) is known by the
    action it was requested with; a mismatch is a corrupt timeline."""
    base = table_copy("mor_v6_nonpartitioned", tmp_path)
    tdir = timeline_dir(base)
    first = StorageTimeline.read(base).instants[0]
    ts = "20990101000000000"
    open(os.path.join(tdir, f"{ts}.compaction.requested"), "wb").write(b"")
    open(os.path.join(tdir, f"{ts}.compaction.inflight"), "wb").write(b"")
    open(os.path.join(tdir, f"{ts}.commit"), "wb").write(b"{}")
    inst = StorageTimeline.read(base).instants[-1]
    assert (inst.ts, inst.action, inst.done_action, inst.state) == (ts, "compaction", "commit", COMPLETED)
    bad = "20990102000000000"
    open(os.path.join(tdir, f"{bad}.deltacommit.requested"), "wb").write(b"")
    open(os.path.join(tdir, f"{bad}.commit"), "wb").write(b"{}")
    from hudi_format.errors import CorruptTimeline

    with pytest.raises(CorruptTimeline, match="requested as deltacommit but completed as commit"):
        StorageTimeline.read(base)
    os.remove(os.path.join(tdir, f"{bad}.commit"))
    open(os.path.join(tdir, f"{first.ts}.commit"), "wb").write(b"{}")  # a second completed file
    with pytest.raises(CorruptTimeline, match="two completed files"):
        StorageTimeline.read(base)


# --------------------------------------------------------------------------- v8 merge-on-read logs


def _v8_mor_table(tmp_path) -> str:
    """cow_v8_nonpartitioned made merge-on-read, with deltacommits appending log files (Avro commit
    metadata as Hudi 1.x writes it, from the fixture's own schema): one requested between the two
    base files and completed after the second, one completed before the second, one after both."""
    import copy
    import io

    import fastavro

    base = table_copy("cow_v8_nonpartitioned", tmp_path)
    props = os.path.join(base, ".hoodie", "hoodie.properties")
    text = open(props).read().replace("hoodie.table.type=COPY_ON_WRITE", "hoodie.table.type=MERGE_ON_READ")
    open(props, "w").write(text)
    tdir = timeline_dir(base)
    template = next(n for n in os.listdir(tdir) if n.startswith("20250713010536861_"))
    reader = fastavro.reader(open(os.path.join(tdir, template), "rb"))
    schema, record = reader.writer_schema, next(iter(reader))
    stat = record["partitionToWriteStats"][""][0]
    for requested, completed in (("20250713010536500", "20250713010537500"),
                                 ("20250713010536000", "20250713010536500"),
                                 ("20250713020000000", "20250713020001000")):
        log = f".{stat['fileId']}_{requested}.log.1_0-1-1"
        open(os.path.join(base, log), "wb").write(b"#HUDI#" + b"x" * 50)
        st = copy.deepcopy(stat)
        st.update(path=log, fileSizeInBytes=56, totalWriteBytes=56, logVersion=1)
        meta = copy.deepcopy(record)
        meta["partitionToWriteStats"] = {"": [st]}
        buf = io.BytesIO()
        fastavro.writer(buf, schema, [meta], codec="null")
        open(os.path.join(tdir, f"{requested}_{completed}.deltacommit"), "wb").write(buf.getvalue())
        open(os.path.join(tdir, f"{requested}.deltacommit.requested"), "wb").write(b"")
        open(os.path.join(tdir, f"{requested}.deltacommit.inflight"), "wb").write(b"")
    return base


def test_v8_merge_on_read_logs_join_slices_by_completion_time(metastore, tmp_path):
    uri, db, c = metastore
    base = _v8_mor_table(tmp_path)
    expected = theirs_slices(base)
    (key, (base_instant, _, logs)), = expected.items()
    assert base_instant == "20250713010536861" and len(logs) == 2  # hudi-rs: by completion time
    import_hudi_table(uri, base, db, "t")
    assert ours_slices(c.get_latest_file_slices(db, "t")) == expected
    r = run_cli("validate", f"{db}.t", "--metastore", uri)
    assert r.returncode == 0, r.stdout


def test_v8_merge_on_read_logs_move_to_a_later_base_file(metastore, tmp_path):
    """A base file imported after a log that completed later: the log joins its slice."""
    uri, db, c = metastore
    base = _v8_mor_table(tmp_path)
    held = tmp_path / "held"
    assert hold_back(base, "20250713010536861", held)
    before = theirs_slices(base)
    assert [v[0] for v in before.values()] == ["20250713010535797"]
    import_hudi_table(uri, base, db, "t")
    assert ours_slices(c.get_latest_file_slices(db, "t")) == before
    put_back(base, held)
    assert import_hudi_table(uri, base, db, "t").instants_imported == ["20250713010536861.commit.COMPLETED"]
    assert ours_slices(c.get_latest_file_slices(db, "t")) == theirs_slices(base)


# --------------------------------------------------------------------------- cleans and restores


def _completed(ts: str, action: str, doc: dict) -> ImportedInstant:
    import json

    return ImportedInstant(timestamp=ts, action=action, state=InstantState.COMPLETED,
                           requestedMetadata=b"", inflightMetadata=b"", completedMetadata=json.dumps(doc).encode())


def test_imported_clean_deletes_files(metastore, tmp_path):
    uri, db, c = metastore
    base = table_copy("cow_v6_simplekeygen_nonhivestyle", tmp_path)
    import_hudi_table(uri, base, db, "t")
    old = "97de74b1-2a8e-4bb7-874c-0a74e1f42a77-0_1-98-142_20240418172802262.parquet"
    assert old in {f.name for f in c.get_all_files(db, "t", "10")}
    clean = _completed("20240418172900000", "clean", {"partitionMetadata": {"10": {
        "partitionPath": "10", "successDeleteFiles": [f"{base}/10/{old}"]}}})
    out = c.import_hudi_instants(db, "t", [clean])
    assert [(i.timestamp, i.action) for i in out.imported] == [("20240418172900000", "clean")]
    assert old not in {f.name for f in c.get_all_files(db, "t", "10")}
    assert ours_slices(c.get_latest_file_slices(db, "t")) == theirs_slices(base)
    assert c.import_hudi_instants(db, "t", [clean]).unchanged == 1  # idempotent


def test_imported_restore_rolls_back_its_instants(metastore, tmp_path):
    from tests.test_hudi_fixtures import theirs_norm

    uri, db, c = metastore
    base = table_copy("cow_v6_simplekeygen_nonhivestyle", tmp_path)
    first, second = [i.ts for i in StorageTimeline.read(base).instants]
    import_hudi_table(uri, base, db, "t")
    written = {f.partitionPath: f.name for f in c.get_files_changed(db, "t", first, second)}
    restore = _completed("20240418173000000", "restore", {
        "startRestoreTime": "20240418173000000", "instantsToRollback": [second],
        "hoodieRestoreMetadata": {second: [{"commitsRollback": [second], "partitionMetadata": {
            p: {"partitionPath": p, "successDeleteFiles": [f"{base}/{p}/{n}"], "failedDeleteFiles": []}
            for p, n in written.items()}}]}})
    c.import_hudi_instants(db, "t", [restore])
    assert [i.timestamp for i in c.list_instants(db, "t")] == [first, "20240418173000000"]
    assert ours_slices(c.get_latest_file_slices(db, "t")) == theirs_norm(hudi.HudiTable(base), first)


# --------------------------------------------------------------------------- large imports


def test_import_in_bounded_calls_and_resume_after_interruption(metastore, tmp_path, monkeypatch):
    """An import too large for one call goes in several (listing first, then instants); one
    interrupted halfway is finished by running it again."""
    from adapter.commands import import_hudi as ih

    uri, db, c = metastore
    monkeypatch.setattr(ih, "CALL_BYTES", 1)  # one instant per call
    monkeypatch.setattr(ih, "CALL_FILES", 1)  # one listed file per call
    base = table_copy("mor_v6_trips_8i1u", tmp_path)
    tl = StorageTimeline.read(base)
    held = tmp_path / "held"
    for inst in tl.instants:
        hold_back(base, inst.ts, held)
    assert theirs_slices(base) == {}  # an empty timeline commits nothing: the files are no one's yet
    import_hudi_table(uri, base, db, "t")  # registers the table, imports nothing
    assert c.list_instants(db, "t") == [] and c.get_latest_file_slices(db, "t") == []
    put_back(base, held)

    calls = []
    real = HudiMetastoreClient.import_hudi_instants

    def flaky(self, *args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise ConnectionResetError("interrupted")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(HudiMetastoreClient, "import_hudi_instants", flaky)
    with pytest.raises(ConnectionResetError):
        import_hudi_table(uri, base, db, "t")
    assert len(c.list_instants(db, "t")) < len(tl.instants)
    monkeypatch.setattr(HudiMetastoreClient, "import_hudi_instants", real)
    report = import_hudi_table(uri, base, db, "t")
    assert report.changed
    assert_matches_storage(c, db, "t", base)
    assert not import_hudi_table(uri, base, db, "t").changed


def test_instants_archived_unseen_between_imports_are_listed(metastore, tmp_path):
    """The server saw instant 1; storage then archived 1 and 2 before the next import: the files of
    instant 2 come from a listing, as on a first import."""
    uri, db, c = metastore
    base = table_copy("mor_v6_nonpartitioned_rollback", tmp_path)
    tl = StorageTimeline.read(base)
    first, second, third = tl.instants
    held2, held3 = tmp_path / "held2", tmp_path / "held3"
    hold_back(base, second.ts, held2)
    hold_back(base, third.ts, held3)
    later = tmp_path / "later"  # log files written after the first import (by the rollback, the third)
    later.mkdir()
    logs = [n for n in os.listdir(base) if ".log." in n]
    for n in logs:
        os.rename(os.path.join(base, n), later / n)
    import_hudi_table(uri, base, db, "t")
    assert [i.timestamp for i in c.list_instants(db, "t")] == [first.ts]
    assert_matches_storage(c, db, "t", base)
    for n in logs:
        os.rename(later / n, os.path.join(base, n))
    put_back(base, held3)  # the second instant stays away: archived before anyone imported it
    for n in first.files.values():
        os.remove(os.path.join(timeline_dir(base), n))
    os.makedirs(os.path.join(base, tl.archive_dir), exist_ok=True)
    open(os.path.join(base, tl.archive_dir, ".commits_.archive.1_1-0-1"), "wb").write(b"archived")
    report = import_hudi_table(uri, base, db, "t")
    assert report.partitions >= 0 and report.bootstrap_files > 0  # the listing ran and found files
    assert_matches_storage(c, db, "t", base)


def test_partition_paths_must_fit_the_partition_fields(metastore, tmp_path):
    uri, db, c = metastore
    base = table_copy("cow_v6_simplekeygen_nonhivestyle", tmp_path)
    props = os.path.join(base, ".hoodie", "hoodie.properties")
    text = open(props).read()
    field = next(line.split("=", 1)[1] for line in text.splitlines()
                 if line.startswith("hoodie.table.partition.fields="))
    open(props, "w").write(text.replace(f"hoodie.table.partition.fields={field}",
                                        f"hoodie.table.partition.fields={field},other"))
    with pytest.raises(HudiImportError, match="does not have 2 levels"):
        import_hudi_table(uri, base, db, "t")
    assert c.get_all_tables(db) == []


def test_a_refused_import_drops_the_table_it_registered(metastore, tmp_path, monkeypatch):
    from client import InvalidObject
    from thrift_idl.hive_metastore.ttypes import InvalidObjectException

    uri, db, c = metastore
    base = table_copy("cow_v8_nonpartitioned", tmp_path)

    def refuse(self, *args, **kwargs):
        raise InvalidObjectException("refused")

    monkeypatch.setattr(HudiMetastoreClient, "import_hudi_instants", refuse)
    with pytest.raises(InvalidObject):  # the server's InvalidObjectException, as the client raises it
        import_hudi_table(uri, base, db, "t")
    assert c.get_all_tables(db) == []


# --------------------------------------------------------------------------- writing after an import


def _commit_through_server(c, db: str, base: str, partition: str) -> str:
    """A new file group in `partition` (a copy of one of its base files), committed through the
    server with the table's own writer schema."""
    import json
    import shutil

    from hudi_format.commit_metadata import _load

    tl = StorageTimeline.read(base)
    schema = _load(tl.metadata(tl.completed[-1], COMPLETED), "commit")["extraMetadata"]["schema"]
    folder = os.path.join(base, partition)
    source = next(n for n in sorted(os.listdir(folder)) if n.endswith(".parquet"))
    inst = c.create_instant(db, "t", None, "commit")
    fid = f"{uuid.uuid4()}-0"
    name = f"{fid}_0-1-0_{inst.timestamp}.parquet"
    shutil.copy(os.path.join(folder, source), os.path.join(folder, name))
    size = os.path.getsize(os.path.join(folder, name))
    rel = f"{partition}/{name}" if partition else name
    stat = {"fileId": fid, "path": rel, "prevCommit": "null", "numWrites": 1, "numInserts": 1,
            "totalWriteBytes": size, "partitionPath": partition, "fileSizeInBytes": size}
    meta = {"partitionToWriteStats": {partition: [stat]}, "compacted": False,
            "extraMetadata": {"schema": schema}, "operationType": "INSERT"}
    c.transition_to_inflight(db, "t", inst.timestamp, "commit")
    c.complete_instant(db, "t", inst.timestamp, "commit", json.dumps(meta).encode())
    return inst.timestamp


def _in_warehouse(info) -> Path:
    """A directory in the server's warehouse: where the server may write an adopted table's timeline
    (outside it and --storage-roots it never writes; tests/test_storage_boundaries.py)."""
    d = Path(info.warehouse) / f"adopted-{uuid.uuid4().hex[:8]}"
    d.mkdir()
    return d


def test_v6_table_written_after_import_is_mirrored_consistently(metastore, our_server_info):
    """The first commit through the server makes the mirror take over an imported version 6 table
    (in the warehouse): hudi-rs still reads it, and sees what the server serves."""
    uri, db, c = metastore
    base = table_copy("cow_v6_simplekeygen_nonhivestyle", _in_warehouse(our_server_info))
    import_hudi_table(uri, base, db, "t", record_index=False)  # commits below carry no record keys
    ts = _commit_through_server(c, db, base, "10")
    c.sync_storage(db, "t")
    assert os.path.exists(os.path.join(base, ".hoodie", f"{ts}.commit"))
    assert ours_slices(c.get_latest_file_slices(db, "t")) == theirs_slices(base)
    r = run_cli("validate", f"{db}.t", "--metastore", uri)
    assert r.returncode == 0, r.stdout
    assert not import_hudi_table(uri, base, db, "t").instants_imported


def test_v8_table_written_after_import_is_mirrored_in_its_layout(metastore, our_server_info):
    """Version 8 tables keep their own layout: a commit through the server lands in
    `.hoodie/timeline/` named with its completion time, in Avro; hudi-rs reads what the server
    serves and validate agrees."""
    uri, db, c = metastore
    base = table_copy("cow_v8_nonpartitioned", _in_warehouse(our_server_info))
    import_hudi_table(uri, base, db, "t", record_index=False)  # commits below carry no record keys
    ts = _commit_through_server(c, db, base, "")
    c.sync_storage(db, "t")
    [inst] = c.list_instants(db, "t", min_ts=ts, max_ts=ts)
    done = open(os.path.join(base, ".hoodie", "timeline", f"{ts}_{inst.completionTime}.commit"), "rb").read()
    assert done[:4] == b"Obj\x01"
    assert not os.path.exists(os.path.join(base, ".hoodie", f"{ts}.commit"))
    assert ours_slices(c.get_latest_file_slices(db, "t")) == theirs_slices(base)
    r = run_cli("validate", f"{db}.t", "--metastore", uri)
    assert r.returncode == 0, r.stdout


def test_import_reads_column_statistics_from_the_footers(metastore, tmp_path, monkeypatch):
    """import-hudi gives the adopted table's latest base files column statistics read from their
    Parquet footers: data skipping and Hive statistics work on an imported table; a build stopped
    after one batch resumes with only the files still missing."""
    from adapter.commands.column_stats_build import build_column_stats

    uri, db, c = metastore
    base = table_copy("cow_v8_simplekeygen_nonhivestyle", tmp_path)
    import_hudi_table(uri, base, db, "t", column_stats=False)
    missing = c.list_files_without_column_stats(db, "t", 0)
    slices = c.get_latest_file_slices(db, "t")
    assert sorted(missing) == sorted(f"{s.partitionPath}/{s.baseFile.name}" for s in slices) and len(missing) >= 2

    calls = []
    real = HudiMetastoreClient.load_column_stats

    def stop_after_one(self, *args):
        if calls:
            raise RuntimeError("stopped")
        calls.append(args)
        return real(self, *args)

    monkeypatch.setattr(HudiMetastoreClient, "load_column_stats", stop_after_one)
    with pytest.raises(RuntimeError, match="stopped"):
        build_column_stats(HudiCatalog(uri), db, "t", base, batch=1)
    monkeypatch.setattr(HudiMetastoreClient, "load_column_stats", real)
    assert len(c.list_files_without_column_stats(db, "t", 0)) == len(missing) - 1
    report = import_hudi_table(uri, base, db, "t")  # the import's own build: only what is missing
    assert report.stats_files == len(missing) - 1 and c.list_files_without_column_stats(db, "t", 0) == []
    assert c.load_column_stats(db, "t", []) == 0

    rows = theirs_rows(base)
    table = c.get_table(db, "t")
    assert table.parameters["numRows"] == str(len(rows))
    assert table.parameters["numFiles"] == str(len(slices))
    longs = {o.colName: o.statsData.longStats for o in c.get_table_statistics_req(
        TableStatsRequest(dbName=db, tblName="t", colNames=["longfield"])).tableStats}["longfield"]
    values = [r["longField"] for r in rows if r["longField"] is not None]
    assert (longs.lowValue, longs.highValue) == (min(values), max(values))
    for v in sorted(set(values)):
        kept = c.prune_file_slices(db, "t", f"longfield = {v}")
        got = [r for r in rows_of_slices(base, kept.slices) if r["longField"] == v]
        assert got == [r for r in rows if r["longField"] == v], v
    assert c.prune_file_slices(db, "t", f"longfield > {max(values)}").slices == []


@pytest.mark.parametrize("fixture", ["mor_v8_delete_blocks", "mor_v8_hfile_blocks", "mor_v6_delete_blocks"])
def test_import_reads_column_statistics_of_log_files(metastore, tmp_path, fixture):
    """import-hudi gives the log files Hudi's writer wrote statistics from their data blocks (Avro,
    HFile), so merge-on-read slices are skipped when their base file and every log file are: the
    tables hold `v` 1..9 in base files, upserts `v` 100..102 and 205 in log files, log files of
    deletes alone. `v > 200` only p=a's log file of k5 (205) matches."""
    from adapter.commands.column_stats_build import build_column_stats

    uri, db, c = metastore
    base = table_copy(fixture, tmp_path)
    import_hudi_table(uri, base, db, "t", column_stats=False)
    catalog = HudiCatalog(uri)
    have = catalog.get_table(db, "t").columns  # the import registers the meta fields alone
    catalog.alter_table_columns(db, "t", have + [Column("id", "string"), Column("v", "bigint"),
                                                 Column("ts", "bigint")])
    slices = {s.partitionPath: s for s in c.get_latest_file_slices(db, "t")}
    assert set(slices) == {"a", "b"} and all(len(s.logFiles) >= 2 for s in slices.values())

    def kept(predicate: str) -> list[str]:
        return sorted(s.partitionPath for s in c.prune_file_slices(db, "t", predicate).slices)

    assert kept("v > 200") == ["a", "b"]  # log files without statistics keep their slices
    logs = c.list_files_without_column_stats(db, "t", 0, True)
    assert sorted(p for p in logs if "/." in p) == sorted(
        f"{p}/{f.name}" for p, s in slices.items() for f in s.logFiles)
    assert c.list_files_without_column_stats(db, "t", 0) == sorted(f"{p}/{s.baseFile.name}" for p, s in slices.items())

    stored, note = build_column_stats(catalog, db, "t", base)
    assert note is None and stored == len(logs)
    assert c.list_files_without_column_stats(db, "t", 0, True) == []
    assert kept("v > 200") == ["a"]  # only a log file's bounds keep it
    assert kept("v > 300") == [] and kept("v < 0") == []
    assert kept("v >= 100 AND v <= 102") == ["a", "b"]  # k1 (101) in a's log, k0 and k2 in b's
    assert kept("v = 9") == ["a"] and kept("v = 0") == ["b"]  # base files' bounds (a: 1..9, b: 0..8)
    listed = run_cli("list-files", f"{db}.t", "--where", "v > 200", "--metastore", uri)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert slices["a"].fileId in listed.stdout and slices["b"].fileId not in listed.stdout
    assert c.load_column_stats(db, "t", []) == 0


def test_log_files_with_blocks_not_read_keep_their_slices(metastore, tmp_path):
    """mor_v6_nonpartitioned_rollback (Hudi's writer): its log files hold Parquet data blocks and a
    rollback command block, which import-hudi does not read for statistics: they get none, and
    their slice is kept by a predicate no base file matches."""
    from adapter.commands.column_stats_build import build_column_stats

    uri, db, c = metastore
    base = table_copy("mor_v6_nonpartitioned_rollback", tmp_path)
    import_hudi_table(uri, base, db, "t", column_stats=False)
    slices = c.get_latest_file_slices(db, "t")
    logs = sorted(f.name for s in slices for f in s.logFiles)
    assert len(logs) == 3
    stored, note = build_column_stats(HudiCatalog(uri), db, "t", base)
    assert note is None and stored == len(slices)  # the base files alone
    assert sorted(p.rsplit("/", 1)[-1] for p in c.list_files_without_column_stats(db, "t", 0, True)) == logs
    assert c.list_files_without_column_stats(db, "t", 0) == []  # the base file's bounds skip it alone
    kept = c.prune_file_slices(db, "t", "longfield > 9223372036854775806").slices
    assert [s.fileId for s in kept] == [s.fileId for s in slices if s.logFiles] != []


@pytest.mark.parametrize(("fixture", "version"), [("mor_v6_delete_blocks", 6), ("mor_v8_delete_blocks", 8)])
def test_the_metadata_table_takes_the_statistics_import_hudi_read_from_log_files(metastore, our_server_info,
                                                                                fixture, version):
    """A merge-on-read table imported with `hoodie.metadata.enable=true`: once the mirror takes its
    storage over (`sync-storage`), the metadata table's `column_stats` partition (read back as Hudi's
    reader merges it) holds a record per log file and column with the bounds and counts the server
    read from the log file's blocks (hudi_format/log_stats.py), sizes 0; delete-only log files: no
    bounds and 0 values."""
    import pyarrow.parquet as pq

    from hudi_format.log_stats import log_file_stats
    from tests.unit.store.hudi.test_metadata_column_stats import _summary, partition_view

    uri, db, c = metastore
    base = table_copy(fixture, _in_warehouse(our_server_info))
    with open(os.path.join(base, ".hoodie", "hoodie.properties"), "a") as f:
        f.write("hoodie.metadata.enable=true\n")
    catalog = HudiCatalog(uri)
    report = import_hudi_table(uri, base, db, "t", record_index=False)
    assert report.stats_note is None and report.stats_files > 0
    have = catalog.get_table(db, "t").columns  # the import registers the meta fields alone
    catalog.alter_table_columns(db, "t", have + [Column("id", "string"), Column("v", "bigint"),
                                                 Column("ts", "bigint")])
    assert c.list_files_without_column_stats(db, "t", 0, True) == []
    c.sync_storage(db, "t")

    slices = c.get_latest_file_slices(db, "t")
    want = {}
    for s in slices:
        schema = pq.read_schema(os.path.join(base, s.partitionPath, s.baseFile.name))
        for lf in s.logFiles:
            data = open(os.path.join(base, s.partitionPath, lf.name), "rb").read()
            for col in log_file_stats(data, {}, schema) or []:
                if col["column"] in ("id", "v"):
                    lo, hi = [None if b is None else next(iter(b.values())) for b in (col["min"], col["max"])]
                    wrapper = "StringWrapper" if col["column"] == "id" else "LongWrapper"
                    want[(lf.name, col["column"])] = (None if lo is None else (wrapper, lo),
                                                      None if hi is None else (wrapper, hi),
                                                      col["nulls"], col["values"])
    assert len({n for n, _ in want}) == sum(len(s.logFiles) for s in slices) >= 4
    view = partition_view(base, version)
    got = {k: v for k, v in _summary(view).items() if ".log." in k[0] and k[1] in ("id", "v")}
    assert got == want
    assert all((s["totalSize"], s["totalUncompressedSize"]) == (0, 0) for s in view.values()
               if ".log." in s["fileName"])


def _imported_with_one_held_back(metastore, our_server_info, tmp_path, fixture):
    """A copy of the fixture with `hoodie.metadata.enable=true` imported as `t` while its last
    instant was held back (under tmp_path/held: put_back completes it): (base path, that instant)."""
    uri, db, _ = metastore
    base = table_copy(fixture, _in_warehouse(our_server_info))
    with open(os.path.join(base, ".hoodie", "hoodie.properties"), "a") as f:
        f.write("hoodie.metadata.enable=true\n")
    last = StorageTimeline.read(base).instants[-1]
    hold_back(base, last.ts, tmp_path / "held")
    import_hudi_table(uri, base, db, "t", record_index=False)
    return base, last


@pytest.mark.parametrize(("fixture", "version"), [("cow_v6_simplekeygen_nonhivestyle", 6),
                                                ("mor_v8_delete_blocks", 8)])
def test_instants_caught_up_after_the_takeover_reach_the_metadata_table(metastore, our_server_info, tmp_path,
                                                                        fixture, version):
    """An imported table whose metadata table the mirror has taken over (`sync-storage`): an instant
    Hudi's writer completes later, caught up by its sync's `alter_table`, reaches the metadata
    table's `files` partition (read as Hudi's reader merges it) at the mirror's next step, its
    files' statistics (read after the call) the `column_stats` partition; that step leaves Hudi's
    instant files as they are and writes nothing twice. (Whether the partition is written again
    depends on whether the background mirror takes the instant up before the statistics are read:
    both hold them.)"""
    from tests.unit.store.hudi.test_metadata_column_stats import partition_view
    from tests.unit.store.hudi.test_metadata_table import mdt_listing
    from tests.unit.store.hudi.test_mirror_v8 import mdt_listing_v2, storage_listing

    listing = mdt_listing if version == 6 else mdt_listing_v2
    uri, db, c = metastore
    base, last = _imported_with_one_held_back(metastore, our_server_info, tmp_path, fixture)
    c.sync_storage(db, "t")  # the mirror takes the table's storage over: it writes the metadata table
    assert os.path.isdir(os.path.join(base, ".hoodie", "metadata", "files"))
    before = listing(base)

    put_back(base, tmp_path / "held")  # Hudi's writer completes an instant; its sync catches the server up
    tdir = timeline_dir(base)
    held = {n: open(os.path.join(tdir, n), "rb").read() for n in os.listdir(tdir) if n.startswith(last.ts)}
    c.alter_table(db, "t", c.get_table(db, "t"))
    assert last.ts in {i.timestamp for i in c.list_instants(db, "t")}
    assert c.list_files_without_column_stats(db, "t", 0, True) == []  # the index backlog: read after the call
    c.sync_storage(db, "t")
    assert listing(base) == storage_listing(base) != before
    # the partition holds the new files' statistics: from the instant's deltacommit, or from a
    # rewrite when the server's background mirror took the instant up before the backlog read them
    new = {n for names in listing(base).values() for n in names} - {n for names in before.values() for n in names}
    assert new and new <= {s["fileName"] for s in partition_view(base, version).values()}
    assert c.get_hudi_table_stats(db, "t").mirrorLagVersions == 0
    # Hudi's instant files stay as its writer wrote them; a later step writes nothing again
    assert {n: open(os.path.join(tdir, n), "rb").read() for n in held} == held
    mdt = tree_digest(os.path.join(base, ".hoodie", "metadata"))
    c.sync_storage(db, "t")
    assert tree_digest(os.path.join(base, ".hoodie", "metadata")) == mdt


@pytest.mark.parametrize("fixture", ["cow_v6_simplekeygen_nonhivestyle", "mor_v8_delete_blocks"])
def test_imports_and_catch_ups_alone_never_take_a_metadata_table_over(metastore, our_server_info, tmp_path, fixture):
    """A table with `hoodie.metadata.enable=true` whose metadata table the mirror has not taken over
    (Hudi's writers keep theirs, or it has none): neither its import nor the catch-up of an instant
    Hudi's writer completes later, nor statistics adopted after, leaves the mirror anything to do,
    and its storage keeps its `.hoodie` as Hudi wrote it."""
    uri, db, c = metastore
    base, last = _imported_with_one_held_back(metastore, our_server_info, tmp_path, fixture)
    assert c.get_hudi_table_stats(db, "t").mirrorLagVersions == 0
    put_back(base, tmp_path / "held")
    hoodie = tree_digest(os.path.join(base, ".hoodie"))
    c.alter_table(db, "t", c.get_table(db, "t"))  # Hudi's sync: the server catches the instant up
    assert last.ts in {i.timestamp for i in c.list_instants(db, "t")}
    assert c.list_files_without_column_stats(db, "t", 0, True) == []  # the index backlog: read after the call
    assert c.get_hudi_table_stats(db, "t").mirrorLagVersions == 0
    assert tree_digest(os.path.join(base, ".hoodie")) == hoodie


@pytest.mark.parametrize(("fixture", "version"), [("mor_v6_delete_blocks", 6), ("mor_v8_delete_blocks", 8)])
def test_statistics_adopted_after_the_takeover_reach_the_metadata_table(metastore, our_server_info, fixture,
                                                                        version):
    """A table imported with `--no-column-stats` whose metadata table the mirror took over: the
    statistics `build-column-stats` adopts later (`load_column_stats`) reach its `column_stats`
    partition (read back as Hudi's reader merges it) at the mirror's next step, with the bounds
    the server keeps; that step leaves nothing pending."""
    from adapter.commands.column_stats_build import build_column_stats
    from tests.unit.store.hudi.test_metadata_column_stats import partition_view

    uri, db, c = metastore
    base = table_copy(fixture, _in_warehouse(our_server_info))
    with open(os.path.join(base, ".hoodie", "hoodie.properties"), "a") as f:
        f.write("hoodie.metadata.enable=true\n")
    catalog = HudiCatalog(uri)
    import_hudi_table(uri, base, db, "t", record_index=False, column_stats=False)
    have = catalog.get_table(db, "t").columns  # the import registers the meta fields alone
    catalog.alter_table_columns(db, "t", have + [Column("id", "string"), Column("v", "bigint"),
                                                 Column("ts", "bigint")])
    c.sync_storage(db, "t")  # the mirror takes the table's storage over: no statistics yet, no records
    slices = c.get_latest_file_slices(db, "t")
    latest = {f for s in slices for f in [s.baseFile.name, *(lf.name for lf in s.logFiles)]}
    assert not {s["fileName"] for s in partition_view(base, version).values()} & latest

    stored, note = build_column_stats(catalog, db, "t", base)
    assert note is None and stored == len(latest)
    c.sync_storage(db, "t")
    view = partition_view(base, version)
    assert {s["fileName"] for s in view.values() if s["columnName"] in ("id", "v")} == latest
    # as the server's bounds: Hudi's reader keeps for `v > 200` the slices list-files --where keeps
    highs = {s["fileName"]: s["maxValue"] for s in view.values() if s["columnName"] == "v"}
    kept = {s.fileId for s in c.prune_file_slices(db, "t", "v > 200").slices}
    assert kept == {s.fileId for s in slices if any(
        highs[n] is not None and highs[n][1] > 200 for n in [s.baseFile.name, *(lf.name for lf in s.logFiles)])}
    assert kept != set() and c.get_hudi_table_stats(db, "t").mirrorLagVersions == 0


def test_files_a_repair_finds_gone_leave_the_metadata_table_the_mirror_took_over(metastore, our_server_info):
    """A file of an imported table whose metadata table the mirror writes disappears from storage;
    `repair` marks it deleted outside any instant (a listing's change), and the mirror's next step
    writes the metadata table again from the rows: its `files` partition no longer names it."""
    from tests.unit.store.hudi.test_metadata_table import mdt_listing
    from tests.unit.store.hudi.test_mirror_v8 import storage_listing

    uri, db, c = metastore
    base = table_copy("cow_v6_simplekeygen_nonhivestyle", _in_warehouse(our_server_info))
    with open(os.path.join(base, ".hoodie", "hoodie.properties"), "a") as f:
        f.write("hoodie.metadata.enable=true\n")
    import_hudi_table(uri, base, db, "t", record_index=False)
    c.sync_storage(db, "t")  # the mirror takes the table's storage over: it writes the metadata table
    before = mdt_listing(base)
    assert before == storage_listing(base)
    latest = {s.baseFile.name for s in c.get_latest_file_slices(db, "t")}
    partition, name = next((p, n) for p, names in sorted(before.items()) for n in sorted(names) if n in latest)
    os.remove(os.path.join(base, partition, name))  # a latest slice's file, gone from storage

    r = run_cli("repair", f"{db}.t", "--yes", "--metastore", uri)
    assert r.returncode == 0, r.stdout + r.stderr
    c.sync_storage(db, "t")
    assert name in before[partition] and name not in mdt_listing(base).get(partition, {})
    assert mdt_listing(base) == storage_listing(base)
    assert c.get_hudi_table_stats(db, "t").mirrorLagVersions == 0
