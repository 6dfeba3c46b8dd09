"""HFile (major version 3), read side: the cells of an HFile as Hudi writes them in the HFile data
blocks of merge-on-read log files (hoodie.logfile.data.block.format=hfile), whose row is the
record key and whose value is the record in Avro binary.

Layout: blocks, then the load-on-open section (root index, meta index, file info) and a 4,096-byte
trailer (magic `TRABLK"$`, a varint-delimited protobuf, the version in the last 4 bytes). Each
block has a 33-byte header: magic (8), on-disk size without header (int32), uncompressed size
(int32), previous block offset (int64), checksum type (1), bytes per checksum (int32), on-disk
data size with header (int32); its payload follows, compressed with the file's codec (trailer
field 12: 1 GZ, 2 none), then checksums. A cell of a data block is key length (int32), value
length (int32), key, value, tags (2-byte length + tags, when the file info has hfile.MAX_TAGS_LEN),
and a variable-length memstore timestamp (when KEY_VALUE_VERSION >= 1); the key begins with the
row (2-byte length + bytes). Blocks are read in file order, so index levels and inline blocks
(leaf index, bloom chunks) need not be understood.
"""

from __future__ import annotations

import struct
import zlib

from hudi_format.errors import HudiFormatError

HEADER = 33
TRAILER = 4096
DATA, ENCODED_DATA, FILE_INFO, TRAILER_MAGIC = b"DATABLK*", b"DATABLKE", b"FILEINF2", b'TRABLK"$'
# blocks that may sit between the data blocks and the load-on-open section (skipped)
_OTHER = {b"IDXLEAF2", b"IDXINTE2", b"IDXROOT2", b"BLMFBLK2", b"BLMFMET2", b"METABLKc", FILE_INFO}
GZ, NONE = 1, 2
_CODECS = {0: "LZO", 1: "GZ", 2: "none", 3: "SNAPPY", 4: "LZ4", 5: "BZIP2", 6: "ZSTD"}


class HFileError(HudiFormatError):
    pass


def cells(data: bytes, name: str = "HFile") -> list[tuple[bytes, bytes]]:
    """(row, value) of every cell, in file order. HFileError for what is not read: another major
    version, a codec other than GZ or none, encoded data blocks, or bytes that do not parse."""
    try:
        return _cells(data, name)
    except (struct.error, IndexError, zlib.error) as exc:
        raise HFileError(f"{name}: not a readable HFile ({exc})") from None


def file_info(data: bytes, name: str = "HFile") -> dict[bytes, bytes]:
    """The file info entries (e.g. Hudi's `schema`, `minRecordKey`); HFileError as `cells`."""
    try:
        trailer = _trailer(data, name)
        return _file_info(data, int(trailer[1]), int(trailer.get(12, NONE)), name)
    except (struct.error, IndexError, zlib.error) as exc:
        raise HFileError(f"{name}: not a readable HFile ({exc})") from None


def _cells(data: bytes, name: str) -> list[tuple[bytes, bytes]]:
    trailer = _trailer(data, name)
    codec = int(trailer.get(12, NONE))
    if codec not in (GZ, NONE):
        raise HFileError(f"{name}: HFile compressed with {_CODECS.get(codec, codec)} (GZ and none are read)")
    info = _file_info(data, int(trailer[1]), codec, name)
    tags = b"hfile.MAX_TAGS_LEN" in info
    mvcc = int.from_bytes(info.get(b"KEY_VALUE_VERSION", b""), "big") >= 1
    out: list[tuple[bytes, bytes]] = []
    pos, end = int(trailer.get(9, 0)), int(trailer[2])  # first data block, load-on-open section
    while pos < end:
        magic, payload, pos = _block(data, pos, codec, name)
        if magic == ENCODED_DATA:
            raise HFileError(f"{name}: HFile with encoded data blocks (not read)")
        if magic == DATA:
            _data_cells(payload, tags, mvcc, out)
        elif magic not in _OTHER:
            raise HFileError(f"{name}: unknown HFile block {magic!r}")
    count = trailer.get(7)
    if isinstance(count, int) and len(out) != count:
        raise HFileError(f"{name}: HFile trailer counts {count} cells, its blocks hold {len(out)}")
    return out


def _trailer(data: bytes, name: str) -> dict[int, int | bytes]:
    if len(data) < TRAILER or data[-TRAILER:-TRAILER + 8] != TRAILER_MAGIC:
        raise HFileError(f"{name}: not an HFile (no trailer)")
    major = int.from_bytes(data[-4:], "big") & 0xFFFFFF
    if major != 3:
        raise HFileError(f"{name}: HFile major version {major} (3 is read)")
    n, pos = _varint(data, len(data) - TRAILER + 8)
    trailer = dict(_pb_fields(data[pos:pos + n]))
    if not isinstance(trailer.get(1), int) or not isinstance(trailer.get(2), int):
        raise HFileError(f"{name}: HFile trailer without file info and load-on-open offsets")
    return trailer


def _block(data: bytes, pos: int, codec: int, name: str) -> tuple[bytes, bytes, int]:
    """(magic, uncompressed payload, offset of the next block) of the block at `pos`."""
    magic = data[pos:pos + 8]
    on_disk, size, _prev, _checksum, _per, data_end = struct.unpack_from(">iiqbii", data, pos + 8)
    if on_disk < 0 or size < 0 or not HEADER <= data_end <= HEADER + on_disk or pos + HEADER + on_disk > len(data):
        raise HFileError(f"{name}: HFile block at byte {pos} has impossible sizes")
    payload = data[pos + HEADER:pos + data_end]
    if codec == GZ:
        payload = zlib.decompress(payload, 47)  # gzip or zlib stream
    if len(payload) != size:
        raise HFileError(f"{name}: HFile block at byte {pos} holds {len(payload)} bytes, its header says {size}")
    return magic, payload, pos + HEADER + on_disk


def _file_info(data: bytes, at: int, codec: int, name: str) -> dict[bytes, bytes]:
    magic, payload, _ = _block(data, at, codec, name)
    if magic != FILE_INFO or payload[:4] != b"PBUF":
        raise HFileError(f"{name}: no HFile file info block at byte {at}")
    n, p = _varint(payload, 4)
    info = {}
    for _num, entry in _pb_fields(payload[p:p + n]):
        if isinstance(entry, bytes):
            pair = dict(_pb_fields(entry))
            if isinstance(pair.get(1), bytes) and isinstance(pair.get(2), bytes):
                info[pair[1]] = pair[2]
    return info


def _data_cells(block: bytes, tags: bool, mvcc: bool, out: list[tuple[bytes, bytes]]) -> None:
    p, end = 0, len(block)
    while p < end:
        klen, vlen = struct.unpack_from(">ii", block, p)
        if klen < 2 or vlen < 0 or p + 8 + klen + vlen > end:
            raise HFileError(f"cell at byte {p} of a data block runs past it")
        key_at = p + 8
        rlen = struct.unpack_from(">H", block, key_at)[0]
        if rlen > klen - 2:
            raise HFileError(f"cell at byte {p} of a data block has a row longer than its key")
        out.append((block[key_at + 2:key_at + 2 + rlen], block[key_at + klen:key_at + klen + vlen]))
        p = key_at + klen + vlen
        if tags:
            p += 2 + struct.unpack_from(">H", block, p)[0]
        if mvcc:
            p = _vlong_end(block, p)


def _vlong_end(buf: bytes, pos: int) -> int:
    """Offset after a Hadoop WritableUtils variable-length long."""
    first = struct.unpack_from(">b", buf, pos)[0]
    if first >= -112:
        return pos + 1
    return pos + ((-119 - first) if first < -120 else (-111 - first))


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    shift = n = 0
    while True:
        b = buf[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if not b & 0x80:
            return n, pos
        shift += 7
        if shift > 63:
            raise HFileError("varint longer than 64 bits")


def _pb_fields(buf: bytes):
    """(field number, value) of a protobuf message: varints and length-delimited fields."""
    pos = 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        if tag & 7 == 2:
            n, pos = _varint(buf, pos)
            if pos + n > len(buf):
                raise HFileError("protobuf field runs past its message")
            yield tag >> 3, bytes(buf[pos:pos + n])
            pos += n
        elif tag & 7 == 0:
            v, pos = _varint(buf, pos)
            yield tag >> 3, v
        elif tag & 7 == 1:
            pos += 8
        elif tag & 7 == 5:
            pos += 4
        else:
            raise HFileError(f"unexpected protobuf wire type {tag & 7}")
