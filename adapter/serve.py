"""`hudi-metastore serve`: check the settings (ports, database, schema) so that a wrong one ends in one
line, prepare the store, then run the Thrift server (adapter/server.py) with its HTTP endpoints."""

from __future__ import annotations

import gc
import logging
import os

from adapter import preflight
from adapter.preflight import CommandError

log = logging.getLogger("hudi_metastore.serve")


def check_ports(args) -> None:
    preflight.check_port_free(args.host, args.port, "the Thrift port, --port")
    if args.metrics_port > 0:
        for slot in range(max(args.workers, 1)):
            preflight.check_port_free(args.metrics_host, args.metrics_port + slot,
                                      f"the HTTP port of worker {slot}, --metrics-port")


def configure_http(args) -> None:
    """Bind address, TLS and bearer token of the HTTP port (adapter/metrics_http.py); one line on error."""
    import ssl

    from adapter import metrics_http

    try:
        metrics_http.configure(metrics_http.HttpAccess.from_settings(
            args.metrics_host, args.metrics_token_file, args.metrics_tls_cert, args.metrics_tls_key))
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    except (OSError, ssl.SSLError) as exc:
        raise CommandError(f"the HTTP port's TLS or token files: {getattr(exc, 'strerror', None) or exc}") from None


def prepare_store(url: str) -> None:
    """Create the schema in an empty database; refuse one at another revision."""
    from store.db.migrations import upgrade

    preflight.check_sqlite_path(url, create=True)
    engine = preflight.open_engine(url)
    try:
        revision = preflight.schema_revision(engine, url)
        preflight.check_schema(revision, url, empty_ok=True)
        if revision is None:
            log.info("empty database: creating the store schema")
            upgrade(engine)
    finally:
        engine.dispose()


def prepare_warehouse(warehouse: str) -> str:
    """A local warehouse: its absolute path, created; an object store URL (s3://...): unchanged."""
    from urllib.parse import urlparse

    if urlparse(warehouse).scheme not in ("", "file"):
        return warehouse.rstrip("/")
    path = os.path.abspath(warehouse[len("file:"):] if warehouse.startswith("file:") else warehouse)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise CommandError(f"cannot create the warehouse {path}: {exc.strerror or exc}") from None
    from store.storage.warehouse import mark_top

    mark_top(path)  # it holds databases' and default tables' directories
    return path


def _connection_security(args):
    from adapter.security.settings import ConnectionSecurity, SecuritySettingsError

    try:
        security = ConnectionSecurity.from_args(args)
    except SecuritySettingsError as exc:
        raise CommandError(str(exc)) from None
    return security


def serve(args, url: str) -> int:
    from adapter import metrics_http
    from adapter.app import build_router
    from adapter.readiness import Readiness
    from adapter.server import Limits, run
    from store.services import open_services

    preflight.parsed_url(url)
    configure_http(args)
    check_ports(args)
    security = _connection_security(args)
    prepare_store(url)
    warehouse = prepare_warehouse(args.warehouse)
    services = open_services(url, warehouse)
    services.tables.ensure_default_database()  # as Hive's metastore does on start
    log.info("Thrift port: %s", security.describe())  # (after the checks: their errors stay one line)
    services.close()
    # Answers build many short-lived objects without cycles (10,000 partitions: ~150,000), which
    # refcounting frees; the default threshold (700) runs the cycle collector dozens of times per
    # large answer. Collect less often, and never scan what startup loaded.
    gc.set_threshold(50_000, 20, 100)
    gc.freeze()

    from adapter import audit_log
    from adapter.authorization import AuthorizationSettings
    authorization = AuthorizationSettings.from_args(args)
    log.info("authorization is %s%s", "on" if authorization.on else "off",
             " (without authentication: set_ugi names the caller; trusted networks only)"
             if authorization.on and (getattr(args, "auth", None) or "none") == "none" else "")

    def make_router():  # in each worker process
        audit_log.configure(args.audit_log)
        services = open_services(
            url, warehouse, statement_timeout_s=args.statement_timeout,
            lock_timeout_ms=int(args.lock_timeout * 1000),
            mirror=not args.no_storage_mirror,
            mirror_interval_s=args.mirror_interval if args.mirror_interval > 0 else None,
            watch_interval_s=args.watch_interval if getattr(args, "watch_interval", 0) > 0 else None,
            notification_ttl_s=args.event_ttl, notification_clean_interval_s=args.event_clean_interval,
            storage_roots=[r.strip() for r in (args.storage_roots or "").split(",") if r.strip()],
            external_locations=[r.strip() for r in (getattr(args, "external_locations", "") or "").split(",")
                                if r.strip()])
        readiness = Readiness(services.store)
        if args.metrics_port > 0:
            from adapter.console.app import Console

            metrics_http.attach(readiness, Console(services, readiness))
        return build_router(services, readiness, authorization)

    try:
        limits = Limits(framed=args.framed, max_message_size=args.max_message_size,
                        max_connections=args.max_connections, read_timeout=args.read_timeout,
                        idle_timeout=args.idle_timeout, max_inflight_bytes=args.max_inflight_bytes)
        run(make_router, args.host, args.port, workers=args.workers, limits=limits, metrics_port=args.metrics_port,
            security=security)
    except OSError as exc:  # lost a port to another process since check_ports
        raise CommandError(f"cannot listen on {args.host}: {exc.strerror or exc}") from None
    return 0
