"""A table's record key format (hudi_format/key_generator.py): `id:5` for the complex key generator
on one field unless the table's config says `hoodie.write.complex.keygen.new.encoding=true`; the
pipeline's new tables record the format in their config; migration 0024 records it in the config
of the tables that existed before, from what their record index holds."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from hudi_format.config_keys import (
    COMPLEX_KEYGEN_NEW_ENCODING,
    KEYGENERATOR_TYPE,
    POPULATE_META_FIELDS,
    TABLE_VERSION,
    TIMELINE_SOURCE,
)
from hudi_format.errors import HudiFormatError
from hudi_format.key_generator import field_prefixed, record_keys
from hudi_format.table_config import COW, HudiTableConfig

COMPLEX = "org.apache.hudi.keygen.ComplexKeyGenerator"
SIMPLE = "org.apache.hudi.keygen.SimpleKeyGenerator"


def test_field_prefixed_by_generator_fields_and_config():
    assert field_prefixed(["id"], COMPLEX)
    assert field_prefixed(["id"], "org.apache.hudi.keygen.ComplexAvroKeyGenerator", {})
    assert field_prefixed(["id"], None, {KEYGENERATOR_TYPE: "COMPLEX"})  # version 8+: the type alone
    assert not field_prefixed(["id"], COMPLEX, {COMPLEX_KEYGEN_NEW_ENCODING: "true"})
    assert field_prefixed(["id"], COMPLEX, {COMPLEX_KEYGEN_NEW_ENCODING: "false"})
    assert not field_prefixed(["id"], SIMPLE) and not field_prefixed(["id"], None)
    assert field_prefixed(["id", "name"], SIMPLE, {COMPLEX_KEYGEN_NEW_ENCODING: "true"})  # several: always


def test_computed_keys_follow_the_format():
    cols = {"id": [5, 6], "name": ["a", ""]}
    assert record_keys(cols, ["id"], COMPLEX) == ["id:5", "id:6"]
    assert record_keys(cols, ["id"], COMPLEX, {COMPLEX_KEYGEN_NEW_ENCODING: "true"}) == ["5", "6"]
    assert record_keys(cols, ["id"], SIMPLE) == ["5", "6"]
    assert record_keys(cols, ["id", "name"], COMPLEX) == ["id:5,name:a", "id:6,name:__empty__"]
    with pytest.raises(HudiFormatError, match="all null or empty"):
        record_keys({"id": [None]}, ["id"], COMPLEX)


# --- the pipeline's new tables ------------------------------------------------------------------------

class _Client:
    """What pipeline.table.open_for_write asks of the metastore."""

    def __init__(self):
        self.config: HudiTableConfig | None = None

    def get_hudi_table(self, db, name):
        from client import NotFound

        if self.config is None:
            raise NotFound(f"{db}.{name}")
        return self.config

    def get_database(self, db):
        from client import Database

        return Database(name=db, location="file:/tmp/wh/" + db)

    def register_hudi_table(self, config, columns):
        self.config = config


def _create(partition_by, options=None):
    from pyspark.sql import types as T

    from pipeline.config import WriteConfig
    from pipeline.table import open_for_write

    schema = T.StructType([T.StructField("id", T.LongType()), T.StructField("a", T.StringType()),
                           T.StructField("b", T.StringType())])
    client = _Client()
    info, created = open_for_write(client, "db", "t", schema, record_key="id", precombine_field=None,
                                   partition_by=partition_by, path=None,
                                   cfg=WriteConfig.from_options("insert", options or {}))
    assert created
    return info


def test_new_tables_record_their_format():
    two = _create(["a", "b"])  # one key field, two partition fields: the complex generator
    assert two.properties[COMPLEX_KEYGEN_NEW_ENCODING] == "false" and two.field_prefixed_keys
    one = _create(["a"])  # the simple generator: no setting, plain keys
    assert COMPLEX_KEYGEN_NEW_ENCODING not in one.properties and not one.field_prefixed_keys
    old = _create(["a", "b"], {COMPLEX_KEYGEN_NEW_ENCODING: "true", TABLE_VERSION: "8"})
    assert not old.field_prefixed_keys
    with pytest.raises(ValueError, match="version 9"):
        _create(["a", "b"], {COMPLEX_KEYGEN_NEW_ENCODING: "true", TABLE_VERSION: "9"})


# --- migration 0024 ------------------------------------------------------------------------------------

def _migration():
    path = Path(__file__).parents[3] / "store/db/migrations/versions/0024_complex_key_format.py"
    spec = importlib.util.spec_from_file_location("m0024", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_migration_records_the_format_of_existing_tables(tmp_path):
    from sqlalchemy import insert, select

    from store.db import schema as S
    from tests.test_hudi_fixtures import services
    from thrift_idl.hive_metastore.ttypes import Database

    tables, timeline, _snapshot = services(tmp_path)
    tables.create_database(Database(name="db1"))
    cases = {  # name: (key fields, generator, extra config, a key in its record index, the setting after)
        "plain": (["id"], COMPLEX, {}, "5", "true"),
        "unindexed": (["id"], COMPLEX, {}, None, "true"),
        "prefixed": (["id"], COMPLEX, {}, "id:5", "false"),
        "by_type": (["id"], None, {KEYGENERATOR_TYPE: "COMPLEX"}, None, "true"),
        "simple": (["id"], SIMPLE, {}, "5", None),
        "two_fields": (["id", "a"], COMPLEX, {}, "id:5,a:x", None),
        "no_meta_fields": (["id"], COMPLEX, {POPULATE_META_FIELDS: "false"}, None, None),
        "hudi_writers": (["id"], COMPLEX, {TIMELINE_SOURCE: "storage"}, None, None),
        "recorded": (["id"], COMPLEX, {COMPLEX_KEYGEN_NEW_ENCODING: "false"}, "5", "false"),
    }
    ids = {}
    for name, (fields, generator, extra, _key, _want) in cases.items():
        timeline.register_table(HudiTableConfig(
            db_name="db1", table_name=name, table_type=COW, record_key_fields=fields, partition_fields=["p", "q"],
            key_generator=generator, base_path=str(tmp_path / name), properties=dict(extra)))
        ids[name] = tables.get_table("db1", name).id
    store = timeline.store
    with store.engine.begin() as conn:
        for name, (_f, _g, _e, key, _w) in cases.items():
            if key is not None:
                conn.execute(insert(S.record_index).values(tbl_id=ids[name], fg_id=1, instant=1, shard=0,
                                                           record_key=key))
        assert _migration().mark(conn) == 4
        got = {r.tbl_id: json.loads(r.properties) for r in conn.execute(select(S.hudi_table))}
        assert _migration().mark(conn) == 0  # a second run changes nothing
    for name, (*_rest, want) in cases.items():
        assert got[ids[name]].get(COMPLEX_KEYGEN_NEW_ENCODING) == want, name
