"""Which of Hive 4's ThriftHiveMetastore methods our server serves, asked of the running server.

`hive4_methods.txt` lists the methods of Hive 4.0.1's `ThriftHiveMetastore.Iface` (read from
`hive-standalone-metastore-common-4.0.1.jar` with javap; `tests/test_method_coverage.py` checks the
list against the jar when the Hive 4 artifacts are in the cache). Each method is called on the wire
with an empty argument struct and classified by the answer:

- *unsupported*: the error naming a feature the server does not have (adapter/server/unsupported.py:
  a MetaException in the result, or TApplicationException(INTERNAL_ERROR) where the method declares
  no MetaException), whose text says "is not supported by this metastore";
- *unknown method*: `TApplicationException(UNKNOWN_METHOD)`, on which Hive's client falls back
  (`FALLBACKS`: only the serialized-expression calls);
- *served*: any other answer.

    python -m tests.conformance.method_coverage PORT            # print the table
    python -m tests.conformance.method_coverage PORT --write    # rewrite it in docs/conformance.md
"""

from __future__ import annotations

import sys
from pathlib import Path

from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TSocket, TTransport

from adapter.server.unsupported import FEATURE_OF, NOT_SUPPORTED

HERE = Path(__file__).resolve().parent
METHODS_FILE = HERE / "hive4_methods.txt"
DOC = HERE.parents[1] / "docs" / "conformance.md"
BEGIN, END = "<!-- hive4-methods:begin -->", "<!-- hive4-methods:end -->"


def hive4_methods() -> list[str]:
    return [m for m in METHODS_FILE.read_text().split() if m]


# methods left unknown on purpose: Hive's client falls back when the metastore lacks them
FALLBACKS = {
    "get_partitions_by_expr": "Hive's client prunes partition names itself (docs/conformance.md)",
    "get_partitions_spec_by_expr": "Hive's client prunes partition names itself (docs/conformance.md)",
}


def _strings(proto, ttype: int, depth: int = 16) -> list[str]:
    """Skip one value, returning the strings inside it."""
    if ttype == TType.STRING:
        return [proto.readBinary().decode("utf-8", "replace")]
    if depth <= 0:
        proto.skip(ttype)
        return []
    out: list[str] = []
    if ttype == TType.STRUCT:
        proto.readStructBegin()
        while True:
            _n, ftype, _fid = proto.readFieldBegin()
            if ftype == TType.STOP:
                break
            out += _strings(proto, ftype, depth - 1)
            proto.readFieldEnd()
        proto.readStructEnd()
    elif ttype == TType.MAP:
        ktype, vtype, size = proto.readMapBegin()
        for _ in range(size):
            out += _strings(proto, ktype, depth - 1) + _strings(proto, vtype, depth - 1)
        proto.readMapEnd()
    elif ttype in (TType.LIST, TType.SET):
        etype, size = proto.readListBegin() if ttype == TType.LIST else proto.readSetBegin()
        for _ in range(size):
            out += _strings(proto, etype, depth - 1)
        proto.readListEnd() if ttype == TType.LIST else proto.readSetEnd()
    else:
        proto.skip(ttype)
    return out


def probe(port: int, method: str, host: str = "127.0.0.1", timeout: float = 30.0) -> str:
    """"served", "unsupported" or "unknown method": how the server answers `method` (see above)."""
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
            if exc.type == TApplicationException.UNKNOWN_METHOD:
                return "unknown method"
            return "unsupported" if NOT_SUPPORTED in (exc.message or "") else "served"
        texts = _strings(proto, TType.STRUCT)
        proto.readMessageEnd()
        return "unsupported" if any(NOT_SUPPORTED in t for t in texts) else "served"
    except (TimeoutError, TTransport.TTransportException):
        return "served"  # it was taken up (a timeout or a closed connection is no UNKNOWN_METHOD)
    finally:
        transport.close()


def coverage(port: int) -> dict[str, str]:
    return {m: probe(port, m) for m in hive4_methods()}


def _shown(method: str, answer: str) -> str:
    if answer == "unsupported":
        return f"unsupported: {FEATURE_OF.get(method, '?')}"
    if answer == "unknown method":
        return f"unknown method: {FALLBACKS.get(method, 'not served yet')}"
    return answer


def table(result: dict[str, str]) -> str:
    counts = {k: sum(1 for r in result.values() if r == k) for k in ("served", "unsupported", "unknown method")}
    lines = [BEGIN, "",
             f"Of Hive 4.0.1's {len(result)} ThriftHiveMetastore methods, {counts['served']} are served, "
             f"{counts['unsupported']} answer that their feature is not supported (a MetaException naming it; "
             "`TApplicationException(INTERNAL_ERROR)` with that text where the method declares no MetaException) "
             f"and {counts['unknown method']} are unknown methods (`TApplicationException(UNKNOWN_METHOD)`, on which "
             "Hive's client falls back).", "",
             "| method | ours |", "| --- | --- |"]
    lines += [f"| `{m}` | {_shown(m, result[m])} |" for m in sorted(result)]
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
