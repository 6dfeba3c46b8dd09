"""Column statistics (RFC-27) on the wire and in the store: a file's ColumnRange structs as bounds in
the store's order-preserving encoding (decoded before any transaction begins)."""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation

from store.hudi.column_stats import ColumnBounds, FileColumnStats, encode_float, encode_number
from thrift_idl.hive_metastore.ttypes import InvalidObjectException
from thrift_idl.hudi_metastore.ttypes import ColumnValue

MAX_COLUMNS = 10_000  # per file


def value_key(v: ColumnValue | None) -> bytes | None:
    """The order-preserving key of a typed bound; None when unset."""
    if v is None:
        return None
    if v.intValue is not None:
        return encode_number(Decimal(v.intValue))
    if v.doubleValue is not None:
        return None if math.isnan(v.doubleValue) else encode_float(v.doubleValue)  # NaN bounds say nothing
    if v.decimalValue is not None:
        try:
            d = Decimal(v.decimalValue)
        except InvalidOperation as exc:
            raise InvalidObjectException(f"Not a decimal bound: {v.decimalValue[:40]!r}") from exc
        return None if not d.is_finite() else encode_number(d)
    if v.stringValue is not None:
        return v.stringValue.encode()
    if v.binaryValue is not None:
        return bytes(v.binaryValue)
    return None


def file_column_stats(files) -> list[FileColumnStats]:
    out = []
    for f in files:
        if f is None or f.partitionPath is None or not f.fileName:
            raise InvalidObjectException("FileColumnStats needs a partitionPath and a fileName")
        cols = list(f.columns or [])
        if len(cols) > MAX_COLUMNS:
            raise InvalidObjectException(f"FileColumnStats of {f.fileName}: more than {MAX_COLUMNS} columns")
        bounds = []
        seen: set[str] = set()
        for c in cols:
            if c is None or not c.columnName:
                raise InvalidObjectException(f"A ColumnRange of {f.fileName} has no columnName")
            if c.columnName.lower() in seen:
                raise InvalidObjectException(f"Column {c.columnName} appears twice in the statistics of {f.fileName}")
            seen.add(c.columnName.lower())
            if len(c.columnName) > 256:
                raise InvalidObjectException(f"Column name longer than 256 characters: {c.columnName[:40]}...")
            for n in (c.nullCount, c.valueCount, c.totalSize, c.totalUncompressedSize):
                if n is not None and n < 0:
                    raise InvalidObjectException(f"Negative count in the statistics of {f.fileName}")
            lo, hi = value_key(c.minValue), value_key(c.maxValue)
            if lo is None or hi is None:
                lo = hi = None  # one bound alone is not kept
            elif lo > hi:
                raise InvalidObjectException(f"Column {c.columnName} of {f.fileName}: min greater than max")
            bounds.append(ColumnBounds(c.columnName, lo, hi, c.nullCount, c.valueCount, c.totalSize,
                                       c.totalUncompressedSize))
        out.append(FileColumnStats(f.partitionPath.strip("/"), f.fileName, int(f.totalSize or 0),
                                   int(f.totalUncompressedSize or 0), bounds))
    return out
