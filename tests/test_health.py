"""`/healthz` and `/readyz` on the worker's HTTP port (every worker's with --workers), and fb303
getStatus following readiness: a schema at another revision, a database that refuses connections."""

from __future__ import annotations

import os
import sqlite3
import time
import urllib.error
import urllib.request

import pytest

from tests.harness import (
    create_database,
    drop_database,
    free_port,
    free_ports,
    open_thrift_client,
    start_our_server,
    stop_process,
)
from thrift_idl.fb303.ttypes import fb_status


def get(port: int, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def wait_for(fn, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


def status_of(port: int) -> tuple[int, str]:
    client, transport = open_thrift_client(port)
    try:
        return client.getStatus(), client.getStatusDetails()
    finally:
        transport.close()


def _set_revision(db: str, revision: str) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE alembic_version SET version_num = ?", (revision,))


def test_ready_then_not_ready_on_another_schema_revision(tmp_path):
    db = tmp_path / "m.db"
    http = free_port()
    port, proc = start_our_server(f"sqlite:///{db}", tmp_path, extra_args=["--metrics-port", str(http)])
    try:
        assert get(http, "/healthz") == (200, "ok\n")
        code, text = wait_for(lambda: (r := get(http, "/readyz"))[0] == 200 and r) or get(http, "/readyz")
        assert code == 200 and text.startswith("ready: database reachable"), text
        assert status_of(port)[0] == fb_status.ALIVE
        _set_revision(str(db), "0006")  # e.g. another version's server migrated it
        code, text = wait_for(lambda: (r := get(http, "/readyz"))[0] == 503 and r) or get(http, "/readyz")
        assert code == 503 and "revision 0006" in text and "db upgrade" in text, text
        st, detail = status_of(port)
        assert st == fb_status.WARNING and "revision 0006" in detail
        assert get(http, "/healthz") == (200, "ok\n")  # the process is up all the same
        from store.db.migrations import head_revision

        _set_revision(str(db), head_revision() or "")
        assert wait_for(lambda: get(http, "/readyz")[0] == 200)
        assert status_of(port)[0] == fb_status.ALIVE
    finally:
        stop_process(proc)


def test_every_worker_answers_health(tmp_path):
    http = free_ports(2)  # worker 1 answers on the next port
    port, proc = start_our_server(f"sqlite:///{tmp_path / 'm.db'}", tmp_path,
                                  extra_args=["--workers", "2", "--metrics-port", str(http)])
    try:
        for p in (http, http + 1):
            assert wait_for(lambda p=p: get(p, "/readyz")[0] == 200), p
            assert get(p, "/healthz") == (200, "ok\n")
    finally:
        stop_process(proc)


def test_not_ready_while_postgresql_refuses_connections(tmp_path):
    admin = os.environ.get("HMS_TEST_POSTGRES_URL")
    if not admin:
        if os.environ.get("CI"):
            pytest.fail("HMS_TEST_POSTGRES_URL is not set")
        pytest.skip("HMS_TEST_POSTGRES_URL is not set")
    name, url = create_database("postgresql", admin)
    from sqlalchemy import create_engine, text

    adm = create_engine(admin, isolation_level="AUTOCOMMIT")

    def allow(on: bool) -> None:
        with adm.connect() as c:
            c.execute(text(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {"true" if on else "false"}'))
            if not on:
                c.execute(text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"),
                          {"n": name})

    http = free_port()
    port, proc = start_our_server(url, tmp_path, extra_args=["--metrics-port", str(http)])
    try:
        assert wait_for(lambda: get(http, "/readyz")[0] == 200)
        allow(False)
        code, text_ = wait_for(lambda: (r := get(http, "/readyz"))[0] == 503 and r) or get(http, "/readyz")
        assert code == 503 and "database unreachable" in text_, text_
        assert status_of(port)[0] == fb_status.WARNING
        allow(True)
        assert wait_for(lambda: get(http, "/readyz")[0] == 200)
        assert status_of(port)[0] == fb_status.ALIVE
    finally:
        stop_process(proc)
        allow(True)
        adm.dispose()
        drop_database("postgresql", admin, name)
