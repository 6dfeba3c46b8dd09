"""bench/instant_server.py, the replaying proxy behind the Java client's ceiling: in front of our
server it forwards and records calls, then answers recorded ones itself (the reply's seqid set to
the request's) and still forwards everything else."""

from __future__ import annotations

import socket
import threading

import pytest
from thrift.protocol import TBinaryProtocol
from thrift.Thrift import TMessageType
from thrift.transport import TSocket, TTransport

from bench import workload as w
from bench.instant_server import InstantServer, _Reader
from tests.harness import start_our_server, stop_process
from thrift_idl.hive_metastore import ThriftHiveMetastore as T

DB, TBL = "proxy_db", "t"


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("instant")
    port, proc = start_our_server(f"sqlite:///{tmp / 'm.db'}", tmp)
    try:
        c = w.Client(port)
        w.ensure_database(c, DB)
        tbl = w.create_table(c, DB, TBL)
        w.add_partitions(c, tbl, range(30), batch=30)
        c.close()
        yield port
    finally:
        stop_process(proc)


class Raw:
    """Calls with seqids of the caller's choosing (the generated Python client always sends 0)."""

    def __init__(self, port: int, strict: bool = True):
        sock = TSocket.TSocket("127.0.0.1", port)
        sock.setTimeout(30_000)
        self.trans = TTransport.TBufferedTransport(sock)
        self.proto = TBinaryProtocol.TBinaryProtocol(self.trans, strictRead=strict, strictWrite=strict)
        self.trans.open()

    def call(self, name: str, args, seqid: int):
        self.proto.writeMessageBegin(name, TMessageType.CALL, seqid)
        args.write(self.proto)
        self.proto.writeMessageEnd()
        self.trans.flush()
        fname, mtype, rseqid = self.proto.readMessageBegin()
        result = getattr(T, f"{name}_result")()
        result.read(self.proto)
        self.proto.readMessageEnd()
        assert (fname, mtype) == (name, TMessageType.REPLY)
        return rseqid, result.success

    def close(self) -> None:
        self.trans.close()


def _names(parts) -> list[list[str]]:
    return sorted(p.values for p in parts)


@pytest.mark.parametrize("strict", [True, False], ids=["strict", "old-style"])
def test_recorded_calls_are_replayed_others_forwarded(upstream, strict):
    with InstantServer(upstream) as proxy:
        c = Raw(proxy.port, strict)
        seq, table = c.call("get_table", T.get_table_args(DB, TBL), 7)
        assert seq == 7 and table.tableName == TBL
        seq, first = c.call("get_partitions", T.get_partitions_args(DB, TBL, -1), 8)
        assert seq == 8 and len(first) >= 30
        c.close()
        assert proxy.forwarded == {"get_table": 1, "get_partitions": 1}

        # a partition added upstream: a forwarded get_partitions would see it, a replayed one not
        direct = w.Client(upstream)
        extra = f"x{strict}"
        direct.add_partition(w.partition(direct.get_table(DB, TBL), [extra, "b", "c"]))
        direct.close()

        proxy.mode = "replay"
        c = Raw(proxy.port, strict)
        seq, again = c.call("get_partitions", T.get_partitions_args(DB, TBL, -1), 1234)
        assert seq == 1234  # the recording's seqid (8) patched to the request's
        assert again == first
        seq, table2 = c.call("get_table", T.get_table_args(DB, TBL), -5)
        assert seq == -5 and table2 == table
        # other arguments: not recorded, so forwarded, and the upstream's answer shows the new partition
        seq, capped = c.call("get_partitions", T.get_partitions_args(DB, TBL, 1000), 99)
        assert seq == 99 and len(capped) == len(first) + 1 and [extra, "b", "c"] in _names(capped)
        c.close()
        assert proxy.replayed == {"get_partitions": 1, "get_table": 1}
        assert proxy.forwarded == {"get_table": 1, "get_partitions": 2}
        assert proxy.errors == []


def test_generated_client_through_replay(upstream):
    """The ordinary client (accelerated protocol, buffered transport) over several calls of one
    connection, set_ugi forwarded even in replay mode."""
    with InstantServer(upstream) as proxy:
        c = w.Client(proxy.port)
        c.set_ugi("alice", [])
        names = c.get_partition_names(DB, TBL, -1)
        c.close()
        proxy.mode = "replay"
        c = w.Client(proxy.port)
        c.set_ugi("alice", [])
        assert [c.get_partition_names(DB, TBL, -1) for _ in range(3)] == [names] * 3
        c.close()
        assert proxy.forwarded == {"set_ugi": 2, "get_partition_names": 1}
        assert proxy.replayed == {"get_partition_names": 3}


def test_reader_splits_messages_received_in_pieces():
    """A message arriving a few bytes at a time, followed by a second one in the same stream."""
    buf = TTransport.TMemoryBuffer()
    proto = TBinaryProtocol.TBinaryProtocol(buf)
    for seqid, n in ((3, 2), (4, 5)):
        proto.writeMessageBegin("get_partitions", TMessageType.REPLY, seqid)
        tbl = w.table(DB, TBL)
        T.get_partitions_result(success=[w.partition(tbl, w.flat_values(i)) for i in range(n)]).write(proto)
        proto.writeMessageEnd()
    data = buf.getvalue()
    a, b = socket.socketpair()

    def feed() -> None:
        for i in range(0, len(data), 7):
            a.sendall(data[i:i + 7])
        a.close()

    sender = threading.Thread(target=feed)
    sender.start()
    try:
        r = _Reader(b)
        first, second = r.message(), r.message()
        with pytest.raises(EOFError):
            r.message()
    finally:
        sender.join(10)
        b.close()
    assert first.data + second.data == data
    assert (first.name, first.mtype) == ("get_partitions", TMessageType.REPLY)
    assert first.data[first.seq_at:first.seq_at + 4] == (3).to_bytes(4, "big")
    res = T.get_partitions_result()
    res.read(TBinaryProtocol.TBinaryProtocol(TTransport.TMemoryBuffer(second.data[second.body_at:])))
    assert len(res.success) == 5
