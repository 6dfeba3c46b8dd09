"""Differential conformance against the reference Hive Metastore 2.3 (see docs/conformance.md)."""
