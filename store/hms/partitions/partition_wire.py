"""Each partition row's own parts of its Thrift encoding (`w_values`, `w_times`, `w_location`,
`w_params`), kept by every write in the writing transaction, and list answers concatenated from
them by the database (issue 43): Python touches no partition on the way out.

A partition's encoding interleaves its own parts with what the answer shares (store/hms/common/
wire.py `PartitionEncoder`): values, the table's names, times, the descriptor's columns (per
schema version), location, the rest of the descriptor, parameters, catName. The shared parts are
bound per call; a row whose parts are NULL (a descriptor of its own, or written before migration
0025) or of another schema version makes the call fall back to `PartitionQueries.encode`, which
builds it. `HMS_WIRE_CHECK=1` (the test suite sets it) checks every such answer against the built
one, so a write path that forgot its rows shows up in any test that lists after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Label, Select, select
from thrift.protocol.TBinaryProtocol import TBinaryProtocol
from thrift.transport.TTransport import TMemoryBuffer

from store.db import schema as S
from store.db.bulk import update_rows
from store.db.dialect import BATCH, as_text, in_list, json_rows, list_batch, params_of_many
from store.db.driver_cursor import driver_rows
from store.hms.common import EncodedStructs, PartitionEncoder, encode_struct, wire_checking
from store.hms.partitions.partition_names import DEFAULT_PARTITION, split_name
from thrift_idl.hive_metastore.ttypes import Partition

WIRE_COLUMNS = ("w_values", "w_times", "w_location", "w_params")


def checking() -> bool:
    """HMS_WIRE_CHECK=1: every answer the database concatenates is checked against the built one."""
    return wire_checking()


def values_of(name: str, stored: dict[int, str] | None) -> list[str]:
    """A partition's values from its stored name (and its stored key values where the name is
    ambiguous: `__HIVE_DEFAULT_PARTITION__`), as the read path answers them."""
    # stored names are well formed: without a % there is nothing to unescape
    values = [v for _, v in split_name(name)] if "%" in name else [p.partition("=")[2] for p in name.split("/")]
    if stored:
        values = [stored.get(i, v) for i, v in enumerate(values)]
    return values


def wire_parts(values: list[str], create_time: int | None, last_access: int | None, location: str | None,
               params: dict[str, str]) -> tuple[bytes, bytes, bytes, bytes]:
    """(w_values, w_times, w_location, w_params) of a partition without a descriptor of its own
    (its parameters in key order)."""
    _v, vals, times, _own, loc, ps = PartitionEncoder.pieces(values, create_time, last_access, 0, location,
                                                             None, dict(sorted(params.items())))
    return vals, times, loc, ps


def params_json(backend: str) -> Label[Any]:
    """A partition row's parameters as JSON text (`params_json`): a subquery of its row."""
    p, pp = S.partitions, S.partition_params
    return select(as_text(backend, json_rows(backend, pp.c.param_key, pp.c.param_value))).where(
        pp.c.part_id == p.c.part_id).scalar_subquery().label("params_json")


def stored_values(conn: Connection, rows: Sequence[Any]) -> dict[int, dict[int, str]]:
    """`__HIVE_DEFAULT_PARTITION__` in a name stands for an empty value or for that literal value:
    the stored key values of such rows (`part_id`, `part_name`) tell which (the only names that do
    not give the values back)."""
    kv = S.partition_key_val
    stored: dict[int, dict[int, str]] = {}
    ambiguous = [r.part_id for r in rows if DEFAULT_PARTITION in r.part_name]
    for i in range(0, len(ambiguous), BATCH):
        for pid, idx, val in conn.execute(select(kv.c.part_id, kv.c.key_idx, kv.c.part_key_val).where(
                kv.c.part_id.in_(ambiguous[i:i + BATCH]))):
            stored.setdefault(pid, {})[idx] = val
    return stored


def refresh(conn: Connection, part_ids: Sequence[int]) -> None:
    """Recompute the parts of these partitions from their rows (call after writing them, in the
    same transaction); partitions with a descriptor of their own get NULL (built when answered)."""
    ids = list(dict.fromkeys(part_ids))
    if not ids:
        return
    backend = conn.dialect.name
    backend = "mysql" if backend in ("mysql", "mariadb") else backend
    p = S.partitions
    size = list_batch(backend)
    for start in range(0, len(ids), size):
        chunk = ids[start:start + size]
        rows = conn.execute(select(p.c.part_id, p.c.part_name, p.c.create_time, p.c.last_access_time,
                                   p.c.location, p.c.sd_id, params_json(backend)).where(
            in_list(backend, p.c.part_id, chunk))).all()
        stored = stored_values(conn, rows)
        out: list[tuple[Any, ...]] = []
        for r, params in zip(rows, params_of_many(r.params_json for r in rows)):
            if r.sd_id is not None:
                out.append((r.part_id, None, None, None, None))
            else:
                out.append((r.part_id, *wire_parts(values_of(r.part_name, stored.get(r.part_id)), r.create_time,
                                                   r.last_access_time, r.location, params)))
        write(conn, out)


def write(conn: Connection, rows: list[tuple[Any, ...]], also: dict[str, Any] | None = None) -> None:
    """Rows (part_id, w_values, w_times, w_location, w_params) written with a few statements;
    `also`: other columns set to one value in each of these rows by the same statements."""
    update_rows(conn, S.partitions, "part_id", WIRE_COLUMNS, rows, ("int8", "bytea", "bytea", "bytea", "bytea"),
                also)


def refresh_table(conn: Connection, tbl_id: int) -> None:
    """Every partition of a table (its locations moved)."""
    refresh(conn, list(conn.execute(select(S.partitions.c.part_id).where(S.partitions.c.tbl_id == tbl_id)).scalars()))


def assembled(conn: Connection, backend: str, queries: Sequence[Select[Any]], encoder: PartitionEncoder,
              version: int) -> EncodedStructs | None:
    """The answer of `queries` (from `PartitionQueries.select_wire`: each in name order, batches of
    one answer): each row's parts joined with what the answer shares, without building or encoding
    a partition; None when a row cannot be (see `joined`): the caller then builds it."""
    rows: list[Any] = []
    for q in queries:
        rows.extend(wire_rows(conn, backend, q))
    if len(queries) > 1:
        rows.sort(key=lambda r: r[0])
    return joined(rows, encoder, version)


def wire_rows(conn: Connection, backend: str, query: Select[Any]) -> list[Any]:
    """The rows of a `select_wire` query; on PostgreSQL from the driver's cursor in binary form."""
    return driver_rows(conn, query, binary=True) if backend == "postgresql" else list(conn.execute(query).all())


def joined(rows: Sequence[Any], encoder: PartitionEncoder, version: int) -> EncodedStructs | None:
    """Rows of `select_wire` joined with what the answer shares; None when a row cannot be (NULL
    parts, a descriptor of its own, another schema version than `version`)."""
    head, rest = encoder.sd_split(version)
    names, tail = encoder.names, encoder.tail
    parts: list[bytes] = []
    extend = parts.extend
    for _name, sd_id, schema_version, w_values, w_times, w_location, w_params in rows:
        if sd_id is not None or schema_version != version or w_values is None:
            return None
        extend((w_values, names, w_times, head, w_location, rest, w_params, tail))
    return EncodedStructs(len(rows), b"".join(parts))


def check(answer: EncodedStructs, built: Sequence[Partition]) -> None:
    """HMS_WIRE_CHECK: the database's answer decodes to the partitions built from the rows, and is
    Thrift's own encoding of what it decodes to."""
    buf = TMemoryBuffer(answer.data)
    prot = TBinaryProtocol(buf)
    decoded = []
    for _ in range(answer.count):
        part = Partition()
        part.read(prot)
        decoded.append(part)
    if buf.cstringio_buf.read(1):
        raise AssertionError("partition_wire: bytes left after the answer's partitions")
    if decoded != list(built):
        wrong = next(i for i, (a, b) in enumerate(zip(decoded, built)) if a != b) if len(decoded) == len(built) \
            else None
        raise AssertionError(f"partition_wire: stale parts (count {len(decoded)} vs {len(built)}, first "
                             f"difference at {wrong}: {decoded[wrong] if wrong is not None else ''} vs "
                             f"{built[wrong] if wrong is not None else ''})")
    if b"".join(encode_struct(p) for p in decoded) != answer.data:
        raise AssertionError("partition_wire: the answer is not Thrift's own encoding of its partitions")

