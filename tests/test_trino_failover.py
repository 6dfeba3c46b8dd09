"""Trino with several metastore URIs (`hive.metastore.uri=thrift://a,thrift://b,thrift://c`) goes on
through the next server when the one it uses is killed (issue 40): three servers over one
PostgreSQL database, a Hive catalog on all three; writes and reads before and after `kill -9` of
the first. docs/deployment.md, "Clients with several URIs"."""

from __future__ import annotations

import time

import pytest

from tests.harness.procs import start_our_server, stop_process

pytestmark = [pytest.mark.slow]


@pytest.mark.backends("postgresql")
def test_trino_fails_over_to_the_next_uri(trino_server, own_backend_url, tmp_path):
    from tools.trino import catalog_properties

    warehouse = tmp_path / "warehouse"
    servers = [start_our_server(own_backend_url, tmp_path / f"s{i}", warehouse=warehouse)[1] for i in range(3)]
    catalog = "hive_failover"
    try:
        uris = ",".join(f"thrift://127.0.0.1:{p.port}" for p in servers)
        trino_server.create_catalogs({catalog: catalog_properties("hive", uris)})

        def q(sql: str) -> list[list]:
            return trino_server.query(sql.format(c=catalog, tmp=tmp_path))

        q("CREATE SCHEMA {c}.fo WITH (location = 'file:{tmp}/fo.db')")
        q("CREATE TABLE {c}.fo.t (id INTEGER, p VARCHAR) WITH (partitioned_by = ARRAY['p'])")
        q("INSERT INTO {c}.fo.t VALUES (1, 'a'), (2, 'b')")
        servers[0].kill()
        servers[0].wait(timeout=10)
        t0 = time.monotonic()
        q("INSERT INTO {c}.fo.t VALUES (3, 'c')")
        took = time.monotonic() - t0
        assert q("SELECT id, p FROM {c}.fo.t ORDER BY id") == [[1, "a"], [2, "b"], [3, "c"]]
        assert q('SELECT p FROM {c}.fo."t$partitions" ORDER BY p') == [["a"], ["b"], ["c"]]
        assert all(p.poll() is None for p in servers[1:])
        print(f"\ntrino: first statement after the kill took {took:.2f} s")
    finally:
        try:
            trino_server.drop_catalogs([catalog])
        finally:
            for p in servers:
                stop_process(p)
