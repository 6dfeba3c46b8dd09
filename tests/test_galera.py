"""Several servers over a MariaDB Galera Cluster (issue 40): three nodes on loopback
(tests/harness/galera.py), one server on each. Writes through one server are read through the
others at once; a node cut off the cluster refuses and its server sends clients on; under load from
every server, a server killed and a node killed lose no acknowledged write and half-apply no Hudi
commit (tests/harness/cluster_load.py). docs/reliability.md, "Several servers over a replicated
database". One cluster for the module."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request

import pytest

from client import HudiMetastoreClient
from tests.harness import cluster_load, galera
from tests.harness.backends import ci_mode
from tests.harness.procs import free_port, start_our_server, stop_process
from thrift_idl.hive_metastore.ttypes import Database, MetaException

pytestmark = [pytest.mark.xdist_group("galera")]
SERVER_ARGS = ["--no-storage-mirror", "--statement-timeout", "30"]


@pytest.fixture(scope="module")
def galera_servers(tmp_path_factory):
    """The cluster, and one server per node sharing one warehouse (the schema is in place:
    tests/harness/galera.py). The servers start once every node has joined: node 0, a joiner's
    donor, once answered 1047 (not ready) to its server while the others joined."""
    why = galera.available()
    if why is not None:
        (pytest.fail if ci_mode() else pytest.skip)(f"no Galera cluster here: {why}")
    base = tmp_path_factory.mktemp("galera-servers")
    warehouse = base / "warehouse"
    cluster = galera.GaleraCluster()
    procs: list = [None] * len(cluster.nodes)

    def start(i: int) -> None:
        metrics = free_port()
        procs[i] = start_our_server(cluster.url(i), base / f"server{i}", [*SERVER_ARGS, "--metrics-port", str(metrics)],
                                    warehouse=warehouse)[1]
        procs[i].metrics_port = metrics

    threads = [threading.Thread(target=start, args=(i,)) for i in range(len(procs))]
    try:
        cluster.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(p is not None for p in procs), "a server did not start"
        yield cluster, procs
    finally:
        for t in threads:
            if t.is_alive():
                t.join()
        for p in procs:
            if p is not None:
                stop_process(p, grace=0)  # their data is thrown away
        cluster.stop()


@pytest.fixture
def cluster(galera_servers):
    return galera_servers[0]


@pytest.fixture
def servers(galera_servers):
    return galera_servers[1]


def client(port: int, **kw) -> HudiMetastoreClient:
    return HudiMetastoreClient(f"thrift://127.0.0.1:{port}", **kw)


def test_a_write_through_one_node_is_read_through_the_others_at_once(servers):
    ports = [p.port for p in servers]
    with client(ports[0]) as a, client(ports[1]) as b, client(ports[2]) as c:
        for i in range(5):
            a.create_database(Database(name=f"ryw_{i}", locationUri=f"file:{servers[0].warehouse}/ryw_{i}"))
            # each read runs on another node; wsrep_sync_wait makes it wait for the commit's write set
            assert b.get_database(f"ryw_{i}").name == f"ryw_{i}"
            assert c.get_database(f"ryw_{i}").name == f"ryw_{i}"


def test_a_node_cut_off_refuses_and_rejoins_with_what_it_missed(cluster, servers):
    ports = [p.port for p in servers]
    with client(ports[0]) as a:
        a.create_database(Database(name="split", locationUri=f"file:{servers[0].warehouse}/split"))
    cluster.isolate(2)
    try:
        cluster.wait_size(0, 2)  # the majority goes on without it
        deadline = time.monotonic() + 30
        while cluster.nodes[2].status("wsrep_cluster_status") == "Primary" and time.monotonic() < deadline:
            time.sleep(0.1)
        # the minority refuses: its server answers "unavailable, nothing was changed" (a client
        # with only this server gives up; one with several goes on to the next)
        with client(ports[2], retries=0) as only_c, \
                pytest.raises(MetaException, match="database is unavailable.*nothing was changed"):
            only_c.create_database(Database(name="split_minority"))
        deadline = time.monotonic() + 10  # a load balancer checking /readyz takes it out
        while _readyz(servers[2]) != 503:
            assert time.monotonic() < deadline, "server 2 still ready on a node cut off"
            time.sleep(0.2)
        with HudiMetastoreClient(cluster_load.uris(ports, 2), retries=2, backoff_s=0.05) as failing_over:
            failing_over.create_database(Database(name="split_majority",
                                                  locationUri=f"file:{servers[0].warehouse}/split_majority"))
    finally:
        cluster.isolate(2, False)
    cluster.wait_synced(2, 60)
    deadline = time.monotonic() + 10
    while _readyz(servers[2]) != 200:  # (readiness is checked at most once a second)
        assert time.monotonic() < deadline, "server 2 not ready after its node rejoined"
        time.sleep(0.2)
    with client(ports[2]) as c:  # healed: it has what the majority wrote meanwhile, and not the refused write
        assert c.get_database("split_majority").name == "split_majority"
        assert "split_minority" not in c.get_all_databases()


def test_load_on_every_server_survives_a_killed_server_and_a_killed_node(cluster, servers):
    """A writer per server; kill -9 server 1 (its clients move on to server 2), then node 2
    (server 2 answers "unavailable" and its clients move on to server 0)."""
    ports = [p.port for p in servers]
    cluster_load.setup(ports[0], str(servers[0].warehouse))
    load = cluster_load.ClusterLoad(ports, str(servers[0].warehouse), writers_per_server=1)
    load.start()
    try:
        load.wait_acks(6)
        t_server = time.monotonic()
        servers[1].kill()
        servers[1].wait()
        load.wait_resumed(t_server, 60)
        t_node = time.monotonic()
        cluster.kill(2)
        cluster.wait_size(0, 2)
        load.wait_resumed(t_node, 60)
        # every writer wrote again after each fault (the figures: docs/reliability.md)
        server_pause, node_pause = load.longest_pause_after(t_server), load.longest_pause_after(t_node)
    finally:
        load.stop()
    counts = load.check(ports[:1])  # through the server left
    # node 1 (its server killed) holds the same rows, read directly
    expected = galera.node_rows(cluster.nodes[0].port)
    assert galera.node_rows(cluster.nodes[1].port) == expected
    assert {p.split("=", 1)[1] for p in expected[0]} >= {p[2:] for w in load.writers for p in w.partitions_acked}
    print(f"\ngalera load: {counts}; writers resumed {server_pause:.1f} s after the server was killed, "
          f"{node_pause:.1f} s after the node")
    assert counts["acknowledged_commits"] > 0 and counts["acknowledged_partitions"] > 0, load.report()


def _readyz(server) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.metrics_port}/readyz", timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code
