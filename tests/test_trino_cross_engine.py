"""Spark and Trino share tables through the metastore (ours, and the reference HMS 2.3).

Trino creates and fills ``trino_orc`` (ORC, partitioned by ``dt``) and ``trino_parquet``
(Parquet, partitioned by ``region``); then one Spark process (Hive catalog on the same metastore,
tests/spark/trino_cross.py) creates and fills ``spark_hive_orc`` (Hive-format ORC) and
``spark_ds_parquet`` (a Parquet data source table) and reads all four. Trino reads all four too.
Each engine must see the same rows and partitions in every table, and the whole picture on our
server must be the reference's.
"""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path

import pytest

from tests.harness import REFERENCE_START, REPO_ROOT, recorded, run_spark_script
from tests.harness.trino import ON_OUR_BACKENDS

pytestmark = [pytest.mark.slow, pytest.mark.spark]

SCRIPT = Path(__file__).parent / "spark" / "trino_cross.py"
DB = "trino_cross"
COLUMNS = "id, name, amount, flag, d, price, region, dt"
TABLES = ("spark_hive_orc", "spark_ds_parquet", "trino_orc", "trino_parquet")


def _value(v):
    if v is None:
        return None
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (datetime.date, decimal.Decimal, bool, int, str)):
        return str(v)
    return repr(v)


def _trino_tables(engine) -> list:
    cat = engine.hive
    cols = ("id integer, name varchar, amount double, flag boolean, d date, price decimal(10,2)")
    out = [engine.try_sql(f"CREATE SCHEMA {cat}.{DB}")]
    out.append(engine.try_sql(f"CREATE TABLE {cat}.{DB}.trino_orc ({cols}, region varchar, dt varchar) "
                              f"WITH (format = 'ORC', partitioned_by = ARRAY['dt'])"))
    out.append(engine.try_sql(
        f"INSERT INTO {cat}.{DB}.trino_orc SELECT x, 't' || CAST(x AS varchar), x * 0.75, x % 2 = 1, "
        f"date_add('day', x % 6, DATE '2024-05-01'), CAST(x * 3.3 AS decimal(10,2)), "
        f"element_at(ARRAY['eu', 'us'], 1 + x % 2), '2024-05-0' || CAST(1 + x % 4 AS varchar) "
        f"FROM UNNEST(sequence(1, 20)) AS u(x)"))
    out.append(engine.try_sql(f"CREATE TABLE {cat}.{DB}.trino_parquet ({cols}, dt varchar, region varchar) "
                              f"WITH (format = 'PARQUET', partitioned_by = ARRAY['region'])"))
    out.append(engine.try_sql(
        f"INSERT INTO {cat}.{DB}.trino_parquet SELECT x, 'q' || CAST(x AS varchar), x * 1.25, x % 4 = 0, "
        f"date_add('day', x % 3, DATE '2024-06-01'), CAST(x * 0.5 AS decimal(10,2)), 'y', "
        f"element_at(ARRAY['eu', 'us', 'ap', 'sa'], 1 + x % 4) FROM UNNEST(sequence(1, 16)) AS u(x)"))
    return out


def _trino_reads(engine) -> dict:
    out = {}
    for t in TABLES:
        rows = engine.try_sql(f"SELECT {COLUMNS} FROM {engine.hive}.{DB}.{t}")
        out[t] = rows if isinstance(rows, str) else \
            sorted(([_value(v) for v in r] for r in rows), key=lambda r: [x or "" for x in r])
        parts = engine.try_sql(f'SELECT * FROM {engine.hive}.{DB}."{t}$partitions"')
        out[f"{t}.partitions"] = parts if isinstance(parts, str) else \
            sorted("/".join(f"{k}={v}" for k, v in zip(("region",) if t in ("spark_ds_parquet", "trino_parquet")
                                                          else ("dt",), p)) for p in parts)
    return out


def _run(engine, tmp: Path) -> dict:
    setup = _trino_tables(engine)
    spark = run_spark_script(SCRIPT, engine.metastore_port, tmp / "spark-wh", tmp / "spark.json",
                             extra_args=["--db", DB])
    trino = _trino_reads(engine)
    for t in TABLES:
        engine.try_sql(f"DROP TABLE {engine.hive}.{DB}.{t}")
    engine.try_sql(f"DROP SCHEMA {engine.hive}.{DB}")
    return {"setup": setup, "spark": spark, "trino": trino}


# what the reference's answers depend on: this module, the Spark script, the engine's harness,
# Trino, the reference and Spark
_SOURCES = [Path(__file__), SCRIPT, REPO_ROOT / "tests" / "harness" / "trino.py", REPO_ROOT / "tools" / "trino.py",
            REFERENCE_START]


def _answers(result: dict) -> dict:
    """What the checks compare (Spark's timings and paths left out)."""
    spark = result["spark"]
    return {"setup": result["setup"], "trino": result["trino"],
            "spark": {"errors": spark["errors"], "spark_reads": spark["spark_reads"]}}


@pytest.fixture(scope="session")  # once per run
def ref_cross(request, tmp_path_factory):
    """Both engines on the reference HMS: recorded in tests/fixtures (tests/harness/recorded.py;
    about a minute of Trino and Spark against the reference when run)."""
    import pyspark

    return recorded.reference(
        "trino_cross_reference", recorded.digest(_SOURCES, pyspark.__version__),
        lambda: _answers(_run(request.getfixturevalue("trino_ref"), tmp_path_factory.mktemp("cross-ref"))),
        differing=lambda a, b: sorted(k for k in a if a[k] != b.get(k)))


@pytest.fixture(scope="module")
def our_cross(trino_ours, tmp_path_factory):
    return _run(trino_ours, tmp_path_factory.mktemp("cross-ours"))


def _check_engines_agree(result: dict, where: str) -> None:
    assert all(not isinstance(r, str) for r in result["setup"]), f"{where}: Trino setup: {result['setup']}"
    spark = result["spark"]
    assert not spark["errors"], f"{where}: Spark: {spark['errors']}"
    for t in TABLES:
        assert result["trino"][t] == spark["spark_reads"][t], f"{where}: {t}: Trino and Spark read different rows"
        assert result["trino"][f"{t}.partitions"] == spark["spark_reads"][f"{t}.partitions"], \
            f"{where}: {t}: partitions differ"
    counts = {t: len(result["trino"][t]) for t in TABLES}
    assert counts == {"spark_hive_orc": 30, "spark_ds_parquet": 24, "trino_orc": 20, "trino_parquet": 16}, counts


@ON_OUR_BACKENDS  # (not used here: keeps the test among the other Trino tests of a run)
def test_reference_engines_agree(ref_cross, backend_url):
    _check_engines_agree(ref_cross, "reference")


@ON_OUR_BACKENDS
def test_spark_and_trino_agree_on_our_server(our_cross, ref_cross):
    _check_engines_agree(our_cross, "our server")
    ours = recorded.canonical(_answers(our_cross))
    assert ours["trino"] == ref_cross["trino"]
    assert ours["spark"]["spark_reads"] == ref_cross["spark"]["spark_reads"]
