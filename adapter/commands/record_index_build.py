"""The record-level index of a table adopted from storage (import-hudi), checked (validate) and
rebuilt (repair): the record keys of the table's latest file slices, read from storage.

Keys come from the `_hoodie_record_key` and `_hoodie_commit_time` meta columns of the latest base
files (pyarrow) and, for merge-on-read tables, of the Avro, HFile and Parquet data blocks of the
slices' log files (hudi_format/log_file.py) that completed instants wrote and no rollback block undid.
Tables written without meta fields (`hoodie.populate.meta.fields=false`) get their keys from the
record key fields through the table's key generator (hudi_format/key_generator.py), with the
instant that wrote the file (base file) or the block (log file). Delete blocks remove their keys
(in log order: a later data block can write a key again). Not read yet, so such tables keep no
index (the reason is reported): version-1 delete blocks (HoodieKey arrays; version 2, checked with
Hudi 0.12.2, and version 3 are read), deletes carrying ordering values of their own (a reader
compares them with the record's), HFile blocks compressed otherwise than with GZ or not at all,
and key fields of types other than strings, integers and booleans.
"""

from __future__ import annotations

from dataclasses import dataclass

from client import FileGroupKeys, HudiCatalog
from hudi_format.config_keys import INDEX_TYPE
from hudi_format.errors import HudiFormatError
from hudi_format.record_key_codec import encode_keys
from hudi_format.record_keys import KeyReader, slice_keys
from hudi_format.storage import TableStorage
from hudi_format.table_config import HudiTableConfig

LOAD_BATCH = 500_000  # keys per load_record_index call
LOOKUP_BATCH = 200_000


@dataclass
class StorageKeys:
    """key -> (partition path, file id, commit time) of the latest slices; `duplicates`: keys found
    in more than one file group; `unreadable`: why no index can be built (None: it can)."""
    keys: dict[str, tuple[str, str, str]]
    duplicates: list[tuple[str, tuple[str, str], tuple[str, str]]]
    unreadable: str | None = None


def has_index(cfg: HudiTableConfig) -> bool:
    return (cfg.properties.get(INDEX_TYPE) or "").upper() == "RECORD_INDEX"


def storage_keys(client: HudiCatalog, db: str, table: str) -> StorageKeys:
    """The record keys of the table's latest file slices (as the server lists them) on storage."""
    cfg = client.get_hudi_table(db, table)
    out = StorageKeys({}, [])
    slices = client.get_latest_file_slices(db, table)
    completed: set[str] = set()
    if cfg.table_type == "MERGE_ON_READ" and any(s.log_files for s in slices):
        completed = {i.ts for i in client.list_instants(db, table, states=["COMPLETED"])}
    storage = TableStorage(cfg.base_path or "")
    try:
        reader = KeyReader(cfg)
        for s in slices:
            for key, ts in slice_keys(storage, s, completed, reader).items():
                if key in out.keys:
                    out.duplicates.append((key, out.keys[key][:2], (s.partition_path, s.file_id)))
                out.keys[key] = (s.partition_path, s.file_id, ts)
    except HudiFormatError as exc:
        out.unreadable = str(exc)
    return out


def build_index(client: HudiCatalog, db: str, table: str, found: StorageKeys | None = None) -> int:
    """Replace the table's index by the keys on storage and turn it on; the number of keys.
    ValueError when storage cannot give them (the index is left as it was)."""
    found = found or storage_keys(client, db, table)
    if found.unreadable:
        raise ValueError(f"no record index for {db}.{table}: {found.unreadable}")
    if found.duplicates:
        key, a, b = found.duplicates[0]
        raise ValueError(f"no record index for {db}.{table}: key {key!r} is in file groups {a} and {b} "
                         f"({len(found.duplicates)} duplicate key(s))")
    by_group: dict[tuple[str, str, str], list[str]] = {}
    for key, where in found.keys.items():
        by_group.setdefault(where, []).append(key)
    batches: list[list] = [[]]
    size = 0
    for (p, fid, ts), keys in sorted(by_group.items()):
        for start in range(0, len(keys), LOAD_BATCH):
            if size >= LOAD_BATCH:
                batches.append([])
                size = 0
            chunk = keys[start:start + LOAD_BATCH]
            batches[-1].append(FileGroupKeys.of(p, fid, inserted=chunk, instant=ts))
            size += len(chunk)
    count = 0
    for i, batch in enumerate(batches):
        count = client.load_record_index(db, table, batch, reset=i == 0, enable=True if i == len(batches) - 1 else None)
    return count


def build_or_turn_off(client: HudiCatalog, db: str, table: str, keeps: bool) -> tuple[int | None, str | None]:
    """(keys, None) once the index is built from storage; else (None, why): a table that kept an
    index has it turned off, as storage holds keys it cannot represent (upserts then read base files)."""
    try:
        return build_index(client, db, table), None
    except ValueError as exc:
        why = str(exc).split(": ", 1)[-1]
        if keeps:
            client.load_record_index(db, table, [], reset=True, enable=False)
            why += "; the record index was turned off"
        return None, why


def index_differences(client: HudiCatalog, db: str, table: str) -> list[str]:
    """How the table's index differs from storage (each key once, in the file group holding it)."""
    found = storage_keys(client, db, table)
    if found.unreadable:
        return [f"the record index cannot be checked: {found.unreadable}"]
    diffs = [f"key {k!r} is in file groups {a} and {b} on storage" for k, a, b in found.duplicates[:20]]
    keys = sorted(found.keys)
    wrong = 0
    for start in range(0, len(keys), LOOKUP_BATCH):
        chunk = keys[start:start + LOOKUP_BATCH]
        for key, at in zip(chunk, client.lookup_record_keys(db, table, chunk)):
            want = found.keys[key]
            if at is None or at[:2] != want[:2]:
                wrong += 1
                if wrong <= 20:
                    where = "missing" if at is None else f"at {at[0] or '(table)'}/{at[1]}"
                    diffs.append(f"key {key!r} is in {want[0] or '(table)'}/{want[1]} on storage, {where} in the index")
    if wrong > 20:
        diffs.append(f"... {wrong} keys differ in all")
    held = client.get_hudi_table_stats(db, table).record_index_keys or 0
    if held != len(found.keys):
        diffs.append(f"the index holds {held} keys, storage's latest file slices {len(found.keys)}")
    return diffs


def restore_keys(client: HudiCatalog, db: str, table: str, savepoint: str) -> list[FileGroupKeys] | None:
    """For a table keeping a record index, the keys a restore to `savepoint` sends: those of each
    file group it changes (written after the savepoint, or replaced since) as the savepoint's file
    slices on storage hold them, grouped by the instant that wrote them; None for a table without
    the index. HudiFormatError when a slice cannot be read."""
    cfg = client.get_hudi_table(db, table)
    if not has_index(cfg):
        return None
    at = client.get_latest_file_slices(db, table, as_of=savepoint)
    now = {(s.partition_path, s.file_id) for s in client.get_latest_file_slices(db, table)}
    written = {(f.partition_path, f.file_id) for f in client.get_files_changed(db, table, since=savepoint)}
    changed = [s for s in at if (s.partition_path, s.file_id) in written or (s.partition_path, s.file_id) not in now]
    completed = {i.ts for i in client.list_instants(db, table, states=["COMPLETED"]) if i.ts <= savepoint}
    storage = TableStorage(cfg.base_path or "")
    reader = KeyReader(cfg)
    out = []
    for s in changed:
        by_instant: dict[str, list[str]] = {}
        for key, ts in slice_keys(storage, s, completed, reader).items():
            by_instant.setdefault(ts or savepoint, []).append(key)
        for ts, keys in sorted(by_instant.items()) or [(savepoint, [])]:
            out.append(FileGroupKeys(s.partition_path, s.file_id, inserted=encode_keys(keys), instant=ts))
    return out
