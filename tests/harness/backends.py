"""Database backends for our server: SQLite, PostgreSQL and MariaDB/MySQL.

* sqlite      -- always available: ``sqlite:///<tmp>/metastore.db``.
* postgresql  -- ``HMS_TEST_POSTGRES_URL`` (e.g. ``postgresql+psycopg://postgres@127.0.0.1:5432/test``)
* mysql       -- ``HMS_TEST_MYSQL_URL`` (e.g. ``mysql+pymysql://root@127.0.0.1:3306/test``)

When a URL variable is unset the database is started with testcontainers if a Docker engine is
reachable; otherwise the backend is unavailable: tests skip with the reason, except under
``CI=true`` where they must fail (see :func:`ci_mode`).

Every test session gets a fresh database (``hms_<random>``) created through SQLAlchemy on the
admin URL and dropped afterwards.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

BACKENDS = ("sqlite", "postgresql", "mysql")
ENV_VARS = {"postgresql": "HMS_TEST_POSTGRES_URL", "mysql": "HMS_TEST_MYSQL_URL"}
# Images used when falling back to testcontainers.
DOCKER_IMAGES = {
    "postgresql": os.environ.get("HMS_TEST_POSTGRES_IMAGE", "postgres:16-alpine"),
    "mysql": os.environ.get("HMS_TEST_MYSQL_IMAGE", "mariadb:11"),
}
DRIVERS = {"postgresql": "postgresql+psycopg", "mysql": "mysql+pymysql"}


class BackendUnavailable(RuntimeError):
    """The backend cannot be provided here; ``str(exc)`` says why."""


def ci_mode() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


@dataclass
class BackendURL:
    """How to obtain a database for one backend.

    ``source`` is ``"sqlite"``, ``"env"`` (``admin_url`` from the environment), ``"docker"``
    (testcontainers) or ``"unavailable"`` (``reason`` says why).
    """

    name: str
    source: str
    admin_url: str | None = None
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.source != "unavailable"


def docker_available() -> tuple[bool, str]:
    """Whether a Docker engine answers (and testcontainers is importable)."""
    if importlib.util.find_spec("testcontainers") is None:
        return False, "testcontainers is not installed"
    try:
        import docker  # type: ignore

        docker.from_env(timeout=5).ping()
        return True, ""
    except ImportError:
        pass
    except Exception as e:
        return False, f"no Docker engine reachable ({type(e).__name__}: {str(e)[:120]})"
    if not shutil.which("docker"):
        return False, "no Docker engine reachable (docker CLI not found)"
    try:
        r = subprocess.run(["docker", "info"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"no Docker engine reachable ({e})"
    if r.returncode != 0:
        return False, "no Docker engine reachable (`docker info` failed)"
    return True, ""


def backend_urls() -> dict[str, BackendURL]:
    """Resolve every backend from the environment (no database is created here)."""
    out = {"sqlite": BackendURL("sqlite", "sqlite")}
    docker_state: tuple[bool, str] | None = None
    for name in ("postgresql", "mysql"):
        var = ENV_VARS[name]
        url = os.environ.get(var, "").strip()
        if url:
            out[name] = BackendURL(name, "env", admin_url=url)
            continue
        if docker_state is None:
            docker_state = docker_available()
        ok, why = docker_state
        if ok:
            out[name] = BackendURL(name, "docker")
        else:
            out[name] = BackendURL(
                name, "unavailable",
                reason=f"{var} is not set and {why}; set {var} (e.g. "
                       f"{'postgresql+psycopg://postgres@127.0.0.1:5432/test' if name == 'postgresql' else 'mysql+pymysql://root@127.0.0.1:3306/test'}"
                       ", as README.md and .ci/services.sh: an existing database, used to create a fresh one)",
            )
    return out


# --------------------------------------------------------------------------- fresh databases


@dataclass
class FreshDatabase:
    name: str  # backend name
    url: str  # URL to hand to the server (password included)
    database: str | None = None
    _cleanups: list[Callable[[], None]] = field(default_factory=list, repr=False)

    def drop(self) -> None:
        while self._cleanups:
            fn = self._cleanups.pop()
            try:
                fn()
            except Exception as e:  # best effort, never mask the test result
                print(f"warning: cleanup of {self.name} database {self.database} failed: {e}")


def _url_with_database(admin_url: str, database: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(admin_url).set(database=database).render_as_string(hide_password=False)


def _admin_engine(admin_url: str):
    from sqlalchemy import create_engine
    from sqlalchemy.pool import NullPool

    return create_engine(admin_url, isolation_level="AUTOCOMMIT", poolclass=NullPool)


def create_database(backend: str, admin_url: str, database: str | None = None,
                    template: str | None = None) -> tuple[str, str]:
    """CREATE DATABASE ``hms_<random>`` via ``admin_url``, empty or (``template``) a copy of that
    database's schema and rows; returns ``(database, server_url)``."""
    from sqlalchemy import text

    database = database or f"hms_{secrets.token_hex(5)}"
    engine = _admin_engine(admin_url)
    try:
        with engine.connect() as conn:
            if backend == "postgresql":
                source = template or "template0"
                conn.execute(text(f'CREATE DATABASE "{database}" ENCODING \'UTF8\' TEMPLATE "{source}"'))
            else:
                conn.execute(text(f"CREATE DATABASE `{database}` CHARACTER SET utf8mb4"))
                if template:
                    try:
                        _copy_mysql_schema(conn, template, database)
                    except Exception:
                        conn.execute(text(f"DROP DATABASE IF EXISTS `{database}`"))
                        raise
    finally:
        engine.dispose()
    return database, _url_with_database(admin_url, database)


def drop_database(backend: str, admin_url: str, database: str) -> None:
    from sqlalchemy import text

    engine = _admin_engine(admin_url)
    try:
        with engine.connect() as conn:
            if backend == "postgresql":
                conn.execute(text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = :d AND pid <> pg_backend_pid()"), {"d": database})
                conn.execute(text(f'DROP DATABASE IF EXISTS "{database}"'))
            else:
                conn.execute(text(f"DROP DATABASE IF EXISTS `{database}`"))
    finally:
        engine.dispose()


# --------------------------------------------------------------------------- schema templates

#: where the lock that serializes building a template lives (shared by pytest-xdist workers)
_TEMPLATE_LOCK = Path(os.environ.get("TMPDIR", "/tmp")) / "hms-test-schema-template.lock"


def _migrations_key() -> str:
    """A digest of the migrations: a template is reused only by the migrations that made it."""
    import hashlib

    root = Path(__file__).resolve().parents[2] / "store" / "db" / "migrations"
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:12]


def schema_template(backend: str, admin_url: str) -> str:
    """The name of a database on the server of ``admin_url`` that holds the store schema at head,
    made once by running every migration (so the migrations still run in every test session that
    did not find one) and reused while the migrations are unchanged."""
    import fcntl

    from sqlalchemy import create_engine, text

    from store.db.migrations import current_revision, head_revision, upgrade

    name = f"hms_tmpl_{_migrations_key()}"
    _TEMPLATE_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(_TEMPLATE_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        admin = _admin_engine(admin_url)
        try:
            with admin.connect() as conn:
                if backend == "postgresql":
                    existing = [r[0] for r in conn.execute(text(
                        "SELECT datname FROM pg_database WHERE datname LIKE 'hms\\_tmpl\\_%'"))]
                else:
                    existing = [r[0] for r in conn.execute(text("SHOW DATABASES LIKE 'hms\\_tmpl\\_%'"))]
        finally:
            admin.dispose()
        if name in existing:
            engine = create_engine(_url_with_database(admin_url, name), poolclass=_null_pool())
            try:
                complete = current_revision(engine) == head_revision()
            finally:
                engine.dispose()
            if complete:
                return name
            drop_database(backend, admin_url, name)  # an interrupted build
        # templates of other migrations (another checkout) are left alone: one may be in use
        create_database(backend, admin_url, name)
        engine = create_engine(_url_with_database(admin_url, name), poolclass=_null_pool())
        try:
            upgrade(engine)
        finally:
            engine.dispose()
        return name


def _null_pool():
    from sqlalchemy.pool import NullPool

    return NullPool


def create_migrated_database(backend: str, admin_url: str) -> tuple[str, str]:
    """A new database holding a copy of :func:`schema_template`'s schema and rows; returns
    ``(database, server_url)``. PostgreSQL copies the template database; MariaDB has no templates,
    so its tables are made from the template's own ``SHOW CREATE TABLE`` and filled from it, its
    triggers made after the rows (a third of a second instead of four to five for the migrations)."""
    return create_database(backend, admin_url, template=schema_template(backend, admin_url))


def _copy_mysql_schema(conn, template: str, database: str) -> None:
    from sqlalchemy import text

    tables = [r[0] for r in conn.execute(text(f"SHOW FULL TABLES FROM `{template}` WHERE Table_type = 'BASE TABLE'"))]
    conn.execute(text("SET SESSION foreign_key_checks = 0"))
    try:
        conn.execute(text(f"USE `{database}`"))
        for table in tables:
            ddl = conn.execute(text(f"SHOW CREATE TABLE `{template}`.`{table}`")).one()[1]
            conn.execute(text(ddl))
        for table in tables:
            if conn.execute(text(f"SELECT 1 FROM `{template}`.`{table}` LIMIT 1")).first() is not None:
                conn.execute(text(f"INSERT INTO `{table}` SELECT * FROM `{template}`.`{table}`"))
        for (trigger,) in conn.execute(text(f"SELECT trigger_name FROM information_schema.triggers "
                                            f"WHERE trigger_schema = '{template}'")).all():
            conn.execute(text(conn.execute(text(f"SHOW CREATE TRIGGER `{template}`.`{trigger}`")).one()[2]))
    finally:
        conn.execute(text("SET SESSION foreign_key_checks = 1"))


def _start_container(backend: str) -> tuple[str, Callable[[], None]]:
    """Start a throwaway database container; returns (admin_url, stop)."""
    if backend == "postgresql":
        from testcontainers.postgres import PostgresContainer  # type: ignore

        c = PostgresContainer(DOCKER_IMAGES[backend], username="postgres", password="postgres",
                              dbname="postgres")
        c.start()
        host, port = c.get_container_host_ip(), c.get_exposed_port(5432)
        url = f"{DRIVERS[backend]}://postgres:postgres@{host}:{port}/postgres"
    else:
        from testcontainers.mysql import MySqlContainer  # type: ignore

        c = MySqlContainer(DOCKER_IMAGES[backend], username="root", password="test",
                           dbname="test")
        c.start()
        host, port = c.get_container_host_ip(), c.get_exposed_port(3306)
        url = f"{DRIVERS[backend]}://root:test@{host}:{port}/test"
    return url, c.stop


def create_fresh_database(spec: BackendURL, tmpdir: Path | str, migrated: bool = False) -> FreshDatabase:
    """Provision a database for one server instance; call ``.drop()`` when done. Empty, or with
    ``migrated`` (PostgreSQL, MariaDB) a copy of the store schema at head (see ``schema_template``):
    what a server makes of an empty database before it serves, without running every migration."""
    tmpdir = Path(tmpdir)
    if spec.source == "unavailable":
        raise BackendUnavailable(spec.reason)
    if spec.source == "sqlite":
        tmpdir.mkdir(parents=True, exist_ok=True)
        return FreshDatabase("sqlite", f"sqlite:///{tmpdir / 'metastore.db'}")
    fresh = FreshDatabase(spec.name, "")
    admin_url = spec.admin_url
    if spec.source == "docker":
        admin_url, stop = _start_container(spec.name)
        fresh._cleanups.append(stop)
    assert admin_url
    try:
        if migrated:
            database, url = create_migrated_database(spec.name, admin_url)
        else:
            database, url = create_database(spec.name, admin_url)
    except Exception:
        fresh.drop()
        raise
    fresh.database, fresh.url = database, url
    fresh._cleanups.append(lambda: drop_database(spec.name, admin_url, database))
    return fresh
