"""Partition key values (`partition_key_val`): one row per partition and key, the value as text and,
when it is an integer, as a number; filters and partial specifications select on these rows."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, update

from store.db import schema as S

_INT = re.compile(r"^-?\d{1,18}$")


def part_key_num(value: str) -> int | None:
    """The value as a number for integral comparisons (None when it is not an integer)."""
    return int(value) if value and _INT.match(value) else None


KEY_VALUE_COLUMNS = ("part_id", "key_idx", "tbl_id", "part_key_name", "part_key_val", "part_key_num")
KEY_VALUE_PG_TYPES = ("int8", "int4", "int8", "text", "text", "int8")  # for PostgreSQL's binary COPY


def key_value_rows(part_id: int, tbl_id: int, key_names: Sequence[str],
                   values: Sequence[str]) -> list[tuple[Any, ...]]:
    """The rows of a new partition, in KEY_VALUE_COLUMNS order."""
    return [(part_id, i, tbl_id, k, v, part_key_num(v)) for i, (k, v) in enumerate(zip(key_names, values))]


def rename_key_values(conn: Connection, part_id: int, values: Sequence[str]) -> None:
    """Give a renamed partition its new values."""
    kv = S.partition_key_val
    for i, v in enumerate(values):
        conn.execute(update(kv).where(kv.c.part_id == part_id, kv.c.key_idx == i).values(
            part_key_val=v, part_key_num=part_key_num(v)))
