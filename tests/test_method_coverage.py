"""Every method of Hive 4's ThriftHiveMetastore, asked of the running server: served, or refused on
purpose with the UNKNOWN_METHOD answer Hive's clients fall back on. docs/conformance.md carries the
table; this test fails when the server and the table disagree."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from pathlib import Path

import pytest

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
