"""The suite's pyspark daemon (``spark.python.daemon.module``, set by tests/harness/jvm.py): Spark's own
``pyspark.daemon``, with pyspark and py4j imported from the interpreter's installed packages instead
of the ``pyspark.zip`` and ``py4j-*-src.zip`` Spark puts first on a Python worker's path. Python
compiles a zip's modules from source on every import (zipimport neither reads nor writes a bytecode
cache), and every forked worker imports ``pyspark.worker``: that compiling cost each worker about a
second of CPU. A zip goes only when the installed package is its version (the wheel ships the zip of
its own sources); a driver of another Spark version whose workers run this interpreter keeps its zip.

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
import zipfile

PRELOADED = ("pyspark.worker", "client")


def _package_of(entry: str) -> str | None:
    name = os.path.basename(entry)
    if name == "pyspark.zip":
        return "pyspark"
    return "py4j" if name.startswith("py4j-") and name.endswith(".zip") else None


def _same_installed(entry: str, package: str) -> bool:
    """Whether the interpreter's installed ``package`` is the zip's version (a Spark 3.5 driver may run
    the workers of another virtualenv's interpreter: then the zip's pyspark is the one that matches)."""
    try:
        with zipfile.ZipFile(entry) as z:
            zipped = z.read(f"{package}/version.py")
    except (OSError, KeyError, zipfile.BadZipFile):
        return False
    for path in sys.path:
        if path and not path.endswith(".zip"):
            try:
                with open(os.path.join(path, package, "version.py"), "rb") as f:
                    return f.read() == zipped
            except OSError:
                continue
    return False


sys.path[:] = [p for p in sys.path if not ((pkg := _package_of(p)) and _same_installed(p, pkg))]

from pyspark.daemon import manager  # noqa: E402

for _name in PRELOADED:
    try:
        importlib.import_module(_name)
    except ImportError:  # (the project's client is not importable by Hudi's Spark 3.5 interpreter)
        pass

if __name__ == "__main__":
    manager()
