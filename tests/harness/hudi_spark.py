"""Apache Hudi's Spark bundle in a PySpark 3.5 interpreter (Central has no Hudi bundle for Spark 4).

``hudi_spark_python()`` returns the interpreter of a virtualenv with pyspark 3.5 (made on first use
under the Java artifacts cache, outside the clone, shared by clones and runs); ``hudi_bundle_jar()``
the pinned bundle (tools/java_artifacts.py). Scripts under tests/spark/hudi_*.py run there through
``run_spark_script(..., python=hudi_spark_python())`` with ``HUDI_BUNDLE_JAR`` in their environment.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tools.java_artifacts import cache_root, fetch

PYSPARK_VERSION = "3.5.9"  # the newest 3.5 release; the Hudi bundle below is built for Spark 3.5
BUNDLE_ENTRY = "hudi-spark-bundle"


def hudi_bundle_jar(entry: str = BUNDLE_ENTRY) -> Path:
    """The bundle of a tools/java_artifacts.py entry (default: the newest Hudi's)."""
    [jar] = fetch(entry).glob("*.jar")
    return jar


def hudi_spark_python() -> str:
    """The virtualenv's python, made (pip from PyPI) when absent or incomplete."""
    venv = cache_root() / f"pyspark-{PYSPARK_VERSION}-venv"
    python = venv / "bin" / "python"
    done = venv / ".complete"
    if done.exists():
        return str(python)
    cache_root().mkdir(parents=True, exist_ok=True)
    with open(cache_root() / f".pyspark-{PYSPARK_VERSION}-venv.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(python), "-m", "pip", "install", "-q", f"pyspark=={PYSPARK_VERSION}"],
                           check=True, stdin=subprocess.DEVNULL)
            done.write_text(PYSPARK_VERSION + "\n")
    return str(python)


def hudi_spark_env(s3a: bool = False, bundle: str = BUNDLE_ENTRY) -> dict[str, str]:
    """The scripts' environment: the bundle (`bundle`: its tools/java_artifacts.py entry), and with
    `s3a` Hadoop's S3A jars (HADOOP_AWS_JARS), which the script configures from the AWS environment."""
    from .jvm import spark_submit_opts

    env = {"HUDI_BUNDLE_JAR": str(hudi_bundle_jar(bundle)), "SPARK_SUBMIT_OPTS": spark_submit_opts("spark35")}
    if os.environ.get("JAVA_HOME"):
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    if s3a:
        env["HADOOP_AWS_JARS"] = ",".join(str(j) for j in sorted(fetch("hadoop-aws").glob("*.jar")))
    return env


if __name__ == "__main__":  # python -m tests.harness.hudi_spark: prepare both (CI does it up front)
    print(hudi_spark_python(), hudi_bundle_jar(), fetch("hadoop-aws"))
