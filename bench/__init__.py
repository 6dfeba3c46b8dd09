"""Metastore benchmark harness, modelled on Hive's hmsbench (metastore-tools/metastore-benchmarks).

``python -m bench.run --pairing postgres|embedded|both`` starts our server and the reference Hive
Metastore 2.3.10 side by side, runs the same operations against both with the same Python Thrift
client and prints one table per pairing (see ``bench/run.py`` and docs/performance.md).
"""
