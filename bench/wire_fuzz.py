"""Malformed Thrift messages for the wire fuzz test (tests/test_fuzz_wire.py) and the longer
campaign (`python -m bench.fuzz`): valid requests of a few methods, mutated by bit flips,
truncations, bogus lengths, random types, odd names and message types, deep nesting, huge
containers and splices; each sent on its own connection (buffered binary protocol), and what the
server did with it classified.

The rule checked: a message whose header can be read (version, name, type, seqid all present) gets
exactly one answer unless it is oneway (message type ONEWAY or a oneway method), which gets none;
a message whose header cannot be read may be closed without one. After each batch the server must
answer a normal call on a new connection and its resident memory must stay bounded.
"""

from __future__ import annotations

import random
import socket
import struct
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TTransport

from thrift_idl.fb303 import FacebookService
from thrift_idl.hive_metastore import ThriftHiveMetastore as T

VERSION_1 = 0x80010000
ONEWAY_METHODS = frozenset({b"shutdown", b"reinitialize"})  # fb303.thrift
MAX_MESSAGE = 104_857_600  # the server's default --max-message-size


def encode(method: str, args, seqid: int = 1, mtype: int = TMessageType.CALL) -> bytes:
    buf = TTransport.TMemoryBuffer()
    prot = TBinaryProtocol(buf)
    prot.writeMessageBegin(method, mtype, seqid)
    args.write(prot)
    prot.writeMessageEnd()
    return buf.getvalue()


def seeds() -> list[bytes]:
    """Valid requests: reads, session calls and a oneway call (no writes: a mutated location
    could name any directory)."""
    return [
        encode("get_all_databases", T.get_all_databases_args()),
        encode("get_database", T.get_database_args(name="default"), 2),
        encode("get_table", T.get_table_args(dbname="default", tbl_name="fuzz_t"), 3),
        encode("get_partitions_by_filter", T.get_partitions_by_filter_args(
            db_name="default", tbl_name="fuzz_t", filter='ds = "2024-01-01" and hr > 3', max_parts=-1), 4),
        encode("get_partitions_by_names", T.get_partitions_by_names_args(
            db_name="default", tbl_name="fuzz_t", names=["ds=1", "ds=2"]), 5),
        encode("get_table_objects_by_name", T.get_table_objects_by_name_args(
            dbname="default", tbl_names=["a", "b"]), 6),
        encode("set_ugi", T.set_ugi_args(user_name="alice", group_names=["g1", "g2"]), 7),
        encode("get_config_value", T.get_config_value_args(name="hive.metastore.warehouse.dir",
                                                           defaultValue="x"), 8),
        encode("getMetaConf", T.getMetaConf_args(key="hive.metastore.try.direct.sql"), 9),
        encode("shutdown", FacebookService.shutdown_args(), 10, TMessageType.ONEWAY),
    ]


# --------------------------------------------------------------------------- mutations


def _header_len(msg: bytes) -> int:
    (n,) = struct.unpack_from("!i", msg, 4)
    return 12 + n


def _nested(rng: random.Random, depth: int) -> bytes:
    """An unknown field holding `depth` levels of lists or structs."""
    one = struct.pack("!i", 1)
    if rng.random() < 0.5:  # list<list<...<i32>>>
        return b"\x0f\x00\x63" + (b"\x0f" + one) * (depth - 1) + b"\x08" + one + struct.pack("!i", 7)
    return b"\x0c\x00\x63" + b"\x0c\x00\x01" * depth + b"\x00" * (depth + 1)  # struct in struct


def _name(rng: random.Random) -> bytes:
    return rng.choice([
        b"\xff\xfe\x80get_all_databases",
        b"get_x\n2030-01-01 00:00:00,000 1 INFO hudi_metastore.calls call=drop_database ms=0.00 status=ok",
        b"drop_database status=ok",
        b"",
        b"a" * rng.randint(1, 20_000),
        bytes(rng.randrange(256) for _ in range(rng.randint(1, 64))),
        b"get_all_databases\x00",
    ])


def _with_name(msg: bytes, name: bytes) -> bytes:
    return msg[:4] + struct.pack("!i", len(name)) + name + msg[_header_len(msg) - 4:]


class Mutator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.seeds = seeds()
        self.kinds: dict[str, Callable[[bytes], bytes]] = {
            "bitflip": self.bitflip, "truncate": self.truncate, "bogus-length": self.bogus_length,
            "random-type": self.random_type, "nesting": self.nesting, "garbage-args": self.garbage_args,
            "name": self.name, "message-type": self.message_type, "splice": self.splice,
            "huge-container": self.huge_container, "duplicate-field": self.duplicate_field,
        }

    def next(self) -> tuple[str, bytes]:
        kind = self.rng.choice(list(self.kinds))
        return kind, self.kinds[kind](self.rng.choice(self.seeds))

    def bitflip(self, msg: bytes) -> bytes:
        out = bytearray(msg)
        for _ in range(self.rng.randint(1, 8)):
            out[self.rng.randrange(len(out))] ^= 1 << self.rng.randrange(8)
        return bytes(out)

    def truncate(self, msg: bytes) -> bytes:
        return msg[:self.rng.randrange(len(msg))]

    def bogus_length(self, msg: bytes) -> bytes:
        i = self.rng.randrange(len(msg) - 3)
        value = self.rng.choice([-1, -(2 ** 31), 2 ** 31 - 1, 0, len(msg) * 100, self.rng.randrange(2 ** 31),
                                 self.rng.randrange(65), MAX_MESSAGE + 1, MAX_MESSAGE // 2])
        return msg[:i] + struct.pack("!i", value) + msg[i + 4:]

    def random_type(self, msg: bytes) -> bytes:
        i = self.rng.randrange(len(msg))
        return msg[:i] + bytes([self.rng.choice([*range(21), 255])]) + msg[i + 1:]

    def nesting(self, msg: bytes) -> bytes:
        depth = self.rng.choice([30, 63, 64, 65, 200, 1000, 5000])
        body = _nested(self.rng, depth)
        if self.rng.random() < 0.3:
            body = body[:self.rng.randrange(len(body))]
        return msg[:_header_len(msg)] + body + msg[_header_len(msg):]

    def garbage_args(self, msg: bytes) -> bytes:
        return msg[:_header_len(msg)] + self.rng.randbytes(self.rng.randint(0, 300))

    def name(self, msg: bytes) -> bytes:
        return _with_name(msg, _name(self.rng))

    def message_type(self, msg: bytes) -> bytes:
        return msg[:3] + bytes([self.rng.choice([0, 1, 2, 3, 4, 4, 5, 127, 255])]) + msg[4:]

    def splice(self, msg: bytes) -> bytes:
        other = self.rng.choice(self.seeds)
        return msg[:self.rng.randrange(len(msg))] + other[self.rng.randrange(len(other)):]

    def huge_container(self, msg: bytes) -> bytes:
        count = struct.pack("!i", self.rng.choice([2 ** 31 - 1, 10 ** 8, 10 ** 6, -5]))
        field_ = self.rng.choice([b"\x0f\x00\x63\x0b" + count, b"\x0d\x00\x63\x0b\x0b" + count,
                                  b"\x0e\x00\x63\x08" + count])
        return msg[:_header_len(msg)] + field_ + self.rng.randbytes(self.rng.randint(0, 40))

    def duplicate_field(self, msg: bytes) -> bytes:
        args = msg[_header_len(msg):-1] if len(msg) > _header_len(msg) + 1 else b""
        return msg[:_header_len(msg)] + args * self.rng.randint(2, 50) + b"\x00"


# --------------------------------------------------------------------------- classification


def readable_header(msg: bytes, max_message: int = MAX_MESSAGE) -> tuple[bytes, int] | None:
    """(name, message type) when the server can read the message's header, else None."""
    if len(msg) < 4:
        return None
    (sz,) = struct.unpack_from("!i", msg)
    if sz < 0:
        if (sz & 0xFFFF0000) != VERSION_1 or len(msg) < 8:
            return None
        (n,) = struct.unpack_from("!i", msg, 4)
        if n < 0 or n > max_message or len(msg) < 12 + n:
            return None
        return msg[8:8 + n], sz & 0xFF
    if sz > max_message or len(msg) < 4 + sz + 5:
        return None
    return msg[4:4 + sz], msg[4 + sz]


def expects_answer(msg: bytes) -> bool | None:
    """True: must be answered; False: must not be (oneway); None: may be closed unanswered."""
    header = readable_header(msg)
    if header is None:
        return None
    name, mtype = header
    return not (mtype == TMessageType.ONEWAY or name in ONEWAY_METHODS)


def read_reply(data: bytes) -> tuple[bytes, int, int, TApplicationException | None] | None:
    """(name, message type, seqid, the exception of an EXCEPTION answer) of one whole binary-protocol
    message (the name as bytes: an answer to a name that is no UTF-8 echoes it), else None."""
    try:
        prot = TBinaryProtocol(TTransport.TMemoryBuffer(data))
        version = prot.readI32()
        if (version & 0xFFFF0000) != VERSION_1:
            return None
        name = prot.readBinary()
        seqid = prot.readI32()
        exc = None
        if version & 0xFF == TMessageType.EXCEPTION:
            exc = TApplicationException()
            exc.read(prot)
        else:
            prot.skip(TType.STRUCT)
        return name, version & 0xFF, seqid, exc
    except Exception:
        return None


def is_message(data: bytes) -> bool:
    return read_reply(data) is not None


def exchange(port: int, payload: bytes, timeout: float = 20.0) -> tuple[bytes, str]:
    """Send `payload` on a new connection, half-close, read to the end:
    (what came back, 'closed' | 'reset' | 'timeout')."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(payload)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server may refuse before the whole message is sent
        data = b""
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                chunk = s.recv(65536)
                if not chunk:
                    return data, "closed"
                data += chunk
        except ConnectionResetError:
            return data, "reset"
        except TimeoutError:
            pass
        return data, "timeout"


@dataclass
class Report:
    sent: int = 0
    outcomes: Counter = field(default_factory=Counter)  # (kind, outcome) -> n
    violations: list[str] = field(default_factory=list)
    max_rss_kb: int = 0
    batches: int = 0

    def summary(self) -> dict:
        by_outcome: Counter = Counter()
        for (_kind, outcome), n in self.outcomes.items():
            by_outcome[outcome] += n
        return {"messages": self.sent, "batches": self.batches, "outcomes": dict(sorted(by_outcome.items())),
                "violations": len(self.violations), "max_rss_mb": round(self.max_rss_kb / 1024, 1)}


def classify(msg: bytes, data: bytes, how: str) -> tuple[str, str | None]:
    """(outcome, violation or None) for one exchange."""
    expected = expects_answer(msg)
    answered = is_message(data)
    if how == "timeout":
        return "hung", "the server neither answered nor closed"
    if expected is True:
        return ("answered", None) if answered else ("unanswered", "closed without an answer")
    if expected is False:
        return ("oneway-silent", None) if not data else ("oneway-answered", "a oneway call was answered")
    return ("answered-unreadable", None) if answered else ("closed-unreadable", None)


def run_batch(port: int, mutator: Mutator, n: int, report: Report) -> None:
    for _ in range(n):
        kind, msg = mutator.next()
        data, how = exchange(port, msg)
        outcome, violation = classify(msg, data, how)
        report.sent += 1
        report.outcomes[(kind, outcome)] += 1
        if violation:
            report.violations.append(f"{kind}: {violation}: {msg[:120].hex()} ({len(msg)} bytes)")


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def server_answers(port: int) -> bool:
    """A normal call on a new connection is answered."""
    try:
        return isinstance(exchange_call(port, "get_all_databases", T.get_all_databases_args()), list)
    except Exception:
        return False


def exchange_call(port: int, method: str, args, timeout: float = 20.0):
    from thrift.transport import TSocket

    sock = TSocket.TSocket("127.0.0.1", port)
    sock.setTimeout(int(timeout * 1000))
    transport = TTransport.TBufferedTransport(sock)
    client = T.Client(TBinaryProtocol(transport))
    transport.open()
    try:
        return getattr(client, method)(*[getattr(args, name) for name in args.__dict__])
    finally:
        transport.close()


def campaign(port: int, pids: list[int], messages: int, seed: int = 19, batch: int = 500,
             rss_limit_kb: int | None = None) -> Iterator[Report]:
    """Runs `messages` mutated messages in batches; yields the report after each batch (the
    caller asserts). A batch that leaves the server unanswering or above `rss_limit_kb` is a
    violation."""
    mutator = Mutator(seed)
    report = Report()
    while report.sent < messages:
        run_batch(port, mutator, min(batch, messages - report.sent), report)
        report.batches += 1
        if not server_answers(port):
            report.violations.append(f"batch {report.batches}: the server did not answer a normal call")
        rss = sum(rss_kb(pid) for pid in pids)
        report.max_rss_kb = max(report.max_rss_kb, rss)
        if rss_limit_kb is not None and rss > rss_limit_kb:
            report.violations.append(f"batch {report.batches}: resident memory {rss} kB above {rss_limit_kb} kB")
        yield report
