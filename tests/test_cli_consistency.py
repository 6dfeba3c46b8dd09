"""The CLI's uniform surface, against a real server on SQLite: --version; --metastore on every
command that talks to a server (old spellings kept); create-database; import-hudi creating the
database as hive-sync does (or refusing with --no-create-database); migrate --dry-run without errors
for databases it would create; stats on a non-Hudi table; headers on table outputs; table commands
importing neither the store nor the database drivers (their start cost: bench/cli_start.py)."""

from __future__ import annotations

import uuid

import pytest

from adapter.cli import build_parser
from client import HudiMetastoreClient
from tests.cli_helpers import assert_one_line_error, run_cli
from tests.harness import free_port, start_our_server, stop_process
from tests.harness.cli_logs import cli_logs_to_capsys
from tests.harness.hudi_tables import table_copy
from thrift_idl.hive_metastore.ttypes import Database, FieldSchema, SerDeInfo, StorageDescriptor, Table
from thrift_idl.hudi_metastore.ttypes import HudiTableConfig, HudiTableType

SERVER_COMMANDS = ["migrate", "import-hudi", "create-database", "validate", "repair", "stats",
                   "list-partitions", "list-files", "lookup-keys", "sync-storage", "databases", "tables", "describe",
                   "partitions", "drop-table", "drop-database", "drop-partition"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cli-consistency")
    port, proc = start_our_server(f"sqlite:///{tmp / 'm.db'}", tmp)
    yield f"thrift://127.0.0.1:{port}"
    stop_process(proc)


def name() -> str:
    return f"c_{uuid.uuid4().hex[:8]}"


def test_version():
    r = run_cli("--version")
    assert r.returncode == 0 and r.stdout.startswith("hudi-metastore 0.") and "Hive Metastore API" in r.stdout


def test_every_server_command_takes_metastore():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for cmd in SERVER_COMMANDS:
        opts = {s for a in sub.choices[cmd]._actions for s in a.option_strings}
        assert "--metastore" in opts, cmd
    services = next(a for a in sub.choices["table-services"]._actions if a.dest == "services_command")
    for cmd in services.choices.values():
        assert "--metastore" in {s for a in cmd._actions for s in a.option_strings}
    ns = parser.parse_args(["migrate", "--from", "thrift://a:1", "--to", "thrift://b:2"])  # the old spelling
    assert ns.metastore == "thrift://b:2"
    assert parser.parse_args(["migrate", "--from", "thrift://a:1", "--metastore", "thrift://c:3"]).metastore \
        == "thrift://c:3"


def test_create_database(server, tmp_path):
    db = name()
    r = run_cli("create-database", db, "--description", "made by the CLI", "--metastore", server)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"created database {db} at file:")
    with HudiMetastoreClient(server) as c:
        assert c.get_database(db).description == "made by the CLI"
    assert_one_line_error(run_cli("create-database", db, "--metastore", server), "already exists")
    r = run_cli("create-database", db, "--if-not-exists", "--metastore", server)
    assert r.returncode == 0 and "exists already" in r.stdout
    other = name()
    r = run_cli("create-database", other, "--location", str(tmp_path / "elsewhere"), "--metastore", server)
    assert r.returncode == 0, r.stderr
    assert str(tmp_path / "elsewhere") in r.stdout and (tmp_path / "elsewhere").is_dir()
    assert_one_line_error(run_cli("create-database", "a.b", "--metastore", server), "expected a database name")


def test_import_hudi_creates_the_database(server, tmp_path):
    base = table_copy("cow_v6_simplekeygen_nonhivestyle", tmp_path)
    db = name()
    r = run_cli("import-hudi", base, "--table", f"{db}.t", "--no-create-database", "--metastore", server)
    assert_one_line_error(r, f"database {db} does not exist", "--no-create-database")
    r = run_cli("import-hudi", base, "--table", f"{db}.t", "--dry-run", "--metastore", server)
    assert r.returncode == 0, r.stderr
    assert f"would create the database {db}" in r.stdout
    with HudiMetastoreClient(server) as c:
        assert db not in c.get_all_databases()
    r = run_cli("import-hudi", base, "--table", f"{db}.t", "--metastore", server)
    assert r.returncode == 0, r.stderr
    assert f"created the database {db}" in r.stdout
    with HudiMetastoreClient(server) as c:
        assert c.get_hudi_table(db, "t").basePath.rstrip("/").endswith(base.rstrip("/").rsplit("/", 1)[1])
    r = run_cli("stats", f"{db}.t", "--metastore", server)
    assert r.returncode == 0, r.stderr


def test_failed_import_leaves_no_database(server, tmp_path):
    db = name()
    (tmp_path / "not-hudi").mkdir()
    r = run_cli("import-hudi", str(tmp_path / "not-hudi"), "--table", f"{db}.t", "--metastore", server)
    assert r.returncode == 2
    with HudiMetastoreClient(server) as c:
        assert db not in c.get_all_databases()


def test_headers_and_non_hudi_tables(server, tmp_path):
    db = name()
    assert run_cli("create-database", db, "--metastore", server).returncode == 0
    with HudiMetastoreClient(server) as c:
        c.create_table(Table(tableName="plain", dbName=db, tableType="EXTERNAL_TABLE", parameters={},
                             partitionKeys=[], sd=StorageDescriptor(
                                 cols=[FieldSchema("a", "int", "")], location=str(tmp_path / "plain"),
                                 inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                                 outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                                 serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy."
                                                                      "LazySimpleSerDe", parameters={}))))
    for cmd in ("stats", "list-partitions", "list-files", "validate"):
        assert_one_line_error(run_cli(cmd, f"{db}.plain", "--metastore", server),
                              f"{db}.plain is not a Hudi table")
    base = table_copy("cow_v6_simplekeygen_nonhivestyle", tmp_path)
    assert run_cli("import-hudi", base, "--table", f"{db}.h", "--metastore", server).returncode == 0
    r = run_cli("list-files", f"{db}.h", "--metastore", server)
    assert r.stdout.splitlines()[0] == "PARTITION\tFILE_ID\tBASE_INSTANT\tBASE_FILE\tLOG_FILES", r.stdout
    r = run_cli("list-partitions", f"{db}.h", "--metastore", server)
    assert r.stdout.splitlines()[0] == "PARTITION", r.stdout


def test_migrate_dry_run_reports_no_errors_for_databases_it_would_create(server, tmp_path):
    """Our own server as the source: a plain table and a Hudi table in a database the target lacks."""
    db = name()
    base = table_copy("cow_v6_simplekeygen_nonhivestyle", tmp_path)
    assert run_cli("import-hudi", base, "--table", f"{db}.h", "--metastore", server).returncode == 0
    port, proc = start_our_server(f"sqlite:///{tmp_path / 'target.db'}", tmp_path / "target")
    try:
        target = f"thrift://127.0.0.1:{port}"
        r = run_cli("--log-level", "WARNING", "migrate", "--from", server, "--metastore", target,
                    "--databases", db, "--dry-run", "--quiet")
        assert "error:" not in r.stdout, r.stdout
        assert "databases created 1" in r.stdout and "tables created 1" in r.stdout, r.stdout
        assert f"hudi: {db}.h from" in r.stdout, r.stdout
        with HudiMetastoreClient(target) as c:
            assert db not in c.get_all_databases()
    finally:
        stop_process(proc)


def _plain_table(server: str, db: str, location) -> None:
    with HudiMetastoreClient(server) as c:
        c.create_table(Table(tableName="plain", dbName=db, tableType="EXTERNAL_TABLE", parameters={},
                             partitionKeys=[], sd=StorageDescriptor(
                                 cols=[FieldSchema("a", "int", "")], location=str(location),
                                 inputFormat="org.apache.hadoop.mapred.TextInputFormat",
                                 outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
                                 serdeInfo=SerDeInfo(serializationLib="org.apache.hadoop.hive.serde2.lazy."
                                                                      "LazySimpleSerDe", parameters={}))))


def test_errors_name_what_went_wrong(server, tmp_path):
    """Every table command says a table is not a Hudi table; "not found" names the metastore asked."""
    db = name()
    assert run_cli("create-database", db, "--metastore", server).returncode == 0
    _plain_table(server, db, tmp_path / "plain")
    for cmd in (("lookup-keys", f"{db}.plain", "k"), ("repair", f"{db}.plain", "--yes"),
                ("sync-storage", f"{db}.plain")):
        assert_one_line_error(run_cli(*cmd, "--metastore", server), f"{db}.plain is not a Hudi table")
    base = table_copy("cow_v6_simplekeygen_nonhivestyle", tmp_path)
    assert_one_line_error(run_cli("import-hudi", base, "--table", f"{db}.plain", "--metastore", server),
                          f"{db}.plain is not a Hudi table")
    for cmd in (("stats", f"{db}.nope"), ("list-files", f"{db}.nope"), ("lookup-keys", f"{db}.nope", "k"),
                ("validate", f"{db}.nope"), ("sync-storage", f"{db}.nope")):
        assert_one_line_error(run_cli(*cmd, "--metastore", server), f"{db}.nope not found", server)
    assert_one_line_error(run_cli("sync-storage", f"{db}.nope", "--metastore", server, "--db-url", "sqlite://"),
                          "not both")
    shared = tmp_path / "shared.toml"  # a file shared with serve: the command line decides
    shared.write_text(f'metastore = "{server}"\ndb_url = "sqlite:///{tmp_path / "none.db"}"\n')
    assert_one_line_error(run_cli("--config", str(shared), "sync-storage", f"{db}.nope"), "no SQLite database")
    assert_one_line_error(run_cli("--config", str(shared), "sync-storage", f"{db}.nope", "--metastore", server),
                          f"{db}.nope not found", server)


def test_flag_typos_suggest_the_flag(server):
    r = run_cli("stats", "--metastor", server, "a.b")  # not taken for --metastore (no abbreviations)
    assert r.returncode == 2 and "unrecognized arguments: --metastor (did you mean --metastore?)" in r.stderr, r.stderr
    r = run_cli("list-files", "a.b", "--metastore", server, "--jsn")
    assert r.returncode == 2 and "--jsn (did you mean --json?)" in r.stderr, r.stderr
    r = run_cli("stat", "a.b")
    assert r.returncode == 2 and "did you mean stats?" in r.stderr, r.stderr
    r = run_cli("sync-storage", "a.b", "--metastre", server)
    assert r.returncode == 2 and "did you mean --metastore?" in r.stderr, r.stderr


def test_a_wrong_port_is_one_error_at_once(monkeypatch, capsys):
    """The first connection is not retried: one line, no backoff."""
    import time

    from adapter.cli import main

    def no_sleep(seconds):
        raise AssertionError(f"retried after {seconds} s")

    monkeypatch.setattr(time, "sleep", no_sleep)  # (the client's backoff)
    cli_logs_to_capsys(monkeypatch)  # main() points the logs at the captured stderr
    port = free_port()
    for cmd in (["stats", "a.b"], ["create-database", "x"], ["lookup-keys", "a.b", "k"]):
        assert main([*cmd, "--metastore", f"thrift://127.0.0.1:{port}"]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and f"thrift://127.0.0.1:{port}" in err, err


FORBIDDEN = ("store", "sqlalchemy", "alembic", "psycopg", "pymysql", "fsspec", "pyspark", "pyarrow", "pandas")


@pytest.mark.parametrize("args", [("stats", "default.nope"), ("list-files", "default.nope"),
                                  ("create-database", "default", "--if-not-exists"), ("describe", "default.nope")])
def test_table_commands_import_no_store(server, args):
    r = run_cli("-X", "importtime", *args, "--metastore", server, python_flags=True)
    top = {line.split("|")[-1].strip().split(".")[0] for line in r.stderr.splitlines()
           if line.startswith("import time:")}
    assert "adapter" in top and not top & set(FORBIDDEN), sorted(top & set(FORBIDDEN))


def test_unreachable_metastore_is_one_line():
    port = free_port()
    assert_one_line_error(run_cli("stats", "a.b", "--metastore", f"thrift://127.0.0.1:{port}"),
                          f"thrift://127.0.0.1:{port}")


def test_the_console_script_keeps_the_exit_code_and_output_when_pyarrow_is_loaded():
    """adapter.cli.run leaves through os._exit once pyarrow is loaded (its thread pools can abort
    the interpreter's finalization): the command's status and its flushed output still come out."""
    import subprocess
    import sys

    code = ("import sys, pyarrow; sys.argv = ['hudi-metastore', 'lookup-keys', 'nodot', 'k']; "
            "print('before', flush=False); from adapter.cli import run; run()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stdout == "before\n"
    assert "expected <db>.<table>" in done.stderr


def test_table_services_status(server, tmp_path, monkeypatch, capsys):
    """Settings with Hudi's names and defaults, the server's cleans after commits, the archival on
    storage; a table that is no Hudi table is refused. In-process (main), beside the server."""
    import json

    from adapter.cli import main
    from hudi_format.config_keys import (
        CLEAN_AUTOMATIC,
        CLEANER_COMMITS_RETAINED,
        CLUSTERING_INLINE,
        CLUSTERING_MAX_COMMITS,
        CLUSTERING_SORT_COLUMNS,
    )

    cli_logs_to_capsys(monkeypatch)  # main() points the logs at the captured stderr
    db = name()
    with HudiMetastoreClient(server) as c:
        c.create_database(Database(name=db))
        base = c.get_database(db).locationUri.rstrip("/") + "/t"
        c.register_hudi_table(
            HudiTableConfig(dbName=db, tableName="t", tableType=HudiTableType.COPY_ON_WRITE, recordKeyFields=["id"],
                            partitionFields=["p"], basePath=base,
                            properties={CLEAN_AUTOMATIC: "true", CLEANER_COMMITS_RETAINED: "1",
                                        CLUSTERING_INLINE: "true", CLUSTERING_MAX_COMMITS: "3",
                                        CLUSTERING_SORT_COLUMNS: "id"}),
            [FieldSchema("id", "int", None), FieldSchema("p", "string", None)])
        for _ in range(3):  # a new version of one file group each (the files need not exist here)
            ts = c.new_instant_time(db, "t")
            c.create_instant(db, "t", ts, "commit")
            c.transition_to_inflight(db, "t", ts, "commit", None)
            c.complete_instant(db, "t", ts, "commit", {"partitionToWriteStats": {"p=1": [{
                "fileId": "a-0", "path": f"p=1/a-0_0-1-1_{ts}.parquet", "partitionPath": "p=1",
                "fileSizeInBytes": 10, "prevCommit": "null"}]}, "compacted": False, "extraMetadata": {},
                "operationType": "UPSERT"})
    assert main(["table-services", "status", f"{db}.t", "--json", "--metastore", server]) == 0
    doc = json.loads(capsys.readouterr().out)["services"]
    assert doc["clustering"]["enabled"] and doc["clustering"]["recent"] == []
    [clustering] = [i["instant"] for i in doc["clustering"]["pending"]]  # due after the third commit
    with HudiMetastoreClient(server) as c:  # an executor runs it (the file need not exist here)
        c.transition_to_inflight(db, "t", clustering, "clustering", None)
        c.complete_instant(db, "t", clustering, "clustering", {"partitionToWriteStats": {"p=1": [{
            "fileId": "n-0", "path": f"p=1/n-0_0-1-1_{clustering}.parquet", "partitionPath": "p=1",
            "fileSizeInBytes": 10, "prevCommit": "null"}]}, "partitionToReplaceFileIds": {"p=1": ["a-0"]},
            "compacted": False, "extraMetadata": {}, "operationType": "CLUSTER"})
    assert main(["table-services", "status", f"{db}.t", "--json", "--metastore", server]) == 0
    doc = json.loads(capsys.readouterr().out)["services"]
    assert doc["clustering"]["pending"] == [] and doc["clustering"][CLUSTERING_SORT_COLUMNS] == "id"
    assert [(i["instant"], i["state"]) for i in doc["clustering"]["recent"]] == [(clustering, "COMPLETED")]
    assert doc["clean"]["enabled"] and doc["clean"]["hoodie.cleaner.policy"] == "KEEP_LATEST_COMMITS"
    assert doc["clean"]["hoodie.cleaner.commits.retained"] == "1" and doc["clean"]["pending"] == []
    assert [i["state"] for i in doc["clean"]["recent"]] == ["COMPLETED"]
    assert not doc["compaction"]["enabled"] and doc["archival"]["hoodie.keep.max.commits"] == "30"
    assert doc["archival"]["archived_instants"] == 0 and doc["archival"]["active_instants"] >= 4
    assert main(["table-services", "status", f"{db}.t", "--metastore", server]) == 0
    out = capsys.readouterr().out
    assert "SERVICE\tINSTANT\tSTATE\tCOMPLETED" in out.splitlines() and "\nclean\t" in out, out
    assert f"\nclustering\t{clustering}\tCOMPLETED\t" in out and "clustering  on: after 3 commits" in out, out
    _plain_table(server, db, tmp_path / "plain")
    assert main(["table-services", "status", f"{db}.plain", "--metastore", server]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and f"{db}.plain is not a Hudi table" in err, err


def test_table_services_run_refusals_and_claims(server, tmp_path, monkeypatch, capsys):
    """`table-services run` without Spark: a table that is no Hudi table (2), a copy-on-write table
    and a merge-on-read one with nothing pending (1), a compaction or clustering another executor
    claimed (1, named); the claim itself: of two executors taking one requested compaction, the
    second gets ServiceClaimed; the file groups a writer must leave alone while a clustering runs.
    (The Spark path: tests/pipeline_mor.py compact_and_check.)"""
    from adapter.cli import main
    from client import HudiCatalog
    from pipeline.compaction import claim
    from pipeline.errors import ServiceClaimed

    cli_logs_to_capsys(monkeypatch)  # main() points the logs at the captured stderr
    db = name()

    def run(table: str) -> tuple[int, str]:
        code = main(["table-services", "run", f"{db}.{table}", "--metastore", server])
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1, err
        return code, err

    with HudiMetastoreClient(server) as c:
        c.create_database(Database(name=db))
        base = c.get_database(db).locationUri.rstrip("/")
        for t, kind in (("cow", HudiTableType.COPY_ON_WRITE), ("mor", HudiTableType.MERGE_ON_READ)):
            c.register_hudi_table(
                HudiTableConfig(dbName=db, tableName=t, tableType=kind, recordKeyFields=["id"], partitionFields=[],
                                basePath=f"{base}/{t}"), [FieldSchema("id", "int", None)])
    _plain_table(server, db, tmp_path / "plain")
    code, err = run("plain")
    assert code == 2 and f"{db}.plain is not a Hudi table" in err
    code, err = run("cow")
    assert code == 1 and "nothing to run (none pending)" in err
    code, err = run("mor")
    assert code == 1 and "nothing to run (none pending)" in err
    code, err = run("missing")
    assert code == 2 and "missing" in err
    with HudiCatalog(server) as c:
        ts = c.create_instant(db, "mor", None, "compaction").ts
        claim(c, db, "mor", ts, "compaction")  # the first executor
        with pytest.raises(ServiceClaimed, match=f"compaction {ts} of {db}.mor is already being run"):
            claim(c, db, "mor", ts, "compaction")  # the second
        assert [(i.ts, i.state) for i in c.list_instants(db, "mor")] == [(ts, "INFLIGHT")]
    code, err = run("mor")
    assert code == 1 and f"already being run by another executor: compaction {ts}" in err
    # a clustering: its file groups are held from writers only while an executor runs it (heartbeats)
    from hudi_format.commit_metadata import ClusteringGroup, ClusteringPlan, ClusteringSlice, clustering_plan
    from hudi_format.config_keys import CLUSTERING_SORT_COLUMNS
    from pipeline.clustering import under_clustering
    from pipeline.table import load

    plan = clustering_plan(ClusteringPlan([ClusteringGroup([ClusteringSlice("", "f1-0", "f1-0_0-1-0_1.parquet", [])])]),
                           CLUSTERING_SORT_COLUMNS)
    with HudiCatalog(server) as c:
        cts = c.create_instant(db, "cow", None, "clustering", plan).ts
        info = load(c, db, "cow")
        assert under_clustering(c, info) == {}  # requested: the next writer runs it first
        claim(c, db, "cow", cts, "clustering")
        assert under_clustering(c, info) == {("", "f1-0"): cts}  # claimed (180 s without a heartbeat)
    code, err = run("cow")
    assert code == 1 and f"already being run by another executor: clustering {cts}" in err


def test_a_claim_whose_executor_stopped_is_rolled_back_and_a_live_one_is_left(server, tmp_path):
    """The claim of a compaction or clustering lives by its executor's heartbeats (the table's
    heartbeat settings, here 0.5 s x 2): `recover` (what `table-services run` and the pipeline's
    inline run do first) leaves a claim that beats alone, and rolls back one that stopped: the file
    its attempt wrote is deleted and the instant is REQUESTED again with its plan; its file groups
    take writes again meanwhile; its executor, were it to resume, finds its attempt rolled back and
    does not complete it. (With Spark: tests/test_pipeline_service_failures.py.)"""
    import os
    import time

    from client import HudiCatalog
    from hudi_format.commit_metadata import ClusteringGroup, ClusteringPlan, ClusteringSlice, clustering_plan
    from hudi_format.config_keys import (
        CLIENT_HEARTBEAT_INTERVAL_MS,
        CLIENT_HEARTBEAT_TOLERABLE_MISSES,
        CLUSTERING_SORT_COLUMNS,
    )
    from pipeline.clustering import under_clustering
    from pipeline.compaction import Claim
    from pipeline.errors import ServiceClaimed
    from pipeline.table import load
    from pipeline.table_services import pending, recover

    db = name()
    plan = clustering_plan(ClusteringPlan([ClusteringGroup([ClusteringSlice("", "f1-0", "f1-0_0-1-0_1.parquet", [])])]),
                           CLUSTERING_SORT_COLUMNS)
    with HudiMetastoreClient(server) as c:
        c.create_database(Database(name=db))
        base = c.get_database(db).locationUri.rstrip("/")
        c.register_hudi_table(HudiTableConfig(
            dbName=db, tableName="t", tableType=HudiTableType.MERGE_ON_READ, recordKeyFields=["id"],
            partitionFields=[], basePath=f"{base}/t",
            properties={CLIENT_HEARTBEAT_INTERVAL_MS: "500", CLIENT_HEARTBEAT_TOLERABLE_MISSES: "1"}),
            [FieldSchema("id", "int", None)])
    with HudiCatalog(server) as c:
        info = load(c, db, "t")
        live = c.create_instant(db, "t", None, "compaction").ts
        dead = c.create_instant(db, "t", None, "clustering", plan).ts
        live_claim = Claim(c, info, live, "compaction", server)  # (their heartbeats: by hand below)
        dead_claim = Claim(c, info, dead, "clustering", server)
        assert under_clustering(c, info) == {("", "f1-0"): dead}
        stray = f"f2-0_0-1-0_{dead}.parquet"  # what the clustering's attempt wrote before it stopped
        c.add_markers(db, "t", dead, [stray])
        os.makedirs(f"{base}/t".removeprefix("file:"), exist_ok=True)
        path = os.path.join(f"{base}/t".removeprefix("file:"), stray)
        open(path, "wb").write(b"PAR1")
        deadline = time.monotonic() + 30
        while dead not in {i.ts for i in c.get_failed_instants(db, "t")}:
            c.heartbeat_instant(db, "t", live)  # the compaction's executor beats
            assert time.monotonic() < deadline
            time.sleep(0.2)
        c.heartbeat_instant(db, "t", live)
        assert under_clustering(c, info) == {}  # its executor stopped: its file groups take writes
        [outcome] = recover(c, info)
        assert (outcome.service, outcome.instant, outcome.result) == ("clustering", dead, "rolled back")
        assert not os.path.exists(path)
        assert [(p.service, p.instant, p.state) for p in pending(c, info)] == \
            [("compaction", live, "INFLIGHT"), ("clustering", dead, "REQUESTED")]
        assert c.get_instant_metadata(db, "t", dead, "clustering", "REQUESTED") == plan
        assert recover(c, info) == []  # nothing failed: the live claim is not taken
        live_claim.check(c)  # its executor may complete it
        with pytest.raises(ServiceClaimed, match=f"clustering {dead} of {db}.t was rolled back while"):
            dead_claim.check(c)
        rollbacks = [i for i in c.list_instants(db, "t", actions=["rollback"])]
        assert [i.state for i in rollbacks] == ["COMPLETED"]


def test_a_stale_plan_is_rolled_back_at_the_claim_once_and_a_waiting_one_never_fails(server):
    """Through the server (no Spark): a compaction plan nobody claimed is claimed by the next
    executor whatever its age (fake clock: tests/unit/store/hudi/test_service_plans.py) and is never
    listed as failed; one that went stale while an attempt
    ran (a write appended to its file group), back to REQUESTED after its claim expired, is refused
    to both executors that claim it (ServicePlanGone: rolled back by the server, once) and a new
    plan, with the appended log, is scheduled."""
    import json
    import time

    from client import HudiCatalog
    from hudi_format.commit_metadata import parse_compaction_plan, parse_rollback
    from hudi_format.config_keys import (
        CLIENT_HEARTBEAT_INTERVAL_MS,
        CLIENT_HEARTBEAT_TOLERABLE_MISSES,
        COMPACT_INLINE,
        COMPACT_MAX_DELTA_COMMITS,
    )
    from pipeline.compaction import claim
    from pipeline.errors import ServicePlanGone
    from pipeline.table import load
    from pipeline.table_services import recover

    db = name()
    with HudiMetastoreClient(server) as c:
        c.create_database(Database(name=db))
        base = c.get_database(db).locationUri.rstrip("/")
        c.register_hudi_table(HudiTableConfig(
            dbName=db, tableName="t", tableType=HudiTableType.MERGE_ON_READ, recordKeyFields=["id"],
            partitionFields=[], basePath=f"{base}/t",
            properties={COMPACT_INLINE: "true", COMPACT_MAX_DELTA_COMMITS: "2",
                        CLIENT_HEARTBEAT_INTERVAL_MS: "500", CLIENT_HEARTBEAT_TOLERABLE_MISSES: "1"}),
            [FieldSchema("id", "int", None)])

    def write(c, names) -> str:
        ts = c.create_instant(db, "t", None, "deltacommit", b"", 60).ts
        c.transition_to_inflight(db, "t", ts, "deltacommit")
        stats = [{"fileId": "f1-0", "path": n(ts), "partitionPath": "", "fileSizeInBytes": 10, "numWrites": 1}
                 for n in names]
        c.complete_instant(db, "t", ts, "deltacommit", json.dumps(
            {"partitionToWriteStats": {"": stats}, "compacted": False, "operationType": "UPSERT"}))
        return ts

    def compactions(c) -> list[tuple[str, str]]:
        return [(i.ts, i.state) for i in c.list_instants(db, "t", actions=["compaction"])]

    with HudiCatalog(server) as c:
        info = load(c, db, "t")
        first = write(c, [lambda ts: f"f1-0_0-1-0_{ts}.parquet"])
        write(c, [lambda ts: f".f1-0_{first}.log.1_0-1-0"])
        [(ts, state)] = compactions(c)
        assert state == "REQUESTED" and c.get_failed_instants(db, "t") == [] and recover(c, info) == []
        claim(c, db, "t", ts, "compaction")  # an attempt, whose executor then dies
        write(c, [lambda _: f".f1-0_{first}.log.2_0-1-0"])  # appended meanwhile: the plan is stale
        deadline = time.monotonic() + 30
        while ts not in {i.ts for i in c.get_failed_instants(db, "t")}:  # its claim (1 s) expires
            assert time.monotonic() < deadline
            time.sleep(0.2)
        [outcome] = recover(c, info)
        assert outcome.result == "rolled back" and compactions(c) == [(ts, "REQUESTED")]
        for _ in range(2):  # two executors: both refused, the plan rolled back once
            with pytest.raises(ServicePlanGone, match=f"compaction {ts} of {db}.t was rolled back by the server"):
                claim(c, db, "t", ts, "compaction")
        rollbacks = [i.ts for i in c.list_instants(db, "t", actions=["rollback"])
                     if ts in parse_rollback(c.get_instant_metadata(db, "t", i.ts, "rollback"))[0]]
        assert len(rollbacks) == 2  # the attempt's and the plan's
        [(again, state)] = compactions(c)
        assert state == "REQUESTED" and again > max(rollbacks)
        plan = parse_compaction_plan(c.get_instant_metadata(db, "t", again, "compaction", "REQUESTED"))
        assert [(o.file_id, len(o.log_files)) for o in plan] == [("f1-0", 2)]
        claim(c, db, "t", again, "compaction")
        assert compactions(c) == [(again, "INFLIGHT")]
