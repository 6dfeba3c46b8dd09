"""Test harness: start/stop metastores, provision backend databases, run Spark scripts.

Everything here imports without our server, the generated Thrift bindings, Docker or
testcontainers being present; optional pieces are imported lazily.
"""

from .backends import (
    BACKENDS,
    BackendUnavailable,
    BackendURL,
    FreshDatabase,
    backend_urls,
    ci_mode,
    create_database,
    create_fresh_database,
    drop_database,
)
from .procs import (
    REFERENCE_START,
    REPO_ROOT,
    VENV_PYTHON,
    CheckedServer,
    ServerStartError,
    free_port,
    free_ports,
    log_tail,
    port_open,
    run_killed_at,
    start_checked_server,
    start_our_server,
    start_reference_hms,
    stop_pid,
    stop_process,
    wait_for_port,
)
from .spark import SparkScriptError, metastore_uri_for, run_spark_script
from .thrift import open_thrift_client, thrift_client

__all__ = [
    "BACKENDS",
    "BackendUnavailable",
    "BackendURL",
    "FreshDatabase",
    "backend_urls",
    "ci_mode",
    "create_database",
    "create_fresh_database",
    "drop_database",
    "REFERENCE_START",
    "REPO_ROOT",
    "VENV_PYTHON",
    "ServerStartError",
    "CheckedServer",
    "start_checked_server",
    "free_port",
    "free_ports",
    "log_tail",
    "port_open",
    "run_killed_at",
    "start_our_server",
    "start_reference_hms",
    "stop_pid",
    "stop_process",
    "wait_for_port",
    "SparkScriptError",
    "metastore_uri_for",
    "run_spark_script",
    "open_thrift_client",
    "thrift_client",
]
