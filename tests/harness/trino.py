"""Trino for the tests: one JVM per test session (``tools.trino``), with catalogs for our server
(``hive``, ``hudi``, ``iceberg``) and for the reference Hive Metastore 2.3 (``hive_ref``,
``hudi_ref``, ``iceberg_ref``).

Fixtures (imported by tests/conftest.py)
----------------------------------------
``trino_server``  the :class:`tools.trino.TrinoServer`, started once; a missing trino-server
                  artifact or Java 24+ skips (fails under ``CI=true``) naming the fetch command.
``trino_ref``     :class:`Engine` on the reference HMS's catalogs (session).
``trino_ours``    :class:`Engine` on our server's catalogs; follows the ``backend_url``
                  parametrization (the catalogs are re-created for each backend's server).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from .backends import ci_mode

CONNECTORS = ("hive", "hudi", "iceberg")
# The Trino tests run on these backends of our server (mark a test that uses our server with it).
ON_OUR_BACKENDS = pytest.mark.parametrize("backend_url", ["sqlite", "postgresql"], indirect=True,
                                          scope="session")


def _unavailable(reason: str):
    if ci_mode():
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


@dataclass
class Engine:
    """Trino's catalogs on one metastore: ``engine.hive`` is the Hive catalog's name, etc."""

    server: object  # tools.trino.TrinoServer
    suffix: str
    metastore_port: int
    server_log: Path | None = None  # our server's log (None for the reference)
    name: str = ""

    @property
    def hive(self) -> str:
        return f"hive{self.suffix}"

    @property
    def hudi(self) -> str:
        return f"hudi{self.suffix}"

    @property
    def iceberg(self) -> str:
        return f"iceberg{self.suffix}"

    def connect(self, catalog: str | None = None, schema: str | None = None):
        return self.server.connect(catalog, schema)

    def sql(self, statement: str, catalog: str | None = None, schema: str | None = None,
            columns: bool = False, session: dict | None = None) -> list[list]:
        """Run one statement; rows as lists (after a row of column names with ``columns``);
        ``session``: session properties. Trino's errors propagate."""
        conn = self.server.connect(catalog, schema, **({"session_properties": session} if session else {}))
        try:
            cur = conn.cursor()
            cur.execute(statement)
            rows = [list(r) for r in cur.fetchall()]
            if columns:
                rows.insert(0, [d[0] for d in cur.description or []])
            return rows
        finally:
            conn.close()

    def try_sql(self, statement: str, catalog: str | None = None, schema: str | None = None,
                columns: bool = False, session: dict | None = None) -> list[list] | str:
        """Rows, or ``"ERROR <error name>: <message>"`` (the message's first line)."""
        try:
            return self.sql(statement, catalog, schema, columns, session)
        except Exception as e:  # noqa: BLE001 - recorded as the step's result
            return error_text(e)

    def log_offset(self) -> int:
        if self.server_log is None or not self.server_log.exists():
            return 0
        return self.server_log.stat().st_size

    def failed_calls(self, since: int = 0) -> list[str]:
        """Our server's ``call=<method> ... status=<s>`` lines after byte ``since`` whose status is
        neither ok nor an answered ``NoSuchObjectException`` (what a missing object returns)."""
        if self.server_log is None or not self.server_log.exists():
            return []
        with open(self.server_log, "rb") as f:
            f.seek(since)
            text = f.read().decode(errors="replace")
        out = []
        for line in text.splitlines():
            m = re.search(r"call=(\S+) ms=\S+ status=(\S+)", line)
            if m and m.group(2) not in ("ok", "NoSuchObjectException"):
                out.append(f"call={m.group(1)} status={m.group(2)}")
        return out


def error_text(exc: BaseException) -> str:
    name = getattr(exc, "error_name", None) or type(exc).__name__
    message = getattr(exc, "message", None) or str(exc)
    return f"ERROR {name}: {message.splitlines()[0] if message else ''}"


# --------------------------------------------------------------------------- stop after last use

_STARTED: list = []  # the session's TrinoServer, once started
_LAST_USER: dict = {}  # nodeid of the last collected test that needs Trino


def pytest_collection_finish(session):
    """(hook, imported by tests/conftest.py) Remember the last test that uses Trino."""
    users = [it.nodeid for it in session.items if "trino_server" in getattr(it, "fixturenames", ())]
    _LAST_USER["nodeid"] = users[-1] if users else None


def pytest_runtest_logfinish(nodeid, location):
    """(hook) Stop the JVM right after the last test that uses it, not at the end of the run:
    it would otherwise keep a core busy a few percent and hold ~1 GB for the rest of the suite."""
    if nodeid == _LAST_USER.get("nodeid"):
        for server in _STARTED:
            server.stop()


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def trino_server(tmp_path_factory):
    """One single-node Trino 476 for the whole run (no catalogs until an Engine fixture adds them)."""
    from tools.trino import TrinoServer, TrinoStartError, TrinoUnavailable

    try:
        server = TrinoServer.start(tmp_path_factory.mktemp("trino"))
    except TrinoUnavailable as e:
        _unavailable(str(e))
    except TrinoStartError as e:
        pytest.fail(str(e), pytrace=False)
    print(f"\ntrino: up in {server.start_seconds} s on port {server.port} ({server.workdir})")
    _STARTED.append(server)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def trino_ref(trino_server, reference_hms):
    from tools.trino import catalogs_for

    t0 = time.monotonic()
    # The reference runs on embedded Derby, whose lock timeouts fail Trino's 20 concurrent
    # partition drops / statistics updates: one at a time there (our server keeps the default).
    # Its `lock` refuses Trino's requests (HMS 2.3: "Bug: operationType=UNSET", and its Derby
    # database has no transaction tables): Iceberg commits there go without the lock.
    trino_server.create_catalogs(catalogs_for(f"thrift://127.0.0.1:{reference_hms}", "_ref",
                                              metastore_writers=1, metastore_drops=1,
                                              iceberg_locking=False))
    print(f"\ntrino: reference catalogs in {time.monotonic() - t0:.1f} s")
    return Engine(trino_server, "_ref", reference_hms, None, "reference HMS 2.3")


@pytest.fixture(scope="session")
def trino_ours(trino_server, our_server_info):
    from tools.trino import catalogs_for

    t0 = time.monotonic()
    trino_server.create_catalogs(catalogs_for(f"thrift://127.0.0.1:{our_server_info.port}"))
    print(f"\ntrino: catalogs on our server in {time.monotonic() - t0:.1f} s")
    backend = our_server_info.db_url.split(":", 1)[0].split("+", 1)[0]
    engine = Engine(trino_server, "", our_server_info.port, Path(our_server_info.log_path),
                    f"our server ({backend})")
    yield engine
    if trino_server.alive():  # it may have been stopped after its last test already
        trino_server.drop_catalogs(CONNECTORS)
