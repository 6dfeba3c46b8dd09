"""Checks for the committed Thrift IDL and the Python bindings generated from it.

1. The committed bindings are exactly what ``thrift_idl/generate.sh`` produces.
2. SkewedInfo (map<list<string>, string>) survives a round trip through both the
   pure-Python and the accelerated (C) binary protocol.
3. Wire facts agree with an independently generated Hive binding (pyiceberg's
   vendored Hive 4 ``hive_metastore``; hmsclient's Hive 2.x one as a fallback).
4. The running server answers every method the brief lists (none is an "Invalid method name").
"""

import importlib
import importlib.metadata
import inspect
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from thrift.protocol.TBinaryProtocol import TBinaryProtocol, TBinaryProtocolAccelerated
from thrift.Thrift import TApplicationException, TMessageType, TType
from thrift.transport.TTransport import TMemoryBuffer

from tests.harness import ServerStartError, start_our_server, stop_process, thrift_client
from thrift_idl.fb303 import FacebookService as our_fb303
from thrift_idl.hive_metastore import ThriftHiveMetastore as our_service
from thrift_idl.hive_metastore import ttypes as ours

REPO = Path(__file__).resolve().parents[1]


def _under_ci():
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


# ---------------------------------------------------------------------------
# 1. committed bindings match the IDL
# ---------------------------------------------------------------------------

def test_generated_bindings_are_up_to_date():
    if shutil.which(os.environ.get("THRIFT", "thrift")) is None:
        if _under_ci():
            pytest.fail("thrift compiler not found, but CI requires the --check to run")
        pytest.skip("thrift compiler not installed")
    proc = subprocess.run(
        ["bash", str(REPO / "thrift_idl" / "generate.sh"), "--check"],
        cwd=REPO, capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


# ---------------------------------------------------------------------------
# 2. SkewedInfo round trip
# ---------------------------------------------------------------------------

def _table_with_skew():
    skew = ours.SkewedInfo(
        skewedColNames=["country", "year"],
        skewedColValues=[["nl", "2024"], ["de", "2023"]],
        skewedColValueLocationMaps={
            ("nl", "2024"): "s3://bucket/t/country=nl/year=2024",
            ("de", "2023"): "s3://bucket/t/country=de/year=2023",
        },
    )
    sd = ours.StorageDescriptor(
        cols=[ours.FieldSchema("country", "string", None), ours.FieldSchema("year", "string", "")],
        location="s3://bucket/t",
        inputFormat="org.apache.hadoop.mapred.TextInputFormat",
        outputFormat="org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat",
        compressed=False,
        numBuckets=-1,
        serdeInfo=ours.SerDeInfo("t", "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe", {}),
        bucketCols=[],
        sortCols=[],
        parameters={},
        skewedInfo=skew,
        storedAsSubDirectories=True,
    )
    return ours.Table(tableName="t", dbName="db", owner="me", createTime=1, lastAccessTime=0,
                      retention=0, sd=sd, partitionKeys=[], parameters={"k": "v"},
                      tableType="EXTERNAL_TABLE")


def _encode(obj, protocol):
    buf = TMemoryBuffer()
    obj.write(protocol(buf))
    return buf.getvalue()


def _decode(cls, data, protocol):
    proto = protocol(TMemoryBuffer(data))
    if protocol is TBinaryProtocolAccelerated:
        # make sure the C extension really is the decoder under test
        assert proto._fast_decode is not None, "thrift fastbinary extension not available"
    obj = cls()
    obj.read(proto)
    return obj


PROTOCOLS = [TBinaryProtocol, TBinaryProtocolAccelerated]


@pytest.mark.parametrize("writer", PROTOCOLS, ids=lambda p: p.__name__)
@pytest.mark.parametrize("reader", PROTOCOLS, ids=lambda p: p.__name__)
def test_skewed_info_round_trip(writer, reader):
    table = _table_with_skew()
    data = _encode(table, writer)
    back = _decode(ours.Table, data, reader)

    maps = back.sd.skewedInfo.skewedColValueLocationMaps
    assert maps == table.sd.skewedInfo.skewedColValueLocationMaps
    assert all(type(k) is tuple for k in maps)
    assert back == table
    # and it re-encodes to the same bytes with tuple keys
    assert _encode(back, writer) == data


def test_skewed_info_wire_shape_is_hive_compatible():
    """Tuple keys must still go out as a map whose keys are list<string>."""
    data = _encode(_table_with_skew().sd.skewedInfo, TBinaryProtocol)
    proto = TBinaryProtocol(TMemoryBuffer(data))
    proto.readStructBegin()
    while True:
        _, ftype, fid = proto.readFieldBegin()
        assert ftype != TType.STOP, "skewedColValueLocationMaps (id 3) not written"
        if fid == 3:
            break
        proto.skip(ftype)
    assert ftype == TType.MAP
    assert proto.readMapBegin() == (TType.LIST, TType.STRING, 2)
    assert proto.readListBegin() == (TType.STRING, 2)


# ---------------------------------------------------------------------------
# 3. cross-check wire facts against an independent binding
# ---------------------------------------------------------------------------

def _reference_binding():
    """Return (label, ttypes module, service module, fb303 service module or None)."""
    try:
        files = importlib.metadata.distribution("pyiceberg").files or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for f in files:
        parts = Path(str(f)).with_suffix("").parts
        if parts[-2:] == ("hive_metastore", "ttypes"):
            pkg = ".".join(parts[:-1])
            try:
                tt = importlib.import_module(pkg + ".ttypes")
                svc = importlib.import_module(pkg + ".ThriftHiveMetastore")
            except ImportError:
                continue
            fb = None
            fb_pkg = ".".join(parts[:-2] + ("fb303", "FacebookService"))
            try:
                fb = importlib.import_module(fb_pkg)
            except ImportError:
                pass
            return "pyiceberg", tt, svc, fb
    try:
        tt = importlib.import_module("hmsclient.genthrift.hive_metastore.ttypes")
        svc = importlib.import_module("hmsclient.genthrift.hive_metastore.ThriftHiveMetastore")
        fb = importlib.import_module("hmsclient.genthrift.fb303.FacebookService")
        return "hmsclient", tt, svc, fb
    except ImportError:
        pytest.skip("no independent Hive metastore binding installed (pyiceberg or hmsclient)")


@pytest.fixture(scope="module")
def reference():
    return _reference_binding()


def _norm_type(ttype, args):
    """Type skeleton: ttypes and struct names, without string encodings or
    the immutability flag (which we set deliberately on SkewedInfo keys)."""
    if ttype in (TType.LIST, TType.SET):
        etype, eargs = args[0], args[1]
        return (ttype, _norm_type(etype, eargs))
    if ttype == TType.MAP:
        return (ttype, _norm_type(args[0], args[1]), _norm_type(args[2], args[3]))
    if ttype == TType.STRUCT:
        return (ttype, args[0].__name__)
    return (ttype,)


def _fields(cls):
    return {f[0]: (f[2], _norm_type(f[1], f[3])) for f in (cls.thrift_spec or ()) if f}


# Known, deliberate differences from Hive 2.x (only relevant for the hmsclient
# fallback): Hive 3 renamed LockComponent.isAcid and turned open_txns from a
# set into a list.
HIVE2_RENAMES = {("LockComponent", 7): "isAcid"}
HIVE2_TYPE_CHANGES = {("GetOpenTxnsResponse", 2)}

STRUCTS = [
    "Table", "StorageDescriptor", "Partition", "Database", "SerDeInfo", "FieldSchema",
    "LockRequest", "LockComponent", "ColumnStatisticsObj", "GetTableRequest",
    "AddPartitionsRequest", "DropPartitionsRequest",
]


@pytest.mark.parametrize("name", STRUCTS)
def test_struct_field_ids_match_reference(reference, name):
    label, ref_tt, _, _ = reference
    mine = {f[0]: (f[2], f[1]) for f in getattr(ours, name).thrift_spec if f}
    if label == "hmsclient":
        for (struct, fid), old in HIVE2_RENAMES.items():
            if struct == name:
                mine[fid] = (old, mine[fid][1])
    theirs = {f[0]: (f[2], f[1]) for f in getattr(ref_tt, name).thrift_spec if f}
    common = set(mine) & set(theirs)
    assert common, f"{name}: no common fields with {label}"
    diffs = {fid: (mine[fid], theirs[fid]) for fid in common if mine[fid] != theirs[fid]}
    assert not diffs, f"{name}: (name, ttype) differ from {label}: {diffs}"
    # anything the reference can put on the wire, we must be able to decode
    assert set(theirs) <= set(mine), f"{name}: ids missing vs {label}: {sorted(set(theirs) - set(mine))}"


def test_all_shared_structs_and_enums_agree(reference):
    """Broader sweep: every struct/enum we define that the reference also has."""
    label, ref_tt, _, _ = reference
    problems = []
    for name, cls in vars(ours).items():
        if not inspect.isclass(cls) or cls.__module__ != ours.__name__:
            continue
        other = getattr(ref_tt, name, None)
        if other is None:
            continue
        if hasattr(cls, "_VALUES_TO_NAMES"):
            for value, member in other._VALUES_TO_NAMES.items():
                if cls._VALUES_TO_NAMES.get(value) != member:
                    problems.append(f"enum {name}: {value}={member} in {label}")
            continue
        mine, theirs = _fields(cls), _fields(other)
        for fid in set(mine) & set(theirs):
            if label == "hmsclient" and (name, fid) in HIVE2_TYPE_CHANGES:
                continue
            (mname, mtype), (tname, ttype) = mine[fid], theirs[fid]
            if mtype != ttype:
                problems.append(f"{name}.{fid}: {mname}{mtype} vs {tname}{ttype}")
    assert not problems, "\n".join(problems)


def _methods(service_module):
    return sorted(n[: -len("_args")] for n in vars(service_module) if n.endswith("_args"))


def _compare_specs(kind, ours_cls, ref_cls, label, problems, name):
    mine, theirs = _fields(ours_cls), _fields(ref_cls)
    for fid in sorted(set(mine) | set(theirs)):
        if fid in mine and fid in theirs:
            if mine[fid][1] != theirs[fid][1]:
                problems.append(f"{name}{kind} id {fid}: {mine[fid]} vs {label} {theirs[fid]}")
        elif fid in theirs:
            problems.append(f"{name}{kind} id {fid} {theirs[fid]} only in {label}")


def test_method_argument_ids_match_reference(reference):
    label, _, ref_svc, ref_fb = reference
    problems, compared = [], 0
    for svc, ref in ((our_service, ref_svc), (our_fb303, ref_fb)):
        if ref is None:
            continue
        for name in _methods(svc):
            ref_args = getattr(ref, name + "_args", None)
            if ref_args is None:
                continue
            compared += 1
            _compare_specs("_args", getattr(svc, name + "_args"), ref_args, label, problems, name)
            # oneway-ness: a oneway method has no _result class
            if hasattr(svc, name + "_result") != hasattr(ref, name + "_result"):
                problems.append(f"{name}: oneway-ness differs from {label}")
    assert compared > 50, f"only {compared} methods shared with {label}"
    assert not problems, "\n".join(problems)


def test_method_result_and_exception_ids_match_hive4(reference):
    label, _, ref_svc, _ = reference
    if label != "pyiceberg":
        pytest.skip("exception ids changed between Hive 2.x and 3+; only checked against Hive 4")
    problems = []
    for name in _methods(our_service):
        ref_result = getattr(ref_svc, name + "_result", None)
        if ref_result is not None:
            _compare_specs("_result", getattr(our_service, name + "_result"), ref_result,
                           label, problems, name)
    assert not problems, "\n".join(problems)


# Methods the brief lists, as the running server must answer them (any answer but "Invalid method name").
BRIEF_METHODS = {
    "getMetaConf", "setMetaConf", "set_ugi", "get_config_value", "get_metastore_db_uuid",
    "get_catalogs", "get_catalog", "create_catalog",
    "create_function", "drop_function", "alter_function", "get_functions", "get_function",
    "get_all_functions",
    "create_database", "get_database", "get_database_req", "get_databases",
    "get_all_databases", "alter_database", "drop_database", "drop_database_req",
    "create_table", "create_table_with_environment_context", "create_table_with_constraints",
    "create_table_req", "get_table", "get_table_req", "get_table_objects_by_name",
    "get_table_objects_by_name_req", "get_tables", "get_all_tables", "get_tables_by_type",
    "get_table_names_by_filter", "get_table_meta", "get_fields",
    "get_fields_with_environment_context", "get_fields_req", "get_schema",
    "get_schema_with_environment_context", "get_schema_req", "alter_table",
    "alter_table_with_environment_context", "alter_table_with_cascade", "alter_table_req",
    "drop_table", "drop_table_with_environment_context", "truncate_table",
    "truncate_table_req",
    "add_partition", "add_partition_with_environment_context", "add_partitions",
    "add_partitions_req", "append_partition", "append_partition_with_environment_context",
    "append_partition_by_name", "append_partition_by_name_with_environment_context",
    "get_partition", "get_partition_req", "get_partition_with_auth", "get_partition_by_name",
    "get_partitions", "get_partitions_with_auth", "get_partitions_ps", "get_partitions_ps_with_auth",
    "get_partitions_ps_with_auth_req", "get_partitions_with_specs",
    "get_partition_names", "get_partition_names_ps", "get_partition_names_req",
    "get_partition_names_ps_req", "get_partition_values", "get_partitions_by_filter",
    "get_num_partitions_by_filter", "get_partitions_by_names", "get_partitions_by_names_req",
    "get_partitions_req", "alter_partition",
    "alter_partition_with_environment_context", "alter_partitions",
    "alter_partitions_with_environment_context", "alter_partitions_req", "rename_partition",
    "rename_partition_req", "drop_partition", "drop_partition_with_environment_context",
    "drop_partition_by_name", "drop_partition_by_name_with_environment_context",
    "drop_partitions_req", "partition_name_to_vals", "partition_name_to_spec",
    "partition_name_has_valid_characters", "markPartitionForEvent",
    "isPartitionMarkedForEvent",
    "get_table_statistics_req", "get_partitions_statistics_req",
    "update_table_column_statistics", "update_partition_column_statistics",
    "update_table_column_statistics_req", "update_partition_column_statistics_req",
    "set_aggr_stats_for", "get_aggr_stats_for", "get_table_column_statistics",
    "get_partition_column_statistics", "delete_table_column_statistics",
    "delete_partition_column_statistics",
    "lock", "check_lock", "unlock", "show_locks", "heartbeat", "heartbeat_txn_range",
    "open_txns", "abort_txn", "commit_txn", "get_open_txns", "get_open_txns_info", "get_open_txns_req",
    "get_current_notificationEventId", "get_next_notification",
    "get_privilege_set", "list_privileges", "get_role_names", "list_roles",
    "get_principals_in_role", "grant_privileges", "revoke_privileges",
}
# get_partitions_by_expr is refused on purpose: UNKNOWN_METHOD makes Hive's client prune partitions
# itself (tests/test_hive4_methods.py checks both the answer and the fallback).
FB303_METHODS = {"getName", "getVersion", "getStatus", "getStatusDetails", "getCounters", "getCounter",
                 "setOption", "getOption", "getOptions", "getCpuProfile", "aliveSince", "reinitialize",
                 "shutdown"}
def _call_without_arguments(port, method):
    """Call `method` on the server with every argument unset; the TApplicationException it answers,
    or None for any other answer (a result or a declared exception). A oneway method has no answer:
    a getName call after it shows whether the server refused it."""
    module = our_service if hasattr(our_service, f"{method}_args") else our_fb303
    with thrift_client(port) as client:
        oprot, iprot = client._oprot, client._iprot
        calls = [(method, module)]
        if not hasattr(module, f"{method}_result"):
            calls.append(("getName", our_fb303))
        for seqid, (name, mod) in enumerate(calls, 1):
            oprot.writeMessageBegin(name, TMessageType.CALL, seqid)
            getattr(mod, f"{name}_args")().write(oprot)
            oprot.writeMessageEnd()
        oprot.trans.flush()
        name, mtype, _ = iprot.readMessageBegin()
        if mtype == TMessageType.EXCEPTION:
            exc = TApplicationException()
            exc.read(iprot)
            return exc
        getattr(dict(calls)[name], f"{name}_result")().read(iprot)
        return None


def test_bindings_have_every_method_the_brief_lists():
    assert not BRIEF_METHODS - set(_methods(our_service)), sorted(BRIEF_METHODS - set(_methods(our_service)))
    assert set(_methods(our_fb303)) >= FB303_METHODS
    assert issubclass(our_service.Iface, our_fb303.Iface)


@pytest.fixture(scope="module")
def own_server(tmp_path_factory):
    """A server of its own: the calls without arguments fail, and the shared server's call log
    (which other tests read) stays free of them."""
    tmp = tmp_path_factory.mktemp("bindings-server")
    try:
        port, proc = start_our_server(f"sqlite:///{tmp / 'metastore.db'}", tmp)
    except ServerStartError as e:
        pytest.fail(str(e), pytrace=False)
    try:
        yield port
    finally:
        stop_process(proc)


@pytest.mark.parametrize("method", sorted(BRIEF_METHODS | FB303_METHODS))
def test_we_serve_every_method_the_brief_lists(own_server, method):
    answer = _call_without_arguments(own_server, method)
    unknown = isinstance(answer, TApplicationException) and answer.type == TApplicationException.UNKNOWN_METHOD
    assert not unknown, answer.message


def test_newer_fields_are_optional_for_old_clients():
    """Fields old clients never send must not be `required` (validate() would reject)."""
    ours.TableStatsRequest(dbName="d", tblName="t", colNames=[]).validate()
    ours.PartitionsStatsRequest(dbName="d", tblName="t", colNames=[], partNames=[]).validate()
    ours.SetPartitionsStatsRequest(colStats=[]).validate()
    ours.GetOpenTxnsResponse(txn_high_water_mark=1, open_txns=[]).validate()
