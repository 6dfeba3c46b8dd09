"""Statistics of existing folders are counted with bounds (issue 41): a table or partition created on
a folder counts at most MAX_ENTRIES entries in MAX_SECONDS per request, never follows a symbolic
link, never fails the call, and lists nothing outside the warehouse and the configured roots.
In-process on SQLite (the counting is the same on every backend)."""

from __future__ import annotations

import logging
import os

from store.storage import folder_stats, ownership
from store.storage.boundary import canonical
from store.storage.folder_stats import FolderCounter, FolderStats
from thrift_idl.hive_metastore.ttypes import FieldSchema, Partition, SerDeInfo, StorageDescriptor, Table


def _write(path, files: dict[str, str]) -> None:
    for name, content in files.items():
        full = os.path.join(path, name)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(content)


def _counter(root, **bounds) -> FolderCounter:
    return FolderCounter([canonical(f"file:{root}")], **bounds)


# --------------------------------------------------------------------------- the counter


def test_counts_data_files_and_skips_hidden_ones(tmp_path):
    _write(tmp_path / "t", {"a": "12345", "sub/b": "123", ".hidden": "x", "_SUCCESS": "", "_tmp/c": "zz"})
    stats = _counter(tmp_path).stats(f"file:{tmp_path}/t")
    assert (stats.files, stats.size, stats.complete) == (2, 8, True)


def test_symbolic_links_are_never_followed_and_broken_ones_do_not_fail(tmp_path):
    _write(tmp_path / "t", {"a": "12345"})
    _write(tmp_path / "elsewhere", {"big": "x" * 1000, "d/e": "y" * 100})
    os.symlink(tmp_path / "elsewhere" / "big", tmp_path / "t" / "file-link")
    os.symlink(tmp_path / "elsewhere", tmp_path / "t" / "dir-link")
    os.symlink(tmp_path / "nowhere", tmp_path / "t" / "broken")
    os.symlink(tmp_path / "t" / "loop", tmp_path / "t" / "loop")
    stats = _counter(tmp_path).stats(f"file:{tmp_path}/t")
    assert (stats.files, stats.size, stats.complete) == (1, 5, True)


def test_nothing_outside_the_roots_is_listed(tmp_path):
    _write(tmp_path / "outside", {"a": "1"})
    (tmp_path / "wh").mkdir()
    counter = _counter(tmp_path / "wh")
    assert counter.stats(f"file:{tmp_path}/outside") is None
    assert counter.stats(f"{tmp_path}/wh/../outside") is None
    os.symlink(tmp_path / "outside", tmp_path / "wh" / "link-out")  # a link in the warehouse that points out
    assert counter.stats(f"file:{tmp_path}/wh/link-out") is None
    assert counter.stats("s3a://bucket/x") is None
    assert FolderCounter(None).stats(f"file:{tmp_path}/outside").files == 1  # roots None: anywhere


def test_the_entry_bound_is_shared_by_the_folders_of_one_request(tmp_path):
    for d in ("p1", "p2"):
        _write(tmp_path / d, {f"f{i}": "x" for i in range(30)})
    counter = _counter(tmp_path, max_entries=50)
    assert counter.stats(f"file:{tmp_path}/p1").complete
    second = counter.stats(f"file:{tmp_path}/p2")
    assert not second.complete and "more than 50 entries" in second.why
    assert not counter.stats(f"file:{tmp_path}/p1").complete  # used up for the rest of the request
    assert _counter(tmp_path, max_entries=50).stats(f"file:{tmp_path}/p2").complete  # a new request


def test_the_time_bound(tmp_path, monkeypatch):
    _write(tmp_path / "t", {f"f{i}": "x" for i in range(300)})
    clock = iter(range(0, 10_000, 1))
    monkeypatch.setattr(folder_stats, "monotonic", lambda: next(clock))
    stats = _counter(tmp_path, max_seconds=2).stats(f"file:{tmp_path}/t")
    assert not stats.complete and "more than 2 s" in stats.why


def test_an_unreadable_folder_makes_the_count_incomplete(tmp_path, monkeypatch):
    _write(tmp_path / "t", {"a": "1", "locked/b": "2"})
    real_scandir = os.scandir

    def scandir(path):  # as for a folder without read permission (the tests may run as root)
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    stats = _counter(tmp_path).stats(f"file:{tmp_path}/t")
    assert not stats.complete and "cannot read" in stats.why and "Permission denied" in stats.why


def test_not_a_folder_counts_nothing(tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "broken").symlink_to(tmp_path / "nowhere")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    for name in ("missing", "file", "broken", "loop"):
        assert _counter(tmp_path).stats(f"file:{tmp_path}/{name}") == FolderStats(0, 0), name
    _write(tmp_path / "p", {f"f{i}": "x" for i in range(3)})
    used_up = _counter(tmp_path, max_entries=2)
    assert not used_up.stats(f"file:{tmp_path}/p").complete
    assert used_up.stats(f"file:{tmp_path}/missing") == FolderStats(0, 0)  # nothing to count: complete


# --------------------------------------------------------------------------- through the store


def _sd(location=None) -> StorageDescriptor:
    return StorageDescriptor(cols=[FieldSchema("a", "string")], location=location,
                             serdeInfo=SerDeInfo(parameters={}), parameters={})


def _table(name, location, keys=()) -> Table:
    return Table(tableName=name, dbName="db", sd=_sd(location), tableType="EXTERNAL_TABLE",
                 partitionKeys=[FieldSchema(k, "string") for k in keys], parameters={"EXTERNAL": "TRUE"})


def test_a_table_on_a_folder_with_a_broken_link_is_created_and_counted(sqlite_services, tmp_path):
    folder = tmp_path / "wh" / "data"
    _write(folder, {"a": "123", "sub/b": "45"})
    os.symlink(tmp_path / "gone", folder / "sub" / "broken")
    sqlite_services.tables.create_table(_table("t", f"file:{folder}"))
    params = sqlite_services.tables.get_table("db", "t").parameters
    assert (params["numFiles"], params["totalSize"]) == ("2", "5")


def test_a_table_outside_the_roots_gets_no_statistics(sqlite_services, tmp_path):
    """With authorization on (a caller whose locations are checked; an admin may place a table
    anywhere) nothing outside the roots is listed; with it off the folder is counted, as Hive does."""
    _write(tmp_path / "system", {f"f{i}": "data" for i in range(5)})
    ownership.set_claimant(ownership.Claimant("admin", True, lambda name, kind: True))
    try:
        sqlite_services.tables.create_table(_table("t", f"file:{tmp_path}/system"))
    finally:
        ownership.set_claimant(None)
    params = sqlite_services.tables.get_table("db", "t").parameters
    assert "numFiles" not in params and "totalSize" not in params
    sqlite_services.tables.create_table(_table("t2", f"file:{tmp_path}/system"))
    params = sqlite_services.tables.get_table("db", "t2").parameters
    assert (params["numFiles"], params["totalSize"]) == ("5", "20")


def test_a_big_folder_records_no_basic_statistics(sqlite_services, tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(folder_stats, "MAX_ENTRIES", 20)
    folder = tmp_path / "wh" / "big"
    _write(folder, {f"f{i}": "x" for i in range(50)})
    with caplog.at_level(logging.INFO, logger="store.storage.folder_stats"):
        sqlite_services.tables.create_table(_table("t", f"file:{folder}"))
    params = sqlite_services.tables.get_table("db", "t").parameters
    assert not {"numFiles", "totalSize", "COLUMN_STATS_ACCURATE"} & set(params)
    assert "more than 20 entries" in caplog.text


def test_partitions_share_the_bound_of_their_request(sqlite_services, tmp_path, monkeypatch):
    monkeypatch.setattr(folder_stats, "MAX_ENTRIES", 25)
    base = tmp_path / "wh" / "pt"
    for v in ("a", "b"):
        _write(base / f"p={v}", {f"f{i}": "x" for i in range(20)})
    sqlite_services.tables.create_table(_table("pt", f"file:{base}", keys=("p",)))
    sqlite_services.partitions.add_partitions("db", "pt", [
        Partition(values=[v], dbName="db", tableName="pt", sd=_sd(f"file:{base}/p={v}"), parameters={})
        for v in ("a", "b")])
    got = {tuple(p.values): p.parameters for p in sqlite_services.partitions.get_partitions("db", "pt", -1)}
    assert got[("a",)]["numFiles"] == "20"
    assert "numFiles" not in got[("b",)]


def test_paths_are_resolved_as_realpath_resolves_them(tmp_path):
    """The counter resolves a request's paths with their parents looked at once (partitions share
    them): the same as os.path.realpath, links at any level, missing parts and odd forms included."""
    (tmp_path / "wh" / "t" / "a=1").mkdir(parents=True)
    (tmp_path / "elsewhere" / "b=2").mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere", tmp_path / "wh" / "t" / "link")
    os.symlink("../t/a=1", tmp_path / "wh" / "t" / "rel")
    os.symlink("loop", tmp_path / "wh" / "loop")
    base = str(tmp_path / "wh")
    paths = [f"{base}/t/a=1", f"{base}/t/a=1/c=3", f"{base}/t/link/b=2", f"{base}/t/link/b=2/x",
             f"{base}/t/rel", f"{base}/t/rel/y", f"{base}/missing/z", f"{base}/loop/q", f"{base}//t/./a=1",
             f"{base}/t/../t/link", "relative/p", "/"]
    counter = FolderCounter(None)
    for p in paths + paths:
        assert counter._reals(p) == os.path.realpath(p), p


def test_without_roots_paths_are_counted_as_given(tmp_path, monkeypatch):
    """With no roots to check a path against (authorization off), a plain absolute path is counted
    without being resolved first: the system follows its links as realpath would, so the counts
    are the same; paths with `.` or `..` are still resolved (a missing part before `..`)."""
    _write(tmp_path / "elsewhere" / "b=2", {"f1": "123", "sub/f2": "45"})
    _write(tmp_path / "wh" / "t" / "a=1", {"g": "1"})
    os.symlink(tmp_path / "elsewhere", tmp_path / "wh" / "t" / "link")
    os.symlink("loop", tmp_path / "wh" / "loop")
    base = str(tmp_path / "wh")
    paths = [f"{base}/t/a=1", f"{base}/t/link/b=2", f"{base}/t/link", f"{base}/loop/q", f"{base}/missing",
             f"{base}/missing/../t/a=1", f"{base}/t/./a=1"]
    expected = [FolderCounter([canonical(f"file:{tmp_path}")]).stats(p) for p in paths]
    assert [(s.files, s.size) for s in expected] == [(1, 1), (2, 5), (2, 5), (0, 0), (0, 0), (1, 1), (1, 1)]
    looked: list[str] = []
    real_islink = os.path.islink
    monkeypatch.setattr(os.path, "islink", lambda p: looked.append(p) or real_islink(p))
    got = [FolderCounter(None).stats(p) for p in paths]
    assert got == expected
    assert not [p for p in looked if "missing" not in p and "/./" not in p]
