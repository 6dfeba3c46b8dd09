"""The CLI's browsing and dropping commands (`databases`, `tables`, `describe`, `partitions`,
`drop-table`, `drop-database`, `drop-partition`), run in-process (adapter.cli.main) against one real
server on SQLite: text and --json output, Hive's patterns and semantics (RESTRICT unless --cascade,
a MANAGED table's data deleted, an EXTERNAL one's kept), confirmation, and errors that name what was
not found and the metastore asked."""

from __future__ import annotations

import json
import os
import uuid

import pytest

from adapter.cli import main
from adapter.commands.import_hudi import import_hudi_table
from client import HudiMetastoreClient
from tests.harness import start_our_server, stop_process
from tests.harness.cli_logs import cli_logs_to_capsys
from tests.harness.hudi_tables import table_copy
from thrift_idl.hive_metastore.ttypes import Database, FieldSchema, Partition, SerDeInfo, StorageDescriptor, Table


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli-browse")
    port, proc = start_our_server(f"sqlite:///{tmp / 'm.db'}", tmp)
    yield f"thrift://127.0.0.1:{port}"
    stop_process(proc)


@pytest.fixture
def cli(server, monkeypatch, capsys):
    """cli(*args) -> (exit status, stdout, stderr) of `hudi-metastore ARGS --metastore SERVER`."""
    cli_logs_to_capsys(monkeypatch)  # main() points the logs at the captured stderr

    def run(*args: str) -> tuple[int, str, str]:
        code = main([*args, "--metastore", server])
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


def _sd(location, cols=(("a", "int", "the a"), ("s", "string", ""))) -> StorageDescriptor:
    return StorageDescriptor(cols=[FieldSchema(*c) for c in cols], location=str(location),
                             inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                             outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                             serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy."
                                                                  "LazySimpleSerDe", parameters={}))


@pytest.fixture
def db(server, tmp_path):
    """A database with a MANAGED table `plain` partitioned by (dt, h), six partitions (one value
    with a '/'), an EXTERNAL table `ext` and an imported Hudi table `hudi_t`."""
    name = f"b_{uuid.uuid4().hex[:8]}"
    with HudiMetastoreClient(server) as c:
        c.create_database(Database(name=name, description="browsed", parameters={"team": "data"}))
        d = c.get_database(name)
        loc = d.locationUri.removeprefix("file:")
        sd = _sd(f"{loc}/plain")
        c.create_table(Table(tableName="plain", dbName=name, tableType="MANAGED_TABLE", parameters={"numRows": "6"},
                             partitionKeys=[FieldSchema("dt", "string", ""), FieldSchema("h", "int", "")], sd=sd))
        c.add_partitions([Partition(values=[dt, str(h)], dbName=name, tableName="plain", parameters={},
                                    sd=_sd(f"{loc}/plain/dt={dt.replace('/', '%2F')}/h={h}"))
                          for dt in ("2024-01-01", "2024-01-02", "a/b") for h in (1, 2)])
        c.create_table(Table(tableName="ext", dbName=name, tableType="EXTERNAL_TABLE",
                             parameters={"EXTERNAL": "TRUE"}, partitionKeys=[], sd=_sd(tmp_path / "ext")))
    (tmp_path / "ext").mkdir(exist_ok=True)  # (the server makes it too)
    import_hudi_table(server, table_copy("cow_v6_complexkeygen_hivestyle", tmp_path), name, "hudi_t")
    return name


def test_databases(cli, db):
    code, out, _ = cli("databases")
    lines = out.splitlines()
    assert code == 0 and lines[0] == "DATABASE" and db in lines and "default" in lines
    assert lines[-1] == f"{len(lines) - 2} database(s)"
    code, out, _ = cli("databases", f"{db}|nomatch*", "--json")
    assert code == 0 and json.loads(out) == [db]


def test_tables(cli, db):
    code, out, _ = cli("tables", db)
    assert code == 0, out
    assert out.splitlines() == ["TABLE\tTYPE\tFORMAT", "ext\tEXTERNAL_TABLE\ttext", "hudi_t\tEXTERNAL_TABLE\thudi",
                                "plain\tMANAGED_TABLE\ttext", f"3 table(s) in {db}"]
    code, out, _ = cli("tables", db, "p*|h*", "--json")
    assert code == 0 and [t["name"] for t in json.loads(out)] == ["hudi_t", "plain"]
    assert json.loads(out)[0] == {"name": "hudi_t", "table_type": "EXTERNAL_TABLE", "format": "hudi"}


def test_describe_a_table(cli, db):
    code, out, _ = cli("describe", f"{db}.plain", "--json")
    assert code == 0
    doc = json.loads(out)
    assert (doc["database"], doc["table"], doc["table_type"], doc["format"]) == (db, "plain", "MANAGED_TABLE", "text")
    assert doc["columns"] == [{"name": "a", "type": "int", "comment": "the a"},
                              {"name": "s", "type": "string", "comment": None}]
    assert [k["name"] for k in doc["partition_keys"]] == ["dt", "h"]
    assert doc["location"].endswith("/plain") and doc["parameters"]["numRows"] == "6"
    assert doc["storage"]["serde"].endswith("LazySimpleSerDe") and doc["hudi"] is None
    code, out, _ = cli("describe", f"{db}.plain")
    assert code == 0 and "type                MANAGED_TABLE" in out and "\nPARTITION KEYS\n  dt    string" in out
    assert "  numRows = 6" in out


def test_describe_a_hudi_table(cli, db, server):
    with HudiMetastoreClient(server) as c:
        last = [i for i in c.list_instants(db, "hudi_t") if i.state == 3][-1]  # COMPLETED
    code, out, _ = cli("describe", f"{db}.hudi_t", "--json")
    assert code == 0
    h = json.loads(out)["hudi"]
    assert h["table_type"] == "COPY_ON_WRITE" and h["table_version"] == 6
    assert h["latest_instant"]["timestamp"] == last.timestamp and h["latest_instant"]["action"] == "commit"
    code, out, _ = cli("describe", f"{db}.hudi_t")
    assert "hudi table type     COPY_ON_WRITE (table version 6)" in out
    assert f"hudi latest instant {last.timestamp}.commit" in out


def test_describe_a_database(cli, db):
    code, out, _ = cli("describe", db, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["database"] == db and doc["description"] == "browsed" and doc["tables"] == 3
    assert doc["parameters"] == {"team": "data"}
    code, out, _ = cli("describe", db)
    assert f"database            {db}" in out and "  team = data" in out


def test_partitions(cli, db):
    code, out, _ = cli("partitions", f"{db}.plain")
    assert code == 0
    assert out.splitlines() == ["PARTITION", "dt=2024-01-01/h=1", "dt=2024-01-01/h=2", "dt=2024-01-02/h=1",
                                "dt=2024-01-02/h=2", "dt=a%2Fb/h=1", "dt=a%2Fb/h=2", "6 partition(s)"]
    code, out, _ = cli("partitions", f"{db}.plain", "--filter", "dt >= '2024-01-02' and h = 2", "--json")
    assert code == 0 and json.loads(out) == ["dt=2024-01-02/h=2", "dt=a%2Fb/h=2"]
    code, out, _ = cli("partitions", f"{db}.hudi_t", "--json")  # a Hudi table's: what hive-sync would list
    assert code == 0 and len(json.loads(out)) == 3 and all(p.count("=") == 2 for p in json.loads(out))
    assert cli("partitions", f"{db}.ext")[2].strip() == f"partitions: {db}.ext is not partitioned"


def test_drop_partition(cli, db, server):
    with HudiMetastoreClient(server) as c:
        loc = c.get_partition_by_name(db, "plain", "dt=2024-01-01/h=1").sd.location.removeprefix("file:")
    os.makedirs(loc, exist_ok=True)  # (the server makes a MANAGED table's partition directories)
    code, _, err = cli("drop-partition", f"{db}.plain", "dt=2024-01-01/h=1")
    assert code == 2 and "not confirmed (no terminal); pass --yes" in err
    code, out, err = cli("drop-partition", f"{db}.plain", "dt=2024-01-01/h=1", "dt=zz/h=1", "--yes")
    assert code == 2 and f"{db}.plain has no partition 'dt=zz/h=1'" in err and server in err
    code, out, _ = cli("drop-partition", f"{db}.plain", "dt=2024-01-01/h=1", "dt=a%2Fb/h=2", "--yes", "--json")
    assert code == 0 and json.loads(out)["data"] == "deleted", out
    assert not os.path.exists(loc)  # a MANAGED table's partition directory goes with it
    assert "dt=2024-01-01/h=1" not in json.loads(cli("partitions", f"{db}.plain", "--json")[1])
    assert len(json.loads(cli("partitions", f"{db}.plain", "--json")[1])) == 4
    code, _, err = cli("drop-partition", f"{db}.hudi_t", "x=1", "--yes")
    assert code == 2 and f"{db}.hudi_t is a Hudi table" in err


def test_drop_table(cli, db, tmp_path):
    code, _, err = cli("drop-table", f"{db}.ext")
    assert code == 2 and "pass --yes" in err
    code, out, _ = cli("drop-table", f"{db}.ext", "--yes")
    assert code == 0 and out.strip() == f"dropped table {db}.ext (EXTERNAL_TABLE; data kept)"
    assert (tmp_path / "ext").is_dir()  # an EXTERNAL table's data stays, as Hive's DROP TABLE
    code, _, err = cli("drop-table", f"{db}.ext", "--yes")
    assert code == 2 and f"{db}.ext table not found" in err and "metastore thrift://" in err
    code, out, _ = cli("drop-table", f"{db}.ext", "--yes", "--if-exists", "--json")
    assert code == 0 and json.loads(out)["dropped"] is None
    code, out, _ = cli("drop-table", f"{db}.hudi_t", "--yes", "--json")
    assert code == 0 and json.loads(out) == {"dropped": "table", "table": f"{db}.hudi_t",
                                             "table_type": "EXTERNAL_TABLE", "data": "kept"}
    assert json.loads(cli("tables", db, "--json")[1]) == [{"name": "plain", "table_type": "MANAGED_TABLE",
                                                           "format": "text"}]


def test_drop_database(cli, db):
    code, _, err = cli("drop-database", db, "--yes")
    assert code == 2 and f"database {db} holds 3 table(s) (ext, hudi_t, plain)" in err and "--cascade" in err
    code, out, _ = cli("drop-database", db, "--yes", "--cascade", "--json")
    assert code == 0 and json.loads(out) == {"dropped": "database", "database": db,
                                             "tables": ["ext", "hudi_t", "plain"]}
    assert db not in json.loads(cli("databases", "--json")[1])
    code, _, err = cli("drop-database", db, "--yes")
    assert code == 2 and f"database {db} does not exist" in err and "metastore thrift://" in err
    code, out, _ = cli("drop-database", db, "--yes", "--if-exists")
    assert code == 0 and "nothing dropped" in out


def test_missing_objects_name_the_metastore(cli, db):
    for args, words in ((("tables", "nodb_x"), "database nodb_x does not exist"),
                        (("describe", "nodb_x"), "database nodb_x does not exist"),
                        (("describe", f"{db}.nope"), f"{db}.nope table not found"),
                        (("partitions", f"{db}.nope"), f"{db}.nope table not found"),
                        (("describe", "a.b.c"), "expected <db>.<table>")):
        code, out, err = cli(*args)
        assert code == 2 and len(err.splitlines()) == 1 and words in err, (args, err)
        if "expected" not in words:
            assert "(metastore thrift://127.0.0.1:" in err, err


def test_drops_ask_on_a_terminal(cli, db, monkeypatch):
    location = json.loads(cli("describe", f"{db}.plain", "--json")[1])["location"].removeprefix("file:")
    assert os.path.isdir(location)
    import builtins
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    asked = []
    answers = iter(["n", "yes"])
    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr(builtins, "input", lambda prompt: asked.append(prompt) or next(answers))
    code, out, _ = cli("drop-table", f"{db}.plain")
    assert code == 1 and "drop-table: cancelled; nothing changed" in out
    assert asked == [f"Drop table {db}.plain (MANAGED_TABLE, data deleted)? [y/N] "]
    assert "plain" in [t["name"] for t in json.loads(cli("tables", db, "--json")[1])]
    code, out, _ = cli("drop-table", f"{db}.plain", "--keep-data")
    assert code == 0 and out.strip() == f"dropped table {db}.plain (MANAGED_TABLE; data kept)"
    assert asked[1] == f"Drop table {db}.plain (MANAGED_TABLE, data kept)? [y/N] "
    assert os.path.isdir(location)  # --keep-data: a MANAGED table's directory stays
