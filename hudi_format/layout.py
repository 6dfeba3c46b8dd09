"""Hudi's table layout on storage, table version 6 (timeline layout 1): the `.hoodie` folder, the
instant file names, `hoodie.properties` as Java writes it, partition metadata files."""

from __future__ import annotations

import re
import zlib

from hudi_format.config_keys import (
    CHECKSUM,
    DATABASE_NAME,
    METADATA_PARTITIONS,
    METADATA_PARTITIONS_INFLIGHT,
    PARTITION_FIELDS,
    TABLE_INITIAL_VERSION,
    TABLE_NAME,
    TIMELINE_HISTORY_PATH,
    TIMELINE_PATH,
    default_of,
)
from hudi_format.instant import ACTIONS, COMPLETED, COMPLETED_AS, INFLIGHT, REQUESTED
from hudi_format.table_config import HudiTableConfig

HOODIE = ".hoodie"
PARTITION_METAFILE = ".hoodie_partition_metadata"
# Folders HoodieTableMetaClient.initTable creates (the fixtures written by Hudi 0.14/0.15 have them).
LAYOUT_DIRS = (".aux", ".aux/.bootstrap", ".aux/.bootstrap/.partitions", ".aux/.bootstrap/.fileids",
               ".schema", ".temp", "archived")
# Properties the mirror never copies from the config: the metadata table's partitions are listed only
# when the mirror wrote them (store/hudi/metadata_table), the checksum is computed.
DROPPED_PROPERTIES = {METADATA_PARTITIONS, METADATA_PARTITIONS_INFLIGHT, CHECKSUM}

def table_checksum(props: dict[str, str]) -> int:
    """HoodieTableConfig.generateChecksum: CRC32 of `<database>.<table>` (database "" when unset)."""
    return zlib.crc32(f"{props.get(DATABASE_NAME, default_of(DATABASE_NAME))}.{props[TABLE_NAME]}".encode())


def _java_escape(s: str, key: bool) -> str:
    """java.util.Properties.saveConvert with escUnicode (what Properties.store(OutputStream) writes)."""
    out = []
    for i, ch in enumerate(s):
        o = ord(ch)
        if 61 < o < 127:
            out.append("\\\\" if ch == "\\" else ch)
        elif ch == " ":
            out.append("\\ " if i == 0 or key else " ")
        elif ch in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[ch])
        elif ch in "=:#!":
            out.append("\\" + ch)
        elif o < 0x20 or o > 0x7E:
            units = ch.encode("utf-16-be")
            out.extend(f"\\u{units[j] << 8 | units[j + 1]:04X}" for j in range(0, len(units), 2))
        else:
            out.append(ch)
    return "".join(out)


def java_properties(props: dict[str, str], comment: str) -> bytes:
    """Properties text Java's Properties.load(InputStream) reads back (ISO-8859-1, \\u escapes)."""
    lines = [f"#{comment}"] + [f"{_java_escape(k, True)}={_java_escape(v, False)}" for k, v in sorted(props.items())]
    return ("\n".join(lines) + "\n").encode("ascii")


def storage_properties(cfg: HudiTableConfig) -> dict[str, str]:
    """`hoodie.properties` as the mirror writes it: the table's config and its checksum."""
    props = {k: v for k, v in cfg.hoodie_properties().items() if k not in DROPPED_PROPERTIES}
    if not props.get(PARTITION_FIELDS):  # Hudi writes none for non-partitioned tables
        props.pop(PARTITION_FIELDS, None)
    if cfg.table_version >= 8:  # what Hudi 1.x's table config holds from the start
        for key in (TIMELINE_PATH, TIMELINE_HISTORY_PATH):
            props.setdefault(key, default_of(key))
        props.setdefault(TABLE_INITIAL_VERSION, str(cfg.table_version))
    props[CHECKSUM] = str(table_checksum(props))
    return props


def instant_file_name(ts: str, action: str, state: int) -> str | None:
    """Timeline layout 1 (table version 6) file name of an instant in a state; `action` is the action
    the instant was requested with (compaction, clustering, ...). None: Hudi writes no such file
    (a savepoint has no requested file)."""
    if state == COMPLETED:
        return f"{ts}.{COMPLETED_AS.get(action, action)}"
    if action == "clustering":  # 0.x: clustering shares the replace commit's file names
        action = "replacecommit"
    if action == "commit" and state == INFLIGHT:
        return f"{ts}.inflight"
    if action == "savepoint" and state == REQUESTED:
        return None
    return f"{ts}.{action}.{'requested' if state == REQUESTED else 'inflight'}"


_INSTANT_FILE = re.compile(r"^(\d{14,17})\.(.+)$")
_EXTENSIONS = {name.partition(".")[2] for a in ACTIONS for s in (REQUESTED, INFLIGHT, COMPLETED)
               if (name := instant_file_name("0" * 17, a, s))}


def parse_instant_file(name: str) -> str | None:
    """The instant time of a timeline file name, None for other files."""
    m = _INSTANT_FILE.match(name)
    return m.group(1) if m and m.group(2) in _EXTENSIONS else None
