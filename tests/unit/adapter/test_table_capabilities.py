"""Hive's client capability check on insert-only tables and get_table_objects_by_name_req's pattern
and projection, in-process over SQLite (adapter/handlers/tables.py; compared with Hive 4 in
tests/test_hive4_methods.py: test_insert_only_tables_need_the_capability,
test_hive4_client_request_forms)."""

from __future__ import annotations

import pytest

from adapter.handlers import service
from adapter.handlers.databases import DatabaseHandler
from adapter.handlers.tables import INSERT_ONLY_REFUSED, TableHandler
from adapter.serve import prepare_store
from store.services import open_services
from tests.conformance.objects import cols, database, table
from thrift_idl.hive_metastore.ttypes import (
    ClientCapabilities,
    ClientCapability,
    GetProjectionsSpec,
    GetTableRequest,
    GetTablesRequest,
    InvalidOperationException,
    MetaException,
)

pytestmark = pytest.mark.backends("sqlite")

ABLE = ClientCapabilities(values=[ClientCapability.INSERT_ONLY_TABLES])


@pytest.fixture
def tables(own_backend_url, tmp_path):
    prepare_store(own_backend_url)
    svc = open_services(own_backend_url, str(tmp_path / "wh"))
    DatabaseHandler(svc.tables).create_database(database("d"))
    handler = TableHandler(svc.tables, svc.partitions)
    handler.create_table(table("d", "io", cols("a int"), params={"transactional": "true",
                                                                  "transactional_properties": "Insert_Only"}))
    handler.create_table(table("d", "plain", cols("a int")))
    service._session.conf = {}
    yield handler
    service._session.conf = {}


def _refused(call) -> None:
    with pytest.raises(MetaException) as info:
        call()
    assert info.value.message == INSERT_ONLY_REFUSED


def test_insert_only_tables_need_the_capability(tables):
    _refused(lambda: tables.get_table("d", "io"))
    _refused(lambda: tables.get_table_req(GetTableRequest(dbName="d", tblName="io")))
    _refused(lambda: tables.get_table_objects_by_name("d", ["plain", "io"]))
    _refused(lambda: tables.get_table_objects_by_name_req(GetTablesRequest(dbName="d", tblNames=["io"])))
    _refused(lambda: tables.get_table_objects_by_name_req(GetTablesRequest(dbName="d", tablesPattern="*")))
    assert tables.get_table_req(GetTableRequest(dbName="d", tblName="io", capabilities=ABLE)).table is not None
    assert len(tables.get_table_objects_by_name_req(GetTablesRequest(dbName="d", capabilities=ABLE)).tables) == 2
    assert tables.get_table("d", "plain") is not None
    service._session.conf["metastore.client.capability.check"] = "FALSE"  # what setMetaConf sets
    assert tables.get_table("d", "io") is not None


def test_tables_by_pattern_with_a_projection(tables):
    names = GetProjectionsSpec(fieldList=["tableName", "owner"])
    got = tables.get_table_objects_by_name_req(GetTablesRequest(
        dbName="d", tablesPattern="pl*|x", projectionSpec=names)).tables
    assert [(t.tableName, t.owner, t.dbName, t.sd, t.tableType, t.id) for t in got] == [
        ("plain", "tester", None, None, "MANAGED_TABLE", 0)]
    with pytest.raises(InvalidOperationException):
        tables.get_table_objects_by_name_req(GetTablesRequest(
            dbName="d", projectionSpec=GetProjectionsSpec(includeParamKeyPattern="k%")))
    with pytest.raises(MetaException):
        tables.get_table_objects_by_name_req(GetTablesRequest(
            dbName="d", projectionSpec=GetProjectionsSpec(fieldList=["nosuch"])))
