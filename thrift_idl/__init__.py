"""Hive Metastore wire contract: our Thrift IDL and the Python bindings generated from it."""
