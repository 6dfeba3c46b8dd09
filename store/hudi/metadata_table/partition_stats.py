"""The metadata table's `partition_stats` partition (hudi_format/metadata_partition_stats.py) written
from the server's per-partition column aggregates (`partition_column_stats`, over each partition's
latest file slices: store/hudi/column_stats), never from footers.

* on for partitioned tables (copy-on-write and merge-on-read) of version 8 and 9 whose
  `column_stats` partition is written, unless the table's config says
  `hoodie.metadata.index.partition.stats.enable=false` (`partition_stats_enabled`; Hudi 1.2 turns
  it on with `column_stats` from version 8);
* Hudi's reader takes the partitions this index names as the only ones a filter on an indexed
  column can match, so a column is indexed only when every live partition has usable bounds for it
  (statistics of every latest slice's base file and log files, bounds that decode; a slice's
  bounds are their union and its counts their sums, as Hudi 1.2 computes them): a column one
  partition lacks gets no records at all (the reader then never prunes by it);
* initialized (`bootstrap`) at `INIT_INSTANT` from every live partition's aggregates, the columns
  it indexes then written to `COLUMNS` (read at each step: the server's processes share the
  mirror's work); listed in `hoodie.table.metadata.partitions` once initialized; initialized again
  the same way when an instant leaves a partition without usable bounds of an indexed column (a
  column that gets them everywhere later stays unindexed until then);
* per completed instant (`files_for`, in the `files` partition's deltacommit): a log file with the
  records of the partitions whose latest files it changed (a write; a rollback or restore, which
  can bring older files back), recomputed from the rows, and a delete block of the keys of those
  partitions left without files; a clean writes nothing (the bounds it leaves stay true). Compacted
  as `column_stats`.

`totalSize` and `totalUncompressedSize` are the sums of the column's bytes in the partition's latest
base files, slices with log files included (log files add 0; 0 when a base file has no sizes), as
Hudi sums them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal

from sqlalchemy import select

from hudi_format import metadata_column_stats as C
from hudi_format import metadata_partition_stats as P
from hudi_format.config_keys import COLUMN_STATS_COLUMN_LIST, PARTITION_STATS_ENABLE, default_of
from hudi_format.instant import COMPLETED, INFLIGHT, REQUESTED, format_instant
from hudi_format.layout import PARTITION_METAFILE
from hudi_format.metadata_table import METADATA_FOLDER, SCHEMA_JSON
from hudi_format.metadata_table_layout import CompletedDeltacommits, MetadataTableLayout
from hudi_format.storage import TableStorage
from hudi_format.table_config import META_COLUMNS
from store.db import schema as S
from store.db.database import Store
from store.hudi.column_stats import latest_column_sizes
from store.hudi.metadata_table.column_stats import (
    Written,
    bound_value,
    column_stats_enabled,
    compacted_group,
    remove_partition,
)
from store.hudi.tables import HudiTableRef

DIR = f"{METADATA_FOLDER}/{P.PARTITION_STATS}"
COLUMNS = f"{METADATA_FOLDER}/.hoodie/.aux/partition_stats_columns.json"  # the mirror's own
_CHUNK = 500


def partition_stats_enabled(ref: HudiTableRef) -> bool:
    """Written for this table: partitioned, version 8 or 9 (either table type), `column_stats`
    written, and not turned off in its config."""
    value = str(ref.config.properties.get(PARTITION_STATS_ENABLE, default_of(PARTITION_STATS_ENABLE)))
    return ref.config.table_version in (8, 9) and \
        bool(ref.config.partition_fields) and column_stats_enabled(ref) and value.strip().lower() != "false"


class PartitionStatsPartition:
    """Its state is on storage (`COLUMNS`: the columns it indexes, written once it is initialized),
    read at each step: the server's processes share the mirror's work."""

    def __init__(self, store: Store, clock_ms: Callable[[], int], compact_after: int):
        self.store = store
        self.clock_ms = clock_ms
        self.compact_after = compact_after

    def columns(self, st: TableStorage) -> dict[str, str] | None:
        """The columns the partition indexes (lower case -> as the statistics rows spell them);
        None when it is not initialized."""
        data = st.read(COLUMNS)
        if data is None:
            return None
        try:
            return dict(json.loads(data)["columns"])
        except (ValueError, KeyError, TypeError):
            return None

    def ready(self, st: TableStorage, lay: MetadataTableLayout) -> bool:
        return self.columns(st) is not None

    def forget(self) -> None:
        pass  # nothing is kept in memory

    # --- rows -----------------------------------------------------------------------------------

    def _indexed_types(self, conn, ref: HudiTableRef) -> dict[str, str]:
        """{column (lower case): Hive type} of the columns `column_stats` indexes (its index definitions')."""
        sc, t = S.schema, S.tbl
        version = select(t.c.schema_version).where(t.c.tbl_id == ref.tbl_id).scalar_subquery()
        listed = {c.strip().lower() for c in (ref.config.properties.get(COLUMN_STATS_COLUMN_LIST) or "").split(",")
                  if c.strip()}
        iv = C.index_version(ref.config.table_version)
        out = {}
        for r in conn.execute(select(sc.c.name, sc.c.type).where(sc.c.tbl_id == ref.tbl_id, sc.c.version == version)):
            name = r.name.lower()
            if name not in META_COLUMNS and C.column_type(r.type, iv) and (not listed or name in listed):
                out[name] = r.type
        return out

    def _aggregates(self, ref: HudiTableRef, partitions: list[str] | None
                    ) -> tuple[set[str], dict[str, dict[str, P.PartitionStatsRecord | None]], dict[str, str]]:
        """(the live partitions among `partitions` (None: all), partition -> column (lower case) ->
        its record or None when unusable, the indexed columns' types)."""
        pcs, ss = S.partition_column_stats, S.snapshot_stats
        iv = C.index_version(ref.config.table_version)
        live: set[str] = set()
        out: dict[str, dict[str, P.PartitionStatsRecord | None]] = {}
        with self.store.read() as conn:
            types = self._indexed_types(conn, ref)
            chunks = [None] if partitions is None else [partitions[i:i + _CHUNK]
                                                       for i in range(0, len(partitions), _CHUNK)]
            for chunk in chunks:
                lq = select(ss.c.partition_path).where(ss.c.tbl_id == ref.tbl_id)
                q = select(pcs.c.partition_path, pcs.c.column_name, pcs.c.min_key, pcs.c.max_key, pcs.c.null_count,
                           pcs.c.value_count, pcs.c.files_without_stats).where(pcs.c.tbl_id == ref.tbl_id)
                if chunk is not None:
                    lq = lq.where(ss.c.partition_path.in_(chunk))
                    q = q.where(pcs.c.partition_path.in_(chunk))
                live.update(r.partition_path or "" for r in conn.execute(lq))
                for r in conn.execute(q):
                    hive_type = types.get(r.column_name.lower())
                    if hive_type is not None:
                        out.setdefault(r.partition_path or "", {})[r.column_name.lower()] = \
                            _record(r, hive_type, iv)
            sizes = latest_column_sizes(conn, ref.tbl_id, sorted(out))
        for p, per in out.items():
            for c, rec in per.items():
                if rec is not None and (p, c) in sizes:
                    per[c] = dataclasses.replace(rec, total_size=sizes[(p, c)][0],
                                                 total_uncompressed_size=sizes[(p, c)][1])
        return live, out, types

    # --- bootstrap ------------------------------------------------------------------------------

    def bootstrap(self, st: TableStorage, ref: HudiTableRef, lay: MetadataTableLayout) -> None:
        """Initialize the partition from the server's rows (replacing whatever is there)."""
        self.remove(st, lay)
        live, aggs, types = self._aggregates(ref, None)
        columns = {c for c in types if all(aggs.get(p, {}).get(c) is not None for p in live)}
        records = [r for p in live for c in columns if (r := aggs[p][c]) is not None]
        init = P.INIT_INSTANT
        for state in (REQUESTED, INFLIGHT):
            st.put(lay.deltacommit_file(init, state), b"")
        st.put(f"{DIR}/{PARTITION_METAFILE}", f"#partition metadata\ncommitTime={init}\npartitionDepth=1\n".encode())
        cells = P.cells(records)
        if cells:
            name, data = P.base_file_name(0, init), P.base_file(cells, now_ms=self.clock_ms())
            stat = P.deltacommit_stat(0, f"{P.PARTITION_STATS}/{name}", len(data), len(cells), "null", None)
        else:
            name, data = P.log_file_name(0, init, 1), P.delete_block(init, [], with_schema=False)
            stat = P.deltacommit_stat(0, f"{P.PARTITION_STATS}/{name}", len(data), 0, init, 1)
        st.put(f"{DIR}/{name}", data)
        meta = {"partitionToWriteStats": {P.PARTITION_STATS: [stat]}, "compacted": False,
                "extraMetadata": {"schema": SCHEMA_JSON}, "operationType": "BULK_INSERT_PREPPED"}
        st.put(lay.deltacommit_file(init, COMPLETED, max(format_instant(self.clock_ms()), init)),
               lay.for_storage(json.dumps(meta, indent=2).encode()))
        st.put(COLUMNS, json.dumps({"columns": {c: _spelled(aggs, c) for c in sorted(columns)}}).encode())

    def remove(self, st: TableStorage, lay: MetadataTableLayout) -> None:
        st.delete(COLUMNS)
        remove_partition(st, lay, P.INIT_INSTANT, DIR)

    # --- per instant ----------------------------------------------------------------------------

    def files_for(self, st: TableStorage, ref: HudiTableRef, lay: MetadataTableLayout, done: CompletedDeltacommits,
                  ts: str, action: str, added: Mapping[str, Mapping[str, int]],
                  deleted: Mapping[str, Iterable[str]]) -> list[Written]:
        """The files instant `ts` writes into the partition (not yet put)."""
        columns = self.columns(st)
        if columns is None or action == "clean":
            return []
        touched = sorted({p for p, names in added.items() if names} | {p for p, names in deleted.items() if names})
        if not touched:
            return []
        live, aggs, _types = self._aggregates(ref, touched)
        if any(aggs.get(p, {}).get(c) is None for c in columns for p in live):
            # a column a partition has no usable bounds for leaves every partition: written again
            # from the rows (its own deltacommit; readers find it empty meanwhile and prune nothing)
            self.bootstrap(st, ref, lay)
            return []
        records = [r for p in sorted(live) for c in sorted(columns) if (r := aggs[p][c]) is not None]
        gone = [P.record_key(columns[c], p) for p in touched if p not in live for c in sorted(columns)]
        cells = P.cells(records)
        if not cells and not gone:
            return []
        listing = {n: p for n in st.listing(DIR) if (p := P.parse_name(n))}
        base = next((b for b in sorted({b for g, kind, b, _ in listing.values() if kind == "base"}, reverse=True)
                     if b == P.INIT_INSTANT or b in done), P.INIT_INSTANT)
        logs = sorted((b, n) for n, (g, kind, b, v) in listing.items()
                      if kind == "log" and lay.in_slice(b, base, done.completion(b)))
        if len(logs) >= self.compact_after and ts > base:
            return [compacted_group(P, P.PARTITION_STATS, st, lay, done, 0, ts, base, [n for _, n in logs], cells,
                                    gone, listing, self.clock_ms())]
        name = P.log_file_name(0, ts, 1)
        data = P.log_file_bytes(ts, cells, gone, now_ms=self.clock_ms())
        return [(f"{P.PARTITION_STATS}/{name}", data,
                 P.deltacommit_stat(0, f"{P.PARTITION_STATS}/{name}", len(data), len(cells), base, 1))]


def _spelled(aggs: Mapping[str, Mapping[str, P.PartitionStatsRecord | None]], column: str) -> str:
    """A column as the statistics rows spell it (its lower-case name when no row names it)."""
    for per in aggs.values():
        r = per.get(column)
        if r is not None:
            return r.column
    return column


def _record(r, hive_type: str, index_version: int) -> P.PartitionStatsRecord | None:
    """A partition's record of a column from its aggregate row; None when unusable (latest slices
    without statistics, unknown counts, bounds that do not decode)."""
    ct = C.column_type(hive_type, index_version)
    if ct is None or r.files_without_stats or r.null_count is None or r.value_count is None:
        return None
    if r.min_key is None and r.max_key is None and r.null_count == r.value_count:
        lo = hi = None  # every value null
    else:
        ok_lo, lo = bound_value(hive_type, r.min_key, False)
        ok_hi, hi = bound_value(hive_type, r.max_key, True)
        if not (ok_lo and ok_hi):
            return None
        if ct.wrapper in ("DecimalWrapper", "BytesWrapper"):
            lo, hi = Decimal(lo), Decimal(hi)  # type: ignore[arg-type]
    return P.PartitionStatsRecord(r.partition_path or "", r.column_name, ct.wrapper, lo, hi, int(r.null_count),
                                  int(r.value_count), value_type=ct.value_type, type_info=ct.type_info)
