"""The archive log block with pauses (a server's background archive gives way to commits between
its pieces): the same bytes as without, read back as the instants, and pauses between entries and
within a commit's write stats (hudi_format/archived_timeline.py, avro_metadata.record_bytes)."""

from __future__ import annotations

import json

from hudi_format import archived_timeline as A
from hudi_format.avro_metadata import PAUSE_EVERY


def commit_json(ts: str, files: int) -> bytes:
    stats = {f"p={k}": [{"fileId": f"f{k}-{i}-0", "path": f"p={k}/f{k}-{i}-0_0-1-1_{ts}.parquet",
                         "partitionPath": f"p={k}", "prevCommit": "null", "numWrites": 3,
                         "fileSizeInBytes": 100 + i, "totalWriteBytes": 100 + i} for i in range(files // 4)]
             for k in range(4)}
    return json.dumps({"partitionToWriteStats": stats, "compacted": False, "operationType": "UPSERT",
                       "extraMetadata": {"schema": ""}}).encode()


def test_pauses_change_no_byte():
    instants = [A.ArchivedInstant(ts, ts, "commit", commit_json(ts, n), b"", b"")
                for ts, n in (("20240101000000001", 2 * PAUSE_EVERY + 8), ("20240101000000002", 8))]
    calls: list[int] = []
    paused = A.archive_log_block(instants, lambda: calls.append(1))
    assert paused == A.archive_log_block(instants)
    # three states of each instant, and two pauses within the first commit's stats
    assert len(calls) == 3 * len(instants) + 2
    times = A.archived_times(paused)
    assert times == [i.ts for i in instants for _ in range(3)]


def test_the_next_archive_reads_back_only_an_archive_log_it_did_not_write(tmp_path, monkeypatch):
    """The archiver remembers the newest instant of the archive log it wrote last; it decodes the
    file again only when the file there is another (another writer's, or changed)."""
    from hudi_format.storage import TableStorage
    from hudi_format.timeline_layout import timeline_layout
    from store.hudi import timeline_archiver

    st = TableStorage(str(tmp_path / "t"))
    layout = timeline_layout(6)
    props = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"}
    files: dict[str, int | None] = {}
    reads: list[int] = []
    real = A.archived_times
    monkeypatch.setattr(A, "archived_times", lambda data: reads.append(1) or real(data))

    def add(ts: str) -> None:
        for name, data in ((f"{ts}.commit.requested", b""), (f"{ts}.inflight", b""),
                           (f"{ts}.commit", commit_json(ts, 8))):
            st.put(f"{layout.timeline_dir}/{name}", data)
            files[name] = len(data)

    stamps = [f"202401010000000{n:02d}" for n in range(12)]
    for ts in stamps[:4]:
        add(ts)
    assert timeline_archiver.archive(st, layout, files, props) == stamps[:2]
    for ts in stamps[4:6]:
        add(ts)
    assert timeline_archiver.archive(st, layout, files, props) == stamps[2:4]
    assert reads == []  # the log it wrote: not decoded again
    folder = st.listing(layout.archive_dir)
    last = max(folder, key=lambda n: A.archive_log_version(n) or 0)
    st.put(f"{layout.archive_dir}/{last}", st.read(f"{layout.archive_dir}/{last}") + b"")  # same bytes
    for ts in stamps[6:8]:
        add(ts)
    assert timeline_archiver.archive(st, layout, files, props) == stamps[4:6] and reads == []
    other = A.archive_log_block([A.ArchivedInstant(stamps[6], stamps[6], "commit", commit_json(stamps[6], 8), b"",
                                                   b"")])
    version = max(A.archive_log_version(n) or 0 for n in st.listing(layout.archive_dir))
    st.put(f"{layout.archive_dir}/{A.archive_log_name(version + 1)}", other)  # another writer's
    for ts in stamps[8:10]:
        add(ts)
    assert timeline_archiver.archive(st, layout, files, props) == stamps[6:8] and reads == [1]
    # the other writer archived stamps[6]: only stamps[7] is new to the log
    times = [t for n in sorted(st.listing(layout.archive_dir), key=lambda n: A.archive_log_version(n) or 0)
             for t in real(st.read(f"{layout.archive_dir}/{n}") or b"")]
    assert sorted(set(times)) == stamps[:8] and times.count(stamps[6]) == 3
