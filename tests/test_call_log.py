"""The call log (adapter/call_log.py): every call's line says the client's address, the user
set_ugi named, the method and the object (db or db.table) it named; `--log-format json` writes the
same as JSON objects, one a line."""

from __future__ import annotations

import json
import re
import time

import pytest

from adapter.call_names import object_of
from tests.harness import open_thrift_client, start_our_server, stop_process
from thrift_idl.hive_metastore.ttypes import (
    Database,
    GetTableRequest,
    NoSuchObjectException,
    Table,
)


def test_object_of_parameters_and_structs():
    assert object_of("get_table", ("sales", "orders")) == "sales.orders"
    assert object_of("get_partitions_by_names", ("sales", "orders", ["a=1"])) == "sales.orders"
    assert object_of("get_database", ("sales",)) == "sales"
    assert object_of("get_table_req", (GetTableRequest(dbName="s", tblName="t"),)) == "s.t"
    assert object_of("create_table", (Table(dbName="s", tableName="t"),)) == "s.t"
    assert object_of("create_database", (Database(name="s"),)) == "s"
    assert object_of("list_instants", ("s", "t", None)) == "s.t"
    assert object_of("get_all_databases", ()) is None
    assert object_of("get_config_value", ("hive.x", "d")) is None


CALLS = "hudi_metastore.calls "  # the call lines' logger (the audit logger's lines name calls too)


def _lines(path, pred, timeout=20.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while True:
        found = [ln for ln in path.read_text().splitlines() if pred(ln)]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def _calls(port: int) -> str:
    client, transport = open_thrift_client(port)
    try:
        client.set_ugi("alice", [])
        with pytest.raises(NoSuchObjectException):
            client.get_table("default", "missing_t")
        client.create_database(Database(name="made_by_alice", parameters={}))
        sock = transport._TBufferedTransport__trans.handle  # the client's end: its local address
        host, port_ = sock.getsockname()[:2]
        return f"{host}:{port_}"
    finally:
        transport.close()


def test_call_lines_carry_client_user_and_object(tmp_path):
    port, proc = start_our_server(f"sqlite:///{tmp_path / 'm.db'}", tmp_path)
    try:
        me = _calls(port)
        line = _lines(proc.log_path, lambda ln: CALLS in ln and "call=get_table " in ln)
        assert line, proc.log_path.read_text()
        assert re.search(rf"call=get_table ms=[\d.]+ status=NoSuchObjectException client={re.escape(me)} "
                         r"user=alice object=default\.missing_t$", line[-1]), line[-1]
        made = _lines(proc.log_path, lambda ln: CALLS in ln and "call=create_database " in ln)
        assert made and made[-1].endswith(f"client={me} user=alice object=made_by_alice"), made
        ugi = _lines(proc.log_path, lambda ln: CALLS in ln and "call=set_ugi " in ln)
        assert ugi and "user=alice" in ugi[-1]  # set by this very call
    finally:
        stop_process(proc)


def test_json_log_lines(tmp_path):
    port, proc = start_our_server(f"sqlite:///{tmp_path / 'm.db'}", tmp_path,
                                  env={"HUDI_METASTORE_LOG_FORMAT": "json"})
    try:
        me = _calls(port)
        found = _lines(proc.log_path, lambda ln: '"call": "get_table"' in ln)
        assert found, proc.log_path.read_text()
        doc = json.loads(found[-1])
        assert doc["call"] == "get_table" and doc["status"] == "NoSuchObjectException"
        assert doc["client"] == me and doc["user"] == "alice" and doc["object"] == "default.missing_t"
        assert isinstance(doc["ms"], float) and doc["level"] == "INFO" and doc["logger"] == "hudi_metastore.calls"
        for ln in proc.log_path.read_text().splitlines():  # every line of the log is JSON
            json.loads(ln)
    finally:
        stop_process(proc)
