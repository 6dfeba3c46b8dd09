"""Stand-in for the shared Java artifact fetcher (replaced at merge by the full version).

``fetch("trino-server")`` downloads io.trino:trino-server:476 from Maven Central, checks the
published ``.sha1``, and unpacks it into ``~/.cache/hudi-metastore/trino-server-476/`` (bin/, lib/,
plugin/ ...). Later calls return the cached directory without touching the network.

    python -m tools.java_artifacts trino-server
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

MAVEN = "https://repo1.maven.org/maven2"
CACHE = Path(os.environ.get("HMS_ARTIFACT_CACHE", Path.home() / ".cache" / "hudi-metastore"))

# name -> (group path, artifact, version, packaging)
ARTIFACTS = {
    "trino-server": ("io/trino", "trino-server", "476", "tar.gz"),
}


def _download(url: str, dest: Path) -> None:
    with urllib.request.urlopen(url, timeout=60) as r, open(dest, "wb") as out:
        shutil.copyfileobj(r, out, 1 << 20)


def _sha1(path: Path) -> str:
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def fetch(name: str) -> Path:
    """Return the unpacked directory of artifact ``name``, downloading it on first use."""
    if name not in ARTIFACTS:
        raise KeyError(f"unknown artifact {name!r}; known: {sorted(ARTIFACTS)}")
    group, artifact, version, packaging = ARTIFACTS[name]
    target = CACHE / f"{artifact}-{version}"
    marker = target / ".complete"
    if marker.exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    url = f"{MAVEN}/{group}/{artifact}/{version}/{artifact}-{version}.{packaging}"
    with tempfile.TemporaryDirectory(dir=CACHE, prefix=f".{artifact}-") as tmp:
        archive = Path(tmp) / f"{artifact}-{version}.{packaging}"
        _download(url, archive)
        with urllib.request.urlopen(url + ".sha1", timeout=60) as r:
            expected = r.read().decode().split()[0].strip().lower()
        actual = _sha1(archive)
        if actual != expected:
            raise RuntimeError(f"sha1 mismatch for {url}: got {actual}, expected {expected}")
        unpack = Path(tmp) / "unpacked"
        with tarfile.open(archive) as tf:
            tf.extractall(unpack, filter="tar")
        archive.unlink()
        # the archive holds one top directory, <artifact>-<version>/
        entries = list(unpack.iterdir())
        root = entries[0] if len(entries) == 1 and entries[0].is_dir() else unpack
        if target.exists():
            shutil.rmtree(target)
        root.rename(target)
    marker.write_text(f"{url}\n")
    return target


if __name__ == "__main__":
    for n in sys.argv[1:] or ["trino-server"]:
        print(fetch(n))
