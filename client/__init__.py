"""The Python client of hudi-metastore, at two levels:

* HudiCatalog (client/catalog.py): plain Python values (hudi_format's tables, instants, files and
  file slices; client/values.py) and the client's own errors (client/errors.py). The pipeline and
  the CLI's table commands use only this.
* HudiMetastoreClient (client/hudi_client.py): the Thrift level, every Hive Metastore call and the
  Hudi extension's typed; connection reuse and retries (client/connection.py).
"""

from .catalog import HudiCatalog
from .connection import DATABASE_UNAVAILABLE, database_unavailable  # a server's answer to fail over on
from .convert import (  # the Hudi structs' conversions, which the server's Hudi handler shares
    config_from_thrift,
    config_to_thrift,
    file_from_thrift,
    file_to_thrift,
    instant_to_thrift,
    optional,
    slice_to_thrift,
)
from .errors import (
    AlreadyExists,
    AuthenticationError,
    CommitConflict,
    InvalidObject,
    InvalidOperation,
    MetastoreError,
    NotFound,
    ServerError,
    TransportError,
)
from .gss import AcceptContext, AcceptorCredentials, GssError  # Kerberos' both ends; the server's SASL accepts
from .hudi_client import (
    HudiMetastoreClient,
    column_stats_struct,
    file_group_keys,
    is_idempotent,
    metastore_endpoints,
    slices_of,
    state_name,
)
from .security import AUTH_MODES, Security, decode_token, handshake
from .values import (
    BaseFileStats,
    Column,
    Database,
    FileGroupKeys,
    HiveTable,
    ImportedInstant,
    ImportResult,
    KeyLocations,
    PrunedSlices,
    TableStats,
)

__all__ = [
    # plain values and errors
    "HudiCatalog", "BaseFileStats", "Column", "Database", "FileGroupKeys", "HiveTable", "ImportedInstant",
    "ImportResult", "KeyLocations", "PrunedSlices", "TableStats",
    "AlreadyExists", "AuthenticationError", "CommitConflict", "InvalidObject", "InvalidOperation", "MetastoreError",
    "NotFound", "ServerError", "TransportError",
    # TLS and the log-in
    "AUTH_MODES", "Security", "decode_token", "handshake",
    # Kerberos through the system GSS-API library: the server's acceptor (adapter/security/sasl.py)
    "AcceptContext", "AcceptorCredentials", "GssError",
    # the Thrift level
    "HudiMetastoreClient", "column_stats_struct", "file_group_keys", "is_idempotent", "metastore_endpoints",
    "slices_of", "state_name", "DATABASE_UNAVAILABLE", "database_unavailable",
    # conversions of the Hudi extension's structs (shared with the server's Hudi handler)
    "config_from_thrift", "config_to_thrift", "file_from_thrift", "file_to_thrift", "instant_to_thrift",
    "optional", "slice_to_thrift",
]
