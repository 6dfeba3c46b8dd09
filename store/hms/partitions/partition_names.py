"""Hive partition names: `key=value/key=value`, keys lower-cased, values %XX-escaped."""

from __future__ import annotations

import re

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

_ESCAPED = set('"#%\'*/:=?\\{[]^') | {chr(c) for c in range(1, 0x20)} | {"\x7f"}


def escape(value: str | None) -> str:
    if value is None or value == "":
        return DEFAULT_PARTITION
    if not any(ch in _ESCAPED for ch in value):
        return value
    return "".join(f"%{ord(ch):02X}" if ch in _ESCAPED else ch for ch in value)


_PCT = re.compile(r"%([0-9A-Fa-f]{2})")


def unescape(text: str) -> str:
    if "%" not in text:
        return text
    return _PCT.sub(lambda m: chr(int(m.group(1), 16)), text)


def make_name(keys: list[str], values: list[str]) -> str:
    return "/".join(f"{escape(k.lower())}={escape(v)}" for k, v in zip(keys, values))


def split_name(name: str) -> list[tuple[str, str]]:
    """`a=1/b=x%2Fy` -> [("a", "1"), ("b", "x/y")]; raises ValueError on a malformed name."""
    out = []
    for piece in name.split("/"):
        if not piece:
            continue
        key, sep, value = piece.partition("=")
        if not sep or not key:
            raise ValueError(f"Invalid partition name: {name}")
        out.append((unescape(key), unescape(value)))
    if not out:
        raise ValueError(f"Invalid partition name: {name}")
    return out


class IncompleteName(ValueError):
    """A partition name lacks one of the table's keys (Hive: NoSuchObjectException)."""


def hive_unescape(text: str) -> str:
    """Hive's FileUtils.unescapePathName: `%` and the next two characters parsed as a Java hex int
    (a sign is allowed); a non-negative code becomes that character, anything else stays."""
    if "%" not in text:
        return text
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "%" and i + 2 < n:
            digits = text[i + 1:i + 3]
            body = digits[1:] if digits[0] in "+-" else digits
            if body and all(ch in "0123456789abcdefABCDEF" for ch in body):
                code = int(digits, 16)
                if code >= 0:
                    out.append(chr(code))
                    i += 3
                    continue
        out.append(c)
        i += 1
    return "".join(out)


_COMPONENT = re.compile(r"^([^/]+)=([^/]+)$")


def spec_from_name(name: str) -> dict[str, str]:
    """Hive's Warehouse.makeSpecFromName: `k=v` path components in order (empty components and
    components that are not `k=v` with both sides non-empty are skipped; the last `=` splits);
    keys and values unescaped. Raises ValueError for an empty name."""
    if not name:
        raise ValueError(f"Partition name is invalid. {name}")
    spec: dict[str, str] = {}
    for piece in name.split("/"):
        m = _COMPONENT.match(piece) if piece else None
        if m:
            k, v = m.group(1), m.group(2)
            if "=" in v:  # Java's greedy ([^/]+)=([^/]+): the key takes all but the last `=`
                k, v = piece.rsplit("=", 1)
            spec[hive_unescape(k)] = hive_unescape(v)
    return spec


def values_from_name(keys: list[str], name: str) -> list[str]:
    """Hive's getPartValsFromName: the values of the table's keys (matched exactly, extra keys
    ignored); IncompleteName when one is missing."""
    spec = spec_from_name(name)
    out = []
    for k in keys:
        if k not in spec:
            raise IncompleteName(f"incomplete partition name - missing {k}")
        out.append(spec[k])
    return out
