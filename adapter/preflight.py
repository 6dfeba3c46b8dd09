"""Checks the commands run before they open the store or a port, so that a wrong setting ends in one
clear line (CommandError, exit status 2) instead of a traceback from deep inside a driver."""

from __future__ import annotations

import errno
import os
import socket
from typing import TYPE_CHECKING

from adapter.secret_text import mask_secrets

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlalchemy.engine import URL

BACKENDS = ("sqlite", "postgresql", "mysql", "mariadb")
URL_EXAMPLES = "sqlite:///path/metastore.db, postgresql://user@host/db, mysql://user@host/db"


class CommandError(Exception):
    """What a command could not do, in one line for the user (exit status 2)."""


def parsed_url(url: str) -> URL:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        u = make_url(url)
    except (ArgumentError, ValueError) as exc:
        raise CommandError(mask_secrets(f"bad database URL {url!r}: {exc} (expected e.g. {URL_EXAMPLES})")) from None
    if u.get_backend_name() not in BACKENDS:
        raise CommandError(f"unsupported database {u.get_backend_name()!r} in the database URL "
                           f"(supported: SQLite, PostgreSQL, MySQL/MariaDB: {URL_EXAMPLES})")
    return u


def shown(url: str) -> str:
    """The URL as messages show it (no password)."""
    try:
        return parsed_url(url).render_as_string(hide_password=True)
    except CommandError:
        return "(bad URL)"


def check_sqlite_path(url: str, create: bool) -> None:
    """A SQLite file database must sit in an existing, writable directory; without `create` the
    file must exist already (commands other than serve and db upgrade never create one)."""
    u = parsed_url(url)
    if u.get_backend_name() != "sqlite" or not u.database or u.database == ":memory:" \
            or u.database.startswith("file:"):
        return
    path = os.path.abspath(u.database)
    folder = os.path.dirname(path)
    if os.path.exists(path):
        if os.path.isdir(path):
            raise CommandError(f"SQLite database {path} is a directory")
        if not os.access(path, os.R_OK | os.W_OK):
            raise CommandError(f"SQLite database {path} is not writable by this user")
    elif not create:
        raise CommandError(f"no SQLite database at {path} (this command does not create one: pass "
                           "--db-url of the server's database, or start `serve` on it first)")
    if not os.path.isdir(folder):
        raise CommandError(f"cannot create SQLite database {path}: directory {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise CommandError(f"cannot create SQLite database {path}: directory {folder} is not writable")


def check_port_free(host: str, port: int, what: str) -> None:
    """Fail early when another process listens on host:port (the real bind comes later)."""
    if port <= 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        infos = socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    probe = socket.socket(family, socket.SOCK_STREAM)
    try:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind(infos[0][4])
    except OSError as exc:
        reason = "the port is in use" if exc.errno == errno.EADDRINUSE else (exc.strerror or str(exc))
        raise CommandError(f"cannot listen on {host}:{port} ({what}): {reason}") from None
    finally:
        probe.close()


def connection_error(url: str, exc: BaseException) -> CommandError:
    """One line for a driver's connection failure, in the driver's words (without its hints)."""
    orig = getattr(exc, "orig", None) or exc
    lines = [ln.strip() for ln in str(orig).splitlines()
             if ln.strip() and not ln.strip().startswith(("Is the server running", "(Background on"))]
    reason = lines[0] if lines else type(orig).__name__
    for prefix in ("connection failed:", "FATAL:"):
        reason = reason.split(prefix, 1)[-1].strip()
    if reason.startswith("connection to server at ") and "failed:" in reason:
        reason = reason.split("failed:", 1)[1].strip()
    return CommandError(f"cannot use the database {shown(url)}: {reason}")


def open_engine(url: str) -> Engine:
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    from store.db.engine import make_engine

    parsed_url(url)
    try:
        return make_engine(url)
    except (NoSuchModuleError, ArgumentError, ImportError) as exc:
        raise CommandError(f"bad database URL {shown(url)}: {exc}") from None


def schema_revision(engine: Engine, url: str) -> str | None:
    """The store schema's Alembic revision (None: an empty database); CommandError when the
    database cannot be reached."""
    from sqlalchemy.exc import DBAPIError, OperationalError

    from store.db.migrations import current_revision

    try:
        return current_revision(engine)
    except (OperationalError, DBAPIError) as exc:
        raise connection_error(url, exc) from None


def check_schema(revision: str | None, url: str, empty_ok: bool) -> None:
    """The schema is this version's: CommandError names what to run when it is not."""
    from store.db.migrations import head_revision, known_revision

    if revision is None:
        if empty_ok:
            return
        raise CommandError(f"the database {shown(url)} holds no metastore (start `hudi-metastore serve` on it "
                           "once, or run `hudi-metastore db upgrade`)")
    if revision == head_revision():
        return
    if not known_revision(revision):
        raise CommandError(f"the database {shown(url)} has schema revision {revision}, unknown to this version "
                           "(written by a newer hudi-metastore?)")
    raise CommandError(f"the database {shown(url)} has schema revision {revision}, this version needs "
                       f"{head_revision()}: run `hudi-metastore db upgrade` first")
