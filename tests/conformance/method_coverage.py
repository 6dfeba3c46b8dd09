"""Which of Hive 4's ThriftHiveMetastore methods our server serves, asked of the running server.

`hive4_methods.txt` lists the methods of Hive 4.0.1's `ThriftHiveMetastore.Iface` (read from
`hive-standalone-metastore-common-4.0.1.jar` with javap; `tests/test_method_coverage.py` checks the
list against the jar when the Hive 4 artifacts are in the cache). Each method is called on the wire
with an empty argument struct: a method is *served* when the server answers anything but
`TApplicationException(UNKNOWN_METHOD)`, *refused* otherwise; Hive's clients treat UNKNOWN_METHOD as
"this metastore predates the call" and fall back where they can.

    python -m tests.conformance.method_coverage PORT            # print the table
    python -m tests.conformance.method_coverage PORT --write    # rewrite it in docs/conformance.md
"""

from __future__ import annotations

import sys
from pathlib import Path

from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TSocket, TTransport

HERE = Path(__file__).resolve().parent
METHODS_FILE = HERE / "hive4_methods.txt"
DOC = HERE.parents[1] / "docs" / "conformance.md"
BEGIN, END = "<!-- hive4-methods:begin -->", "<!-- hive4-methods:end -->"


def hive4_methods() -> list[str]:
    return [m for m in METHODS_FILE.read_text().split() if m]


def probe(port: int, method: str, host: str = "127.0.0.1", timeout: float = 30.0) -> str:
    """"served", or "refused" when the server answers UNKNOWN_METHOD to `method`."""
    sock = TSocket.TSocket(host, port)
    sock.setTimeout(timeout * 1000)
    transport = TTransport.TBufferedTransport(sock)
    transport.open()
    try:
        proto = TBinaryProtocol(transport)
        proto.writeMessageBegin(method, TMessageType.CALL, 1)
        proto.writeStructBegin(f"{method}_args")
        proto.writeFieldStop()
        proto.writeStructEnd()
        proto.writeMessageEnd()
        transport.flush()
        _name, mtype, _seqid = proto.readMessageBegin()
        if mtype == TMessageType.EXCEPTION:
            exc = TApplicationException()
            exc.read(proto)
            proto.readMessageEnd()
            return "refused" if exc.type == TApplicationException.UNKNOWN_METHOD else "served"
        proto.skip(TType.STRUCT)
        proto.readMessageEnd()
        return "served"
    except (TimeoutError, TTransport.TTransportException):
        return "served"  # it was taken up (a timeout or a closed connection is no UNKNOWN_METHOD)
    finally:
        transport.close()


def coverage(port: int) -> dict[str, str]:
    return {m: probe(port, m) for m in hive4_methods()}


def table(result: dict[str, str]) -> str:
    served = sorted(m for m, r in result.items() if r == "served")
    refused = sorted(m for m, r in result.items() if r == "refused")
    lines = [BEGIN, "",
             f"Of Hive 4.0.1's {len(result)} ThriftHiveMetastore methods, {len(served)} are served and "
             f"{len(refused)} are refused with `TApplicationException(UNKNOWN_METHOD)`.", "",
             "| method | ours |", "| --- | --- |"]
    lines += [f"| `{m}` | {result[m]} |" for m in sorted(result)]
    return "\n".join(lines + ["", END])


def documented() -> str:
    text = DOC.read_text()
    start, end = text.find(BEGIN), text.find(END)
    return text[start:end + len(END)] if start >= 0 and end >= 0 else ""


def write_doc(result: dict[str, str]) -> None:
    text, current = DOC.read_text(), documented()
    new = table(result)
    DOC.write_text(text.replace(current, new) if current else text.rstrip("\n") + "\n\n" + new + "\n")


if __name__ == "__main__":
    res = coverage(int(sys.argv[1]))
    if "--write" in sys.argv:
        write_doc(res)
    print(table(res))
