"""store/storage/warehouse.RealPaths gives os.path.realpath's answer for every path, through
symbolic links anywhere on the way (to directories, to links, relative, dangling, in a loop), for
paths that exist or not (a leading `//` too), and hands `.`, `..`, relative and trailing-slash paths to realpath."""

from __future__ import annotations

import os

from store.storage.warehouse import RealPaths


def test_same_answers_as_realpath(tmp_path):
    root = tmp_path / "r"
    (root / "t" / "a=1" / "b=1").mkdir(parents=True)
    (root / "t" / "a=2" / "b=2").mkdir(parents=True)
    (root / "elsewhere" / "b=3").mkdir(parents=True)
    os.symlink(root / "elsewhere", root / "t" / "a=3")  # a partition's parent is a link
    os.symlink("a=1", root / "t" / "rel")  # relative
    os.symlink(root / "t" / "rel", root / "t" / "linklink")  # a link to a link
    os.symlink(root / "nowhere", root / "t" / "dangling")
    os.symlink(root / "t" / "loop2", root / "t" / "loop1")
    os.symlink(root / "t" / "loop1", root / "t" / "loop2")
    os.symlink(root / "t", root / "tlink")  # the table through a link
    paths = []
    for top in (root / "t", root / "tlink"):
        for mid in ("a=1", "a=2", "a=3", "rel", "linklink", "dangling", "loop1", "missing"):
            for leaf in ("b=1", "b=2", "b=3", "missing"):
                paths.append(str(top / mid / leaf))
            paths.append(str(top / mid))
    paths += [str(root / "t" / "a=1" / ".." / "a=2"), str(root / "t" / "." / "a=1"), "relative/path",
              str(root / "t" / "a=1") + "/", "/", str(root), "/" + str(root / "t" / "a=3" / "b=3"), "//"]
    real = RealPaths()
    for _ in range(2):  # answers kept from the first pass
        assert [real(p) for p in paths] == [os.path.realpath(p) for p in paths]


def test_each_directory_looked_up_once(tmp_path, monkeypatch):
    base = tmp_path / "t"
    leaves = [base / f"a={i}" / f"b={i}" / f"c={i}" for i in range(50)]
    for leaf in leaves:
        leaf.mkdir(parents=True)
    looked: list[str] = []
    real_islink = os.path.islink
    monkeypatch.setattr(os.path, "islink", lambda p: looked.append(p) or real_islink(p))
    real = RealPaths()
    assert [real(str(p)) for p in leaves] == [os.path.realpath(p) for p in leaves]
    table_and_above = len(base.parts) - 1  # each once, the table's own directory included
    assert len(looked) == len(set(looked)) == table_and_above + 3 * 50
