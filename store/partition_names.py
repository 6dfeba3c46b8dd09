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


def values_from_name(keys: list[str], name: str) -> list[str]:
    """Values in key order; the name must name exactly the table's keys."""
    spec = dict(split_name(name))
    lowered = {k.lower(): v for k, v in spec.items()}
    if len(lowered) != len(keys) or any(k.lower() not in lowered for k in keys):
        raise ValueError(f"Invalid partition name {name} for partition keys {keys}")
    return [lowered[k.lower()] for k in keys]
