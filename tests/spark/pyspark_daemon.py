"""The suite's pyspark daemon (``spark.python.daemon.module``, set by tests/harness/jvm.py): Spark's own
``pyspark.daemon``, with pyspark and py4j imported from the interpreter's installed packages instead
of the ``pyspark.zip`` and ``py4j-*-src.zip`` Spark puts first on a Python worker's path. Python
compiles a zip's modules from source on every import (zipimport neither reads nor writes a bytecode
cache), and every forked worker imports ``pyspark.worker``: that compiling cost each worker about a
second of CPU. The same pyspark version either way (the wheel ships the zip of its own sources).

It also imports ``pyspark.worker`` and the project's ``client`` (the Thrift bindings the pipeline's
tasks use) before it forks, so a worker starts with them (about 0.25 s of CPU a worker). Neither
starts a thread (tests/unit/test_pyspark_daemon.py checks it): a fork copies only the forking thread.
pyarrow and pandas do start threads, and stay imported by each worker after its fork, as pyspark's
own daemon has it.

Run as ``python -m tests.spark.pyspark_daemon`` (``tests`` is a namespace package: nothing else of
the suite is imported)."""

import importlib
import os
import sys

PRELOADED = ("pyspark.worker", "client")


def _installed(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "pyspark", "daemon.py"))


if any(_installed(p) for p in sys.path if p and not p.endswith(".zip")):
    sys.path[:] = [p for p in sys.path if not (p.endswith(("pyspark.zip", "-src.zip")) and "py" in os.path.basename(p))]

from pyspark.daemon import manager  # noqa: E402

for _name in PRELOADED:
    try:
        importlib.import_module(_name)
    except ImportError:  # (the project's client is not importable by Hudi's Spark 3.5 interpreter)
        pass

if __name__ == "__main__":
    manager()
