"""`hudi-metastore` command line: serve, db upgrade, sync-storage, migrate, import-hudi, validate,
repair, stats, list-partitions, list-files, lookup-keys.

Only serve, db upgrade and sync-storage open the store (imported when they run); the other commands
talk to a server through the client (adapter/commands/)."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys

from adapter.commands import import_hudi, lookup_keys, migrate, table_views, validate_repair

DB_URL_HELP = "SQLAlchemy URL of the store (default: sqlite:///./metastore.db)"


def _db_url(args) -> str:
    from store.db.engine import DEFAULT_URL

    return args.db_url or DEFAULT_URL


def _serve(args) -> int:
    from adapter.app import build_router
    from adapter.server import run
    from store.db.engine import make_engine
    from store.db.migrations import current_revision, head_revision, upgrade
    from store.services import open_services

    db_url = _db_url(args)
    engine = make_engine(db_url)
    current = current_revision(engine)
    if current is None:
        logging.info("empty database: creating the store schema")
        upgrade(engine)
    elif current != head_revision():
        logging.error("database schema is at %s, this server needs %s: run `hudi-metastore db upgrade "
                      "--db-url ...` first", current, head_revision())
        return 2
    engine.dispose()
    warehouse = os.path.abspath(args.warehouse)
    os.makedirs(warehouse, exist_ok=True)
    services = open_services(db_url, warehouse)
    services.tables.ensure_default_database()  # as Hive's metastore does on start
    services.close()
    # Answers build many short-lived objects without cycles (10,000 partitions: ~150,000), which
    # refcounting frees; the default threshold (700) runs the cycle collector dozens of times per
    # large answer. Collect less often, and never scan what startup loaded.
    gc.set_threshold(50_000, 20, 100)
    gc.freeze()

    def make_router():
        services = open_services(
            db_url, warehouse, lock_timeout_ms=int(args.lock_timeout * 1000),
            mirror=not args.no_storage_mirror,
            mirror_interval_s=args.mirror_interval if args.mirror_interval > 0 else None,
            notification_ttl_s=args.event_ttl, notification_clean_interval_s=args.event_clean_interval)
        return build_router(services)

    run(make_router, args.host, args.port, workers=args.workers, framed=args.framed,
        max_message_size=args.max_message_size, metrics_port=args.metrics_port)
    return 0


def _db_upgrade(args) -> int:
    from store.db.engine import make_engine
    from store.db.migrations import current_revision, upgrade

    engine = make_engine(_db_url(args))
    upgrade(engine, args.revision)
    print(f"store schema at revision {current_revision(engine)}")
    return 0


def _sync_storage(args) -> int:
    """Mirror a Hudi table's pending versions to storage now (RFC-36 snapshot synchronization)."""
    from store.errors import NoSuchObject
    from store.services import open_services

    db, _, tbl = args.table.partition(".")
    if not db or not tbl:
        print(f"expected <db>.<table>, got {args.table!r}", file=sys.stderr)
        return 2
    services = open_services(_db_url(args), os.path.abspath(args.warehouse), mirror=True)
    mirror = services.mirror
    assert mirror is not None
    try:
        n = mirror.sync(db, tbl)
        print(f"{db}.{tbl}: {n} version(s) mirrored, lag {mirror.lag(db, tbl)}")
        return 0
    except NoSuchObject as exc:
        print(exc.message, file=sys.stderr)
        return 1
    except Exception as exc:  # e.g. storage not writable
        print(f"sync of {db}.{tbl} failed: {exc}", file=sys.stderr)
        return 1
    finally:
        services.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hudi-metastore", description=__doc__)
    parser.add_argument("--log-level", default=os.environ.get("HMS_LOG_LEVEL", "INFO"))
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the Thrift metastore server")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=9083)
    serve.add_argument("--db-url", help=DB_URL_HELP)
    serve.add_argument("--warehouse", default="./warehouse", help="default root of database directories")
    serve.add_argument("--workers", type=int, default=1, help="processes sharing the port")
    serve.add_argument("--framed", action="store_true", help="framed transport (default: buffered)")
    serve.add_argument("--max-message-size", type=int, default=104_857_600)
    serve.add_argument("--lock-timeout", type=float, default=300.0,
                       help="seconds after which a lock whose holder stopped heartbeating expires")
    serve.add_argument("--metrics-port", type=int, default=0,
                       help="serve Prometheus /metrics over HTTP on this port (worker i of --workers "
                            "on port + i); 0: off (default)")
    serve.add_argument("--mirror-interval", type=float, default=5.0,
                       help="seconds between background retries of the Hudi storage mirror (0: only after commits)")
    serve.add_argument("--no-storage-mirror", action="store_true",
                       help="do not write Hudi timelines to storage (readers that list storage will not see commits)")
    serve.add_argument("--event-ttl", type=int, default=86_400,
                       help="seconds notification events are kept (Hive's hive.metastore.event.db.listener.timetolive)")
    serve.add_argument("--event-clean-interval", type=float, default=7_200,
                       help="seconds between deletions of expired notification events (0: never)")
    serve.set_defaults(fn=_serve)

    sync = sub.add_parser("sync-storage", help="mirror a Hudi table's timeline to storage now")
    sync.add_argument("table", metavar="<db.table>")
    sync.add_argument("--db-url", help=DB_URL_HELP)
    sync.add_argument("--warehouse", default="./warehouse", help="default root of database directories")
    sync.set_defaults(fn=_sync_storage)

    # import-hudi, validate, repair, stats, list-*, lookup-keys
    for command in (migrate, import_hudi, validate_repair, table_views, lookup_keys):
        command.add_parser(sub)

    db = sub.add_parser("db", help="manage the store's database schema")
    db_sub = db.add_subparsers(dest="db_command", required=True)
    up = db_sub.add_parser("upgrade", help="apply migrations")
    up.add_argument("--db-url", help=DB_URL_HELP)
    up.add_argument("--revision", default="head")
    up.set_defaults(fn=_db_upgrade)

    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(process)d %(levelname)s %(name)s %(message)s")
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
