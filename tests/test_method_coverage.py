"""Every method of Hive 4's ThriftHiveMetastore, asked of the running server: served, answered with
the error naming a feature the server does not have, or (only where Hive's client falls back on it)
an unknown method. docs/conformance.md carries the table; this test fails when the server and the
table disagree."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from adapter.server import unsupported
from tests.conformance import method_coverage as mc
from tests.conftest import _unavailable
from tests.harness.procs import start_our_server, stop_process

CACHE = Path(os.environ.get("HUDI_METASTORE_CACHE", Path.home() / ".cache" / "hudi-metastore"))

# What the issue asks to be served (Hive 4 clients call them); each must be in the served column.
MUST_SERVE = [
    "drop_database_req", "get_aggr_stats_for", "get_open_txns", "get_open_txns_info", "get_open_txns_req",
    "get_partition_req", "get_partitions_req", "get_partition_names_req", "get_partition_names_ps_req",
    "get_partitions_ps_with_auth_req", "get_partitions_with_specs", "get_principals_in_role",
    "grant_privileges", "revoke_privileges", "markPartitionForEvent", "isPartitionMarkedForEvent",
    "get_table_names_by_filter", "get_next_notification", "get_current_notificationEventId",
    "get_notification_events_count", "fire_listener_event", "create_table_with_constraints",
    "get_primary_keys", "get_foreign_keys", "get_unique_constraints", "get_not_null_constraints",
    "get_default_constraints", "get_check_constraints", "get_all_table_constraints", "add_primary_key",
    "add_foreign_key", "add_unique_constraint", "add_not_null_constraint", "add_default_constraint",
    "add_check_constraint", "drop_constraint", "create_catalog", "get_catalog", "get_catalogs",
    "alter_catalog", "drop_catalog",
    # Hive 4.0.1's client's request forms
    "drop_table_req", "get_partitions_by_filter_req", "append_partition_req", "drop_partition_req",
    "alter_database_req", "add_partitions_pspec", "get_partitions_pspec", "get_part_specs_by_filter",
    "get_tables_ext", "flushCache", "refresh_privileges",
    # write ids and compaction requests (issue 39)
    "allocate_table_write_ids", "get_valid_write_ids", "get_latest_txnid_in_conflict", "compact", "compact2",
    "show_compact",
]


def test_method_list_is_hive4s():
    """hive4_methods.txt is what Hive 4.0.1's jar declares (checked whenever the jar is cached)."""
    jars = glob.glob(str(CACHE / "hive4-metastore-*" / "hive-standalone-metastore-common-4.*.jar"))
    if not jars or not shutil.which("javap"):
        _unavailable("Hive 4 metastore jars not cached: run `python -m tools.java_artifacts fetch hive4-metastore`")
    out = subprocess.run(["javap", "-cp", jars[0], "org.apache.hadoop.hive.metastore.api.ThriftHiveMetastore$Iface"],
                         capture_output=True, text=True, check=True).stdout
    declared = {line.split("(")[0].split()[-1] for line in out.splitlines() if "(" in line}
    assert declared == set(mc.hive4_methods())


@pytest.fixture(scope="module")
def fresh_server(tmp_path_factory):
    """A server of its own: empty-argument calls must not touch the shared one's objects."""
    tmp = tmp_path_factory.mktemp("coverage")
    port, proc = start_our_server(f"sqlite:///{tmp / 'metastore.db'}", tmp)
    try:
        yield port
    finally:
        stop_process(proc)


def test_every_hive4_method_is_served_or_refused_as_documented(fresh_server):
    result = mc.coverage(fresh_server)
    assert mc.documented() == mc.table(result), (
        "docs/conformance.md's method table is out of date: "
        "`python -m tests.conformance.method_coverage PORT --write` against a running server")
    not_served = [m for m in MUST_SERVE if result.get(m) != "served"]
    assert not not_served, f"not served: {not_served}"
    unknown = {m for m, r in result.items() if r == "unknown method"}
    assert unknown == set(mc.FALLBACKS), f"unknown methods without a fallback: {sorted(unknown)}"
    for method, answer in result.items():  # each method of an unsupported feature says so, and only those
        assert (answer == "unsupported") == (method in unsupported.FEATURE_OF), (method, answer)


def test_unsupported_methods_are_hive4s_with_their_field_ids():
    """adapter/server/unsupported.py names Hive 4 methods only, each in one feature; a MetaException
    field id is given for methods only."""
    assert set(unsupported.FEATURE_OF) <= set(mc.hive4_methods())
    assert sum(len(ms) for ms in unsupported.FEATURES.values()) == len(unsupported.FEATURE_OF)
    assert set(unsupported._META_FIELD) <= set(unsupported.FEATURE_OF)


def test_unsupported_answer_on_the_wire(fresh_server):
    """A method declaring a MetaException gets it in its result (at Hive's field id); one declaring
    none gets TApplicationException(INTERNAL_ERROR); the connection goes on."""
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.Thrift import TApplicationException, TMessageType, TType
    from thrift.transport import TSocket, TTransport

    from thrift_idl.hive_metastore.ttypes import MetaException

    transport = TTransport.TBufferedTransport(TSocket.TSocket("127.0.0.1", fresh_server))
    transport.open()
    proto = TBinaryProtocol(transport)
    try:
        for seqid, method in enumerate(("get_all_resource_plans", "update_compactor_state", "get_all_databases"), 1):
            proto.writeMessageBegin(method, TMessageType.CALL, seqid)
            proto.writeStructBegin("args")
            proto.writeFieldStop()
            proto.writeStructEnd()
            proto.writeMessageEnd()
            transport.flush()
            name, mtype, got_seqid = proto.readMessageBegin()
            assert (name, got_seqid) == (method, seqid)
            if method == "update_compactor_state":
                assert mtype == TMessageType.EXCEPTION
                exc = TApplicationException()
                exc.read(proto)
                assert exc.type == TApplicationException.INTERNAL_ERROR
                assert exc.message == ("update_compactor_state: transactional (ACID) tables: the compactor and its "
                                       "bookkeeping is not supported by this metastore (docs/conformance.md)")
            elif method == "get_all_resource_plans":
                assert mtype == TMessageType.REPLY
                proto.readStructBegin()
                _n, ftype, fid = proto.readFieldBegin()
                assert (ftype, fid) == (TType.STRUCT, 1)
                meta = MetaException.read(proto)
                assert meta.message == ("get_all_resource_plans: workload management (resource plans) is not "
                                       "supported by this metastore (docs/conformance.md)")
                proto.readFieldEnd()
                assert proto.readFieldBegin()[1] == TType.STOP
                proto.readStructEnd()
            else:
                assert mtype == TMessageType.REPLY
                proto.skip(TType.STRUCT)
            proto.readMessageEnd()
    finally:
        transport.close()
