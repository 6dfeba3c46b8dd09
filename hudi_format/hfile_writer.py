"""HFile (major version 3), write side: the files Hudi's metadata table reads, laid out as Hudi
1.2's own HFile writer lays them out (hudi_format/hfile.py describes the format and reads it back).

What is written: data blocks (`DATABLK*`) of cells sorted by row, then the load-on-open section:
the root data index (`IDXROOT2`, one entry per data block: offset, on-disk size, first row), an
empty root meta index, the file info (`FILEINF2`), and the 4,096-byte trailer. A cell's key is
the row (2-byte length + bytes), an empty family, timestamp Long.MAX_VALUE and type Put (4); its
value follows, then a zero memstore timestamp (KEY_VALUE_VERSION 1). Index keys are the row alone
(2-byte length + bytes), as Hudi writes them. Blocks are GZ-compressed (gzip streams) or not, with
checksum type 0 (none) and 4 zero checksum bytes after the payload.
"""

from __future__ import annotations

import gzip
import struct
import time
from collections.abc import Mapping, Sequence

from hudi_format import writable
from hudi_format.hfile import DATA, FILE_INFO, GZ, HEADER, NONE, TRAILER, TRAILER_MAGIC

ROOT_INDEX = b"IDXROOT2"
COMPARATOR = b"org.apache.hudi.io.storage.HoodieHBaseKVComparator"
LATEST_TIMESTAMP = 0x7FFFFFFFFFFFFFFF
PUT = 4
BYTES_PER_CHECKSUM = 16384
DEFAULT_BLOCK_SIZE = 64 * 1024


def write_hfile(cells: Sequence[tuple[bytes, bytes]], file_info: Mapping[bytes, bytes] | None = None,
                compress: bool = True, block_size: int = DEFAULT_BLOCK_SIZE, now_ms: int | None = None) -> bytes:
    """The bytes of an HFile holding `cells` ((row, value), rows strictly increasing bytewise, at
    least one) and `file_info` next to the entries every HFile carries."""
    if not cells:
        raise ValueError("an HFile needs at least one cell")
    for (a, _), (b, _) in zip(cells, cells[1:]):
        if not a < b:
            raise ValueError(f"HFile rows must increase strictly: {a!r} then {b!r}")
    codec = GZ if compress else NONE
    out = bytearray()
    index: list[tuple[int, int, bytes]] = []  # (offset, on-disk size with header, first row)
    uncompressed = 0
    block = bytearray()
    first_row = b""
    for row, value in cells:
        if not block:
            first_row = row
        key = struct.pack(">H", len(row)) + row + b"\x00" + struct.pack(">qb", LATEST_TIMESTAMP, PUT)
        block += struct.pack(">ii", len(key), len(value)) + key + value + b"\x00"
        if len(block) >= block_size:
            uncompressed += len(block)
            index.append((len(out), *_append_block(out, DATA, bytes(block), codec, first_row)))
            block = bytearray()
    if block:
        uncompressed += len(block)
        index.append((len(out), *_append_block(out, DATA, bytes(block), codec, first_row)))
    last_data = index[-1][0]

    load_on_open = len(out)
    keys = [struct.pack(">H", len(row)) + row for _, _, row in index]  # an index key: the row with its length
    root = b"".join(struct.pack(">qi", off, size) + writable.vlong(len(k)) + k
                    for (off, size, _), k in zip(index, keys))
    _append_block(out, ROOT_INDEX, root, codec)
    _append_block(out, ROOT_INDEX, b"", codec)  # meta index: no meta blocks

    rows = [r for r, _ in cells]
    info = {
        b"hfile.LASTKEY": struct.pack(">H", len(rows[-1])) + rows[-1],
        b"hfile.AVG_KEY_LEN": struct.pack(">i", sum(map(len, rows)) // len(rows)),
        b"hfile.AVG_VALUE_LEN": struct.pack(">i", sum(len(v) for _, v in cells) // len(cells)),
        b"KEY_VALUE_VERSION": struct.pack(">i", 1),
        b"MAX_MEMSTORE_TS_KEY": struct.pack(">q", 0),
        b"hfile.CREATE_TIME_TS": struct.pack(">q", int(time.time() * 1000) if now_ms is None else now_ms),
    }
    info.update(file_info or {})
    pairs = b"".join(_pb_bytes(1, _pb_bytes(1, k) + _pb_bytes(2, v)) for k, v in sorted(info.items()))
    file_info_at = len(out)
    _append_block(out, FILE_INFO, b"PBUF" + _varint(len(pairs)) + pairs, codec)

    trailer = (_pb_int(1, file_info_at) + _pb_int(2, load_on_open) + _pb_int(3, uncompressed)
               + _pb_int(5, len(index)) + _pb_int(6, 0) + _pb_int(7, len(cells)) + _pb_int(8, 1)
               + _pb_int(9, 0) + _pb_int(10, last_data) + _pb_bytes(11, COMPARATOR) + _pb_int(12, codec))
    body = TRAILER_MAGIC + _varint(len(trailer)) + trailer
    out += body + b"\x00" * (TRAILER - 4 - len(body)) + struct.pack(">I", 3)  # minor 0, major 3
    return bytes(out)


def _append_block(out: bytearray, magic: bytes, payload: bytes, codec: int,
                  first_row: bytes = b"") -> tuple[int, bytes]:
    """Append one block; (its on-disk size with header, `first_row`)."""
    data = gzip.compress(payload, compresslevel=6, mtime=0) if codec == GZ else payload
    checksums = b"\x00" * 4
    out += magic + struct.pack(">iiqbii", len(data) + len(checksums), len(payload), -1, 0, BYTES_PER_CHECKSUM,
                               HEADER + len(data))
    out += data + checksums
    return HEADER + len(data) + len(checksums), first_row


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _pb_int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(value)


def _pb_bytes(field: int, value: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(value)) + value
