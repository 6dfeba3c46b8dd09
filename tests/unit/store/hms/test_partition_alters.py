"""An alter of many partitions records each partition as it is afterwards (its ALTER_PARTITION
event's `partitionObjAfterJson`) without reading it back when every partition kept sharing the
table's descriptor: the partitions it builds are the ones a read gives, for new locations, access
times, parameters (added, changed, removed, counted statistics), the default partition's value and
escaped names; a partition given a descriptor of its own or new columns makes it read them back.
HMS_WIRE_CHECK (the suite's default) compares the two on every such alter; here they are also
compared with the check off, the way a server runs. Its last writes failing change nothing."""

from __future__ import annotations

import json

import pytest

from adapter.serve import prepare_store
from store.hms.notification_log import messages
from store.services import open_services
from thrift_idl.hive_metastore.ttypes import Database, FieldSchema, Partition, SerDeInfo, StorageDescriptor, Table

DEFAULT = "__HIVE_DEFAULT_PARTITION__"


@pytest.fixture
def services(own_backend_url, tmp_path):
    prepare_store(own_backend_url)
    svc = open_services(own_backend_url, str(tmp_path / "wh"))
    svc.tables.create_database(Database(name="d", locationUri=str(tmp_path / "wh" / "d.db"), parameters={}))
    svc.tables.create_table(Table(tableName="t", dbName="d", sd=_sd(), tableType="MANAGED_TABLE", parameters={},
                                  partitionKeys=[FieldSchema("p", "string", None), FieldSchema("q", "string", None)]))
    try:
        yield svc
    finally:
        svc.close()


def _sd(cols=("x",), lib="lib") -> StorageDescriptor:
    return StorageDescriptor(cols=[FieldSchema(c, "int", None) for c in cols], inputFormat="in", outputFormat="out",
                             serdeInfo=SerDeInfo(serializationLib=lib, parameters={}), parameters={})


VALUES = [["a", "1"], ["b/é", "2"], ["", "3"], [DEFAULT, "4"], ["c", 'q"\\']]


def _afters(svc, last: int) -> dict[tuple[str, ...], Partition]:
    events = [e for e in svc.tables.notifications.next_events(last) if e.eventType == "ALTER_PARTITION"]
    afters = [messages.from_tjson(json.loads(e.message)["partitionObjAfterJson"], Partition) for e in events]
    return {tuple(p.values): p for p in afters}


def _alter_and_compare(svc, parts: list[Partition]) -> dict[tuple[str, ...], Partition]:
    last = svc.tables.notifications.current_id()
    svc.partitions.alter_partitions("d", "t", parts)
    now = {tuple(p.values): p for p in svc.partitions.get_partitions("d", "t")}
    afters = _afters(svc, last)
    assert sorted(afters) == sorted(tuple(p.values) for p in parts)
    for key, after in afters.items():
        assert after == now[key], key
    return now


@pytest.mark.parametrize("check", ["1", "0"])
def test_the_events_after_an_alter_of_many_are_the_partitions_read_back(services, tmp_path, monkeypatch, check):
    monkeypatch.setenv("HMS_WIRE_CHECK", check)
    services.partitions.add_partitions("d", "t", [
        Partition(values=v, dbName="d", tableName="t", sd=_sd(), parameters={"k": "v", "gone": "x"}) for v in VALUES])
    got = services.partitions.get_partitions("d", "t")
    (tmp_path / "wh" / "d.db" / "t" / "p=a" / "q=1" / "data.txt").write_text("12345")  # counted: numFiles 1
    for i, p in enumerate(got):
        p.parameters = {**p.parameters, "added": str(i), "k": "changed" if i % 2 else "v"}
        if p.values == ["a", "1"]:  # without its fast statistics: counted again
            p.parameters = {k: v for k, v in p.parameters.items() if k not in ("numFiles", "totalSize")}
        if p.values == VALUES[1]:
            del p.parameters["gone"]
        if p.values == VALUES[2]:
            p.sd.location = str(tmp_path / "elsewhere" / "x")  # a new location
        if p.values == VALUES[3]:
            p.lastAccessTime = 1234
    now = _alter_and_compare(services, got)
    assert now[("a", "1")].parameters["numFiles"] == "1"
    assert now[tuple(VALUES[2])].sd.location.endswith("/elsewhere/x")
    assert now[tuple(VALUES[3])].lastAccessTime == 1234 and "gone" not in now[tuple(VALUES[1])].parameters
    # again, nothing changed but the DDL time: the same partitions
    _alter_and_compare(services, services.partitions.get_partitions("d", "t"))


@pytest.mark.parametrize("change", ["own descriptor", "new columns"])
def test_an_alter_that_changes_a_descriptor_reads_the_partitions_back(services, monkeypatch, change):
    monkeypatch.setenv("HMS_WIRE_CHECK", "0")
    services.partitions.add_partitions("d", "t", [
        Partition(values=v, dbName="d", tableName="t", sd=_sd(), parameters={}) for v in VALUES[:3]])
    got = services.partitions.get_partitions("d", "t")
    changed = next(p for p in got if p.values == VALUES[1])
    location = changed.sd.location
    changed.sd = _sd(lib="other") if change == "own descriptor" else _sd(cols=("x", "y"))
    changed.sd.location = location
    now = _alter_and_compare(services, got)
    assert (now[tuple(VALUES[1])].sd.serdeInfo.serializationLib == "other" if change == "own descriptor"
            else [c.name for c in now[tuple(VALUES[1])].sd.cols] == ["x", "y"])


@pytest.mark.parametrize("failing", ["parameter key too long", "database error"])
def test_an_alter_of_many_whose_last_writes_fail_changes_nothing(services, monkeypatch, failing):
    """The partition rows and parameters an alter of many writes last (on PostgreSQL on a thread of
    their own, while the events are written): when they fail, the call raises their error and
    leaves every partition, and the log, as they were."""
    from store.errors import MetaError

    services.partitions.add_partitions("d", "t", [
        Partition(values=v, dbName="d", tableName="t", sd=_sd(), parameters={"k": "v"}) for v in VALUES[:3]])
    before = services.partitions.get_partitions("d", "t")
    last = services.tables.notifications.current_id()
    got = services.partitions.get_partitions("d", "t")
    for p in got:
        p.parameters = {**p.parameters, "added": "1"}
        p.sd.location = p.sd.location + "-moved"
    if failing == "parameter key too long":
        got[1].parameters["x" * 5000] = "1"
        expected: type[Exception] = MetaError
    else:
        def broken(conn, table, *args, **kwargs):
            raise RuntimeError("the database failed")
        monkeypatch.setattr("store.hms.partitions.partition_alteration.insert_rows", broken)
        expected = RuntimeError
    with pytest.raises(expected):
        services.partitions.alter_partitions("d", "t", got)
    assert services.partitions.get_partitions("d", "t") == before
    assert services.tables.notifications.current_id() == last
