"""`hudi-metastore` command line: serve, db upgrade, sync-storage, config show, and the commands that
talk to a server (migrate, import-hudi, create-database, validate, repair, stats, list-partitions,
list-files, lookup-keys, savepoint, delete-savepoint, restore, databases, tables, describe, partitions,
drop-table, drop-database, drop-partition: adapter/commands/).

Every option can also come from the environment (HUDI_METASTORE_<OPTION>) or a TOML file
(--config FILE or HUDI_METASTORE_CONFIG): adapter/config.py. Only the command that runs is
imported: serve, db upgrade and sync-storage open the store, the others use the client."""

from __future__ import annotations

import argparse
import difflib
import logging
import os
import sys

from adapter import config
from adapter.commands.parsers import add_metastore_option, add_parsers, lazy
from adapter.preflight import CommandError

DB_URL_HELP = "SQLAlchemy URL of the store, without its password (default: sqlite:///./metastore.db)"
log = logging.getLogger("hudi_metastore.cli")


def add_database_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db-url", help=DB_URL_HELP)
    p.add_argument("--db-password-file", metavar="FILE",
                   help=f"read the database password from FILE (or set {config.PASSWORD_ENV})")


def database_url(args) -> str:
    from store.db import DEFAULT_URL

    return config.database_url(args.db_url or DEFAULT_URL, args.db_password_file, os.environ)


def _serve(args) -> int:
    from adapter.serve import serve

    return serve(args, database_url(args))


def _db_upgrade(args) -> int:
    from adapter import preflight
    from store.db.migrations import current_revision, known_revision, upgrade

    url = database_url(args)
    preflight.check_sqlite_path(url, create=True)
    engine = preflight.open_engine(url)
    try:
        revision = preflight.schema_revision(engine, url)
        if revision is not None and not known_revision(revision):
            preflight.check_schema(revision, url, empty_ok=True)  # raises: unknown revision
        upgrade(engine, args.revision)
        print(f"store schema at revision {current_revision(engine)} (was {revision or 'empty'})")
    finally:
        engine.dispose()
    return 0


def _sync_storage(args) -> int:
    """Mirror a Hudi table's pending versions to storage now (RFC-36 snapshot synchronization):
    through a running server with --metastore, else on the store (--db-url) directly."""
    from adapter import preflight
    from store.errors import NoSuchObject
    from store.services import open_services

    db, _, tbl = args.table.partition(".")
    if not db or not tbl:
        raise CommandError(f"expected <db>.<table>, got {args.table!r}")
    if _sync_through_server(args):
        return _sync_storage_on_server(args, db, tbl)
    url = database_url(args)
    preflight.check_sqlite_path(url, create=False)
    engine = preflight.open_engine(url)
    try:
        preflight.check_schema(preflight.schema_revision(engine, url), url, empty_ok=False)
    finally:
        engine.dispose()
    services = open_services(url, os.path.abspath(args.warehouse), mirror=True,
                             storage_roots=None)  # the admin's command: any Hudi table's base path
    mirror = services.mirror
    assert mirror is not None
    try:
        n = mirror.sync(db, tbl)
        print(f"{db}.{tbl}: {n} version(s) mirrored, lag {mirror.lag(db, tbl)}")
        return 0
    except NoSuchObject as exc:
        try:
            t = services.tables.get_table(db, tbl)
        except NoSuchObject:
            raise CommandError(f"{exc.message} (store {config.masked('db_url', url)})") from None
        raise CommandError(f"{db}.{tbl} is not a Hudi table ({t.tableType or 'a table'} without a Hudi timeline "
                           "in the store; `import-hudi` adopts one from storage)") from None
    except OSError as exc:  # e.g. storage not writable
        raise CommandError(f"sync of {db}.{tbl} failed: {exc}") from None
    finally:
        services.close()


def _sync_through_server(args) -> bool:
    """--metastore asks a server, --db-url opens the store. When the config file or the environment
    sets both (a file shared with serve), the one on the command line decides; none there: the store."""
    server, store = bool(args.metastore), bool(args.db_url or args.db_password_file)
    if not (server and store):
        return server
    given = config.given_on_command_line(_command_parser(args.root_parser, args), getattr(args, "argv", []))
    server_given, store_given = "metastore" in given, bool({"db_url", "db_password_file"} & given)
    if server_given and store_given:
        raise CommandError("give --metastore (ask a running server) or --db-url (open the store), not both")
    return server_given


def _sync_storage_on_server(args, db: str, tbl: str) -> int:
    from adapter.commands.table_cli import connect, reporting_errors, require_hudi_table

    def go() -> int:
        with connect(args) as c:
            require_hudi_table(c, db, tbl)
            n = c.sync_storage(db, tbl)
            lag = c.get_hudi_table_stats(db, tbl).mirror_lag_versions
        print(f"{db}.{tbl}: {n} version(s) mirrored, lag {lag}")
        return 0

    return reporting_errors("sync-storage", args.metastore, go)


def _config_show(args) -> int:
    serve_parser = args.serve_parser
    explicit = config.given_on_command_line(serve_parser, args.extra)
    ns = serve_parser.parse_args(args.extra)
    database_url(ns)  # the password settings must be usable
    print("\n".join(config.show("serve", ns, serve_parser, args.layers, explicit)))
    root = config.show("", args, args.root_parser, args.layers, args.root_explicit)
    print("\n".join(line for line in root[3:] if not line.startswith("db_password")))  # --log-level, ...
    return 0


def _serve_parser(sub) -> argparse.ArgumentParser:
    serve = sub.add_parser("serve", help="run the Thrift metastore server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=9083)
    add_database_options(serve)
    serve.add_argument("--warehouse", default="./warehouse", help="default root of database directories")
    serve.add_argument("--workers", type=int, default=1, help="processes sharing the port")
    serve.add_argument("--framed", action="store_true", help="framed transport (default: buffered)")
    serve.add_argument("--max-message-size", type=int, default=104_857_600)
    serve.add_argument("--max-connections", type=int, default=2_000,
                       help="open connections per worker process; more are refused (closed at once)")
    serve.add_argument("--read-timeout", type=float, default=60.0,
                       help="seconds without a byte in the middle of a request before its connection "
                            "is closed (0: none); idle connections between requests are not affected")
    serve.add_argument("--idle-timeout", type=float, default=0.0,
                       help="seconds a connection may stay idle between requests (0: forever, as Hive)")
    serve.add_argument("--max-inflight-bytes", type=int, default=None,
                       help="bytes of requests being read or served at once, per process (default: 2 x "
                            "--max-message-size; 0: unlimited); a request beyond it waits, then is refused")
    serve.add_argument("--lock-timeout", type=float, default=300.0,
                       help="seconds after which a lock whose holder stopped heartbeating expires")
    serve.add_argument("--statement-timeout", type=float, default=60.0,
                       help="seconds one database statement may run; a request whose statement runs "
                            "longer fails with a MetaException saying it was too expensive (0: no limit)")
    serve.add_argument("--metrics-port", type=int, default=0,
                       help="serve /metrics, /healthz, /readyz and the web console over HTTP on this port "
                            "(worker i of --workers on port + i); 0: off (default)")
    serve.add_argument("--metrics-host", default="127.0.0.1",
                       help="address the HTTP port binds (default: loopback only; 0.0.0.0 for every interface)")
    serve.add_argument("--metrics-tls-cert", metavar="FILE",
                       help="serve the HTTP port over TLS with this certificate (PEM)")
    serve.add_argument("--metrics-tls-key", metavar="FILE", help="the private key (PEM) of --metrics-tls-cert")
    serve.add_argument("--metrics-token-file", metavar="FILE",
                       help="require `Authorization: Bearer <token>` on the HTTP port (all but /healthz); the "
                            "token is read from FILE (or set HUDI_METASTORE_METRICS_TOKEN)")
    serve.add_argument("--mirror-interval", type=float, default=5.0,
                       help="seconds between background retries of the Hudi storage mirror (0: only after commits)")
    serve.add_argument("--watch-interval", type=float, default=0.0, metavar="SECONDS",
                       help="seconds between passes of the watcher that catches up Hudi tables tracked from their "
                            "hive sync whose writers run with sync turned off (docs/hudi.md); 0: off (default)")
    serve.add_argument("--no-storage-mirror", action="store_true",
                       help="do not write Hudi timelines to storage (readers that list storage will not see commits)")
    serve.add_argument("--storage-roots", metavar="URIS", default="",
                       help="comma-separated directories besides the warehouse under which the server may delete "
                            "and move data (dropping MANAGED objects, truncate, rename); elsewhere it touches only "
                            "directories it made itself (docs/security.md)")
    serve.add_argument("--external-locations", metavar="URIS", default="",
                       help="comma-separated directories outside the warehouse where users who are no admin may "
                            "locate databases, tables and partitions when authorization is on (docs/security.md, "
                            "Storage ownership)")
    serve.add_argument("--event-ttl", type=int, default=86_400,
                       help="seconds notification events are kept (Hive's hive.metastore.event.db.listener.timetolive)")
    serve.add_argument("--event-clean-interval", type=float, default=7_200,
                       help="seconds between deletions of expired notification events (0: never)")
    serve.add_argument("--audit-log", metavar="PATH",
                       help="append a line for every call that changes something to this file "
                            "(default: into the server's log); docs/security.md")
    serve.add_argument("--auth", choices=("none", "password", "kerberos"), default="none",
                       help="authentication on the Thrift port: none, password (SASL PLAIN against "
                            "--auth-password-file) or kerberos (SASL GSSAPI with --kerberos-principal and "
                            "--kerberos-keytab); docs/security.md (default: %(default)s)")
    serve.add_argument("--kerberos-principal", metavar="PRINCIPAL",
                       help="the service principal for --auth kerberos, e.g. hive/_HOST@EXAMPLE.COM (_HOST: this "
                            "machine's fully qualified name), as hive.metastore.kerberos.principal")
    serve.add_argument("--kerberos-keytab", metavar="FILE",
                       help="the keytab holding the service principal's key, as hive.metastore.kerberos.keytab.file")
    serve.add_argument("--auth-password-file", metavar="FILE",
                       help="users and salted password hashes for --auth password (hudi-metastore users add)")
    serve.add_argument("--tls-cert", metavar="FILE",
                       help="PEM certificate (chain): serve the Thrift port over TLS only")
    serve.add_argument("--tls-key", metavar="FILE", help="PEM private key of --tls-cert")
    serve.add_argument("--tls-client-ca", metavar="FILE",
                       help="PEM CA certificates: clients must present a certificate signed by one of them")
    serve.add_argument("--authorization", choices=("auto", "on", "off"), default="auto",
                       help="check ownership, grants and roles on every call that changes something; auto: on "
                            "exactly when authentication is on; on without authentication trusts set_ugi "
                            "(trusted networks only) (default: %(default)s)")
    serve.add_argument("--admin-users", metavar="NAMES", default="",
                       help="comma-separated users who may do anything when authorization is on")
    serve.add_argument("--admin-groups", metavar="NAMES", default="",
                       help="comma-separated groups whose members may do anything when authorization is on")
    serve.set_defaults(fn=_serve)
    return serve


class _Version(argparse.Action):
    """--version, looked up only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"hudi-metastore {version()} (Hive Metastore API 3.1)")
        parser.exit()


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("hudi-metastore")
    except PackageNotFoundError:  # run from a checkout that is not installed
        return "0.1.0+source"


def _global_options(p: argparse.ArgumentParser, suppress: bool) -> None:
    """--config and --debug, accepted before or after the command (read early by _early_options)."""
    default = argparse.SUPPRESS if suppress else None
    p.add_argument("--config", metavar="FILE", default=default,
                   help=f"TOML configuration file (or {config.CONFIG_ENV}); flags > environment > file")
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS if suppress else False,
                   help="print tracebacks of errors")


class Parser(argparse.ArgumentParser):
    """Every command's parser: no abbreviated flags (`--metastor` is a typo, not --metastore), and a
    flag or command that is not known suggests the nearest one (adapter/cli.py unknown_flags)."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message):
        if "invalid choice:" in message and "choose from" in message:
            got = message.split("invalid choice: ", 1)[1].split(" (", 1)[0].strip("'")
            choices = [c.strip().strip("'") for c in message.split("choose from ", 1)[1].rstrip(")").split(",")]
            near = difflib.get_close_matches(got, choices, n=1)
            if near:
                message += f"; did you mean {near[0]}?"
        super().error(message)


def unknown_flags(parser: argparse.ArgumentParser, words: list[str]) -> str:
    """`words` the command does not know, each with the nearest flag it has."""
    known = [s for a in parser._actions for s in a.option_strings]
    out = []
    for w in words:
        flag = w.split("=", 1)[0]
        near = difflib.get_close_matches(flag, known, n=1, cutoff=0.6) if flag.startswith("-") else []
        out.append(f"{w} (did you mean {near[0]}?)" if near else w)
    return " ".join(out)


def _command_parser(parser: argparse.ArgumentParser, args) -> argparse.ArgumentParser:
    """The parser of the command `args` ran (its subcommand's, for db / users / config)."""
    words = [w for w in (args.command, getattr(args, "db_command", None), getattr(args, "users_command", None),
                         getattr(args, "config_command", None)) if w]
    found = dict(config.commands(parser)).get("-".join(words))
    return found or parser


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="hudi-metastore", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    parser.add_argument("--log-level", default=os.environ.get("HMS_LOG_LEVEL", "INFO"))
    parser.add_argument("--log-format", choices=("text", "json"), default="text",
                        help="log lines as text (default) or as JSON objects, one a line")
    _global_options(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = _serve_parser(sub)

    sync = sub.add_parser("sync-storage", help="mirror a Hudi table's timeline to storage now")
    sync.add_argument("table", metavar="<db.table>")
    add_database_options(sync)
    sync.add_argument("--warehouse", default="./warehouse", help="default root of database directories")
    add_metastore_option(sync, default=None, help="ask the server at thrift://host:port to do it (instead of "
                                                  "opening the store with --db-url)")
    sync.set_defaults(fn=_sync_storage)

    add_parsers(sub)  # migrate, import-hudi, create-database, validate, repair, stats, list-*, lookup-keys, savepoints

    users = sub.add_parser("users", help="manage the password file of serve --auth password")
    users_sub = users.add_subparsers(dest="users_command", required=True)
    add_user = users_sub.add_parser("add", help="add a user (or change its password); the password is read "
                                                "from standard input")
    add_user.add_argument("--file", required=True, help="the password file (created, mode 0600)")
    add_user.add_argument("user")
    add_user.set_defaults(fn=lazy("adapter.commands.users", "add_user"))

    db = sub.add_parser("db", help="manage the store's database schema")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    up = db_sub.add_parser("upgrade", help="apply migrations")
    add_database_options(up)
    up.add_argument("--revision", default="head")
    up.set_defaults(fn=_db_upgrade)

    cfg = sub.add_parser("config", help="show the effective configuration")
    cfg_sub = cfg.add_subparsers(dest="config_command", required=True)
    show = cfg_sub.add_parser("show", help="print serve's effective configuration (secrets masked); "
                                           "takes serve's options", add_help=True)
    show.set_defaults(fn=_config_show, serve_parser=serve, takes_extra=True)
    for _name, p in config.commands(parser):
        _global_options(p, suppress=True)
    return parser


def _early_options(argv: list[str]) -> argparse.Namespace:
    early = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    early.add_argument("--config")
    early.add_argument("--debug", action="store_true")
    ns, _ = early.parse_known_args(argv)
    return ns


def _root_options_given(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """The program's own options (--log-level, ...) given before the command."""
    given = {s for a in config.options(parser) for s in a.option_strings}
    return {a.dest for a in config.options(parser)
            if any(w.split("=", 1)[0] in a.option_strings for w in argv if w.split("=", 1)[0] in given)}


def _one_line(exc: BaseException) -> str:
    from adapter.secret_text import mask_secrets

    text = mask_secrets(" ".join(str(exc).split()))
    return text or type(exc).__name__


def _unexpected(exc: Exception) -> tuple[str, int]:
    """An error no command turned into a CommandError: one line, and its exit status."""
    from adapter.preflight import connection_error

    if type(exc).__module__.startswith("sqlalchemy"):
        return _one_line(connection_error("", exc)).replace("the database (bad URL): ", "database: "), 2
    if isinstance(exc, OSError):
        return _one_line(exc), 2
    return f"{type(exc).__name__}: {_one_line(exc)} (run with --debug for the traceback)", 1


def _warn_password_in_argv(argv: list[str]) -> None:
    """A password inside --db-url on the command line is visible to every local user (ps): warn,
    saying where it belongs (docs/security.md, "Secrets")."""
    urls = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--db-url"]
    urls += [a.split("=", 1)[1] for a in argv if a.startswith("--db-url=")]
    for url in urls:
        try:
            from sqlalchemy.engine import make_url

            has_password = make_url(url).password is not None
        except Exception:  # noqa: BLE001 - a bad URL is reported by the command itself
            has_password = False
        if has_password:
            logging.getLogger("hudi_metastore").warning(
                "the database password is on the command line (--db-url), where any local user can read "
                "it; put it in %s, --db-password-file FILE, or db_url in the config file instead",
                config.PASSWORD_ENV)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    early = _early_options(argv)
    parser = build_parser()
    layers = config.Layers(path=early.config or os.environ.get(config.CONFIG_ENV), environ=os.environ)
    try:
        layers.doc = config.load_file(layers.path)
        config.apply(parser, layers)
    except config.ConfigError as exc:
        print(f"hudi-metastore: {_one_line(exc)}", file=sys.stderr)
        return 2
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "takes_extra", False):
        command = _command_parser(parser, args)
        command.error(f"unrecognized arguments: {unknown_flags(command, extra)}")
    args.extra, args.layers, args.argv = extra, layers, argv
    args.root_parser, args.root_explicit = parser, _root_options_given(parser, argv)
    from adapter.log_format import configure

    configure(args.log_level, args.log_format)
    _warn_password_in_argv(argv)
    logging.getLogger("alembic").setLevel(logging.WARNING)  # its INFO lines are not ours to print
    if args.command != "serve":  # the client says it once, plainly; not a traceback per attempt
        logging.getLogger("thrift.transport.TSocket").setLevel(logging.CRITICAL)
    name = " ".join(w for w in (args.command, getattr(args, "db_command", None),
                                getattr(args, "config_command", None)) if w)
    try:
        return args.fn(args)
    except (CommandError, config.ConfigError) as exc:
        if early.debug:
            raise
        print(f"hudi-metastore {name}: {_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        if early.debug:
            raise
        text, status = _unexpected(exc)
        print(f"hudi-metastore {name}: {text}", file=sys.stderr)
        return status


def run() -> None:
    """The console script (and `python -m adapter.cli`): main(), then, when the command loaded
    pyarrow (reading Parquet footers or data files), leave without the interpreter's finalization:
    pyarrow's native thread pools can abort the process at exit after the work is done ("terminate
    called without an active exception", apache/arrow#34314), which turned a passing `validate`
    into SIGABRT. Output and logs are flushed first."""
    code = main()
    if "pyarrow" in sys.modules:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code if isinstance(code, int) else 1)
    sys.exit(code)


if __name__ == "__main__":
    run()
