"""Shared fixtures: the reference Hive Metastore, our server on each backend, Thrift clients.

Session-scoped fixtures
-----------------------
``reference_hms``   port of a reference Hive Metastore 2.3.10 (embedded Derby), started once.
``reference_version`` parametrized over the reference Hive versions ("2.3", "4"; ids hive2.3 / hive4).
``reference_hms_pool`` ``.port(version)``: the reference metastore of that version, started on first
                    use, one JVM per version per session (``reference_hms`` is its "2.3").
``backend_url``     parametrized over sqlite / postgresql / mysql; a *fresh* database per session
                    (``hms_<random>`` created on the admin URL and dropped at the end).
``our_server``      port of ``python -m adapter.cli serve`` running on ``backend_url``.
``our_server_info`` the same server with its process, log path, warehouse and database URL.

Function-scoped
---------------
``thrift_client``   factory ``connect(port) -> ThriftHiveMetastore.Client``; connections are
                    closed at the end of the test.
``cf``              our server and the reference metastore as a conformance pair
                    (tests/conformance/compare.py; tests/test_conformance_*.py).

Environment
-----------
``HMS_TEST_POSTGRES_URL`` / ``HMS_TEST_MYSQL_URL``  admin URLs of the database servers; when unset
the database is started with testcontainers if Docker is reachable, else the backend is skipped
(``CI=true``: it fails instead).  ``HMS_REFERENCE_START`` overrides the reference launcher path
(default tools/reference-hms.sh).  The Hive 4 reference needs ``python -m tools.java_artifacts fetch
hive4-metastore``; without it its tests skip (``CI=true``: fail).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

_REPO_ROOT = Path(__file__).resolve().parents[1]
if str(_REPO_ROOT) not in sys.path:  # make `tests.harness` and the project importable
    sys.path.insert(0, str(_REPO_ROOT))

from tests.harness import (  # noqa: E402 - importable once the repository root is on sys.path
    BACKENDS,
    BackendUnavailable,
    ServerStartError,
    backend_urls,
    ci_mode,
    create_fresh_database,
    jvm,
    log_tail,
    open_thrift_client,
    properties,  # noqa: E402
    start_our_server,
    start_reference_hms,
    stop_process,
)
from tests.harness.object_store import configure_environment, start_object_store  # noqa: E402
from tests.harness.procs import REFERENCE_VERSIONS  # noqa: E402
from tests.harness.trino import pytest_collection_finish, pytest_runtest_logfinish, trino_ours, trino_ref, trino_server  # noqa: E402,F401 (Trino fixtures and the hooks that stop it early)


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running test (starts JVMs / Spark)")
    config.addinivalue_line("markers", "spark: runs PySpark against a metastore")
    config.addinivalue_line("markers", "hive_versions(*versions): run only against these reference Hive versions")
    config.addinivalue_line("markers", "backends(*names): run only on these backends")
    config.addinivalue_line("markers", "backends_in_turn(*names): each case (a test and its other parameters) "
                            "runs on one backend, these (default: all) taken in turn through the module; "
                            "on all in the thorough run")
    config.addinivalue_line("markers", "backends_by_run(*names): each case runs on one backend, these (default: "
                            "all) drawn by the run; on all in the thorough and replay runs")
    configure_environment()  # before servers and Spark start: they inherit the object store's endpoint
    properties.load()  # the hypothesis profile (HYPOTHESIS_PROFILE: ci, thorough, replay)
    os.environ["SPARK_SUBMIT_OPTS"] = jvm.spark_submit_opts()  # Spark drivers started by tests inherit it
    # ... and the reference metastores the benchmarks' smoke tests start (bench/procs.py) these options,
    # as the suite's own (tests/harness/procs.py reference_env)
    os.environ.setdefault("HMS_REFERENCE_JAVA_OPTS", " ".join(jvm.java_flags()))
    # every partition list the database concatenates is checked against the one built from the rows
    # (store/hms/partitions/partition_wire.py): a write that left stale parts fails the test that lists
    os.environ.setdefault("HMS_WIRE_CHECK", "1")
    # ... and this PYTHONPATH: their Python workers' daemon is the suite's (tests/spark/pyspark_daemon.py)
    root = str(_REPO_ROOT)
    if root not in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])
    if not hasattr(config, "workerinput"):  # the controller (or the only process): once per run
        jvm.start_background_build()


@pytest.fixture(autouse=True)
def _spark_submit_opts():
    """Picks up a class-data-sharing archive made while the run goes on (tests/harness/jvm.py)."""
    os.environ["SPARK_SUBMIT_OPTS"] = jvm.spark_submit_opts()


# parameters that name a reference version / a backend, and the marker that narrows each
_NARROWED_PARAMS = {"reference_version": "hive_versions", "backend_url": "backends", "backend": "backends"}


# tryfirst: pytest-xdist reads the group marks in its own pytest_collection_modifyitems (a worker's
# nodeids get their "@group" there); marks added after it group nothing
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Tests that only apply to some reference versions or backends are not generated for the others
    (deselected at collection, not skipped at run time: a skip would read as an untested case); the
    rest get their xdist group."""
    keep, dropped = [], []
    turns: dict[object, dict] = {}  # module -> its tests' cases (test, other parameters), numbered in order
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        applies = True
        for param, marker_name in _NARROWED_PARAMS.items():
            marker = item.get_closest_marker(marker_name)
            if marker is not None and param in params and params[param] not in marker.args:
                applies = False
        in_turn = item.get_closest_marker("backends_in_turn")
        if applies and in_turn is not None and "backend_url" in params and not properties.thorough():
            names, case_id = _one_backend_of(item, in_turn, params)
            cases = turns.setdefault(item.path, {})
            case = cases.setdefault(case_id, len(cases))
            applies = params["backend_url"] == names[case % len(names)]
        by_run = item.get_closest_marker("backends_by_run")
        if applies and by_run is not None and "backend_url" in params and properties.PROFILE == "ci":
            names, case_id = _one_backend_of(item, by_run, params)
            applies = params["backend_url"] == properties.drawn(names, repr(case_id))
        (keep if applies else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    mark_xdist_groups(items)


#: pytest-xdist groups (``--dist loadgroup``): the tests that share an expensive JVM run in one
#: worker, so it starts once per run, not once per worker. First matching fixture wins.
_XDIST_GROUPS = (("trino_server", "trino"), ("spark", "spark"))


def _one_backend_of(item, marker, params: dict) -> tuple[list[str], tuple]:
    """For the markers that run a case on one backend: the backends to choose from (the marker's,
    default all, among those a `backends` marker leaves the test) and the case (the test and its
    other parameters)."""
    names = [b for b in (marker.args or BACKENDS) if b in BACKENDS] or list(BACKENDS)
    narrowed = item.get_closest_marker("backends")
    if narrowed is not None:
        names = [b for b in names if b in narrowed.args] or [b for b in BACKENDS if b in narrowed.args]
    return names, (item.originalname, tuple(sorted((k, repr(v)) for k, v in params.items() if k != "backend_url")))


def mark_xdist_groups(items) -> None:
    """Marks each test of a group (inert without xdist). Not a hook of its own: pytest registers only
    a conftest's `pytest_*` names, and this one, once a hook by `specname`, never ran (until 2026-12-03
    Trino, the Hive 4 reference and each backend's pipeline Spark started in both workers)."""
    for item in items:
        names = getattr(item, "fixturenames", ())
        group = next((g for fixture, g in _XDIST_GROUPS if fixture in names), None)
        if item.path.name.startswith("test_trino_"):  # also those that reach Trino through a fixture's
            group = "trino"  # getfixturevalue, which fixturenames does not show
        params = getattr(getattr(item, "callspec", None), "params", {})
        if group == "spark" and "backend_url" in params:  # a Spark driver per worker is cheap next to
            group = f"spark-{params['backend_url']}"  # the pipeline tests: spread them by backend
        if group is None and (params.get("reference_version") == "4" or "hive4_reference" in names):
            group = "hive4"  # the Hive 4 reference metastore: about a minute to start
        # a file's own group stays whole (xdist would join both names into a third group)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: ``HMS_TEST_WORKERS``, else one worker more than the cores, at most 3 (each may
    run a Spark driver, reference metastores and servers: about 3 GB). The third worker on two cores
    fills the time a worker waits (a killed server's restart, a cluster's failover, a database's
    answer): docs/testing.md, "What keeps the run short"."""
    if os.environ.get("HMS_TEST_WORKERS"):
        return int(os.environ["HMS_TEST_WORKERS"])
    return max(1, min((os.cpu_count() or 1) + 1, 3))


def _unavailable(reason: str):
    """Skip, or fail under CI=true (CI must exercise every backend)."""
    if ci_mode():
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(reason)


# --------------------------------------------------------------------------- reference HMS


class _ReferencePool:
    """Reference metastores started on first use: one JVM per Hive version per session."""

    def __init__(self, tmp_path_factory):
        self._factory = tmp_path_factory
        self._ports: dict[str, int] = {}
        self._stops: list = []
        self._missing: dict[str, str] = {}
        self._failed: dict[str, Exception] = {}

    def port(self, hive: str) -> int:
        if hive in self._missing:
            _unavailable(self._missing[hive])
        if hive in self._failed:  # do not try again for every test
            raise self._failed[hive]
        if hive not in self._ports:
            tmpdir = self._factory.mktemp(f"reference-hms-{hive}")
            try:
                port, stop = start_reference_hms(tmpdir, hive=hive)
            except FileNotFoundError as e:
                self._missing[hive] = str(e)
                _unavailable(str(e))
            except Exception as e:  # noqa: BLE001
                self._failed[hive] = e
                raise
            self._ports[hive] = port
            self._stops.append(stop)
        return self._ports[hive]

    def stop_all(self) -> None:
        for stop in self._stops:
            stop()


@pytest.fixture(scope="session")
def reference_hms_pool(tmp_path_factory):
    pool = _ReferencePool(tmp_path_factory)
    try:
        yield pool
    finally:
        pool.stop_all()


@pytest.fixture(scope="session")
def reference_hms(reference_hms_pool):
    """Port of a reference Hive Metastore 2.3.10 started for this session."""
    return reference_hms_pool.port("2.3")


@pytest.fixture(scope="session", params=REFERENCE_VERSIONS, ids=lambda v: f"hive{v}")
def reference_version(request):
    """A reference Hive version ("2.3" or "4"); tests using it run once per version."""
    return request.param


# --------------------------------------------------------------------------- backends


@pytest.fixture(scope="session")
def backend_specs():
    return backend_urls()


def _fresh_url(spec, where):
    """A fresh database of `spec` (dropped after the caller's test or session), as a generator."""
    try:
        fresh = create_fresh_database(spec, where, migrated=True)
    except BackendUnavailable as e:
        _unavailable(str(e))
    try:
        yield fresh.url
    finally:
        fresh.drop()


@pytest.fixture(scope="session", params=BACKENDS)
def backend_url(request, backend_specs, tmp_path_factory):
    """A SQLAlchemy URL of a fresh, empty database on one backend."""
    spec = backend_specs[request.param]
    if not spec.available:
        _unavailable(f"{request.param} backend unavailable: {spec.reason}")
    yield from _fresh_url(spec, tmp_path_factory.mktemp(f"db-{request.param}"))


@pytest.fixture
def own_backend_url(backend_url, backend_specs, tmp_path):
    """A fresh database of `backend_url`'s backend for one test (for a server of its own, whose
    settings must not shape the shared database, e.g. the default database's location)."""
    kind = next(k for k in ("sqlite", "postgresql", "mysql") if backend_url.startswith(k))
    yield from _fresh_url(backend_specs[kind], tmp_path / f"own-db-{kind}")


# --------------------------------------------------------------------------- our server


@dataclass
class ServerInfo:
    port: int
    proc: object
    log_path: Path
    warehouse: Path
    db_url: str

    def log_tail(self, lines: int = 80) -> str:
        return log_tail(self.log_path, lines)

    def alive(self) -> bool:
        return self.proc.poll() is None


@pytest.fixture
def sqlite_services(tmp_path):
    """The store's services in process on a SQLite file in `tmp_path` (the warehouse `tmp_path/wh`),
    with a database `db`."""
    from contextlib import closing

    from store.db.database import Store
    from store.db.migrations import upgrade
    from store.services import build_services
    from thrift_idl.hive_metastore.ttypes import Database

    store = Store(f"sqlite:///{tmp_path / 'm.db'}", str(tmp_path / "wh"))
    upgrade(store.engine)
    with closing(build_services(store)) as s:
        s.tables.create_database(Database(name="db", parameters={}))
        yield s


@pytest.fixture(scope="session")
def our_server_info(backend_url, tmp_path_factory):
    tmpdir = tmp_path_factory.mktemp("our-server")
    try:
        port, proc = start_our_server(backend_url, tmpdir)
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)
    info = ServerInfo(port, proc, proc.log_path, proc.warehouse, backend_url)
    try:
        yield info
    finally:
        stop_process(proc)


@pytest.fixture(scope="session")
def our_server(our_server_info):
    """Port of our server, running on a fresh database of the ``backend_url`` backend."""
    return our_server_info.port


# --------------------------------------------------------------------------- thrift


@pytest.fixture
def thrift_client():
    """Factory: ``client = thrift_client(port)``; every connection is closed after the test."""
    transports = []

    def connect(port: int, host: str = "127.0.0.1", timeout: float = 30.0):
        client, transport = open_thrift_client(port, host, timeout)
        transports.append(transport)
        return client

    yield connect
    for t in transports:
        try:
            t.close()
        except Exception:
            pass


# --------------------------------------------------------------------------- object store (s3://)


@pytest.fixture(scope="session")
def object_store():
    """moto's S3-compatible server on loopback, found through the AWS environment (see the harness)."""
    store, stop = start_object_store()
    try:
        yield store
    finally:
        stop()


# --------------------------------------------------------------------------- spark (pipeline/)


@pytest.fixture(scope="session")
def spark(tmp_path_factory):
    """One local[2] SparkSession for the whole run (pipeline tests). No Hive catalog: pipeline/
    talks to the metastore itself, so one session serves every backend's server. Executors run
    this interpreter (pipeline/ needs pyarrow and the project there)."""

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ["SPARK_SUBMIT_OPTS"] = jvm.spark_submit_opts(long_lived=True)
    pyspark_sql = pytest.importorskip("pyspark.sql")
    session = (
        pyspark_sql.SparkSession.builder.master("local[2]").appName("hms-pipeline-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("spark-wh")))
        # the driver lives the whole run and runs thousands of small jobs: with Spark's defaults it
        # keeps the status of the last 100,000 tasks and 1,000 SQL executions, its old generation
        # fills and it spends a fifth of its CPU in full collections of a 1 GB heap
        .config("spark.driver.memory", "2g")
        .config("spark.ui.retainedJobs", "20")
        .config("spark.ui.retainedStages", "20")
        .config("spark.ui.retainedTasks", "200")
        .config("spark.sql.ui.retainedExecutions", "10")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()
