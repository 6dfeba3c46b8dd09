"""`hudi-metastore migrate`: copy a running Hive Metastore into this server, then verify.

    hudi-metastore migrate --from thrift://old-hms:9083 [--metastore thrift://127.0.0.1:9083]
                           [--databases PATTERN] [--dry-run] [--parallel N]

What is copied: databases, tables of every type (views included), partitions (listed with
``get_partition_names``, fetched with ``get_partitions_by_names`` in batches by N threads, each with
its own connections), table and partition parameters, and column statistics at table and
partition level. Hudi tables (``spark.sql.sources.provider=hudi``, an ``org.apache.hudi.hadoop.*``
input format, or ``.hoodie/`` at the location) get their HMS table copied and their timeline and
snapshot imported from storage (``import_hudi_table``): their partitions then follow the imported
commits instead of being copied.

Resumable by being idempotent: every object is compared with the source and only what is missing
or different is written, so a run interrupted anywhere is finished by running it again. The
source is only read (its client refuses anything but read calls). The run ends with a
verification that compares source and target again (names, counts, definitions, statistics) and
lists every difference. The parts are in adapter/commands/migration/.
"""

from __future__ import annotations

import logging
import sys

from adapter.commands.migration.copier import DEFAULT_TARGET, Migration
from adapter.commands.migration.report import MigrationReport
from adapter.commands.migration.source import MigrationError
from adapter.commands.table_cli import login_hint, security_of
from client import AuthenticationError


def migrate(source: str, target: str = DEFAULT_TARGET, databases: str = "*", dry_run: bool = False,
            parallel: int = 4, batch_size: int = 500, progress: bool = True, security=None) -> MigrationReport:
    """Run a migration; raises MigrationError when a metastore cannot be reached (nothing written).
    `security`: how to log in to the target (client Security; the source is read without)."""
    return Migration(source, target, databases, dry_run, parallel, batch_size, progress, security=security).run()


def main(args) -> int:
    """CLI entry: 0 when source and target agree at the end, 1 when differences remain, 2 on error."""
    logging.getLogger("thrift.transport.TSocket").setLevel(logging.CRITICAL)  # we say it once, plainly
    try:
        report = migrate(args.source, args.metastore, args.databases, args.dry_run, args.parallel, args.batch_size,
                         progress=not args.quiet, security=security_of(args))
    except (MigrationError, ValueError) as exc:  # ValueError: a malformed URI, bad log-in options
        print(f"migrate: {exc}", file=sys.stderr)
        return 2
    except AuthenticationError as exc:
        print(f"migrate: {login_hint(exc)}", file=sys.stderr)
        return 2
    print(report.format())
    return 1 if report.differences or report.errors else 0
