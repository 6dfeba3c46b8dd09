"""The commit protocol of a write, through the metastore's timeline service.

    instant time -> REQUESTED -> INFLIGHT -> files written (markers first, heartbeats) -> COMPLETED

Before starting, instants of writers that stopped heartbeating are rolled back (the server deletes
the files their markers name). A failed job just stops heartbeating: its instant expires and the next
writer rolls it back. A commit that loses the server's conflict check is rolled back at once (the
server expires a losing instant) and fails with WriteConflictError.
"""

from __future__ import annotations

import json
import logging
import threading

from client import CommitConflict, HudiCatalog, InvalidOperation, NotFound, TransportError

from .errors import HudiWriteError, WriteConflictError

log = logging.getLogger(__name__)


def rollback_failed_writes(client: HudiCatalog, db: str, table: str) -> list[str]:
    """Roll back every instant whose writer stopped heartbeating; the instants rolled back."""
    done = []
    for inst in client.get_failed_instants(db, table):
        try:
            client.rollback_instant(db, table, inst.ts)
            done.append(inst.ts)
        except (InvalidOperation, NotFound) as exc:  # another writer was quicker
            log.info("not rolling back %s.%s %s: %s", db, table, inst.ts, exc)
    return done


class _Heartbeat(threading.Thread):
    def __init__(self, uri: str, db: str, table: str, ts: str, interval_s: float, security=None):
        super().__init__(name=f"hudi-heartbeat-{ts}", daemon=True)
        self.client = HudiCatalog(uri, security=security)
        self.args = (db, table, ts)
        self.interval_s = interval_s
        self.stopped = threading.Event()
        self.error: Exception | None = None

    def run(self) -> None:
        try:
            while not self.stopped.wait(self.interval_s):
                try:
                    self.client.heartbeat_instant(*self.args)
                except InvalidOperation as exc:  # completed, or lost a conflict
                    self.error = exc
                    return
                except Exception as exc:  # keep trying; the timeout decides
                    log.warning("heartbeat of %s failed: %s", self.args, exc)
        finally:
            self.client.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=30)


class WriteTransaction:
    """One instant of one writer."""

    def __init__(self, client: HudiCatalog, db: str, table: str, action: str, operation: str,
                 heartbeat_timeout_s: int, heartbeat_interval_s: float):
        self.client, self.db, self.table = client, db, table
        self.action, self.operation = action, operation
        self.heartbeat_timeout_s = heartbeat_timeout_s
        self.heartbeat_interval_s = heartbeat_interval_s
        self.instant: str | None = None
        self._heartbeat: _Heartbeat | None = None
        self.rolled_back: list[str] = []

    def begin(self, schema_avro: str | None = None) -> str:
        self.rolled_back = rollback_failed_writes(self.client, self.db, self.table)
        inst = self.client.create_instant(self.db, self.table, None, self.action, plan=b"",
                                          heartbeat_timeout_s=self.heartbeat_timeout_s)
        self.instant = inst.ts
        self._heartbeat = _Heartbeat(self.client.uri, self.db, self.table, self.instant,
                                     min(self.heartbeat_interval_s, max(0.2, self.heartbeat_timeout_s / 3)),
                                     self.client.security)
        self._heartbeat.start()
        # as Hudi's inflight metadata, it carries the writer schema (readers get it from here cheaply)
        profile = {"partitionToWriteStats": {}, "compacted": False,
                   "extraMetadata": {"schema": schema_avro} if schema_avro else {},
                   "operationType": self.operation.upper()}
        try:
            self.client.transition_to_inflight(self.db, self.table, self.instant, self.action, json.dumps(profile))
        except BaseException:
            self.abandon()
            raise
        return self.instant

    def stop_heartbeat(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
            self._heartbeat = None

    def complete(self, metadata: dict, record_keys: list | None = None, column_stats: list | None = None) -> str:
        """`record_keys`: FileGroupKeys of every file group written (tables keeping a record index);
        `column_stats`: BaseFileStats of the base files written."""
        ts = self._begun()
        self.stop_heartbeat()
        try:
            self.client.complete_instant(self.db, self.table, ts, self.action, json.dumps(metadata), record_keys,
                                         column_stats or None)
        except CommitConflict as exc:
            deleted = self._rollback_own(ts)
            raise WriteConflictError(
                f"write to {self.db}.{self.table} failed: {exc.message}. Instant {ts} was rolled back "
                f"({deleted} files deleted); retry the job on the new table state.",
                ts, exc.conflicting) from None
        except (OSError, EOFError, TransportError) as exc:  # the answer was lost: did it complete?
            done = self.client.list_instants(self.db, self.table, states=["COMPLETED"], min_ts=ts, max_ts=ts)
            if not done:
                raise HudiWriteError(f"completing {ts} failed ({exc}); it is rolled back by the next "
                                     "writer once its heartbeat expires") from exc
        return ts

    def _begun(self) -> str:
        if self.instant is None:
            raise HudiWriteError(f"no instant of {self.db}.{self.table} was begun")
        return self.instant

    def _rollback_own(self, ts: str) -> int:
        try:
            return len(self.client.rollback_instant(self.db, self.table, ts))
        except (InvalidOperation, NotFound) as exc:
            log.warning("could not roll back %s now (%s); the next writer will", ts, exc)
            return 0

    def abandon(self) -> None:
        """The job failed: stop heartbeating; the instant expires and the next writer rolls it back."""
        self.stop_heartbeat()


def commit_metadata(operation: str, stats: list[dict], schema_avro: str,
                    replaced: dict[str, list[str]] | None = None) -> dict:
    """Table version 6 HoodieCommitMetadata (HoodieReplaceCommitMetadata with `replaced`) as JSON."""
    by_partition: dict[str, list[dict]] = {}
    for s in stats:
        by_partition.setdefault(s["partitionPath"], []).append(s)
    out = {"partitionToWriteStats": by_partition, "compacted": False,
           "extraMetadata": {"schema": schema_avro}, "operationType": operation.upper()}
    if replaced is not None:
        out["partitionToReplaceFileIds"] = {p: list(ids) for p, ids in replaced.items()}
    return out
