"""Column statistics of the base files the pipeline writes (RFC-27): from their Parquet footers
(hudi_format/parquet_stats.py), sent with the commit (complete_instant columnStats)."""

from __future__ import annotations

from hudi_format.parquet_stats import (
    encode,
    footer_stats,
    indexed_columns,
    uncompressed_size,
)

__all__ = ["encode", "footer_stats", "indexed_columns", "uncompressed_size"]
