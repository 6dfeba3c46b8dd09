"""Connections the database dropped (restart, failover, `pg_terminate_backend`, `KILL CONNECTION`):
how to recognize the error, and how to learn afterwards whether a commit that lost its connection
took effect.

The rule the store follows (store/db/database.py):

* a read that lost its connection is run again on a fresh connection;
* a write transaction that lost its connection before COMMIT was sent is rolled back by the
  database (a transaction dies with its session): it is run again on a fresh connection;
* a write whose connection was lost while COMMIT was under way may or may not have committed. Each
  write transaction that wrote anything inserts a commit token just before COMMIT: a marker row in
  `sequences` (name `commit:<random>`; deleted in batches later). On a fresh connection the store
  asks whether the marker is there, waiting while the dying transaction still holds it: PostgreSQL
  inserts the same name again (the unique index waits for the other inserter's end; a conflict
  means it committed), MySQL/MariaDB read it with a locking read. Committed: the call answers
  success; not committed: it is run again; unknown (the database cannot be reached):
  `CommitOutcomeUnknown`. (Not PostgreSQL's transaction id with `txid_status`: after a failover the
  new primary hands out again the ids of transactions it never saw, and answered for another one.)
"""

from __future__ import annotations

import time
import uuid
from collections import deque
from threading import Lock
from typing import Any

from sqlalchemy import Connection, Engine, delete, insert, select, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from store.db import schema

# PostgreSQL SQLSTATEs: class 08 (connection exception), 57P01-57P03 (admin/crash shutdown, cannot
# connect now). MySQL/MariaDB client and server codes: server gone / lost / killed / shutting down.
_PG_LOST_PREFIXES = ("08", "57P01", "57P02", "57P03")
_MYSQL_LOST = {1053, 1927, 2006, 2013, 2014, 2045, 2055, 4031}

MARKER_PREFIX = "commit:"
_RESOLVE_WAIT_S = 10.0
_PROBE_WAIT_S = 2.0  # one probe's wait for the dying transaction (PostgreSQL), within _RESOLVE_WAIT_S
_PG_LOCK_TIMEOUT = "55P03"
_PG_TAKE = text("INSERT INTO sequences (name, next_val) SELECT :m, 0 WHERE txid_current_if_assigned() IS NOT NULL")


# Cannot connect at all (refused, host unknown, too many connections), and Galera's "WSREP has not
# yet prepared node for application use" (a node outside the primary component: partitioned off).
_MYSQL_UNAVAILABLE = {1040, 1047, 2002, 2003, 2005}


class CommitOutcomeUnknown(Exception):
    """The connection was lost while COMMIT was under way and the store could not learn whether
    the transaction committed."""


def connection_lost(exc: BaseException) -> bool:
    """Does this driver error say the connection to the database is gone?"""
    if not isinstance(exc, DBAPIError):
        return False
    if exc.connection_invalidated:
        return True
    orig = exc.orig
    code = getattr(orig, "sqlstate", None)
    if isinstance(code, str) and code.startswith(_PG_LOST_PREFIXES):
        return True
    args: tuple[Any, ...] = tuple(getattr(orig, "args", ()))
    return bool(args) and isinstance(args[0], int) and args[0] in _MYSQL_LOST


def database_unavailable(exc: BaseException) -> bool:
    """Is the database unusable from here (connection lost or refused; a Galera node partitioned off
    the cluster), rather than this statement wrong?"""
    if connection_lost(exc):
        return True
    if not isinstance(exc, DBAPIError):
        return False
    orig = exc.orig
    args: tuple[Any, ...] = tuple(getattr(orig, "args", ()))
    if args and isinstance(args[0], int) and args[0] in _MYSQL_UNAVAILABLE:
        return True
    # psycopg: a connection that could not be made carries no SQLSTATE
    return type(orig).__name__ == "OperationalError" and getattr(orig, "sqlstate", "") is None \
        and type(orig).__module__.startswith("psycopg")


class CommitTokens:
    """Takes a token in each write transaction just before COMMIT, and resolves it when the COMMIT
    lost its connection."""

    def __init__(self, backend: str):
        self.backend = backend
        self._done: deque[str] = deque()  # markers of committed transactions, deleted in batches
        self._lock = Lock()

    def take(self, conn: Connection) -> Any:
        if self.backend not in ("postgresql", "mysql", "mariadb"):
            return None  # SQLite: the database is this process's file; no connection to lose
        self._forget_done(conn)
        marker = MARKER_PREFIX + uuid.uuid4().hex
        if self.backend == "postgresql":
            # only a transaction that wrote (it has a transaction id) has anything to lose
            return marker if conn.execute(_PG_TAKE, {"m": marker}).rowcount else None
        conn.execute(insert(schema.sequences).values(name=marker, next_val=0))
        return marker

    def committed(self, token: Any) -> None:
        if isinstance(token, str):
            with self._lock:
                self._done.append(token)

    def _forget_done(self, conn: Connection) -> None:
        """Delete the markers of committed transactions in this transaction, 100 at a time."""
        with self._lock:
            if len(self._done) < 100:
                return
            names = [self._done.popleft() for _ in range(len(self._done))]
        conn.execute(delete(schema.sequences).where(schema.sequences.c.name.in_(names)))
        # if this transaction fails they linger: harmless rows nobody reads

    def resolve(self, engine: Engine, token: Any) -> bool:
        """Did the transaction of `token` commit? CommitOutcomeUnknown when that cannot be learned."""
        if token is None:
            return False  # SQLite, or PostgreSQL before anything was written: nothing to lose
        deadline = time.monotonic() + _RESOLVE_WAIT_S
        while True:
            try:
                with engine.connect() as conn:
                    state = self._state(conn, token)
            except DBAPIError as exc:
                if time.monotonic() > deadline:
                    raise CommitOutcomeUnknown(str(exc)) from exc
                state = "in progress"
            if state != "in progress":
                return state == "committed"
            if time.monotonic() > deadline:
                raise CommitOutcomeUnknown(f"transaction {token} still in progress")
            time.sleep(0.05)

    def _state(self, conn: Connection, token: Any) -> str:
        seq = schema.sequences
        if self.backend == "postgresql":
            # inserting the marker again waits (unique index) while its transaction is undecided
            trans = conn.begin()
            try:
                conn.execute(text(f"SET LOCAL lock_timeout = '{int(_PROBE_WAIT_S * 1000)}ms'"))
                conn.execute(insert(seq).values(name=token, next_val=0))
                return "aborted"
            except IntegrityError:
                return "committed"
            except DBAPIError as exc:
                if getattr(exc.orig, "sqlstate", None) == _PG_LOCK_TIMEOUT:
                    return "in progress"
                raise
            finally:  # the probe's own row never stays (a connection that is gone kept none)
                try:
                    if trans.is_active:
                        trans.rollback()
                except DBAPIError:
                    pass
        # a locking read waits while the dying transaction still holds its inserted row
        with conn.begin():
            row = conn.execute(select(seq.c.name).where(seq.c.name == token).with_for_update()).first()
        return "committed" if row is not None else "aborted"


__all__ = ["CommitOutcomeUnknown", "CommitTokens", "connection_lost", "database_unavailable"]
