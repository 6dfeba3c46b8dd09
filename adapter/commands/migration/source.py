"""The two ends of a migration: a source client that only reads, and one connection to each end
per thread."""

from __future__ import annotations

import threading

from thrift.protocol.TBinaryProtocol import TBinaryProtocolAccelerated
from thrift.Thrift import TException
from thrift.transport import TSocket, TTransport

from client import HudiMetastoreClient, Security, metastore_endpoints
from thrift_idl.hive_metastore import ThriftHiveMetastore


class MigrationError(Exception):
    """A migration that cannot start or go on (e.g. a metastore is unreachable)."""


class ReadOnlySource:
    """A plain ThriftHiveMetastore client on the source that only lets read calls through."""

    _READS = frozenset({"getMetaConf", "getVersion", "getName", "getStatus"})

    def __init__(self, uri: str, timeout_s: float = 120):
        host, port = metastore_endpoints(uri)[0]
        sock = TSocket.TSocket(host, port)
        sock.setTimeout(int(timeout_s * 1000))
        self._transport = TTransport.TBufferedTransport(sock)
        self._client = ThriftHiveMetastore.Client(TBinaryProtocolAccelerated(self._transport))
        self._transport.open()

    def __getattr__(self, name):
        if not (name.startswith("get_") or name in self._READS):
            raise PermissionError(f"migrate only reads from the source metastore; refused call {name}")
        return getattr(self._client, name)

    def close(self) -> None:
        try:
            self._transport.close()
        except Exception:
            pass


class Connections:
    """One source and one target connection per thread."""

    def __init__(self, source_uri: str, target_uri: str, security: Security | None = None):
        self.source_uri, self.target_uri = source_uri, target_uri
        self.security = security  # the target's log-in; the source is read without one
        self._local = threading.local()
        self._all: list = []
        self._lock = threading.Lock()

    def source(self) -> ReadOnlySource:
        c = getattr(self._local, "source", None)
        if c is None:
            try:
                c = ReadOnlySource(self.source_uri)
            except (TException, OSError) as exc:
                raise MigrationError(f"cannot connect to the source metastore {self.source_uri}: {exc}") from exc
            self._local.source = c
            with self._lock:
                self._all.append(c)
        return c

    def target(self) -> HudiMetastoreClient:
        c = getattr(self._local, "target", None)
        if c is None:
            c = HudiMetastoreClient(self.target_uri, timeout_s=300, retries=2, security=self.security)
            self._local.target = c
            with self._lock:
                self._all.append(c)
        return c

    def close(self) -> None:
        with self._lock:
            for c in self._all:
                c.close()
            self._all.clear()
