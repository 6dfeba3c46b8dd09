"""Start-up and command errors end in one line on stderr and exit status 2 (a traceback only with
--debug): a port in use, an unreachable or missing database, a bad URL, a schema that needs
`db upgrade`, an unwritable SQLite path; and no command creates a database it was not asked for."""

from __future__ import annotations

import os
import socket
import uuid

import pytest

from adapter.preflight import CommandError
from tests.cli_helpers import assert_one_line_error, run_cli
from tests.harness import free_port


@pytest.fixture
def busy_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    yield s.getsockname()[1]
    s.close()


def test_thrift_port_in_use(tmp_path, busy_port):
    r = run_cli("serve", "--port", str(busy_port), "--db-url", f"sqlite:///{tmp_path}/m.db",
                "--warehouse", str(tmp_path / "wh"))
    assert_one_line_error(r, f"127.0.0.1:{busy_port}", "in use", "--port")
    assert not (tmp_path / "m.db").exists() and not (tmp_path / "wh").exists()  # checked before anything else


def test_metrics_port_in_use(tmp_path, busy_port):
    r = run_cli("serve", "--port", str(free_port()), "--metrics-port", str(busy_port), "--workers", "2",
                "--db-url", f"sqlite:///{tmp_path}/m.db")
    assert_one_line_error(r, f"127.0.0.1:{busy_port}", "in use", "worker 0")


def test_unreachable_database(tmp_path):
    closed = free_port()
    r = run_cli("serve", "--port", str(free_port()), "--db-url", f"postgresql://hms@127.0.0.1:{closed}/hms")
    assert_one_line_error(r, f"127.0.0.1:{closed}", "Connection refused")
    r = run_cli("serve", "--port", str(free_port()), "--db-url", f"mysql://hms@127.0.0.1:{closed}/hms")
    assert_one_line_error(r, "Connection refused")


def _other_database(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).set(database=f"missing_{uuid.uuid4().hex[:8]}").render_as_string(hide_password=False)


@pytest.mark.parametrize("variable, words", [("HMS_TEST_POSTGRES_URL", ["does not exist"]),
                                             ("HMS_TEST_MYSQL_URL", ["Unknown database"])])
def test_missing_database(tmp_path, variable, words):
    base = os.environ.get(variable)
    if not base:
        if os.environ.get("CI"):
            pytest.fail(f"{variable} is not set")
        pytest.skip(f"{variable} is not set")
    url = _other_database(base)
    r = run_cli("serve", "--port", str(free_port()), "--db-url", url)
    line = assert_one_line_error(r, url.rsplit("/", 1)[1].split("?")[0], *words)
    assert "password" not in line


@pytest.mark.parametrize("url, words", [
    ("not a url", ["bad database URL", "expected e.g."]),
    ("oracle://u@h/db", ["unsupported database 'oracle'"]),
    ("postgresql+nodriver://u@h/db", ["bad database URL"]),
    ("postgresql://u@h:notaport/db", ["bad database URL"]),
])
def test_bad_url(tmp_path, url, words):
    assert_one_line_error(run_cli("serve", "--port", str(free_port()), "--db-url", url), *words)


def test_schema_that_needs_db_upgrade(tmp_path):
    url = f"sqlite:///{tmp_path}/old.db"
    r = run_cli("db", "upgrade", "--db-url", url, "--revision", "0006")
    assert r.returncode == 0, r.stderr
    r = run_cli("serve", "--port", str(free_port()), "--db-url", url)
    assert_one_line_error(r, "revision 0006", "db upgrade")
    r = run_cli("sync-storage", "db.t", "--db-url", url)
    assert_one_line_error(r, "revision 0006", "db upgrade")


def test_unwritable_sqlite_path_creates_no_directories(tmp_path):
    missing = f"/nonexistent-{uuid.uuid4().hex[:8]}"
    r = run_cli("serve", "--port", str(free_port()), "--db-url", f"sqlite:///{missing}/x.db")
    assert_one_line_error(r, f"{missing}/x.db", "does not exist")
    assert not os.path.exists(missing)
    r = run_cli("db", "upgrade", "--db-url", f"sqlite:///{missing}/x.db")
    assert_one_line_error(r, "does not exist")
    assert not os.path.exists(missing)
    (tmp_path / "adir").mkdir()
    assert_one_line_error(run_cli("serve", "--port", str(free_port()), "--db-url", f"sqlite:///{tmp_path}/adir"),
                          "is a directory")


def test_sync_storage_elsewhere_creates_no_database(tmp_path):
    r = run_cli("sync-storage", "db.t", cwd=tmp_path)
    assert_one_line_error(r, "no SQLite database", str(tmp_path / "metastore.db"))
    assert list(tmp_path.iterdir()) == []


def test_sync_storage_of_an_empty_database(tmp_path):
    import sqlite3

    sqlite3.connect(tmp_path / "empty.db").close()
    r = run_cli("sync-storage", "db.t", "--db-url", f"sqlite:///{tmp_path}/empty.db")
    assert_one_line_error(r, "holds no metastore")
    # the same configuration as serve: the URL from the environment or a file
    r = run_cli("sync-storage", "db.t", cwd=tmp_path, env={"HUDI_METASTORE_DB_URL": f"sqlite:///{tmp_path}/empty.db"})
    assert_one_line_error(r, "holds no metastore", "empty.db")
    (tmp_path / "m.toml").write_text(f'db_url = "sqlite:///{tmp_path}/empty.db"\n')
    r = run_cli("--config", str(tmp_path / "m.toml"), "sync-storage", "db.t", cwd=tmp_path)
    assert_one_line_error(r, "holds no metastore", "empty.db")


def test_debug_shows_the_traceback(tmp_path):
    r = run_cli("--debug", "serve", "--port", str(free_port()), "--db-url", "oracle://u@h/db")
    assert r.returncode != 0 and "Traceback" in r.stderr and "CommandError" in r.stderr
    r = run_cli("serve", "--debug", "--port", str(free_port()), "--db-url", "oracle://u@h/db")
    assert "Traceback" in r.stderr


def test_warehouse_urls_are_left_alone(tmp_path):
    from adapter.serve import prepare_warehouse

    assert prepare_warehouse("s3://bucket/warehouse/") == "s3://bucket/warehouse"
    assert not os.path.exists("s3:")
    assert prepare_warehouse(f"file:{tmp_path}/wh") == f"{tmp_path}/wh" and (tmp_path / "wh").is_dir()
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(CommandError, match="cannot create the warehouse"):
        prepare_warehouse(f"{tmp_path}/a-file/wh")


def test_start_lines_are_ours(tmp_path):
    """A first start on an empty database logs only our own lines (no Alembic INFO lines)."""
    from tests.harness import start_our_server, stop_process

    port, proc = start_our_server(f"sqlite:///{tmp_path / 'm.db'}", tmp_path)
    stop_process(proc)
    lines = [ln for ln in proc.log_path.read_text().splitlines() if ln.strip()]
    assert any("creating the store schema" in ln for ln in lines), lines
    loggers = {ln.split()[4] for ln in lines}
    assert loggers <= {"hudi_metastore.serve", "hudi_metastore.server"}, lines
