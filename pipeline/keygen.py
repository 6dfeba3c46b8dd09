"""Key generators: a record's Hudi record key and partition path, as Spark column expressions.

As Hudi's key generators: one key field gives the value itself (SimpleKeyGenerator); several give
`f1:v1,f2:v2` with `__null__` / `__empty__` for null and empty values (ComplexKeyGenerator), and so
does one field of a table whose keys are field-prefixed (`id:5`: the complex generator with one
field, hudi_format/key_generator.py's `field_prefixed`).
Partition paths join one value per partition field with `/`; hive-style writes `field=value`; a null
or empty value is `__HIVE_DEFAULT_PARTITION__`; url-encoding escapes the values.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
SIMPLE = "org.apache.hudi.keygen.SimpleKeyGenerator"
COMPLEX = "org.apache.hudi.keygen.ComplexKeyGenerator"
NON_PARTITIONED = "org.apache.hudi.keygen.NonpartitionedKeyGenerator"


def key_generator_class(record_key_fields: list[str], partition_fields: list[str]) -> str:
    if not partition_fields:
        return NON_PARTITIONED if len(record_key_fields) == 1 else COMPLEX
    return SIMPLE if len(record_key_fields) == 1 and len(partition_fields) == 1 else COMPLEX


def record_key(fields: list[str], field_prefixed: bool | None = None) -> Column:
    """`field_prefixed`: the table's key format (None: prefixed when there are several fields).
    Null when every key field is null or empty (the writer refuses such records, as Hudi does)."""
    if field_prefixed is None:
        field_prefixed = len(fields) > 1
    if not field_prefixed:
        if len(fields) != 1:
            raise ValueError(f"record keys of several fields {fields} are field-prefixed")
        return F.col(f"`{fields[0]}`").cast("string")
    parts, blank = [], F.lit(True)
    for f in fields:
        v = F.col(f"`{f}`").cast("string")
        blank = blank & (v.isNull() | (v == ""))
        v = F.when(v.isNull(), F.lit("__null__")).when(v == "", F.lit("__empty__")).otherwise(v)
        parts.append(F.concat(F.lit(f + ":"), v))
    return F.when(blank, F.lit(None).cast("string")).otherwise(F.concat_ws(",", *parts))


def partition_path(fields: list[str], hive_style: bool, url_encode: bool) -> Column:
    if not fields:
        return F.lit("")
    parts = []
    for f in fields:
        v = F.col(f"`{f}`").cast("string")
        v = F.when(v.isNull() | (v == ""), F.lit(DEFAULT_PARTITION)).otherwise(
            F.url_encode(v) if url_encode else v)
        parts.append(F.concat(F.lit(f + "="), v) if hive_style else v)
    return F.concat_ws("/", *parts)
