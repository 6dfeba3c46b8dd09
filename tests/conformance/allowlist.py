"""The allow-list: every difference the conformance suite accepts between our server and the
reference Hive Metastores 2.3 and 4.x, in one place (mirrored in ``docs/conformance.md``).

Entries apply to both references unless a per-version section below (``REFERENCE_SUBSTITUTES``,
``CLOSED_GAPS``, ``QUIRKS_BY_VERSION``) says otherwise for one of them. The rule where the two
references differ: ours answers as Hive 4.x while staying acceptable to a Hive 2.3 client.

Anything not listed here must be equal, field by field. Exceptions are always compared by type
(and TApplicationException by its type code); their messages only where a test asks for it
(``msg=True``), because clients match on a few texts (``Database X is not empty``,
``Invalid method name: '...'``, ``... does not exist``), not on all of them.
"""

from __future__ import annotations

from typing import NamedTuple

# --------------------------------------------------------------------------- values masked on both sides

#: Struct fields holding wall-clock times (epoch seconds): compared as "set" (non-zero) vs "unset".
TIME_FIELDS = frozenset({
    "createTime",       # Table / Partition / Function / Database: set by the server at create time
    "lastAccessTime",   # the same, when a client passes one or the server stamps one
    "lastAnalyzed",     # ColumnStatisticsDesc: taken from the client or stamped by the server
    "grantTime",        # RolePrincipalGrant: stamped by the server at grant_role
})

#: Surrogate keys, which each server numbers itself: compared as "set" (positive) vs "unset".
SURROGATE_IDS = frozenset({
    "Table.id",  # Hive 4: TBLS.TBL_ID
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
#: reference value is what an answer without the field reads as (unset, or the IDL default the
#: bindings fill in) ours may carry one. ``Struct.field -> that value``.
NEWER_HIVE_FIELDS = {
    "Database.catalogName": None,          # Hive 3: catalogs
    "Table.catName": None,                 # Hive 3
    "Partition.catName": None,             # Hive 3
    "Function.catName": None,              # Hive 3
    "TableMeta.catName": None,             # Hive 3
    "ColumnStatisticsDesc.catName": None,  # Hive 3
    "Database.createTime": None,           # Hive 4: databases gained a create time
    "Database.type": None,                 # Hive 4: NATIVE or REMOTE
    "Table.id": None,                      # Hive 4: TBLS.TBL_ID
    "Table.writeId": -1,                   # Hive 3: 0 for a table that is not transactional
    "ColumnStatistics.engine": None,       # Hive 4: the engine the statistics are for
}

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
        "filter forms the references' grammars reject and ours accepts (documented in "
        "store/hms/partition_filter/parser.py): "
        "NOT, `key IN (...)` without parentheses around the key, NOT LIKE",
    ),
    "filter-extensions-hive23": (
        "MetaException",
        "filter forms Hive 2.3's grammar rejects and ours (and Hive 4) accept: DATE '...' literals, `==`, "
        "back-quoted keys",
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
    "rename-outside-boundary": (
        {"StorageDescriptor.location"},
        "renaming a MANAGED partition whose directory is outside the warehouse (and was not made by the "
        "server): Hive moves the directory into the table's; ours leaves it and its location as they are "
        "(docs/security.md, Storage boundaries)",
    ),
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
        "TApplicationException", "ok",
        "get_partition_names of a table that does not exist: Hive 2.3 fails internally "
        "(TApplicationException INTERNAL_ERROR); ours answers [] as Hive 4 does",
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
    "Can not drop default database in catalog hive",             # Hive 4 (2.3: without " in catalog hive")
    "<catalog>.<db>.<table> table not found",                    # get_table; Hive 4 (2.3: without the catalog)
    "Invalid column type: <type>", "Invalid partition column type: <type>",
    "incomplete partition name - missing <key>",                 # *_by_name calls
    "Partition already exists:<db>.<table>.[<values>]",          # rename_partition
    "The following columns have types incompatible with the existing columns in their respective positions :\n<cols>",
    "Invalid method name: '<name>'",                             # Spark's get_tables_by_type fallback
    "... <function> does not exist",                             # Spark's get_function (substring)
    "No catalog <name>", "Catalog <name> already exists",        # Hive 4's catalog calls
    "You cannot change a catalog's name", "Can not drop hive catalog",
    "There are non-default databases in the catalog <name> so it cannot be dropped.",
    "There are still objects in the default database for catalog <name>",
)


# --------------------------------------------------------------------------- per reference version

#: Calls a reference no longer serves, which Hive 2.3 clients (Spark's built-in client among them)
#: still send: Hive 4 removed ``get_table`` and ``get_table_objects_by_name`` ("Invalid method name";
#: its own client sends the ``*_req`` forms). Ours keeps serving them for 2.3 clients; on such a
#: reference the suite sends the request form instead and compares that answer with ours to the old
#: call (``compare.RequestFormClient``). ``version -> {method: reason}``.
REFERENCE_SUBSTITUTES = {
    "4": {
        "get_table": "removed in Hive 4 (HIVE-26537); compared with get_table_req(GetTableRequest).table",
        "get_table_objects_by_name": "removed in Hive 4; compared with get_table_objects_by_name_req(...).tables",
    },
}

#: ``REFERENCE_GAPS`` that a reference version does not have (it answers, so the suite compares):
#: ``version -> {gap id: reason}``.
CLOSED_GAPS = {
    "4": {
        "hive3-calls": "Hive 4 serves the Hive 3+/4 calls: compared directly",
        "like-with-other-keys": "Hive 4 evaluates LIKE next to conditions on other keys",
        "filter-extensions-hive23": "Hive 4's grammar has DATE literals, == and back-quoted keys",
    },
}

#: ``QUIRKS`` as a reference version answers them: ``version -> {quirk id: (reference outcome, our
#: outcome, reason)}``; a reference outcome of None means this reference answers as ours does (the
#: suite compares the answers).
QUIRKS_BY_VERSION: dict[str, dict[str, tuple]] = {
    "4": {
        "alter-missing-database": (None, "NoSuchObjectException", "Hive 4 raises NoSuchObjectException too"),
        "drop-missing-database": (None, "NoSuchObjectException", "Hive 4 raises NoSuchObjectException too"),
        "function-name-case": (None, "ok", "Hive 4 finds the function too"),
        "partition-names-missing-table": (None, "ok", "Hive 4 answers [] too"),
    },
}

#: Calls a reference version answers in no defined order that the other orders (compared as
#: multisets for that version): ``version -> {method: reason}``.
UNORDERED_BY_VERSION = {
    "4": {
        "get_tables": "Hive 4 lists tables in creation order, Hive 2.3 (and ours) by name; no client relies "
                      "on either",
        "get_partition_names_ps_req": "the request form of get_partition_names_ps: Hive's JDO query has no "
                                      "ORDER BY, so its order follows the backend's rows (CI saw y before x on "
                                      "MySQL)",
        "get_partitions_ps_with_auth_req": "the request form of get_partitions_ps_with_auth: no ORDER BY either",
    },
}


class Difference(NamedTuple):
    """A difference between our server and one reference version, matched against the text of a
    mismatch (``"<method><args>\\n<problem>"``, ``pattern`` a regular expression searched in it).

    ``kind``: "accepted" (an allowed difference: a reference quirk, or where ours deliberately
    answers otherwise) or "server-change" (ours must change to answer as that reference; the tests
    listed in ``tests`` are ``xfail(strict=True)`` for that reference until it does, and fail if
    the difference stops showing up there)."""

    kind: str
    tests: tuple[str, ...]
    methods: tuple[str, ...]  # empty: any call
    pattern: str
    reason: str


_FILTER_CALLS = ("get_partitions_by_filter", "get_num_partitions_by_filter")

#: ``version -> {id: Difference}``: what the suite knows about our server against that reference
#: beyond the entries above. Against Hive 2.3 these are where ours answers as Hive 4 (the rule);
#: against Hive 4, where ours keeps Hive 2.3's answer for a 2.3 client's sake, or where Hive 4 fails.
VERSION_DIFFERENCES: dict[str, dict[str, Difference]] = {
    "2.3": {
        "database-owner": Difference(
            "accepted", ("test_databases", "test_hive3_calls_on_ours_only"), ("get_database", "get_database_req"),
            r"\$\.ownerName: reference=None ours='[^']+'",
            "a database created without an owner: ours gives it the calling user (set_ugi's, else the user "
            "the server runs as), as Hive 4 does; Hive 2.3 leaves it unset"),
        "names-special-characters": Difference(
            "accepted", ("test_databases", "test_tables_create_get"), (),
            r"[nN]ame='(cf_)?(bad-name|with space|dot\.ted|a/b)(_[0-9a-f]+)?'.*outcome differs\n"
            r"    reference: (InvalidObjectException|NoSuchObjectException).*\n    ours:      ok",
            "database and table names with '-', ' ', '.', '/' (any printable ASCII character but '\\'): ours "
            "takes them as Hive 4 does (metastore.support.special.characters.tablename); Hive 2.3 refuses them"),
        "not-found-messages-name-catalog": Difference(
            "accepted", ("test_databases", "test_tables_create_get"), ("get_table", "drop_database"),
            r"message differs\n    reference: '(\S+ table not found|Can not drop default database)'\n"
            r"    ours:      '(hive\.\S+ table not found|Can not drop default database in catalog hive)'",
            "messages name the catalog as Hive 4's do ('hive.<db>.<table> table not found', 'Can not drop "
            "default database in catalog hive'); Hive 2.3's do not (clients match the exception types)"),
        "quick-stats-given-at-create": Difference(
            "accepted", ("test_quick_stats",), ("get_table",), r"\.parameters\.(numFiles|totalSize): reference='9+' ",
            "create_table on a directory holding data with numFiles and totalSize given (not "
            "numFilesErasureCoded): ours counts the files as Hive 4 does; Hive 2.3 keeps the given values"),
        "external-lower-case": Difference(
            "accepted", ("test_tables_create_get",), ("get_table",),
            r"\$\.tableType: reference='MANAGED_TABLE' ours='EXTERNAL_TABLE'",
            "EXTERNAL_TABLE with parameter EXTERNAL=true (lower case) stays external in ours and Hive 4; Hive 2.3 "
            "takes only EXTERNAL=TRUE and makes it managed"),
        "stats-accurate-after-drop-column": Difference(
            "accepted", ("test_statistics",), ("get_table",),
            r"COLUMN_STATS_ACCURATE: reference='\{\}' ours='\{\"COLUMN_STATS\"",
            "alter_table dropping a column with statistics: ours keeps COLUMN_STATS_ACCURATE for the other "
            "columns as Hive 4 does; Hive 2.3 resets it to {}"),
        "partitions-of-missing-table": Difference(
            "accepted", ("test_tables_drop", "test_partitions_read"), ("get_partitions", "get_partitions_with_auth"),
            r"outcome differs\n    reference: (NoSuchObjectException.*\n    ours:      ok \[\]|ok \[\]\n"
            r"    ours:      NoSuchObjectException)",
            "a table that does not exist: ours answers [] to get_partitions and NoSuchObjectException to "
            "get_partitions_with_auth as Hive 4 does; Hive 2.3 the other way round"),
        "max-parts-zero": Difference(
            "accepted", ("test_partitions_read",),
            ("get_partitions_with_auth", "get_partition_names", "get_partitions_ps", "get_partitions_ps_with_auth"),
            r", 0(, '[^']*', \[[^]]*\])?\)\n\$: length \d+ != 0",
            "max_parts = 0: ours answers no partitions in every listing, as Hive 4 does; Hive 2.3 answers all of "
            "them in get_partitions_with_auth, get_partition_names and for an all-empty specification"),
        "ps-empty-values": Difference(
            "accepted", ("test_partitions_read",), ("get_partitions_ps", "get_partitions_ps_with_auth"),
            r", \[\], .*outcome differs\n    reference: MetaException: Invalid partition key.*\n    ours:      ok",
            "get_partitions_ps(_with_auth) with an empty value list: ours lists the partitions as Hive 4 does; "
            "Hive 2.3 raises MetaException"),
        "ps-max-parts": Difference(
            "accepted", ("test_partitions_read",), ("get_partitions_ps", "get_partitions_ps_with_auth"),
            r"\['', ''\], 1.*\n\$: reference=5 ours=1",
            "get_partitions_ps(_with_auth) with all values empty: ours keeps to max_parts as Hive 4 does; Hive 2.3 "
            "answers every partition"),
        "filter-dates-as-text": Difference(
            "accepted", ("test_partition_filters",), _FILTER_CALLS,
            r"(d = '2024-1-1'|d = \" 2024-01-01\"|d = \"2024-01-01 10:00:00\"|\(d\) in \(\"2024-01-01\", "
            r"\"2024-1-3\"\)|d = \"20240101\"|d = \"2024-02-30\")",
            "date keys compared with a string: ours matches the text as Hive 4 does (yyyy-mm-dd, what Spark "
            "sends; '2024-1-1' or ' 2024-01-01' match nothing, a string that is no date answers []); Hive 2.3 "
            "reads dates leniently and refuses non-dates (MetaException)"),
        "filter-like-date-keys": Difference(
            "accepted", ("test_partition_filters",), _FILTER_CALLS, r"'d like ",
            "LIKE on a date key: ours answers as Hive 4 does; Hive 2.3 refuses it (MetaException)"),
    },
    "4": {
        "erasure-coded-quick-stat": Difference(
            "accepted", ("test_tables_alter", "test_partitions_alter_rename", "test_quick_stats", "test_statistics",
                         "test_hive4_java_client"),
            (), r"\.parameters\.numFilesErasureCoded: reference='0' ours=None",
            "quick stats: Hive 4 writes numFilesErasureCoded=0 next to numFiles/totalSize; ours does not: Spark "
            "(its built-in Hive 2.3 client) does not know the key and shows it as a table property and among "
            "partition parameters (DESCRIBE EXTENDED, SHOW TBLPROPERTIES), unlike with a Hive 2.3 metastore"),
        "filter-like-sql-patterns": Difference(
            "accepted", ("test_partition_filters",), _FILTER_CALLS, r"(?i)\bs (not )?like ",
            "LIKE on a string key: Hive 4 reads SQL patterns (% and _ wildcards, '.' and '*' literal: "
            "'s like \"a%\"' matches a, a b, abc; 's like \"a.*\"' nothing); ours keeps Hive 2.3's reading ('.*' "
            "any run, '.' any character, the rest literal), because Spark's built-in Hive 2.3 client pushes "
            "startsWith/endsWith/contains as 'us.*', '.*west', '.*s-.*', to which Hive 4 answers no partitions. "
            "The two readings cannot be told apart ('_', '%' and '.' are literal in one and wildcards in the other)"),
        "partitions-by-names-missing-table": Difference(
            "accepted", ("test_partitions_read",), ("get_partitions_by_names",),
            r"reference:? (answered )?TApplicationException\[5\].*"
            r"(\n    ours:      |test expects )NoSuchObjectException",
            "get_partitions_by_names of a missing table: Hive 4 fails internally (TApplicationException "
            "MISSING_RESULT); ours raises the NoSuchObjectException Hive 2.3 raises"),
        "incompatible-columns-message": Difference(
            "accepted", ("test_tables_alter",), ("alter_table",),
            r"incompatible with the existing columns in their respective positions :\\na,b'\n    ours: .*:\\nb'",
            "the message of an incompatible column type change: Hive 4 also names column a, whose type "
            "did not change; ours names the incompatible ones only (as Hive 2.3)"),
        "filter-int-fraction": Difference(
            "accepted", ("test_partition_filters",), _FILTER_CALLS, r"'i = 1\.5'",
            "'i = 1.5' on an int key: Hive 4 truncates the literal and matches i=1; ours rejects the filter "
            "(MetaException), as Hive 2.3 does"),
        "write-id-allocation-errors": Difference(
            "accepted", ("test_write_ids", "test_latest_txnid_in_conflict"), (),
            r"reference: \['TApplicationException', 6\]\n\s+ours:\s+\['(TxnAbortedException|NoSuchTxnException|"
            r"MetaException)'\]",
            "allocate_table_write_ids for an aborted, committed, unknown or read-only transaction, or with "
            "no transaction: Hive 4.0.1 fails internally (IllegalStateException, an empty IN list: "
            "TApplicationException INTERNAL_ERROR); ours answers the exceptions the method declares "
            "(TxnAbortedException, NoSuchTxnException, MetaException), as Hive 3 did"),
        "tables-ext-access-type": Difference(
            "accepted", ("test_hive4_java_client",), ("getTablesExt",), r"\.accessType: reference=0 ours=8",
            "get_tables_ext for a client with processor capabilities: the reference runs without Hive's metadata "
            "transformer and answers the stored access type (none: 0); ours answers read-write (8), what the "
            "transformer answers for tables every client may write (docs/conformance.md)"),
        "refusals-fail-internally": Difference(
            "accepted", ("test_hive4_java_client",),
            ("addCheckConstraint of a taken name (own connection)", "dropConstraint missing (own connection)",
             "drop_partitions_req by expression (own connection)", "old truncate_table missing"),
            r"reference: TApplicationException\[6\]: Internal error processing (add_check_constraint|drop_constraint|"
            r"drop_partitions_req|truncate_table)\n\s+ours:\s+(MetaException: InvalidObjectException: Constraint name "
            r"already exists|NoSuchObjectException: The constraint: nosuch does not exist|MetaException: Dropping "
            r"partitions by serialized expressions is not supported|MetaException: NoSuchObjectException: "
            r"hive\.\S+\.nosuch table not found)",
            "Hive 4.0.1 fails internally (TApplicationException INTERNAL_ERROR) where it throws an exception the "
            "method does not declare (InvalidObjectException for a taken constraint name and a missing "
            "constraint, NoSuchObjectException for truncate_table of a missing table) or has no expression proxy "
            "(UnsupportedOperationException, the standalone metastore); ours answers a declared exception with "
            "Hive's text (the MetaException for expressions names the way out: partition names)"),
        "database-req-without-catalog": Difference(
            "accepted", ("test_hive3_calls_on_ours_only",), ("get_database_req",),
            r"catalogName=None.*reference: NoSuchObjectException: database null\.",
            "get_database_req without catalogName: Hive 4 fails (a NullPointerException reported as "
            "NoSuchObjectException 'database null.<name>'); ours takes the default catalog"),
    },
}


# --------------------------------------------------------------------------- Hive 4's Java client

#: Steps of ``tests/java/Hive4ClientSequence.java`` (Hive 4.0.1's HiveMetaStoreClient, compared with the
#: Hive 4 reference by ``tests/conformance/java_client.py``) whose answers hold lists in no defined
#: order: every list in the answer is compared as a multiset. ``step -> reason``.
_NO_ORDER_BY = "Hive's JDO query has no ORDER BY"
JAVA_CLIENT_UNORDERED = {
    "getTables": "get_tables: Hive 4 lists tables in creation order, ours by name",
    "getTables pattern": "get_tables: creation order in Hive 4",
    "getTables by type": "get_tables_by_type: creation order in Hive 4",
    "getAllTables": "get_all_tables: creation order in Hive 4",
    "getTableMeta": f"get_table_meta: {_NO_ORDER_BY}",
    "getTableObjectsByName": f"get_table_objects_by_name_req: {_NO_ORDER_BY}",
    "listPartitions partial": f"get_partitions_ps: {_NO_ORDER_BY}",
    "listPartitionNames partial": f"get_partition_names_ps: {_NO_ORDER_BY}",
    "listPartitionsWithAuthInfo partial": f"get_partitions_ps_with_auth_req: {_NO_ORDER_BY}",
    "listPartitionsWithAuthInfoRequest": f"get_partitions_ps_with_auth_req: {_NO_ORDER_BY}",
    "getPartitionsByNames": f"get_partitions_by_names_req: {_NO_ORDER_BY}",
    "alter_partitions": f"(answered by get_partitions_by_names_req) {_NO_ORDER_BY}",
    "getPartitionsWithSpecs projection": "get_partitions_with_specs: partitions within a spec in no defined order",
    "listPartitionSpecs": "get_partitions_pspec: partitions within a spec in no defined order",
    "listPartitionValues": f"get_partition_values: {_NO_ORDER_BY}",
    "getAllTableConstraints": f"get_all_table_constraints: {_NO_ORDER_BY}",
    "getFunctions": f"get_functions: {_NO_ORDER_BY}",
    "getAllFunctions (this test's)": f"get_all_functions: {_NO_ORDER_BY}",
    "dropFunction": f"(answered by get_functions) {_NO_ORDER_BY}",
    "list_roles": f"list_roles: {_NO_ORDER_BY}",
    "list_roles after revoke": f"list_roles: {_NO_ORDER_BY}",
    "get_principals_in_role": f"get_principals_in_role: {_NO_ORDER_BY}",
    "get_role_grants_for_principal": f"get_role_grants_for_principal: {_NO_ORDER_BY}",
    "list_privileges": f"list_privileges: {_NO_ORDER_BY}",
    "list_privileges of the role": f"list_privileges: {_NO_ORDER_BY}",
    "get_privilege_set": f"get_privilege_set: {_NO_ORDER_BY}",
    "revoke_privileges": f"(answered by list_privileges) {_NO_ORDER_BY}",
    "showTxns (this test's)": "get_open_txns_info: the test's transactions, picked out of a global list",
    "showLocks (this database's)": f"show_locks: {_NO_ORDER_BY}",
    "showCompactions (this database's)": f"show_compact: {_NO_ORDER_BY}",
    # the old forms, on their own connection
    "old create_table_with_constraints": f"(answered by get_all_table_constraints) {_NO_ORDER_BY}",
    "old get_tables": "get_tables: creation order in Hive 4",
    "old drop_table": "(answered by get_tables) creation order in Hive 4",
    "old get_partitions_ps": f"get_partitions_ps: {_NO_ORDER_BY}",
    "old get_partitions_ps_with_auth": f"get_partitions_ps_with_auth: {_NO_ORDER_BY}",
    "old get_partition_names_ps": f"get_partition_names_ps: {_NO_ORDER_BY}",
    "old get_partitions_by_names": f"get_partitions_by_names: {_NO_ORDER_BY}",
    "old alter_partitions": f"(answered by get_partitions_by_names) {_NO_ORDER_BY}",
    "old alter_partitions_with_environment_context": f"(answered by get_partitions_by_names) {_NO_ORDER_BY}",
    "old drop_partitions_req": f"drop_partitions_req: the dropped partitions, {_NO_ORDER_BY}",
    "old list_roles": f"list_roles: {_NO_ORDER_BY}",
    "old list_privileges": f"list_privileges: {_NO_ORDER_BY}",
    "partitions after set_aggr_stats_for": f"(answered by get_partitions_by_names_req) {_NO_ORDER_BY}",
}

#: Steps compared by their outcome only (success, or the exception's class): ``step -> reason``.
JAVA_CLIENT_OUTCOME_ONLY = {
    "getNextNotification (this database's)": (
        "the Hive 4 reference logs no notification events: Hive's DbNotificationListener is not among the "
        "standalone metastore's jars; ours logs them (the test checks which)"),
    "getNotificationEventsCount (this database's)": "the same: no events in the reference",
}

#: Steps whose exception messages are compared (clients parse them; ``MESSAGE_CHECKED``); the other
#: exceptions are compared by class.
JAVA_CLIENT_MESSAGES = frozenset({
    "createDatabase again", "getTable missing", "getFunction missing", "createTable bad column type",
    "renamePartition onto an existing one", "createCatalog again", "getCatalog missing", "alterCatalog rename",
    "dropCatalog holding a database", "dropCatalog hive", "getConfigValue not hive", "setMetaConf unknown",
    "exchange_partitions no such partition", "exchange_partitions onto an existing one",
    "old create_database again", "old rename_partition onto an existing one",
})


#: Steps calling a method of a feature ours does not have (adapter/server/unsupported.py): ours must answer
#: the refusal naming the feature (MetaException, or TApplicationException INTERNAL_ERROR where the method
#: declares none); what the reference answers is not compared. ``step -> the Thrift method``.
JAVA_CLIENT_REFUSED = {
    "getAllResourcePlans": "get_all_resource_plans",
    "getAllStoredProcedures": "get_all_stored_procedures",
    "getAllDataConnectorNames": "get_dataconnectors",
    "getScheduledQuery": "get_scheduled_query",
    "getReplicationMetrics": "get_replication_metrics",
    "getSerDe": "get_serde",
    "clearFileMetadata": "clear_file_metadata",
    "getAllTokenIdentifiers": "get_all_token_identifiers",
    "getRuntimeStats": "get_runtime_stats",
    "getMaterializedViewsForRewriting": "get_materialized_views_for_rewriting",
    "getProperties": "get_properties",
    "getLatestCommittedCompactionInfo": "get_latest_committed_compaction_info",
    "get_type (Thrift)": "get_type",
    "translate_table_dryrun (Thrift)": "translate_table_dryrun",
}


def quirk(quirk_id: str, version: str) -> tuple:
    """``(reference outcome | None, our outcome, reason)`` of a quirk for a reference version."""
    return QUIRKS_BY_VERSION.get(version, {}).get(quirk_id, QUIRKS[quirk_id])
