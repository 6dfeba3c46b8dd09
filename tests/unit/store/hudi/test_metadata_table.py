"""The metadata table the storage mirror writes (store/hudi/metadata_table, issue 45): its `files`
partition lists what the server's snapshot holds after every instant (commits, deltacommits, a
rollback, a clean), read back as Hudi's reader merges it: the base HFile, then the log blocks of
instants completed on the data table's timeline (or the metadata table's own bootstrap).

hudi-rs 0.5 uses a metadata table only for tables of version 8 and later (version 6 tables are
listed from storage even when `hoodie.table.metadata.partitions` says `files`), so it is the oracle
of the bytes here on a version-8 copy of a fixture; Hudi 1.2's Java reader reads the version-6
tables the mirror writes (docs/hudi.md, "The metadata table")."""

from __future__ import annotations

import json
import os
import shutil
import zipfile

import pytest
from sqlalchemy import select

from hudi_format import layout
from hudi_format import metadata_column_stats as C
from hudi_format import metadata_table as M
from hudi_format.config_keys import METADATA_ENABLE, METADATA_PARTITIONS
from hudi_format.storage import TableStorage
from hudi_format.table_config import HudiTableConfig, read_properties
from store.db import schema as S
from store.db.database import Store
from store.db.migrations import upgrade
from store.services import build_services
from tests.test_hudi_fixtures import V6, _read, completed_instants, unzip_table
from tests.test_storage_mirror import attach, copy_data_files
from tests.unit.hudi_format.test_metadata_table_files import HUDI_WRITTEN
from thrift_idl.hive_metastore.ttypes import Database

hudi = pytest.importorskip("hudi")

FIXTURES = [p for p in V6 if "kryo" not in os.path.basename(p) and "empty" not in os.path.basename(p)]


def mdt_listing(base: str, archived: bool = False) -> dict[str, dict[str, int]]:
    """The files partition as a reader merges it: base file, then log blocks in log version order,
    a block only when its instant completed on the data table's timeline (or is the metadata
    table's own; with `archived`, also when it is archived there, as Hudi's
    getValidInstantTimestamps takes every completed deltacommit of the metadata table) and as a
    deltacommit of the metadata table."""
    files = os.path.join(base, ".hoodie", "metadata", "files")
    mdt_hoodie = os.path.join(base, ".hoodie", "metadata", ".hoodie")
    data_done = {ts for ts, _a in completed_instants(base)}
    mdt_done = {n.split(".")[0] for n in os.listdir(mdt_hoodie) if n.endswith(".deltacommit")}
    parsed = {n: p for n in os.listdir(files) if (p := M.parse_files_partition_name(n))}
    # the latest file slice: the newest base file whose deltacommit completed, and its log files
    latest = max(p[1] for p in parsed.values() if p[0] == "base" and p[1] in mdt_done)
    batches = [M.read_base_file(open(os.path.join(files, M.base_file_name(latest)), "rb").read())]
    logs = [n for n, p in parsed.items() if p[0] == "log" and p[1] == latest]
    for n in sorted(logs, key=lambda n: parsed[n][2]):
        for instant, records in M.read_log_file(open(os.path.join(files, n), "rb").read()):
            if instant in mdt_done and (archived or instant in data_done or instant.startswith("0" * 14)):
                batches.append(records)
    return M.merge_files_records(batches)


def server_listing(store, db: str, tbl: str) -> dict[str, dict[str, int]]:
    f = S.files
    out: dict[str, dict[str, int]] = {}
    with store.read() as conn:
        tbl_id = conn.execute(select(S.tbl.c.tbl_id).join(S.db, S.db.c.db_id == S.tbl.c.db_id).where(
            S.db.c.name == db, S.tbl.c.name == tbl)).scalar_one()
        for r in conn.execute(select(f.c.partition_path, f.c.name, f.c.size).where(
                f.c.tbl_id == tbl_id, f.c.is_deleted.is_(False))):
            out.setdefault(r.partition_path, {})[r.name] = r.size
    return out


def data_properties(base: str) -> dict[str, str]:
    return read_properties(open(os.path.join(base, ".hoodie", "hoodie.properties")).read())


def replay(tmp_path, zip_path: str, enable: bool = True, compact_after: int | None = None):
    orig = unzip_table(zip_path, tmp_path / "orig")
    new = str(tmp_path / "new" / os.path.basename(orig))
    copy_data_files(orig, new)
    props = read_properties(open(os.path.join(orig, ".hoodie", "hoodie.properties")).read())
    if enable:
        props[METADATA_ENABLE] = "true"
    store = Store(f"sqlite:///{tmp_path / 'm.db'}", str(tmp_path / "wh"))
    upgrade(store.engine)
    built = build_services(store)
    tables, timeline = built.tables, built.timeline
    tables.create_database(Database(name="fx"))
    name = props["hoodie.table.name"].lower()
    timeline.register_table(HudiTableConfig.from_properties("fx", name, props, new))
    mirror = attach(timeline)
    if compact_after is not None:
        mirror.metadata_table.compact_after = compact_after
    hoodie = os.path.join(orig, ".hoodie")
    steps = []
    for ts, action in completed_instants(orig):
        requested = _read(os.path.join(hoodie, f"{ts}.{action}.requested"))
        inflight = _read(os.path.join(hoodie, f"{ts}.{action}.inflight")) or \
            _read(os.path.join(hoodie, f"{ts}.inflight"))
        timeline.create_instant("fx", name, ts, action, requested, 60)
        timeline.transition_to_inflight("fx", name, ts, action, inflight)
        timeline.complete_instant("fx", name, ts, action, _read(os.path.join(hoodie, f"{ts}.{action}")))
        assert mirror.lag("fx", name) == 0
        if enable:
            assert mdt_listing(new) == server_listing(timeline.store, "fx", name), ts
        steps.append(ts)
    timeline.clean_service = built.clean  # for the tests that clean
    return orig, new, name, timeline, mirror, steps


CASES = [(p, None) for p in FIXTURES] + [(p, 1) for p in FIXTURES if "delete_blocks" in p or "rollback" in p]


@pytest.mark.parametrize(("zip_path", "compact_after"), CASES,
                         ids=[os.path.basename(p)[:-4] + ("-compacted" if c else "") for p, c in CASES])
def test_files_partition_follows_every_instant(tmp_path, zip_path, compact_after):
    """After every instant (`compacted`: every second instant writes a new base file, merging
    the slice before it, whose predecessor is deleted)."""
    orig, new, name, timeline, mirror, steps = replay(tmp_path, zip_path, compact_after=compact_after)
    store = timeline.store
    assert data_properties(new)[METADATA_PARTITIONS] == "column_stats,files"  # column_stats: on by default
    assert mdt_listing(new) == server_listing(store, "fx", name)
    mdt = os.path.join(new, ".hoodie", "metadata")
    mdt_props = read_properties(open(os.path.join(mdt, ".hoodie", "hoodie.properties")).read())
    assert mdt_props["hoodie.table.type"] == "MERGE_ON_READ" and mdt_props["hoodie.table.base.file.format"] == "HFILE"
    assert mdt_props["hoodie.table.name"] == f"{name}_metadata"
    assert mdt_props["hoodie.table.checksum"] == str(layout.table_checksum(mdt_props))
    # one deltacommit per data instant (after the bootstrap), each requested -> inflight -> completed
    done = sorted(n.split(".")[0] for n in os.listdir(os.path.join(mdt, ".hoodie")) if n.endswith(".deltacommit"))
    assert done == [M.INIT_INSTANT, C.INIT_INSTANT, *steps]
    bases = sorted(p[1] for n in os.listdir(os.path.join(mdt, "files")) if (p := M.parse_files_partition_name(n))
                   and p[0] == "base")
    if compact_after and len(steps) >= 4:  # compacted at the 2nd and 4th instants: two slices kept
        assert bases == [steps[1], steps[3]]
    elif not compact_after:
        assert bases == [M.INIT_INSTANT]
    # hudi-rs (storage listing for version 6) still reads the table as Hudi wrote it
    ours = sorted(f.base_file_name or "" for f in hudi.HudiTable(new).get_file_slices())
    assert ours == sorted(f.base_file_name or "" for f in hudi.HudiTable(orig).get_file_slices())

    # a mirror that finds the metadata table half written (its bootstrap not completed) or gone
    # writes it again from the rows
    os.remove(os.path.join(mdt, ".hoodie", f"{M.INIT_INSTANT}.deltacommit"))
    mirror.metadata_table.forget(new)
    mirror.sync("fx", name)
    assert mdt_listing(new) == server_listing(store, "fx", name)
    assert sorted(n for n in os.listdir(os.path.join(mdt, ".hoodie")) if n.endswith(".deltacommit")) == [
        f"{M.INIT_INSTANT}.deltacommit", f"{C.INIT_INSTANT}.deltacommit"]
    shutil.rmtree(mdt)
    mirror.metadata_table.forget(new)
    mirror.sync("fx", name)
    assert mdt_listing(new) == server_listing(store, "fx", name)
    # one Hudi's writer left (an adopted table): written again from the rows, not continued
    shutil.rmtree(mdt)
    with zipfile.ZipFile(HUDI_WRITTEN) as z:
        z.extractall(tmp_path / "hudi")
    shutil.copytree(tmp_path / "hudi" / "m6_metadata_table" / ".hoodie" / "metadata", mdt)
    mirror.metadata_table.forget(new)
    mirror.sync("fx", name)
    assert mdt_listing(new) == server_listing(store, "fx", name)
    assert sorted(n for n in os.listdir(os.path.join(mdt, "files")) if n.endswith(".hfile")) == [
        M.base_file_name(M.INIT_INSTANT)]


def test_clean_and_later_commits(tmp_path):
    """A clean marks the files it deleted; a commit after it adds its files; the retry of an
    instant whose deltacommit is on storage writes nothing twice."""
    zip_path = next(p for p in FIXTURES if "cow_v6_simplekeygen_nonhivestyle" in p)
    orig, new, name, timeline, mirror, _ = replay(tmp_path, zip_path)
    before = server_listing(timeline.store, "fx", name)
    clean_ts, _deleted = timeline.clean_service.clean("fx", name, "KEEP_LATEST_FILE_VERSIONS", 1)
    assert clean_ts
    after = server_listing(timeline.store, "fx", name)
    assert sum(map(len, after.values())) < sum(map(len, before.values()))
    assert mdt_listing(new) == after

    # a base file a crashed compaction left (its deltacommit never completed) is no file slice
    files = os.path.join(new, ".hoodie", "metadata", "files")
    orphan = M.base_file_name("29990101000000000")
    shutil.copy(os.path.join(files, M.base_file_name(M.INIT_INSTANT)), os.path.join(files, orphan))
    tl = timeline
    inst = tl.create_instant("fx", name, None, "commit", b"", 60)
    tl.transition_to_inflight("fx", name, inst.ts, "commit", b"")
    part = sorted(after)[0]  # a partition the table has (a new one makes the server create its folder: slow
    path = f"{part}/abc-0_0-1-1_{inst.ts}.parquet"  # on SQLite while the commit holds the write lock)
    tl.complete_instant("fx", name, inst.ts, "commit", json.dumps({
        "partitionToWriteStats": {part: [{"fileId": "abc-0", "path": path, "partitionPath": part,
                                          "fileSizeInBytes": 123, "prevCommit": "null", "numWrites": 1}]},
        "operationType": "INSERT", "extraMetadata": {}}).encode())
    listing = mdt_listing(new)
    assert listing == server_listing(timeline.store, "fx", name) and listing[part][os.path.basename(path)] == 123
    logs_of = {p[1] for n in os.listdir(files) if (p := M.parse_files_partition_name(n)) and p[0] == "log"}
    assert "29990101000000000" not in logs_of, os.listdir(files)  # its log went to the committed slice

    logs = sorted(n for n in os.listdir(files) if ".log." in n)
    assert not mirror.metadata_table.apply(TableStorage(new), clean_ts, "clean", b"{}")  # done already
    assert sorted(n for n in os.listdir(files) if ".log." in n) == logs


def test_off_by_default(tmp_path):
    zip_path = next(p for p in FIXTURES if "cow_v6_nonpartitioned" in p)
    _orig, new, _name, _timeline, _mirror, _ = replay(tmp_path, zip_path, enable=False)
    assert not os.path.exists(os.path.join(new, ".hoodie", "metadata"))
    assert METADATA_PARTITIONS not in data_properties(new)


# --- hudi-rs reads the bytes (a version-8 table: the only kind it reads a metadata table of) ------

V8_FIXTURE = os.path.join(os.path.dirname(V6[0]), "cow_v8_simplekeygen_nonhivestyle.zip")


def test_hudi_rs_lists_files_from_our_metadata_table(tmp_path):
    """Our base HFile, log file and records, laid out for a version-8 table by hand (the timeline's
    version-8 names), are what hudi-rs lists: a file on storage the metadata table does not name is
    not listed, a file it names as deleted is not either, and every other one is."""
    base = unzip_table(V8_FIXTURE, tmp_path)
    parts = {p: sorted(n for n in os.listdir(os.path.join(base, p)) if n.endswith(".parquet"))
             for p in ("10", "20", "30")}
    size = {(p, n): os.path.getsize(os.path.join(base, p, n)) for p, ns in parts.items() for n in ns}
    commits = sorted({n[-len("20250713011316909.parquet"):-len(".parquet")] for ns in parts.values() for n in ns})
    first, second = commits

    def of(ts):
        return {p: {n: size[(p, n)] for n in ns if n.endswith(f"_{ts}.parquet")} for p, ns in parts.items()
                if any(n.endswith(f"_{ts}.parquet") for n in ns)}

    expected = sorted(n for ns in parts.values() for n in ns)
    assert len(expected) == 4
    md = os.path.join(base, ".hoodie", "metadata")
    os.makedirs(os.path.join(md, ".hoodie", "timeline"))
    os.makedirs(os.path.join(md, "files"))
    props = M.metadata_properties("v8_simplekeygen_nonhivestyle")
    props.update({"hoodie.table.version": "8", "hoodie.timeline.layout.version": "2",
                  "hoodie.timeline.path": "timeline", "hoodie.table.initial.version": "8"})
    with open(os.path.join(md, ".hoodie", "hoodie.properties"), "wb") as fh:
        fh.write(layout.java_properties(props, "test"))
    with open(os.path.join(md, "files", M.base_file_name(M.INIT_INSTANT)), "wb") as fh:
        fh.write(M.base_file(M.files_records(of(first))))
    # the second commit's files, and one deleted: the first commit's file in partition 10
    gone = [n for n in parts["10"] if n.endswith(f"_{first}.parquet")]
    with open(os.path.join(md, "files", M.log_file_name(M.INIT_INSTANT, 1)), "wb") as fh:
        fh.write(M.log_file_bytes(second, M.files_records(of(second), {"10": gone})))
    for ts, done in (((M.INIT_INSTANT, "00000000000000011"), (second, "20250713011317300"))):
        for suffix in ("deltacommit.requested", "deltacommit.inflight"):
            open(os.path.join(md, ".hoodie", "timeline", f"{ts}.{suffix}"), "w").close()
        open(os.path.join(md, ".hoodie", "timeline", f"{ts}_{done}.deltacommit"), "w").close()
    with open(os.path.join(base, ".hoodie", "hoodie.properties"), "a") as fh:
        fh.write(f"{METADATA_PARTITIONS}=files\n")
    stray = "22222222-3768-4e87-b12c-8d33efd22b55-0_0-136-193_" + second + ".parquet"
    shutil.copy(os.path.join(base, "10", parts["10"][0]), os.path.join(base, "10", stray))

    listed = sorted(f.base_file_name for f in hudi.HudiTable(base).get_file_slices())
    assert stray not in listed
    assert listed == sorted(set(expected) - set(gone))  # the deleted one's group has its newer slice
    props_file = os.path.join(base, ".hoodie", "hoodie.properties")
    text = open(props_file).read()
    with open(props_file, "w") as fh:  # without `files` listed, hudi-rs lists storage
        fh.write(text.replace(f"{METADATA_PARTITIONS}=files\n", ""))
    assert stray in [f.base_file_name for f in hudi.HudiTable(base).get_file_slices()]


def test_on_an_object_store(monkeypatch):
    """Every file one PUT (fsspec's memory filesystem stands for an object store): bootstrap, log
    files, a compaction, read back from the store."""
    from store.hudi.metadata_table import FILES_DIR, MetadataTableWriter

    base = f"memory://mdt-{os.getpid()}/t"
    st = TableStorage(base)
    assert st.object_store
    writer = MetadataTableWriter(None, lambda: 0, compact_after=2)  # type: ignore[arg-type]
    monkeypatch.setattr(writer, "live_files", lambda ref: {"p=1": {"a-0_0-1-1_1.parquet": 10}})

    class Ref:
        base_path = base
        config = HudiTableConfig(db_name="d", table_name="t", table_type="COPY_ON_WRITE", record_key_fields=["id"],
                                 partition_fields=["p"])

    writer.bootstrap(st, Ref())  # type: ignore[arg-type]
    assert writer.ready(st, base)
    for i in range(2, 6):
        ts = f"2024010100000000{i}"
        meta = json.dumps({"partitionToWriteStats": {"p=1": [{"path": f"p=1/b{i}-0_0-1-1_{ts}.parquet",
                                                              "fileId": f"b{i}-0", "fileSizeInBytes": i}]}})
        assert writer.apply(st, ts, "commit", meta.encode())
    names = sorted(st.listing(FILES_DIR))
    latest = max(p[1] for n in names if (p := M.parse_files_partition_name(n)) and p[0] == "base")
    batches = [M.read_base_file(st.read(f"{FILES_DIR}/{M.base_file_name(latest)}") or b"")]
    for n in names:
        p = M.parse_files_partition_name(n)
        if p and p[0] == "log" and p[1] == latest:
            batches += [r for _i, r in M.read_log_file(st.read(f"{FILES_DIR}/{n}") or b"")]
    assert M.merge_files_records(batches) == {"p=1": {"a-0_0-1-1_1.parquet": 10, **{
        f"b{i}-0_0-1-1_2024010100000000{i}.parquet": i for i in range(2, 6)}}}
    st.fs.rm(st.path(""), recursive=True)


def test_bench_runs_small(capsys):
    from bench.metadata_table_bench import main

    assert main(["--files", "200", "--partitions", "2", "--commit-files", "5", "--commits", "4",
                 "--compact-after", "2"]) == 0
    assert "median compaction" in capsys.readouterr().out
