"""`hudi-metastore table-services run DB.TABLE` in its own process, for the failure tests: it can
stop before a service completes.

    python tests/spark/table_services_job.py --metastore-uri U --table db.t [--hold-at ACTION --signal FILE]

With --hold-at compaction (or clustering), the run writes FILE (the instant time) once the
executors wrote the service's files, before it completes, and then waits forever: the test kills
it there. The hold is patched into this process (`HudiCatalog.complete_instant`); the pipeline and
the command have no test hooks.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--metastore-uri", required=True)
    p.add_argument("--table", required=True)
    p.add_argument("--hold-at", choices=["compaction", "clustering"])
    p.add_argument("--signal")
    args = p.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from adapter.cli import build_parser
    from client import HudiCatalog

    # the command takes this session (a caller's, as under spark-submit)
    spark = (SparkSession.builder.master("local[2]").appName("table-services-job")
             .config("spark.sql.shuffle.partitions", "2").config("spark.ui.enabled", "false")
             .config("spark.driver.memory", "512m").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    if args.hold_at:
        real = HudiCatalog.complete_instant

        def hold(self, db, table, ts, action, *rest, **kw):
            if action != args.hold_at:
                return real(self, db, table, ts, action, *rest, **kw)
            with open(args.signal + ".tmp", "w") as f:
                f.write(ts)
            os.replace(args.signal + ".tmp", args.signal)
            while True:
                time.sleep(1)

        HudiCatalog.complete_instant = hold  # type: ignore[method-assign]
    cmd = build_parser().parse_args(["table-services", "run", args.table, "--metastore", args.metastore_uri])
    return cmd.fn(cmd)


if __name__ == "__main__":
    sys.exit(main())
