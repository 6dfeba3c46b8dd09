"""Avro's binary encoding of an Arrow table's rows, a column at a time.

Each top-level field of the record schema is encoded for all rows at once (numpy and Arrow
kernels): ints and longs as zig-zag varints, floats and doubles as little-endian IEEE, booleans
as one byte, strings and bytes as a varint length and the bytes, a union of null and one type as
its branch index and the value. Other types (records, arrays, maps, fixed, enums, other unions)
are written value by value with fastavro. The rows' encodings are then joined per row, so the
result is byte-equal to fastavro's `schemaless_writer` of each row (tests/unit/hudi_format).
"""

from __future__ import annotations

import io
from typing import Any

from hudi_format.errors import HudiFormatError

_BIN = None  # pa.large_binary(), set on first use (pyarrow is imported lazily)


def encode_rows(table, schema: dict):
    """Each row of `table` (columns named as the record's fields; a missing one is null) in Avro
    binary of the record schema `schema`: a large_binary Arrow array, one value per row."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if schema.get("type") != "record":
        raise HudiFormatError("Avro rows: the schema is not a record")
    n = table.num_rows
    cols = []
    try:
        for f in _expanded(schema)["fields"]:
            name = f["name"]
            col = table.column(name).combine_chunks() if name in table.column_names else pa.nulls(n)
            cols.append(_encode(col, f["type"], name))
    except _WholeRows:
        return _rows_by_value(table, schema)
    if not cols:
        return pa.array([b""] * n, _bin())
    return pc.binary_join_element_wise(*cols, pa.scalar(b"", _bin()))


class _WholeRows(Exception):
    """A field's type does not stand alone (a named type defined twice in it once expanded)."""


def _rows_by_value(table, schema: dict):
    import fastavro
    import pyarrow as pa

    parsed = fastavro.parse_schema(schema)
    out = []
    for row in table.to_pylist():
        buf = io.BytesIO()
        try:
            fastavro.schemaless_writer(buf, parsed, {f.name: avro_value(row.get(f.name), f.type)
                                                     for f in table.schema})
        except (ValueError, TypeError) as e:
            raise HudiFormatError(f"Avro rows: a value does not fit its type: {e}") from None
        out.append(buf.getvalue())
    return pa.array(out, _bin())


def encode_prefixed(table, schema: dict):
    """Each row as an Avro data block holds it: its length (int32, big-endian), then the record (a
    large_binary array; any slice of it is a run of the block's records, `records_section`)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = encode_rows(table, schema)
    lengths = pc.binary_length(rows).to_numpy(zero_copy_only=False).astype(np.int64)
    if len(lengths) and int(lengths.max()) > 0x7FFFFFFF:
        raise HudiFormatError("Avro rows: a record longer than 2 GiB")
    prefix = _fixed(lengths.astype(">i4").view(np.uint8), 4, len(lengths))
    return pc.binary_join_element_wise(prefix, rows, pa.scalar(b"", _bin()))


def records_section(prefixed) -> tuple[int, bytes]:
    """(count, bytes) of length-prefixed records (a slice of `encode_prefixed`'s array)."""
    return len(prefixed), _data_bytes(prefixed)


def encode_records_section(table, schema: dict) -> tuple[int, bytes]:
    """(count, bytes) of the rows as an Avro data block holds them: per record its length (int32,
    big-endian) and the record."""
    return records_section(encode_prefixed(table, schema))


# --- one column -----------------------------------------------------------------------------------

def _encode(col, avro, name: str, in_union: bool = False):
    """The encodings of one column's values in the Avro type `avro` (nulls: null, unless the type
    is a union with null; a null is refused where the type has none, unless `in_union`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(avro, list):
        if len(avro) == 2 and "null" in avro:
            null_at = avro.index("null")
            other = avro[1 - null_at]
            valid = pc.is_valid(col)
            branch = pc.if_else(valid, pa.scalar(bytes([2 * (1 - null_at)]), _bin()),
                                pa.scalar(bytes([2 * null_at]), _bin()))
            value = _encode(col, other, name, True) if col.null_count < len(col) else pa.nulls(len(col), _bin())
            return pc.binary_join_element_wise(branch, value, pa.scalar(b"", _bin()), null_handling="skip")
        return _by_value(col, avro)
    if col.null_count and not in_union and not _nullable(avro):
        raise HudiFormatError(f"Avro rows: field {name} is null in a row, and its type has no null")
    out = _vectorized(col, avro)
    return out if out is not None else _by_value(col, avro)


def _nullable(avro) -> bool:
    return avro == "null" or (isinstance(avro, list) and "null" in avro)


def _vectorized(col, avro):
    """The column's encodings (nulls kept null), or None when the pair of types is not one done
    column-wise."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.types as t

    kind = avro.get("type") if isinstance(avro, dict) else avro
    logical = avro.get("logicalType") if isinstance(avro, dict) else None
    typ = col.type
    n = len(col)
    mask = None if not col.null_count else pc.is_null(col)
    if kind in ("int", "long"):
        if logical is None and t.is_integer(typ) and not t.is_unsigned_integer(typ):
            ints = col
        elif kind == "int" and logical == "date" and t.is_date32(typ):
            ints = col.cast(pa.int32())
        elif (kind == "long" and t.is_timestamp(typ)
              and logical in ("timestamp-micros", "local-timestamp-micros", "timestamp-millis",
                              "local-timestamp-millis")):
            unit = "us" if logical.endswith("micros") else "ms"
            try:
                ints = col.cast(pa.timestamp(unit, typ.tz)).cast(pa.int64())
            except pa.ArrowInvalid:  # would lose precision: fastavro decides
                return None
        else:
            return None
        values = pc.fill_null(ints.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)
        return _with_nulls(_varints(values), mask)
    if kind in ("double", "float") and logical is None and t.is_floating(typ):
        width, code = (8, "<f8") if kind == "double" else (4, "<f4")
        values = pc.fill_null(col.cast(pa.float64()), 0.0).to_numpy(zero_copy_only=False).astype(code)
        return _with_nulls(_fixed(values.view(np.uint8), width, n), mask)
    if kind == "boolean" and t.is_boolean(typ):
        values = pc.fill_null(col, False).to_numpy(zero_copy_only=False).astype(np.uint8)
        return _with_nulls(_fixed(values, 1, n), mask)
    if ((kind == "string" and logical in (None, "uuid") and (t.is_string(typ) or t.is_large_string(typ)))
            or (kind == "bytes" and logical is None and (t.is_binary(typ) or t.is_large_binary(typ)))):
        raw = col.cast(_bin())
        lengths = pc.fill_null(pc.binary_length(raw), 0).to_numpy(zero_copy_only=False).astype(np.int64)
        return pc.binary_join_element_wise(_with_nulls(_varints(lengths), mask), raw, pa.scalar(b"", _bin()))
    return None


def _by_value(col, avro):
    """Value by value with fastavro (the types not done column-wise)."""
    import fastavro
    import pyarrow as pa

    try:
        parsed = fastavro.parse_schema(avro)
    except fastavro.schema.SchemaParseException:
        raise _WholeRows() from None
    out: list[bytes | None] = []
    for v in col.to_pylist():
        if v is None and not _nullable(avro):
            out.append(None)
            continue
        buf = io.BytesIO()
        try:
            fastavro.schemaless_writer(buf, parsed, avro_value(v, col.type))
        except (ValueError, TypeError) as e:
            raise HudiFormatError(f"Avro rows: a value does not fit its type: {e}") from None
        out.append(buf.getvalue())
    return pa.array(out, _bin())


def avro_value(v, t) -> Any:
    """A value of pyarrow's to_pylist as fastavro writes it (maps as dicts)."""
    import pyarrow.types as pt

    if v is None:
        return None
    if pt.is_map(t):
        return {k: avro_value(x, t.item_type) for k, x in v}
    if pt.is_struct(t):
        return {t.field(i).name: avro_value(v.get(t.field(i).name), t.field(i).type) for i in range(t.num_fields)}
    if pt.is_list(t) or pt.is_large_list(t):
        return [avro_value(x, t.value_type) for x in v]
    return v


# --- building blocks ------------------------------------------------------------------------------

def _bin():
    global _BIN
    if _BIN is None:
        import pyarrow as pa

        _BIN = pa.large_binary()
    return _BIN


def _varints(values):
    """Zig-zag varints of int64 values: a large_binary array."""
    import numpy as np

    v = values.astype(np.int64, copy=False)
    z = ((v << 1) ^ (v >> 63)).view(np.uint64)
    count = np.ones(len(z), np.int64)
    groups = [z & np.uint64(0x7F)]
    rest = z >> np.uint64(7)
    while rest.any():
        count += rest != 0
        groups.append(rest & np.uint64(0x7F))
        rest = rest >> np.uint64(7)
    m = np.stack(groups, axis=1).astype(np.uint8)
    k = np.arange(m.shape[1])
    m[k[None, :] < (count - 1)[:, None]] |= np.uint8(0x80)
    data = m[k[None, :] < count[:, None]]
    offsets = np.zeros(len(z) + 1, np.int64)
    np.cumsum(count, out=offsets[1:])
    return _from_buffers(len(z), offsets, data)


def _fixed(data, width: int, n: int):
    """`n` values of `width` bytes each from one contiguous byte array."""
    import numpy as np

    return _from_buffers(n, np.arange(n + 1, dtype=np.int64) * width, data)


def _from_buffers(n: int, offsets, data):
    import numpy as np
    import pyarrow as pa

    return pa.Array.from_buffers(_bin(), n, [None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(data))])


def _with_nulls(arr, mask):
    """`arr` with nulls where `mask` is true (mask None: none)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if mask is None:
        return arr
    return pc.if_else(mask, pa.nulls(len(arr), _bin()), arr)


def _data_bytes(arr) -> bytes:
    """The values of a large_binary array, concatenated."""
    import numpy as np

    if len(arr) == 0:
        return b""
    offsets = np.frombuffer(arr.buffers()[1], np.int64, len(arr) + 1, arr.offset * 8)
    return arr.buffers()[2][int(offsets[0]):int(offsets[-1])].to_pybytes()


def _expanded(schema: dict) -> dict:
    """The schema with named types written out where they are used (each field's type then stands
    alone)."""
    import fastavro

    parsed = fastavro.parse_schema(schema, expand=True)
    if not isinstance(parsed, dict):
        raise HudiFormatError("Avro rows: the schema is not a record")
    return parsed
