"""Order-preserving bytes for column statistics (RFC-27): the byte order of an encoded value is the
column type's order, so range checks are byte comparisons in SQL on every backend (SQLite BLOB,
PostgreSQL bytea and MySQL BLOB all compare bytes, never a locale's collation).

Numbers (integers, booleans, floats, decimals, dates as days, timestamps as microseconds) are
encoded as exact decimals whatever their scale: a class byte (-inf, negative, zero, positive,
+inf, NaN), then the decimal exponent and digits; negatives invert the bytes. -0.0 encodes as 0;
NaN sorts above +inf (as Spark orders it). Strings are their UTF-8 bytes, binary its bytes.
"""

from __future__ import annotations

import datetime as dt
import math
import struct
from decimal import Decimal, InvalidOperation

KEY_BYTES = 256  # store/db/schema.py STATS_KEY

NUMERIC_TYPES = ("tinyint", "smallint", "int", "integer", "bigint", "boolean", "float", "double",
                 "decimal", "date", "timestamp")
TEXT_TYPES = ("string", "varchar", "char")
INDEXABLE_TYPES = NUMERIC_TYPES + TEXT_TYPES + ("binary",)

_NEG_INF, _NEG, _ZERO, _POS, _POS_INF, _NAN = b"\x01", b"\x02", b"\x03", b"\x04", b"\x05", b"\x06"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def base_type(hive_type: str) -> str:
    """`decimal(10,2)` -> `decimal`, `varchar(8)` -> `varchar`."""
    return hive_type.split("(", 1)[0].strip().lower()


def is_indexable(hive_type: str) -> bool:
    return base_type(hive_type) in INDEXABLE_TYPES


def encode_number(value: Decimal) -> bytes:
    if value.is_nan():
        return _NAN
    if value.is_infinite():
        return _NEG_INF if value < 0 else _POS_INF
    if value == 0:
        return _ZERO
    sign, digits, _ = value.as_tuple()
    text = "".join(map(str, digits)).rstrip("0")
    body = struct.pack(">I", value.adjusted() + 2 ** 31) + text.encode()
    if not sign:
        return _POS + body
    return _NEG + bytes(255 - b for b in body + b"\x00")  # the terminator makes -1.2 > -1.23


def encode_float(value: float) -> bytes:
    return _NAN if math.isnan(value) else encode_number(Decimal(value))  # exact: Decimal(float)


def encode_key(hive_type: str, value: object) -> bytes | None:
    """A statistics bound or a predicate literal of a column of `hive_type` as its key; None when
    it cannot be ordered (prunes nothing)."""
    t = base_type(hive_type)
    if t in TEXT_TYPES:
        return str(value).encode()
    if t == "binary":
        return bytes(value) if isinstance(value, (bytes, bytearray)) else str(value).encode()
    if t in ("float", "double"):
        f = float(value)  # type: ignore[arg-type]
        if t == "float" and not math.isnan(f) and not math.isinf(f):
            f = struct.unpack("<f", struct.pack("<f", f))[0]  # as Spark casts a literal to float
        return encode_float(f)
    if t in NUMERIC_TYPES:
        return encode_number(_as_decimal(t, value))
    return None


def _as_decimal(t: str, value: object) -> Decimal:
    if isinstance(value, bool):
        return Decimal(int(value))
    if t == "date" and isinstance(value, str):
        return Decimal((dt.date.fromisoformat(value.strip()) - dt.date(1970, 1, 1)).days)
    if t == "timestamp" and isinstance(value, str):
        ts = dt.datetime.fromisoformat(value.strip())
        if ts.tzinfo is None:
            ts = ts.replace(tzinfo=dt.timezone.utc)
        delta = ts - _EPOCH
        return Decimal(delta.days * 86_400_000_000 + delta.seconds * 1_000_000 + delta.microseconds)
    if t == "boolean" and isinstance(value, str):
        low = value.strip().lower()
        if low not in ("true", "false"):
            raise ValueError(f"not a boolean: {value!r}")
        return Decimal(1 if low == "true" else 0)
    try:
        return Decimal(str(value).strip()) if not isinstance(value, float) else Decimal(value)
    except InvalidOperation as exc:
        raise ValueError(f"not a number: {value!r}") from exc


def lower_bound(key: bytes | None) -> bytes | None:
    """A key no greater than `key` that fits the column (a prefix is never greater)."""
    return None if key is None else key[:KEY_BYTES]


def upper_bound(key: bytes | None) -> bytes | None:
    """A key no less than `key` that fits the column; None (unknown) when there is none."""
    if key is None or len(key) <= KEY_BYTES:
        return key
    return prefix_successor(key[:KEY_BYTES])


def prefix_successor(prefix: bytes) -> bytes | None:
    """The least key greater than every key starting with `prefix`; None if there is none."""
    p = bytearray(prefix)
    while p and p[-1] == 0xFF:
        p.pop()
    if not p:
        return None
    p[-1] += 1
    return bytes(p)


FORK_BYTES = 16  # store/db/schema.py FORK_KEY


def fork(lo: bytes | None, hi: bytes | None) -> tuple[int | None, bytes | None]:
    """(length, bytes) of the common prefix of a range's bounds, at most FORK_BYTES: every key of
    the range starts with it. (None, None) for an unknown bound."""
    if lo is None or hi is None:
        return None, None
    n = 0
    limit = min(len(lo), len(hi), FORK_BYTES)
    while n < limit and lo[n] == hi[n]:
        n += 1
    return n, bytes(lo[:n])


def decode_number(key: bytes) -> Decimal | None:
    """The number an `encode_number` key holds (None for a truncated or unknown key)."""
    cls, body = key[:1], key[1:]
    if cls == _ZERO:
        return Decimal(0)
    if cls == _NAN:
        return Decimal("NaN")
    if cls in (_NEG_INF, _POS_INF):
        return Decimal("-Infinity" if cls == _NEG_INF else "Infinity")
    if cls == _NEG:
        body = bytes(255 - b for b in body)
        if not body.endswith(b"\x00"):
            return None
        body = body[:-1]
    elif cls != _POS:
        return None
    if len(body) < 5:
        return None
    exp = struct.unpack(">I", body[:4])[0] - 2 ** 31
    digits = body[4:].decode("ascii", "replace")
    if not digits.isdigit():
        return None
    value = Decimal(f"0.{digits}").scaleb(exp + 1)
    return -value if cls == _NEG else value
