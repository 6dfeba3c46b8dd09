"""pipeline.read's promised fallback (docs/pipeline.md, "filters"): a string filter with decimal
literals never fails the read's plan. The server gets the filter's translation; when it refuses
data skipping, the read prunes by partition columns; when it refuses that too, by nothing; a
translation that fails prunes nothing. Spark filters the rows in every case (not run here: no JVM)."""

from __future__ import annotations

from decimal import InvalidOperation

import pytest

from client import Column, HiveTable, PrunedSlices, ServerError
from hudi_format.file_slice import FileInfo, FileSlice
from hudi_format.table_config import COW, HudiTableConfig
from pipeline import predicate, reader

FILTER = "amount > 1.5 AND amount <= 99.99BD AND dt = '2024-01-02'"
PARTITIONS = ["dt=2024-01-01", "dt=2024-01-02"]


def _slice(partition: str) -> FileSlice:
    name = f"f-{partition[-1]}_0-1-0_001.parquet"
    return FileSlice(partition, f"f-{partition[-1]}", "001",
                     FileInfo(partition, f"f-{partition[-1]}", name, 10, "001", False, None, "001",
                              f"/t/{partition}/{name}"))


class Catalog:
    """A HudiCatalog's reads for one table `db.t` (dt string, amount decimal(10,2)); `refuse`: the
    calls that answer a MetaException (ServerError), as a server that cannot evaluate the filter."""

    def __init__(self, *refuse: str):
        self.refuse, self.sent = set(refuse), {}

    def _call(self, name: str, arg):
        self.sent[name] = arg
        if name in self.refuse:
            raise ServerError(f"{name}: cannot evaluate the filter")

    def get_hudi_table(self, db, name):
        return HudiTableConfig(db_name=db, table_name=name, table_type=COW, record_key_fields=["id"],
                               partition_fields=["dt"], hive_style_partitioning=True, base_path="/t")

    def get_table(self, db, name):
        return HiveTable(db, name, "EXTERNAL_TABLE", "/t", [Column("id", "bigint"), Column("amount", "decimal(10,2)")],
                         [Column("dt", "string")])

    def list_instants(self, *args, **kwargs):
        return []

    def prune_file_slices(self, db, name, predicate_text=None):
        self._call("prune_file_slices", predicate_text)
        return PrunedSlices([_slice("dt=2024-01-02")], 0, 1, 1)

    def get_hudi_partitions(self, db, name, filter=None):
        self._call("get_hudi_partitions", filter)
        return [p for p in PARTITIONS if filter is None or p.endswith(filter.split("'")[1])]

    def get_latest_file_slices(self, db, name, partitions=None, as_of=None):
        self.sent["get_latest_file_slices"] = partitions
        return [_slice(p) for p in PARTITIONS if not partitions or p in partitions]


def test_the_server_gets_the_decimal_literals_translated():
    c = Catalog()
    plan = reader.plan(c, "db.t", filters=FILTER)
    assert c.sent["prune_file_slices"] == "amount > '1.5' and amount <= '99.99' and dt = '2024-01-02'"
    assert plan.files == ["dt=2024-01-02/f-2_0-1-0_001.parquet"] and plan.partitions_skipped == 1


def test_refused_data_skipping_falls_back_to_partition_pruning():
    c = Catalog("prune_file_slices")
    plan = reader.plan(c, "db.t", filters=FILTER)
    assert c.sent["get_hudi_partitions"] == "dt = '2024-01-02'"  # the partition columns' part only
    assert c.sent["get_latest_file_slices"] == ["dt=2024-01-02"]
    assert plan.files == ["dt=2024-01-02/f-2_0-1-0_001.parquet"]


def test_refused_partition_pruning_falls_back_to_every_file():
    c = Catalog("prune_file_slices", "get_hudi_partitions")
    plan = reader.plan(c, "db.t", filters=FILTER)
    assert c.sent["get_latest_file_slices"] is None
    assert len(plan.files) == 2


@pytest.mark.parametrize("error", [InvalidOperation, ValueError, ArithmeticError])
def test_a_translation_that_fails_prunes_nothing(monkeypatch, error):
    def fail(hive_type, lit):
        raise error("decimal")

    monkeypatch.setattr(predicate._Translator, "_decimal", staticmethod(fail))
    c = Catalog()
    plan = reader.plan(c, "db.t", filters=FILTER)
    assert c.sent["prune_file_slices"] == ""  # nothing to prune by: the server keeps every file
    assert plan.files == ["dt=2024-01-02/f-2_0-1-0_001.parquet"]  # (what this fake answers)
    assert predicate.server_filter(FILTER, {"amount": "decimal(10,2)", "dt": "string"}, {"dt"}) is None
