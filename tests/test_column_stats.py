"""Column statistics and data skipping (RFC-27), through a real server on every backend.

Property (hypothesis, a new seed every run): random files of every indexable type (nulls, NaN, -0.0,
decimals, non-ASCII strings, binary, dates, timestamps, booleans) written as Parquet, their
statistics taken from the footers by the pipeline's code and committed through the extension,
then a second commit of new versions of some file groups (some without statistics), then a
deltacommit of a log file on some of them (merge-on-read; some without statistics);
random predicate trees (=, !=, <, <=, >, >=, IN, NOT IN, BETWEEN, LIKE prefix, IS [NOT] NULL, AND,
OR, NOT) over every column: `prune_file_slices` never drops a slice holding a row that matches
(brute force over the rows, SQL's three-valued logic, NaN above every number as Spark orders it).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from contextlib import closing
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from client import HudiCatalog, HudiMetastoreClient, slices_of
from client import column_stats_struct as to_thrift
from pipeline.column_stats import footer_stats, uncompressed_size
from store.db.database import Store
from store.hudi.data_skipping import pruning as column_pruning
from store.services import build_services
from tests.cli_helpers import run_cli
from tests.harness.properties import examples
from thrift_idl.hive_metastore.ttypes import FieldSchema, InvalidObjectException, MetaException
from thrift_idl.hudi_metastore.ttypes import HudiTableConfig, HudiTableType

COLUMNS = {  # name -> (hive type, arrow type)
    "i": ("bigint", pa.int64()), "sm": ("int", pa.int32()), "f": ("double", pa.float64()),
    "dec": ("decimal(10,2)", pa.decimal128(10, 2)), "s": ("string", pa.string()), "b": ("binary", pa.binary()),
    "d": ("date", pa.date32()), "ts": ("timestamp", pa.timestamp("us", tz="UTC")), "bo": ("boolean", pa.bool_()),
}
_T0 = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
_WORDS = ["", "a", "ab", "abc", "b", "ba", "é", "éa", "中", "z"]

_values = {
    "i": st.integers(-5, 5), "sm": st.integers(-3, 3),
    "f": st.sampled_from([-1.5, -0.0, 0.0, 0.5, 1.0, 2.25, float("nan"), float("inf"), -float("inf")]),
    "dec": st.sampled_from([Decimal(x) for x in ("-1.25", "0.00", "0.10", "1.00", "1.05", "9.99")]),
    "s": st.sampled_from(_WORDS), "b": st.sampled_from([w.encode() for w in _WORDS]),
    "d": st.integers(0, 6).map(lambda n: dt.date(2024, 1, 1) + dt.timedelta(days=n)),
    "ts": st.integers(0, 6).map(lambda n: _T0 + dt.timedelta(seconds=n * 1.5)),
    "bo": st.booleans(),
}
# literals as the predicate writes them, and as Python compares them
_literals = {
    "i": st.integers(-6, 6).map(lambda n: (str(n), n)), "sm": st.integers(-4, 4).map(lambda n: (str(n), n)),
    "f": st.sampled_from(["-1.5", "0", "-0.0", "0.5", "1", "2.25", "3"]).map(lambda t: (f"'{t}'", float(t))),
    "dec": st.sampled_from(["-1.25", "0", "0.1", "1.005", "1.05", "10"]).map(lambda t: (f"'{t}'", Decimal(t))),
    "s": st.sampled_from(_WORDS).map(lambda w: (f"'{w}'", w)),
    "b": st.sampled_from(_WORDS).map(lambda w: (f"'{w}'", w.encode())),
    "d": st.integers(-1, 7).map(lambda n: dt.date(2024, 1, 1) + dt.timedelta(days=n)).map(
        lambda d: (f"'{d.isoformat()}'", d)),
    "ts": st.integers(-1, 12).map(lambda n: _T0 + dt.timedelta(seconds=n * 0.75)).map(
        lambda t: (f"'{t.strftime('%Y-%m-%d %H:%M:%S.%f')}'", t)),
    "bo": st.booleans().map(lambda b: (f"'{str(b).lower()}'", b)),
}


def _row(draw_value):
    return {c: draw_value(c) for c in COLUMNS}


@st.composite
def _files(draw):
    n_files = draw(st.integers(1, 5))
    files = []
    for _ in range(n_files):
        rows = []
        for _ in range(draw(st.integers(1, 6))):
            rows.append({c: (None if draw(st.integers(0, 4)) == 0 else draw(_values[c])) for c in COLUMNS})
        files.append((draw(st.sampled_from(["p=0", "p=1"])), rows))
    return files


@st.composite
def _leaf(draw):
    c = draw(st.sampled_from(sorted(COLUMNS)))
    op = draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">=", "IN", "NOT IN", "BETWEEN", "IS NULL",
                               "IS NOT NULL", "LIKE"]))
    if op in ("IS NULL", "IS NOT NULL"):
        return f"{c} {op}", ("null", c, op == "IS NULL")
    if op == "LIKE" and c in ("s",):
        w = draw(st.sampled_from(_WORDS))
        return f"{c} LIKE '{w}.*'", ("prefix", c, w)
    if op in ("IN", "NOT IN"):
        lits = draw(st.lists(_literals[c], min_size=1, max_size=3))
        return f"{c} {op} ({', '.join(t for t, _ in lits)})", ("in", c, [v for _, v in lits], op == "NOT IN")
    if op == "BETWEEN":
        (ta, a), (tb, b) = draw(_literals[c]), draw(_literals[c])
        return f"{c} BETWEEN {ta} AND {tb}", ("between", c, a, b)
    op = "=" if op == "LIKE" else op
    text, v = draw(_literals[c])
    return f"{c} {op} {text}", ("cmp", c, op, v)


def _tree(depth: int):
    if depth == 0:
        return _leaf()
    sub = _tree(depth - 1)
    return st.one_of(
        _leaf(),
        st.tuples(sub, sub).map(lambda ab: (f"({ab[0][0]} AND {ab[1][0]})", ("and", ab[0][1], ab[1][1]))),
        st.tuples(sub, sub).map(lambda ab: (f"({ab[0][0]} OR {ab[1][0]})", ("or", ab[0][1], ab[1][1]))),
        sub.map(lambda a: (f"NOT ({a[0]})", ("not", a[1]))),
    )


def _key(v):
    """Order as the engines do: NaN above every number."""
    if isinstance(v, float) and v != v:
        return (1, 0.0)
    return (0, v)


def _cmp(op: str, x, v) -> bool | None:
    if x is None:
        return None
    if isinstance(x, float):
        v = float(v)
    a, b = _key(x), _key(v)
    return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _eval(node, row) -> bool | None:  # SQL three-valued logic
    kind = node[0]
    if kind == "and":
        a, b = _eval(node[1], row), _eval(node[2], row)
        return False if False in (a, b) else None if None in (a, b) else True
    if kind == "or":
        a, b = _eval(node[1], row), _eval(node[2], row)
        return True if True in (a, b) else None if None in (a, b) else False
    if kind == "not":
        a = _eval(node[1], row)
        return None if a is None else not a
    x = row[node[1]]
    if kind == "null":
        return (x is None) == node[2]
    if kind == "prefix":
        return None if x is None else x.startswith(node[2])
    if kind == "cmp":
        return _cmp(node[2], x, node[3])
    if kind == "between":
        lo, hi = _cmp(">=", x, node[2]), _cmp("<=", x, node[3])
        return False if False in (lo, hi) else None if None in (lo, hi) else True
    results = [_cmp("=", x, v) for v in node[2]]
    found = True if True in results else None if None in results else False
    return found if not node[3] or found is None else not found


def _register(c: HudiMetastoreClient, table: str, base: str, table_type=HudiTableType.COPY_ON_WRITE) -> None:
    c.register_hudi_table(
        HudiTableConfig(dbName="default", tableName=table, tableType=table_type,
                        recordKeyFields=["i"], partitionFields=["p"], properties={}, basePath=base),
        [FieldSchema(n, t, None) for n, (t, _) in COLUMNS.items()] + [FieldSchema("p", "string", None)])


def _commit(c: HudiMetastoreClient, table: str, base: str, files, fids: list[str] | None = None,
            no_stats: set[int] | None = None) -> list[str]:
    """Write the files, commit them with their footers' statistics (not for the indexes in
    `no_stats`); `fids`: their file groups (a new version of an existing group). Their names."""
    ts = c.new_instant_time("default", table)
    c.create_instant("default", table, ts, "commit")
    c.transition_to_inflight("default", table, ts, "commit", None)
    schema = pa.schema([(n, t) for n, (_, t) in COLUMNS.items()])
    stats, write_stats, names = [], {}, []
    for k, (part, rows) in enumerate(files):
        fid = fids[k] if fids else f"{uuid.uuid4().hex[:8]}-{k}"
        name = f"{fid}_0-1-1_{ts}.parquet"
        t = pa.Table.from_pylist(rows, schema=schema)
        path = f"{base}/{part}/{name}"
        os.makedirs(f"{base}/{part}", exist_ok=True)
        pq.write_table(t, path)
        meta = pq.read_metadata(path)
        size = os.path.getsize(path)
        blob = json.dumps(footer_stats(meta, t, list(COLUMNS))).encode()
        if k not in (no_stats or set()):
            stats.append(to_thrift(part, f"{part}/{name}", size, uncompressed_size(meta), blob))
        write_stats.setdefault(part, []).append({"fileId": fid, "path": f"{part}/{name}", "partitionPath": part,
                                                 "fileSizeInBytes": size, "prevCommit": "null"})
        names.append(name)
    c.complete_instant("default", table, ts, "commit", {"partitionToWriteStats": write_stats, "compacted": False,
                                                        "extraMetadata": {}, "operationType": "UPSERT"},
                       None, stats)
    return names


def test_pruning_never_drops_a_matching_file(our_server, backend_url, tmp_path, monkeypatch):
    # in-process beside the server, on its database: the index statement as SQL text (the common
    # predicates) must keep what the expression form keeps
    services = build_services(Store(backend_url))
    text_paths = []
    held_keep = column_pruning._held_keep

    def counted(*args):
        out = held_keep(*args)
        text_paths.append(out is not None)
        return out

    monkeypatch.setattr(column_pruning, "_held_keep", counted)
    with HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}") as c, closing(services):
        @settings(max_examples=examples(8, 60))  # per backend; a new seed every run (tests/harness/properties.py)
        @given(files=_files(), rewrites=_files(), no_stats=st.sets(st.integers(0, 4), max_size=2),
               logs=_files(), logs_without=st.sets(st.integers(0, 4), max_size=2),
               predicates=st.lists(_tree(2), min_size=20, max_size=30))
        def check(files, rewrites, no_stats, logs, logs_without, predicates):
            table = f"cs_{uuid.uuid4().hex[:8]}"
            base = str(tmp_path / table)
            _register(c, table, base, HudiTableType.MERGE_ON_READ)
            fids = [f"{uuid.uuid4().hex[:8]}-{k}" for k in range(len(files))]
            names = _commit(c, table, base, files, fids)
            # a second commit: new versions of some file groups (in their partitions), some
            # without statistics; the latest slices are then what must never be dropped
            again = [(files[k][0], rows) for k, (_, rows) in enumerate(rewrites[:len(files)])]
            new_names = _commit(c, table, base, again, fids[:len(again)], no_stats)
            latest = dict(zip(names, (rows for _, rows in files)))
            for old, new, (_, rows) in zip(names, new_names, again):
                del latest[old]
                latest[new] = rows
            # a third: a log file on some latest slices (some without statistics); a slice holding
            # a matching row in its base file or a log file must be kept
            bases = [new_names[k] if k < len(new_names) else names[k] for k in range(len(files))]
            on = list(zip(bases, fids, (p for p, _ in files), (rows for _, rows in logs)))
            _deltacommit_logs(c, table, base, [(part, fid, name.rsplit("_", 1)[1].split(".")[0], 1,
                                                None if k in logs_without else rows, 1)
                                               for k, (name, fid, part, rows) in enumerate(on)])
            for name, _fid, _part, rows in on:
                latest[name] = latest[name] + rows
            for text, node in predicates:
                full = c.prune_file_slices("default", table, text)
                _same_compact(c, table, text, full)
                _same_as_expressions(services.pruning, table, text, monkeypatch, counted)
                kept = {s.baseFile.name for s in full.slices}
                assert kept <= set(latest), text
                for name, rows in latest.items():
                    if any(_eval(node, r) is True for r in rows):
                        assert name in kept, (text, rows)

        check()
    assert any(text_paths) and not all(text_paths)  # both forms were checked


def _same_as_expressions(pruning, table: str, text: str, monkeypatch, text_form) -> None:
    """The in-process answer is the same with the index statement forced into its expression form."""
    as_text = pruning.prune("default", table, text)
    monkeypatch.setattr(column_pruning, "_held_keep", lambda *args: None)
    try:
        assert pruning.prune("default", table, text) == as_text, text
    finally:
        monkeypatch.setattr(column_pruning, "_held_keep", text_form)


def _same_compact(c: HudiMetastoreClient, table: str, text: str, full) -> None:
    """The compact answer holds the same slices and counts as the struct answer."""
    compact = c.prune_file_slices("default", table, text, compact=True)
    assert full.baseFiles is None and compact.baseFiles is not None
    assert all(s.logFiles or s.baseFile is None for s in compact.slices), text
    assert slices_of(compact) == full.slices, text
    assert (compact.filesSkipped, compact.partitionsSkipped, compact.filesConsidered) == \
        (full.filesSkipped, full.partitionsSkipped, full.filesConsidered), text


def test_compact_answers_hold_every_slice_with_and_without_log_files(our_server, tmp_path):
    """prune_file_slices(compact=True) sends slices of a base file only as columns and the others
    (log files) as structs; together they are the struct answer, in its order."""
    with HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}") as c:
        table = f"cs_{uuid.uuid4().hex[:8]}"
        base = str(tmp_path / table)
        c.register_hudi_table(
            HudiTableConfig(dbName="default", tableName=table, tableType=HudiTableType.MERGE_ON_READ,
                            recordKeyFields=["i"], partitionFields=["p"], properties={}, basePath=base),
            [FieldSchema(n, t, None) for n, (t, _) in COLUMNS.items()] + [FieldSchema("p", "string", None)])
        rows = [{"i": k, "s": f"v{k:03d}", "f": float(k)} for k in range(10)]
        fids = [f"{uuid.uuid4().hex[:8]}-{k}" for k in range(4)]
        names = _commit(c, table, base, [(f"p={k % 2}", rows) for k in range(4)], fids)
        base_ts = names[0].rsplit("_", 1)[1].split(".")[0]
        ts = c.new_instant_time("default", table)  # a log file on the first file group
        c.create_instant("default", table, ts, "deltacommit")
        c.transition_to_inflight("default", table, ts, "deltacommit", None)
        log = f"p=0/.{fids[0]}_{base_ts}.log.1_0-1-1"
        os.makedirs(f"{base}/p=0", exist_ok=True)
        with open(f"{base}/{log}", "wb") as out:
            out.write(b"#HUDI#")
        c.complete_instant("default", table, ts, "deltacommit", {
            "partitionToWriteStats": {"p=0": [{"fileId": fids[0], "path": log, "partitionPath": "p=0",
                                               "fileSizeInBytes": 6, "prevCommit": base_ts, "baseFile": names[0],
                                               "logFiles": [log.split("/")[1]]}]},
            "compacted": False, "extraMetadata": {}, "operationType": "UPSERT"}, None, [])
        for text in ("", "i = 3", "i > 100", "p = 'p=0'", "i = 3 AND p = 'p=1'"):
            full = c.prune_file_slices("default", table, text)
            _same_compact(c, table, text, full)
        full = c.prune_file_slices("default", table, "i = 3")
        assert len(full.slices) == 4 and [bool(s.logFiles) for s in full.slices].count(True) == 1
        compact = c.prune_file_slices("default", table, "i = 3", compact=True)
        assert len(compact.slices) == 1 and len(compact.baseFiles.names) == 3
        assert all(p.startswith(base) for p in compact.baseFiles.paths)
        assert c.prune_file_slices("default", table, "i > 100", compact=True).baseFiles.names == []


def test_statistics_skip_files_and_partitions_and_follow_clean(our_server, tmp_path):
    """Clustered files are skipped; partition statistics skip partitions; bad predicates and
    statistics are refused with the right exceptions."""
    with HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}") as c:
        table = f"cs_{uuid.uuid4().hex[:8]}"
        base = str(tmp_path / table)
        _register(c, table, base)

        def rows(lo: int):
            return [{"i": lo + k, "s": f"v{lo + k:03d}", "f": float(lo + k)} for k in range(10)]

        files = [(f"p={n % 2}", rows(n * 10)) for n in range(6)]  # p=0: 0..9, 20..29, 40..49
        names = _commit(c, table, base, files)
        r = c.prune_file_slices("default", table, "i >= 1 AND i <= 5")
        assert [s.baseFile.name for s in r.slices] == [names[0]]
        assert (r.filesSkipped, r.partitionsSkipped) == (2, 1)  # p=1 skipped by its partition statistics
        r = c.prune_file_slices("default", table, "s LIKE 'v05.*' OR i IS NULL")
        assert [s.baseFile.name for s in r.slices] == [names[5]]
        r = c.prune_file_slices("default", table, "NOT (i < 50) AND p = 'p=1'")
        assert [s.baseFile.name for s in r.slices] == [names[5]] and r.partitionsSkipped == 1
        assert len(c.prune_file_slices("default", table, "").slices) == 6
        cli = run_cli("list-files", f"default.{table}", "--where", "i >= 1 AND i <= 5", "--json",
                      "--metastore", f"thrift://127.0.0.1:{our_server}")
        assert cli.returncode == 0, cli.stderr
        doc = json.loads(cli.stdout)
        assert [d["base_file"] for d in doc["slices"]] == [names[0]]
        assert (doc["files_skipped"], doc["partitions_skipped"]) == (2, 1)
        with pytest.raises(MetaException, match="nope is not a column"):
            c.prune_file_slices("default", table, "nope = 1")
        with pytest.raises(MetaException, match="cannot compare"):
            c.prune_file_slices("default", table, "i = 'x'")
        with pytest.raises(MetaException, match="cannot compare"):  # whatever the plan needs
            c.prune_file_slices("default", table, "i BETWEEN 5 AND 1 AND d = 'not a date'")


@pytest.mark.spark
@pytest.mark.backends_in_turn("mysql")  # the pruning's SQL: test_pruning_never_drops_a_matching_file
def test_pipeline_commits_statistics_and_reads_skip_files(spark, our_server):
    """pipeline.write sends each base file's footer statistics with the commit; pipeline.read with
    filters reads only the files they allow, and the rows are right."""
    from pipeline import read, write
    from pipeline.reader import plan

    t = f"default.cs_{uuid.uuid4().hex[:8]}"
    schema = "id long, name string, score double, ts long, dt string"
    rows = [(100 * k + i, f"n{100 * k + i}" if i % 3 else None, i / 2, 1, f"d{k}") for k in range(3) for i in range(10)]
    url = f"thrift://127.0.0.1:{our_server}"
    write(spark.createDataFrame(rows, schema), t, "insert", record_key="id", precombine_field="ts",
          partition_by="dt", metastore=url)
    extra = [(150 + i, None, 9.5, 1, "d1") for i in range(3)]  # a second file in d1
    write(spark.createDataFrame(extra, schema), t, "bulk_insert", metastore=url)
    with HudiCatalog(url) as c:
        p = plan(c, t, filters=[("id", "=", 105)])
        assert len(p.files) == 1 and p.files[0].startswith("d1/") and p.partitions_skipped == 2
        assert p.files_skipped + len(p.files) == len(c.prune_file_slices(*t.split("."), "dt = 'd1'").slices)
        assert len(plan(c, t, filters="name IS NULL AND score > 9").files) == 1
        assert plan(c, t, filters="score > 100").files == []
    got = read(spark, t, metastore=url, filters="id = 105 OR (name IS NULL AND score >= '9.5')").select("id").collect()
    assert sorted(r[0] for r in got) == [105, 150, 151, 152]


def _deltacommit_logs(c: HudiMetastoreClient, table: str, base: str, logs) -> None:
    """One deltacommit of log files `logs`: (partition, file id, base instant, version, rows or None:
    a log file sent without statistics, size); log files already on the table are appended to."""
    from pipeline.file_group_writer import log_stats

    ts = c.new_instant_time("default", table)
    c.create_instant("default", table, ts, "deltacommit")
    c.transition_to_inflight("default", table, ts, "deltacommit", None)
    schema = pa.schema([(n, t) for n, (_, t) in COLUMNS.items()])
    write_stats, stats = {}, []
    for part, fid, base_ts, version, rows, size in logs:
        path = f"{part}/.{fid}_{base_ts}.log.{version}_0-1-1"
        os.makedirs(f"{base}/{part}", exist_ok=True)
        with open(f"{base}/{path}", "wb") as out:
            out.write(b"#HUDI#" * size)
        write_stats.setdefault(part, []).append({"fileId": fid, "path": path, "partitionPath": part,
                                                 "fileSizeInBytes": 6 * size, "prevCommit": base_ts,
                                                 "logFiles": [path.split("/")[1]]})
        if rows is not None:
            stats.append(to_thrift(part, path, 6 * size, 6 * size,
                                   log_stats(pa.Table.from_pylist(rows, schema=schema), list(COLUMNS))))
    c.complete_instant("default", table, ts, "deltacommit", {
        "partitionToWriteStats": write_stats, "compacted": False, "extraMetadata": {},
        "operationType": "UPSERT"}, None, stats)


def test_log_files_with_statistics_skip_their_slices(our_server, tmp_path):
    """A merge-on-read slice is skipped when its base file and every log file have statistics
    outside the predicate (as Hudi's reader skips it); a log file without statistics, or appended
    to again after its statistics were sent, keeps its slice; statistics of a log file the commit
    appends to (not creates) are refused."""
    with HudiMetastoreClient(f"thrift://127.0.0.1:{our_server}") as c:
        table = f"cs_{uuid.uuid4().hex[:8]}"
        base = str(tmp_path / table)
        c.register_hudi_table(
            HudiTableConfig(dbName="default", tableName=table, tableType=HudiTableType.MERGE_ON_READ,
                            recordKeyFields=["i"], partitionFields=["p"], properties={}, basePath=base),
            [FieldSchema(n, t, None) for n, (t, _) in COLUMNS.items()] + [FieldSchema("p", "string", None)])

        def rows(lo: int, n: int = 10):
            return [{"i": lo + k, "s": f"v{lo + k:03d}"} for k in range(n)]

        fids = [f"{uuid.uuid4().hex[:8]}-{k}" for k in range(4)]  # group k holds i 10k..10k+9
        names = _commit(c, table, base, [(f"p={k % 2}", rows(10 * k)) for k in range(4)], fids)
        b = names[0].rsplit("_", 1)[1].split(".")[0]
        _deltacommit_logs(c, table, base, [("p=0", fids[0], b, 1, rows(100, 3), 1),  # i 100..102
                                           ("p=1", fids[1], b, 1, None, 1),  # no statistics
                                           ("p=0", fids[2], b, 1, rows(20, 3), 1)])  # i 20..22

        def kept(text: str) -> list[int]:
            full = c.prune_file_slices("default", table, text)
            _same_compact(c, table, text, full)
            return sorted(fids.index(s.fileId) for s in full.slices)

        assert kept("i >= 100") == [0, 1]  # 0 by its log file, 1 by its log file without statistics
        assert kept("i = 5") == [0, 1]  # 0 by its base file
        assert kept("i = 21") == [1, 2]
        assert kept("i >= 100 AND p = 'p=0'") == [0]
        assert kept("i IS NULL") == [1]  # (no null in any file with statistics)
        assert kept("i = 35") == [1, 3]
        r = c.prune_file_slices("default", table, "i > 500")
        assert [s.fileId for s in r.slices] == [fids[1]] and r.partitionsSkipped == 1
        # appended to again (no statistics for the new blocks): its statistics are dropped
        _deltacommit_logs(c, table, base, [("p=0", fids[2], b, 1, None, 2)])
        assert kept("i >= 100") == [0, 1, 2]
        # statistics of a log file the commit does not create are refused, nothing changes
        with pytest.raises(InvalidObjectException, match="does not create"):
            _deltacommit_logs(c, table, base, [("p=0", fids[0], b, 1, rows(7, 1), 3)])
        assert kept("i >= 100") == [0, 1, 2] and kept("i = 35") == [1, 2, 3]
