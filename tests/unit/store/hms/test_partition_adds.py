"""Adding partitions on the bulk path (PostgreSQL COPY, the driver's executemany elsewhere): a
writer that loses a race for a new partition gets Hive's AlreadyExists, every value is checked as
every other write's are, and a refused add leaves nothing behind."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from adapter.serve import prepare_store
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


def test_the_loser_of_a_race_for_a_new_partition_gets_already_exists(services, monkeypatch):
    services.partitions.add_partitions("d", "t", [_part("a")])
    # The second writer's existence check runs before the first commits (made to miss once here):
    # its insert then meets the first's row, and the add answers as Hive does, not with a raw error.
    real = PartitionWrites._existing
    missed = []

    def miss_once(self, conn, ctx, names):
        if not missed:
            missed.append(names)
            return set()
        return real(self, conn, ctx, names)

    monkeypatch.setattr(PartitionWrites, "_existing", miss_once)
    with pytest.raises(AlreadyExists, match="p=a/q=q"):
        services.partitions.add_partitions("d", "t", [_part("b"), _part("a")])
    assert missed == [["p=b/q=q", "p=a/q=q"]]
    assert [p.values for p in services.partitions.get_partitions("d", "t")] == [["a", "q"]]
    assert services.partitions.add_partitions("d", "t", [_part("b"), _part("a")], if_not_exists=True)[0].values \
        == ["b", "q"]


def test_a_nul_in_any_value_of_a_bulk_add_is_refused(services):
    # the bulk path checks each text column's longest value for width; a NUL hides in a shorter one
    with pytest.raises(MetaError, match="NUL character"):
        services.partitions.add_partitions("d", "t", [_part("a", k="x" * 30_000), _part("b", k="v\x00")])
    assert _rows(services, S.partitions) == 0 and _rows(services, S.partition_params) == 0
    assert _rows(services, S.partition_key_val) == 0
