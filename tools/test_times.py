"""Where a test run's time went, from pytest's JUnit XML (`pytest --junitxml=FILE`).

    python -m tools.test_times FILE [--files N] [--compare OTHER_FILE]

Prints the total of the tests' own times (setup + call + teardown, so a session fixture's start-up
counts in the first test that needs it), the time per area (the rules in ``AREAS``) and the slowest
files. With ``--compare`` the areas are printed side by side (OTHER_FILE as "before"). Under
pytest-xdist the times add up over the workers, so the total is more than the wall time.
"""

from __future__ import annotations

import argparse
import re
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict

#: area -> pattern of test file stems (first match wins); what each area starts is in docs/testing.md
AREAS: tuple[tuple[str, str], ...] = (
    ("trino (Trino 476 JVM)", r"test_trino_"),
    ("spark-hive (Spark 4 with a Hive catalog, a JVM per script)",
     r"test_spark_acceptance|test_pipeline_spark_sql|test_spark_hudi|test_migrate$"),
    ("hudi-spark (Spark 3.5 + Hudi's bundle)", r"test_hudi_spark|test_pipeline_hudi_reader"),
    ("pipeline (one local Spark 4)", r"test_pipeline_|test_object_store"),
    ("property tests (hypothesis)", r"_property$"),
    ("reference HMS and Java clients", r"test_conformance|test_hive4_methods|test_kerberos|test_authentication"),
    ("benchmark smoke tests", r"bench"),
    ("store services in-process", r"^test_(partition_|table_filter|dialect|timeline|locks|delegation|"
                                   r"storage_mirror|hfile|kryo|limits_store|record_index|column_stats)"),
    ("servers and CLI (everything else)", r""),
)


def load(path: str) -> dict[str, float]:
    """file stem -> seconds, summed over its test cases."""
    per_file: dict[str, float] = defaultdict(float)
    for case in ET.parse(path).getroot().iter("testcase"):
        classname = case.get("classname", "")
        parts = classname.split(".")
        stem = next((p for p in parts if p.startswith("test_")), parts[-1] if parts else "?")
        per_file[stem] += float(case.get("time") or 0.0)
    return per_file


def area_of(stem: str) -> str:
    for name, pattern in AREAS:
        if re.search(pattern, stem):
            return name
    return AREAS[-1][0]


def by_area(per_file: dict[str, float]) -> dict[str, float]:
    out: dict[str, float] = defaultdict(float)
    for stem, secs in per_file.items():
        out[area_of(stem)] += secs
    return out


def _min(s: float) -> str:
    return f"{s / 60:6.1f} min"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("junit_xml")
    ap.add_argument("--files", type=int, default=25, help="how many of the slowest files to list")
    ap.add_argument("--compare", metavar="BEFORE_XML", help="a second run's XML, printed as 'before'")
    args = ap.parse_args(argv)
    now = load(args.junit_xml)
    before = load(args.compare) if args.compare else None
    areas = by_area(now)
    print(f"test time (summed over tests and workers): {_min(sum(now.values()))}"
          + (f"   before: {_min(sum(before.values()))}" if before else ""))
    print("\nper area:")
    before_areas = by_area(before) if before else {}
    for name, _ in AREAS:
        line = f"  {_min(areas.get(name, 0.0))}  {name}"
        if before is not None:
            line = f"  {_min(before_areas.get(name, 0.0))} -> {_min(areas.get(name, 0.0))}  {name}"
        print(line)
    print(f"\nslowest {args.files} files:")
    for stem, secs in sorted(now.items(), key=lambda kv: -kv[1])[: args.files]:
        print(f"  {_min(secs)}  {stem}" + (f"   (before {_min(before.get(stem, 0.0))})" if before else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
