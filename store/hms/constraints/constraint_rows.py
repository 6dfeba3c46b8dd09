"""Hive's rules for new table constraints (ObjectStore.addPrimaryKeys, addForeignKeys, ...), turning
the request structs into rows of `table_constraints`: names normalized or generated, columns
checked against the tables, a foreign key checked against a primary or unique key of the table it
references (same columns, same types)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, select

from store.db import schema as S
from store.errors import InvalidObject, MetaError, NoSuchObject
from store.hms.common import DEFAULT_CATALOG
from store.hms.partitions import TableContexts, TableCtx

PK, FK, UNIQUE, NOT_NULL, DEFAULT, CHECK = range(6)
# the prefix of generated names, per kind (Hive names check constraints "dc_" too)
_PREFIX = {PK: "pk", FK: "fk", UNIQUE: "uk", NOT_NULL: "nn", DEFAULT: "dc", CHECK: "dc"}


def normalize(identifier: str | None) -> str:
    """Hive's normalizeIdentifier: trimmed, lower case."""
    return (identifier or "").strip().lower()


def java_hash(text: str) -> int:
    """Java's String.hashCode (as a signed 32-bit value)."""
    h = 0
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


@dataclass
class RowBuilder:
    """The rows one request adds, built inside its transaction. `new_table`: (db, name) of the table
    being created with these constraints: every constraint must be on it (a foreign key may
    reference another table)."""

    conn: Connection
    contexts: TableContexts
    new_table: tuple[str, str] | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    _tables: dict[tuple[str, str], TableCtx] = field(default_factory=dict)
    _names: dict[int, dict[str, int]] = field(default_factory=dict)  # tbl_id -> name -> kind

    # --- tables, columns, names ---------------------------------------------------------------------

    def table(self, db: str | None, name: str | None, role: str = "Parent", other: bool = False) -> TableCtx:
        """The table a constraint names; `other`: may be another table than the one being created."""
        key = (normalize(db), normalize(name))
        if self.new_table is not None and (not key[1] or key == self.new_table):
            key = self.new_table
        elif self.new_table is not None and not other:
            raise InvalidObject(f"{role} table not found: {key[1]}")
        if key not in self._tables:
            try:
                self._tables[key] = self.contexts.read(self.conn, key[0], key[1])
            except NoSuchObject as exc:
                raise InvalidObject(f"{role} table not found: {key[1]}") from exc
        return self._tables[key]

    @staticmethod
    def column(ctx: TableCtx, name: str | None, role: str = "Parent") -> tuple[str, str]:
        """(name, type) of a column or partition key of the table."""
        wanted = normalize(name)
        for col in list(ctx.cols) + list(ctx.keys):
            if col.name.lower() == wanted:
                return wanted, col.type
        raise InvalidObject(f"{role} column not found: {wanted}")

    def names(self, tbl_id: int) -> dict[str, int]:
        """The constraint names of a table (the table that holds the key), with their kinds."""
        if tbl_id not in self._names:
            c = S.table_constraints
            self._names[tbl_id] = {r.name: r.kind for r in self.conn.execute(
                select(c.c.name, c.c.kind).where(c.c.tbl_id == tbl_id))}
        return self._names[tbl_id]

    def claim(self, ctx: TableCtx, given: str | None, kind: int, first: bool, parts: Sequence[str],
              current: str | None) -> str:
        """The name of a constraint row: the given one (unused on the table, unless by the rows of
        this same key) or, for the first column of an unnamed key, a generated one."""
        names = self.names(ctx.tbl_id)
        if given is None or not given.strip():
            if first or current is None:
                current = self._generate(names, parts, _PREFIX[kind])
                names[current] = kind
            return current
        name = normalize(given)
        if name in names and (name != current or names[name] != kind or kind >= NOT_NULL):
            raise InvalidObject(f"Constraint name already exists: {ctx.db_name}.{ctx.name}.{name}")
        names[name] = kind
        return name

    @staticmethod
    def _generate(names: dict[str, int], parts: Sequence[str], prefix: str) -> str:
        """Hive's generated names: <prefix>_<hash of the parts>_<epoch ms>_<counter>."""
        digest = java_hash("{" + ",".join(parts) + "}") & 0xFFFFFFF
        now = int(time.time() * 1000)
        for counter in range(10):
            name = f"{prefix}_{digest}_{now}_{counter}"
            if name not in names:
                return name
        raise MetaError(f"Error while trying to generate the constraint name for {{{','.join(parts)}}}")

    # --- rows ---------------------------------------------------------------------------------------

    def add_row(self, ctx: TableCtx, name: str, position: int, kind: int, column: str, flags: Any,
                **extra: Any) -> None:
        self.rows.append({
            "tbl_id": ctx.tbl_id, "name": name, "position": position, "kind": kind, "column_name": column,
            "enable_cstr": bool(flags.enable_cstr), "validate_cstr": bool(flags.validate_cstr),
            "rely_cstr": bool(flags.rely_cstr), "child_tbl_id": None, "child_column": None,
            "ref_name": None, "update_rule": None, "delete_rule": None, "value": None, **extra})

    def keys(self, kind: int, items: Sequence[Any], get: Callable[[Any], tuple[Any, Any, Any, Any]]) -> None:
        """Primary keys or unique constraints: get(item) -> (db, table, column, given name)."""
        current: str | None = None
        has_pk: set[int] = set()
        for item in items:
            db, tbl, col, given = get(item)
            ctx = self.table(db, tbl)
            column, _type = self.column(ctx, col)
            seq = item.key_seq if item.key_seq is not None else 1
            if kind == PK:
                self._check_no_primary_key(ctx, has_pk)
            current = self.claim(ctx, given, kind, seq == 1, [ctx.db_name, ctx.name, column, _PREFIX[kind]],
                                 current)
            self.add_row(ctx, current, seq, kind, column, item)

    def _check_no_primary_key(self, ctx: TableCtx, seen: set[int]) -> None:
        if ctx.tbl_id in seen:
            return
        c = S.table_constraints
        if self.conn.execute(select(c.c.constraint_id).where(c.c.tbl_id == ctx.tbl_id, c.c.kind == PK)
                             .limit(1)).first() is not None:
            raise MetaError(f" Primary key already exists for: {DEFAULT_CATALOG}.{ctx.db_name}.{ctx.name}")
        seen.add(ctx.tbl_id)

    def single(self, kind: int, items: Sequence[Any], given_of: Callable[[Any], str | None],
               value_of: Callable[[Any], str | None] | None = None) -> None:
        """Not-null, default and check constraints: one column each."""
        for item in items:
            ctx = self.table(item.table_db, item.table_name)
            column, _type = self.column(ctx, item.column_name)
            name = self.claim(ctx, given_of(item), kind, True, [ctx.db_name, ctx.name, column, _PREFIX[kind]],
                              None)
            self.add_row(ctx, name, 1, kind, column, item, value=value_of(item) if value_of else None)

    def foreign_keys(self, items: Sequence[Any]) -> None:
        """Foreign keys, in groups: a key goes on until the next row with key_seq 1."""
        groups: list[list[Any]] = []
        for item in items:
            if not groups or item.key_seq == 1:
                groups.append([])
            groups[-1].append(item)
        for group in groups:
            self._foreign_key(group)

    def _foreign_key(self, group: Sequence[Any]) -> None:
        child = self.table(group[0].fktable_db, group[0].fktable_name, "Child")
        parent = self.table(group[0].pktable_db, group[0].pktable_name, "Parent", other=True)
        valid = self._key_signatures(parent)
        if not valid:
            raise MetaError("Trying to define foreign key but there are no primary keys or unique keys "
                            "for referenced table")
        current: str | None = None
        own, referenced, rows = [], [], []
        for item in group:
            fk_col, fk_type = self.column(child, item.fkcolumn_name, "Child")
            pk_col, _ = self.column(parent, item.pkcolumn_name, "Parent")
            seq = item.key_seq if item.key_seq is not None else 1
            current = self.claim(parent, item.fk_name, FK, seq == 1,
                                 [child.db_name, child.name, parent.db_name, parent.name, pk_col, fk_col, "fk"],
                                 current)
            own.append(f"{fk_col}:{fk_type};")
            referenced.append(f"{pk_col}:{fk_type};")
            rows.append((current, seq, pk_col, fk_col, item))
        signature = "".join(referenced)
        if signature not in valid:
            raise MetaError(f"Foreign key references {signature} but no corresponding primary key or unique key "
                            f"exists. Possible keys: [{', '.join(sorted(valid))}]")
        if child.tbl_id == parent.tbl_id and "".join(own) == signature:
            raise MetaError(f"Cannot be both foreign key and primary/unique key on same table: {signature}")
        for name, seq, pk_col, fk_col, item in rows:
            self.add_row(parent, name, seq, FK, pk_col, item, child_tbl_id=child.tbl_id, child_column=fk_col,
                         ref_name=valid[signature], update_rule=item.update_rule, delete_rule=item.delete_rule)

    def _key_signatures(self, ctx: TableCtx) -> dict[str, str]:
        """{"col:type;col:type;": key name} of the table's primary and unique keys (stored or in
        this request), the types being the table's column types."""
        c = S.table_constraints
        members: dict[str, list[tuple[int, str]]] = {}
        stored = self.conn.execute(select(c.c.name, c.c.position, c.c.column_name).where(
            c.c.tbl_id == ctx.tbl_id, c.c.kind.in_([PK, UNIQUE])))
        for name, position, column in stored:
            members.setdefault(name, []).append((position, column))
        for row in self.rows:
            if row["tbl_id"] == ctx.tbl_id and row["kind"] in (PK, UNIQUE):
                members.setdefault(row["name"], []).append((row["position"], row["column_name"]))
        types = {col.name.lower(): col.type for col in list(ctx.cols) + list(ctx.keys)}
        out = {}
        for name, cols in members.items():
            if all(col in types for _, col in cols):
                out["".join(f"{col}:{types[col]};" for _, col in sorted(cols))] = name
        return out
