"""The Thrift server: accepts connections, one thread each, on the accelerated binary protocol.

Several worker processes may share the listening socket (`--workers`); they share nothing else,
so every answer comes from the database.

Modules: `workers` (processes, `run`, `bind`), `connections` (accept loop, connection cap, TLS and
the SASL handshake through adapter/security/, the per-connection loop, idle wait and read timeout),
`processor` (one message: unknown methods,
oneway calls, refusals, the call log), `transport` (per-message size limit, the in-flight budget's
accounting, framed transport), `budget` (bytes of requests in flight, per process), `limits` (the
settings and the open files limit), `logtext` (log lines client text cannot forge).
"""

from adapter.server.connections import ThriftServer
from adapter.server.limits import Limits
from adapter.server.processor import MetastoreProcessor, RequestRejected
from adapter.server.workers import bind, run

__all__ = ["Limits", "MetastoreProcessor", "RequestRejected", "ThriftServer", "bind", "run"]
