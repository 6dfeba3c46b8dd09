"""Database plumbing: engines, transactions, the RFC-36 storage schema, per-backend SQL, migrations."""
