"""Key blocks: record keys on the wire in bulk (the record-level index, RFC-08).

A block is zlib-compressed (unsigned LEB128 byte length, UTF-8 key) pairs, in order. Commits carry
one block per file group and change kind; lookups send one block of keys. Millions of keys cost a
few bytes each instead of a Thrift struct each.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable

from hudi_format.errors import InvalidMetadata

MAX_BLOCK_BYTES = 1 << 30  # decompressed; a larger block is refused (not a zlib bomb's victim)


def encode_keys(keys: Iterable[str]) -> bytes:
    """A key block of `keys` (str) in their order."""
    out = bytearray()
    for key in keys:
        b = key.encode("utf-8")
        n = len(b)
        while n >= 0x80:
            out.append((n & 0x7F) | 0x80)
            n >>= 7
        out.append(n)
        out += b
    return zlib.compress(bytes(out), 1)


def _inflate(block: bytes) -> bytes:
    d = zlib.decompressobj()
    try:
        raw = d.decompress(block, MAX_BLOCK_BYTES)
    except zlib.error as exc:
        raise InvalidMetadata(f"Not a key block (zlib): {exc}") from None
    if d.unconsumed_tail:
        raise InvalidMetadata(f"Key block larger than {MAX_BLOCK_BYTES} bytes decompressed")
    if not d.eof:
        raise InvalidMetadata("Truncated key block")
    return raw


def decode_keys(block: bytes | None) -> list[str]:
    """The keys of a block (empty or None: none); InvalidMetadata if it is malformed."""
    if not block:
        return []
    raw = _inflate(block)
    if raw.isascii():  # every length below 128 (one byte) and every key ASCII: slices of one text
        return _ascii_keys(raw)
    keys = []
    pos, end = 0, len(raw)
    try:
        while pos < end:
            n = raw[pos]
            pos += 1
            if n & 0x80:
                n &= 0x7F
                shift = 7
                while True:
                    b = raw[pos]
                    pos += 1
                    n |= (b & 0x7F) << shift
                    if not b & 0x80:
                        break
                    shift += 7
            if pos + n > end:
                raise InvalidMetadata("Key block ends inside a key")
            keys.append(raw[pos:pos + n].decode("utf-8"))
            pos += n
    except IndexError:
        raise InvalidMetadata("Key block ends inside a length") from None
    except UnicodeDecodeError as exc:
        raise InvalidMetadata(f"Key block holds a key that is not UTF-8: {exc}") from None
    return keys


def _ascii_keys(raw: bytes) -> list[str]:
    text = raw.decode("ascii")
    keys: list[str] = []
    add = keys.append
    pos, end = 0, len(raw)
    while pos < end:
        nxt = pos + 1 + raw[pos]
        add(text[pos + 1:nxt])
        pos = nxt
    if pos != end:
        raise InvalidMetadata("Key block ends inside a key")
    return keys
