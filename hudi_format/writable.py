"""Hadoop's Writable encodings, which Hudi's formats and Hive's wire forms share: WritableUtils'
variable-length longs (HFile cells' memstore timestamps) and Text, and Hadoop's Token in its URL
string form (Hive delegation tokens, which the server issues and the client presents)."""

from __future__ import annotations

import base64
import io


def vlong(i: int) -> bytes:
    """WritableUtils.writeVLong."""
    if -112 <= i <= 127:
        return bytes([i & 0xFF])
    length = -112
    if i < 0:
        i ^= -1
        length = -120
    tmp = i
    while tmp:
        tmp >>= 8
        length -= 1
    out = bytearray([length & 0xFF])
    n = -(length + 120) if length < -120 else -(length + 112)
    for idx in range(n, 0, -1):
        out.append((i >> ((idx - 1) * 8)) & 0xFF)
    return bytes(out)


def read_vlong(inp: io.BytesIO) -> int:
    """WritableUtils.readVLong; ValueError when the input ends early."""
    b = inp.read(1)
    if not b:
        raise ValueError("truncated")
    first = b[0] - 256 if b[0] > 127 else b[0]
    if first >= -112:
        return first
    negative = first < -120
    size = (-119 - first) if negative else (-111 - first)
    rest = inp.read(size - 1)
    if len(rest) != size - 1:
        raise ValueError("truncated")
    value = int.from_bytes(rest, "big")
    return value ^ -1 if negative else value


def write_bytes(out: io.BytesIO, data: bytes) -> None:
    """A vlong length, then the bytes."""
    out.write(vlong(len(data)))
    out.write(data)


def read_bytes(inp: io.BytesIO) -> bytes:
    n = read_vlong(inp)
    data = inp.read(n) if n >= 0 else b""
    if n < 0 or len(data) != n:
        raise ValueError("truncated")
    return data


def write_text(out: io.BytesIO, text: str) -> None:
    """Hadoop's Text: the UTF-8 bytes with their vlong length."""
    write_bytes(out, text.encode("utf-8"))


def read_text(inp: io.BytesIO) -> str:
    """Hadoop's Text; ValueError (UnicodeDecodeError included) when malformed."""
    return read_bytes(inp).decode("utf-8")


def encode_token(identifier: bytes, password: bytes, kind: str, service: str = "") -> str:
    """Hadoop's Token.encodeToUrlString: URL-safe Base64, without padding, of
    (identifier, password, kind, service)."""
    out = io.BytesIO()
    write_bytes(out, identifier)
    write_bytes(out, password)
    write_text(out, kind)
    write_text(out, service)
    return base64.urlsafe_b64encode(out.getvalue()).decode().rstrip("=")


def decode_token(text: str) -> tuple[bytes, bytes, str | None]:
    """(identifier, password, kind) of a Token's URL string; the kind is None when the string ends
    after the password. ValueError when it is not a token."""
    text = text.strip()
    inp = io.BytesIO(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    identifier, password = read_bytes(inp), read_bytes(inp)
    kind = read_text(inp) if inp.tell() < len(inp.getbuffer()) else None
    return identifier, password, kind
