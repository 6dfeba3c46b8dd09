"""The store: one SQLAlchemy engine and its transactions, shared by the RFC-36 services."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import Connection, CursorResult, Engine, func, select, update
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from store.db import schema
from store.db.connection_loss import CommitOutcomeUnknown, CommitTokens, connection_lost
from store.db.engine import is_galera, make_engine
from store.db.statement_timeout import DEFAULT_STATEMENT_TIMEOUT_S, is_statement_timeout
from store.errors import TooExpensive

log = logging.getLogger("hudi_metastore.store")
_call = threading.local()  # per request thread: did the current call begin a write transaction?


def call_begins() -> None:
    """A new request starts on this thread (the router calls this before each attempt)."""
    _call.wrote = False
    _call.committed = False


def call_committed() -> bool:
    """Did the current call commit a write transaction (so it changed something)?"""
    return getattr(_call, "committed", False)


def read_may_be_retried(exc: BaseException) -> bool:
    """May the call that raised `exc` be run again? Yes when the database connection was lost and
    the call began no write transaction: it only read, so running it again changes nothing."""
    return connection_lost(exc) and not getattr(_call, "wrote", False)

T = TypeVar("T")

# SQLSTATEs / MySQL error codes that mean "the transaction lost a race; run it again".
_RETRY_PGCODES = {"40001", "40P01"}
_RETRY_MYSQL = {1213, 1205}
# Attempts of a write on a Galera cluster: a transaction that loses certification to a commit on
# another node is run again, and under contention on one row (a table's instant time) it can lose
# several times in a row.
GALERA_ATTEMPTS = 12


def _is_retryable(exc: DBAPIError) -> bool:
    orig = exc.orig
    code = getattr(orig, "sqlstate", None)
    if code in _RETRY_PGCODES:
        return True
    args = getattr(orig, "args", ())
    if args and isinstance(args[0], int) and args[0] in _RETRY_MYSQL:
        return True
    return isinstance(exc, OperationalError) and "database is locked" in str(orig)


class Store:
    def __init__(self, url: str, warehouse: str = "./warehouse", engine: Engine | None = None,
                 statement_timeout_s: float | None = DEFAULT_STATEMENT_TIMEOUT_S):
        """`statement_timeout_s`: the longest one statement may run (None or 0: no limit); a
        statement that runs longer fails the call with TooExpensive."""
        self.url = url
        self.statement_timeout_s = statement_timeout_s
        self.engine = engine or make_engine(url, statement_timeout_s=statement_timeout_s)
        self.warehouse = warehouse
        self.backend = self.engine.dialect.name  # sqlite | postgresql | mysql | mariadb
        # reads on PostgreSQL/MySQL run without BEGIN/COMMIT (see make_engine); SQLite reads keep
        # their transaction, which is free there and gives the statements one snapshot
        self.read_engine = (make_engine(url, autocommit=True, statement_timeout_s=statement_timeout_s)
                            if engine is None and self.backend != "sqlite" else self.engine)
        self.commit_tokens = CommitTokens(self.backend)
        self._galera: bool | None = None
        self._analyze_lock = threading.Lock()
        self._analyzing: set[str] = set()
        self._changed: dict[str, int] = {}
        self._rows_at_analyze: dict[str, int] = {}

    # --- statistics upkeep (PostgreSQL) -----------------------------------------------------------
    # The planner needs statistics to start a partition filter from its most selective key; where
    # autovacuum is off or has not caught up after a bulk load, plans over fresh rows can scan whole
    # tables. Like autovacuum's analyze threshold: once the partitions added or dropped (and the
    # files with column statistics committed) through this process reach 1,000 + 10% of those
    # present at the last ANALYZE, analyze in the background.
    # The record index counts apart: a bulk load of a new table's keys left lookups planned as for a
    # table without them (the key a filter over the table's whole shard, not an index condition:
    # 8 to 14 s per 10,000 keys) for about a minute.
    ANALYZE_TABLES = "partitions, partition_key_val, partition_params, files, column_stats, snapshot_stats"
    ANALYZE_GROUPS = {"catalog": ANALYZE_TABLES, "record_index": "record_index"}

    def note_changes(self, n: int, group: str = "catalog") -> None:
        """`n` rows of the tables of ANALYZE_GROUPS[group] written (or removed) and committed."""
        if self.backend != "postgresql" or n <= 0:
            return
        with self._analyze_lock:
            changed = self._changed[group] = self._changed.get(group, 0) + n
            if group in self._analyzing or changed < 1000 + 0.1 * self._rows_at_analyze.get(group, 0):
                return
            self._analyzing.add(group)
            self._rows_at_analyze[group] = self._rows_at_analyze.get(group, 0) + changed
            self._changed[group] = 0
        threading.Thread(target=self._analyze, args=(group,), name="analyze", daemon=True).start()

    def _analyze(self, group: str) -> None:
        try:
            with self.read_engine.connect() as conn:
                conn.exec_driver_sql(f"ANALYZE {self.ANALYZE_GROUPS[group]}")
        except Exception as exc:  # noqa: BLE001 - statistics are an optimisation only
            log.warning("ANALYZE failed: %s", exc)
        finally:
            with self._analyze_lock:
                self._analyzing.discard(group)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        joined = getattr(_call, "joined", None)
        if joined is not None:  # inside one_transaction: read what it wrote so far
            yield joined
            return
        with self._timeouts_answered(), self._read_connection() as conn:
            if self.read_engine is self.engine:  # SQLite: one transaction, one snapshot (free there)
                with conn.begin():
                    yield conn
            else:  # autocommit: a BEGIN would only be SQLAlchemy's bookkeeping
                yield conn

    def run_read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """fn(conn, ...) in a read, run again on a fresh connection (up to 2 times) when the database
        dropped the connection: for reads a call makes after it wrote, which the router cannot
        retry as a whole."""
        for attempt in range(3):
            try:
                with self.read() as conn:
                    return fn(conn, *args, **kwargs)
            except DBAPIError as exc:
                if attempt == 2 or not connection_lost(exc):
                    raise
                log.info("a read lost its database connection; reading again on a fresh one")
        raise AssertionError("unreachable")

    def _read_connection(self) -> Connection:
        """A connection for a read. After a write in the same call the router cannot run the call
        again, so the connection is pinged first and, if the database dropped it, replaced (the
        failed ping invalidates the pool: the next one is fresh)."""
        for attempt in range(3):
            conn = self.read_engine.connect()
            if self.backend == "sqlite" or not getattr(_call, "wrote", False):
                return conn
            try:
                conn.exec_driver_sql("SELECT 1").all()
                conn.rollback()  # end the ping's implicit transaction; the read begins its own
                return conn
            except DBAPIError as exc:
                conn.close()
                if attempt == 2 or not connection_lost(exc):
                    raise
        raise AssertionError("unreachable")

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction: committed when the block ends, rolled back on any error. (Not
        retried when the connection is lost: run_write is.)"""
        joined = getattr(_call, "joined", None)
        if joined is not None:
            yield joined
            return
        _call.wrote = True
        with self._timeouts_answered(), self.engine.connect().execution_options(hms_write=True) as conn, \
                conn.begin():
            yield conn
        _call.committed = True

    def _write_once(self, fn: Callable[..., T], args: Any, kwargs: Any) -> T:
        """fn(conn, ...) in one write transaction. A connection lost while COMMIT was under way is
        resolved (store/db/connection_loss.py): committed -> fn's result; not committed ->
        `_NotCommitted`, so the caller runs it again."""
        _call.wrote = True
        with self._timeouts_answered(), self.engine.connect().execution_options(hms_write=True) as conn:
            if self._galera is None and self.backend != "sqlite":
                self.galera(conn)  # known before the first retry decision (asked once, outside the transaction)
                conn.rollback()
            trans = conn.begin()
            try:
                result = fn(conn, *args, **kwargs)
                token = self.commit_tokens.take(conn)
            except BaseException:
                _rollback_quietly(trans)
                raise
            try:
                trans.commit()
            except DBAPIError as exc:
                if not connection_lost(exc):
                    raise
                log.warning("connection lost during COMMIT; resolving transaction %s", token)
                if not self.commit_tokens.resolve(self.engine, token):
                    raise _NotCommitted(exc) from exc
            self.commit_tokens.committed(token)
            _call.committed = True
            return result

    @contextmanager
    def _timeouts_answered(self) -> Iterator[None]:
        """A statement aborted at the statement timeout as TooExpensive (no SQL in the message)."""
        try:
            yield
        except DBAPIError as exc:
            if not is_statement_timeout(exc):
                raise
            raise TooExpensive(
                "The request was too expensive: a database statement ran longer than the statement "
                f"timeout ({self.statement_timeout_s:g} s) and was stopped; narrow the request "
                "(a more selective filter or name pattern)") from exc

    def run_write(self, fn: Callable[..., T], *args: Any, attempts: int = 5, **kwargs: Any) -> T:
        """Run fn(conn, ...) in a write transaction, again when it loses a deadlock/serialization race
        or its connection before it committed. fn may run more than once: whatever it has to tell
        the caller, it returns."""
        joined = getattr(_call, "joined", None)
        if joined is not None:  # part of one_transaction: it commits (and retries) the whole
            return fn(joined, *args, **kwargs)
        if attempts < 1:
            raise ValueError(f"run_write needs at least one attempt, not {attempts}")
        integrity_retried = False
        attempt = 0
        while True:
            # (Galera, learned in the first attempt: certification conflicts between nodes are
            # far more frequent than deadlocks, so they get more attempts)
            last = attempt + 1 >= (max(attempts, GALERA_ATTEMPTS) if self._galera else attempts)
            try:
                return self._write_once(fn, args, kwargs)
            except _NotCommitted as exc:
                if last:
                    raise exc.lost from None
            except IntegrityError:
                # A concurrent writer (another thread or server process) committed the same key
                # between fn's existence check and its insert. Run fn once more: its check now sees
                # that row and answers as Hive does (AlreadyExists), not with a raw error.
                if integrity_retried or last:
                    raise
                integrity_retried = True
            except DBAPIError as exc:
                if last or not (_is_retryable(exc) or connection_lost(exc)):
                    raise
                time.sleep(random.uniform(0.005, 0.05) * (attempt + 1))
            attempt += 1

    @staticmethod
    def joined() -> Connection | None:
        """The connection of the one_transaction running on this thread, if any."""
        return getattr(_call, "joined", None)

    def one_transaction(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """fn(conn, ...) with every read and write the services make on this thread joining one write
        transaction: all of it commits, or none (a Hudi table's catch-up and the call that caused it).
        Retried as a whole, as run_write is."""
        def joined(conn: Connection) -> T:
            _call.joined = conn
            try:
                return fn(conn, *args, **kwargs)
            finally:
                _call.joined = None

        if getattr(_call, "joined", None) is not None:
            return fn(_call.joined, *args, **kwargs)
        return self.run_write(joined)

    def galera(self, conn: Connection) -> bool:
        """Is the database a node of a MariaDB Galera Cluster (`wsrep_on`)? Asked once."""
        if self._galera is None:
            self._galera = self.backend in ("mysql", "mariadb") and is_galera(conn)
        return self._galera

    def cluster_lock(self, conn: Connection, name: str) -> None:
        """Make the row lock this transaction took on `name`'s row hold across a Galera cluster.

        Galera certifies a transaction at COMMIT against the rows others wrote meanwhile on any
        node; a row lock (`SELECT ... FOR UPDATE`) binds only the node it was taken on. So on
        Galera the lock also writes: it advances the sequence `lock:<name>`, and of two
        transactions that took it on different nodes one fails certification (a deadlock error)
        and is run again. Elsewhere the row lock already serializes: nothing to do."""
        if self.galera(conn):
            self.next_id(conn, "lock:" + name)

    def next_id(self, conn: Connection, name: str, count: int = 1) -> int:
        """Take `count` ids from a named sequence inside the caller's transaction; returns the first."""
        seq = schema.sequences
        res = conn.execute(update(seq).where(seq.c.name == name).values(next_val=seq.c.next_val + count))
        if res.rowcount == 0:
            from sqlalchemy.exc import IntegrityError

            try:
                with conn.begin_nested():
                    conn.execute(seq.insert().values(name=name, next_val=1 + count))
                return 1
            except IntegrityError:
                conn.execute(update(seq).where(seq.c.name == name).values(next_val=seq.c.next_val + count))
        return conn.execute(select(seq.c.next_val).where(seq.c.name == name)).scalar_one() - count

    def dispose(self) -> None:
        self.engine.dispose()
        if self.read_engine is not self.engine:
            self.read_engine.dispose()


class _NotCommitted(Exception):
    """A COMMIT lost its connection and the transaction did not commit: run it again."""

    def __init__(self, lost: DBAPIError):
        super().__init__(str(lost))
        self.lost = lost


def _rollback_quietly(trans) -> None:
    """Roll back after an error; a connection that is gone has nothing to roll back."""
    try:
        if trans.is_active:
            trans.rollback()
    except DBAPIError as exc:
        log.info("rollback after an error failed too: %s", type(exc).__name__)


def inserted_id(result: CursorResult[Any]) -> int:
    """The primary key of the one row an INSERT added."""
    key = result.inserted_primary_key
    assert key is not None, "not the result of an INSERT of one row"
    return key[0]


def now_s() -> int:
    return int(time.time())


def now_ms() -> int:
    return int(time.time() * 1000)


__all__ = ["CommitOutcomeUnknown", "Store", "call_begins", "call_committed", "inserted_id", "now_s", "now_ms", "func",
           "read_may_be_retried"]
