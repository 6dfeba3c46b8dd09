"""Which object owns which location (docs/security.md, "Storage ownership"), kept in the store's
`location_owners` table, and the rules the store applies with it.

Indexed: databases (location and managed location), tables (not views), partitions whose location is
not under their table's, Hudi base paths that differ from their table's location. A partition under
its table's location needs no row: its table's covers it. Keys are store/storage/ownership.py's
`location_key`; "which locations lie inside X" is a range on the indexed prefix of the key, "which
locations cover X" an equality on the prefixes of X's ancestors: no call reads every row.

**Claims** (creating or altering a database, table or partition, registering a Hudi base path), when
authorization names a caller (`ownership.claimant()`), are refused when the location
- is the warehouse, a catalog's location, or contains one (never a table's or partition's; a
  catalog's location is its `default` database's);
- equals, contains or lies inside the location of a database (a table inside its own database is
  where tables go), unless the caller owns that database or is an admin; a database's location is
  never a table's or a partition's location, nor inside one;
- equals, contains or lies inside the location of another table, its partitions or Hudi base path,
  unless the caller owns that table or is an admin (a table's own partitions are its own);
- lies outside the warehouse, the catalogs' locations and `--external-locations`, unless the caller is
  an admin.

**Deletions and moves** follow ownership whoever asks (`plan`): a location covered by another
object's (a table, partition or Hudi base path at or above it, not the object's own table; a
database's root; the warehouse) is not deleted, emptied or moved, and inside a location the server
deletes around the locations of other objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, and_, delete, or_, select

from store.db import schema as S
from store.db.database import Store
from store.db.dialect import BATCH
from store.errors import OwnershipConflict
from store.storage import warehouse
from store.storage.ownership import (
    ancestors,
    claimant,
    location_key,
    location_keys,
    report,
    set_claimant,
    within,
)

_LO = S.location_owners
_P = S.LOC_PREFIX
DB, TBL, PART, HUDI = "db", "tbl", "part", "hudi"
_DATA = (TBL, PART, HUDI)
_RELATIONS = ("is", "lies inside", "contains")


@dataclass(frozen=True)
class Entry:
    """A row of `location_owners` with what its object is."""

    key: str
    kind: str
    db_id: int
    tbl_id: int | None
    part_id: int | None
    label: str
    owner: str | None
    owner_type: int | None

    def described(self) -> str:
        return f"{self.label} (owner {self.owner})" if self.owner else self.label


@dataclass(frozen=True)
class Obj:
    """The object a location is claimed for."""

    kind: str
    db_id: int
    label: str
    cat_name: str = "hive"
    db_name: str = ""
    tbl_id: int | None = None
    part_id: int | None = None


@dataclass
class Plan:
    """What may be done to one location (`plan`): nothing when `covered` names who covers it, else
    everything but the locations in `keep`."""

    uri: str
    key: str
    covered: str | None = None
    keep: list[str] = field(default_factory=list)


def _label(row: Any) -> str:
    db = row.db_name if row.cat_name == S.DEFAULT_CATALOG else f"{row.cat_name}.{row.db_name}"
    if row.kind == DB:
        return f"database {db}"
    if row.kind == PART:
        return f"partition {row.part_name} of table {db}.{row.tbl_name}"
    if row.kind == HUDI:
        return f"the Hudi base path of table {db}.{row.tbl_name}"
    return f"table {db}.{row.tbl_name}"


def _next(prefix: str) -> str:
    """The least string above every string that starts with `prefix` (which ends with '/')."""
    return prefix[:-1] + chr(ord(prefix[-1]) + 1)


class OwnerIndex:
    def __init__(self, store: Store, external_roots: Sequence[str] = ()):
        self.store = store
        self.warehouse_key = location_key(warehouse.to_uri(store.warehouse)) or "file:/"
        self.external_keys = [k for k in (location_key(r) for r in external_roots if r) if k]
        self._statement = select(
            _LO.c.loc_key, _LO.c.kind, _LO.c.db_id, _LO.c.tbl_id, _LO.c.part_id, S.db.c.cat_name,
            S.db.c.name.label("db_name"), S.db.c.owner_name, S.db.c.owner_type, S.tbl.c.name.label("tbl_name"),
            S.tbl.c.owner.label("tbl_owner"), S.tbl.c.owner_type.label("tbl_owner_type"),
            S.partitions.c.part_name,
        ).select_from(_LO.join(S.db, S.db.c.db_id == _LO.c.db_id).outerjoin(S.tbl, S.tbl.c.tbl_id == _LO.c.tbl_id)
                      .outerjoin(S.partitions, S.partitions.c.part_id == _LO.c.part_id))

    # --- reading the index ------------------------------------------------------------------------

    def _entries(self, conn: Connection, cond: Any) -> list[Entry]:
        out = []
        for r in conn.execute(self._statement.where(cond)):
            owner, kind = (r.owner_name, r.owner_type) if r.kind == DB else (r.tbl_owner, r.tbl_owner_type)
            out.append(Entry(r.loc_key, r.kind, r.db_id, r.tbl_id, r.part_id, _label(r), owner, kind))
        return out

    def covering(self, conn: Connection, keys: Iterable[str]) -> list[Entry]:
        """The entries at or above any of `keys`."""
        wanted = {a for k in keys for a in ancestors(k)}
        prefixes = sorted({a[:_P] for a in wanted})
        out: list[Entry] = []
        for i in range(0, len(prefixes), BATCH):
            out.extend(e for e in self._entries(conn, _LO.c.loc_prefix.in_(prefixes[i:i + BATCH]))
                       if e.key in wanted)
        return out

    def inside(self, conn: Connection, keys: Iterable[str]) -> list[Entry]:
        """The entries at or below any of `keys`: one range per directory the keys share a parent
        in (a partition drop's directories, one table's), or one for all of them."""
        keys = sorted(set(keys))
        if not keys:
            return []
        parents = sorted({ancestors(k)[1] if len(ancestors(k)) > 1 else k for k in keys})
        common = _common(keys)
        roots = keys if len(keys) <= 4 else parents if len(parents) <= 16 or not common else [common]
        out: dict[tuple[str, str, int | None], Entry] = {}
        for q in roots:
            if len(q) <= _P:
                cond = and_(_LO.c.loc_prefix >= q, _LO.c.loc_prefix < _next(q))
            else:
                cond = _LO.c.loc_prefix == q[:_P]
            for e in self._entries(conn, cond):
                if any(e.key.startswith(k) for k in keys):
                    out[(e.key, e.kind, e.part_id or e.tbl_id or e.db_id)] = e
        return list(out.values())

    def roots(self, conn: Connection) -> dict[str, tuple[str, str | None]]:
        """Keys of the warehouse and the catalogs' locations: {key: (what it is, catalog)}."""
        out: dict[str, tuple[str, str | None]] = {self.warehouse_key: ("the warehouse", S.DEFAULT_CATALOG)}
        for name, loc in conn.execute(select(S.catalogs.c.name, S.catalogs.c.location_uri)):
            key = location_key(loc) if loc else None
            if key and key not in out:
                out[key] = (f"the location of catalog {name}", name)
        return out

    # --- keeping it -------------------------------------------------------------------------------

    def _insert(self, conn: Connection, obj: Obj, keys: Iterable[str], kind: str | None = None) -> None:
        rows = [{"loc_prefix": k[:_P], "loc_key": k, "kind": kind or obj.kind, "db_id": obj.db_id,
                 "tbl_id": obj.tbl_id, "part_id": obj.part_id} for k in dict.fromkeys(keys)]
        if rows:
            conn.execute(_LO.insert(), rows)

    def _forget(self, conn: Connection, obj: Obj, kind: str | None = None) -> None:
        kind = kind or obj.kind
        if kind == DB:
            conn.execute(delete(_LO).where(_LO.c.db_id == obj.db_id, _LO.c.kind == DB))
        elif kind == PART:
            conn.execute(delete(_LO).where(_LO.c.part_id == obj.part_id))
        else:
            conn.execute(delete(_LO).where(_LO.c.tbl_id == obj.tbl_id, _LO.c.kind == kind))

    def claim(self, conn: Connection, obj: Obj, locations: Sequence[str | None], kind: str | None = None,
              own_keys: Sequence[str] = (), checked: bool = False) -> None:
        """`obj` takes `locations` (its rows replace the ones of that kind it had): checked when a
        caller is named (unless `checked` before), then indexed. `own_keys`: keys that need no row (a
        Hudi base path that is its table's location)."""
        given = [u for u in locations if u]
        keys = [k for k in (location_key(u) for u in given) if k]
        if not checked:
            self.check(conn, obj, given, kind or obj.kind)
        self._forget(conn, obj, kind)
        self._insert(conn, obj, [k for k in keys if k not in own_keys], kind)

    @staticmethod
    def outside_table(table_location: str | None, parts: Sequence[tuple[int, str, str | None]]) -> list[int]:
        """Ids of the partitions whose location is not under the table's (lexically)."""
        if not table_location:
            return [pid for pid, _, loc in parts if loc]
        prefix = table_location.rstrip("/") + "/"
        tkey = location_key(table_location, resolve=False) or ""
        out = []
        for pid, _, loc in parts:
            if not loc:
                continue
            rest = loc[len(prefix):] if loc.startswith(prefix) else None
            if rest is not None and "/../" not in f"/{rest}/":
                continue  # spelled under the table's location, no `..`: under it (the common case, cheap)
            if not (location_key(loc, resolve=False) or "").startswith(tkey):
                out.append(pid)
        return out

    def needs_partition_rows(self, table_location: str | None, parts: Sequence[tuple[int, str, str | None]],
                             check: bool = True, index: bool = True) -> bool:
        """Is there anything to check or index for these partitions? (Most have none: they lie under
        their table's location and authorization is off.)"""
        return bool(parts) and ((check and claimant() is not None)
                                or (index and bool(self.outside_table(table_location, parts))))

    @staticmethod
    def indexed(conn: Connection, part_ids: list[int]) -> bool:
        """Do any of these partitions have rows (a location outside their table's)?"""
        for i in range(0, len(part_ids), BATCH):
            if conn.execute(select(_LO.c.owner_row).where(_LO.c.part_id.in_(part_ids[i:i + BATCH])).limit(1)).first():
                return True
        return False

    def claim_partitions(self, conn: Connection, obj: Obj, table_location: str | None,
                         parts: Sequence[tuple[int, str, str | None]], replace: bool = False,
                         check: bool = True, index: bool = True) -> None:
        """Partitions (part id, name, location) of table `obj` take their locations: those outside
        the table's location get rows; with a caller named, each is checked (those under the table's
        location against the objects inside the table's location only)."""
        if not parts:
            return
        tkey_lex = location_key(table_location, resolve=False) if table_location else None
        outside_ids = set(self.outside_table(table_location, parts))
        inside = [p for p in parts if p[2] and p[0] not in outside_ids]
        outside = [p for p in parts if p[0] in outside_ids]
        who = claimant()
        if who is not None and check:
            if inside and table_location:
                tkeys = {k for k in (location_key(table_location), tkey_lex) if k}
                others = [e for e in self.inside(conn, tkeys) if e.tbl_id != obj.tbl_id]
                roots = self.roots(conn) if others else {}
                for pid, name, loc in inside if others else []:
                    self._check_against(obj_of(obj, pid, name), loc or "", self._candidates(loc), others, roots,
                                        placed=True)
            for pid, name, loc in outside:
                self.check(conn, obj_of(obj, pid, name), [loc or ""], PART)
        if not index:
            return
        if replace:
            ids = [p[0] for p in parts]
            for i in range(0, len(ids), BATCH):
                conn.execute(delete(_LO).where(_LO.c.part_id.in_(ids[i:i + BATCH])))
        rows = [{"loc_prefix": k[:_P], "loc_key": k, "kind": PART, "db_id": obj.db_id, "tbl_id": obj.tbl_id,
                 "part_id": pid} for pid, _, loc in outside for k in [location_key(loc)] if k]
        if rows:
            conn.execute(_LO.insert(), rows)

    def retag(self, conn: Connection, tbl_id: int, db_id: int) -> None:
        """The table moved to another database."""
        conn.execute(_LO.update().where(_LO.c.tbl_id == tbl_id).values(db_id=db_id))

    def reindex_partitions(self, conn: Connection, obj: Obj, table_location: str | None) -> None:
        """The table's location changed: which of its partitions lie outside it changed too."""
        conn.execute(delete(_LO).where(_LO.c.tbl_id == obj.tbl_id, _LO.c.kind == PART))
        p = S.partitions
        parts = [(r.part_id, r.part_name, r.location) for r in conn.execute(select(
            p.c.part_id, p.c.part_name, p.c.location).where(p.c.tbl_id == obj.tbl_id, p.c.location.is_not(None)))]
        if parts:
            saved = claimant()
            set_claimant(None)  # they were checked when they were made
            try:
                self.claim_partitions(conn, obj, table_location, parts)
            finally:
                set_claimant(saved)

    # --- the rules of claims ----------------------------------------------------------------------

    @staticmethod
    def _candidates(uri: str | None) -> list[str]:
        return list(dict.fromkeys(k for k in (location_key(uri), location_key(uri, resolve=False)) if k))

    def check(self, conn: Connection, obj: Obj, locations: Sequence[str], kind: str) -> None:
        """Raise OwnershipConflict when the caller may not use one of `locations` for `obj` (nothing
        to check when authorization names no caller)."""
        if claimant() is None:
            return
        roots = self.roots(conn)
        for uri in locations:
            cands = self._candidates(uri)
            if not cands:
                continue
            entries = self.covering(conn, cands) + self.inside(conn, cands)
            self._check_against(Obj(kind, obj.db_id, obj.label, obj.cat_name, obj.db_name, obj.tbl_id, obj.part_id),
                                uri, cands, entries, roots)

    def _check_against(self, obj: Obj, uri: str, cands: list[str], entries: list[Entry],
                       roots: dict[str, tuple[str, str | None]], placed: bool = False) -> None:
        """`placed`: the location is known to be where it may be (under its table's location)."""
        who = claimant()
        if who is None:
            return
        data = obj.kind in _DATA
        for k in [] if placed else cands:
            for rkey, (what, cat) in roots.items():
                if k == rkey:
                    if obj.kind == DB and obj.db_name == "default" and cat == obj.cat_name:
                        continue
                    self._refuse(obj, uri, f"it is {what}", never=True)
                if rkey.startswith(k):
                    self._refuse(obj, uri, f"it contains {what}", never=True)
            if not who.admin and not any(within(k, r) for r in [*roots, *self.external_keys]):
                self._refuse(obj, uri, "it is outside the warehouse and the external locations (--external-locations)"
                                       "; only an admin may use it")
        related = []  # (entry, relation)
        for e in entries:
            rel = self._relation(cands, e.key)
            if rel is None or self._own(obj, e, rel) or (e.key in roots and rel == "lies inside"):
                continue  # (the default databases' locations are the warehouse and the catalogs')
            related.append((e, rel))
        # the refusal names the same location first, then the nearest around it (a table before the
        # database it is in), then what it would contain
        related.sort(key=lambda r: (_RELATIONS.index(r[1]), -len(r[0].key), r[0].kind == DB))
        for e, rel in related:
            if e.kind == DB and data and rel in ("is", "contains"):
                self._refuse(obj, uri, f"it {rel} the location of {e.label}: a database's location is never "
                                       "a table's or a partition's", never=True)
        for e, rel in related:
            if not (who.admin or who.owns(e.owner, e.owner_type)):
                self._refuse(obj, uri, f"it {rel} the location of {e.described()}; only its owner or an admin "
                                       "may use it")

    @staticmethod
    def _relation(cands: list[str], key: str) -> str | None:
        if key in cands:
            return "is"
        if any(c.startswith(key) for c in cands):
            return "lies inside"
        if any(key.startswith(c) for c in cands):
            return "contains"
        return None

    @staticmethod
    def _own(obj: Obj, e: Entry, rel: str) -> bool:
        """Relations of an object with its own things: itself, its table and siblings, its database
        (around it), its tables (inside it)."""
        if obj.kind in _DATA:
            if obj.tbl_id is not None and e.tbl_id == obj.tbl_id:
                return True
            return e.kind == DB and e.db_id == obj.db_id and rel == "lies inside"
        # a database: itself, and what is of it inside its location
        return e.db_id == obj.db_id and (e.kind == DB or rel == "contains")

    @staticmethod
    def _refuse(obj: Obj, uri: str, why: str, never: bool = False) -> None:
        who = claimant()
        by = f" ({who.label()})" if who is not None and not never else ""
        text = f"Location {uri} of {obj.label} is refused{by}: {why}"
        report("claim", uri, "denied", text)
        raise OwnershipConflict(text)

    # --- what deletions and moves may touch -------------------------------------------------------

    def plan(self, uris: Sequence[str], own_tbl_id: int | None = None, conn: Connection | None = None,
             views: bool = False, real: warehouse.RealPaths | None = None) -> list[Plan]:
        """For each location to delete, empty or move: who covers it, else what inside it to keep.
        `views` (writing a Hudi table's files): the merge-on-read views hive sync makes of table
        `own_tbl_id` (`<t>_ro`, `<t>_rt` in its database, at its location) are its own."""
        if conn is None:
            with self.store.read() as c:
                return self.plan(uris, own_tbl_id, c, views, real)
        its_views = self._views_of(conn, own_tbl_id) if views and own_tbl_id is not None else set()
        plans = [Plan(u, k) for u, k in zip(uris, location_keys(uris, real)) if k]
        if not plans:
            return []
        keys = [p.key for p in plans]
        roots = self.roots(conn)
        common = _common(keys)
        if len(keys) > 16 and common and common not in roots and len(ancestors(common)) > 2:
            # many locations in one directory (a partition drop): what covers it, what lies in it
            above, below = self.covering(conn, [common]), self.inside(conn, [common])
            above += [e for e in below if any(k.startswith(e.key) for k in keys)]
        else:
            above, below = self.covering(conn, keys), self.inside(conn, keys)
        # the one named as covering a location: the nearest, then the oldest object there
        above.sort(key=lambda e: (-len(e.key), e.part_id or e.tbl_id or e.db_id))
        for p in plans:
            for rkey, (what, _) in roots.items():
                if p.key == rkey:
                    p.covered = what
                elif rkey.startswith(p.key):
                    p.keep.append(rkey)
            for e in above:
                if p.covered or not p.key.startswith(e.key) or _own_table(e, own_tbl_id) or \
                        (e.kind == TBL and e.key == p.key and e.tbl_id in its_views):
                    continue
                if e.kind != DB or e.key == p.key:
                    p.covered = e.described()
            p.keep.extend(e.key for e in below
                          if e.key != p.key and e.key.startswith(p.key) and not _own_table(e, own_tbl_id))
        return plans

    @staticmethod
    def _views_of(conn: Connection, tbl_id: int) -> set[int]:
        """Ids of the tables named `<t>_ro` or `<t>_rt` in table `tbl_id`'s database. (With
        authorization on, a table at another's location was claimed by that one's owner or an admin.)"""
        t, v = S.tbl.alias("t"), S.tbl.alias("v")
        return {int(r[0]) for r in conn.execute(select(v.c.tbl_id).select_from(t.join(v, and_(
            v.c.db_id == t.c.db_id, or_(v.c.name == t.c.name + "_ro", v.c.name == t.c.name + "_rt")))).where(
            t.c.tbl_id == tbl_id))}


def _own_table(e: Entry, tbl_id: int | None) -> bool:
    return tbl_id is not None and e.tbl_id == tbl_id


def table_obj(db_id: int, cat: str, db: str, name: str, tbl_id: int) -> Obj:
    """A table as the owner of its location."""
    label = f"table {db}.{name}" if cat == S.DEFAULT_CATALOG else f"table {cat}.{db}.{name}"
    return Obj(TBL, db_id, label, cat, db, tbl_id)


def obj_of(table: Obj, part_id: int, name: str) -> Obj:
    return Obj(PART, table.db_id, f"partition {name} of {table.label}", table.cat_name, table.db_name,
               table.tbl_id, part_id)


def _common(keys: list[str]) -> str:
    """The deepest directory all keys lie in."""
    first, last = min(keys), max(keys)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    common = first[:n]
    common = common[:common.rfind("/") + 1]
    return common if common.endswith("/") else ""


__all__ = ["DB", "HUDI", "PART", "TBL", "Entry", "Obj", "OwnerIndex", "OwnershipConflict", "Plan", "obj_of",
           "table_obj"]
