"""Apache Hudi's own metaserver client (RFC-36, `hoodie.metaserver.enabled=true`) writing through our
server, in ONE Spark subprocess (tests/spark/hudi_metaserver_client.py) with Hudi 0.15's Spark 3.5
bundle, the newest release whose client starts (Hudi 1.2's fails inside Hudi: tests/test_hudi_spark.py;
docs/hudi.md lists the releases tried):

* the datasource's insert, upsert and delete commit through the server's ThriftHoodieMetaserver:
  the table is registered from the hoodie.properties Hudi wrote, each commit is a completed instant
  of the server's timeline, and the server's file slices are Hudi's;
* Hudi's reader reads the rows back through the metaserver and by path (the timeline the server
  mirrored to storage), and hudi-rs reads the same from storage.
"""

from __future__ import annotations

import os
import re
import uuid

import pytest

from client import HudiMetastoreClient
from tests.harness.hudi_spark import hudi_spark_env, hudi_spark_python
from tests.harness.spark import run_spark_script
from tests.pipeline_helpers import hudi_rs, hudi_rs_slices, server_slices, uri
from thrift_idl.hive_metastore.ttypes import Database

# the server's commit path is the same on every backend (tested there in-process)
pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.backends("sqlite"),
              pytest.mark.xdist_group("hudi-metaserver-client")]
SCRIPT = os.path.join(os.path.dirname(__file__), "spark", "hudi_metaserver_client.py")
BUNDLE = "hudi-spark-bundle-0.15"
# insert 0..5, upsert 1 and 7, delete 2 (as the script writes them)
EXPECTED = sorted([[i, float(i), "sf" if i % 2 else "nyc"] for i in (0, 3, 4, 5)] + [[1, 10.0, "sf"], [7, 7.0, "la"]])


@pytest.fixture(scope="module")
def run(our_server_info, tmp_path_factory):
    port = our_server_info.port
    db, table = f"hudi_ms_{uuid.uuid4().hex[:6]}", "trips"
    with HudiMetastoreClient(uri(port)) as c:  # Hudi's client creates tables, not databases
        c.create_database(Database(name=db, parameters={}))
    tmp = tmp_path_factory.mktemp("hudi-metaserver-client")
    log_start = our_server_info.log_path.stat().st_size
    # under the server's warehouse: the server mirrors the timeline there
    out = run_spark_script(SCRIPT, port, our_server_info.warehouse, tmp / "out.json", timeout=900,
                           python=hudi_spark_python(), env=hudi_spark_env(bundle=BUNDLE),
                           extra_args=["--db", db, "--table", table])
    with open(our_server_info.log_path, "rb") as f:
        f.seek(log_start)
        log = f.read().decode("utf-8", "replace")
    return {"out": out, "db": db, "table": table, "port": port, "log": log}


def test_writes_commit_through_the_metaserver_protocol(run):
    assert run["out"]["writes"] == {"insert": "ok", "upsert": "ok", "delete": "ok"}, run["out"]["writes"]
    ok = {m: len(re.findall(rf"call={m} ms=[\d.]+ status=ok", run["log"]))
          for m in ("createTable", "createNewInstantWithTime", "transitionInstantState")}
    assert ok["createTable"] == 1 and ok["createNewInstantWithTime"] >= 3
    assert ok["transitionInstantState"] >= 6  # REQUESTED -> INFLIGHT -> COMPLETED per commit
    with HudiMetastoreClient(uri(run["port"])) as c:
        cfg = c.get_hudi_table(run["db"], run["table"])  # from the hoodie.properties Hudi wrote
        assert (cfg.recordKeyFields, cfg.partitionFields) == (["id"], ["city"])
        done = [i for i in c.list_instants(run["db"], run["table"]) if i.state == 3]
        assert [i.action for i in done] == ["commit"] * 3


def test_hudi_reads_back_through_the_server_and_storage(run):
    out = run["out"]
    assert out["rows"] == {"metaserver": EXPECTED, "path": EXPECTED}, out["rows"]
    got = hudi_rs(out["base"], ["fare", "city"])
    assert sorted([int(k), *v] for k, v in got.items()) == EXPECTED
    assert server_slices(run["port"], f"{run['db']}.{run['table']}") == {
        k: (v[0], v[1], ()) for k, v in hudi_rs_slices(out["base"]).items()}
