"""Commit atomicity of the record-level index: the server is SIGKILLed while it completes commits
that insert, update and delete tens of thousands of keys each (180,000 over a run; 300,000 in the
thorough run); after every restart the instant is either COMPLETED with all of its key changes in the
index, or still INFLIGHT with none of them (the index is exactly that of the completed instants),
and retrying the completion applies them.

The kill lands at a seeded fraction of a completion's measured duration (receiving the request,
decoding the key blocks, the bulk load, the database commit, the answer). The test asserts that
enough kills interrupted a completion and that some of them left the instant INFLIGHT; while too
few did (where a kill lands depends on the machine's speed), more rounds kill in a completion's
first half.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid

import pytest
from thrift.transport.TTransport import TTransportException

from client import HudiMetastoreClient, file_group_keys, state_name
from hudi_format.table_config import HudiTableConfig
from tests.harness import ServerStartError, start_our_server, stop_process
from tests.harness.properties import thorough
from tests.test_commit_atomicity import own_database  # noqa: F401 - the fixture
from thrift_idl.hive_metastore.ttypes import Database

ROUNDS = 6 if thorough() else 4
MAX_EARLY_ROUNDS = 6  # rounds added, each killing in a completion's first half, while too few landed
KEYS_PER_COMMIT = 50_000 if thorough() else 30_000
TRANSPORT_ERRORS = (TTransportException, OSError, EOFError)


def _commit_json(ts: str, groups) -> str:
    stats: dict = {}
    for p, fid in groups:
        stats.setdefault(p, []).append({"fileId": fid, "path": f"{p}/{fid}_0-1-1_{ts}.parquet", "partitionPath": p,
                                        "fileSizeInBytes": 100, "prevCommit": "null", "numWrites": 1})
    return json.dumps({"partitionToWriteStats": stats, "compacted": False, "extraMetadata": {},
                       "operationType": "UPSERT"})


class Model:
    """The index the completed instants make: key -> (partition, file id, instant)."""

    def __init__(self):
        self.keys: dict[str, tuple[str, str, str]] = {}
        self.next_key = 0

    def next_commit(self, rng: random.Random, n: int) -> tuple[list, dict]:
        """(FileGroupKeys, the index after it): new keys in two new file groups, a few updates and
        deletes in existing ones."""
        fresh = [f"k{self.next_key + i:09d}" for i in range(n)]
        self.next_key += n
        groups: dict[tuple[str, str], dict[str, list[str]]] = {}
        p = f"p={rng.randrange(5)}"
        for i, part in enumerate((fresh[: n // 2], fresh[n // 2:])):
            groups[(p, f"f{uuid.uuid4().hex[:12]}-{i}")] = {"inserted": part, "updated": [], "deleted": []}
        old = rng.sample(sorted(self.keys), min(len(self.keys), 2000))
        for j, k in enumerate(old):
            where = self.keys[k][:2]
            groups.setdefault(where, {"inserted": [], "updated": [], "deleted": []})
            groups[where]["deleted" if j % 2 else "updated"].append(k)
        keys = [file_group_keys(p, f, **kinds) for (p, f), kinds in groups.items()]
        return keys, groups

    def apply(self, ts: str, groups: dict) -> None:
        for (p, f), kinds in groups.items():
            for k in kinds["deleted"]:
                del self.keys[k]
            for k in kinds["inserted"]:  # (an update in place keeps the key's instant)
                self.keys[k] = (p, f, ts)


def _verify(c: HudiMetastoreClient, db: str, model: Model, where: str) -> None:
    asked = sorted(model.keys) + [f"k{model.next_key + i:09d}" for i in range(-KEYS_PER_COMMIT, 0)]
    asked = sorted(set(asked))
    found = dict(zip(asked, c.lookup_record_keys(db, "t", asked)))
    got = {k: v for k, v in found.items() if v is not None}
    if got != model.keys:
        extra = sorted(set(got) - set(model.keys))[:3]
        missing = sorted(set(model.keys) - set(got))[:3]
        wrong = sorted(k for k in set(got) & set(model.keys) if got[k] != model.keys[k])[:3]
        pytest.fail(f"{where}: index != completed instants (extra {extra}, missing {missing}, wrong {wrong})")
    assert c.get_hudi_table_stats(db, "t").recordIndexKeys == len(model.keys), where


def test_killed_commits_leave_no_key_behind(own_database, tmp_path):  # noqa: F811
    rng = random.Random(20261124)
    db = "ria_" + uuid.uuid4().hex[:8]
    procs: list = []

    def start() -> HudiMetastoreClient:
        try:
            port, proc = start_our_server(own_database, tmp_path / "server", warehouse=tmp_path / "wh")
        except ServerStartError as e:
            pytest.fail(str(e), pytrace=False)
        procs.append(proc)
        return HudiMetastoreClient(f"thrift://127.0.0.1:{port}", timeout_s=120, retries=2, backoff_s=0.05)

    c = start()
    try:
        c.create_database(Database(name=db, description="", locationUri=None, parameters={}))
        c.register_hudi_table(HudiTableConfig(
            db_name=db, table_name="t", table_type="COPY_ON_WRITE", record_key_fields=["id"], partition_fields=["p"],
            hive_style_partitioning=True, base_path=str(tmp_path / "t"),
            properties={"hoodie.index.type": "RECORD_INDEX"}),
            [("id", "string"), ("p", "string")])
        model = Model()
        durations = []
        for _ in range(2):  # warm-up: a table to update and delete in, and the duration estimate
            keys, groups = model.next_commit(rng, KEYS_PER_COMMIT)
            ts = c.create_instant(db, "t", None, "commit", b"", 600).timestamp
            c.transition_to_inflight(db, "t", ts, "commit")
            t0 = time.monotonic()
            c.complete_instant(db, "t", ts, "commit", _commit_json(ts, groups), keys)
            durations.append(time.monotonic() - t0)
            model.apply(ts, groups)
        interrupted = rolled_back = 0
        for rnd in range(ROUNDS + MAX_EARLY_ROUNDS):
            early = rnd >= ROUNDS  # the seeded rounds landed too few kills mid-commit: kill early
            if early and interrupted >= 2 and rolled_back >= 1:
                break
            keys, groups = model.next_commit(rng, KEYS_PER_COMMIT)
            ts = c.create_instant(db, "t", None, "commit", b"", 600).timestamp
            meta = _commit_json(ts, groups)
            c.transition_to_inflight(db, "t", ts, "commit")
            proc = procs[-1]
            timer = threading.Timer(rng.uniform(0.05, 0.5 if early else 1.0) * max(durations), proc.kill)
            timer.start()
            try:
                t0 = time.monotonic()
                c.complete_instant(db, "t", ts, "commit", meta, keys)
                durations.append(time.monotonic() - t0)
                killed_mid = False
            except TRANSPORT_ERRORS:
                killed_mid = True
            timer.join()
            proc.wait(timeout=30)
            c.close()
            c = start()
            state = state_name(next(i for i in c.list_instants(db, "t") if i.timestamp == ts).state)
            where = f"round {rnd} ({'mid-commit' if killed_mid else 'after'}): {ts} {state}"
            if state == "COMPLETED":
                model.apply(ts, groups)
                _verify(c, db, model, where)
            else:
                assert state == "INFLIGHT", where
                _verify(c, db, model, where)  # none of its keys
                c.complete_instant(db, "t", ts, "commit", meta, keys)  # the retry applies them
                model.apply(ts, groups)
                _verify(c, db, model, where + " retried")
                rolled_back += 1
            interrupted += killed_mid
        assert interrupted >= 2 and rolled_back >= 1, (interrupted, rolled_back)
    finally:
        c.close()
        for p in procs:
            stop_process(p)
