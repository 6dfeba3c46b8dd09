"""Hudi services (RFC-36 timeline and snapshot services), one sub-package per concept, each imported
through its door (`__init__`): `timeline`, `snapshot`, `record_index` (RFC-08), `column_stats` and
`data_skipping` (RFC-27); beside them tables, file versions, Hive statistics, RFC-15's stats view and
the storage mirror (docs/architecture.md)."""
