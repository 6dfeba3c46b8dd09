"""Java artifacts from Maven Central: the one way the project's Java peers get onto a machine.

    python -m tools.java_artifacts fetch [NAME ...]   # every entry when no NAME is given
    python -m tools.java_artifacts path NAME          # the cached path; exit 1 when not fetched yet
    python -m tools.java_artifacts list               # entries, what they pin, cached or not

From Python: ``fetch("trino-server") -> Path`` (downloads on first use) and ``cached(name) ->
Path | None`` (never touches the network).

Every entry is pinned below (``ARTIFACTS``). Everything is fetched by Maven's own client (``mvn``),
from its default repository, Maven Central, only (a generated ``settings.xml`` blocks every other
repository), with ``--strict-checksums``: Maven checks each file against the checksum the repository
publishes for it and fails when there is none or it differs. Local repository: ``<cache>/m2``. Three
kinds:

* ``archive``: one file (e.g. ``io.trino:trino-server:476:tar.gz``) fetched with ``mvn
  dependency:copy``, unpacked into the cache, optionally pruned (``plugins``: keep only these
  directories under ``plugin/``). ``fetch`` returns the unpacked top directory.
* ``file``: one file fetched as an ``archive`` and kept as it is (e.g. a shaded bundle jar);
  ``fetch`` returns the directory holding it.
* ``classpath``: Maven resolves the pinned dependencies with their runtime dependencies (a
  generated pom, ``mvn dependency:copy-dependencies``) into one directory of jars; ``fetch``
  returns that directory (a JVM takes it as ``-cp "DIR/*"``).

The single files of ``archive``, ``file`` and ``extract`` are removed from the local repository
once copied (the cache keeps one copy of each).

Cache: ``${HUDI_METASTORE_CACHE:-~/.cache/hudi-metastore}`` (outside the clone, shared by every
clone and run). An entry is complete when its directory holds ``.artifact.json`` whose ``spec``
matches the pinned entry; it is built in a temporary directory of the cache and renamed into place,
so an interrupted fetch leaves nothing that looks complete. A complete entry is reused without any
network I/O; changing its pin here makes the next ``fetch`` build it anew. Concurrent fetches of the
same entry wait for each other (a lock file per entry). ``fetch`` of several entries downloads
Trino's beside the others (``fetch_all``).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from xml.sax.saxutils import escape

# --------------------------------------------------------------------------- the pinned list

#: maven-dependency-plugin, which fetches every entry (pinned: Maven would otherwise look up the
#: newest one on every run).
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

#: name -> entry. ``artifact``: groupId:artifactId:version[:extension] of an ``archive``;
#: ``dependencies``: groupId:artifactId:version of a ``classpath``, each with the runtime
#: dependencies Maven resolves for it, minus ``exclusions`` (groupId:artifactId, ``*`` allowed),
#: which apply to every dependency.
ARTIFACTS: dict[str, dict] = {
    "trino-server": {
        "kind": "archive",
        "artifact": "io.trino:trino-server:476:tar.gz",  # 821 MB; needs Java 24+ to run
        # the connectors the project tests against; every other plugin directory is dropped (the
        # server loads whatever is under plugin/, and needs none of them to start)
        "plugins": ("hive", "hudi", "iceberg"),
        "about": "Trino server (bin/, lib/, plugin/{hive,hudi,iceberg}) for the Trino tests",
        # fetched beside the others (one large download from its own group's poms; the others are
        # mostly many small ones): `fetch_all`
        "side_lane": True,
    },
    "hive4-metastore": {
        "kind": "classpath",
        "dependencies": (
            "org.apache.hive:hive-standalone-metastore-server:4.0.1",  # newest of the artifact on Central
            # Hadoop is an optional dependency of the metastore: the versions Hive 4.0.1 builds with
            "org.apache.hadoop:hadoop-common:3.3.6",
            "org.apache.hadoop:hadoop-hdfs-client:3.3.6",
            "org.apache.hadoop:hadoop-hdfs:3.3.6",  # HDFS classes the metastore's transformer loads
            "org.apache.hadoop:hadoop-mapreduce-client-core:3.3.6",
            # JDBC drivers (test scope in Hive's pom): the versions Hive 4.0.1 tests with
            "org.postgresql:postgresql:42.5.1",
            "org.mariadb.jdbc:mariadb-java-client:2.5.0",
            # hadoop-hdfs-client would otherwise bring jackson-annotations 2.12 next to Hive's
            # jackson-databind 2.16, which needs the annotations of its own version
            "com.fasterxml.jackson.core:jackson-annotations:2.16.1",
        ),
        "exclusions": (
            # logging: Hive 4 logs through log4j2 (log4j-slf4j-impl); the log4j 1 bindings conflict
            "org.slf4j:slf4j-log4j12", "org.slf4j:slf4j-reload4j", "ch.qos.reload4j:reload4j",
            "log4j:log4j",
            # a shaded copy of Hadoop 3.3.5's classes (via ORC), next to hadoop-common 3.3.6's own
            "org.apache.hadoop:hadoop-client-api",
            # YARN's client (a second Jetty version, websockets, JLine 3) and Kerby's KDC server:
            # a Thrift metastore on Derby / PostgreSQL / MariaDB uses neither
            "org.apache.hadoop:hadoop-yarn-client", "org.eclipse.jetty.websocket:*",
            "org.apache.kerby:kerb-simplekdc",
            # what hadoop-hdfs (the server side of HDFS) would add: every Netty module of another
            # version, LevelDB
            "io.netty:netty-all", "org.fusesource.leveldbjni:leveldbjni-all",
        ),
        # the schema scripts (for its schematool), which only the binary distribution carries:
        # extracted from it into DIR/scripts/metastore/upgrade/ (the rest of the archive is not kept)
        "extract": ("org.apache.hive:hive-standalone-metastore-server:4.0.1:bin:tar.gz", "scripts/metastore/upgrade/"),
        "about": "Apache Hive 4 standalone metastore with its runtime classpath (reference metastore, "
                 "tools/reference-hms.sh --hive 4)",
    },
    "hudi-spark-bundle": {
        "kind": "file",
        # the newest Hudi bundle; there is no Spark 4 bundle on Central, so it runs on pyspark 3.5
        # (tests/harness/hudi_spark.py makes that virtualenv)
        "artifact": "org.apache.hudi:hudi-spark3.5-bundle_2.12:1.2.0",
        "about": "Apache Hudi's Spark 3.5 bundle (writer, reader, hive sync) for the Hudi Spark tests",
    },
    "hudi-spark-bundle-0.15": {
        "kind": "file",
        # the newest release whose bundle ships Hudi's metaserver client (hudi-metaserver-client):
        # RFC-36's own client (tests/test_hudi_metaserver_client.py); built for Spark 3.5 as well
        "artifact": "org.apache.hudi:hudi-spark3.5-bundle_2.12:0.15.0",
        "about": "Apache Hudi 0.15's Spark 3.5 bundle (its metaserver client) for the metaserver client test",
    },
    "hadoop-aws": {
        "kind": "classpath",
        # S3A for Hudi's Spark reader on the object store: the Hadoop version pyspark 3.5 ships
        # (hadoop-client-*-3.3.4), with the AWS SDK bundle it was built with
        "dependencies": ("org.apache.hadoop:hadoop-aws:3.3.4",),
        "about": "Hadoop's S3A file system (hadoop-aws, AWS SDK bundle) for the Hudi Spark reader on s3a://",
    },
}

# --------------------------------------------------------------------------- errors, paths


class ArtifactError(RuntimeError):
    """A fetch failed; the message names the entry and the artifact's coordinates."""


def cache_root() -> Path:
    return Path(os.environ.get("HUDI_METASTORE_CACHE") or Path.home() / ".cache" / "hudi-metastore")


def fetch_command(name: str | None = None) -> str:
    return "python -m tools.java_artifacts fetch" + (f" {name}" if name else "")


def _entry(name: str) -> dict:
    try:
        return ARTIFACTS[name]
    except KeyError:
        raise ArtifactError(f"unknown Java artifact {name!r}; known: {', '.join(sorted(ARTIFACTS))}") from None


def _coords(spec: str) -> tuple[str, str, str, str]:
    """groupId, artifactId, version, extension of ``g:a:v[:extension]`` or ``g:a:v:classifier:extension``."""
    parts = spec.split(":")
    if len(parts) not in (3, 4, 5):
        raise ArtifactError(f"bad coordinates {spec!r} (groupId:artifactId:version[[:classifier]:extension])")
    g, a, v = parts[:3]
    return g, a, v, parts[-1] if len(parts) > 3 else "jar"


def _target(name: str) -> Path:
    e = _entry(name)
    if e["kind"] in ("archive", "file"):
        _g, a, v, _x = _coords(e["artifact"])
        return cache_root() / f"{a}-{v}"
    _g, _a, v, _x = _coords(e["dependencies"][0])
    return cache_root() / f"{name}-{v}"


def _spec_digest(name: str) -> str:
    e = dict(_entry(name))
    e.pop("about", None)
    if e["kind"] == "classpath":
        e["plugin"] = DEPENDENCY_PLUGIN
    return hashlib.sha256(json.dumps(e, sort_keys=True, default=list).encode()).hexdigest()[:16]


MARKER = ".artifact.json"


def cached(name: str) -> Path | None:
    """The entry's directory if it has been fetched (complete, current pin); no network I/O."""
    target = _target(name)
    try:
        meta = json.loads((target / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return target if meta.get("spec") == _spec_digest(name) else None


def _maven_coords(spec: str) -> str:
    """``spec`` as ``dependency:copy`` takes it: groupId:artifactId:version:extension[:classifier]."""
    g, a, v, x = _coords(spec)
    classifier = f":{spec.split(':')[3]}" if spec.count(":") == 4 else ""
    return f"{g}:{a}:{v}:{x}{classifier}"


def _file_name(spec: str) -> str:
    _g, a, v, x = _coords(spec)
    classifier = f"-{spec.split(':')[3]}" if spec.count(":") == 4 else ""
    return f"{a}-{v}{classifier}.{x}"


# --------------------------------------------------------------------------- fetch


def fetch(name: str) -> Path:
    """The entry's directory, fetched with Maven on first use (see the module docstring)."""
    hit = cached(name)
    if hit is not None:
        return hit
    root = cache_root()
    (root / ".locks").mkdir(parents=True, exist_ok=True)
    with _lock(root / ".locks" / f"{name}.lock"):
        hit = cached(name)  # another process may have finished it while we waited
        if hit is not None:
            return hit
        (root / ".tmp").mkdir(exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root / ".tmp"))
        try:
            e = _entry(name)
            if e["kind"] == "archive":
                built, meta = _build_archive(name, e, work)
            elif e["kind"] == "file":
                built, meta = _build_file(name, e, work)
            elif e["kind"] == "classpath":
                built, meta = _build_classpath(name, e, work)
            else:
                raise ArtifactError(f"{name}: unknown kind {e['kind']!r}")
            meta.update(name=name, spec=_spec_digest(name), fetched=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            (built / MARKER).write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
            _install(built, _target(name), work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    hit = cached(name)
    if hit is None:
        raise ArtifactError(f"{name}: fetched, but {_target(name)} is not complete")
    return hit


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _install(built: Path, target: Path, work: Path) -> None:
    """Rename ``built`` to ``target``, replacing a stale ``target`` (moved aside first)."""
    if target.exists() or target.is_symlink():
        stale = work / "stale"
        os.rename(target, stale)
    os.rename(built, target)


def _log(msg: str) -> None:
    sys.stderr.write(f"[java_artifacts] {msg}\n")  # one write: the two lanes' lines never interleave
    sys.stderr.flush()


# --------------------------------------------------------------------------- Maven

# Maven Central (the repository every pom inherits, id `central`) only: every other repository a
# dependency's pom may name is blocked (a blocked mirror is never contacted; its URL is unused).
_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<!-- generated by tools/java_artifacts.py -->
<settings>
  <mirrors>
    <mirror><id>only-central</id><mirrorOf>*,!central</mirrorOf><url>file:///nonexistent</url><blocked>true</blocked></mirror>
  </mirrors>
</settings>
"""


def _mvn(name: str, args: list[str], work: Path, what: str) -> None:
    """Run Maven in ``work`` on the cache's local repository; raises ArtifactError naming ``what``."""
    mvn = shutil.which("mvn")
    if not mvn:
        raise ArtifactError(f"{name}: Maven (mvn) is needed to fetch {what} (apt-get install maven)")
    settings = work / "settings.xml"
    if not settings.exists():
        settings.write_text(_SETTINGS)
    cmd = [mvn, "-B", "-q", "-Dstyle.color=never", "--strict-checksums", "-s", str(settings),
           f"-Dmaven.repo.local={cache_root() / 'm2'}", *args]
    res = subprocess.run(cmd, cwd=work, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if res.returncode != 0:
        out = "\n".join((res.stdout + res.stderr).strip().splitlines()[-40:])
        raise ArtifactError(f"{name}: Maven could not fetch {what} (exit {res.returncode}):\n{out}")


def _digests(path: Path) -> dict[str, str]:
    """sha1 and sha256 of the file as fetched (Maven has checked it against the repository's checksum)."""
    hashes = {a: hashlib.new(a) for a in ("sha1", "sha256")}
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            for h in hashes.values():
                h.update(block)
    return {a: h.hexdigest() for a, h in hashes.items()}


def _copy(name: str, spec: str, out: Path, work: Path) -> tuple[Path, dict[str, str]]:
    """One file into ``out`` with ``mvn dependency:copy``; its path and digests. The local
    repository's copy is removed (the cache keeps one)."""
    _log(f"{name}: fetching {spec} with Maven")
    t0 = time.monotonic()
    _mvn(name, [f"{DEPENDENCY_PLUGIN}:copy", f"-Dartifact={_maven_coords(spec)}", f"-DoutputDirectory={out}"],
         work, spec)
    got = out / _file_name(spec)
    if not got.is_file():
        raise ArtifactError(f"{name}: Maven fetched {spec}, but {got.name} is not in {out}")
    sums = _digests(got)
    g, a, v, _x = _coords(spec)
    local = cache_root() / "m2" / g.replace(".", "/") / a / v
    for p in local.glob(f"{_file_name(spec)}*"):  # the file and its checksum files
        p.unlink()
    _log(f"{name}: {got.stat().st_size >> 20} MB in {time.monotonic() - t0:.0f} s, verified by Maven")
    return got, sums


# --------------------------------------------------------------------------- kind: archive


def _build_archive(name: str, e: dict, work: Path) -> tuple[Path, dict]:
    spec = e["artifact"]
    _g, _a, _v, ext = _coords(spec)
    archive, sums = _copy(name, spec, work, work)
    unpacked = work / "unpacked"
    unpacked.mkdir()
    _log(f"{name}: unpacking")
    try:
        if ext in ("tar.gz", "tgz", "tar"):
            with tarfile.open(archive) as tf:
                tf.extractall(unpacked, filter="data")
        elif ext in ("zip", "jar"):
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(unpacked)
        else:
            raise ArtifactError(f"{name}: do not know how to unpack .{ext} ({spec})")
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as ex:
        raise ArtifactError(f"{name}: cannot unpack {spec}: {ex}") from ex
    archive.unlink()
    entries = [p for p in unpacked.iterdir()]
    top = entries[0] if len(entries) == 1 and entries[0].is_dir() else unpacked
    plugins = e.get("plugins")
    if plugins is not None:
        plugin_dir = top / "plugin"
        if not plugin_dir.is_dir():
            raise ArtifactError(f"{name}: {spec} has no plugin/ directory to prune")
        missing = [p for p in plugins if not (plugin_dir / p).is_dir()]
        if missing:
            raise ArtifactError(f"{name}: {spec} lacks plugin(s) {', '.join(missing)}")
        for p in plugin_dir.iterdir():
            if p.name not in plugins:
                shutil.rmtree(p) if p.is_dir() else p.unlink()
    return top, {"artifact": spec, "checksums": sums}


# --------------------------------------------------------------------------- kind: file


def _build_file(name: str, e: dict, work: Path) -> tuple[Path, dict]:
    out = work / "file"
    out.mkdir()
    _got, sums = _copy(name, e["artifact"], out, work)
    return out, {"artifact": e["artifact"], "checksums": sums}


# --------------------------------------------------------------------------- kind: classpath


def _pom(name: str, e: dict) -> str:
    excl = "".join(
        f"<exclusion><groupId>{escape(x.split(':')[0])}</groupId><artifactId>{escape(x.split(':')[1])}</artifactId>"
        "</exclusion>" for x in e.get("exclusions", ()))
    deps = []
    for spec in e["dependencies"]:
        g, a, v, _x = _coords(spec)
        deps.append(f"<dependency><groupId>{escape(g)}</groupId><artifactId>{escape(a)}</artifactId>"
                     f"<version>{escape(v)}</version><exclusions>{excl}</exclusions></dependency>")
    nl = "\n    "
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- generated by tools/java_artifacts.py for the entry {escape(name)} -->
<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.hudi-metastore.tools</groupId>
  <artifactId>{escape(name)}-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    {nl.join(deps)}
  </dependencies>
</project>
"""


def _build_classpath(name: str, e: dict, work: Path) -> tuple[Path, dict]:
    (work / "pom.xml").write_text(_pom(name, e))
    lib = work / "lib"
    _log(f"{name}: resolving {', '.join(e['dependencies'])} with Maven")
    t0 = time.monotonic()
    _mvn(name, ["-f", str(work / "pom.xml"), f"{DEPENDENCY_PLUGIN}:copy-dependencies", f"-DoutputDirectory={lib}",
                "-DincludeScope=runtime"], work, ", ".join(e["dependencies"]))
    jars = sorted(p.name for p in lib.glob("*.jar"))
    for spec in e["dependencies"]:
        if _file_name(spec) not in jars:
            raise ArtifactError(f"{name}: Maven resolved no {_file_name(spec)} ({spec})")
    size = sum(p.stat().st_size for p in lib.glob("*.jar"))
    _log(f"{name}: {len(jars)} jars, {size >> 20} MB, in {time.monotonic() - t0:.0f} s")
    meta: dict[str, object] = {"dependencies": list(e["dependencies"]), "repository": "Maven Central (Maven's default)",
                               "jars": jars}
    if e.get("extract"):
        spec, prefix = e["extract"]
        archive, sums = _copy(name, spec, work / "extract", work)
        meta["extracted"] = {"artifact": spec, "members": prefix, "checksums": sums}
        n = 0
        try:
            with tarfile.open(archive) as tf:
                for m in tf.getmembers():
                    rel = m.name.split("/", 1)[1] if "/" in m.name else ""
                    if rel.startswith(prefix) and (m.isfile() or m.isdir()):
                        m.name = rel
                        tf.extract(m, lib, filter="data")
                        n += m.isfile()
        except (tarfile.TarError, OSError) as ex:
            raise ArtifactError(f"{name}: cannot unpack {spec}: {ex}") from ex
        if not n:
            raise ArtifactError(f"{name}: {spec} has nothing under {prefix}")
        archive.unlink()
        _log(f"{name}: {n} files of {prefix} from {spec}")
    return lib, meta


# --------------------------------------------------------------------------- command line


_KIND_ORDER = {"file": 0, "archive": 1, "classpath": 2}


def fetch_all(names: list[str]) -> tuple[dict[str, Path], list[ArtifactError]]:
    """Fetch the entries, those marked ``side_lane`` in a second thread beside the others (on a new
    machine Trino's 783 MB took 83 s and Hive 4's 173 jars 80 s, one after the other): (name ->
    path of those fetched, the errors). The side lane starts once the main lane's first Maven run
    has put the dependency plugin into the local repository (two Maven runs never fetch the same
    files at once), or the main lane has nothing to fetch."""
    side = [n for n in names if ARTIFACTS[n].get("side_lane")]
    main_lane = sorted((n for n in names if n not in side), key=lambda n: _KIND_ORDER.get(ARTIFACTS[n]["kind"], 9))
    paths: dict[str, Path] = {}
    errors: list[ArtifactError] = []
    plugin_ready = threading.Event()

    def run(lane: list[str], first: threading.Event | None) -> None:
        for n in lane:
            if first is not None and cached(n) is None:
                first.wait()
            t0 = time.monotonic()
            was = cached(n)
            try:
                paths[n] = fetch(n)
            except Exception as ex:  # noqa: BLE001 - reported with the entry's name, the lanes go on
                errors.append(ex if isinstance(ex, ArtifactError) else ArtifactError(f"{n}: {type(ex).__name__}: {ex}"))
                continue
            finally:
                if first is None and was is None:
                    plugin_ready.set()
            if was is None:
                _log(f"{n}: ready in {time.monotonic() - t0:.0f} s")

    beside = threading.Thread(target=run, args=(side, plugin_ready), name="java-artifacts-side", daemon=True)
    beside.start()
    try:
        run(main_lane, None)
    finally:
        plugin_ready.set()
        beside.join()
    return paths, errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.java_artifacts", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="fetch entries (all when none is named); prints NAME PATH per entry")
    f.add_argument("names", nargs="*", metavar="NAME")
    p = sub.add_parser("path", help="print the cached path of an entry; exit 1 if it is not fetched")
    p.add_argument("name", metavar="NAME")
    sub.add_parser("list", help="list the pinned entries")
    words = sys.argv[1:] if argv is None else argv
    if words and words[0] in ARTIFACTS:  # an entry where the command belongs
        ap.error(f"{words[0]} is an entry, not a command: {fetch_command(words[0])}")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "fetch":
            names = args.names or list(ARTIFACTS)
            for n in names:
                _entry(n)
            paths, errors = fetch_all(names)
            for n in names:
                if n in paths:
                    print(f"{n} {paths[n]}", flush=True)
            if errors:
                for ex in errors:
                    print(f"error: {ex}", file=sys.stderr)
                return 1
        elif args.cmd == "path":
            hit = cached(args.name)
            if hit is None:
                print(f"{args.name} is not fetched (cache {cache_root()}): run {fetch_command(args.name)}",
                      file=sys.stderr)
                return 1
            print(hit)
        else:
            for n, e in ARTIFACTS.items():
                pins = e.get("artifact") or ", ".join(e["dependencies"])
                state = cached(n) or "not fetched"
                print(f"{n}\t{e['kind']}\t{pins}\t{state}")
    except ArtifactError as ex:
        print(f"error: {ex}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
