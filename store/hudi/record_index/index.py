"""The record-level index (RFC-08): record key -> (partition path, file id, instant) per Hudi table,
kept by the metastore in `record_index` (store/db/schema.py) and changed only inside the
transaction that completes a commit, so data and index commit together or not at all.

* Keys are bucketed by a stable hash (`shard_of`: CRC-32 of the UTF-8 key, SHARDS buckets), as
  RFC-08 buckets them; the mapping never changes for a table.
* A table keeps the index when its config says `hoodie.index.type=RECORD_INDEX`. Every write commit
  to it carries, per file group written, the keys inserted, updated and deleted (`FileGroupKeys`).
  The commit checks that each updated key is in the file group it names, then applies the replaced
  file groups (their keys leave), deletes (the old place of a moved key) and inserts; an update in
  place changes no row (as in Hudi's record index).
* Global uniqueness: the primary key (tbl_id, shard, record_key) holds a key once per table. An
  insert of a key the table has already (a concurrent writer inserted it first) fails the commit
  with CommitConflict naming the instant that wrote it.
* `instant` is the commit that put the record in its file group (its insert, or its move), as the
  `instantTime` of Hudi's record index; a load or a restore gives the record's `_hoodie_commit_time`.
Rollbacks need nothing (only completed commits change the index); cleans delete file slices, not
keys; file groups replaced (insert_overwrite, delete_partition, clustering) lose their keys in the
replacing commit. Tables adopted from storage get theirs through `load` (import-hudi, repair).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import repeat

from sqlalchemy import Connection, delete, func, select, update

from hudi_format.commit_metadata import CommitMetadata
from hudi_format.config_keys import (
    INDEX_TYPE,
    METADATA_ENABLE,
    RECORD_INDEX_ENABLE,
    RECORD_INDEX_UPDATE_PARTITION_PATH,
    TIMELINE_SOURCE,
    default_of,
)
from store.db import schema as S
from store.db.bulk import insert_rows
from store.db.database import Store
from store.db.dialect import in_list, pair_chunks, pairs_in
from store.errors import CommitConflict, InvalidObject, InvalidOperation
from store.hudi.record_index import rows
from store.hudi.tables import HudiTableRef, HudiTables

SHARDS = 64
RECORD_INDEX = "RECORD_INDEX"


def shard_of(key: str) -> int:
    """The key's bucket: stable across processes and versions (never Python's hash())."""
    return zlib.crc32(key.encode("utf-8")) % SHARDS


def count_keys(conn: Connection, tbl_id: int) -> int:
    """Keys the table's index holds."""
    return int(conn.execute(select(func.count()).select_from(S.record_index).where(
        S.record_index.c.tbl_id == tbl_id)).scalar_one())


def has_record_index(properties: dict[str, str]) -> bool:
    return (properties.get(INDEX_TYPE) or "").upper() == RECORD_INDEX


def mirrors_record_index(ref: HudiTableRef) -> bool:
    """The storage mirror writes the table's record index into its metadata table (`record_index`):
    the table keeps one, its metadata table is written (`hoodie.metadata.enable=true`, version 6, 8
    or 9), `hoodie.metadata.record.index.enable` is not false, and Hudi's own writers do not own
    its timeline (a tracked table's metadata table is theirs)."""
    props = ref.config.properties
    return has_record_index(props) and ref.config.table_version in (6, 8, 9) and not props.get(TIMELINE_SOURCE) and \
        str(props.get(METADATA_ENABLE, "")).strip().lower() == "true" and \
        str(props.get(RECORD_INDEX_ENABLE, default_of(RECORD_INDEX_ENABLE))).strip().lower() != "false"


REBUILD_KEY = ""  # record_index_deletes at instant 0: the mirror writes the partition again


def journal_deletes(conn: Connection, ref: HudiTableRef, instant: int, keys: Iterable[str]) -> None:
    """Keys instant `instant` took out of the index, for the mirror's delete blocks."""
    if not mirrors_record_index(ref):
        return
    insert_rows(conn, S.record_index_deletes, ("tbl_id", "instant", "record_key"),
                [(ref.tbl_id, instant, k) for k in dict.fromkeys(keys)], None, pg_types=("int8", "int8", "text"))


def journal_rebuild(conn: Connection, ref: HudiTableRef) -> None:
    """The index changed outside a commit's changes: the mirror writes the partition again."""
    if not mirrors_record_index(ref):
        return
    d = S.record_index_deletes
    conn.execute(delete(d).where(d.c.tbl_id == ref.tbl_id, d.c.instant == 0, d.c.record_key == REBUILD_KEY))
    conn.execute(d.insert().values(tbl_id=ref.tbl_id, instant=0, record_key=REBUILD_KEY))


@dataclass
class FileGroupKeys:
    """Keys one commit changed in one file group (or, for `load`, keys one file group holds that
    `instant` wrote)."""
    partition_path: str
    file_id: str
    inserted: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    instant: str | None = None


@dataclass
class KeyLocations:
    """Answer of a lookup: `groups[i]` = (partition path, file id); per key asked, in order, the
    index into `groups` (-1: unknown key) and the instant that wrote it ("": unknown)."""
    groups: list[tuple[str, str]]
    group_of_key: list[int]
    instants: list[str]


def _check_lengths(keys: list[str]) -> None:
    if keys and max(map(len, keys)) > S.RECORD_KEY:
        k = next(k for k in keys if len(k) > S.RECORD_KEY)
        raise InvalidObject(f"Record key of {len(k)} characters; the index holds keys of up to "
                            f"{S.RECORD_KEY}: {k[:60]!r}...")


def _keyed(keys: Iterable[str]) -> list[tuple[int, str]]:
    keys = list(keys)
    _check_lengths(keys)
    crc32 = zlib.crc32
    return [(crc32(k.encode("utf-8")) % SHARDS, k) for k in keys]


def _shards(keys: Iterable[str]) -> dict[int, list[str]]:
    """shard -> keys (each key once, in the order first given)."""
    unique = list(dict.fromkeys(keys))
    _check_lengths(unique)
    lists: list[list[str]] = [[] for _ in range(SHARDS)]
    add = [b.append for b in lists]
    crc32 = zlib.crc32
    for k in unique:
        add[crc32(k.encode("utf-8")) % SHARDS](k)
    return {s: b for s, b in enumerate(lists) if b}


def _misplaced(c: FileGroupKeys, kind: str, wrong: int, of: int) -> InvalidObject:
    return InvalidObject(
        f"{wrong} of the {of} keys {kind} in file group {c.file_id} of partition {c.partition_path!r} are not in "
        "that file group's index (a writer must tag its records with the index of the table as of its start)")


class RecordIndex:
    def __init__(self, store: Store, tables: HudiTables):
        self.store = store
        self.tables = tables
        # called with (db, table) before a read or load: the catch-up's index backlog settles there
        self.before_read: list[Callable[[str, str], object]] = []

    # --- the commit's changes (inside its transaction) -----------------------------------------------

    def apply_commit(self, conn: Connection, ref: HudiTableRef, ts: str, meta: CommitMetadata,
                     changes: list[FileGroupKeys] | None) -> None:
        """Index changes of write commit `ts` (called after its conflict check and file listing)."""
        if not has_record_index(ref.config.properties):
            return
        written = {(s.partition_path, s.file_id) for s in meta.write_stats}
        if changes is None:
            if written:
                raise InvalidObject(
                    f"{ref.db_name}.{ref.name} keeps a record index ({INDEX_TYPE}={RECORD_INDEX}): a commit "
                    "that writes file groups must carry the record keys of each (complete_instant recordKeys)")
            changes = []
        stray = [(c.partition_path, c.file_id) for c in changes if (c.partition_path, c.file_id) not in written]
        if stray:
            raise InvalidObject(f"Record keys given for file group {stray[0][1]} of partition {stray[0][0]!r}, "
                                f"which instant {ts} does not write")
        replaced = [(p, f) for p, ids in meta.replaced.items() for f in ids]
        instant = int(ts)
        self._check_updated(conn, ref, changes)
        gone = self._keys_of_groups(conn, ref.tbl_id, replaced) if replaced and mirrors_record_index(ref) else []
        journal_deletes(conn, ref, instant, [*gone, *(k for c in changes for k in c.deleted)])
        self.drop_file_groups(conn, ref.tbl_id, replaced)
        fg_ids = self._file_group_ids(conn, ref.tbl_id, [(c.partition_path, c.file_id) for c in changes])
        for c in changes:
            keyed = _keyed(dict.fromkeys(c.deleted))
            done = rows.delete_keys(conn, ref.tbl_id, fg_ids[(c.partition_path, c.file_id)], keyed)
            if done != len(keyed):
                raise _misplaced(c, "deleted", len(keyed) - done, len(keyed))
        new = [(ref.tbl_id, fg_ids[(c.partition_path, c.file_id)], instant, s, k)
               for c in changes for s, k in _keyed(c.inserted)]
        self._insert(conn, ref, ts, new)

    @staticmethod
    def _check_updated(conn: Connection, ref: HudiTableRef, changes: list[FileGroupKeys]) -> None:
        """Keys updated in place keep their rows (as in Hudi's record index, a key's instant is the
        commit that put it in its file group), but each must be in the file group the commit names:
        one lookup before the commit changes any row (a large one on PostgreSQL half on a second
        connection: the commit holds the table's lock, so no other commit changes its rows meanwhile
        and both see the same)."""
        claimed = [(c, _keyed(dict.fromkeys(c.updated))) for c in changes if c.updated]
        if not claimed:
            return
        found, fgs, _ = rows.key_columns(conn, ref.tbl_id, rows.by_shard(k for _, ks in claimed for k in ks))
        at = dict(zip(found, map(int, fgs)))
        groups = rows.file_groups(conn, sorted(set(at.values())))
        for c, ks in claimed:
            here = (c.partition_path, c.file_id)
            wrong = sum(1 for _, k in ks if groups.get(at.get(k, -1)) != here)
            if wrong:
                raise _misplaced(c, "updated", wrong, len(ks))

    def _insert(self, conn: Connection, ref: HudiTableRef, ts: str, new: list[rows.Row]) -> None:
        """Insert new keys; a key held already is a conflict (another commit inserted it first)."""
        try:
            with conn.begin_nested():
                rows.insert_rows(conn, new)
        except rows.DuplicateKey:
            found = rows.find_keys(conn, ref.tbl_id, rows.by_shard((s, k) for _, _, _, s, k in new))
            if not found:
                seen: set[str] = set()
                twice = next(k for *_, k in new if k in seen or seen.add(k))  # type: ignore[func-returns-value]
                raise InvalidObject(f"Instant {ts} inserts record key {twice!r} twice") from None
            instants = sorted({str(i) for _, i in found.values()})
            key = next(iter(found))
            raise CommitConflict(
                f"Instant {ts} of {ref.db_name}.{ref.name} inserts {len(found)} record key(s) the table holds "
                f"already (e.g. {key!r}, written by instant {found[key][1]}): keys are unique across the "
                "table (record index); another writer inserted them first", instants) from None

    @staticmethod
    def _keys_of_groups(conn: Connection, tbl_id: int, groups: Sequence[tuple[str, str]]) -> list[str]:
        ids = sorted(_find_file_groups(conn, tbl_id, list(dict.fromkeys(groups))).values())
        ri = S.record_index
        out: list[str] = []
        for start in range(0, len(ids), 500):
            out += conn.execute(select(ri.c.record_key).where(
                ri.c.tbl_id == tbl_id, ri.c.fg_id.in_(ids[start:start + 500]))).scalars().all()
        return out

    def drop_file_groups(self, conn: Connection, tbl_id: int, groups: Sequence[tuple[str, str]]) -> None:
        """File groups that left the table (replaced): their keys leave the index."""
        if not groups:
            return
        fg = S.record_index_file_group
        ids = sorted(_find_file_groups(conn, tbl_id, list(dict.fromkeys(groups))).values())
        ri = S.record_index
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            conn.execute(delete(ri).where(ri.c.tbl_id == tbl_id, ri.c.fg_id.in_(chunk)))
            conn.execute(delete(fg).where(fg.c.fg_id.in_(chunk)))

    def restore_file_groups(self, conn: Connection, ref: HudiTableRef, groups: Sequence[tuple[str, str]],
                            live: set[tuple[str, str]], keys: list[FileGroupKeys] | None) -> None:
        """A restore changed these file groups (written or replaced by the instants it rolled back;
        `live`: those in the table afterwards): their keys are replaced by `keys`, the keys each live
        one holds as of the savepoint (`inserted`, written by `instant`), given for exactly those.
        The index keeps no history, so a table keeping one needs them."""
        if not has_record_index(ref.config.properties) or not groups:
            return
        if keys is None:
            raise InvalidObject(
                f"{ref.db_name}.{ref.name} keeps a record index ({INDEX_TYPE}={RECORD_INDEX}): a restore that "
                "changes file groups must carry the keys each holds as of the savepoint (complete_instant "
                "recordKeys: inserted, with the instant that wrote them)")
        given = {(k.partition_path, k.file_id) for k in keys}
        stray = sorted(given - live)
        if stray:
            raise InvalidObject(f"Record keys given for file group {stray[0][1]} of partition {stray[0][0]!r}, "
                                "which the restore does not change (or leaves out of the table)")
        missing = sorted(live - given)
        if missing:
            raise InvalidObject(f"The restore changes file group {missing[0][1]} of partition {missing[0][0]!r} "
                                f"({len(missing)} in all without keys): give the keys each holds as of the savepoint")
        journal_rebuild(conn, ref)
        self.drop_file_groups(conn, ref.tbl_id, groups)
        fg_ids = self._file_group_ids(conn, ref.tbl_id, [(k.partition_path, k.file_id) for k in keys])
        new = []
        for k in keys:
            if not k.instant or not k.instant.isdigit():
                raise InvalidObject(f"Keys of file group {k.file_id} need the instant that wrote them")
            new += [(ref.tbl_id, fg_ids[(k.partition_path, k.file_id)], int(k.instant), s, key)
                    for s, key in _keyed(k.inserted)]
        self._insert(conn, ref, "restore", new)

    def _file_group_ids(self, conn: Connection, tbl_id: int,
                        groups: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
        """(partition, file id) -> fg_id, creating the missing ones (a few statements for any number)."""
        wanted = list(dict.fromkeys(groups))
        out = _find_file_groups(conn, tbl_id, wanted)
        missing = [g for g in wanted if g not in out]
        if missing:
            conn.execute(S.record_index_file_group.insert(),
                         [{"tbl_id": tbl_id, "partition_path": p, "file_id": f} for p, f in missing])
            out.update(_find_file_groups(conn, tbl_id, missing))
        return out

    # --- adoption and repair ---------------------------------------------------------------------

    def load(self, db: str, tbl: str, groups: list[FileGroupKeys], reset: bool, enable: bool | None) -> int:
        """Add file groups' keys (`inserted`, written by `instant`) to the index, in one transaction:
        after clearing it with `reset`; `enable` True turns the table's index on (its config's
        hoodie.index.type), False off (the index is cleared), None leaves it. Returns the number of
        keys the index holds."""
        n = self.store.run_write(self._load_in, db, tbl, groups, reset, enable)
        self.store.note_changes(sum(len(g.inserted) for g in groups), "record_index")  # (statistics upkeep)
        return n

    def _load_in(self, conn: Connection, db: str, tbl: str, groups: list[FileGroupKeys], reset: bool,
                 enable: bool | None) -> int:
        ref = self.tables.table_ref(conn, db, tbl, lock=True)
        if enable is False:
            reset, groups = True, []
        if reset:
            conn.execute(delete(S.record_index).where(S.record_index.c.tbl_id == ref.tbl_id))
            conn.execute(delete(S.record_index_file_group).where(
                S.record_index_file_group.c.tbl_id == ref.tbl_id))
        fg_ids = self._file_group_ids(conn, ref.tbl_id, [(g.partition_path, g.file_id) for g in groups])
        new = []
        for g in groups:
            if not g.instant or not g.instant.isdigit():
                raise InvalidObject(f"Keys of file group {g.file_id} need the instant that wrote them")
            new += [(ref.tbl_id, fg_ids[(g.partition_path, g.file_id)], int(g.instant), s, k)
                    for s, k in _keyed(g.inserted)]
        try:
            self._insert(conn, ref, "load", new)
        except CommitConflict as exc:
            raise InvalidOperation(exc.message.replace("another writer inserted them first",
                                                       "a key is in two file groups on storage")) from None
        if enable is not None:
            self._switch(conn, ref, enable)
        journal_rebuild(conn, ref)
        return count_keys(conn, ref.tbl_id)

    def reload_groups_in(self, conn: Connection, ref: HudiTableRef, keys: dict[tuple[str, str], dict[str, str]],
                         gone: Sequence[tuple[str, str]] = (), reset: bool = False, count: bool = False) -> int:
        """In the caller's transaction: the keys of file groups as their latest slices on storage hold
        them (`keys`: (partition, file id) -> key -> the instant that wrote it) replace what the index
        had for them; groups in `gone` (or, with `reset`, every group) leave it first. A key another
        group holds is InvalidOperation (nothing of this call stays: a savepoint). With `count` the
        table's key count (a count of its whole index), else 0."""
        with conn.begin_nested():
            journal_rebuild(conn, ref)
            if reset:
                conn.execute(delete(S.record_index).where(S.record_index.c.tbl_id == ref.tbl_id))
                conn.execute(delete(S.record_index_file_group).where(
                    S.record_index_file_group.c.tbl_id == ref.tbl_id))
                fg_ids = self._file_group_ids(conn, ref.tbl_id, [g for g, ks in keys.items() if ks])
            else:  # the groups' keys leave; groups left without keys leave too
                groups = list(dict.fromkeys([*keys, *gone]))
                fg_ids = _find_file_groups(conn, ref.tbl_id, groups)
                ri, fg = S.record_index, S.record_index_file_group
                ids = sorted(fg_ids.values())
                for start in range(0, len(ids), 500):
                    conn.execute(delete(ri).where(ri.c.tbl_id == ref.tbl_id,
                                                  in_list(conn.dialect.name, ri.c.fg_id, ids[start:start + 500])))
                empty = sorted(fg_ids.pop(g) for g in groups if g in fg_ids and not keys.get(g))
                for start in range(0, len(empty), 500):
                    conn.execute(delete(fg).where(in_list(conn.dialect.name, fg.c.fg_id, empty[start:start + 500])))
                fg_ids.update(self._file_group_ids(conn, ref.tbl_id,
                                                   [g for g, ks in keys.items() if ks and g not in fg_ids]))
            new = []
            for g, ks in keys.items():
                for shard, key in _keyed(ks):
                    ts = ks[key]
                    if not ts.isdigit():
                        raise InvalidOperation(f"Key {key!r} of file group {g[1]}: no instant wrote it")
                    new.append((ref.tbl_id, fg_ids[g], int(ts), shard, key))
            try:
                self._insert(conn, ref, "catch-up", new)
            except (CommitConflict, InvalidObject) as exc:
                raise InvalidOperation(exc.message.split(": keys are unique", 1)[0] +
                                       ": a key is in two file groups on storage") from None
        return count_keys(conn, ref.tbl_id) if count else 0

    def turn_off_in(self, conn: Connection, ref: HudiTableRef) -> None:
        """Clear the table's index and turn it off, in the caller's transaction."""
        conn.execute(delete(S.record_index).where(S.record_index.c.tbl_id == ref.tbl_id))
        conn.execute(delete(S.record_index_file_group).where(S.record_index_file_group.c.tbl_id == ref.tbl_id))
        self._switch(conn, ref, False)

    def switch_in(self, conn: Connection, ref: HudiTableRef, on: bool) -> None:
        """Turn the table's index on or off inside the caller's transaction."""
        self._switch(conn, ref, on)

    @staticmethod
    def _switch(conn: Connection, ref: HudiTableRef, on: bool) -> None:
        props = dict(ref.config.properties)
        if on:
            props[INDEX_TYPE] = RECORD_INDEX
            props.setdefault(RECORD_INDEX_UPDATE_PARTITION_PATH, default_of(RECORD_INDEX_UPDATE_PARTITION_PATH))
        else:
            props.pop(INDEX_TYPE, None)
        ref.config.properties = props
        conn.execute(update(S.hudi_table).where(S.hudi_table.c.tbl_id == ref.tbl_id).values(
            properties=ref.config.to_json()))

    # --- reads ------------------------------------------------------------------------------------

    def lookup(self, db: str, tbl: str, keys: list[str]) -> KeyLocations:
        """Where each key lives now (one read; keys may repeat)."""
        for hook in self.before_read:
            hook(db, tbl)
        with self.store.read() as conn:
            ref = self.tables.table_ref(conn, db, tbl)
            if not has_record_index(ref.config.properties):
                raise InvalidOperation(f"{ref.db_name}.{ref.name} keeps no record index ({INDEX_TYPE} is "
                                       f"{ref.config.properties.get(INDEX_TYPE) or 'not set'})")
            found, fgs, insts = rows.key_columns(conn, ref.tbl_id, _shards(keys))
            ids = {f: int(f) for f in set(fgs)}  # ints, or digit texts on SQLite
            groups = rows.file_groups(conn, sorted(ids.values()))
        return _answer(keys, found, fgs, insts, ids, groups)


def _find_file_groups(conn: Connection, tbl_id: int,
                      groups: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
    fg = S.record_index_file_group
    out: dict[tuple[str, str], int] = {}
    for chunk in pair_chunks(groups):  # a row-value IN of 500 pairs took PostgreSQL ~0.4 s
        wanted = set(chunk)
        for r in conn.execute(select(fg.c.fg_id, fg.c.partition_path, fg.c.file_id).where(
                fg.c.tbl_id == tbl_id, pairs_in(conn.dialect.name, fg.c.partition_path, fg.c.file_id, chunk))):
            if (r.partition_path, r.file_id) in wanted:
                out[(r.partition_path, r.file_id)] = r.fg_id
    return out


def _answer(keys: list[str], found: list[str], fgs: rows.Column, insts: rows.Column,
            ids: dict, groups: dict[int, tuple[str, str]]) -> KeyLocations:
    """The lookup's answer: per key asked its group's place in `groups` and its instant's text, of
    the keys found with their fg_ids and instants (parallel lists; `ids`: fg_id as given -> int).
    Each step is a map over lists or dicts, without a Python loop per key."""
    place = {fid: i for i, fid in enumerate(groups)}
    order = {f: place[i] for f, i in ids.items()}
    texts = {i: str(i) for i in set(insts)}
    # per key found its group's place and instant's text; one more entry for the keys not found
    group_of = [*map(order.__getitem__, fgs), -1]
    text_of = [*map(texts.__getitem__, insts), ""]
    at = list(map(dict(zip(found, range(len(found)))).get, keys, repeat(len(found))))
    return KeyLocations(groups=list(groups.values()), group_of_key=list(map(group_of.__getitem__, at)),
                        instants=list(map(text_of.__getitem__, at)))
