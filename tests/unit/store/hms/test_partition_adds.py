"""Adding partitions on the bulk path (PostgreSQL COPY, the driver's executemany elsewhere): a
writer that loses a race for a new partition gets Hive's AlreadyExists, every value is checked as
every other write's are, and a refused add leaves nothing behind."""

from __future__ import annotations

import pytest
from sqlalchemy import event, func, select

from adapter.serve import prepare_store
from store.db import bulk
from store.db import schema as S
from store.errors import AlreadyExists, MetaError
from store.hms.partitions import PartitionWrites
from store.services import open_services
from thrift_idl.hive_metastore.ttypes import Database, FieldSchema, Partition, SerDeInfo, StorageDescriptor, Table


@pytest.fixture
def services(own_backend_url, tmp_path):
    prepare_store(own_backend_url)
    svc = open_services(own_backend_url, str(tmp_path / "wh"))
    svc.tables.create_database(Database(name="d", locationUri=str(tmp_path / "wh" / "d.db"), parameters={}))
    sd = StorageDescriptor(cols=[FieldSchema("x", "int", None)], inputFormat="in", outputFormat="out",
                           serdeInfo=SerDeInfo(serializationLib="lib", parameters={}), parameters={})
    svc.tables.create_table(Table(tableName="t", dbName="d", sd=sd, tableType="MANAGED_TABLE", parameters={},
                                  partitionKeys=[FieldSchema("p", "string", None), FieldSchema("q", "string", None)]))
    try:
        yield svc
    finally:
        svc.close()


def _part(p: str, q: str = "q", **params: str) -> Partition:
    return Partition(values=[p, q], dbName="d", tableName="t", parameters=dict(params))


def _rows(svc, table) -> int:
    with svc.store.read() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def _miss_existence_check_once(monkeypatch) -> list:
    """The add's first existence check finds nothing (a concurrent writer commits right after it);
    the names it was asked are appended to the list returned."""
    real = PartitionWrites._existing
    missed: list = []

    def miss_once(self, conn, ctx, names):
        if not missed:
            missed.append(names)
            return set()
        return real(self, conn, ctx, names)

    monkeypatch.setattr(PartitionWrites, "_existing", miss_once)
    return missed


def test_the_loser_of_a_race_for_a_new_partition_gets_already_exists(services, monkeypatch, tmp_path):
    services.partitions.add_partitions("d", "t", [_part("a")])
    # The second writer's existence check runs before the first commits (made to miss once here):
    # its insert then meets the first's row, and the add answers as Hive does, not with a raw error.
    missed = _miss_existence_check_once(monkeypatch)
    many = [_part(f"b{i}") for i in range(40)]  # enough for their directories to be made meanwhile
    with pytest.raises(AlreadyExists, match="p=a/q=q"):
        services.partitions.add_partitions("d", "t", [*many, _part("a")])
    assert missed == [[f"p=b{i}/q=q" for i in range(40)] + ["p=a/q=q"]]
    assert [p.values for p in services.partitions.get_partitions("d", "t")] == [["a", "q"]]
    # the directories made while the transaction ran are gone with it, the winner's stays
    table_dir = tmp_path / "wh" / "d.db" / "t"
    assert sorted(d.name for d in table_dir.iterdir()) == ["p=a"] and (table_dir / "p=a" / "q=q").is_dir()
    added = services.partitions.add_partitions("d", "t", [*many, _part("a")], if_not_exists=True)
    assert [p.values for p in added] == [[f"b{i}", "q"] for i in range(40)]
    assert all((table_dir / f"p=b{i}" / "q=q").is_dir() for i in range(40))


def test_an_add_run_again_counts_no_files_in_the_directories_it_made(services, monkeypatch, tmp_path):
    # the insert meets a concurrent writer's row and the transaction runs again (if_not_exists):
    # the directories its first attempt made hold nothing of the client's, so nothing is counted
    # (as Hive counts only directories it did not make); a directory that existed is counted
    services.partitions.add_partitions("d", "t", [_part("a")])
    (tmp_path / "wh" / "d.db" / "t" / "p=old" / "q=q").mkdir(parents=True)
    missed = _miss_existence_check_once(monkeypatch)
    many = [_part(f"b{i}") for i in range(40)] + [_part("old")]
    added = services.partitions.add_partitions("d", "t", [*many, _part("a")], if_not_exists=True)
    assert missed and len(added) == 41
    assert [p.parameters.get("numFiles") for p in added] == [None] * 40 + ["0"]


def test_a_nul_in_any_value_of_a_bulk_add_is_refused(services):
    # the bulk path checks each text column's longest value for width; a NUL hides in a shorter one
    with pytest.raises(MetaError, match="NUL character"):
        services.partitions.add_partitions("d", "t", [_part("a", k="x" * 30_000), _part("b", k="v\x00")])
    assert _rows(services, S.partitions) == 0 and _rows(services, S.partition_params) == 0
    assert _rows(services, S.partition_key_val) == 0


def _statements(svc, monkeypatch) -> list[int]:
    """Statements the store sends from now on: an executemany counts one per row (psycopg pipelines
    them, each a statement), a bulk insert one per batch (COPY, or the driver's multi-row INSERT)."""
    sent: list[int] = []
    event.listen(svc.store.engine, "before_cursor_execute",
                 lambda _c, _cur, _s, params, _ctx, many: sent.append(len(params) if many else 1))
    real = bulk._insert

    def counted(conn, table, columns, rows, pg_types, batch):
        sent.append(1 if conn.dialect.name == "postgresql" else -(-len(rows) // batch))
        return real(conn, table, columns, rows, pg_types, batch)

    monkeypatch.setattr(bulk, "_insert", counted)
    return sent


def test_adds_and_alters_take_as_many_statements_for_many_partitions_as_for_few(services, monkeypatch):
    # a batch's partitions, key values, parameters and events each go in one statement (per batch
    # of dialect.BATCH values where a list is one parameter per value): 3 or 150 partitions alike
    sent = _statements(services, monkeypatch)
    counts = {}
    for n in (3, 150):
        tbl = f"t{n}"
        services.tables.create_table(Table(tableName=tbl, dbName="d", tableType="MANAGED_TABLE", parameters={},
                                           sd=services.tables.get_table("d", "t").sd,
                                           partitionKeys=[FieldSchema("p", "string", None)]))
        parts = [Partition(values=[f"v{i}"], dbName="d", tableName=tbl, parameters={"a": "1", "b": "2"})
                 for i in range(n)]
        sent.clear()
        services.partitions.add_partitions("d", tbl, parts)
        added = sum(sent)
        got = services.partitions.get_partitions("d", tbl)
        for p in got:
            p.parameters["c"] = "3"
        got[0].sd.location += "_moved"  # one changes its own way
        sent.clear()
        services.partitions.alter_partitions("d", tbl, got)
        counts[n] = (added, sum(sent))
        after = services.partitions.get_partitions("d", tbl)
        assert [p.parameters["c"] for p in after] == ["3"] * n
        assert [p.sd.location.endswith("_moved") for p in after] == [True] + [False] * (n - 1)
    assert counts[150] == counts[3], counts


@pytest.mark.parametrize("path_env", ["system", "none"])
def test_directories_made_in_the_background_report_what_they_made(tmp_path, monkeypatch, path_env):
    # by `mkdir -p` in a child process, or one by one when there is no mkdir program; one that
    # cannot be made (its parent is a file) is left out, one that existed is not reported
    from store.storage.boundary import DirsInProgress

    if path_env == "none":
        monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    (tmp_path / "file").write_text("x")
    (tmp_path / "old").mkdir()
    wanted = [f"file:{tmp_path}/t/a={i}/b={i}" for i in range(3)] + [f"file:{tmp_path}/file/x", str(tmp_path / "old")]
    made = DirsInProgress(wanted).wait()
    assert sorted(made) == sorted(wanted[:3])
    assert all((tmp_path / "t" / f"a={i}" / f"b={i}").is_dir() for i in range(3))


def test_values_of_a_bulk_add_and_alter_arrive_as_given(services):
    """The bulk paths (PostgreSQL's binary COPY of partitions, key values, parameters and events)
    keep every value as given: quotes, backslashes, tabs, newlines, non-ASCII, empty values,
    integers as key values, large times; the events' messages read back as the partitions."""
    import json

    from store.hms.notification_log import messages

    services.tables.create_table(Table(tableName="odd", dbName="d", tableType="MANAGED_TABLE", parameters={},
                                       sd=services.tables.get_table("d", "t").sd,
                                       partitionKeys=[FieldSchema("p", "string", None), FieldSchema("n", "int", None)]))
    odd = ['a"b', "c\\d", "t\tab", "new\nline", "é€😀", "", "{x,y}", "\\N"]
    parts = [Partition(values=[v or "e", str(-(2 ** 40) + i)], dbName="d", tableName="odd", lastAccessTime=2 ** 31 - 1,
                       parameters={"k\\" + v: v, "plain": str(i)}) for i, v in enumerate(odd)]
    last = services.tables.notifications.current_id()
    services.partitions.add_partitions("d", "odd", parts)
    got = {tuple(p.values): p for p in services.partitions.get_partitions("d", "odd")}
    for i, v in enumerate(odd):
        p = got[(v or "e", str(-(2 ** 40) + i))]
        assert p.lastAccessTime == 2 ** 31 - 1
        assert {k: p.parameters[k] for k in ("k\\" + v, "plain")} == {"k\\" + v: v, "plain": str(i)}
    for p in got.values():
        p.parameters["more"] = 'q"\\'
    services.partitions.alter_partitions("d", "odd", list(got.values()))
    now = {tuple(p.values): p for p in services.partitions.get_partitions("d", "odd")}
    events = services.tables.notifications.next_events(last)
    assert [e.eventType for e in events] == ["ADD_PARTITION"] + ["ALTER_PARTITION"] * len(odd)
    added = json.loads(events[0].message)["partitionListJson"]
    assert sorted(tuple(messages.from_tjson(t, Partition).values) for t in added) == sorted(got)
    for e in events[1:]:
        after = messages.from_tjson(json.loads(e.message)["partitionObjAfterJson"], Partition)
        assert after.parameters["more"] == 'q"\\'
        assert after.parameters == now[tuple(after.values)].parameters


def test_an_alter_of_many_writes_each_partitions_parameters_as_sent(services):
    """An alter of many partitions adds the parameters of a partition that kept all its old ones
    and replaces those of the others: a key removed, a value changed, one added, none changed, a
    stored NULL (read as "") sent back as "" are each stored as sent."""
    keep = {"transient_lastDdlTime": "7", "numFiles": "0", "totalSize": "0"}
    parts = [Partition(values=[f"v{i}", "q"], dbName="d", tableName="t", parameters={**keep, "a": "1", "b": "2"})
             for i in range(5)]
    services.partitions.add_partitions("d", "t", parts)
    pp, p = S.partition_params, S.partitions
    with services.store.write() as conn:
        pid = conn.execute(select(p.c.part_id).where(p.c.part_name == "p=v4/q=q")).scalar_one()
        conn.execute(pp.update().where(pp.c.part_id == pid, pp.c.param_key == "b").values(param_value=None))
    got = {p.values[0]: p for p in services.partitions.get_partitions("d", "t")}
    assert got["v4"].parameters["b"] == ""
    sent = {"v0": {**keep, "a": "1"}, "v1": {**keep, "a": "1", "b": "changed"},
            "v2": {**keep, "a": "1", "b": "2", "c": "added"}, "v3": {**keep, "a": "1", "b": "2"},
            "v4": {**keep, "a": "1", "b": ""}}
    for v, params in sent.items():
        got[v].parameters = dict(params)
        got[v].lastAccessTime = 12345  # all change alike: written with their encoded parts (one statement)
    services.partitions.alter_partitions("d", "t", list(got.values()))
    after = {p.values[0]: p.parameters for p in services.partitions.get_partitions("d", "t")}
    assert after == sent
    assert {p.lastAccessTime for p in services.partitions.get_partitions("d", "t")} == {12345}
    with services.store.read() as conn:
        assert None not in set(conn.execute(select(p.c.update_time).where(p.c.part_name.like("p=v%"))).scalars())
    with services.store.read() as conn:
        stored = conn.execute(select(pp.c.param_value).where(pp.c.part_id == pid, pp.c.param_key == "b")).scalar_one()
    assert stored == ""
