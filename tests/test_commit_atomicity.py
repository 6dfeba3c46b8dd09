"""Atomic commit (issue acceptance): SIGKILL the server at many points while it completes large
Hudi instants, and check after every restart that nothing partial is ever visible.

One test per backend (SQLite, PostgreSQL, MariaDB), on the server as deployed (storage mirror on).
A writer in the test commits to two partitioned COW tables (``dt``; ``region/dt``), instant after
instant, each of thousands of base files across ~50 partitions: new file groups, new versions of
existing ones, new partitions, and every fifth instant an insert-overwrite replacecommit that
replaces every file group of some partitions. In every round one table's instant is hit: the
server is SIGKILLed at a different point:

* ``complete``       while the writer is inside ``complete_instant`` (a timer thread kills after a
                     seeded random fraction of the recent duration of a completion, denser towards
                     the end: receiving the request, parsing, conflict check, inserting the files,
                     partitions, the table version, the database commit, the post-commit storage
                     mirror or the answer);
* ``after_create``   between ``create_instant`` and ``transition_to_inflight``;
* ``after_inflight`` between ``transition_to_inflight`` and ``complete_instant``;
* ``after_complete`` after ``complete_instant`` answered.

After each kill the server restarts on the same database (new port) and the test checks through
the client, for both tables:

1. the instant being written is either COMPLETED with all of its files visible, or still pending
   (REQUESTED / INFLIGHT) with none of them visible (``get_files_changed`` since the previous
   instant and the latest snapshot); every earlier instant is unchanged;
2. the latest snapshot of the whole table (``get_latest_file_slices``) equals the replay of the
   commit metadata of the COMPLETED instants in completion order (latest base file of each file
   group, replaced file groups left out); the stored metadata is byte-for-byte what was sent;
3. the HMS partitions (``get_partition_names``) are exactly the partitions the completed instants
   wrote;
4. an interrupted instant is finished by retrying: ``complete_instant`` with the same metadata
   succeeds (its table version is the number of completed instants, so no version was lost or
   doubled) and the snapshot then includes it; completing an instant that did complete is refused.

At the end, after a clean restart, everything is checked once more and the storage mirror's
timeline (``.hoodie``) holds exactly the completed instants with the metadata sent.

The test records how many kills landed inside ``complete_instant`` (the writer saw a transport
error), how many of those left the instant INFLIGHT and how many found it COMPLETED (killed after
the database commit, before the answer), and asserts that enough did. Where the seeded kills land
depends on the machine's speed: while too few landed before the database commit, up to
``MAX_EARLY_ROUNDS`` more rounds kill in the first half of a completion. (Checked by mutation: with
the files, or the HMS partitions, committed in a transaction of their own, it fails.)

Tuning: ``HMS_ATOMICITY_SEED`` (default fixed), ``HMS_ATOMICITY_ROUNDS`` (kills per backend,
default 14, 24 in the thorough run), ``HMS_ATOMICITY_FILES`` (files per instant, default 2000, 3000 in
the thorough run).
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import uuid
from dataclasses import dataclass, field

import pytest
from thrift.transport.TTransport import TTransportException

from client import HudiMetastoreClient, state_name
from hudi_format.table_config import HudiTableConfig
from tests.harness import ServerStartError, start_our_server, stop_process
from tests.harness.properties import thorough
from thrift_idl.hive_metastore.ttypes import Database, InvalidOperationException

SEED = int(os.environ.get("HMS_ATOMICITY_SEED", "20240917"))
# CI: 14 kills of 2000-file instants per backend; the thorough run: 24 of 3000
ROUNDS = int(os.environ.get("HMS_ATOMICITY_ROUNDS", "24" if thorough() else "14"))
FILES_PER_INSTANT = int(os.environ.get("HMS_ATOMICITY_FILES", "3000" if thorough() else "2000"))
PARTITIONS_PER_INSTANT = 50
NEW_PARTITIONS_PER_INSTANT = 6
REPLACE_EVERY = 5  # every 5th instant is an insert-overwrite replacecommit
WARMUP_INSTANTS = 2  # committed without a kill: a starting table and the duration estimate
MIN_MID_COMMIT_KILLS = 5  # kills that interrupted complete_instant
MIN_ROLLED_BACK_KILLS = 3  # ... of which left the instant INFLIGHT (killed before the DB commit)
MAX_EARLY_ROUNDS = 8  # rounds added, each killing early in a completion, while those two fall short
TRANSPORT_ERRORS = (TTransportException, OSError, EOFError)
TABLES = {"t1": (), "t2": ("eu", "us", "apac")}  # table -> regions (none: partitioned by dt alone)


# --------------------------------------------------------------------------- the writer


@dataclass
class Writer:
    """Generates the commit metadata of the next instant from the table as the writer knows it
    (the instants it saw completed): v6 JSON as Hudi writes `<ts>.commit` / `<ts>.replacecommit`."""

    rng: random.Random
    files_per_instant: int
    regions: tuple[str, ...] = ()  # a first partition level region=<r> (partition fields region, dt)
    groups: dict[str, dict[str, str]] = field(default_factory=dict)  # partition -> fileId -> base ts
    next_day: int = 0

    def _new_partition(self) -> str:
        day = self.next_day
        self.next_day += 1
        dt = f"dt={2020 + day // 360:04d}-{day % 360 // 30 + 1:02d}-{day % 30 + 1:02d}"
        return f"region={self.regions[day % len(self.regions)]}/{dt}" if self.regions else dt

    def _file_id(self) -> str:
        return f"f{self.rng.getrandbits(128):032x}-0"

    def _stat(self, ts: str, partition: str, fid: str, prev: str | None) -> dict:
        token = f"{self.rng.randrange(200)}-{self.rng.randrange(1000)}-{self.rng.randrange(1, 3)}"
        n = self.rng.randrange(1, 50_000)
        return {
            "fileId": fid, "path": f"{partition}/{fid}_{token}_{ts}.parquet", "prevCommit": prev or "null",
            "numWrites": n, "numDeletes": 0, "numUpdateWrites": n // 2 if prev else 0,
            "numInserts": n - n // 2 if prev else n, "totalWriteBytes": n * 40, "totalWriteErrors": 0,
            "tempPath": None, "partitionPath": partition, "totalLogRecords": 0, "totalLogFilesCompacted": 0,
            "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0, "totalLogBlocks": 0,
            "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0, "fileSizeInBytes": n * 40 + 435_000,
            "minEventTime": None, "maxEventTime": None, "runtimeStats": {"totalScanTime": 0,
                                                                          "totalUpsertTime": 0,
                                                                          "totalCreateTime": n}}

    def _spread(self, total: int, parts: list[str]) -> dict[str, int]:
        base, extra = divmod(total, len(parts))
        return {p: base + (1 if i < extra else 0) for i, p in enumerate(parts)}

    def next_action(self, index: int) -> str:
        return "replacecommit" if index % REPLACE_EVERY == REPLACE_EVERY - 1 and self.groups else "commit"

    def metadata(self, ts: str, action: str) -> bytes:
        stats: dict[str, list[dict]] = {}
        replaced: dict[str, list[str]] = {}
        existing = sorted(self.groups)
        if action == "replacecommit":
            # insert_overwrite of some partitions: every file group there is replaced by new ones
            parts = self.rng.sample(existing, min(len(existing), PARTITIONS_PER_INSTANT // 2))
            for p, n in self._spread(self.files_per_instant // 2, parts).items():
                replaced[p] = sorted(self.groups[p])
                stats[p] = [self._stat(ts, p, self._file_id(), None) for _ in range(max(1, n))]
            op = "INSERT_OVERWRITE"
        else:
            old = self.rng.sample(existing, min(len(existing), PARTITIONS_PER_INSTANT - NEW_PARTITIONS_PER_INSTANT))
            new = [self._new_partition() for _ in range(PARTITIONS_PER_INSTANT - len(old))]
            for p, n in self._spread(self.files_per_instant, old + new).items():
                live = self.groups.get(p, {})
                upd = self.rng.sample(sorted(live), min(len(live), n * 7 // 10))
                stats[p] = [self._stat(ts, p, fid, live[fid]) for fid in upd]
                stats[p] += [self._stat(ts, p, self._file_id(), None) for _ in range(n - len(upd))]
            op = "UPSERT"
        doc = {"partitionToWriteStats": stats, "compacted": False,
               "extraMetadata": {"schema": '{"type":"record","name":"t_record","fields":[]}'},
               "operationType": op}
        if action == "replacecommit":
            doc["partitionToReplaceFileIds"] = replaced
        return json.dumps(doc).encode()

    def completed(self, ts: str, doc: dict) -> None:
        """The instant completed (`doc`: its metadata, parsed): the writer's next instants build on it."""
        for p in doc.get("partitionToReplaceFileIds") or {}:
            self.groups[p] = {}
        for p, entries in doc["partitionToWriteStats"].items():
            for s in entries:
                self.groups.setdefault(p, {})[s["fileId"]] = ts


# --------------------------------------------------------------------------- the model


def base_instant(name: str) -> str:
    return name.rsplit("_", 1)[1].split(".", 1)[0]


class Replay:
    """Latest snapshot and written partitions from the (parsed) metadata of completed instants (in
    completion order): (partition, fileId) -> (base file name, base instant, size, commit time).
    `extend` goes on from the instants replayed so far (completions only ever append)."""

    def __init__(self) -> None:
        self.latest: dict[tuple[str, str], tuple] = {}
        self.replaced: set[tuple[str, str]] = set()
        self.partitions: set[str] = set()
        self.done: list[str] = []  # the instants replayed, in order

    def extend(self, completed: list[tuple[str, dict]]) -> None:
        latest, partitions = self.latest, self.partitions
        for ts, doc in completed:
            for p, entries in doc.get("partitionToWriteStats", {}).items():
                for s in entries:
                    part = s.get("partitionPath", p)
                    name = s["path"].rsplit("/", 1)[-1]
                    key = (part, s["fileId"])
                    base = base_instant(name)
                    if key not in latest or latest[key][1] <= base:
                        latest[key] = (name, base, s["fileSizeInBytes"], ts)
                    partitions.add(part)
            for p, ids in (doc.get("partitionToReplaceFileIds") or {}).items():
                self.replaced.update((p, fid) for fid in ids)
            self.done.append(ts)

    def result(self) -> tuple[dict, set[str]]:
        return {k: v for k, v in self.latest.items() if k not in self.replaced}, set(self.partitions)


def replay(completed: list[tuple[str, dict]]) -> tuple[dict, set[str]]:
    """The replay of `completed` from nothing (see Replay)."""
    r = Replay()
    r.extend(completed)
    return r.result()


def server_snapshot(client: HudiMetastoreClient, db: str, tbl: str, partitions: list[str] | None = None) -> dict:
    slices = client.get_latest_file_slices(db, tbl, partitions)
    out = {}
    for s in slices:
        key = (s.partitionPath, s.fileId)
        assert key not in out, f"file group {key} listed twice"
        assert not s.logFiles and s.baseFile is not None, f"unexpected slice {s}"
        out[key] = (s.baseFile.name, s.baseInstant, s.baseFile.size, s.baseFile.commitTime)
    return out


# --------------------------------------------------------------------------- the run


class Run:
    """The server process, the client, and what the test knows was sent."""

    def __init__(self, backend_url: str, tmp_path):
        self.backend_url = backend_url
        self.tmp_path = tmp_path
        self.proc = None
        self.client: HudiMetastoreClient | None = None
        self.restarts = 0
        self.restart_s = 0.0

    def start(self) -> None:
        try:
            port, self.proc = start_our_server(self.backend_url, self.tmp_path / "server",
                                               warehouse=self.tmp_path / "warehouse")
        except ServerStartError as e:
            pytest.fail(f"restart {self.restarts}: {e}", pytrace=False)
        self.client = HudiMetastoreClient(f"thrift://127.0.0.1:{port}", timeout_s=120, retries=2,
                                          backoff_s=0.05)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        self.client.close()

    def restart(self) -> None:
        t0 = time.monotonic()
        self.kill()
        self.restarts += 1
        self.start()
        self.restart_s += time.monotonic() - t0

    def stop(self) -> None:
        if self.client is not None:
            self.client.close()
        if self.proc is not None:
            stop_process(self.proc)

    def log_tail(self) -> str:
        from tests.harness import log_tail

        return log_tail(self.proc.log_path, 40) if self.proc is not None else ""


@dataclass
class TableUnderTest:
    """One Hudi table and what the test knows about it."""

    name: str
    writer: Writer
    sent: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # ts -> (action, metadata)
    order: list[str] = field(default_factory=list)  # instants in creation order
    done: list[str] = field(default_factory=list)  # instants known completed, in completion order
    verified_meta: set[str] = field(default_factory=set)  # stored metadata checked against `sent`
    instants: int = 0
    docs: dict[str, dict] = field(default_factory=dict)  # ts -> metadata sent, parsed (every check replays all)
    replayed: Replay = field(default_factory=Replay)  # the replay of `done` so far

    def replay_done(self) -> tuple[dict, set[str]]:
        """`replay` of the completed instants, carried on from the previous check's."""
        r = self.replayed
        assert self.done[:len(r.done)] == r.done, "completed instants are only ever appended"
        r.extend([(ts, self.doc(ts)) for ts in self.done[len(r.done):]])
        return r.result()

    def doc(self, ts: str) -> dict:
        if ts not in self.docs:
            self.docs[ts] = json.loads(self.sent[ts][1])
        return self.docs[ts]

    def written(self, ts: str) -> set[tuple[str, str]]:
        return {(s["partitionPath"], s["path"].rsplit("/", 1)[-1])
                for entries in self.doc(ts)["partitionToWriteStats"].values() for s in entries}

    def partitions_of(self, ts: str) -> list[str]:
        return sorted(self.doc(ts)["partitionToWriteStats"])


@pytest.fixture
def own_database(backend_url, backend_specs, tmp_path):
    """A database of this test's own: the servers it starts and kills must not leave state (such
    as the `default` database with their warehouse) in the session's shared backend database."""
    from tests.harness.backends import create_fresh_database

    kind = "sqlite" if backend_url.startswith("sqlite") else \
        "postgresql" if backend_url.startswith("postgresql") else "mysql"
    fresh = create_fresh_database(backend_specs[kind], tmp_path / "own-db", migrated=True)
    try:
        yield fresh.url
    finally:
        fresh.drop()


def test_commit_atomicity_under_sigkill(own_database, tmp_path):
    backend_url = own_database
    t_start = time.monotonic()
    rng = random.Random(SEED)  # the same schedule of kills on every backend
    db = "atomic_" + uuid.uuid4().hex[:10]
    tables = {name: TableUnderTest(name, Writer(random.Random(SEED + i + 1), FILES_PER_INSTANT, regions))
              for i, (name, regions) in enumerate(TABLES.items())}
    run = Run(backend_url, tmp_path)
    run.start()
    durations: list[float] = []  # uninterrupted complete_instant calls (they grow with the tables)
    stats = {"kills": 0, "mid_commit": 0, "mid_commit_rolled_back": 0, "mid_commit_applied": 0,
             "complete_returned_before_kill": 0, "retried_completions": 0, "modes": {}, "verify_s": 0.0}

    def verify_table(t: TableUnderTest, pending: str | None, where: str, only: list[str] | None = None) -> None:
        """Checks 1-3 of one table. `pending`: the instant whose fate the kill decided. `only`:
        compare the snapshot of these partitions alone (after a retry: the rest was just checked,
        and the next full check covers it again)."""
        c = run.client
        where = f"{where} {t.name}"
        instants = {i.timestamp: i for i in c.list_instants(db, t.name)}
        assert sorted(instants) == sorted(t.order), f"{where}: instants {sorted(instants)} != {sorted(t.order)}"
        if pending is not None and state_name(instants[pending].state) == "COMPLETED" and pending not in t.done:
            t.done.append(pending)  # the kill came after the database commit
            t.writer.completed(pending, t.doc(pending))
        for ts, i in instants.items():
            got = state_name(i.state)
            if ts in t.done:
                assert got == "COMPLETED", f"{where}: completed instant {ts} is {got}"
                assert i.action == t.sent[ts][0]
            else:
                assert ts == pending, f"{where}: instant {ts} unexpectedly {got}"
                assert got in ("REQUESTED", "INFLIGHT"), f"{where}: {ts} is {got}"
        completed = sorted((i for i in instants.values() if state_name(i.state) == "COMPLETED"),
                           key=lambda i: (i.completionTime, i.timestamp))
        assert [i.timestamp for i in completed] == t.done, f"{where}: completion order"
        for ts in t.done:
            if ts not in t.verified_meta:
                stored = c.get_instant_metadata(db, t.name, ts, t.sent[ts][0])
                assert stored == t.sent[ts][1], f"{where}: stored metadata of {ts} differs from what was sent"
                t.verified_meta.add(ts)

        # (2) the latest snapshot is the replay of the completed instants
        model, partitions = t.replay_done()
        snap = server_snapshot(c, db, t.name, only)
        if only is not None:
            model = {k: v for k, v in model.items() if k[0] in set(only)}
        if snap != model:
            missing = sorted(set(model) - set(snap))[:5]
            extra = sorted(set(snap) - set(model))[:5]
            wrong = sorted(k for k in set(snap) & set(model) if snap[k] != model[k])[:5]
            pytest.fail(f"{where}: snapshot ({len(snap)} groups) != replay of {len(t.done)} completed "
                        f"instants ({len(model)} groups); missing {missing}, extra {extra}, differing "
                        f"{[(k, snap[k], model[k]) for k in wrong]}", pytrace=False)

        # (1) the instant being written: all of its files or none
        if pending is not None:
            prev = max((ts for ts in t.done if ts < pending), default=None)
            changed = {(f.partitionPath, f.name) for f in c.get_files_changed(db, t.name, prev, pending)}
            in_snapshot = {k for k, v in snap.items() if v[3] == pending}
            if pending in t.done:
                written = t.written(pending)
                assert changed == written, (f"{where}: completed {pending}: {len(changed)} of its "
                                            f"{len(written)} files visible")
                assert len(in_snapshot) == len(written)
            else:
                assert not changed and not in_snapshot, (
                    f"{where}: pending {pending} has {len(changed)} files visible (partial commit)")

        # (3) HMS partitions are those of the completed instants
        names = sorted(c.get_partition_names(db, t.name, -1))
        assert names == sorted(partitions), (
            f"{where}: HMS partitions: extra {sorted(set(names) - partitions)[:5]}, "
            f"missing {sorted(partitions - set(names))[:5]}")

    def verify(target: TableUnderTest | None, pending: str | None, where: str) -> None:
        t0 = time.monotonic()
        for t in tables.values():
            verify_table(t, pending if t is target else None, where)
        stats["verify_s"] += time.monotonic() - t0

    def complete(t: TableUnderTest, ts: str, where: str):
        t0 = time.monotonic()
        res = run.client.complete_instant(db, t.name, ts, t.sent[ts][0], t.sent[ts][1])
        durations.append(time.monotonic() - t0)
        t.done.append(ts)
        t.writer.completed(ts, t.doc(ts))
        assert state_name(res.instant.state) == "COMPLETED"
        assert res.tableVersion == len(t.done), (
            f"{where}: table version {res.tableVersion} after {len(t.done)} completed instants")
        return res

    def finish(t: TableUnderTest, ts: str, where: str) -> None:
        """(4) Finish an instant a kill interrupted, then check the snapshot includes it."""
        state = state_name({i.timestamp: i for i in run.client.list_instants(db, t.name)}[ts].state)
        if state == "REQUESTED":
            run.client.transition_to_inflight(db, t.name, ts, t.sent[ts][0])
        if state != "COMPLETED":
            complete(t, ts, where)
            stats["retried_completions"] += 1
            verify_table(t, ts, where + " after retry", only=t.partitions_of(ts))
        with pytest.raises(InvalidOperationException):  # completing twice is refused
            run.client.complete_instant(db, t.name, ts, t.sent[ts][0], t.sent[ts][1])

    def new_instant(t: TableUnderTest) -> str:
        action = t.writer.next_action(t.instants)
        t.instants += 1
        ts = run.client.create_instant(db, t.name, None, action).timestamp
        t.sent[ts] = (action, t.writer.metadata(ts, action))
        t.order.append(ts)
        return ts

    try:
        c = run.client
        c.create_database(Database(name=db, locationUri="file:" + str(tmp_path / "db")))
        for name, regions in TABLES.items():
            fields = ["region", "dt"] if regions else ["dt"]
            c.register_hudi_table(HudiTableConfig(
                db_name=db, table_name=name, table_type="COPY_ON_WRITE", record_key_fields=["id"],
                partition_fields=fields, hive_style_partitioning=True, base_path=str(tmp_path / name)),
                [("id", "string"), ("v", "string")] + [(f, "string") for f in fields])
            for w in range(WARMUP_INSTANTS):
                ts = new_instant(tables[name])
                run.client.transition_to_inflight(db, name, ts, tables[name].sent[ts][0])
                complete(tables[name], ts, f"warm-up {w} of {name}")

        between = ["after_create", "after_inflight", "after_complete"] * (2 if ROUNDS >= 20 else 1)
        modes = ["complete"] * (ROUNDS - len(between)) + between
        rng.shuffle(modes)

        def one_round(rnd: int, mode: str, early: bool = False) -> None:
            t = tables[rng.choice(sorted(tables))]
            ts = new_instant(t)
            action = t.sent[ts][0]
            where = f"round {rnd} ({mode}{' early' if early else ''}, {action} {ts} of {t.name})"
            key = mode + (" early" if early else "")
            stats["modes"][key] = stats["modes"].get(key, 0) + 1
            interrupted = False
            if mode == "after_create":
                run.restart()
            else:
                run.client.transition_to_inflight(db, t.name, ts, action)
                if mode == "after_inflight":
                    run.restart()
                elif mode == "after_complete":
                    complete(t, ts, where)
                    run.restart()
                else:
                    est = sum(durations[-3:]) / len(durations[-3:])  # the latest completions
                    # density rising to the end: the last statements and the database commit
                    # are a small part of a completion, and the window that matters most;
                    # an early kill lands in the first half (the transaction, before its commit)
                    frac = 0.05 + (rng.random() * 0.45 if early else rng.random() ** 0.5)
                    timer = threading.Timer(est * frac, run.proc.kill)
                    timer.start()
                    try:
                        complete(t, ts, where)
                    except TRANSPORT_ERRORS:
                        interrupted = True
                        stats["mid_commit"] += 1
                    else:
                        stats["complete_returned_before_kill"] += 1
                    finally:
                        timer.cancel()
                        timer.join()
                    run.restart()
            stats["kills"] += 1
            verify(t, ts, where)
            if interrupted:
                stats["mid_commit_rolled_back" if ts not in t.done else "mid_commit_applied"] += 1
            finish(t, ts, where)

        for rnd, mode in enumerate(modes):
            one_round(rnd, mode)
        # The seeded schedule's kills land by the machine's speed: when too few of them interrupted a
        # completion before its database commit, more rounds kill early in the completion.
        for extra in range(MAX_EARLY_ROUNDS):
            if stats["mid_commit"] >= MIN_MID_COMMIT_KILLS and \
                    stats["mid_commit_rolled_back"] >= MIN_ROLLED_BACK_KILLS:
                break
            one_round(len(modes) + extra, "complete", early=True)

        # Finally: a clean restart shows the same tables, every stored metadata checked again.
        run.restart()
        for t in tables.values():
            t.verified_meta.clear()
        verify(None, None, "final")
        # The storage mirror (post-commit hook, killed as often as the commits) catches up: the
        # timeline on storage has exactly the completed instants, with the metadata sent.
        for t in tables.values():
            run.client.sync_storage(db, t.name)
            hoodie = tmp_path / t.name / ".hoodie"
            on_storage = {}
            for name in os.listdir(hoodie):
                ts, _, action = name.partition(".")
                if ts.isdigit() and action in ("commit", "replacecommit"):
                    on_storage[ts] = action
                    assert (hoodie / name).read_bytes() == t.sent[ts][1], f"storage copy of {name} differs"
            assert on_storage == {ts: t.sent[ts][0] for ts in t.done}, f"storage timeline of {t.name}"
    except BaseException:
        print(f"--- server log ---\n{run.log_tail()}")
        raise
    finally:
        run.stop()

    stats["instants"] = {t.name: len(t.done) for t in tables.values()}
    stats["groups"] = {t.name: len(replay([(ts, t.doc(ts)) for ts in t.done])[0]) for t in tables.values()}
    stats["complete_s"] = [round(min(durations), 2), round(sorted(durations)[len(durations) // 2], 2),
                           round(max(durations), 2)]  # min, median, max
    stats["verify_s"] = round(stats["verify_s"], 1)
    stats["restart_s"] = round(run.restart_s, 1)
    stats["elapsed_s"] = round(time.monotonic() - t_start, 1)
    print(f"commit atomicity on {backend_url.split(':', 1)[0]}: {stats}")
    assert stats["kills"] >= min(ROUNDS, 15)
    assert stats["mid_commit"] >= MIN_MID_COMMIT_KILLS, stats
    assert stats["mid_commit_rolled_back"] >= MIN_ROLLED_BACK_KILLS, stats
