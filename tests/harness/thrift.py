"""Plain-``thrift`` clients for a metastore, using the project's generated bindings.

The bindings (``thrift_idl.hive_metastore.ThriftHiveMetastore``) are imported lazily so that the
harness imports before they are generated.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


def open_thrift_client(port: int, host: str = "127.0.0.1", timeout: float = 30.0):
    """Connect and return ``(client, transport)``; the caller closes ``transport``."""
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport

    from thrift_idl.hive_metastore import ThriftHiveMetastore

    sock = TSocket.TSocket(host, port)
    sock.setTimeout(int(timeout * 1000))
    transport = TTransport.TBufferedTransport(sock)
    protocol = TBinaryProtocol.TBinaryProtocolAccelerated(transport)
    client = ThriftHiveMetastore.Client(protocol)
    transport.open()
    return client, transport


@contextlib.contextmanager
def thrift_client(port: int, host: str = "127.0.0.1", timeout: float = 30.0) -> Iterator[object]:
    """``with thrift_client(port) as c: c.get_all_databases()``."""
    client, transport = open_thrift_client(port, host, timeout)
    try:
        yield client
    finally:
        transport.close()
