"""RFC-27 column statistics of a Hudi table's base files, kept with the commits that write them
(`index`), their bounds as order-preserving bytes with range forks (`codec`); docs/column_stats.md.
Data skipping over them is store/hudi/data_skipping."""

from store.hudi.column_stats.codec import (
    FORK_BYTES,
    TEXT_TYPES,
    base_type,
    decode_number,
    encode_float,
    encode_key,
    encode_number,
    is_indexable,
    prefix_successor,
)
from store.hudi.column_stats.index import ColumnBounds, ColumnStats, FileColumnStats, Seen, latest_column_sizes
from store.hudi.column_stats.latest_files import LatestFiles, plain_change

__all__ = ["FORK_BYTES", "TEXT_TYPES", "ColumnBounds", "ColumnStats", "FileColumnStats", "LatestFiles", "Seen",
           "base_type", "decode_number", "encode_float", "encode_key", "encode_number", "is_indexable",
           "latest_column_sizes", "plain_change", "prefix_successor"]
