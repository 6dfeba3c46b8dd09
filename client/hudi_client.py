"""Python client of hudi-metastore: the Hudi extension calls, typed, plus every Hive Metastore call.

    from client import HudiMetastoreClient

    with HudiMetastoreClient("thrift://127.0.0.1:9083") as c:
        c.get_all_databases()                              # any HMS call, passed through
        ts = c.new_instant_time("db", "t")
        c.create_instant("db", "t", ts, "commit")
        c.transition_to_inflight("db", "t", ts, "commit")
        c.complete_instant("db", "t", ts, "commit", {"partitionToWriteStats": {...}, ...})
        c.get_latest_file_slices("db", "t", ["p1"])

Types. Typed methods take Python values (str, bytes, lists, dicts; ``None`` for "not given") and
return the Thrift structs of ``thrift_idl.hudi_metastore.ttypes`` (``Instant``, ``FileSlice``,
``HudiFile``, ``HudiTableConfig``, ``CommitResult``, ``RollbackResult``): plain objects with
attributes, ``==`` and ``repr``; enums are ints (``InstantState.COMPLETED``; ``state_name()``
gives the text). Errors are the Thrift exceptions the server declares (``NoSuchObjectException``,
``CommitConflictException``, ...). Every other attribute of the generated
``HudiMetastore.Client`` (all HMS methods: ``get_table``, ``get_partitions_by_filter``, ...) is
passed through with Thrift arguments unchanged; ``call(name, *args)`` does the same explicitly.

Connection. One connection per client object, opened on first use and reused; calls from several
threads are serialized by a lock (use one client per thread for parallel calls). Before reusing the
connection the client checks that the server has not closed it (a restarted server) and reconnects
if so. ``close()`` or ``with`` ends it. ``uri`` may list several metastores,
``"thrift://a:9083,thrift://b:9083"``: a (re)connect tries them in order.

Retries. On a transport failure (connection refused/reset, EOF, socket timeout) the connection is
dropped and the call is retried, up to ``retries`` times with exponential backoff
(``backoff_s * 2**attempt``, capped at ``max_backoff_s``, with jitter), under this rule:

* a failure *before any byte of the request was written* (connecting, or restoring the session)
  is retried for every call: the server cannot have seen it;
* once the request may have reached the server, the call is retried only if it is idempotent:
  reads (``get_*``, ``list_instants``, ...), ``heartbeat_instant``, ``add_markers``, HMS reads and
  lock heartbeats, and the session calls ``set_ugi`` / ``setMetaConf``. Anything else
  (``create_instant``, ``complete_instant``, ``new_instant_time``, ``create_table``, ``lock``, ...)
  raises the transport error: it may or may not have happened, and only the caller can tell
  (e.g. ``list_instants`` to see whether the instant completed).

Session. ``set_ugi`` and ``setMetaConf`` are per connection on the server; the client remembers them
and replays them on every reconnect.
"""

from __future__ import annotations

import json
import math
import random
import select
import socket
import threading
import time
from base64 import b64decode
from urllib.parse import urlsplit

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.transport import TSocket, TTransport
from thrift.transport.TTransport import TTransportException

from hudi_format.record_key_codec import encode_keys
from hudi_format.table_config import HudiTableConfig as FormatConfig
from thrift_idl.hive_metastore.ttypes import FieldSchema
from thrift_idl.hudi_metastore import HudiMetastore
from thrift_idl.hudi_metastore.ttypes import (
    ColumnRange,
    ColumnValue,
    CommitResult,
    FileColumnStats,
    FileGroupKeys,
    FileSlice,
    HudiFile,
    HudiTableConfig,
    HudiTableStats,
    HudiTableType,
    ImportResult,
    Instant,
    InstantFilter,
    InstantState,
    PrunedFileSlices,
    RecordKeyLocations,
    RollbackResult,
)

from .convert import config_to_thrift

__all__ = ["HudiMetastoreClient", "column_stats_struct", "file_group_keys", "is_idempotent", "metastore_endpoints",
           "state_name"]

# Extension calls safe to repeat.
_IDEMPOTENT_HUDI = frozenset({
    "get_hudi_table", "list_instants", "get_instant_metadata", "get_failed_instants", "get_hudi_partitions",
    "get_latest_file_slices", "get_files_changed", "get_all_files", "heartbeat_instant", "add_markers",
    "import_hudi_instants",  # the server leaves what it has already alone
    "lookup_record_keys", "prune_file_slices", "list_files_without_column_stats",
    "load_column_stats",  # files that have statistics keep them
})
# HMS / fb303 calls safe to repeat besides get_*.
_IDEMPOTENT_HMS = frozenset({
    "getMetaConf", "setMetaConf", "set_ugi", "getName", "getVersion", "getStatus", "getStatusDetails",
    "getCounters", "getCounter", "getOption", "getOptions", "aliveSince", "partition_name_to_vals",
    "partition_name_to_spec", "partition_name_has_valid_characters", "isPartitionMarkedForEvent",
    "list_roles", "list_privileges", "show_locks", "heartbeat", "heartbeat_txn_range",
})
_SESSION_CALLS = ("set_ugi", "setMetaConf")
# What a dead connection looks like from here.
_TRANSPORT_ERRORS = (TTransportException, OSError, EOFError)


def is_idempotent(method: str) -> bool:
    """Whether `method` may be retried after its request may have reached the server."""
    return method.startswith("get_") or method in _IDEMPOTENT_HUDI or method in _IDEMPOTENT_HMS


def state_name(state: int) -> str:
    """InstantState value -> "REQUESTED" | "INFLIGHT" | "COMPLETED"."""
    return InstantState._VALUES_TO_NAMES[state]


def _state_value(state) -> int:
    if isinstance(state, str):
        try:
            return InstantState._NAMES_TO_VALUES[state.upper()]
        except KeyError:
            raise ValueError(f"unknown instant state {state!r}") from None
    return int(state)


def _payload(value) -> bytes | None:
    """Plans, profiles and commit metadata: bytes as given, str as UTF-8, dict/list as JSON."""
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value).encode("utf-8")


def metastore_endpoints(uri: str) -> list[tuple[str, int]]:
    """(host, port) of each metastore of `uri` ("thrift://a:9083,thrift://b:9083"); ValueError if malformed."""
    out = []
    for part in (p.strip() for p in uri.split(",")):
        if not part:
            continue
        u = urlsplit(part if "://" in part else f"thrift://{part}")
        if u.scheme != "thrift" or not u.hostname:
            raise ValueError(f"not a metastore URI (thrift://host:port): {part!r}")
        out.append((u.hostname, u.port or 9083))
    if not out:
        raise ValueError("no metastore URI given")
    return out


class _SendStarted(Exception):
    """Internal marker: the failure happened after the request started going out."""

    def __init__(self, cause: BaseException):
        super().__init__(str(cause))
        self.cause = cause


class HudiMetastoreClient:
    def __init__(self, uri: str = "thrift://127.0.0.1:9083", timeout_s: float = 60, retries: int = 3,
                 framed: bool = False, backoff_s: float = 0.2, max_backoff_s: float = 5.0):
        self.uri = uri
        self.endpoints = metastore_endpoints(uri)
        self.timeout_s = timeout_s
        self.retries = max(0, int(retries))
        self.framed = framed
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self._lock = threading.RLock()
        self._transport = None
        self._socket: TSocket.TSocket | None = None
        self._client: HudiMetastore.Client | None = None
        self._session: dict[tuple, tuple] = {}  # replayed on reconnect, in insertion order
        self._closed = False
        self.connections_opened = 0  # how many connections this client made (observability, tests)
        self.retried_calls = 0

    # --- lifecycle --------------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._drop()

    def __enter__(self) -> HudiMetastoreClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):  # best effort; close() is the way
        try:
            self._drop()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"HudiMetastoreClient({self.uri!r}, connected={self._transport is not None})"

    # --- calls ------------------------------------------------------------------------------------

    def call(self, method: str, *args, idempotent: bool | None = None, **kwargs):
        """Call `method` with Thrift arguments, reconnecting and retrying as the module doc says."""
        if not hasattr(HudiMetastore.Client, "send_" + method):
            raise AttributeError(f"the metastore has no method {method!r}")
        retry_sent = is_idempotent(method) if idempotent is None else idempotent
        attempt = 0
        with self._lock:
            if self._closed:
                raise TTransportException(TTransportException.NOT_OPEN, "client is closed")
            while True:
                try:
                    result = self._attempt(method, args, kwargs)
                except _SendStarted as exc:
                    self._drop()
                    if not retry_sent or attempt >= self.retries:
                        raise exc.cause from None
                except _TRANSPORT_ERRORS:  # connecting: the request never left
                    self._drop()
                    if attempt >= self.retries:
                        raise
                else:
                    if method in _SESSION_CALLS:
                        self._remember(method, args, kwargs)
                    return result
                self.retried_calls += 1
                time.sleep(self._backoff(attempt))
                attempt += 1

    def __getattr__(self, name):
        if name.startswith("_") or not hasattr(HudiMetastore.Client, "send_" + name):
            raise AttributeError(name)

        def passthrough(*args, **kwargs):
            return self.call(name, *args, **kwargs)

        passthrough.__name__ = name
        passthrough.__doc__ = getattr(HudiMetastore.Client, name).__doc__
        return passthrough

    def _attempt(self, method, args, kwargs):
        client = self._connection()  # transport errors here: nothing of this call was sent
        try:
            getattr(client, "send_" + method)(*args, **kwargs)
            recv = getattr(client, "recv_" + method, None)
            return recv() if recv is not None else None  # oneway calls have no answer
        except _TRANSPORT_ERRORS as exc:
            raise _SendStarted(exc) from exc
        except Exception:
            # A protocol error mid-answer leaves the stream unusable; a Thrift exception the server
            # answered (NoSuchObjectException, TApplicationException) leaves it clean.
            if not self._answer_complete():
                self._drop()
            raise

    def _backoff(self, attempt: int) -> float:
        delay = min(self.max_backoff_s, self.backoff_s * (2 ** attempt))
        return delay * (0.5 + random.random() / 2)

    def _remember(self, method, args, kwargs) -> None:
        key = (method, args[0] if method == "setMetaConf" and args else kwargs.get("key"))
        self._session.pop(key, None)
        self._session[key] = (args, kwargs)

    # --- connection -------------------------------------------------------------------------------

    def _connection(self) -> HudiMetastore.Client:
        if self._client is not None and self._stale():
            self._drop()
        if self._client is None:
            self._open()
        return self._client

    def _open(self) -> None:
        last: BaseException | None = None
        for host, port in self.endpoints:
            sock = TSocket.TSocket(host, port)
            sock.setTimeout(int(self.timeout_s * 1000) if self.timeout_s else None)
            transport = TTransport.TFramedTransport(sock) if self.framed else TTransport.TBufferedTransport(sock)
            try:
                transport.open()
            except _TRANSPORT_ERRORS as exc:
                last = exc
                continue
            try:
                sock.handle.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
            self._socket, self._transport = sock, transport
            self._client = HudiMetastore.Client(TBinaryProtocolAccelerated(transport))
            self.connections_opened += 1
            try:
                for (method, _key), (args, kwargs) in list(self._session.items()):
                    getattr(self._client, method)(*args, **kwargs)
            except Exception:
                self._drop()
                raise
            return
        raise last if last is not None else TTransportException(TTransportException.NOT_OPEN, "no endpoint")

    def _stale(self) -> bool:
        """An idle connection with something to read was closed (or garbled) by the server."""
        handle = getattr(self._socket, "handle", None)
        if handle is None:
            return True
        if not self._answer_complete():
            return True
        try:
            readable, _, errored = select.select([handle], [], [handle], 0)
        except (OSError, ValueError):
            return True
        return bool(readable or errored)

    def _answer_complete(self) -> bool:
        """No unread bytes buffered (the last answer was read entirely)."""
        t = self._transport
        for attr in ("_TBufferedTransport__rbuf", "_TFramedTransport__rbuf"):
            buf = getattr(t, attr, None)
            if buf is not None and buf.tell() < len(buf.getvalue()):
                return False
        return True

    def _drop(self) -> None:
        transport, self._transport, self._socket, self._client = self._transport, None, None, None
        if transport is not None:
            try:
                transport.close()
            except (OSError, TTransportException):
                pass

    # --- Hudi extension: tables ------------------------------------------------------------------

    def register_hudi_table(self, config, columns=None) -> None:
        """`config`: a Thrift HudiTableConfig (tableType may also be "COPY_ON_WRITE" /
        "MERGE_ON_READ"), or a hudi_format.table_config.HudiTableConfig.
        `columns`: FieldSchema list or (name, type[, comment]) tuples; None lets the server derive
        them from config.avroSchema."""
        cols = None
        if columns is not None:
            cols = [c if isinstance(c, FieldSchema) else FieldSchema(c[0], c[1], c[2] if len(c) > 2 else None)
                    for c in columns]
        self.call("register_hudi_table", _config(config), cols)

    def get_hudi_table(self, db: str, table: str) -> HudiTableConfig:
        return self.call("get_hudi_table", db, table)

    # --- Hudi extension: timeline ----------------------------------------------------------------

    def new_instant_time(self, db: str, table: str) -> str:
        return self.call("new_instant_time", db, table)

    def create_instant(self, db: str, table: str, timestamp: str | None, action: str, plan=None,
                       heartbeat_timeout_s: int = 0) -> Instant:
        """REQUESTED instant. timestamp None/"" lets the server pick; heartbeat_timeout_s 0: server default.
        `plan`: bytes, str or JSON-able value."""
        return self.call("create_instant", db, table, timestamp or "", action, _payload(plan),
                         int(heartbeat_timeout_s or 0))

    def transition_to_inflight(self, db: str, table: str, timestamp: str, action: str,
                               workload_profile=None) -> Instant:
        return self.call("transition_to_inflight", db, table, timestamp, action, _payload(workload_profile))

    def complete_instant(self, db: str, table: str, timestamp: str, action: str, commit_metadata,
                         record_keys: list[FileGroupKeys] | None = None,
                         column_stats: list[FileColumnStats] | None = None) -> CommitResult:
        """`commit_metadata`: bytes, str or a dict (sent as JSON). `record_keys`: for a table keeping
        a record index, the keys of each file group written (`file_group_keys`); `column_stats`: the
        column statistics of the base files written. Raises CommitConflictException."""
        return self.call("complete_instant", db, table, timestamp, action, _payload(commit_metadata) or b"",
                         record_keys, column_stats)

    def heartbeat_instant(self, db: str, table: str, timestamp: str) -> None:
        self.call("heartbeat_instant", db, table, timestamp)

    def add_markers(self, db: str, table: str, timestamp: str, paths) -> None:
        self.call("add_markers", db, table, timestamp, list(paths))

    def list_instants(self, db: str, table: str, states=None, actions=None, min_ts: str | None = None,
                      max_ts: str | None = None) -> list[Instant]:
        """states: names ("COMPLETED") or InstantState values; bounds inclusive; None: no condition."""
        f = InstantFilter(states=[_state_value(s) for s in states] if states else None,
                          actions=list(actions) if actions else None,
                          minTimestamp=min_ts or None, maxTimestamp=max_ts or None)
        return self.call("list_instants", db, table, f)

    def get_instant_metadata(self, db: str, table: str, timestamp: str, action: str,
                             state="COMPLETED") -> bytes:
        return self.call("get_instant_metadata", db, table, timestamp, action, _state_value(state))

    def get_failed_instants(self, db: str, table: str) -> list[Instant]:
        return self.call("get_failed_instants", db, table)

    def rollback_instant(self, db: str, table: str, timestamp: str) -> RollbackResult:
        return self.call("rollback_instant", db, table, timestamp)

    # --- Hudi extension: snapshot ----------------------------------------------------------------

    def get_hudi_partitions(self, db: str, table: str, filter: str | None = None) -> list[str]:
        return self.call("get_hudi_partitions", db, table, filter or "")

    def get_latest_file_slices(self, db: str, table: str, partitions=None, as_of: str | None = None) -> list[FileSlice]:
        """partitions None/[]: all; as_of None: latest completed."""
        return self.call("get_latest_file_slices", db, table, list(partitions or []), as_of or "")

    def prune_file_slices(self, db: str, table: str, predicate: str | None = None,
                          compact: bool = False) -> PrunedFileSlices:
        """Latest slices whose column statistics allow a row matching `predicate` (Hive filter
        grammar over any column, plus IS [NOT] NULL), with how many files were skipped.
        `compact`: slices of a base file only come as columns (`baseFiles`; `slices_of` gives
        every slice back as structs)."""
        return self.call("prune_file_slices", db, table, predicate or "", compact)

    def get_files_changed(self, db: str, table: str, since: str | None = None,
                          until: str | None = None) -> list[HudiFile]:
        """Files written by instants in (since, until]; None: open bound."""
        return self.call("get_files_changed", db, table, since or "", until or "")

    def get_all_files(self, db: str, table: str, partition: str = "") -> list[HudiFile]:
        return self.call("get_all_files", db, table, partition or "")

    def sync_storage(self, db: str, table: str) -> int:
        return self.call("sync_storage", db, table)

    def get_hudi_table_stats(self, db: str, table: str) -> HudiTableStats:
        return self.call("get_hudi_table_stats", db, table)

    # --- Hudi extension: record-level index ------------------------------------------------------

    def lookup_record_keys(self, db: str, table: str, keys) -> list[tuple[str, str, str] | None]:
        """Where each key (str) lives: (partition path, file id, instant) or None, in order."""
        keys = list(keys)
        out: list[tuple[str, str, str] | None] = []
        for start in range(0, len(keys), LOOKUP_BATCH):
            r: RecordKeyLocations = self.call("lookup_record_keys", db, table,
                                              encode_keys(keys[start:start + LOOKUP_BATCH]))
            out += [(r.partitionPaths[g], r.fileIds[g], i) if g >= 0 else None
                    for g, i in zip(r.fileGroupOfKey, r.instantOfKey)]
        return out

    def load_record_index(self, db: str, table: str, file_groups: list[FileGroupKeys], reset: bool = False,
                          enable: bool | None = None) -> int:
        """Adoption/repair: add keys to the table's index (after clearing it with `reset`); `enable`
        True turns the index on, False off, None leaves it. Returns the number of keys the index holds."""
        return self.call("load_record_index", db, table, list(file_groups), bool(reset), enable)

    def list_files_without_column_stats(self, db: str, table: str, limit: int = 0) -> list[str]:
        """Latest base files without column statistics (relative paths; at most `limit`, 0: all)."""
        return self.call("list_files_without_column_stats", db, table, int(limit))

    def load_column_stats(self, db: str, table: str, stats: list[FileColumnStats]) -> int:
        """Adoption: statistics of live base files (files that have some keep theirs); the number stored."""
        return self.call("load_column_stats", db, table, list(stats))

    # --- Hudi extension: import from storage -------------------------------------------------------

    def import_hudi_instants(self, db: str, table: str, instants, listed_files=None,
                             missing_files=None, config=None) -> ImportResult:
        """Adopt instants that happened on storage (ImportedInstant list) and a listing's files
        (HudiFile lists), in one transaction; repeating it changes nothing. `config` (optional, as
        for register_hudi_table): the table's hoodie.properties as on storage now."""
        return self.call("import_hudi_instants", db, table, list(instants), list(listed_files or []),
                         list(missing_files or []), _config(config) if config is not None else None)


LOOKUP_BATCH = 200_000  # keys per lookup_record_keys call


def file_group_keys(partition_path: str, file_id: str, inserted=(), updated=(), deleted=(),
                    instant: str | None = None) -> FileGroupKeys:
    """A FileGroupKeys struct with its key blocks encoded."""
    return FileGroupKeys(partitionPath=partition_path, fileId=file_id,
                         inserted=encode_keys(inserted) if inserted else None,
                         updated=encode_keys(updated) if updated else None,
                         deleted=encode_keys(deleted) if deleted else None, instant=instant)


def _config(config) -> HudiTableConfig:
    if isinstance(config, HudiTableConfig):
        if isinstance(config.tableType, str):
            t = HudiTableConfig(**{k: getattr(config, k) for k in config.__dict__})
            t.tableType = HudiTableType._NAMES_TO_VALUES[config.tableType.upper()]
            return t
        return config
    if isinstance(config, FormatConfig):
        return config_to_thrift(config)
    raise TypeError(f"expected a HudiTableConfig, got {type(config).__name__}")


def column_stats_struct(partition_path: str, path: str, size: int, uncompressed: int, blob: bytes | None):
    """A FileColumnStats struct of one file's statistics encoded by hudi_format.parquet_stats."""
    columns = [ColumnRange(columnName=c["column"], minValue=_column_value(c.get("min")),
                           maxValue=_column_value(c.get("max")),
                           nullCount=c.get("nulls"), valueCount=c.get("values"))
               for c in json.loads(blob or b"[]")]
    return FileColumnStats(partitionPath=partition_path, fileName=path.rsplit("/", 1)[-1], totalSize=size,
                           totalUncompressedSize=uncompressed, columns=columns)


def _column_value(tagged: dict | None):
    if not tagged:
        return None
    if "i" in tagged:
        return ColumnValue(intValue=tagged["i"])
    if "d" in tagged:
        return ColumnValue(doubleValue=float(tagged["d"]) if tagged["d"] != "NaN" else math.nan)
    if "dec" in tagged:
        return ColumnValue(decimalValue=tagged["dec"])
    if "s" in tagged:
        return ColumnValue(stringValue=tagged["s"])
    return ColumnValue(binaryValue=b64decode(tagged["b"]))


def slices_of(pruned: PrunedFileSlices) -> list[FileSlice]:
    """Every slice of a prune_file_slices answer, compact or not, as FileSlice structs ordered by
    (partition, file id) as the server orders them."""
    out = list(pruned.slices or [])
    c = pruned.baseFiles
    if c is not None:
        out += [FileSlice(p, fid, bi, HudiFile(p, fid, name, size, bi, False, None, ct, path or None), [])
                for p, fid, bi, name, size, ct, path in zip(c.partitionPaths, c.fileIds, c.baseInstants, c.names,
                                                             c.sizes, c.commitTimes, c.paths, strict=True)]
        out.sort(key=lambda s: (s.partitionPath, s.fileId))
    return out
