"""Issue 19, store side: Hive's bounds on counts and ranges, no error answered for a change that was
made, typed answers to invalid lock and transaction requests, no driver text in answers, reads that
survive dropped database connections, and the same column widths on every backend.

Every test runs against a real server process (``our_server_info``, one per backend) through a real
Thrift client.
"""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from sqlalchemy import create_engine, text
from thrift.Thrift import TApplicationException

from bench.chaos import terminate
from thrift_idl.hive_metastore.ttypes import (
    AbortTxnRequest,
    CommitTxnRequest,
    Database,
    FieldSchema,
    HeartbeatTxnRangeRequest,
    LockComponent,
    LockLevel,
    LockRequest,
    MetaException,
    NoSuchLockException,
    NoSuchObjectException,
    NoSuchTxnException,
    OpenTxnRequest,
    Partition,
    SerDeInfo,
    StorageDescriptor,
    Table,
    TxnType,
)


def _sd(location: str | None = None) -> StorageDescriptor:
    return StorageDescriptor(
        cols=[FieldSchema("x", "int", None)], location=location,
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                            parameters={}))


def _name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def _table(db: str, name: str, location: str | None = None, keys: tuple[str, ...] = ()) -> Table:
    return Table(tableName=name, dbName=db, owner="t", sd=_sd(location), tableType="EXTERNAL_TABLE",
                 partitionKeys=[FieldSchema(k, "string", None) for k in keys], parameters={})


@pytest.fixture
def client(our_server_info, thrift_client):
    return thrift_client(our_server_info.port)


@pytest.fixture
def log_since(our_server_info):
    """Returns the server log written since the test began."""
    start = our_server_info.log_path.stat().st_size

    def read() -> str:
        with open(our_server_info.log_path, "rb") as f:
            f.seek(start)
            return f.read().decode("utf-8", "replace")

    return read


# --------------------------------------------------------------------------- finding 4: bounds


def test_open_txns_opens_at_most_hive_batch(client):
    started = time.monotonic()
    ids = client.open_txns(OpenTxnRequest(num_txns=2**31 - 1, user="u", hostname="h")).txn_ids
    assert len(ids) == 1000 and ids == list(range(ids[0], ids[0] + 1000))
    assert time.monotonic() - started < 10
    for t in ids:
        client.abort_txn(AbortTxnRequest(txnid=t))


def test_heartbeat_txn_range_is_bounded_and_set_based(client):
    started = time.monotonic()
    with pytest.raises(TApplicationException) as e:
        client.heartbeat_txn_range(HeartbeatTxnRangeRequest(min=1, max=2**62))
    assert "at most 1000" in e.value.message
    assert time.monotonic() - started < 10

    a, b, c = client.open_txns(OpenTxnRequest(num_txns=3, user="u", hostname="h")).txn_ids
    client.abort_txn(AbortTxnRequest(txnid=b))
    client.commit_txn(CommitTxnRequest(txnid=c))
    rsp = client.heartbeat_txn_range(HeartbeatTxnRangeRequest(min=a, max=c + 2))
    assert rsp.aborted == {b}
    assert rsp.nosuch == {c, c + 1, c + 2}
    assert client.heartbeat_txn_range(HeartbeatTxnRangeRequest(min=c, max=a)).nosuch == set()
    client.abort_txn(AbortTxnRequest(txnid=a))


# --------------------------------------------------------------------------- finding 7: no error for a change made


def test_add_partitions_with_a_nul_location_commits_nothing(client):
    db = _name("f7p")
    client.create_database(Database(name=db, parameters={}))
    client.create_table(_table(db, "t", keys=("p",)))
    parts = [Partition(values=[f"v{i}"], dbName=db, tableName="t", sd=_sd(), parameters={})
             for i in range(101)]
    parts[57].sd.location = "/tmp/bad\x00location"
    with pytest.raises(MetaException) as e:
        client.add_partitions(parts)
    assert "control character" in e.value.message
    assert client.get_partitions(db, "t", -1) == []
    parts[57].sd.location = None
    assert client.add_partitions(parts) == 101  # a retry after fixing the input succeeds


def test_create_table_with_a_nul_location_commits_nothing(client, our_server_info):
    db = _name("f7t")
    client.create_database(Database(name=db, parameters={}))
    with pytest.raises(MetaException):
        client.create_table(_table(db, "t", location=f"{our_server_info.warehouse}/x\x00y"))
    with pytest.raises(NoSuchObjectException):
        client.get_table(db, "t")
    client.create_table(_table(db, "t", location=f"{our_server_info.warehouse}/xy"))
    assert client.get_table(db, "t").sd.location.endswith("/xy")


def test_create_database_on_http_commits_nothing(client):
    db = _name("f7d")
    with pytest.raises(MetaException) as e:
        client.create_database(Database(name=db, locationUri="http://example.invalid/db", parameters={}))
    assert "read-only" in e.value.message
    with pytest.raises(NoSuchObjectException):
        client.get_database(db)
    client.create_database(Database(name=db, parameters={}))
    assert client.get_database(db).name == db


def test_a_directory_that_cannot_be_made_does_not_fail_a_committed_call(client, tmp_path):
    db = _name("f7s")
    client.create_database(Database(name=db, parameters={}))
    (tmp_path / "a-file").write_text("not a directory")
    location = f"file://{tmp_path}/a-file/t"  # mkdir fails: its parent is a file
    client.create_table(_table(db, "t", location=location))
    assert client.get_table(db, "t").sd.location == location
    assert (tmp_path / "a-file").read_text() == "not a directory"


# --------------------------------------------------------------------------- finding 8: typed answers


def test_invalid_lock_and_txn_requests_answer_their_reason(client, log_since):
    cases = [
        (lambda: client.lock(LockRequest(component=[], user="u", hostname="h")), TApplicationException,
         "no components"),
        (lambda: client.lock(LockRequest(component=[LockComponent(type=99, level=LockLevel.DB, dbname="d")],
                                         user="u", hostname="h")), TApplicationException, "Unknown lock type"),
        (lambda: client.lock(None), TApplicationException, "needs a LockRequest"),
        (lambda: client.open_txns(OpenTxnRequest(num_txns=0, user="u", hostname="h")), TApplicationException,
         "Invalid number of transactions"),
        (lambda: client.open_txns(None), TApplicationException, "OpenTxnRequest"),
        (lambda: client.open_txns(OpenTxnRequest(num_txns=1, user="u", hostname="h", txn_type=99)),
         TApplicationException, "Unknown transaction type 99"),
        (lambda: client.open_txns(OpenTxnRequest(num_txns=1, user="u", hostname="h", txn_type=TxnType.REPL_CREATED)),
         TApplicationException, "REPL_CREATED"),
        (lambda: client.commit_txn(CommitTxnRequest(txnid=1, txn_type=TxnType.REPL_CREATED)), TApplicationException,
         "REPL_CREATED"),
        (lambda: client.heartbeat_txn_range(None), TApplicationException, "HeartbeatTxnRangeRequest"),
        (lambda: client.unlock(None), NoSuchLockException, "lockid"),
        (lambda: client.check_lock(None), NoSuchLockException, "lockid"),
        (lambda: client.heartbeat(None), NoSuchLockException, "HeartbeatRequest"),
        (lambda: client.commit_txn(None), NoSuchTxnException, "txnid"),
        (lambda: client.abort_txn(None), NoSuchTxnException, "txnid"),
    ]
    for call, kind, reason in cases:
        with pytest.raises(kind) as e:
            call()
        assert type(e.value) is kind
        assert reason in e.value.message, e.value.message
        assert "Internal error" not in e.value.message
    assert "Traceback" not in log_since()


# --------------------------------------------------------------------------- finding 9: no driver text


def test_driver_errors_answer_an_id_not_sql(client, our_server_info, log_since):
    db = _name("f9")
    client.create_database(Database(name=db, parameters={}))
    admin = create_engine(our_server_info.db_url)
    with admin.begin() as conn:
        conn.execute(text("ALTER TABLE functions RENAME TO functions_moved"))
    try:
        with pytest.raises(MetaException) as e:
            client.get_functions(db, "*")
    finally:
        with admin.begin() as conn:
            conn.execute(text("ALTER TABLE functions_moved RENAME TO functions"))
        admin.dispose()
    message = e.value.message
    assert "error id" in message
    assert message.startswith("get_functions failed: the metastore database reported an error")
    for driver_text in ("SELECT ", "FROM ", "functions_moved", "no such table", "exist"):
        assert driver_text not in message
    error_id = message.rsplit("error id ", 1)[1].rstrip(")")
    log = log_since()
    assert error_id in log and "SELECT" in log  # the detail stays in the server log
    assert client.get_functions(db, "*") == []


# --------------------------------------------------------------------------- finding 11: widths


def test_values_beyond_the_column_widths_are_refused_on_every_backend(client):
    db = _name("f11")
    client.create_database(Database(name=db, parameters={}))
    client.create_table(_table(db, "t", keys=("p",)))
    for value, column, limit in (("v" * 300, "part_key_val", "256"), ("v" * 10_000, "part_name", "767")):
        part = Partition(values=[value], dbName=db, tableName="t", sd=_sd(), parameters={})
        with pytest.raises(MetaException) as e:
            client.add_partition(part)
        assert column in e.value.message and limit in e.value.message, e.value.message
    part = Partition(values=["ok"], dbName=db, tableName="t", sd=_sd(), parameters={"k" * 5000: "v"})
    with pytest.raises(MetaException) as e:
        client.add_partition(part)
    assert "param_key" in e.value.message and "256" in e.value.message
    assert client.get_partitions(db, "t", -1) == []
    with pytest.raises(MetaException):
        client.create_database(Database(name=_name("f11d"), parameters={"k": "nul\x00"}))


# --------------------------------------------------------------------------- finding 10: dropped connections


@pytest.mark.backends("postgresql", "mysql")  # SQLite has no database connections to drop
def test_reads_survive_dropped_database_connections(our_server_info, thrift_client):
    admin = create_engine(our_server_info.db_url, isolation_level="AUTOCOMMIT")
    backend = admin.dialect.name
    database = admin.url.database
    setup = thrift_client(our_server_info.port)
    db = _name("f10")
    setup.create_database(Database(name=db, parameters={}))
    setup.create_table(_table(db, "t", keys=("p",)))
    setup.add_partitions([Partition(values=[str(i)], dbName=db, tableName="t", sd=_sd(), parameters={})
                          for i in range(20)])
    stop = threading.Event()
    reads, failed_reads, writes = [0], [], {}

    def reader():
        c = thrift_client(our_server_info.port)
        while not stop.is_set():
            try:
                assert c.get_table(db, "t").tableName == "t"
                assert len(c.get_partitions(db, "t", -1)) == 20
                reads[0] += 1
            except Exception as exc:  # noqa: BLE001 - counted, the test fails on any
                failed_reads.append(repr(exc))

    def writer():
        c = thrift_client(our_server_info.port)
        while not stop.is_set():
            name = _name("w")
            try:  # create_table reads the table back after writing it
                if len(writes) % 2:
                    c.create_database(Database(name=name, parameters={}))
                else:
                    c.create_table(_table(db, name))
                writes[name] = True
            except Exception:  # noqa: BLE001 - the check below decides
                writes[name] = False

    threads = [threading.Thread(target=reader) for _ in range(3)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    terminated = 0
    try:
        for _ in range(6):
            time.sleep(0.4)
            terminated += terminate(admin, backend, database)
        time.sleep(0.4)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
        admin.dispose()
    assert terminated >= 6
    assert reads[0] > 0 and failed_reads == []
    def made(name: str) -> bool:
        try:
            setup.get_database(name)
            return True
        except NoSuchObjectException:
            pass
        try:
            setup.get_table(db, name)
            return True
        except NoSuchObjectException:
            return False

    for name, ok in writes.items():  # a write answered with an error was not made
        assert made(name) == ok, name


@pytest.mark.backends("postgresql", "mysql")  # SQLite has no database connections to drop
def test_a_commit_that_lost_its_connection_is_resolved(backend_url):
    """The COMMIT path of finding 10: the connection is terminated (from an admin connection) just
    before COMMIT is sent; the store learns the transaction did not commit and runs it again, so
    the row is there exactly once. A token of a committed transaction resolves as committed."""
    from sqlalchemy import event, func, insert, select

    from store.db import schema
    from store.db.database import Store
    from store.db.migrations import upgrade

    store = Store(backend_url)
    upgrade(store.engine)
    admin = create_engine(backend_url, isolation_level="AUTOCOMMIT")
    seq = schema.sequences
    name = _name("resolved")
    armed = [True]

    @event.listens_for(store.engine, "commit")
    def _kill_before_commit(conn):
        if armed[0]:
            armed[0] = False
            own = conn.exec_driver_sql(
                "SELECT pg_backend_pid()" if store.backend == "postgresql" else "SELECT CONNECTION_ID()").scalar()
            with admin.connect() as a:
                a.execute(text(f"SELECT pg_terminate_backend({int(own)})" if store.backend == "postgresql"
                               else f"KILL CONNECTION {int(own)}"))
                gone = ("SELECT count(*) FROM pg_stat_activity WHERE pid = :p" if store.backend == "postgresql"
                        else "SELECT count(*) FROM information_schema.processlist WHERE id = :p")
                deadline = time.monotonic() + 10
                while a.execute(text(gone), {"p": own}).scalar() and time.monotonic() < deadline:
                    time.sleep(0.02)  # the session is gone before COMMIT is sent

    attempts = []

    def body(conn):
        attempts.append(1)
        conn.execute(insert(seq).values(name=name, next_val=7))
        return "done"

    try:
        assert store.run_write(body) == "done"
        assert len(attempts) == 2 and not armed[0]
        with store.read() as conn:
            assert conn.execute(select(func.count()).select_from(seq).where(seq.c.name == name)).scalar() == 1
        with store.engine.connect() as conn, conn.begin():
            conn.execute(insert(seq).values(name=name + "x", next_val=1))
            token = store.commit_tokens.take(conn)
        assert store.commit_tokens.resolve(store.engine, token) is True
        with store.engine.connect() as conn:
            trans = conn.begin()
            conn.execute(insert(seq).values(name=name + "y", next_val=1))
            token = store.commit_tokens.take(conn)
            trans.rollback()
        assert store.commit_tokens.resolve(store.engine, token) is False
    finally:
        store.dispose()
        admin.dispose()


@pytest.mark.backends("postgresql", "mysql")
def test_a_commit_token_answers_for_its_own_transaction_only(backend_url):
    """After a failover, the new primary never saw a transaction whose COMMIT died with the old
    one, and may hand its transaction id to another: the token of a transaction the database never
    saw resolves as not committed, however many transactions committed since. A token whose
    transaction is still undecided waits for its end: committed, or rolled back."""
    from sqlalchemy import insert

    from store.db import schema
    from store.db.connection_loss import MARKER_PREFIX
    from store.db.database import Store
    from store.db.migrations import upgrade

    store = Store(backend_url)
    upgrade(store.engine)
    seq = schema.sequences
    try:
        unseen = MARKER_PREFIX + uuid.uuid4().hex  # taken on a primary that died with it
        for i in range(30):
            store.run_write(lambda conn, i=i: conn.execute(insert(seq).values(name=_name(f"after{i}"), next_val=i)))
        assert store.commit_tokens.resolve(store.engine, unseen) is False

        for end, committed in (("commit", True), ("rollback", False)):
            conn = store.engine.connect()
            trans = conn.begin()
            conn.execute(insert(seq).values(name=_name(end), next_val=1))
            token = store.commit_tokens.take(conn)
            assert token is not None
            ended = threading.Timer(0.5, getattr(trans, end))
            ended.start()
            try:
                assert store.commit_tokens.resolve(store.engine, token) is committed, end
            finally:
                ended.join()
                conn.close()
        if store.backend == "postgresql":  # a transaction that wrote nothing has nothing to lose
            with store.engine.connect() as conn, conn.begin():
                assert store.commit_tokens.take(conn) is None
    finally:
        store.dispose()
