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


def test_local_path_answers_as_urlparse_reads_it():
    """warehouse.local_path's shortcut for plain paths and `file:/` URIs: the answer of the parse it
    skips, for characters urlparse reads (`?`, `#`, `;`), drops (tab, CR, LF) or fails on (`[`)."""
    import random
    from urllib.parse import urlparse

    from store.storage.warehouse import local_path

    def parsed(uri):
        if not uri:
            return None
        try:
            p = urlparse(uri)
        except ValueError:
            return ValueError
        return (p.path if p.scheme else uri) if p.scheme in ("", "file") else None

    def ours(uri):
        try:
            return local_path(uri)
        except ValueError:
            return ValueError

    rng = random.Random(7)
    alphabet = list("/ab:;?#%= é[]@.\t\r\n") + ["file:", "FILE:", "//", "s3://"]
    uris = ["", "/", "/a/b", "file:/a/b", "file:///a/b", "file://host/a", "file:/a?b#c", "/a\n/b", "file:/a;b"]
    for _ in range(50_000):
        tail = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        uris.append(rng.choice(["", "/", "file:/", "file:", "file://", "file:///", "//"]) + tail)
    assert [ours(u) for u in uris] == [parsed(u) for u in uris]
