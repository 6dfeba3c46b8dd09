"""client/: HudiMetastoreClient against our server (and against fake servers for the
retry rule), plus a small end-to-end run of the Hudi extension calls.

* connection reuse (one connection per client, also under threads), session replay on reconnect;
* retries: a restarted server on the same port (stale connection, refused connects while it is
  down), a server that drops requests (idempotent calls retried, others not), connect failures
  retried for every call;
* HMS passthrough (any ThriftHiveMetastore method, exceptions as the server answers them);
* Hudi: register a table, create -> inflight -> complete an instant, list instants, latest file
  slices, files, metadata, a commit conflict.
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
import uuid

import pytest
from thrift.Thrift import TApplicationException
from thrift.transport.TTransport import TTransportException

from client import HudiMetastoreClient, is_idempotent, state_name
from tests.harness import ServerStartError, free_port, start_our_server, stop_process
from thrift_idl.hive_metastore.ttypes import (
    AlreadyExistsException,
    Database,
    FieldSchema,
    InvalidObjectException,
    MetaException,
    NoSuchObjectException,
)
from thrift_idl.hudi_metastore.ttypes import (
    CommitConflictException,
    HudiTableConfig,
    HudiTableType,
    InstantState,
)

TIMEOUT = 30.0


def _uri(port: int) -> str:
    return f"thrift://127.0.0.1:{port}"


@pytest.fixture
def client_factory():
    made = []

    def make(port: int, **kw) -> HudiMetastoreClient:
        kw.setdefault("timeout_s", TIMEOUT)
        c = HudiMetastoreClient(_uri(port), **kw)
        made.append(c)
        return c

    yield make
    for c in made:
        c.close()


@pytest.fixture
def own_server(tmp_path):
    """Factory: start (or restart) our server on SQLite; stopped after the test."""
    procs = []
    db_url = f"sqlite:///{tmp_path / 'metastore.db'}"

    def start(port: int | None = None, name: str = "srv", extra_args=()):
        try:
            port, proc = start_our_server(db_url, tmp_path / f"{name}{len(procs)}", port=port,
                                          warehouse=tmp_path / "warehouse", extra_args=extra_args)
        except ServerStartError as e:
            pytest.fail(str(e), pytrace=False)
        procs.append(proc)
        return port, proc

    yield start
    for proc in procs:
        stop_process(proc)


# --------------------------------------------------------------------------- unit: the retry rule


def test_idempotent_classification():
    for name in ("get_table", "get_all_databases", "get_hudi_table", "list_instants", "get_latest_file_slices",
                 "heartbeat_instant", "add_markers", "set_ugi", "setMetaConf", "heartbeat"):
        assert is_idempotent(name), name
    for name in ("create_instant", "transition_to_inflight", "complete_instant", "rollback_instant",
                 "new_instant_time", "register_hudi_table", "create_table", "drop_table", "lock",
                 "sync_storage", "add_partition"):
        assert not is_idempotent(name), name
    assert state_name(InstantState.COMPLETED) == "COMPLETED"


class _DroppingServer:
    """Accepts connections, reads what arrives, and closes without answering: every request
    reaches it, none gets an answer."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.requests = 0
        self._stop = False
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self):
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            with conn:
                conn.settimeout(5)
                try:
                    if conn.recv(65536):
                        self.requests += 1
                except OSError:
                    pass

    def close(self):
        self._stop = True
        self.sock.close()


@pytest.fixture
def dropping_server():
    s = _DroppingServer()
    yield s
    s.close()


def test_non_idempotent_call_is_not_retried_once_sent(dropping_server, client_factory):
    c = client_factory(dropping_server.port, retries=3, backoff_s=0.01)
    with pytest.raises(TTransportException):
        c.create_instant("db", "t", "", "commit")
    assert dropping_server.requests == 1
    assert c.retried_calls == 0
    with pytest.raises(TTransportException):
        c.create_database(Database(name="x", description="", locationUri="", parameters={}))
    assert dropping_server.requests == 2


def test_idempotent_call_is_retried_once_sent(dropping_server, client_factory):
    c = client_factory(dropping_server.port, retries=3, backoff_s=0.01)
    with pytest.raises(TTransportException):
        c.get_latest_file_slices("db", "t")
    deadline = time.monotonic() + 5
    while dropping_server.requests < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert dropping_server.requests == 4  # 1 + 3 retries
    assert c.retried_calls == 3
    # An explicit override: the caller knows this call is safe to repeat.
    with pytest.raises(TTransportException):
        c.call("new_instant_time", "db", "t", idempotent=True)
    deadline = time.monotonic() + 5
    while dropping_server.requests < 8 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert dropping_server.requests == 8


def test_connect_failures_are_retried_for_every_call(own_server, client_factory):
    """Nothing listens yet: a non-idempotent call waits out the refused connects (its request
    never left) and succeeds once the server is up."""
    port = free_port()
    c = client_factory(port, retries=60, backoff_s=0.1, max_backoff_s=0.5)
    started = threading.Event()

    def start_later():
        time.sleep(0.5)
        own_server(port)
        started.set()

    t = threading.Thread(target=start_later, daemon=True)
    t.start()
    name = f"late_{uuid.uuid4().hex[:8]}"
    c.create_database(Database(name=name, description="", locationUri="", parameters={}))
    t.join(TIMEOUT * 2)
    assert started.is_set()
    assert c.retried_calls >= 1
    assert c.get_database(name).name == name
    assert c.connections_opened == 1


def test_closed_client_refuses_calls(client_factory):
    c = client_factory(free_port(), retries=0)
    c.close()
    with pytest.raises(TTransportException):
        c.get_all_databases()


def test_bad_uri():
    with pytest.raises(ValueError):
        HudiMetastoreClient("http://127.0.0.1:9083")
    assert HudiMetastoreClient("thrift://a:1,thrift://b").endpoints == [("a", 1), ("b", 9083)]


# --------------------------------------------------------------------------- restart on the same port


def test_retry_after_server_restarts_on_the_same_port(own_server, client_factory):
    port, proc = own_server()
    c = client_factory(port, retries=60, backoff_s=0.1, max_backoff_s=0.5)
    assert "default" in c.get_all_databases()
    assert c.connections_opened == 1

    # Restarted while the client is idle: its connection is stale; the next call reconnects.
    stop_process(proc)
    _, proc = own_server(port)
    assert "default" in c.get_all_databases()
    assert c.connections_opened == 2

    # Down while the client calls: refused connects are retried until it is back.
    stop_process(proc)
    t = threading.Thread(target=lambda: (time.sleep(0.7), own_server(port)), daemon=True)
    t.start()
    assert "default" in c.get_all_databases()  # idempotent: retried until the server answers
    t.join(TIMEOUT * 2)
    assert c.connections_opened == 3
    assert c.retried_calls >= 1


# --------------------------------------------------------------------------- connection reuse, passthrough


def test_one_connection_is_reused(our_server, client_factory):
    c = client_factory(our_server)
    for _ in range(20):
        assert "default" in c.get_all_databases()
    assert c.connections_opened == 1
    assert c.retried_calls == 0


def test_threads_share_one_connection(our_server, client_factory):
    c = client_factory(our_server)
    errors = []

    def work():
        try:
            for _ in range(15):
                assert c.get_database("default").name == "default"
                with pytest.raises(NoSuchObjectException):
                    c.get_table("default", f"missing_{uuid.uuid4().hex[:6]}")
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT * 2)
    assert not errors, errors[:3]
    assert c.connections_opened == 1


def test_hms_passthrough(our_server, client_factory):
    c = client_factory(our_server)
    name = f"pass_{uuid.uuid4().hex[:8]}"
    c.create_database(Database(name=name, description="d", locationUri="", parameters={}))
    with pytest.raises(AlreadyExistsException):
        c.create_database(Database(name=name, description="d", locationUri="", parameters={}))
    assert c.get_database(name).description == "d"
    assert name in c.get_databases(f"pass_{name[5:]}*")
    assert c.getName() == "hudi-metastore"
    assert c.call("get_all_databases") == c.get_all_databases()
    with pytest.raises(NoSuchObjectException):
        c.get_table(name, "nope")
    with pytest.raises(AttributeError):
        c.no_such_method()
    # The connection survives answered exceptions.
    assert c.connections_opened == 1
    c.drop_database(name, True, True)


def test_session_is_replayed_on_reconnect(our_server, client_factory):
    c = client_factory(our_server)
    key = "hive.metastore.try.direct.sql"
    before = c.getMetaConf(key)
    other = "false" if before != "false" else "true"
    c.setMetaConf(key, other)
    assert c.getMetaConf(key) == other
    c._drop()  # as if the connection broke
    assert c.getMetaConf(key) == other
    assert c.connections_opened == 2
    with pytest.raises(MetaException):
        c.setMetaConf("not.a.metastore.key", "x")  # refused: not remembered
    c._drop()
    assert c.getMetaConf(key) == other


def test_plain_thrift_client_still_works(our_server, thrift_client):
    """The extension service is a superset: a plain ThriftHiveMetastore client sees no difference."""
    plain = thrift_client(our_server)
    assert "default" in plain.get_all_databases()


# --------------------------------------------------------------------------- Hudi end to end


def _commit_metadata(ts: str, file_id: str = "f1-0", partition: str = "p1", size: int = 10) -> dict:
    return {
        "partitionToWriteStats": {partition: [{
            "fileId": file_id, "path": f"{partition}/{file_id}_0-1-1_{ts}.parquet", "partitionPath": partition,
            "fileSizeInBytes": size, "prevCommit": "null"}]},
        "compacted": False, "extraMetadata": {}, "operationType": "INSERT",
    }


def _register(c: HudiMetastoreClient, table: str, base_path: str | None = None) -> None:
    c.register_hudi_table(
        HudiTableConfig(dbName="default", tableName=table, tableType=HudiTableType.COPY_ON_WRITE,
                        recordKeyFields=["id"], partitionFields=["p"], precombineField="ts", properties={},
                        basePath=base_path),
        [FieldSchema("id", "string", None), FieldSchema("ts", "bigint", None), FieldSchema("v", "string", None),
         FieldSchema("p", "string", None)])


def test_hudi_end_to_end(our_server, client_factory):
    c = client_factory(our_server)
    table = f"hudi_{uuid.uuid4().hex[:8]}"
    _register(c, table)
    cfg = c.get_hudi_table("default", table)
    assert (cfg.tableName, cfg.tableType, cfg.recordKeyFields, cfg.partitionFields, cfg.tableVersion) == (
        table, HudiTableType.COPY_ON_WRITE, ["id"], ["p"], 6)
    assert c.get_table("default", table).tableName == table  # also an HMS table

    ts = c.new_instant_time("default", table)
    assert len(ts) == 17 and ts.isdigit()
    requested = c.create_instant("default", table, ts, "commit", plan=b"", heartbeat_timeout_s=60)
    assert (requested.timestamp, requested.action, requested.state) == (ts, "commit", InstantState.REQUESTED)
    assert requested.heartbeatTimeoutSec == 60
    inflight = c.transition_to_inflight("default", table, ts, "commit", {"partitionToWriteStats": {}})
    assert inflight.state == InstantState.INFLIGHT
    c.heartbeat_instant("default", table, ts)
    c.add_markers("default", table, ts, [f"p1/f1-0_0-1-1_{ts}.parquet"])
    c.add_markers("default", table, ts, [f"p1/f1-0_0-1-1_{ts}.parquet"])  # idempotent
    assert c.list_instants("default", table, states=["COMPLETED"]) == []

    metadata = _commit_metadata(ts)
    done = c.complete_instant("default", table, ts, "commit", metadata)
    assert done.instant.state == InstantState.COMPLETED and done.instant.completionTime >= ts
    assert done.tableVersion >= 1

    instants = c.list_instants("default", table)
    assert [(i.timestamp, i.action, state_name(i.state)) for i in instants] == [(ts, "commit", "COMPLETED")]
    assert c.list_instants("default", table, actions=["deltacommit"]) == []
    assert len(c.list_instants("default", table, min_ts=ts, max_ts=ts)) == 1
    assert json.loads(c.get_instant_metadata("default", table, ts, "commit")) == metadata
    assert c.get_failed_instants("default", table) == []

    slices = c.get_latest_file_slices("default", table)
    assert [(s.partitionPath, s.fileId, s.baseInstant) for s in slices] == [("p1", "f1-0", ts)]
    base = slices[0].baseFile
    assert (base.name, base.size, base.isLog, base.commitTime) == (f"f1-0_0-1-1_{ts}.parquet", 10, False, ts)
    assert base.path == f"{cfg.basePath.rstrip('/')}/p1/{base.name}"  # where the `hive` strategy puts it
    assert slices[0].logFiles == []
    assert c.get_latest_file_slices("default", table, ["p1"], as_of=ts) == slices
    assert c.get_latest_file_slices("default", table, ["p2"]) == []
    assert c.get_hudi_partitions("default", table) == ["p1"]
    assert [f.name for f in c.get_all_files("default", table, "p1")] == [base.name]
    assert [f.name for f in c.get_files_changed("default", table)] == [base.name]
    assert c.get_files_changed("default", table, since=ts) == []

    with pytest.raises(NoSuchObjectException):
        c.get_hudi_table("default", f"{table}_missing")
    with pytest.raises(NoSuchObjectException):
        c.list_instants("default", f"{table}_missing")
    assert c.connections_opened == 1


def test_hudi_commit_conflict(our_server, client_factory):
    """Two writers of one file group: the one that completes second gets CommitConflictException."""
    c = client_factory(our_server)
    table = f"hudi_{uuid.uuid4().hex[:8]}"
    _register(c, table)
    a = c.create_instant("default", table, None, "commit").timestamp
    b = c.create_instant("default", table, None, "commit").timestamp
    assert b > a
    for ts in (a, b):
        c.transition_to_inflight("default", table, ts, "commit")
    c.complete_instant("default", table, b, "commit", _commit_metadata(b))
    with pytest.raises(CommitConflictException) as info:
        c.complete_instant("default", table, a, "commit", _commit_metadata(a))
    assert info.value.conflictingInstants == [b]
    assert info.value.message
    states = {i.timestamp: i.state for i in c.list_instants("default", table)}
    assert states == {a: InstantState.INFLIGHT, b: InstantState.COMPLETED}


def test_storage_strategy_paths_and_refusals(our_server, client_factory):
    """RFC-60: listing answers carry the path the table's strategy gives (the server converts the
    built-in ones and never imports a custom one); bad strategy options register nothing."""
    from hudi_format.storage_strategy import hash_prefix

    c = client_factory(our_server)
    cases = {"object-store": {"hoodie.storage.strategy.class": "object-store", "hoodie.storage.path": "s3://b/data/"},
             "custom": {"hoodie.storage.strategy.class": "some.module.Strategy", "hoodie.storage.path": "s3://b/c"}}
    for kind, props in cases.items():
        table = f"hudi_{uuid.uuid4().hex[:8]}"
        c.register_hudi_table(HudiTableConfig(dbName="default", tableName=table, tableType=HudiTableType.COPY_ON_WRITE,
                                              recordKeyFields=["id"], partitionFields=["p"], properties=props,
                                              basePath=f"s3://b/wh/{table}"), [FieldSchema("id", "string", None)])
        ts = c.create_instant("default", table, None, "commit").timestamp
        c.transition_to_inflight("default", table, ts, "commit")
        c.complete_instant("default", table, ts, "commit", _commit_metadata(ts))
        (f,) = c.get_all_files("default", table, "p1")
        (changed,) = c.get_files_changed("default", table)
        (s,) = c.get_latest_file_slices("default", table)
        want = f"s3://b/data/{hash_prefix('f1-0')}/{table}/p1/{f.name}" if kind == "object-store" else None
        assert f.path == changed.path == s.baseFile.path == want
    for props, words in [({"hoodie.storage.strategy.class": "object-store"}, "needs hoodie.storage.path"),
                         ({"hoodie.storage.strategy.class": "no dots here"}, "import path")]:
        table = f"hudi_{uuid.uuid4().hex[:8]}"
        with pytest.raises(InvalidObjectException, match=words):
            c.register_hudi_table(HudiTableConfig(
                dbName="default", tableName=table, tableType=HudiTableType.COPY_ON_WRITE, recordKeyFields=["id"],
                partitionFields=["p"], properties=props), [FieldSchema("id", "string", None)])
        with pytest.raises(NoSuchObjectException):
            c.get_table("default", table)


def test_hudi_errors_are_declared_exceptions(our_server, client_factory):
    c = client_factory(our_server)
    table = f"hudi_{uuid.uuid4().hex[:8]}"
    _register(c, table)
    with pytest.raises(AlreadyExistsException):
        _register(c, table)
    with pytest.raises(Exception) as info:
        c.create_instant("default", table, None, "no-such-action")
    assert not isinstance(info.value, (TApplicationException, TTransportException))
    with pytest.raises(NoSuchObjectException):
        c.sync_storage("default", "no_such_table")
    assert c.connections_opened == 1


def test_sync_storage_mirrors_what_a_commit_could_not(own_server, client_factory, tmp_path):
    """A commit is mirrored to storage right away; when that fails the version waits, and
    sync_storage mirrors it and answers how many versions it wrote (no background retry here)."""
    port, _ = own_server(extra_args=["--mirror-interval", "0"])
    c = client_factory(port)
    base = tmp_path / "t_sync"
    _register(c, "t_sync", str(base))

    def lag() -> int:
        return c.get_hudi_table_stats("default", "t_sync").mirrorLagVersions

    def commit() -> str:
        ts = c.create_instant("default", "t_sync", None, "commit").timestamp
        c.transition_to_inflight("default", "t_sync", ts, "commit")
        c.complete_instant("default", "t_sync", ts, "commit", _commit_metadata(ts, file_id=f"f-{ts}"))
        return ts

    first = commit()
    assert (base / ".hoodie" / f"{first}.commit").exists() and lag() == 0
    assert c.sync_storage("default", "t_sync") == 0  # nothing pending

    shutil.rmtree(base / ".hoodie")
    (base / ".hoodie").write_text("not a folder: the mirror cannot write")
    second, third = commit(), commit()
    assert lag() == 2
    with pytest.raises(MetaException):  # the storage is still broken
        c.sync_storage("default", "t_sync")
    assert lag() == 2

    (base / ".hoodie").unlink()
    assert c.sync_storage("default", "t_sync") == 2
    assert lag() == 0
    for ts in (second, third):
        assert (base / ".hoodie" / f"{ts}.commit").exists(), ts
    assert c.sync_storage("default", "t_sync") == 0
