"""What the Hive Metastore's concepts share: Hive's rules for names, patterns, column and table
types (`hive_rules`, name patterns matched in linear time by `wildcard_match`), the column widths
every write is checked against (`column_widths`) and locations (`locations`), parameter rows
(`parameters`), storage descriptor and column rows (`descriptors`), the basic statistics Hive keeps
in table and partition parameters (`stats_params`), answers as Thrift bytes (`wire`), and the
metastore's own facts (`MetastoreInfo`).

The door of store/hms/common: other packages import these names from here, never its modules.
`column_widths` and `stats_params` are exported as namespaces (`column_widths.enforce(engine)`,
`stats_params.on_create_table(...)`). Imports nothing else of store/hms.
"""

from store.hms.common import column_widths, stats_params
from store.hms.common.column_widths import check_rows
from store.hms.common.descriptors import (
    SdView,
    build_sd,
    col_tuples,
    columns_of,
    insert_columns,
    insert_sd,
    load_columns,
    named_table,
    same_sd,
    sd_row,
    version_for_columns,
)
from store.hms.common.hive_rules import (
    DDL_TIME,
    DEFAULT_CATALOG,
    MANAGED,
    VIEW,
    column_problem,
    effective_table_type,
    incompatible_columns,
    is_insert_only,
    match_names,
    may_be_insert_only,
    name_pattern,
    purges,
    qualified_db_name,
    split_db_name,
    table_dir_name,
    valid_name,
    valid_object_name,
)
from store.hms.common.locations import check_location
from store.hms.common.metastore_info import MetastoreInfo
from store.hms.common.parameters import read_params, write_params
from store.hms.common.wildcard_match import ANY_ONE, ANY_RUN, Element, sql_like
from store.hms.common.wire import AVAILABLE as ENCODER_AVAILABLE
from store.hms.common.wire import (
    FIELD_HEADER,
    EncodedCache,
    EncodedStrings,
    EncodedStruct,
    EncodedStructs,
    PartitionEncoder,
    PiecesCache,
    encode_struct,
    fastbinary,
    location_field,
    wire_checking,
)

__all__ = [
    "ANY_ONE", "ANY_RUN", "DDL_TIME", "DEFAULT_CATALOG", "ENCODER_AVAILABLE", "FIELD_HEADER", "MANAGED", "VIEW",
    "Element", "EncodedCache", "EncodedStrings", "EncodedStruct", "EncodedStructs", "MetastoreInfo", "PartitionEncoder",
    "PiecesCache", "SdView", "build_sd", "check_location", "check_rows", "col_tuples", "column_problem",
    "column_widths", "columns_of", "effective_table_type", "encode_struct", "fastbinary", "incompatible_columns",
    "location_field", "insert_columns", "insert_sd", "is_insert_only", "load_columns", "match_names",
    "may_be_insert_only",
    "name_pattern", "purges", "qualified_db_name",
    "read_params", "same_sd", "sd_row", "split_db_name", "sql_like", "stats_params", "table_dir_name",
    "valid_name", "valid_object_name", "version_for_columns", "write_params", "wire_checking", "named_table",
]
