"""The recursive listing of a local table (the operating system's own) finds what fsspec's does."""

from hudi_format.listing import _walk, _walk_local
from hudi_format.storage import TableStorage


def test_local_walk_equals_fsspec_walk(tmp_path):
    files = {
        "a.txt": 1, "p=1/x.parquet": 22, "p=1/.hoodie_partition_metadata": 5, "p=1/q=2/y.parquet": 333,
        "p=2/.hidden/z.parquet": 4, ".hoodie/timeline/1.commit": 6, "__MACOSX/m": 7, "p=3/sub/.crc": 8,
        "p=3/_SUCCESS": 0,
    }
    for rel, size in files.items():
        path = tmp_path / "t" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)
    (tmp_path / "t" / "empty" / "dir").mkdir(parents=True)
    st = TableStorage(str(tmp_path / "t"))
    assert st.local
    ours = sorted(_walk_local(st.root))
    assert ours == sorted(_walk(st, st.root))
    assert ("p=1/q=2", "y.parquet", 333) in ours and ("", "a.txt", 1) in ours
    assert not any(f.startswith((".hoodie", "__MACOSX", "p=2/.hidden")) for f, _, _ in ours)
    assert list(_walk_local(str(tmp_path / "absent"))) == []
