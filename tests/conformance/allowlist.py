"""The allow-list: every difference the conformance suite accepts between our server and the
reference Hive Metastore 2.3, in one place (mirrored in ``docs/conformance.md``).

Anything not listed here must be equal, field by field. Exceptions are always compared by type
(and TApplicationException by its type code); their messages only where a test asks for it
(``msg=True``), because clients match on a few texts (``Database X is not empty``,
``Invalid method name: '...'``, ``... does not exist``), not on all of them.
"""

from __future__ import annotations

# --------------------------------------------------------------------------- values masked on both sides

#: Struct fields holding wall-clock times (epoch seconds): compared as "set" (non-zero) vs "unset".
TIME_FIELDS = frozenset({
    "createTime",       # Table / Partition / Function / Database: set by the server at create time
    "lastAccessTime",   # the same, when a client passes one or the server stamps one
    "lastAnalyzed",     # ColumnStatisticsDesc: taken from the client or stamped by the server
})

#: Parameters holding wall-clock times: compared as "present" (value masked).
TIME_PARAMETERS = frozenset({
    "transient_lastDdlTime",  # stamped by the server on create/alter when absent
})

#: Strings that name a server's own directories are compared relative to them: the warehouse root
#: (``<WH>``, each server has its own) and the per-side root of external locations the tests pass
#: (``<EXT>``). Applied to every string (locations, messages).
PATH_PREFIXES = ("warehouse root", "external root")

#: Lists of these structs are compared as sets: Hive returns column statistics in no defined order
#: (clients look them up by colName).
UNORDERED_STRUCT_LISTS = frozenset({"ColumnStatisticsObj"})

#: Calls whose list answers Hive does not order (its JDO queries have no ORDER BY): a test may
#: compare their answers as multisets (``unordered_result=True``), and only theirs.
UNORDERED_CALLS = frozenset({
    "get_table_meta", "get_table_objects_by_name",
    "get_partitions_ps", "get_partitions_ps_with_auth", "get_partition_names_ps",
})

# --------------------------------------------------------------------------- fields Hive 2.3 does not have

#: Fields that only Hive 3+/4 IDLs define: the reference (Hive 2.3) never sends them, so when the
#: reference value is unset ours may carry one. Keyed ``Struct.field``.
NEWER_HIVE_FIELDS = frozenset({
    "Database.catalogName",          # Hive 3: catalogs
    "Table.catName",                 # Hive 3
    "Partition.catName",             # Hive 3
    "Function.catName",              # Hive 3
    "TableMeta.catName",             # Hive 3
    "ColumnStatisticsDesc.catName",  # Hive 3
    "Database.createTime",           # Hive 4: databases gained a create time
})

# --------------------------------------------------------------------------- Thrift wire defaults

#: A struct field of a primitive type (bool, byte, i16, i32, i64, double) that the IDL does not mark
#: ``optional`` is always written by Hive's Java code and read by a Java client as 0/false when
#: absent, so "absent" and "0/false" are the same thing to every Java client: both sides' unset
#: non-optional primitives are compared as the Java default (e.g. ``sd.compressed`` in an echoed
#: ``add_partition`` result, ``sd.numBuckets`` of a descriptor the client sent without one).
JAVA_PRIMITIVE_DEFAULTS = True

# --------------------------------------------------------------------------- where the reference itself fails

#: Calls the reference Hive Metastore 2.3 answers with an error, so that there is nothing to compare
#: against. The suite asserts the reference still fails as described and checks our answer against
#: the expected result instead. ``id -> (expected reference error, reason)``.
REFERENCE_GAPS = {
    "like-with-other-keys": (
        "MetaException",
        "Hive 2.3 evaluates LIKE only in its JDO filter path, which can filter on string keys only: a "
        "filter with LIKE and a condition on an int/date key fails there (\"Filtering is supported only "
        "on partition keys of type string\"); ours evaluates the whole filter",
    ),
    "filter-extensions": (
        "MetaException",
        "filter forms Hive 2.3's grammar rejects and ours accepts "
        "(documented in store/hms/partition_filter/parser.py): "
        "NOT, `key IN (...)` without parentheses around the key, DATE '...' literals, `==`, back-quoted "
        "keys",
    ),
    "hive3-calls": (
        "TApplicationException",
        "Hive 3+/4 calls (get_partitions_by_names_req, get_database_req, get_catalogs, ...) do not exist in 2.3 "
        "(\"Invalid method name: '<name>'\"); they are only called on ours and checked against the "
        "answer of the equivalent Hive 2.3 call",
    ),
}

#: Deliberate differences in a few calls' answers, where ours follows Hive 3.1 (the API level we
#: serve) instead of 2.3. ``id -> (Struct.field paths not compared after the call, reason)``; a test
#: opts in per call with ``allow=<id>`` and checks our value itself.
DELIBERATE = {
    "alter-database-hive3": (
        {"Database.description", "Database.locationUri"},
        "alter_database applies a non-blank description / locationUri as Hive 3.1 does (ALTER DATABASE "
        "SET LOCATION, Spark only allows it on Hive 3.x); Hive 2.3 silently keeps the old values",
    ),
}

#: Calls where Hive 2.3 answers in a way we consider a bug; ours answers with the exception the IDL
#: declares for the case (or, for function names, consistently).
#: ``id -> (reference outcome, our outcome, reason)``; the suite checks both outcomes as written.
QUIRKS = {
    "alter-missing-database": (
        "ok", "NoSuchObjectException",
        "alter_database of a database that does not exist: Hive 2.3 silently does nothing; ours raises "
        "the NoSuchObjectException the call declares",
    ),
    "drop-missing-database": (
        "MetaException", "NoSuchObjectException",
        "drop_database of a database that does not exist: Hive 2.3 fails with a NullPointerException "
        "(as MetaException); ours raises the NoSuchObjectException the call declares",
    ),
    "partition-names-missing-table": (
        "TApplicationException", "NoSuchObjectException",
        "get_partition_names of a table that does not exist: Hive 2.3 fails internally "
        "(TApplicationException INTERNAL_ERROR); ours raises the NoSuchObjectException the Hive 3 IDL "
        "declares (field 1, which a Hive 2.3 client reads as its declared MetaException)",
    ),
    "filter-trailing-text": (
        "ok", "MetaException",
        "a partition filter with unparsable text after a complete expression (`s = \"a\" xor i = 1`): "
        "Hive 2.3's parser ignores the rest and filters by the prefix; ours rejects the filter",
    ),
    "function-name-case": (
        "NoSuchObjectException", "ok",
        "a function created with a mixed-case name (`Mixed_F`) by a client that does not lower-case it: "
        "Hive 2.3 stores the name as given but looks names up lower-cased, so it can never be found; "
        "ours lower-cases it at creation, like every other name",
    ),
}

#: Exception messages the suite compares exactly (``msg=True``): clients parse some of them, and
#: the rest come for free. Every other exception is compared by type only.
MESSAGE_CHECKED = (
    "Database <name> already exists",
    "Database <name> is not empty. One or more tables exist.",   # Spark, PyIceberg
    "Can not drop default database",
    "<db>.<table> table not found",                              # get_table
    "Invalid column type: <type>", "Invalid partition column type: <type>",
    "incomplete partition name - missing <key>",                 # *_by_name calls
    "Partition already exists:<db>.<table>.[<values>]",          # rename_partition
    "The following columns have types incompatible with the existing columns in their respective positions :\n<cols>",
    "Invalid method name: '<name>'",                             # Spark's get_tables_by_type fallback
    "... <function> does not exist",                             # Spark's get_function (substring)
)
