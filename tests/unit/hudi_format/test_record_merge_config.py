"""The record merge keys of tables of version 8 and 9 (issue 45): the server registers a table with
what Hudi 1.2's writer puts in `hoodie.properties` (tests/fixtures/hudi-table-config: the merge mode,
the ordering field, in version 8 the merger id and payload class), the mirror writes them, and
migration 0027 gives them to the tables registered before, each keeping the values it has."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from sqlalchemy import select, update

from hudi_format.config_keys import (
    ORDERING_FIELDS,
    PAYLOAD_CLASS,
    PRECOMBINE_FIELD,
    RECORD_MERGE_MODE,
    RECORD_MERGE_STRATEGY_ID,
    TABLE_VERSION,
    TIMELINE_SOURCE,
    WRITE_TABLE_TYPE,
)
from hudi_format.layout import storage_properties
from hudi_format.table_config import COW, MOR, HudiTableConfig, read_properties, record_merge_properties

FIXTURES = Path(__file__).parents[2] / "fixtures" / "hudi-table-config"
MERGE_KEYS = (RECORD_MERGE_MODE, RECORD_MERGE_STRATEGY_ID, PAYLOAD_CLASS, ORDERING_FIELDS)
CASES = [(kind, version, pre) for kind in (COW, MOR) for version in (8, 9) for pre in (True, False)]


def _name(kind: str, version: int, pre: bool) -> str:
    return f"{'cow' if kind == COW else 'mor'}{version}_{'pre' if pre else 'nopre'}"


def _hudis(kind: str, version: int, pre: bool, name: str | None = None) -> dict[str, str | None]:
    """The merge keys of the table Hudi 1.2 wrote (None: a key it does not write)."""
    props = read_properties((FIXTURES / f"{name or _name(kind, version, pre)}.properties").read_text())
    assert props["hoodie.table.version"] == str(version) and props["hoodie.table.type"] == kind
    return {k: props.get(k) for k in MERGE_KEYS}


DEFAULT = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
PARTIAL = "org.apache.hudi.common.model.PartialUpdateAvroPayload"


def _merge_keys(props: dict[str, str]) -> dict[str, str | None]:
    return {k: props.get(k) for k in MERGE_KEYS}


@pytest.mark.parametrize("kind,version,pre", CASES, ids=[_name(*c) for c in CASES])
def test_record_merge_properties_are_hudis(kind, version, pre):
    want = {k: v for k, v in _hudis(kind, version, pre).items() if v is not None}
    assert record_merge_properties(version, "ts" if pre else None) == want
    assert record_merge_properties(6, "ts") == {}


def test_a_payload_class_decides_as_hudis():
    """Given a payload class Hudi 1.2 decides by it (its reader rejects a version-8 table whose
    payload class and merger id disagree): DefaultHoodieRecordPayload is EVENT_TIME_ORDERING also
    without an ordering field (later writes win on equal values, as the pipeline merges), another
    class CUSTOM in version 8; in version 9 the server leaves another class alone."""
    want = {k: v for k, v in _hudis(MOR, 8, False, "default_nopre8").items() if v is not None}
    assert record_merge_properties(8, None, DEFAULT) == want
    want = {k: v for k, v in _hudis(MOR, 8, True, "partial_pre8").items() if v is not None}
    assert record_merge_properties(8, "ts", PARTIAL) == want
    # version 9: Hudi writes the class as hoodie.table.legacy.payload.class; the mode is the same
    assert record_merge_properties(9, None, DEFAULT) == {RECORD_MERGE_MODE: _hudis(MOR, 9, False, "default_nopre9")[
        RECORD_MERGE_MODE]}
    assert record_merge_properties(9, "ts", PARTIAL) == {}


@pytest.fixture
def hudi(tmp_path):
    from tests.test_hudi_fixtures import services
    from thrift_idl.hive_metastore.ttypes import Database

    tables, timeline, _snapshot = services(tmp_path)
    tables.create_database(Database(name="db1"))
    return tables, timeline


def _register(timeline, tmp_path, name: str, kind: str, version: int, precombine: str | None,
              props: dict[str, str] | None = None) -> None:
    timeline.register_table(HudiTableConfig(
        db_name="db1", table_name=name, table_type=kind, record_key_fields=["id"], partition_fields=["p"],
        precombine_field=precombine, table_version=version, base_path=str(tmp_path / name),
        properties=dict(props or {})))


def test_new_pipeline_tables_carry_hudis_merge_keys(hudi, tmp_path):
    """The pipeline's new tables of version 8 and 9 (open_for_write through the server's
    registration): hoodie.properties as the mirror writes them hold Hudi 1.2's merge keys."""
    from pyspark.sql import types as T

    from pipeline.config import WriteConfig
    from pipeline.table import open_for_write

    _tables, timeline = hudi

    class Client:  # what open_for_write asks of the metastore, answered by the server's services
        def get_hudi_table(self, db, name):
            from client import NotFound
            from store.errors import NoSuchObject

            try:
                return timeline.get_table_config(db, name)
            except NoSuchObject as e:
                raise NotFound(str(e)) from e

        def get_database(self, db):
            from client import Database

            return Database(name=db, location=str(tmp_path / "wh" / db))

        def register_hudi_table(self, config, columns):
            timeline.register_table(config)

    schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("ts", T.LongType()),
                           T.StructField("p", T.StringType())])
    for kind, version, pre in CASES:
        name = _name(kind, version, pre)
        info, created = open_for_write(
            Client(), "db1", name, schema, record_key="id", precombine_field="ts" if pre else None,
            partition_by="p", path=None,
            cfg=WriteConfig.from_options("upsert", {TABLE_VERSION: str(version), WRITE_TABLE_TYPE: kind}))
        assert created and info.table_type == kind
        on_storage = storage_properties(timeline.get_table_config("db1", name))
        assert _merge_keys(on_storage) == _hudis(kind, version, pre), name
        assert on_storage.get(PRECOMBINE_FIELD) == ("ts" if pre else None), name  # Hudi 1.0 reads this one


def test_registration_keeps_what_a_table_has(hudi, tmp_path):
    _tables, timeline = hudi
    custom = {RECORD_MERGE_MODE: "CUSTOM", RECORD_MERGE_STRATEGY_ID: "my-merger"}
    _register(timeline, tmp_path, "custom", MOR, 8, "ts", custom)
    _register(timeline, tmp_path, "payload", MOR, 8, None, {PAYLOAD_CLASS: "my.Payload"})
    _register(timeline, tmp_path, "payload9", MOR, 9, None, {PAYLOAD_CLASS: "my.Payload"})
    _register(timeline, tmp_path, "tracked", MOR, 9, "ts", {TIMELINE_SOURCE: "storage"})
    _register(timeline, tmp_path, "v6", MOR, 6, "ts")
    _register(timeline, tmp_path, "ordering", COW, 9, None, {ORDERING_FIELDS: "ts"})  # as Hudi 1.2 spells it
    got = {n: _merge_keys(timeline.get_table_config("db1", n).hoodie_properties())
           for n in ("custom", "payload", "payload9", "tracked", "v6", "ordering")}
    assert got["custom"] == {**custom, PAYLOAD_CLASS: None, ORDERING_FIELDS: None}
    assert got["payload"] == {RECORD_MERGE_MODE: "CUSTOM", PAYLOAD_CLASS: "my.Payload",
                              RECORD_MERGE_STRATEGY_ID: "00000000-0000-0000-0000-000000000000", ORDERING_FIELDS: None}
    assert got["payload9"] == {**dict.fromkeys(MERGE_KEYS), PAYLOAD_CLASS: "my.Payload"}
    assert got["tracked"] == got["v6"] == dict.fromkeys(MERGE_KEYS)
    assert got["ordering"] == _hudis(COW, 9, True)


# --- migration 0027 ------------------------------------------------------------------------------------

def _migration():
    path = Path(__file__).parents[3] / "store/db/migrations/versions/0027_record_merge_mode.py"
    spec = importlib.util.spec_from_file_location("m0027", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_migration_fills_in_tables_registered_before(hudi, tmp_path):
    from store.db import schema as S

    tables, timeline = hudi
    for kind, version, pre in CASES:
        _register(timeline, tmp_path, _name(kind, version, pre), kind, version, "ts" if pre else None)
    # the pipeline's merge-on-read tables before this fix: DefaultHoodieRecordPayload, also without
    # a precombine field
    for version in (8, 9):
        _register(timeline, tmp_path, f"old_mor{version}", MOR, version, None, {PAYLOAD_CLASS: DEFAULT})
    _register(timeline, tmp_path, "payload", MOR, 8, None, {PAYLOAD_CLASS: "my.Payload"})
    _register(timeline, tmp_path, "payload9", MOR, 9, None, {PAYLOAD_CLASS: "my.Payload"})
    _register(timeline, tmp_path, "tracked", MOR, 9, "ts", {TIMELINE_SOURCE: "storage"})
    _register(timeline, tmp_path, "v6", COW, 6, "ts")
    _register(timeline, tmp_path, "adopted", MOR, 8, "ts", {RECORD_MERGE_MODE: "CUSTOM"})
    kept_payload = ("payload", "payload9", "old_mor8", "old_mor9")
    ids = {n: tables.get_table("db1", n).id for n in
           [_name(*c) for c in CASES] + [*kept_payload, "tracked", "v6", "adopted"]}
    h = S.hudi_table
    with timeline.store.write() as conn:
        before = {r.tbl_id: json.loads(r.properties) for r in conn.execute(select(h))}
        for name, tbl_id in ids.items():  # as the server registered them before this fix
            props = before[tbl_id]
            if name != "adopted":
                for k in (RECORD_MERGE_MODE, RECORD_MERGE_STRATEGY_ID, ORDERING_FIELDS):
                    props.pop(k, None)
                if name not in kept_payload:
                    props.pop(PAYLOAD_CLASS, None)
            conn.execute(update(h).where(h.c.tbl_id == tbl_id).values(properties=json.dumps(props)))
        assert _migration().fill(conn) == len(CASES) + 3
        assert _migration().fill(conn) == 0  # a second run changes nothing
    for kind, version, pre in CASES:
        name = _name(kind, version, pre)
        assert _merge_keys(storage_properties(timeline.get_table_config("db1", name))) == \
            _hudis(kind, version, pre), name
    got = {n: _merge_keys(timeline.get_table_config("db1", n).hoodie_properties())
           for n in (*kept_payload, "tracked", "v6", "adopted")}
    assert got["old_mor8"] == _hudis(MOR, 8, False, "default_nopre8")  # Hudi's reader takes it (no conflict)
    assert got["old_mor9"] == {**dict.fromkeys(MERGE_KEYS), RECORD_MERGE_MODE: "EVENT_TIME_ORDERING",
                               PAYLOAD_CLASS: DEFAULT}
    assert got["payload"] == {RECORD_MERGE_MODE: "CUSTOM", PAYLOAD_CLASS: "my.Payload",
                              RECORD_MERGE_STRATEGY_ID: "00000000-0000-0000-0000-000000000000", ORDERING_FIELDS: None}
    assert got["payload9"] == {**dict.fromkeys(MERGE_KEYS), PAYLOAD_CLASS: "my.Payload"}
    assert got["tracked"] == got["v6"] == dict.fromkeys(MERGE_KEYS)
    assert got["adopted"] == {**dict.fromkeys(MERGE_KEYS), RECORD_MERGE_MODE: "CUSTOM"}
