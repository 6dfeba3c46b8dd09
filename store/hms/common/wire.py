"""Answers as Thrift bytes: partition lists (issue 16: answers without building Partition objects)
and get_table's Table (`EncodedStruct`, cached by store/hms/catalog's table_rows in an `EncodedCache`).

A list answer (get_partitions, get_partitions_by_filter, get_partitions_by_names, ...) is encoded
straight from the partition rows. What every partition of the answer shares (the table's names,
the descriptor of a schema version without its location) is encoded once per call by Thrift's C
encoder; each partition adds only its values, times, location and parameters. The result is
byte for byte what Thrift's encoder writes for the Partition objects `PartitionQueries.build` makes
(tests/test_partition_wire.py), so nothing is cached and nothing can go stale. The server's reply
protocol (adapter/server/encoded_answers.py) writes `EncodedStructs` in place of the list.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from thrift.Thrift import TType

from thrift_idl.hive_metastore.ttypes import Partition, StorageDescriptor

try:
    from thrift.protocol import fastbinary
except ImportError:  # thrift built without its C extension: answers are built as objects
    fastbinary = None
AVAILABLE = fastbinary is not None  # the C encoder makes the shared parts (and the reply protocol)

FIELD_HEADER = struct.Struct("!bh")  # field type, id


def wire_checking() -> bool:
    """HMS_WIRE_CHECK=1 (the test suite): answers made from kept or concatenated bytes are checked
    against the ones built from the rows."""
    return os.environ.get("HMS_WIRE_CHECK") == "1"

_I32 = struct.Struct("!i")
_I32_FIELD = struct.Struct("!bhi")
_LIST_OF_STRINGS = struct.Struct("!bhbi")  # field header, element type, size
_MAP_OF_STRINGS = struct.Struct("!bhbbi")  # field header, key type, value type, size
_STOP = b"\x00"


@dataclass(frozen=True)
class EncodedStructs:
    """`count` Thrift structs, binary-protocol encoded back to back: the elements of a list field.
    Deliberately not a list: a code path that is not the reply protocol fails on it loudly."""

    count: int
    data: bytes


@dataclass(frozen=True)
class EncodedStrings:
    """`count` Thrift strings, binary-protocol encoded back to back: the elements of a list field
    (partition names). Not a list, for the same reason."""

    count: int
    data: bytes

    @staticmethod
    def of(values: list[str]) -> EncodedStrings:
        pack = _I32.pack
        return EncodedStrings(len(values), b"".join(pack(len(b)) + b for b in (v.encode() for v in values)))


@dataclass(frozen=True)
class EncodedStruct:
    """One Thrift struct, binary-protocol encoded: the value of a struct field (get_table's Table).
    Not the struct: a code path that is not the reply protocol fails on it loudly."""

    data: bytes


class EncodedCache:
    """Encoded answers keyed by the whole row they were made from (a changed row is a new key:
    nothing to invalidate, nothing stale). At most `budget` bytes (an estimate); when full it
    starts over."""

    def __init__(self, budget: int):
        self.budget = budget
        self._entries: dict[tuple, bytes] = {}
        self._size = 0

    def get(self, row: tuple) -> bytes | None:
        return self._entries.get(row)

    def put(self, row: tuple, data: bytes) -> None:
        size = 200 + len(data) + sum(len(v) for v in row if isinstance(v, (str, bytes)))
        if self._size + size > self.budget:
            self._entries = {}
            self._size = 0
        self._entries[row] = data
        self._size += size


def encode_struct(obj) -> bytes:
    """`obj` encoded by Thrift's C encoder (ends with the STOP byte)."""
    return fastbinary.encode_binary(obj, [type(obj), obj.thrift_spec])


def _string_field(fid: int, text: str) -> bytes:
    b = text.encode("utf-8")
    return _I32_FIELD.pack(TType.STRING, fid, len(b)) + b


def location_field(location: str | None) -> bytes:
    """A descriptor's location field (a partition row's `w_location`: store/hms/partitions/partition_wire.py)."""
    return b"" if location is None else _string_field(2, location)


Pieces = tuple[int, bytes, bytes, "bytes | None", bytes, bytes]


class PartitionEncoder:
    """Encodes the partitions of one answer; `shared_sd(schema_version)` is the descriptor the
    partitions without one of their own share (its location is ignored).

    A partition is encoded in two steps: `pieces` (what depends on its row alone: values, times,
    location, parameters, a descriptor of its own) and `join` (those pieces with what the answer
    shares, in Thrift's field order)."""

    def __init__(self, db_name: str, tbl_name: str, cat_name: str | None,
                 shared_sd: Callable[[int], StorageDescriptor]):
        self.names = _string_field(2, db_name) + _string_field(3, tbl_name)
        tail = Partition()  # catName and the defaults (writeId) after the parameters, in field order
        tail.catName = cat_name
        self.tail = encode_struct(tail)
        self._shared_sd = shared_sd
        self._sd_parts: dict[int, tuple[bytes, bytes]] = {}

    def sd_split(self, schema_version: int) -> tuple[bytes, bytes]:
        """The shared descriptor's bytes before its location (field 2) and after it."""
        parts = self._sd_parts.get(schema_version)
        if parts is None:
            sd = self._shared_sd(schema_version)
            cols_only = StorageDescriptor(cols=sd.cols)
            rest = StorageDescriptor(**{**sd.__dict__, "cols": None, "location": None})
            parts = self._sd_parts[schema_version] = (
                FIELD_HEADER.pack(TType.STRUCT, 6) + encode_struct(cols_only)[:-1], encode_struct(rest))
        return parts

    @staticmethod
    def pieces(values: list[str], create_time: int | None, last_access: int | None, version: int,
               location: str | None, own_sd: StorageDescriptor | None, params: dict[str, str]) -> Pieces:
        """(schema version, values, times, own descriptor or None, location, parameters) as bytes."""
        i32 = _I32.pack
        out = [_LIST_OF_STRINGS.pack(TType.LIST, 1, TType.STRING, len(values))]
        for v in values:
            b = v.encode("utf-8")
            out += (i32(len(b)), b)
        times = b""
        if create_time is not None:
            times += _I32_FIELD.pack(TType.I32, 4, create_time)
        if last_access is not None:
            times += _I32_FIELD.pack(TType.I32, 5, last_access)
        own = None if own_sd is None else FIELD_HEADER.pack(TType.STRUCT, 6) + encode_struct(own_sd)
        loc = location_field(location)
        ps = [_MAP_OF_STRINGS.pack(TType.MAP, 7, TType.STRING, TType.STRING, len(params))]
        for k, v in params.items():
            kb, vb = k.encode("utf-8"), v.encode("utf-8")
            ps += (i32(len(kb)), kb, i32(len(vb)), vb)
        return version, b"".join(out), times, own, loc, b"".join(ps)

    def join(self, all_pieces: Iterable[Pieces]) -> EncodedStructs:
        out: list[bytes] = []
        extend = out.extend
        names, tail, split = self.names, self.tail, self.sd_split
        count = 0
        for version, values, times, own, loc, params in all_pieces:
            count += 1
            if own is None:
                head, rest = split(version)
                extend((values, names, times, head, loc, rest, params, tail))
            else:
                extend((values, names, times, own, params, tail))
        return EncodedStructs(count, b"".join(out))


class PiecesCache:
    """The pieces of recently answered partitions, keyed by their whole row (every column, the
    parameters included), so a changed partition is a new key and an answer can never be stale.
    At most `budget` bytes (an estimate: pieces plus key); when full it starts over."""

    def __init__(self, budget: int = 64 << 20):
        self.budget = budget
        self._entries: dict[object, Pieces] = {}
        self._size = 0

    def get(self, row) -> Pieces | None:
        return self._entries.get(row)

    def put(self, row, pieces: Pieces, row_bytes: int) -> None:
        size = 200 + row_bytes + len(pieces[1]) + len(pieces[2]) + len(pieces[4]) + len(pieces[5])
        if self._size + size > self.budget:
            self._entries = {}
            self._size = 0
        self._entries[row] = pieces
        self._size += size

    def __len__(self) -> int:
        return len(self._entries)
