"""A Parquet file's footer and a few small columns, read without pyarrow's per-file cost.

pyarrow spends about 0.3 ms on every file it opens, however small: for the 1,000 new base files of
one Hudi commit that is more than the whole budget of a catch-up. The footer is Thrift's compact
protocol (`FileMetaData` of Parquet's format), which Thrift's own C decoder (`fastbinary`) reads in
microseconds when given the structures' field ids; the fields not declared here are skipped.

What is read: the schema, each row group's column chunks (their statistics, offsets, sizes, codec)
and the key-value metadata; of a column chunk, its pages (dictionary and data pages v1/v2, PLAIN or
dictionary encoded, every codec pyarrow decompresses except LZ4's Hadoop framing). Anything else
(nested repetition, other encodings, statistics only in the deprecated fields) is `Unsupported`:
the caller then reads the file with pyarrow as before.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any

from thrift.protocol import fastbinary
from thrift.Thrift import TType
from thrift.transport.TTransport import TMemoryBuffer

MAGIC = b"PAR1"

# physical types
BOOLEAN, INT32, INT64, INT96, FLOAT, DOUBLE, BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY = range(8)
# converted types
UTF8, DECIMAL_CT, DATE_CT, TIMESTAMP_MILLIS, TIMESTAMP_MICROS = 0, 5, 6, 9, 10
INT_8, INT_16, INT_32, INT_64 = 15, 16, 17, 18
# repetition
REQUIRED, OPTIONAL = 0, 1
# encodings
PLAIN, PLAIN_DICTIONARY, RLE, RLE_DICTIONARY = 0, 2, 3, 8
# page types
DATA_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = 0, 2, 3
_CODECS = {0: None, 1: "snappy", 2: "gzip", 4: "brotli", 6: "zstd", 7: "lz4_raw"}


class Unsupported(Exception):
    """A file this reader does not read: read it with pyarrow."""


class _Struct:
    """A Thrift structure for fastbinary: every declared field an attribute (a class attribute None
    when absent: an instance holds only the fields decoded)."""

    thrift_spec: tuple = ()

    def __init__(self, **fields: Any):
        self.__dict__.update(fields)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((type(self), tuple(self.__dict__.items())))


def _spec(cls: type[_Struct], *fields: tuple) -> None:
    """cls.thrift_spec from (id, ttype, name, type_args) tuples (fastbinary's layout)."""
    top = max(f[0] for f in fields)
    spec: list = [None] * (top + 1)
    for fid, ttype, name, args in fields:
        spec[fid] = (fid, ttype, name, args, None)
        setattr(cls, name, None)
    cls.thrift_spec = tuple(spec)


class _Protocol:
    """What fastbinary takes from a protocol: its transport and limits."""

    __slots__ = ("trans",)
    string_length_limit = container_length_limit = 1 << 30

    def __init__(self, trans: TMemoryBuffer):
        self.trans = trans


def _struct(cls: type[_Struct]) -> tuple:
    return (TType.STRUCT, [cls, cls.thrift_spec])


def _list_of(ttype: int, args: Any = None) -> tuple:
    return (ttype, args, False)


class _Empty(_Struct):
    pass


class TimeUnit(_Struct):
    pass


class TimestampType(_Struct):
    pass


class DecimalType(_Struct):
    pass


class IntType(_Struct):
    pass


class LogicalType(_Struct):
    pass


class SchemaElement(_Struct):
    pass


class Statistics(_Struct):
    pass


class ColumnMetaData(_Struct):
    pass


class ColumnChunk(_Struct):
    pass


class RowGroup(_Struct):
    pass


class KeyValue(_Struct):
    pass


class FileMetaData(_Struct):
    pass


class DataPageHeader(_Struct):
    pass


class DictionaryPageHeader(_Struct):
    pass


class DataPageHeaderV2(_Struct):
    pass


class PageHeader(_Struct):
    pass


_spec(_Empty, (1, TType.I32, "_unused", None))  # empty structures: every field skipped
_spec(TimeUnit, (1, TType.STRUCT, "MILLIS", [_Empty, _Empty.thrift_spec]),
      (2, TType.STRUCT, "MICROS", [_Empty, _Empty.thrift_spec]),
      (3, TType.STRUCT, "NANOS", [_Empty, _Empty.thrift_spec]))
_spec(TimestampType, (1, TType.BOOL, "isAdjustedToUTC", None),
      (2, TType.STRUCT, "unit", [TimeUnit, TimeUnit.thrift_spec]))
_spec(DecimalType, (1, TType.I32, "scale", None), (2, TType.I32, "precision", None))
_spec(IntType, (1, TType.BYTE, "bitWidth", None), (2, TType.BOOL, "isSigned", None))
_spec(LogicalType,
      *[(fid, TType.STRUCT, name, [_Empty, _Empty.thrift_spec])
        for fid, name in ((1, "STRING"), (2, "MAP"), (3, "LIST"), (4, "ENUM"), (6, "DATE"), (7, "TIME"),
                          (11, "UNKNOWN"), (12, "JSON"), (13, "BSON"), (14, "UUID"), (15, "FLOAT16"),
                          (16, "VARIANT"), (17, "GEOMETRY"), (18, "GEOGRAPHY"))],
      (5, TType.STRUCT, "DECIMAL", [DecimalType, DecimalType.thrift_spec]),
      (8, TType.STRUCT, "TIMESTAMP", [TimestampType, TimestampType.thrift_spec]),
      (10, TType.STRUCT, "INTEGER", [IntType, IntType.thrift_spec]))
_spec(SchemaElement, (1, TType.I32, "type", None), (2, TType.I32, "type_length", None),
      (3, TType.I32, "repetition_type", None), (4, TType.STRING, "name", "UTF8"),
      (5, TType.I32, "num_children", None), (6, TType.I32, "converted_type", None),
      (7, TType.I32, "scale", None), (8, TType.I32, "precision", None), (9, TType.I32, "field_id", None),
      (10, TType.STRUCT, "logicalType", [LogicalType, LogicalType.thrift_spec]))
_spec(Statistics, (1, TType.STRING, "max", "BINARY"), (2, TType.STRING, "min", "BINARY"),
      (3, TType.I64, "null_count", None), (4, TType.I64, "distinct_count", None),
      (5, TType.STRING, "max_value", "BINARY"), (6, TType.STRING, "min_value", "BINARY"))
_spec(ColumnMetaData, (1, TType.I32, "type", None), (2, TType.LIST, "encodings", _list_of(TType.I32)),
      (3, TType.LIST, "path_in_schema", _list_of(TType.STRING, "UTF8")), (4, TType.I32, "codec", None),
      (5, TType.I64, "num_values", None), (6, TType.I64, "total_uncompressed_size", None),
      (7, TType.I64, "total_compressed_size", None), (9, TType.I64, "data_page_offset", None),
      (11, TType.I64, "dictionary_page_offset", None),
      (12, TType.STRUCT, "statistics", [Statistics, Statistics.thrift_spec]))
_spec(ColumnChunk, (1, TType.STRING, "file_path", "UTF8"), (2, TType.I64, "file_offset", None),
      (3, TType.STRUCT, "meta_data", [ColumnMetaData, ColumnMetaData.thrift_spec]))
_spec(RowGroup, (1, TType.LIST, "columns", _list_of(*_struct(ColumnChunk))), (2, TType.I64, "total_byte_size", None),
      (3, TType.I64, "num_rows", None))
_spec(KeyValue, (1, TType.STRING, "key", "UTF8"), (2, TType.STRING, "value", "BINARY"))
_spec(FileMetaData, (1, TType.I32, "version", None), (2, TType.LIST, "schema", _list_of(*_struct(SchemaElement))),
      (3, TType.I64, "num_rows", None), (4, TType.LIST, "row_groups", _list_of(*_struct(RowGroup))),
      (5, TType.LIST, "key_value_metadata", _list_of(*_struct(KeyValue))),
      (6, TType.STRING, "created_by", "UTF8"))
_spec(DataPageHeader, (1, TType.I32, "num_values", None), (2, TType.I32, "encoding", None),
      (3, TType.I32, "definition_level_encoding", None), (4, TType.I32, "repetition_level_encoding", None))
_spec(DictionaryPageHeader, (1, TType.I32, "num_values", None), (2, TType.I32, "encoding", None))
_spec(DataPageHeaderV2, (1, TType.I32, "num_values", None), (2, TType.I32, "num_nulls", None),
      (3, TType.I32, "num_rows", None), (4, TType.I32, "encoding", None),
      (5, TType.I32, "definition_levels_byte_length", None), (6, TType.I32, "repetition_levels_byte_length", None),
      (7, TType.BOOL, "is_compressed", None))
_spec(PageHeader, (1, TType.I32, "type", None), (2, TType.I32, "uncompressed_page_size", None),
      (3, TType.I32, "compressed_page_size", None),
      (5, TType.STRUCT, "data_page_header", [DataPageHeader, DataPageHeader.thrift_spec]),
      (7, TType.STRUCT, "dictionary_page_header", [DictionaryPageHeader, DictionaryPageHeader.thrift_spec]),
      (8, TType.STRUCT, "data_page_header_v2", [DataPageHeaderV2, DataPageHeaderV2.thrift_spec]))

def _decode(cls: type[_Struct], data: bytes, offset: int = 0) -> tuple[Any, int]:
    """A `cls` decoded from data[offset:], and the offset after it."""
    buf = TMemoryBuffer(data[offset:] if offset else data)
    obj = cls()
    try:
        fastbinary.decode_compact(obj, _Protocol(buf), [cls, cls.thrift_spec])
    except Exception as exc:  # a truncated or corrupt structure
        raise Unsupported(f"cannot decode Parquet {cls.__name__}: {exc}") from None
    return obj, offset + buf.cstringio_buf.tell()


# --- the footer -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Column:
    """A top-level leaf column: its index among the column chunks and its types."""
    name: str
    index: int
    physical: int
    repetition: int
    converted: int | None
    logical: Any
    scale: int | None
    type_length: int | None


@dataclass
class Footer:
    meta: Any  # FileMetaData
    size: int  # the file's size in bytes
    columns: dict[str, Column]  # top-level leaf columns by name
    schema_key: tuple  # equal for files of one Parquet schema and key-value metadata of the schema
    tail: bytes  # the last bytes read (the footer and what precedes it)
    tail_start: int


def read_footer(fh, size: int, guess: int = 64 * 1024) -> Footer:
    """The footer of the Parquet file open as `fh` (binary, seekable) of `size` bytes."""
    if size < 12:
        raise Unsupported("not a Parquet file: too short")
    start = max(0, size - guess)
    fh.seek(start)
    tail = fh.read(size - start)
    if tail[-4:] != MAGIC:
        raise Unsupported("not a Parquet file (no PAR1 at its end)")
    n = struct.unpack_from("<i", tail, len(tail) - 8)[0]
    if n <= 0 or n + 8 > size:
        raise Unsupported("corrupt Parquet footer length")
    if n + 8 > len(tail):
        start = size - n - 8
        fh.seek(start)
        tail = fh.read(size - start)
    meta, _ = _decode(FileMetaData, tail[len(tail) - 8 - n:len(tail) - 8])
    return Footer(meta, size, *_columns(meta), tail, start)


def _columns(meta) -> tuple[dict[str, Column], tuple]:
    schema = meta.schema or []
    if not schema:
        raise Unsupported("Parquet footer without a schema")
    out: dict[str, Column] = {}
    leaf = 0
    k = 1
    for _ in range(schema[0].num_children or 0):  # the root's children, each with its subtree
        el = schema[k]
        if el.num_children:  # a group: its leaves are nested columns, never indexed here
            k, leaf = _skip_group(schema, k, leaf)
            continue
        out[el.name] = Column(el.name, leaf, el.type, el.repetition_type if el.repetition_type is not None else
                              REQUIRED, el.converted_type, el.logicalType, el.scale, el.type_length)
        leaf += 1
        k += 1
    arrow = next((kv.value for kv in (meta.key_value_metadata or []) if kv.key == "ARROW:schema"), None)
    return out, (tuple(schema), arrow)


def _skip_group(schema: list, k: int, leaf: int) -> tuple[int, int]:
    """(index after the subtree at k, leaves counted so far) ."""
    el = schema[k]
    k += 1
    if not el.num_children:
        return k, leaf + 1
    for _ in range(el.num_children):
        k, leaf = _skip_group(schema, k, leaf)
    return k, leaf


def _logical_key(lt) -> tuple | None:
    if lt is None:
        return None
    out: list[tuple] = []
    for spec in LogicalType.thrift_spec:
        if spec is None:
            continue
        v = getattr(lt, spec[2])
        if v is None:
            continue
        if spec[2] == "DECIMAL":
            out.append(("DECIMAL", v.scale, v.precision))
        elif spec[2] == "TIMESTAMP":
            out.append(("TIMESTAMP", v.isAdjustedToUTC, _unit(v.unit)))
        elif spec[2] == "INTEGER":
            out.append(("INTEGER", v.bitWidth, v.isSigned))
        else:
            out.append((spec[2],))
    return tuple(out)


def _unit(u) -> str | None:
    if u is None:
        return None
    return "milliseconds" if u.MILLIS is not None else "microseconds" if u.MICROS is not None else \
        "nanoseconds" if u.NANOS is not None else None


# --- statistics, as pyarrow's Statistics answer them -----------------------------------------------

@lru_cache(maxsize=64)
def stats_trusted(created_by: str | None) -> bool:
    """Column statistics pyarrow takes as they are: written by parquet-mr 1.10+ or parquet-cpp 1.3+
    (pyarrow's own writer included); older writers' are judged by sort order: left to pyarrow."""
    if not created_by:
        return False
    text = created_by.strip()
    for app, fixed in (("parquet-mr version ", (1, 10, 0)), ("parquet-cpp-arrow version ", (0, 0, 0)),
                       ("parquet-cpp version ", (1, 3, 0))):
        if text.startswith(app):
            return _version(text[len(app):]) >= fixed
    return False


def _version(text: str) -> tuple[int, ...]:
    head = text.split(" ", 1)[0].split("-", 1)[0]
    parts = []
    for p in head.split(".")[:3]:
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts + [0] * (3 - len(parts)))


def value_kind(col: Column) -> str:
    """How the column's statistics decode: i (integer), d (float), bool, s (text), b (bytes), dec
    (decimal), date (days), ts:<unit> (timestamp); Unsupported for the rest."""
    lt, ct, pt = col.logical, col.converted, col.physical
    if lt is not None:
        if lt.STRING is not None:
            if pt == BYTE_ARRAY:
                return "s"
        elif lt.DECIMAL is not None:
            return "dec"
        elif lt.DATE is not None and pt == INT32:
            return "date"
        elif lt.TIMESTAMP is not None and pt == INT64:
            unit = _unit(lt.TIMESTAMP.unit)
            if unit:
                return "ts:" + unit
        elif lt.INTEGER is not None and lt.INTEGER.isSigned and pt in (INT32, INT64):
            return "i"
        raise Unsupported(f"column {col.name}: logical type {_logical_key(lt)}")
    if ct is not None:
        if ct == UTF8 and pt == BYTE_ARRAY:
            return "s"
        if ct == DECIMAL_CT:
            return "dec"
        if ct == DATE_CT and pt == INT32:
            return "date"
        if ct in (TIMESTAMP_MILLIS, TIMESTAMP_MICROS) and pt == INT64:
            return "ts:" + ("milliseconds" if ct == TIMESTAMP_MILLIS else "microseconds")
        if ct in (INT_8, INT_16, INT_32, INT_64) and pt in (INT32, INT64):
            return "i"
        raise Unsupported(f"column {col.name}: converted type {ct}")
    if pt in (INT32, INT64):
        return "i"
    if pt in (FLOAT, DOUBLE):
        return "d"
    if pt == BOOLEAN:
        return "bool"
    if pt == BYTE_ARRAY:
        return "b"
    raise Unsupported(f"column {col.name}: physical type {pt}")


def decode_stat(col: Column, kind: str, raw: bytes) -> tuple[str, Any]:
    """A statistic's value (PLAIN encoded) as parquet_stats._bound tags it, before the unit's
    rounding of timestamps (("ts", raw, unit))."""
    pt = col.physical
    if kind == "dec":
        if pt == INT32:
            unscaled = struct.unpack("<i", raw)[0]
        elif pt == INT64:
            unscaled = struct.unpack("<q", raw)[0]
        else:
            unscaled = int.from_bytes(raw, "big", signed=True)
        scale = col.logical.DECIMAL.scale if col.logical is not None else col.scale
        return "dec", Decimal(unscaled).scaleb(-(scale or 0))
    if pt == INT32:
        v = struct.unpack("<i", raw)[0]
    elif pt == INT64:
        v = struct.unpack("<q", raw)[0]
    elif pt == FLOAT:
        return "d", struct.unpack("<f", raw)[0]
    elif pt == DOUBLE:
        return "d", struct.unpack("<d", raw)[0]
    elif pt == BOOLEAN:
        return "i", int(bool(raw[0]))
    elif kind == "s":
        raw.decode("utf-8")  # pyarrow decodes the text: not UTF-8 is refused there
        return "s", bytes(raw)
    else:
        return "b", bytes(raw)
    if kind == "date":
        return "date", v
    if kind.startswith("ts:"):
        return "ts", v
    return "i", v


# --- column values -----------------------------------------------------------------------------------

def _decompress(codec: int | None, data: bytes, size: int) -> bytes:
    name = _CODECS.get(codec or 0, "?")
    if name is None:
        return data
    if name == "?":
        raise Unsupported(f"Parquet codec {codec}")
    import pyarrow as pa

    return pa.Codec(name).decompress(data, decompressed_size=size, asbytes=True)


def _uvarint(b: bytes, i: int) -> tuple[int, int]:
    shift = out = 0
    while True:
        byte = b[i]
        i += 1
        out |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return out, i
        shift += 7


def _hybrid(b: bytes, i: int, end: int, width: int, count: int) -> list[int]:
    """`count` values of the RLE/bit-packed hybrid encoding in b[i:end]."""
    out: list[int] = []
    nbytes = (width + 7) // 8
    mask = (1 << width) - 1
    while len(out) < count and i < end:
        header, i = _uvarint(b, i)
        if header & 1:  # bit-packed: groups of 8 values
            n = (header >> 1) * 8
            size = (header >> 1) * width
            bits = int.from_bytes(b[i:i + size], "little")
            i += size
            out.extend((bits >> (width * k)) & mask for k in range(n))
        else:
            n = header >> 1
            v = int.from_bytes(b[i:i + nbytes], "little") if nbytes else 0
            i += nbytes
            out.extend([v] * n)
    if len(out) < count:
        raise Unsupported("Parquet levels or indices end early")
    return out[:count]


def _plain_byte_arrays(b: bytes, i: int, end: int, count: int) -> list[bytes]:
    out = []
    for _ in range(count):
        n = struct.unpack_from("<i", b, i)[0]
        i += 4
        if i + n > end:
            raise Unsupported("Parquet byte array beyond its page")
        out.append(b[i:i + n])
        i += n
    return out


@dataclass
class Pages:
    """A column chunk's values sections: the dictionary page's, and each data page's
    (encoding, values bytes, number of non-null values)."""
    dictionary: bytes | None
    dictionary_count: int
    data: list[tuple[int, bytes, int]]


def column_pages(fh, footer: Footer, col: Column, row_group: int, nulls: bool = False) -> Pages:
    """The values of a top-level column's chunk, decompressed, with each data page's count of
    non-null values; a null value is Unsupported unless `nulls`."""
    cc = footer.meta.row_groups[row_group].columns[col.index]
    md = cc.meta_data
    if md is None or cc.file_path:
        raise Unsupported("column chunk without metadata or in another file")
    start = md.data_page_offset
    if md.dictionary_page_offset is not None and 0 < md.dictionary_page_offset < start:
        start = md.dictionary_page_offset
    length = md.total_compressed_size
    if start >= footer.tail_start:
        chunk = footer.tail[start - footer.tail_start:start - footer.tail_start + length]
    else:
        fh.seek(start)
        chunk = fh.read(length)
    if len(chunk) != length:
        raise Unsupported("column chunk beyond the file's end")
    pages = Pages(None, 0, [])
    seen = 0
    i = 0
    while seen < md.num_values and i < length:
        header, i = _decode(PageHeader, chunk, i)
        body = chunk[i:i + header.compressed_page_size]
        i += header.compressed_page_size
        if header.type == DICTIONARY_PAGE:
            dph = header.dictionary_page_header
            if dph.encoding not in (PLAIN, PLAIN_DICTIONARY):
                raise Unsupported(f"dictionary page encoding {dph.encoding}")
            pages.dictionary = _decompress(md.codec, body, header.uncompressed_page_size)
            pages.dictionary_count = dph.num_values
        elif header.type == DATA_PAGE:
            dp = header.data_page_header
            page = _decompress(md.codec, body, header.uncompressed_page_size)
            j = 0
            if col.repetition == OPTIONAL:
                n = struct.unpack_from("<i", page, 0)[0]
                if dp.definition_level_encoding != RLE:
                    raise Unsupported(f"definition level encoding {dp.definition_level_encoding}")
                present = sum(_hybrid(page, 4, 4 + n, 1, dp.num_values))
                if present != dp.num_values and not nulls:
                    raise Unsupported("a null value")
                j = 4 + n
            elif col.repetition == REQUIRED:
                present = dp.num_values
            else:
                raise Unsupported("a repeated column")
            pages.data.append((dp.encoding, page[j:], present))
            seen += dp.num_values
        elif header.type == DATA_PAGE_V2:
            dp2 = header.data_page_header_v2
            if (dp2.num_nulls and not nulls) or dp2.repetition_levels_byte_length:
                raise Unsupported("a null value or a repeated column")
            levels = (dp2.definition_levels_byte_length or 0) + (dp2.repetition_levels_byte_length or 0)
            values = body[levels:]
            if dp2.is_compressed is not False:
                values = _decompress(md.codec, values, header.uncompressed_page_size - levels)
            pages.data.append((dp2.encoding, values, dp2.num_values - (dp2.num_nulls or 0)))
            seen += dp2.num_values
        # index pages (and any other) are skipped
    if seen != md.num_values:
        raise Unsupported("column chunk pages end early")
    return pages


def byte_array_values(pages: Pages) -> list[bytes]:
    """Every value of a BYTE_ARRAY column chunk (no nulls), in row order."""
    dictionary = None
    if pages.dictionary is not None:
        dictionary = _plain_byte_arrays(pages.dictionary, 0, len(pages.dictionary), pages.dictionary_count)
    out: list[bytes] = []
    for encoding, data, count in pages.data:
        if encoding == PLAIN:
            out += _plain_byte_arrays(data, 0, len(data), count)
        elif encoding in (PLAIN_DICTIONARY, RLE_DICTIONARY) and dictionary is not None:
            width = data[0] if data else 0
            idx = _hybrid(data, 1, len(data), width, count) if width else [0] * count
            try:
                out += [dictionary[k] for k in idx]
            except IndexError:
                raise Unsupported("dictionary index out of range") from None
        else:
            raise Unsupported(f"data page encoding {encoding}")
    return out


def floats_have_nan(pages: Pages, physical: int) -> bool:
    """Whether a FLOAT/DOUBLE column chunk holds NaN: its dictionary holds only values that occur,
    PLAIN pages every non-null value."""
    import numpy as np

    dtype = "<f4" if physical == FLOAT else "<f8"
    width = 4 if physical == FLOAT else 8
    if pages.dictionary is not None and np.isnan(
            np.frombuffer(pages.dictionary, dtype=dtype, count=pages.dictionary_count)).any():
        return True
    for encoding, data, count in pages.data:
        if encoding == PLAIN:
            if len(data) < count * width:
                raise Unsupported("PLAIN page shorter than its values")
            if np.isnan(np.frombuffer(data, dtype=dtype, count=count)).any():
                return True
        elif encoding not in (PLAIN_DICTIONARY, RLE_DICTIONARY) or pages.dictionary is None:
            raise Unsupported(f"data page encoding {encoding}")
    return False
