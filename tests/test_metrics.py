"""store/metrics.py: the registry (counters, durations, gauges; thread-safe), its Prometheus text
rendering, and `serve --metrics-port` scraped over HTTP after real calls (one worker and two)."""

from __future__ import annotations

import re
import threading
import time
import urllib.error
import urllib.request
import uuid

import pytest

from client import HudiMetastoreClient
from store import metrics
from tests.harness import ServerStartError, free_ports, start_our_server, stop_process
from thrift_idl.hive_metastore.ttypes import NoSuchObjectException

TIMEOUT = 30.0

# --------------------------------------------------------------------------- a strict text-format parser

_METRIC = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
_LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
_SAMPLE = re.compile(rf"^({_METRIC})(\{{(?:{_LABEL})(?:,{_LABEL})*\}})? (\S+)$")
_HELP = re.compile(rf"^# HELP ({_METRIC}) (.*)$")
_TYPE = re.compile(rf"^# TYPE ({_METRIC}) (counter|gauge|summary|histogram|untyped)$")
_SUFFIXES = {"summary": ("_sum", "_count", ""), "histogram": ("_bucket", "_sum", "_count")}


def parse(text: str) -> dict[tuple[str, tuple], float]:
    """{(sample name, ((label, value), ...)): value}; asserts the Prometheus 0.0.4 text rules we
    rely on: every line is a HELP, TYPE or sample; one TYPE per family, before its samples; every
    sample belongs to a typed family; no series twice; values are floats."""
    assert text.endswith("\n")
    types: dict[str, str] = {}
    seen_samples_of: set[str] = set()
    out: dict[tuple[str, tuple], float] = {}
    for line in text.splitlines():
        if not line:
            continue
        if line.startswith("#"):
            if m := _TYPE.match(line):
                name = m.group(1)
                assert name not in types, f"second TYPE for {name}"
                assert name not in seen_samples_of, f"TYPE after samples of {name}"
                types[name] = m.group(2)
                continue
            assert _HELP.match(line), f"bad comment line: {line!r}"
            continue
        m = _SAMPLE.match(line)
        assert m, f"bad sample line: {line!r}"
        name, labels, value = m.group(1), m.group(2) or "", m.group(3)
        family = next((f for f in types for suf in _SUFFIXES.get(types[f], ("",))
                       if name == f + suf), None)
        assert family is not None, f"sample {name} has no TYPE"
        seen_samples_of.add(family)
        key = (name, tuple(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', labels)))
        assert key not in out, f"duplicate series {key}"
        out[key] = float(value)
    return out


def value(samples, name, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=TIMEOUT) as r:
        assert r.status == 200
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return r.read().decode("utf-8")


# --------------------------------------------------------------------------- registry


def test_registry_kinds_and_rendering():
    reg = metrics.Registry()
    reg.incr("hudi_partition_lookups")
    reg.incr("hudi_partition_lookups", 2)
    reg.observe("hudi_commit_seconds", 0.5)
    reg.observe("hudi_commit_seconds", 1.5)
    reg.set_gauge("hudi_storage_mirror_lag_versions", 7)
    reg.set_gauge("hudi_storage_mirror_lag_versions", 3)
    with reg.timer("custom_seconds", {"table": 'a"b\\c'}):
        pass
    reg.record_call("get_table", 0.25, "ok")
    reg.record_call("get_table", 0.75, "ok")
    reg.record_call("get_table", 0.1, "NoSuchObjectException")
    assert reg.counter("hudi_partition_lookups") == 3
    assert reg.duration("hudi_commit_seconds") == (2, 2.0, 1.5)
    assert reg.gauge("hudi_storage_mirror_lag_versions") == 3
    assert reg.counter(metrics.CALLS, {"method": "get_table", "status": "ok"}) == 2

    s = parse(reg.render())
    assert value(s, "hudi_partition_lookups_total") == 3
    assert value(s, "hudi_file_lookups_total") == 0  # declared names are exported before first use
    assert value(s, "hudi_commits_total") == 0
    assert value(s, "hudi_commit_seconds_count") == 2
    assert value(s, "hudi_commit_seconds_sum") == 2.0
    assert value(s, "hudi_commit_seconds_max") == 1.5
    assert value(s, "hudi_snapshot_sync_seconds_count") == 0
    assert value(s, "hudi_storage_mirror_lag_versions") == 3
    assert value(s, "custom_seconds_count", table='a\\"b\\\\c') == 1
    assert value(s, "hms_thrift_calls_total", method="get_table", status="ok") == 2
    assert value(s, "hms_thrift_calls_total", method="get_table", status="NoSuchObjectException") == 1
    assert value(s, "hms_thrift_call_seconds_count", method="get_table") == 3
    assert value(s, "hms_thrift_call_seconds_sum", method="get_table") == pytest.approx(1.1)
    assert value(s, "hms_thrift_call_seconds_max", method="get_table") == 0.75


def test_registry_refuses_bad_names_and_kind_changes():
    reg = metrics.Registry()
    with pytest.raises(ValueError):
        reg.incr("bad name")
    with pytest.raises(ValueError):
        reg.set_gauge("hudi_commits", 1)  # a counter already


def test_registry_is_thread_safe():
    reg = metrics.Registry()

    def work():
        for _ in range(2000):
            reg.incr("hudi_file_lookups")
            reg.observe("hudi_commit_seconds", 0.001)
            reg.record_call("get_table", 0.001, "ok")

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert reg.counter("hudi_file_lookups") == 16000
    assert reg.duration("hudi_commit_seconds")[0] == 16000
    assert reg.counter(metrics.CALLS, {"method": "get_table", "status": "ok"}) == 16000


def test_module_api_is_the_process_registry():
    before = metrics.registry.counter("hudi_partition_lookups")
    metrics.incr("hudi_partition_lookups")
    assert metrics.registry.counter("hudi_partition_lookups") == before + 1


def test_prometheus_client_parses_it():
    parser = pytest.importorskip("prometheus_client.parser")
    reg = metrics.Registry()
    reg.incr("hudi_commits")
    reg.observe("hudi_commit_seconds", 0.2)
    reg.record_call("get_table", 0.1, "ok")
    families = {f.name: f for f in parser.text_string_to_metric_families(reg.render())}
    assert families["hudi_commit_seconds"].type == "summary"
    assert families["hudi_commits"].type == "counter"
    assert [(s.name, s.value) for s in families["hudi_commits"].samples] == [("hudi_commits_total", 1)]
    assert families["hms_thrift_calls"].samples[0].labels == {"method": "get_table", "status": "ok"}


# --------------------------------------------------------------------------- the endpoint


@pytest.fixture
def metrics_server(tmp_path):
    """Factory: our server on SQLite with --metrics-port; returns (thrift port, metrics port)."""
    procs = []

    def start(*extra):
        mport = free_ports(2)  # worker 1 of --workers 2 answers on mport + 1
        try:
            port, proc = start_our_server(f"sqlite:///{tmp_path / 'metastore.db'}", tmp_path / f"srv{len(procs)}",
                                          extra_args=["--metrics-port", str(mport), *extra])
        except ServerStartError as e:
            pytest.fail(str(e), pytrace=False)
        procs.append(proc)
        return port, mport

    yield start
    for proc in procs:
        stop_process(proc)


def scrape_until(mport, ready, timeout_s: float = 10.0):
    deadline = time.monotonic() + timeout_s
    while True:
        m = parse(scrape(mport))
        if ready(m) or time.monotonic() > deadline:
            return m
        time.sleep(0.02)


def test_metrics_endpoint_counts_calls(metrics_server):
    port, mport = metrics_server()
    first = parse(scrape(mport))
    with HudiMetastoreClient(f"thrift://127.0.0.1:{port}", timeout_s=TIMEOUT) as c:
        for _ in range(3):
            c.get_all_databases()
        c.getMetaConf("hive.metastore.try.direct.sql")
        with pytest.raises(NoSuchObjectException):
            c.get_table("default", "missing")
        # a call's metrics are recorded right after its reply is sent: wait for the last one
        want = value(first, "hms_thrift_calls_total", method="get_all_databases", status="ok") + 3
        second = scrape_until(mport, lambda m: value(m, "hms_thrift_calls_total", method="get_table",
                                                     status="NoSuchObjectException") == 1)
        assert value(second, "hms_thrift_calls_total", method="get_all_databases", status="ok") == want
        assert value(second, "hms_thrift_calls_total", method="get_table", status="NoSuchObjectException") == 1
        assert value(second, "hms_thrift_call_seconds_count", method="get_all_databases") >= 3
        assert value(second, "hms_thrift_call_seconds_sum", method="get_all_databases") > 0
        assert value(second, "hms_thrift_call_seconds_max", method="get_all_databases") > 0
        for name in ("hudi_partition_lookups_total", "hudi_file_lookups_total", "hudi_commits_total",
                     "hudi_commit_seconds_count",
                     "hudi_snapshot_sync_seconds_count", "hudi_storage_mirror_lag_versions"):
            assert (name, ()) in second, name

        c.get_all_databases()
        third = scrape_until(mport, lambda m: value(m, "hms_thrift_calls_total", method="get_all_databases",
                                                    status="ok") == want + 1)
    assert value(third, "hms_thrift_calls_total", method="get_all_databases", status="ok") == \
        value(second, "hms_thrift_calls_total", method="get_all_databases", status="ok") + 1
    for key, v in second.items():  # counters never go down
        if key[0].endswith(("_total", "_count")):
            assert third.get(key, 0) >= v, key

    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(f"http://127.0.0.1:{mport}/other", timeout=TIMEOUT)
    assert info.value.code == 404


def test_metrics_endpoint_counts_hudi_commits(metrics_server):
    from thrift_idl.hudi_metastore.ttypes import HudiTableConfig, HudiTableType

    port, mport = metrics_server()
    before = parse(scrape(mport))
    table = f"m_{uuid.uuid4().hex[:8]}"
    with HudiMetastoreClient(f"thrift://127.0.0.1:{port}", timeout_s=TIMEOUT) as c:
        c.register_hudi_table(HudiTableConfig(dbName="default", tableName=table, tableType=HudiTableType.MERGE_ON_READ,
                                              recordKeyFields=["id"], partitionFields=[], properties={}),
                              [("id", "string"), ("v", "string")])
        ts = c.create_instant("default", table, None, "deltacommit").timestamp
        c.transition_to_inflight("default", table, ts, "deltacommit")
        c.complete_instant("default", table, ts, "deltacommit", {
            "partitionToWriteStats": {"": [{"fileId": "f1-0", "path": f"f1-0_0-1-1_{ts}.parquet", "partitionPath": "",
                                            "fileSizeInBytes": 10, "prevCommit": "null"}]},
            "compacted": False, "extraMetadata": {}, "operationType": "INSERT"})
        c.get_latest_file_slices("default", table)
        c.get_hudi_partitions("default", table)
    after = parse(scrape(mport))
    assert value(after, "hudi_commits_total") == value(before, "hudi_commits_total") + 1
    assert value(after, "hudi_commit_seconds_count") == value(before, "hudi_commit_seconds_count") + 1
    assert value(after, "hudi_commit_seconds_sum") > 0
    assert value(after, "hudi_file_lookups_total") > value(before, "hudi_file_lookups_total")
    assert value(after, "hudi_partition_lookups_total") > value(before, "hudi_partition_lookups_total")


def test_each_worker_serves_its_own_registry(metrics_server):
    """--workers 2: worker i answers on metrics port + i; together they count every call."""
    port, mport = metrics_server("--workers", "2")
    calls = 12
    for _ in range(calls):  # a connection each, so both workers get some
        with HudiMetastoreClient(f"thrift://127.0.0.1:{port}", timeout_s=TIMEOUT) as c:
            c.get_all_databases()
    # a call is counted right after its reply is sent: wait until the last one is in
    deadline = time.monotonic() + 10.0
    while True:
        per_worker = []
        pids = set()
        for p in (mport, mport + 1):
            s = parse(scrape(p))
            per_worker.append(value(s, "hms_thrift_calls_total", method="get_all_databases", status="ok"))
            pids.update(k[1] for k in s if k[0] == "hudi_metastore_process_start_time_seconds")
        if sum(per_worker) >= calls or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert sum(per_worker) == calls
    assert len(pids) == 2  # two processes answered
