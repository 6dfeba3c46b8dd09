"""The archive log block with pauses (a server's background archive gives way to commits between
its pieces): the same bytes as without, read back as the instants, and pauses between entries and
within a commit's write stats (hudi_format/archived_timeline.py, avro_metadata.record_bytes)."""

from __future__ import annotations

import json

from hudi_format import archived_timeline as A
from hudi_format.avro_metadata import PAUSE_EVERY


def _commit(ts: str, files: int) -> bytes:
    stats = {f"p={k}": [{"fileId": f"f{k}-{i}-0", "path": f"p={k}/f{k}-{i}-0_0-1-1_{ts}.parquet",
                         "partitionPath": f"p={k}", "prevCommit": "null", "numWrites": 3,
                         "fileSizeInBytes": 100 + i, "totalWriteBytes": 100 + i} for i in range(files // 4)]
             for k in range(4)}
    return json.dumps({"partitionToWriteStats": stats, "compacted": False, "operationType": "UPSERT",
                       "extraMetadata": {"schema": ""}}).encode()


def test_pauses_change_no_byte():
    instants = [A.ArchivedInstant(ts, ts, "commit", _commit(ts, n), b"", b"")
                for ts, n in (("20240101000000001", 2 * PAUSE_EVERY + 8), ("20240101000000002", 8))]
    calls: list[int] = []
    paused = A.archive_log_block(instants, lambda: calls.append(1))
    assert paused == A.archive_log_block(instants)
    # three states of each instant, and two pauses within the first commit's stats
    assert len(calls) == 3 * len(instants) + 2
    times = A.archived_times(paused)
    assert times == [i.ts for i in instants for _ in range(3)]
