"""Trino 476's Hudi connector reads the Hudi tables our pipeline writes through our server.

A copy-on-write table (hive-style partitions by ``dt``) and a table with plain multi-level
partitions (``region/dt``) get several commits -- insert, upsert (updates and new keys), delete,
delete_partition, another upsert -- through ``pipeline.write``. Then Trino's ``hudi`` catalog must
return exactly the rows of ``pipeline.read`` and of hudi-rs (storage), and its ``$timeline`` must
be the server's completed instants. The same table's metastore entry (table and partitions, copied
over Thrift) registered in the reference HMS 2.3 reads the same through ``hudi_ref``.
"""

from __future__ import annotations

import uuid

import pytest

from tests.harness import open_thrift_client

pytestmark = [
    pytest.mark.slow,
    pytest.mark.spark,
]

SCHEMA = "id long, name string, amount double, ts long, region string, dt string"
COLS = ["id", "name", "amount", "ts", "region", "dt"]
LAYOUTS = {
    "hive": (["dt"], {"hoodie.datasource.write.hive_style_partitioning": "true"}),
    "plain_multi": (["region", "dt"], {}),
}


def _write_history(spark, port: int, table: str, layout: str) -> dict:
    """Five commits; returns the expected rows (record key -> tuple of COLS)."""
    from pipeline import write
    from tests.pipeline_helpers import uri

    part, opts = LAYOUTS[layout]
    df = lambda rows: spark.createDataFrame(rows, SCHEMA)  # noqa: E731
    r1 = [(i, f"n{i}", i * 1.5, 1, ("eu", "us", "ap")[i % 3], f"2024-01-0{1 + i % 4}") for i in range(1, 41)]
    write(df(r1), table, "insert", record_key="id", precombine_field="ts", partition_by=part,
          metastore=uri(port), options=opts)
    rows = {str(r[0]): r for r in r1}
    up = [(i, f"u{i}", -1.0 * i, 2, rows[str(i)][4], rows[str(i)][5]) for i in (2, 5, 9, 17)] + \
         [(100 + i, f"new{i}", 0.5, 2, "eu", "2024-01-05") for i in range(5)]
    write(df(up), table, "upsert", metastore=uri(port))
    rows.update({str(r[0]): r for r in up})
    gone = [rows[k] for k in ("3", "4", "101")]
    write(df(gone), table, "delete", metastore=uri(port))
    for r in gone:
        del rows[str(r[0])]
    # drop one partition: dt=2024-01-02 (hive layout) / eu/2024-01-02 (plain multi-level)
    victim = next(r for r in rows.values() if r[5] == "2024-01-02" and r[4] == "eu")
    write(df([victim]), table, "delete_partition", metastore=uri(port))
    rows = {k: r for k, r in rows.items()
            if not (r[5] == "2024-01-02" and (layout == "hive" or r[4] == "eu"))}
    up2 = [(8, "again", 9.0, 3, rows["8"][4], rows["8"][5]), (200, "late", 2.0, 3, "us", "2024-01-06")]
    write(df(up2), table, "upsert", metastore=uri(port))
    rows.update({str(r[0]): r for r in up2})
    return {k: tuple(v) for k, v in rows.items()}


def _trino_rows(engine, catalog: str, table: str) -> dict:
    from tests.pipeline_helpers import model_key

    db, name = table.split(".")
    rows = engine.sql(f"SELECT _hoodie_record_key, {', '.join(COLS)} FROM {catalog}.{db}.{name}")
    out = {}
    for r in rows:
        key = model_key(r[0])
        assert key not in out, f"duplicate record key {r[0]} from Trino"
        out[key] = tuple(r[1:])
    return out


def _copy_to_reference(our_port: int, ref_port: int, table: str) -> None:
    """Register the table (entry and partitions as our server has them) in the reference HMS."""
    from thrift_idl.hive_metastore.ttypes import Database

    db, name = table.split(".")
    ours, t1 = open_thrift_client(our_port)
    ref, t2 = open_thrift_client(ref_port)
    try:
        d = ours.get_database(db)
        if db not in ref.get_all_databases():
            ref.create_database(Database(name=db, locationUri=d.locationUri, parameters=d.parameters))
        tbl = ours.get_table(db, name)
        for attr in ("id", "catName", "ownerType", "writeId", "isStatsCompliant", "colStats",
                     "accessType", "requiredReadCapabilities", "requiredWriteCapabilities", "txnId",
                     "validWriteIdList", "fileMetadata", "dictionary", "creationMetadata", "rewriteEnabled"):
            if hasattr(tbl, attr):
                setattr(tbl, attr, None)
        ref.create_table(tbl)
        parts = ours.get_partitions(db, name, -1)
        for p in parts:
            for attr in ("catName", "writeId", "isStatsCompliant", "colStats", "fileMetadata"):
                if hasattr(p, attr):
                    setattr(p, attr, None)
        if parts:
            ref.add_partitions(parts)
    finally:
        t1.close()
        t2.close()


# one layout per backend: the pipeline's five commits are what takes the time
@pytest.mark.parametrize("backend_url,layout", [("sqlite", "hive"), ("postgresql", "plain_multi")],
                         indirect=["backend_url"], scope="session")
def test_trino_reads_pipeline_hudi_table(spark, our_server, reference_hms, trino_ours, trino_ref, layout):
    from tests.pipeline_helpers import base_dir, hudi_rs, instants, ours

    table = f"trino_hudi_{uuid.uuid4().hex[:6]}.{layout}"
    expected = _write_history(spark, our_server, table, layout)
    base = base_dir(our_server, table)

    offset = trino_ours.log_offset()
    got = _trino_rows(trino_ours, trino_ours.hudi, table)
    failed = trino_ours.failed_calls(offset)
    assert got == expected, f"Trino's hudi catalog differs (our server's failed calls: {failed})"
    assert ours(spark, our_server, table, COLS) == expected
    assert hudi_rs(base, COLS) == expected

    # pruned by a partition predicate
    db, name = table.split(".")
    pruned = trino_ours.sql(f"SELECT count(*) FROM {trino_ours.hudi}.{db}.{name} WHERE dt = '2024-01-05'")
    assert pruned == [[sum(1 for r in expected.values() if r[5] == "2024-01-05")]]

    # Trino's view of the timeline is the server's
    timeline = trino_ours.sql(f'SELECT timestamp, action, state FROM {trino_ours.hudi}.{db}."{name}$timeline" '
                              f"ORDER BY timestamp")
    completed = [[i.timestamp, i.action] for i in instants(our_server, table, states=["COMPLETED"])]
    assert len(completed) == 5, completed
    assert [r[:2] for r in timeline if r[2] == "COMPLETED"] == completed, (timeline, completed)

    # the same metastore entry in the reference HMS 2.3 reads the same
    _copy_to_reference(our_server, reference_hms, table)
    assert _trino_rows(trino_ref, trino_ref.hudi, table) == expected
