"""Copying a running Hive Metastore into this server (`hudi-metastore migrate`, adapter/commands/migrate.py).

source.py: the read-only source client and the per-thread connections; compare.py: objects as
comparable plain data; copier.py: the copy of databases and tables; table_sync.py: table statistics
and partition batches (copied or compared); verify.py: the closing comparison; report.py and
progress.py: what the run tells its user.
"""
