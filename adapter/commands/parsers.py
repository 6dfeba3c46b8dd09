"""The arguments of the commands that talk to a server (import-hudi, validate, repair, stats,
list-partitions, list-files, lookup-keys, savepoint, delete-savepoint, restore, table-services
status, migrate, create-database, databases, tables, describe, partitions, drop-table,
drop-database, drop-partition). Defining them imports nothing heavy: a command's module (and with it the Thrift
bindings) is imported only when that command runs."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

DEFAULT_METASTORE = "thrift://127.0.0.1:9083"
PASSWORD_ENV = "HUDI_METASTORE_PASSWORD"  # the password of --auth password, when no --password-file
METASTORE_HELP = "thrift://host:port of the server (default: %(default)s)"


def lazy(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """`module.function(args)`, importing the module when the command runs."""

    def run(args: argparse.Namespace) -> int:
        return getattr(importlib.import_module(module), function)(args)

    run.__name__ = function
    return run


def add_metastore_option(p: argparse.ArgumentParser, *aliases: str, default: str | None = DEFAULT_METASTORE,
                         help: str = METASTORE_HELP) -> None:
    """`--metastore` (every command that talks to a server spells it so; `aliases`: old spellings)
    and how to log in to it (adapter/commands/table_cli.py security_of)."""
    p.add_argument("--metastore", *aliases, dest="metastore", default=default,
                   metavar="thrift://host:port", help=help)
    g = p.add_argument_group("log-in to the metastore (serve --auth, --tls-cert; docs/security.md)")
    g.add_argument("--auth", choices=("none", "password", "kerberos"), default=None,
                   help="password (SASL PLAIN: --user, --password-file) or kerberos (SASL GSSAPI with the "
                        "ticket cache: kinit first); default: password when a password is given, else none")
    g.add_argument("--user", metavar="NAME", help="the user of --auth password (default: the login name)")
    g.add_argument("--password-file", metavar="FILE",
                   help=f"read the password from FILE (or set {PASSWORD_ENV})")
    g.add_argument("--kerberos-principal", metavar="PRINCIPAL", default="hive/_HOST",
                   help="the server's principal (_HOST: the metastore's host name), as "
                        "hive.metastore.kerberos.principal (default: %(default)s)")
    g.add_argument("--tls", action="store_true", help="connect over TLS, trusting the system's CAs")
    g.add_argument("--tls-ca", metavar="FILE", help="connect over TLS, trusting the CA certificates (PEM) in FILE")
    g.add_argument("--tls-client-cert", metavar="FILE",
                   help="present this certificate (PEM) to a server that asks for one (serve --tls-client-ca)")
    g.add_argument("--tls-client-key", metavar="FILE", help="the private key (PEM) of --tls-client-cert")


def add_table_command(sub, name: str, fn: Callable, text: str) -> argparse.ArgumentParser:
    """A subcommand taking DB.TABLE and --metastore; returns its parser for further options."""
    p = sub.add_parser(name, help=text, description=text)
    p.add_argument("table", metavar="DB.TABLE")
    add_metastore_option(p)
    p.set_defaults(fn=fn)
    return p


def _views(sub) -> None:
    for name, fn, text in (
            ("stats", "run_stats", "partition count, file count, total size, last instant, mirror lag"),
            ("list-partitions", "run_list_partitions", "partition paths of a Hudi table"),
            ("list-files", "run_list_files", "latest file slices of a Hudi table")):
        p = add_table_command(sub, name, lazy("adapter.commands.table_views", fn), text)
        p.add_argument("--json", action="store_true", help="machine-readable output")
        if name == "list-files":
            p.add_argument("--partition", metavar="P", help="only this partition path")
            p.add_argument("--where", metavar="PREDICATE",
                           help="only slices whose column statistics allow a matching row (Hive filter "
                                "grammar over any column, plus IS [NOT] NULL); --json then prints an object "
                                "with the slices and the files skipped")


def _validate_repair(sub) -> None:
    add_table_command(sub, "validate", lazy("adapter.commands.validate_repair", "run_validate"),
                      "compare a Hudi table on the metastore with storage (exit 0: they agree)")
    r = add_table_command(sub, "repair", lazy("adapter.commands.validate_repair", "run_repair"),
                          "reconcile a Hudi table on the metastore with storage")
    r.add_argument("--yes", action="store_true", help="do not ask for confirmation")


def _import_hudi(sub) -> None:
    p = sub.add_parser("import-hudi", help="import an existing Hudi table from storage (RFC-15 bootstrap)")
    p.add_argument("base_path", metavar="<base-path>")
    p.add_argument("--table", required=True, metavar="DB.TABLE")
    p.add_argument("--dry-run", action="store_true", help="show what would be imported, change nothing")
    p.add_argument("--no-create-database", action="store_true",
                   help="refuse a database the metastore does not have (default: create it, as hive-sync does)")
    p.add_argument("--no-record-index", action="store_true",
                   help="adopt the table without a record-level index (upserts then read base files for keys)")
    p.add_argument("--no-column-stats", action="store_true",
                   help="do not read the base files' footers for column statistics (data skipping, Hive statistics)")
    add_metastore_option(p)
    p.set_defaults(fn=lazy("adapter.commands.import_hudi", "run"))


def _migrate(sub) -> None:
    p = sub.add_parser("migrate", help="copy a running Hive Metastore into this server and verify it")
    p.add_argument("--from", dest="source", required=True, metavar="thrift://host:port",
                   help="the Hive Metastore to copy (only read)")
    add_metastore_option(p, "--to")
    p.add_argument("--databases", default="*", metavar="PATTERN",
                   help="Hive pattern of the databases to copy ('*' any text, '|' alternatives; default all)")
    p.add_argument("--dry-run", action="store_true", help="write nothing; report what would be copied")
    p.add_argument("--parallel", type=int, default=4, metavar="N",
                   help="threads (each with its own connections) copying partition batches (default 4)")
    p.add_argument("--batch-size", type=int, default=500, help="partitions per get_partitions_by_names call")
    p.add_argument("--quiet", action="store_true", help="no progress output on stderr")
    p.set_defaults(fn=lazy("adapter.commands.migrate", "main"))


def _create_database(sub) -> None:
    p = sub.add_parser("create-database", help="create a database on the metastore")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--location", metavar="URI", help="its directory (default: under the server's warehouse)")
    p.add_argument("--description", metavar="TEXT")
    p.add_argument("--if-not-exists", action="store_true", help="no error when it exists already")
    add_metastore_option(p)
    p.set_defaults(fn=lazy("adapter.commands.create_database", "run"))


def _lookup_keys(sub) -> None:
    p = add_table_command(sub, "lookup-keys", lazy("adapter.commands.lookup_keys", "run_lookup_keys"),
                          "where record keys live (the table's record-level index)")
    p.add_argument("keys", nargs="+", metavar="KEY")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _savepoints(sub) -> None:
    module = "adapter.commands.savepoints"
    p = add_table_command(sub, "savepoint", lazy(module, "run_savepoint"),
                          "savepoint a completed commit of a Hudi table (cleans keep what it holds)")
    p.add_argument("--commit", metavar="INSTANT", help="the commit to savepoint (default: the latest)")
    p = add_table_command(sub, "delete-savepoint", lazy(module, "run_delete_savepoint"),
                          "delete a savepoint of a Hudi table (its file slices may be cleaned again)")
    p.add_argument("instant", metavar="INSTANT")
    p = add_table_command(sub, "restore", lazy(module, "run_restore"),
                          "restore a Hudi table to a savepoint: every instant after it is rolled back")
    p.add_argument("instant", metavar="INSTANT", help="the savepoint to restore to")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")


def _table_services(sub) -> None:
    text = "a Hudi table's services (compaction, clean, archival; docs/pipeline.md, Table services): status, run"
    p = sub.add_parser("table-services", help=text, description=text)
    services = p.add_subparsers(dest="services_command", required=True, metavar="COMMAND")
    q = add_table_command(services, "status", lazy("adapter.commands.table_services", "run_status"),
                          "the table's service settings, pending and recent compactions, clusterings and cleans, "
                          "and how far the timeline on storage is archived")
    q.add_argument("--recent", type=int, default=5, metavar="N", help="recent instants per service (default: 5)")
    q.add_argument("--json", action="store_true", help="machine-readable output")
    q = add_table_command(services, "run", lazy("adapter.commands.table_services", "run_services"),
                          "run the table's pending compactions and clusterings as a Spark job (each claimed on the "
                          "server first: two executors never run the same one); exit status 1 when nothing is pending")
    q.add_argument("--master", metavar="URL",
                   help="Spark master (default: the session's, or Spark's own default local[*])")


def _browse(sub) -> None:
    """databases, tables, describe, partitions and the drops (adapter/commands/browse.py)."""
    module = "adapter.commands.browse"

    def command(name: str, fn: str, text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=text, description=text)
        p.set_defaults(fn=lazy(module, fn))
        return p

    def finish(p: argparse.ArgumentParser) -> None:
        p.add_argument("--json", action="store_true", help="machine-readable output")
        add_metastore_option(p)

    p = command("databases", "run_databases", "list the databases (SHOW DATABASES [LIKE PATTERN])")
    p.add_argument("pattern", metavar="PATTERN", nargs="?", help="Hive pattern ('*' any text, '|' alternatives)")
    finish(p)
    p = command("tables", "run_tables", "list a database's tables and views with their type and format "
                                        "(SHOW TABLES IN DB [LIKE PATTERN])")
    p.add_argument("database", metavar="DB")
    p.add_argument("pattern", metavar="PATTERN", nargs="?", help="Hive pattern ('*' any text, '|' alternatives)")
    finish(p)
    p = command("describe", "run_describe", "a table's columns, partition keys, location, type, storage, "
                                            "parameters and, for a Hudi table, its Hudi type and latest "
                                            "instant; or a database's (DESCRIBE [DATABASE])")
    p.add_argument("name", metavar="DB.TABLE|DB")
    finish(p)
    p = command("partitions", "run_partitions", "a table's partitions as the metastore lists them "
                                                "(SHOW PARTITIONS; any table, Hudi or not)")
    p.add_argument("table", metavar="DB.TABLE")
    p.add_argument("--filter", metavar="FILTER",
                   help="Hive filter over the partition keys, e.g. \"dt >= '2024-01-01'\"")
    p.add_argument("--limit", type=int, default=-1, metavar="N", help="at most N partitions (default: all)")
    finish(p)
    keep = "keep the data (by default a MANAGED table's data is deleted, as Hive's DROP; an EXTERNAL one's is kept)"
    p = command("drop-table", "run_drop_table", "drop a table or view (DROP TABLE)")
    p.add_argument("table", metavar="DB.TABLE")
    p.add_argument("--if-exists", action="store_true", help="no error when it does not exist")
    p.add_argument("--keep-data", action="store_true", help=keep)
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    finish(p)
    p = command("drop-database", "run_drop_database", "drop a database (DROP DATABASE [CASCADE])")
    p.add_argument("name", metavar="DB")
    p.add_argument("--cascade", action="store_true", help="drop its tables too (without: refused when it has any)")
    p.add_argument("--if-exists", action="store_true", help="no error when it does not exist")
    p.add_argument("--keep-data", action="store_true", help="keep the directories (by default they are deleted "
                                                            "where the server deletes data)")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    finish(p)
    p = command("drop-partition", "run_drop_partition", "drop partitions of a table that is no Hudi table "
                                                        "(ALTER TABLE ... DROP PARTITION)")
    p.add_argument("table", metavar="DB.TABLE")
    p.add_argument("partitions", nargs="+", metavar="NAME", help="partition name as `partitions` lists it: k1=v1/k2=v2")
    p.add_argument("--keep-data", action="store_true", help=keep)
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    finish(p)


def add_parsers(sub) -> None:
    for add in (_migrate, _import_hudi, _create_database, _validate_repair, _views, _lookup_keys, _savepoints,
                _table_services, _browse):
        add(sub)
