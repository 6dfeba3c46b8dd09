"""Several servers over PostgreSQL with streaming replication and automatic failover (issue 40):
Patroni with etcd, three nodes on loopback (tests/harness/patroni.py), synchronous mode; three
servers whose `--db-url` lists the three nodes with `target_session_attrs=read-write` (every
connection goes to the primary, whichever it is), and haproxy in front of the servers, checking
`/readyz`. Under load through the servers and through haproxy, `kill -9` of the PostgreSQL primary's
node (Patroni promotes the synchronous standby) and of a server lose no acknowledged write and
half-apply no Hudi commit. docs/reliability.md. One cluster for the module."""

from __future__ import annotations

import threading
import time

import pytest

from client import HudiMetastoreClient
from tests.harness import cluster_load, patroni
from tests.harness.backends import ci_mode
from tests.harness.procs import free_port, start_our_server, stop_process
from thrift_idl.hive_metastore.ttypes import Database

pytestmark = [pytest.mark.xdist_group("patroni")]
SERVER_ARGS = ["--no-storage-mirror", "--statement-timeout", "30"]


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    """(cluster, servers, haproxy)."""
    why = patroni.available()
    if why is not None:
        (pytest.fail if ci_mode() else pytest.skip)(f"no Patroni cluster here: {why}")
    base = tmp_path_factory.mktemp("patroni-servers")
    cluster = patroni.PatroniCluster()
    procs: list = [None] * 3
    proxy = None

    def start(i: int) -> None:
        metrics = free_port()
        procs[i] = start_our_server(cluster.url(), base / f"server{i}", [*SERVER_ARGS, "--metrics-port", str(metrics)],
                                    warehouse=base / "warehouse")[1]
        procs[i].metrics_port = metrics

    try:
        cluster.start()
        threads = [threading.Thread(target=start, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(p is not None for p in procs), "a server did not start"
        proxy = patroni.HAProxy([(p.port, p.metrics_port) for p in procs], base)
        yield cluster, procs, proxy
    finally:
        if proxy is not None:
            proxy.stop()
        for p in procs:
            if p is not None:
                stop_process(p, grace=0)  # their data is thrown away
        cluster.stop()


def test_writes_through_haproxy_are_read_through_every_server(stack):
    _, servers, proxy = stack
    with HudiMetastoreClient(f"thrift://127.0.0.1:{proxy.port}") as via_proxy:
        for i in range(3):
            via_proxy.create_database(Database(name=f"hap_{i}", locationUri=f"file:{servers[0].warehouse}/hap_{i}"))
    for s in servers:  # every server reads the primary: what one wrote, all read
        with HudiMetastoreClient(f"thrift://127.0.0.1:{s.port}") as c:
            assert {f"hap_{i}" for i in range(3)} <= set(c.get_all_databases())


def test_load_survives_the_primary_and_a_server_killed(stack):
    cluster, servers, proxy = stack
    ports = [p.port for p in servers]
    cluster_load.setup(ports[0], str(servers[0].warehouse))
    load = cluster_load.ClusterLoad(ports, str(servers[0].warehouse), extra_uris=(f"thrift://127.0.0.1:{proxy.port}",),
                                    retries=40)  # (backoff at most 1 s: outlasts a failover)
    load.start()
    try:
        load.wait_acks(6)
        old = cluster.primary()
        assert old is not None
        t_primary = time.monotonic()
        cluster.kill(old)
        load.wait_resumed(t_primary, 90)
        new = cluster.primary()
        assert new is not None and new != old
        t_server = time.monotonic()
        servers[2].kill()
        servers[2].wait()
        load.wait_resumed(t_server, 90)
        primary_pause, server_pause = load.longest_pause_after(t_primary), load.longest_pause_after(t_server)
    finally:
        load.stop()
    counts = load.check(ports[:2])
    # the nodes left: the new primary and the other standby (once it follows the new primary)
    expected = patroni.node_rows(cluster.nodes[new].pg_port)
    for node in cluster.nodes:
        if node.index in (old, new):
            continue
        deadline = time.monotonic() + 30
        while patroni.node_rows(node.pg_port) != expected:
            assert time.monotonic() < deadline, f"standby {node.name} does not have the primary's rows"
            time.sleep(0.2)
    print(f"\npatroni load: {counts}; writers resumed {primary_pause:.1f} s after the primary was killed, "
          f"{server_pause:.1f} s after a server")
    assert counts["acknowledged_commits"] > 0 and counts["acknowledged_partitions"] > 0, load.report()
