"""The server as a process: worker processes, framed transport, graceful SIGTERM, fb303 shutdown,
the per-call log, locks over Thrift with expiry, and two servers sharing one database.

Every test starts its own server(s) on free ports with temp directories (tests/harness/procs.py).
Nothing asserts on durations except generous timeouts.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import threading
import time
from pathlib import Path

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TMessageType
from thrift.transport import TSocket, TTransport

from tests.harness import (
    BackendUnavailable,
    ServerStartError,
    ci_mode,
    create_fresh_database,
    open_thrift_client,
    start_our_server,
    stop_process,
)
from thrift_idl.fb303 import FacebookService
from thrift_idl.fb303.ttypes import fb_status
from thrift_idl.hive_metastore import ThriftHiveMetastore
from thrift_idl.hive_metastore.ttypes import (
    AlreadyExistsException,
    CheckLockRequest,
    Database,
    FieldSchema,
    HeartbeatRequest,
    LockComponent,
    LockLevel,
    LockRequest,
    LockState,
    LockType,
    NoSuchLockException,
    NoSuchObjectException,
    Partition,
    SerDeInfo,
    ShowLocksRequest,
    StorageDescriptor,
    Table,
    UnlockRequest,
)

CALL_LINE = re.compile(r"^\S+ \S+ (\d+) \w+ hudi_metastore\.calls call=(\S+) ms=([\d.]+) status=(\S+)"
                       r"(?: client=\S+)?(?: user=\S+)?(?: object=\S+)?\s*$")
TIMEOUT = 30.0  # generous bound for anything that should happen "soon"


# --------------------------------------------------------------------------- helpers


class Srv:
    def __init__(self, port, proc):
        self.port, self.proc = port, proc
        self.log_path = Path(proc.log_path)
        self.warehouse = Path(proc.warehouse)

    def calls(self) -> list[tuple[int, str, float, str]]:
        """(pid, method, ms, status) of every call line in the log."""
        out = []
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = CALL_LINE.match(line)
                if m:
                    out.append((int(m.group(1)), m.group(2), float(m.group(3)), m.group(4)))
        return out

    def log(self, whole: bool = False) -> str:
        text = self.log_path.read_text(errors="replace")
        return text if whole else text[-6000:]

    def client(self, timeout: float = TIMEOUT):
        return open_thrift_client(self.port, timeout=timeout)


@pytest.fixture
def start_server(tmp_path):
    """Factory: ``start_server(*extra_args, db_url=None)`` -> Srv; all are stopped after the test."""
    started = []

    def start(*extra, db_url: str | None = None, name: str | None = None) -> Srv:
        tmp = tmp_path / (name or f"server{len(started)}")
        url = db_url or f"sqlite:///{tmp_path / 'metastore.db'}"
        try:
            port, proc = start_our_server(url, tmp, extra_args=list(extra), warehouse=tmp_path / "warehouse")
        except ServerStartError as e:
            pytest.fail(str(e), pytrace=False)
        started.append(proc)
        return Srv(port, proc)

    yield start
    for proc in started:
        stop_process(proc)


def _server_db(backend_specs, tmp_path, backend: str):
    spec = backend_specs[backend]
    if not spec.available:
        reason = f"{backend} backend unavailable: {spec.reason}"
        pytest.fail(reason) if ci_mode() else pytest.skip(reason)
    try:
        return create_fresh_database(spec, tmp_path / f"db-{backend}")
    except BackendUnavailable as e:
        pytest.fail(str(e)) if ci_mode() else pytest.skip(str(e))


def _children(pid: int) -> set[int]:
    """Live child processes of pid (Linux /proc)."""
    out = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            out.add(int(entry))
    return out


def _wait_until(predicate, timeout: float = TIMEOUT, interval: float = 0.1, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def _sd():
    return StorageDescriptor(
        cols=[FieldSchema("id", "bigint", None), FieldSchema("v", "string", None)],
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                            parameters={}), parameters={})


def _table(db, name, keys=()):
    return Table(dbName=db, tableName=name, sd=_sd(), parameters={}, tableType="MANAGED_TABLE",
                 partitionKeys=[FieldSchema(k, "string", None) for k in keys])


def _framed_client(port: int):
    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(int(TIMEOUT * 1000))
    transport = TTransport.TFramedTransport(sock)
    c = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocolAccelerated(transport))
    transport.open()
    return c, transport


def _call_bytes(method: str, args, seqid: int = 1) -> bytes:
    buf = TTransport.TMemoryBuffer()
    prot = TBinaryProtocol.TBinaryProtocol(buf)
    prot.writeMessageBegin(method, TMessageType.CALL, seqid)
    args.write(prot)
    prot.writeMessageEnd()
    return buf.getvalue()


# --------------------------------------------------------------------------- workers


def test_two_workers_serve_concurrent_clients(start_server):
    srv = start_server("--workers", "2")
    workers = _wait_until(lambda: len(_children(srv.proc.pid)) == 2 and _children(srv.proc.pid),
                          what="two worker processes")

    c, t = srv.client()
    db = "conc"
    c.create_database(Database(name=db, parameters={}))
    c.create_table(_table(db, "shared", keys=("dt",)))
    t.close()

    errors: list[str] = []

    def worker(n: int):
        try:
            client, transport = srv.client()
            try:
                for i in range(8):
                    assert client.get_table(db, "shared").tableName == "shared"
                    name = f"t_{n}_{i}"
                    client.create_table(_table(db, name))
                    assert client.get_table(db, name).tableName == name
                    client.add_partitions([Partition(dbName=db, tableName="shared", values=[f"{n}-{i}"],
                                                     sd=_sd(), parameters={})])
                    client.drop_table(db, name, True)
                    with pytest.raises(NoSuchObjectException):
                        client.get_table(db, name)
            finally:
                transport.close()
        except BaseException as exc:  # reported below
            errors.append(f"thread {n}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=120)
    assert not [th for th in threads if th.is_alive()], "client threads hung"
    assert not errors, "\n".join(errors) + "\n" + srv.log()

    c, t = srv.client()
    assert c.get_all_tables(db) == ["shared"]
    assert len(c.get_partition_names(db, "shared", -1)) == 64
    t.close()

    # Both workers answer: new connections land on either process (the log names the pid).
    def both_answered():
        c, t = srv.client()
        c.getStatus()
        t.close()
        return {pid for pid, *_ in srv.calls()} >= workers
    _wait_until(both_answered, interval=0, what=f"calls served by both workers {workers}")
    assert {pid for pid, *_ in srv.calls()} <= workers

    # A worker that dies is replaced, and the replacement serves.
    victim = min(workers)
    os.kill(victim, signal.SIGKILL)
    new_workers = _wait_until(
        lambda: (lambda ch: ch if len(ch) == 2 and victim not in ch else None)(_children(srv.proc.pid)),
        what="a replacement worker")
    replacement = (new_workers - workers).pop()

    def replacement_answered():
        c, t = srv.client()
        assert c.get_all_tables(db) == ["shared"]
        t.close()
        return replacement in {pid for pid, *_ in srv.calls()}
    _wait_until(replacement_answered, interval=0, what="the replacement worker to answer")
    # the whole log: the calls of the wait above may be thousands of lines after it (a loaded machine)
    assert "starting a new one" in srv.log(whole=True), srv.log()

    # SIGTERM stops the parent and both workers cleanly.
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.proc.wait(timeout=TIMEOUT) == 0
    assert not _children(srv.proc.pid)


# --------------------------------------------------------------------------- framed transport


def test_framed_transport(start_server):
    srv = start_server("--framed")
    c, t = _framed_client(srv.port)
    try:
        c.create_database(Database(name="framed_db", description="via framed", parameters={"a": "b"}))
        c.create_table(_table("framed_db", "t", keys=("dt",)))
        c.add_partitions([Partition(dbName="framed_db", tableName="t", values=[f"d{i}"], sd=_sd(), parameters={})
                          for i in range(20)])
        assert "framed_db" in c.get_all_databases()
        assert c.get_database("framed_db").parameters == {"a": "b"}
        assert len(c.get_partitions("framed_db", "t", -1)) == 20
        with pytest.raises(NoSuchObjectException):
            c.get_table("framed_db", "missing")
    finally:
        t.close()
    # an unframed client cannot talk to it, and does not harm it
    c, t = open_thrift_client(srv.port, timeout=10)
    try:
        with pytest.raises((TTransport.TTransportException, EOFError, ConnectionError, socket.timeout)):
            c.get_all_databases()
    finally:
        t.close()
    assert srv.proc.poll() is None
    c, t = _framed_client(srv.port)
    assert c.get_all_tables("framed_db") == ["t"]
    t.close()


# --------------------------------------------------------------------------- graceful stop


def test_sigterm_finishes_the_call_in_flight(start_server):
    srv = start_server()
    idle_client, idle_transport = srv.client()
    assert isinstance(idle_client.get_all_databases(), list)

    request = _call_bytes("create_database", ThriftHiveMetastore.create_database_args(
        database=Database(name="inflight", description="created during shutdown", parameters={})), seqid=5)
    half = len(request) // 2
    with socket.create_connection(("127.0.0.1", srv.port), timeout=TIMEOUT) as s:
        # a first complete call proves the connection is being served
        s.sendall(_call_bytes("getStatus", FacebookService.getStatus_args(), seqid=4))
        reply = s.recv(65536)
        assert reply and b"getStatus" in reply
        s.sendall(request[:half])  # the call is now in flight: the server is reading it
        time.sleep(1.0)
        srv.proc.send_signal(signal.SIGTERM)
        time.sleep(1.0)
        assert srv.proc.poll() is None, "the server stopped with a call in flight"
        s.sendall(request[half:])
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    prot = TBinaryProtocol.TBinaryProtocol(TTransport.TMemoryBuffer(data))
    name, mtype, seqid = prot.readMessageBegin()
    assert (name, mtype, seqid) == ("create_database", TMessageType.REPLY, 5)
    result = ThriftHiveMetastore.create_database_result()
    result.read(prot)
    assert result.o1 is None and result.o2 is None and result.o3 is None

    assert srv.proc.wait(timeout=TIMEOUT) == 0
    assert "finishing calls in flight" in srv.log()
    with pytest.raises((TTransport.TTransportException, EOFError, ConnectionError)):
        idle_client.get_all_databases()  # idle connections were closed
    idle_transport.close()

    # the call that was in flight is committed
    again = start_server(name="restarted")
    c, t = again.client()
    assert c.get_database("inflight").description == "created during shutdown"
    t.close()


def test_fb303_shutdown_does_not_stop_the_server(start_server):
    srv = start_server()
    c, t = srv.client()
    assert c.getName() and c.getVersion()
    assert c.getStatus() == fb_status.ALIVE
    since = c.aliveSince()
    assert since > 0
    c.shutdown()  # oneway: clients send it from close()
    assert c.getStatus() == fb_status.ALIVE  # same connection
    c.shutdown()
    t.close()
    time.sleep(0.5)
    assert srv.proc.poll() is None
    c, t = srv.client()
    assert c.getStatus() == fb_status.ALIVE and c.aliveSince() == since
    t.close()
    assert [m for _, m, _, _ in srv.calls()].count("shutdown") == 2


def test_one_log_line_per_call_with_latency(start_server):
    srv = start_server()
    c, t = srv.client()
    before = len(srv.calls())
    for _ in range(5):
        c.getVersion()
    c.create_database(Database(name="logged", parameters={}))
    with pytest.raises(NoSuchObjectException):
        c.get_database("not_there")
    with pytest.raises(AlreadyExistsException):
        c.create_database(Database(name="logged", parameters={}))
    t.close()
    new = _wait_until(lambda: (lambda rows: rows if len(rows) >= 8 else None)(srv.calls()[before:]),
                      what="8 call lines")
    assert [(m, s) for _, m, _, s in new] == [("getVersion", "ok")] * 5 + [
        ("create_database", "ok"), ("get_database", "NoSuchObjectException"),
        ("create_database", "AlreadyExistsException")]
    assert all(ms >= 0 for _, _, ms, _ in new)
    assert {pid for pid, *_ in new} == {srv.proc.pid}


# --------------------------------------------------------------------------- locks over Thrift


def _lock_req(db, table, kind, user="tester"):
    return LockRequest(component=[LockComponent(type=kind, level=LockLevel.TABLE, dbname=db, tablename=table)],
                       user=user, hostname=socket.gethostname())


def test_locks_over_thrift_with_expiry(start_server):
    srv = start_server("--lock-timeout", "2")
    holder, ht = srv.client()
    waiter, wt = srv.client()
    holder.create_database(Database(name="lockdb", parameters={}))
    holder.create_table(_table("lockdb", "t"))

    # basic protocol: lock, show_locks, heartbeat, unlock
    first = holder.lock(_lock_req("lockdb", "t", LockType.EXCLUSIVE, user="holder"))
    assert first.state == LockState.ACQUIRED
    queued = waiter.lock(_lock_req("lockdb", "t", LockType.SHARED_READ, user="waiter"))
    assert queued.state == LockState.WAITING
    shown = {e.lockid: e for e in waiter.show_locks(ShowLocksRequest(dbname="lockdb", tablename="t")).locks}
    assert shown[first.lockid].state == LockState.ACQUIRED and shown[first.lockid].user == "holder"
    assert shown[queued.lockid].state == LockState.WAITING and shown[queued.lockid].type == LockType.SHARED_READ
    holder.heartbeat(HeartbeatRequest(lockid=first.lockid))
    with pytest.raises(NoSuchLockException):
        holder.heartbeat(HeartbeatRequest(lockid=first.lockid + 10_000))
    holder.unlock(UnlockRequest(lockid=first.lockid))
    assert waiter.check_lock(CheckLockRequest(lockid=queued.lockid)).state == LockState.ACQUIRED
    waiter.unlock(UnlockRequest(lockid=queued.lockid))
    with pytest.raises(NoSuchLockException):
        waiter.check_lock(CheckLockRequest(lockid=queued.lockid))
    assert waiter.show_locks(ShowLocksRequest(dbname="lockdb", tablename="t")).locks in (None, [])

    # expiry: while the holder heartbeats, the waiter keeps waiting ...
    held = holder.lock(_lock_req("lockdb", "t", LockType.EXCLUSIVE, user="holder"))
    assert held.state == LockState.ACQUIRED
    waiting = waiter.lock(_lock_req("lockdb", "t", LockType.EXCLUSIVE, user="waiter"))
    assert waiting.state == LockState.WAITING
    t_end = time.monotonic() + 4.0  # twice the lock timeout
    while time.monotonic() < t_end:
        holder.heartbeat(HeartbeatRequest(lockid=held.lockid))
        assert waiter.check_lock(CheckLockRequest(lockid=waiting.lockid)).state == LockState.WAITING
        time.sleep(0.25)
    # ... and once it stops, its lock expires and the waiter (which polls, so stays alive) gets it.
    _wait_until(lambda: waiter.check_lock(CheckLockRequest(lockid=waiting.lockid)).state == LockState.ACQUIRED,
                interval=0.2, what="the waiter to acquire the expired lock")
    with pytest.raises(NoSuchLockException):
        holder.heartbeat(HeartbeatRequest(lockid=held.lockid))
    with pytest.raises(NoSuchLockException):
        holder.check_lock(CheckLockRequest(lockid=held.lockid))
    states = {e.lockid: e.state for e in holder.show_locks(ShowLocksRequest(dbname="lockdb")).locks}
    assert states == {waiting.lockid: LockState.ACQUIRED}
    waiter.unlock(UnlockRequest(lockid=waiting.lockid))
    ht.close()
    wt.close()


# --------------------------------------------------------------------------- two servers, one database


@pytest.mark.parametrize("backend", ["postgresql", "mysql"])
def test_two_servers_share_one_database(start_server, backend_specs, tmp_path, backend):
    fresh = _server_db(backend_specs, tmp_path, backend)
    try:
        one = start_server(db_url=fresh.url, name="one")
        two = start_server(db_url=fresh.url, name="two")
        c1, t1 = one.client()
        c2, t2 = two.client()
        try:
            _check_shared(c1, c2, one, two)
        finally:
            t1.close()
            t2.close()
            for srv in (one, two):
                stop_process(srv.proc)
    finally:
        fresh.drop()


def _check_shared(c1, c2, one, two):
    c1.create_database(Database(name="shared_db", description="from one", parameters={"k": "v"}))
    assert c2.get_database("shared_db").description == "from one"
    c1.create_table(_table("shared_db", "t", keys=("dt",)))
    c1.add_partitions([Partition(dbName="shared_db", tableName="t", values=[f"d{i}"], sd=_sd(), parameters={})
                       for i in range(10)])
    assert c2.get_table("shared_db", "t").partitionKeys[0].name == "dt"
    assert len(c2.get_partition_names("shared_db", "t", -1)) == 10
    assert [p.values for p in c2.get_partitions_by_filter("shared_db", "t", 'dt = "d3"', -1)] == [["d3"]]

    # alter on two, read on one
    tbl = c2.get_table("shared_db", "t")
    tbl.parameters["owner_note"] = "changed by two"
    c2.alter_table("shared_db", "t", tbl)
    assert c1.get_table("shared_db", "t").parameters["owner_note"] == "changed by two"

    # the same object created through both servers at once: exactly one wins, the other gets
    # AlreadyExistsException (not a raw database error)
    ca, ta = one.client()  # separate connections: a Thrift client is not thread-safe
    cb, tb = two.client()
    try:
        for round_ in range(4):
            _race(lambda c, n=round_: c.create_table(_table("shared_db", f"race{n}")), ca, cb)
            _race(lambda c, n=round_: c.create_database(Database(name=f"race_db{n}", parameters={})), ca, cb)
            _race(lambda c, n=round_: c.add_partition(Partition(dbName="shared_db", tableName="t", values=[f"r{n}"],
                                                                sd=_sd(), parameters={})), ca, cb)
    finally:
        ta.close()
        tb.close()
    assert c1.get_all_tables("shared_db") == c2.get_all_tables("shared_db") == \
        ["race0", "race1", "race2", "race3", "t"]
    assert len(c2.get_partition_names("shared_db", "t", -1)) == 14
    for round_ in range(4):
        c1.drop_database(f"race_db{round_}", True, False)

    # locks are shared too
    l1 = c1.lock(_lock_req("shared_db", "t", LockType.EXCLUSIVE))
    assert l1.state == LockState.ACQUIRED
    l2 = c2.lock(_lock_req("shared_db", "t", LockType.SHARED_READ))
    assert l2.state == LockState.WAITING
    assert {e.lockid for e in c2.show_locks(ShowLocksRequest(dbname="shared_db")).locks} == {l1.lockid, l2.lockid}
    c1.unlock(UnlockRequest(lockid=l1.lockid))
    assert c2.check_lock(CheckLockRequest(lockid=l2.lockid)).state == LockState.ACQUIRED
    c2.unlock(UnlockRequest(lockid=l2.lockid))

    # drop on one is seen by two
    c1.drop_table("shared_db", "t", True)
    with pytest.raises(NoSuchObjectException):
        c2.get_table("shared_db", "t")
    c2.drop_database("shared_db", True, True)
    with pytest.raises(NoSuchObjectException):
        c1.get_database("shared_db")
    assert {pid for pid, *_ in one.calls()} == {one.proc.pid}
    assert {pid for pid, *_ in two.calls()} == {two.proc.pid}


def _race(fn, ca, cb) -> None:
    results: list[object] = [None, None]
    barrier = threading.Barrier(2)

    def run(i, c):
        barrier.wait(timeout=30)
        try:
            fn(c)
            results[i] = "ok"
        except AlreadyExistsException:
            results[i] = "exists"
        except Exception as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(0, ca)), threading.Thread(target=run, args=(1, cb))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert sorted(map(str, results)) == ["exists", "ok"], results
