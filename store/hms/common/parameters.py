"""Parameters of databases, tables and partitions: rows of `db_params`, `tbl_params` and
`partition_params` (owner id, key, value)."""

from __future__ import annotations

from sqlalchemy import Connection, Table, delete, select


def read_params(conn: Connection, table: Table, key_col: str, ids: list[int]) -> dict[int, dict[str, str]]:
    """{owner id: parameters} for `ids` (every id present); NULL values read as ""."""
    out: dict[int, dict[str, str]] = {i: {} for i in ids}
    if ids:
        col = table.c[key_col]
        for r in conn.execute(select(col, table.c.param_key, table.c.param_value).where(col.in_(ids))):
            out[r[0]][r[1]] = r[2] if r[2] is not None else ""
    return out


def write_params(conn: Connection, table: Table, key_col: str, owner_id: int, params: dict[str, str] | None,
                 replace: bool = True) -> None:
    """Store the owner's parameters; `replace`: delete the ones it had first."""
    if replace:
        conn.execute(delete(table).where(table.c[key_col] == owner_id))
    if params:
        conn.execute(table.insert(), [
            {key_col: owner_id, "param_key": k, "param_value": v} for k, v in params.items()
        ])
