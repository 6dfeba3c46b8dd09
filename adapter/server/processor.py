"""One Thrift message in, at most one answer out: the generated processor of the Hudi extension
service (which extends ThriftHiveMetastore, so one port serves both), plus Hive's text for unknown
methods (also for names that are no UTF-8), no answer to oneway calls, a clear error for oversized,
malformed, truncated or stalled requests and for a full in-flight budget, the declared exception
for arguments whose text is no UTF-8 (adapter/server/replay.py), and one log line and metrics
record per call (client text escaped: adapter/server/logtext.py)."""

from __future__ import annotations

import io
import logging
import struct
import time
from dataclasses import dataclass
from typing import NoReturn

from thrift.protocol.TBinaryProtocol import TBinaryProtocol, TBinaryProtocolAccelerated
from thrift.protocol.TProtocol import TProtocolException
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport import TTransport

from adapter import request_text
from adapter.call_log import log_call
from adapter.router import HandlerRouter, take_error
from adapter.server import unsupported
from adapter.server.encoded_answers import encode_reply, encode_reply_chunks
from adapter.server.logtext import field, one_line
from adapter.server.replay import Replay
from adapter.server.transport import Busy, OversizedFrame, ReplyTransport
from store import metrics
from thrift_idl.hudi_metaserver import ThriftHoodieMetaserver
from thrift_idl.hudi_metastore import HudiMetastore

log = logging.getLogger("hudi_metastore.server")
call_log = logging.getLogger("hudi_metastore.calls")

# Oneway methods of the IDL (fb303's shutdown and reinitialize): their clients have no recv_<name>.
ONEWAY_METHODS = frozenset(
    n[len("send_"):] for n in dir(HudiMetastore.Client)
    if n.startswith("send_") and not hasattr(HudiMetastore.Client, "recv_" + n[len("send_"):]))


class RequestRejected(Exception):
    """A request was answered with an error and the rest of its bytes cannot be trusted:
    the connection ends (after draining what the client still sends, so it reads the answer)."""


class ReplyProtocol(TBinaryProtocolAccelerated):
    """The output protocol of a connection; knows whether an answer was begun (so an error while
    encoding one is not blamed on the request), and writes partition lists the store encoded
    (adapter/server/encoded_answers.py)."""

    replying = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if getattr(self, "_fast_encode", None) is not None:  # partition lists encoded by the store
            self._fast_encode = encode_reply_chunks if isinstance(self.trans, ReplyTransport) else encode_reply

    def writeMessageBegin(self, name, ttype, seqid):
        self.replying = True
        super().writeMessageBegin(name, ttype, seqid)


@dataclass
class Header:
    raw_name: bytes
    name: str | None  # None: not UTF-8
    mtype: int
    seqid: int

    @property
    def shown(self) -> str:
        return self.name if self.name is not None else self.raw_name.decode("utf-8", "backslashreplace")


def read_header(iprot) -> Header:
    """readMessageBegin, with the name read as bytes (both the strict and the old header form)."""
    sz = iprot.readI32()
    if sz < 0:
        if sz & TBinaryProtocol.VERSION_MASK != TBinaryProtocol.VERSION_1:
            raise TProtocolException(TProtocolException.BAD_VERSION, f"bad version in message header: {sz:#x}")
        mtype = sz & TBinaryProtocol.TYPE_MASK
        raw = iprot.readBinary()
        seqid = iprot.readI32()
    else:
        iprot._check_string_length(sz)
        raw = iprot.trans.readAll(sz)
        mtype = iprot.readByte()
        seqid = iprot.readI32()
    try:
        name: str | None = raw.decode("utf-8")
    except UnicodeDecodeError:
        name = None
    return Header(raw, name, mtype, seqid)


def write_error(oprot, header: Header, kind: int, message: str) -> None:
    """A TApplicationException answer; the name goes back as the client sent it."""
    oprot.replying = True
    oprot.writeI32(TBinaryProtocol.VERSION_1 | TMessageType.EXCEPTION)
    oprot.writeBinary(header.raw_name)
    oprot.writeI32(header.seqid)
    TApplicationException(kind, message).write(oprot)
    oprot.writeMessageEnd()
    oprot.trans.flush()


def unsolicited_error(message: str, framed: bool = False) -> bytes:
    """An INTERNAL_ERROR answer sent before any request (name "", seqid 0): clients raise what an
    EXCEPTION message carries before they compare sequence ids."""
    buf = TTransport.TMemoryBuffer()
    write_error(TBinaryProtocol(buf), Header(b"", "", TMessageType.CALL, 0),
                TApplicationException.INTERNAL_ERROR, message)
    data = buf.getvalue()
    return struct.pack("!i", len(data)) + data if framed else data


def skip_value(iprot, ttype: int = TType.STRUCT, depth: int = 64) -> None:
    """TProtocolBase.skip, but strings are read as bytes: the arguments of a method we do not serve
    may hold binary fields that are no UTF-8 (get_partitions_by_expr's serialized expression)."""
    if depth <= 0:
        raise TProtocolException(TProtocolException.DEPTH_LIMIT, "arguments nested too deep")
    if ttype == TType.STRING:
        iprot.readBinary()
    elif ttype == TType.STRUCT:
        iprot.readStructBegin()
        while True:
            _name, ftype, _fid = iprot.readFieldBegin()
            if ftype == TType.STOP:
                break
            skip_value(iprot, ftype, depth - 1)
            iprot.readFieldEnd()
        iprot.readStructEnd()
    elif ttype == TType.MAP:
        ktype, vtype, size = iprot.readMapBegin()
        for _ in range(size):
            skip_value(iprot, ktype, depth - 1)
            skip_value(iprot, vtype, depth - 1)
        iprot.readMapEnd()
    elif ttype in (TType.SET, TType.LIST):
        etype, size = iprot.readSetBegin() if ttype == TType.SET else iprot.readListBegin()
        for _ in range(size):
            skip_value(iprot, etype, depth - 1)
        iprot.readSetEnd() if ttype == TType.SET else iprot.readListEnd()
    elif ttype in (TType.BOOL, TType.BYTE, TType.I16, TType.I32, TType.I64, TType.DOUBLE):
        iprot.skip(ttype)
    else:
        raise TProtocolException(TProtocolException.INVALID_DATA, f"unknown field type {ttype}")


def _discarding_protocol() -> ReplyProtocol:
    return ReplyProtocol(TTransport.TMemoryBuffer())


class MetastoreProcessor(HudiMetastore.Processor):
    """Serves one message per `process` call; see the module's docstring."""

    def __init__(self, router: HandlerRouter):
        super().__init__(router)
        self.router = router
        # Hudi's metaserver protocol on the same port: its method names are not HudiMetastore's
        self._processMap.update(ThriftHoodieMetaserver.Processor(router)._processMap)

    def process(self, iprot, oprot):
        try:
            header = read_header(iprot)
        except OversizedFrame as exc:
            self._refuse_frame(oprot, exc)
        if header.mtype == TMessageType.ONEWAY or header.name in ONEWAY_METHODS:
            oprot = _discarding_protocol()  # the client reads no answer
        fn = self._processMap.get(header.name) \
            if header.name is not None and self.router.serves(header.name) else None
        if fn is None:
            if header.name in unsupported.FEATURE_OF:
                self._unsupported(iprot, oprot, header)
            else:
                self._unknown_method(iprot, oprot, header)
            return
        self._call(fn, iprot, oprot, header)

    def _call(self, fn, iprot, oprot, header: Header) -> None:
        name = header.shown
        start = time.perf_counter()
        status = "ok"
        oprot.replying = False
        take_error()
        replay = Replay.start_for(iprot.trans)
        request_text.begin_request(replay.possible if replay is not None else None)
        try:
            try:
                fn(self, header.seqid, iprot, oprot)
            except (UnicodeDecodeError, request_text.DecodeAgain):  # text that may be no UTF-8
                if oprot.replying or replay is None or not replay.rewind():
                    raise
                request_text.decoding_leniently()
                fn(self, header.seqid, request_text.LenientProtocol(
                    iprot.trans, string_length_limit=iprot.string_length_limit,
                    container_length_limit=iprot.container_length_limit), oprot)
            status = take_error() or "ok"  # e.g. NoSuchObjectException: answered, but not a success
        except Exception as exc:
            status, kind, text = self._failure(name, exc, oprot.replying)
            if status == "disconnected":
                raise
            self._reject(oprot, header, kind, text)
            raise RequestRejected(text) from exc
        finally:
            if replay is not None:
                replay.stop()
                request_text.begin_request(None)
            elapsed = time.perf_counter() - start
            log_call(call_log, name, elapsed, status, iprot)
            metrics.record_call(name, elapsed, status)

    @staticmethod
    def _failure(name: str, exc: Exception, replying: bool) -> tuple[str, int, str]:
        """(status, TApplicationException type, text) for a call that raised out of the generated
        code: what gets here failed while reading the arguments or writing the answer (handler
        errors are answered by the generated code and the router)."""
        kinds = TTransport.TTransportException
        if isinstance(exc, Busy):
            return "busy", TApplicationException.INTERNAL_ERROR, f"Request for {name} refused: {exc.message}"
        if isinstance(exc, kinds) and exc.type == kinds.TIMED_OUT:
            return "timed-out", TApplicationException.PROTOCOL_ERROR, \
                f"Request for {name} timed out: the client stopped sending in the middle of it"
        if isinstance(exc, kinds) and exc.type == kinds.END_OF_FILE and not replying:
            return "truncated", TApplicationException.PROTOCOL_ERROR, \
                f"Request for {name} ended before its arguments did"
        too_big = (isinstance(exc, OverflowError) and "limit" in str(exc)) or \
            (isinstance(exc, kinds) and exc.type == kinds.SIZE_LIMIT) or \
            (isinstance(exc, TProtocolException) and exc.type == TProtocolException.SIZE_LIMIT)
        if too_big:
            return "too-large", TApplicationException.PROTOCOL_ERROR, \
                f"Request for {name} exceeds the maximum message size ({exc})"
        if isinstance(exc, kinds) and exc.type != kinds.NEGATIVE_SIZE:
            return "disconnected", 0, ""  # the socket failed
        if replying:
            log.error("%s: the answer could not be encoded", field(name), exc_info=exc)
            return "internal-error", TApplicationException.INTERNAL_ERROR, \
                f"{name}: the server could not encode its answer"
        # the accelerated protocol raises TProtocolException/UnicodeDecodeError/... for bad bytes
        return "bad-request", TApplicationException.PROTOCOL_ERROR, \
            f"Malformed request for {name}: {type(exc).__name__}: {exc}"

    def _skip_arguments(self, iprot, oprot, header: Header) -> None:
        try:
            skip_value(iprot)
            iprot.readMessageEnd()
        except Exception as exc:
            status, kind, text = self._failure(header.shown, exc, False)
            if status == "disconnected":
                raise
            if status != "truncated":  # cut short: the name is all we need to answer
                self._reject(oprot, header, kind, text)
                raise RequestRejected(text) from exc

    def _unsupported(self, iprot, oprot, header: Header) -> None:
        """A Hive 4 method of a feature the server does not have (adapter/server/unsupported.py)."""
        method = header.name or ""
        self._skip_arguments(iprot, oprot, header)
        if unsupported.meta_field(method) is None:
            write_error(oprot, header, TApplicationException.INTERNAL_ERROR, unsupported.message(method))
        else:
            oprot.replying = True
            unsupported.write_refusal(oprot, header.raw_name, header.seqid, method)
        log_call(call_log, method, 0.0, "unsupported", iprot)
        metrics.record_call(method, 0.0, "unsupported")

    def _unknown_method(self, iprot, oprot, header: Header) -> None:
        self._skip_arguments(iprot, oprot, header)
        write_error(oprot, header, TApplicationException.UNKNOWN_METHOD, f"Invalid method name: '{header.shown}'")
        log_call(call_log, header.raw_name, 0.0, "unknown-method", iprot)
        metrics.record_call("unknown", 0.0, "unknown-method")  # not the name: any text could come

    def _refuse_frame(self, oprot, exc: OversizedFrame) -> NoReturn:
        """The frame was refused before reading it; answer with what its header told us."""
        if not exc.name:  # not a framed binary-protocol call at all (e.g. an unframed client)
            raise TProtocolException(TProtocolException.INVALID_DATA, str(exc)) from exc
        log_call(call_log, exc.name, 0.0, "too-large", oprot)
        metrics.record_call(exc.name if exc.name in self._processMap else "unknown", 0.0, "too-large")
        header = Header(exc.name.encode("utf-8", "surrogateescape"), exc.name, TMessageType.CALL, exc.seqid)
        self._reject(oprot, header, TApplicationException.PROTOCOL_ERROR, str(exc))
        raise RequestRejected(str(exc)) from exc

    @staticmethod
    def _reject(oprot, header: Header, kind: int, text: str) -> None:
        log.warning("refusing a %s request: %s", field(header.raw_name), one_line(text))
        # Drop any half-written reply (an error while encoding one) so the answer is a clean message.
        if isinstance(oprot.trans, ReplyTransport):
            oprot.trans.discard()
        for attr in ("_TBufferedTransport__wbuf", "_TFramedTransport__wbuf"):
            if hasattr(oprot.trans, attr):
                setattr(oprot.trans, attr, io.BytesIO())
        try:
            write_error(oprot, header, kind, text)
        except Exception:  # the peer may be gone already
            pass
