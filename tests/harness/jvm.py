"""Options for the suite's short-lived JVMs (Spark drivers, reference metastores, Java clients).

Most of the suite's JVMs live for seconds to a few minutes and run little code often, so they pay
more for compiling and for loading classes than they win back:

* ``FLAGS``: C1 only (no C2 compile threads), the serial collector, and the JVM's own warnings on
  stderr (never in a stdout that a test reads). On this machine a Spark 4 script's JVM used about
  38 % less CPU with them.
* a class-data-sharing archive per Spark kind (Spark 4 of the project's interpreter, Spark 3.5 of
  Hudi's bundle; JDK 13+ dynamic archives): the classes a training job loaded, mapped instead of
  parsed and verified again. With it the same script used 60 % less CPU than without either.
  ``python -m tests.harness.jvm build`` makes the archives (the test session starts it in the
  background); until an archive exists its JVMs run with ``FLAGS`` alone. The archive's name
  carries a digest of the JVM and the kind's jars, so another JDK or Spark makes a new one.

``HMS_TEST_JVM_FLAGS=0`` turns all of it off (the JVMs' defaults); ``HMS_TEST_JVM_CDS=0`` only the
archives.
"""

from __future__ import annotations

import argparse
import fcntl
import functools
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tools.java_artifacts import cache_root

FLAGS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xlog:disable", "-Xlog:all=warning:stderr")
#: Hudi's Spark 3.5 drivers' heap starts at its maximum (spark.driver.memory, which caps the initial
#: size): from the default start, 1/64 of the machine's memory, the old generation of a long Hudi job
#: filled again and again (test_hudi_sync_spark's driver: 50 to 59 full collections, 15 s of its CPU
#: in GC; from its maximum 6, 4.4 to 4.9 s). The Spark 4 drivers' collections took 2 s (no change).
SPARK35_HEAP = ("-XX:InitialRAMPercentage=50",)
KINDS = ("spark4", "spark35")
#: the user's own SPARK_SUBMIT_OPTS, kept in front of ours
_USER_SUBMIT_OPTS = os.environ.get("HMS_TEST_USER_SPARK_SUBMIT_OPTS", os.environ.get("SPARK_SUBMIT_OPTS", ""))
os.environ.setdefault("HMS_TEST_USER_SPARK_SUBMIT_OPTS", _USER_SUBMIT_OPTS)  # children see the original
_TRAINING = Path(__file__).resolve().parents[1] / "spark" / "jvm_training.py"
#: the Python workers' daemon of the suite's Spark drivers (the repository's root on their PYTHONPATH)
PYSPARK_DAEMON = "tests.spark.pyspark_daemon"


def enabled() -> bool:
    return os.environ.get("HMS_TEST_JVM_FLAGS", "1") != "0"


def cds_enabled() -> bool:
    return enabled() and os.environ.get("HMS_TEST_JVM_CDS", "1") != "0"


def java_flags() -> list[str]:
    """Options for a plain ``java`` the suite starts (reference metastores, Java clients)."""
    return list(FLAGS) if enabled() else []


def javac_flags() -> list[str]:
    """``FLAGS`` for javac's own JVM (``-J``): a compile of one file used 3.2 s of CPU, with them 1.7."""
    return [f"-J{f}" for f in java_flags()]


def _java() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    return Path(found).resolve() if found and Path(found).exists() else None


def _spark_jars(kind: str) -> Path | None:
    if kind == "spark4":
        spec = importlib.util.find_spec("pyspark")
        if spec is None or spec.origin is None:
            return None
        jars = Path(spec.origin).parent / "jars"
    else:
        from .hudi_spark import PYSPARK_VERSION

        venv = cache_root() / f"pyspark-{PYSPARK_VERSION}-venv"
        if not (venv / ".complete").exists():
            return None
        found = sorted(venv.glob("lib/python*/site-packages/pyspark/jars"))
        if not found:
            return None
        jars = found[0]
    return jars if jars.is_dir() else None


@functools.cache
def archive_path(kind: str) -> Path | None:
    """Where the kind's archive is (or would be) for this JVM and these jars; None without either."""
    java, jars = _java(), _spark_jars(kind)
    if java is None or jars is None:
        return None
    digest = hashlib.sha256()
    st = java.stat()
    digest.update(f"{java}|{st.st_size}|{st.st_mtime_ns}|{' '.join(FLAGS)}|{jars}".encode())
    for jar in sorted(jars.iterdir()):
        digest.update(f"|{jar.name}:{jar.stat().st_size}".encode())
    return cache_root() / "cds" / f"{kind}-{digest.hexdigest()[:16]}.jsa"


def long_lived_jit() -> str:
    """The compilers of the run-long pipeline driver: ``c1`` (as every other JVM) or ``full`` (C1 and
    C2), from ``HMS_TEST_PIPELINE_JIT``."""
    return os.environ.get("HMS_TEST_PIPELINE_JIT", "c1")


def spark_submit_opts(kind: str = "spark4", long_lived: bool = False) -> str:
    """SPARK_SUBMIT_OPTS for a driver of ``kind``: the user's, the Python workers' daemon
    (``PYSPARK_DAEMON``; ``HMS_TEST_PYSPARK_DAEMON=0``: pyspark's own), ``FLAGS``, the archive if made.
    ``long_lived``: the pipeline tests' driver, which lives the whole run (``long_lived_jit``)."""
    parts = [_USER_SUBMIT_OPTS] if _USER_SUBMIT_OPTS else []
    if os.environ.get("HMS_TEST_PYSPARK_DAEMON", "1") != "0":  # workers import pyspark compiled, not from a zip
        parts.append(f"-Dspark.python.daemon.module={PYSPARK_DAEMON}")
    if enabled():
        full = long_lived and long_lived_jit() == "full"
        parts += [f for f in FLAGS if not (full and f.startswith("-XX:TieredStopAtLevel"))]
        if kind == "spark35":
            parts += SPARK35_HEAP
        archive = archive_path(kind) if cds_enabled() else None
        if archive is not None and archive.exists():
            parts.append(f"-XX:SharedArchiveFile={archive}")
    return " ".join(parts)


def start_background_build() -> None:
    """Make the missing archives in a detached process (its log next to them); returns at once."""
    if not cds_enabled() or all(a is None or a.exists() for a in map(archive_path, KINDS)):
        return
    folder = cache_root() / "cds"
    folder.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    repo = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([repo] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    with open(folder / "build.log", "ab") as log:
        subprocess.Popen([sys.executable, "-c", "from tests.harness.jvm import main; main(['build'])"],
                         cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         start_new_session=True)


def build(kind: str) -> str:
    """Train and write the kind's archive unless it exists or another process is making it."""
    archive = archive_path(kind)
    if archive is None:
        return f"{kind}: no JVM or no Spark jars"
    if archive.exists():
        return f"{kind}: {archive} exists"
    archive.parent.mkdir(parents=True, exist_ok=True)
    with open(archive.with_suffix(".lock"), "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return f"{kind}: another process is making {archive}"
        if archive.exists():
            return f"{kind}: {archive} exists"
        for stale in archive.parent.glob(f"{archive.name}.*.tmp"):
            stale.unlink(missing_ok=True)
        tmp = archive.with_name(f"{archive.name}.{os.getpid()}.tmp")
        t0 = time.monotonic()
        with tempfile.TemporaryDirectory(prefix=f"cds-{kind}-") as work:
            _train(kind, Path(work), f"-XX:ArchiveClassesAtExit={tmp}")
        if not tmp.exists() or tmp.stat().st_size == 0:
            tmp.unlink(missing_ok=True)
            return f"{kind}: the training JVM wrote no archive"
        os.replace(tmp, archive)
        _prune(kind, keep=archive)
        return f"{kind}: wrote {archive} ({archive.stat().st_size >> 20} MB) in {time.monotonic() - t0:.0f} s"


def _prune(kind: str, keep: Path, newest: int = 3) -> None:
    """At most ``newest`` archives of a kind stay (each clone's virtualenv makes its own, ~200 MB)."""
    others = sorted((p for p in keep.parent.glob(f"{kind}-*.jsa") if p != keep),
                    key=lambda p: p.stat().st_mtime, reverse=True)
    for old in others[newest - 1:]:
        old.unlink(missing_ok=True)
        old.with_suffix(".lock").unlink(missing_ok=True)


def _train(kind: str, work: Path, dump: str) -> None:
    """One job of the kind against our server (SQLite): a Hive catalog's DDL, writes and reads."""
    from .hudi_spark import hudi_spark_env, hudi_spark_python
    from .procs import VENV_PYTHON, start_our_server, stop_process

    port, server = start_our_server(f"sqlite:///{work / 'metastore.db'}", work / "server")
    try:
        python = VENV_PYTHON if kind == "spark4" else hudi_spark_python()
        env = dict(os.environ)
        env.update(hudi_spark_env() if kind == "spark35" else {})
        env["SPARK_SUBMIT_OPTS"] = " ".join([*FLAGS, dump])
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
        env.setdefault("PYSPARK_PYTHON", python)
        env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        subprocess.run([python, str(_TRAINING), "--kind", kind, "--metastore-uri", f"thrift://127.0.0.1:{port}",
                        "--warehouse", str(work / "warehouse")], cwd=work, env=env, check=True, timeout=600,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    finally:
        stop_process(server)


def hive4_client(program: str) -> tuple[str, Path] | None:
    """The Hive 4 metastore client's classpath and a directory holding ``tests/java/<program>.class``,
    compiled once per source and classpath (kept under the cache, by digest); None without javac
    or the fetched hive4-metastore artifact."""
    from tools.java_artifacts import cached

    jars = cached("hive4-metastore")
    if jars is None or shutil.which("javac") is None:
        return None
    source = Path(__file__).resolve().parents[1] / "java" / f"{program}.java"
    digest = hashlib.sha256(source.read_bytes() + str(jars).encode()).hexdigest()[:16]
    out = cache_root() / "java-clients" / f"{program}-{digest}"
    if not (out / f"{program}.class").exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
            subprocess.run(["javac", *javac_flags(), "-nowarn", "-cp", f"{jars}/*", "-d", tmp, str(source)], check=True,
                           capture_output=True)
            try:
                os.replace(tmp, out)  # another process may have made it meanwhile: either is whole
            except OSError:
                pass
            Path(tmp).mkdir(exist_ok=True)  # (for the context's cleanup)
        for old in out.parent.glob(f"{program}-*"):  # an edited source's earlier classes
            if old != out:
                shutil.rmtree(old, ignore_errors=True)
    return f"{jars}/*", out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness.jvm", description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=["build", "show"])
    parser.add_argument("kinds", nargs="*", default=list(KINDS))
    args = parser.parse_args(argv)
    for kind in args.kinds:
        if args.action == "show":
            print(kind, archive_path(kind), spark_submit_opts(kind))
            continue
        try:
            print(build(kind), flush=True)
        except Exception as e:  # one kind's failure leaves the other's archive to be made
            print(f"{kind}: training failed: {e}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
