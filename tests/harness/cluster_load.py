"""Writers over several metastore servers, and the check that what they were told is what every
server answers afterwards (issue 40's fault tests).

Each writer thread has its own client on one server (the others follow it in the client's URI
list, so it fails over) and, in turn, adds a partition to an HMS table and commits a Hudi instant
of two new files in two partitions. A write is *acknowledged* when its call answered success; a
call that failed is not (it may or may not have happened). `check(ports)` then asks each server:

* every acknowledged partition is there, and every partition there was at least attempted;
* every acknowledged Hudi commit is completed, every completed instant was attempted, and every
  completed instant has exactly the two files it committed (no half commit), nothing else;
* every server answers the same (each reads its own database node).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field

from client import HudiMetastoreClient
from hudi_format.table_config import HudiTableConfig
from thrift_idl.hive_metastore.ttypes import Database, FieldSchema, SerDeInfo, StorageDescriptor, Table

DB = "cluster_load"
HMS_TABLE = "events"
HUDI_TABLE = "trips"


def uris(ports: list[int], first: int) -> str:
    """The URI list of a client that prefers server `first`, the others after it."""
    order = ports[first:] + ports[:first]
    return ",".join(f"thrift://127.0.0.1:{p}" for p in order)


def setup(port: int, warehouse: str) -> None:
    """The database, an HMS table partitioned by `p` and a Hudi table, through one server."""
    with HudiMetastoreClient(f"thrift://127.0.0.1:{port}", retries=2) as c:
        c.create_database(Database(name=DB, locationUri=f"file:{warehouse}/{DB}"))
        sd = StorageDescriptor(cols=[FieldSchema("v", "string")], location=f"file:{warehouse}/{DB}/{HMS_TABLE}",
                               inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                               outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                               serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"))
        c.create_table(Table(tableName=HMS_TABLE, dbName=DB, sd=sd, partitionKeys=[FieldSchema("p", "string")],
                             tableType="MANAGED_TABLE", parameters={}))
        c.register_hudi_table(HudiTableConfig(
            db_name=DB, table_name=HUDI_TABLE, table_type="COPY_ON_WRITE", record_key_fields=["id"],
            partition_fields=["dt"], hive_style_partitioning=True, precombine_field="ts",
            base_path=f"{warehouse}/{DB}/{HUDI_TABLE}"),
            [("id", "string"), ("ts", "bigint"), ("dt", "string")])


def _stat(part: str, fid: str, ts: str) -> dict:
    return {"fileId": fid, "path": f"{part}/{fid}_0-1-0_{ts}.parquet", "partitionPath": part, "prevCommit": "null",
            "numWrites": 10, "numDeletes": 0, "numUpdateWrites": 0, "numInserts": 10, "totalWriteBytes": 4000,
            "totalWriteErrors": 0, "fileSizeInBytes": 4000}


@dataclass
class Writer:
    name: str
    uri: str
    partitions_acked: set[str] = field(default_factory=set)
    partitions_tried: set[str] = field(default_factory=set)
    commits_acked: dict[str, set[str]] = field(default_factory=dict)  # instant -> its file ids
    commits_tried: dict[str, set[str]] = field(default_factory=dict)
    acks: list[float] = field(default_factory=list)  # monotonic times of acknowledged writes
    errors: list[str] = field(default_factory=list)


class ClusterLoad:
    def __init__(self, ports: list[int], warehouse: str, writers_per_server: int = 1,
                 extra_uris: tuple[str, ...] = (), retries: int = 6):
        """A writer per server (`writers_per_server`), and one per URI of `extra_uris` (a load
        balancer); `retries`: the clients' (backoff up to 1 s each)."""
        self.ports = ports
        self.warehouse = warehouse
        self.retries = retries
        self.writers = [Writer(f"w{i}-{k}", uris(ports, i)) for i in range(len(ports))
                        for k in range(writers_per_server)]
        self.writers += [Writer(f"x{i}", uri) for i, uri in enumerate(extra_uris)]
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        for w in self.writers:
            t = threading.Thread(target=self._run, args=(w,), name=w.name, daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=120)

    def acked(self) -> int:
        return sum(len(w.acks) for w in self.writers)

    def all_wrote_after(self, t0: float) -> bool:
        return all(any(t >= t0 for t in w.acks) for w in self.writers)

    def wait_resumed(self, t0: float, timeout: float) -> None:
        """Until every writer has written again after `t0`."""
        while not self.all_wrote_after(t0):
            assert time.monotonic() < t0 + timeout, f"writers did not resume:\n{self.report()}"
            time.sleep(0.05)

    def wait_acks(self, n: int, timeout: float = 60) -> None:
        """Until `n` writes in all are acknowledged."""
        deadline = time.monotonic() + timeout
        while self.acked() < n:
            assert time.monotonic() < deadline, f"only {self.acked()} acknowledged writes of {n}"
            time.sleep(0.05)

    def longest_pause_after(self, t0: float) -> float:
        """The longest time, over the writers, from `t0` to their first acknowledged write after it."""
        out = 0.0
        for w in self.writers:
            after = [t for t in w.acks if t >= t0]
            out = max(out, (after[0] - t0) if after else float("inf"))
        return out

    def report(self) -> str:
        """Per writer: acknowledged writes and the last errors (for failure messages)."""
        return "\n".join(f"{w.name} ({w.uri}): {len(w.acks)} acknowledged, errors: {w.errors[-3:]}"
                         for w in self.writers)

    def _run(self, w: Writer) -> None:
        # short backoff, enough retries to outlast a failover of a few seconds
        with HudiMetastoreClient(w.uri, timeout_s=30, retries=self.retries, backoff_s=0.1, max_backoff_s=1.0) as c:
            n = 0
            while not self._stop.is_set():
                n += 1
                part = f"p={w.name}-{n}"
                w.partitions_tried.add(part)
                try:
                    c.append_partition(DB, HMS_TABLE, [part[2:]])
                    w.partitions_acked.add(part)
                    w.acks.append(time.monotonic())
                except Exception as exc:  # noqa: BLE001 - not acknowledged: it may or may not be there
                    w.errors.append(f"add_partition: {type(exc).__name__}: {exc}")
                self._commit(c, w, n)

    def _commit(self, c: HudiMetastoreClient, w: Writer, n: int) -> None:
        try:
            ts = c.create_instant(DB, HUDI_TABLE, None, "commit").timestamp
            c.transition_to_inflight(DB, HUDI_TABLE, ts, "commit")
        except Exception as exc:  # noqa: BLE001 - no commit yet: nothing to check
            w.errors.append(f"create_instant: {type(exc).__name__}: {exc}")
            return
        fids = {f"{uuid.uuid4()}-0", f"{uuid.uuid4()}-0"}
        stats: dict[str, list[dict]] = {}
        for i, fid in enumerate(sorted(fids)):
            part = f"dt={w.name}-{n}-{i}"
            stats.setdefault(part, []).append(_stat(part, fid, ts))
        meta = json.dumps({"partitionToWriteStats": stats, "compacted": False, "operationType": "insert",
                           "extraMetadata": {"schema": ""}})
        w.commits_tried[ts] = fids
        try:
            c.complete_instant(DB, HUDI_TABLE, ts, "commit", meta)
            w.commits_acked[ts] = fids
            w.acks.append(time.monotonic())
        except Exception as exc:  # noqa: BLE001
            w.errors.append(f"complete_instant: {type(exc).__name__}: {exc}")

    def snapshot(self, port: int) -> tuple[set[str], set[str]]:
        """(partition names, completed instants) as the server on `port` answers."""
        with HudiMetastoreClient(f"thrift://127.0.0.1:{port}", retries=3) as c:
            parts = set(c.get_partition_names(DB, HMS_TABLE, -1))
            completed = {i.timestamp for i in c.list_instants(DB, HUDI_TABLE, states=["COMPLETED"])}
        return parts, completed

    def check(self, ports: list[int]) -> dict[str, int]:
        """Assert the module doc's promises on every server of `ports`; the counts checked."""
        acked_parts = set().union(*(w.partitions_acked for w in self.writers))
        tried_parts = set().union(*(w.partitions_tried for w in self.writers))
        acked = {ts: f for w in self.writers for ts, f in w.commits_acked.items()}
        tried = {ts: f for w in self.writers for ts, f in w.commits_tried.items()}
        answers = []
        for port in ports:
            with HudiMetastoreClient(f"thrift://127.0.0.1:{port}", retries=3) as c:
                parts = {f"p={v}" for v in
                         (n.split("=", 1)[1] for n in c.get_partition_names(DB, HMS_TABLE, -1))}
                completed = {i.timestamp for i in c.list_instants(DB, HUDI_TABLE, states=["COMPLETED"])}
                files: dict[str, set[str]] = {}
                for f in c.get_files_changed(DB, HUDI_TABLE):
                    files.setdefault(f.commitTime, set()).add(f.fileId)
            where = f"server on port {port}"
            missing = acked_parts - parts
            assert not missing, f"{where}: acknowledged partitions missing: {sorted(missing)[:5]}"
            assert parts <= tried_parts, f"{where}: partitions nobody added: {sorted(parts - tried_parts)[:5]}"
            lost = set(acked) - completed
            assert not lost, f"{where}: acknowledged commits not completed: {sorted(lost)[:5]}"
            assert completed <= set(tried), f"{where}: completed instants nobody committed"
            for ts in completed:
                assert files.get(ts) == tried[ts], f"{where}: instant {ts} has files {files.get(ts)}, " \
                                                   f"committed {tried[ts]} (a half commit)"
            assert set(files) <= completed, f"{where}: files of instants not completed: {set(files) - completed}"
            answers.append((parts, completed))
        assert all(a == answers[0] for a in answers), "the servers answer differently"
        return {"partitions": len(answers[0][0]), "acknowledged_partitions": len(acked_parts),
                "commits": len(answers[0][1]), "acknowledged_commits": len(acked)}
