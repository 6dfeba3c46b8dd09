"""The reply protocol's encoder: Thrift's C encoder, except that a list field holding
`EncodedStructs` (partition lists encoded by the store, store/hms/common/wire.py) or
`EncodedStrings` (partition names), or a struct
field holding an `EncodedStruct` (get_table's Table) is written from those bytes. Such a field may
sit in the result itself or one struct down (e.g. GetPartitionsByNamesResult.partitions,
GetTableResult.table)."""

from __future__ import annotations

import struct

from thrift.Thrift import TType

from adapter.server.transport import Chunks
from store.hms.common import FIELD_HEADER, EncodedStrings, EncodedStruct, EncodedStructs, fastbinary

_ENCODED = (EncodedStructs, EncodedStruct, EncodedStrings)

_LIST = struct.Struct("!bi")  # element type, size


def _holds_encoded(value) -> bool:
    if isinstance(value, _ENCODED):
        return True
    fields = getattr(value, "__dict__", None)
    return fields is not None and hasattr(value, "thrift_spec") and \
        any(isinstance(v, _ENCODED) for v in fields.values())


def encode_reply(obj, spec) -> bytes:
    """`fastbinary.encode_binary` for the reply protocol (the same signature)."""
    if _holds_encoded(getattr(obj, "success", None)):
        return b"".join(_pieces(obj))
    return fastbinary.encode_binary(obj, spec)


def encode_reply_chunks(obj, spec) -> bytes | Chunks:
    """encode_reply for a transport that writes Chunks (adapter/server/transport.py
    ReplyTransport): the stored bytes are not copied into one answer."""
    if _holds_encoded(getattr(obj, "success", None)):
        return Chunks(_pieces(obj))
    return fastbinary.encode_binary(obj, spec)


def _pieces(obj) -> list[bytes]:
    plain = object.__new__(type(obj))
    plain.__dict__ = dict(obj.__dict__)
    extra: list[bytes] = []
    for f in obj.thrift_spec:
        if f is None:
            continue
        fid, ftype, name = f[0], f[1], f[2]
        value = obj.__dict__.get(name)
        if isinstance(value, EncodedStructs):
            if ftype != TType.LIST or f[3][0] != TType.STRUCT:
                raise TypeError(f"{type(obj).__name__}.{name} is no list of structs")
            extra += [FIELD_HEADER.pack(TType.LIST, fid), _LIST.pack(TType.STRUCT, value.count), value.data]
        elif isinstance(value, EncodedStrings):
            if ftype != TType.LIST or f[3][0] != TType.STRING:
                raise TypeError(f"{type(obj).__name__}.{name} is no list of strings")
            extra += [FIELD_HEADER.pack(TType.LIST, fid), _LIST.pack(TType.STRING, value.count), value.data]
        elif isinstance(value, EncodedStruct):
            if ftype != TType.STRUCT:
                raise TypeError(f"{type(obj).__name__}.{name} is no struct")
            extra += [FIELD_HEADER.pack(TType.STRUCT, fid), value.data]
        elif ftype == TType.STRUCT and value is not None and _holds_encoded(value):
            extra += [FIELD_HEADER.pack(TType.STRUCT, fid), *_pieces(value)]
        else:
            continue
        plain.__dict__[name] = None
    head = fastbinary.encode_binary(plain, [type(obj), obj.thrift_spec])
    return [head[:-1], *extra, b"\x00"]  # the fields written from bytes, then STOP
