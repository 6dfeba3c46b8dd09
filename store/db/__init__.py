"""Database plumbing: engines, transactions, the RFC-36 storage schema, per-backend SQL, migrations."""

#: the store when none is named (also `hudi-metastore`'s default; here so that naming it imports no engine)
DEFAULT_URL = "sqlite:///./metastore.db"
